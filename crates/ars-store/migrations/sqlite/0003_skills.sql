-- Shared skills (Agent Skills format) and their files. Same conventions as 0001: ids are UUID
-- text, timestamps RFC 3339 UTC text, JSON as text. Skills share like agents: `visibility` on
-- the row, `share_config.user_ids` / `manager_ids` in `skill_shares`.
--
-- The files live here, not on a disk, so every instance sharing a database sees the same
-- skills. A skill takes its files and shares with it; a deleted owner leaves the skill
-- ownerless (admins and managers still manage it), a deleted user leaves every share list.

CREATE TABLE skills (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    description   TEXT NOT NULL DEFAULT '',
    license       TEXT,
    compatibility TEXT,
    metadata      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    allowed_tools TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(allowed_tools)),
    visibility    TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id      TEXT REFERENCES users (id) ON DELETE SET NULL,
    version       TEXT NOT NULL,
    file_count    INTEGER NOT NULL CHECK (file_count >= 0),
    size_bytes    INTEGER NOT NULL CHECK (size_bytes >= 0),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
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
    path       TEXT NOT NULL CHECK (path <> ''),
    content    BLOB NOT NULL CHECK (typeof(content) = 'blob'),
    size_bytes INTEGER NOT NULL CHECK (size_bytes = length(content)),
    PRIMARY KEY (skill_id, path)
);
