-- Shared skills (Agent Skills format) and their files. Same conventions as 0001: ids are UUID
-- text, timestamps TIMESTAMPTZ, JSON as JSONB. Skills share like agents: `visibility` on the
-- row, `share_config.user_ids` / `manager_ids` in `skill_shares`. Names and paths use the "C"
-- collation, so lists order the same way as in SQLite (byte order).
--
-- The files live here, not on a disk, so every instance sharing a database sees the same
-- skills. A skill takes its files and shares with it; a deleted owner leaves the skill
-- ownerless (admins and managers still manage it), a deleted user leaves every share list.

CREATE TABLE skills (
    id            TEXT PRIMARY KEY,
    name          TEXT COLLATE "C" NOT NULL CONSTRAINT skills_name_key UNIQUE
        CHECK (char_length(name) BETWEEN 1 AND 64),
    description   TEXT NOT NULL DEFAULT '',
    license       TEXT,
    compatibility TEXT,
    metadata      JSONB NOT NULL DEFAULT '{}',
    allowed_tools JSONB NOT NULL DEFAULT '[]',
    visibility    TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id      TEXT REFERENCES users (id) ON DELETE SET NULL,
    version       TEXT NOT NULL,
    file_count    BIGINT NOT NULL CHECK (file_count >= 0),
    size_bytes    BIGINT NOT NULL CHECK (size_bytes >= 0),
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE INDEX skills_owner_id ON skills (owner_id);

CREATE TABLE skill_shares (
    skill_id TEXT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role     TEXT NOT NULL CHECK (role IN ('user', 'manager')),
    PRIMARY KEY (skill_id, user_id, role)
);

CREATE INDEX skill_shares_user_id ON skill_shares (user_id);

-- `size_bytes` repeats the content's length so listings need not read the content.
CREATE TABLE skill_files (
    skill_id   TEXT NOT NULL REFERENCES skills (id) ON DELETE CASCADE,
    path       TEXT COLLATE "C" NOT NULL CHECK (path <> ''),
    content    BYTEA NOT NULL,
    size_bytes BIGINT NOT NULL CHECK (size_bytes = octet_length(content)),
    PRIMARY KEY (skill_id, path)
);
