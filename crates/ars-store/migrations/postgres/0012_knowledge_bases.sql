-- Knowledge bases, their documents (with the uploaded bytes), the chunks documents are cut into,
-- and a log of changes to what is searchable. Same conventions as 0001: ids are UUID text,
-- timestamps TIMESTAMPTZ, JSON as JSONB. Knowledge bases share like agents, skills and MCP
-- servers: `visibility` on the row, `share_config.user_ids` / `manager_ids` in
-- `knowledge_base_shares`. Slugs, document names and document ids use the "C" collation, so
-- lists and pages order the same way as in SQLite (byte order).
--
-- A knowledge base takes its documents with it, and a document its file and chunks. A
-- re-uploaded document keeps its row (and id) with `version` one higher and its old chunks
-- until the new version's replace them. `lease_until` is set exactly while a worker holds the
-- document (`processing`); a lease that ran out makes it claimable again.
--
-- `kb_changes` records every write that changes a knowledge base's searchable chunks (a
-- document finished or deleted), in the write's transaction, so every instance can bring its
-- search index up to date by reading the log from the last `seq` it applied. Writers take an
-- advisory lock before they append, so `seq` order is commit order and a reader never skips a
-- change that commits late. Its rows name documents that may be gone, so it has no foreign
-- keys.

CREATE TABLE knowledge_bases (
    id          TEXT PRIMARY KEY,
    slug        TEXT COLLATE "C" NOT NULL CONSTRAINT knowledge_bases_slug_key UNIQUE
        CHECK (char_length(slug) BETWEEN 1 AND 64),
    name        TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
    description TEXT NOT NULL DEFAULT '' CHECK (char_length(description) <= 4000),
    settings    JSONB NOT NULL CHECK ((settings ->> 'chunk_size')::BIGINT BETWEEN 100 AND 4000
        AND (settings ->> 'chunk_overlap')::BIGINT
            BETWEEN 0 AND (settings ->> 'chunk_size')::BIGINT / 2),
    visibility  TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX knowledge_bases_owner_id ON knowledge_bases (owner_id);

CREATE TABLE knowledge_base_shares (
    knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    user_id           TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role              TEXT NOT NULL CHECK (role IN ('user', 'manager')),
    PRIMARY KEY (knowledge_base_id, user_id, role)
);

CREATE INDEX knowledge_base_shares_user_id ON knowledge_base_shares (user_id);

CREATE TABLE kb_documents (
    id          TEXT COLLATE "C" PRIMARY KEY,
    kb_id       TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    name        TEXT COLLATE "C" NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255
        AND name NOT IN ('.', '..') AND strpos(name, '/') = 0 AND strpos(name, '\') = 0),
    format      TEXT NOT NULL CHECK (char_length(format) <= 32),
    size_bytes  BIGINT NOT NULL CHECK (size_bytes >= 0),
    sha256      TEXT NOT NULL CHECK (char_length(sha256) = 64),
    version     BIGINT NOT NULL CHECK (version >= 1),
    status      TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'ready', 'error')),
    progress    REAL NOT NULL CHECK (progress BETWEEN 0 AND 1),
    error       TEXT,
    chunk_count BIGINT NOT NULL CHECK (chunk_count >= 0),
    attempts    BIGINT NOT NULL CHECK (attempts >= 0),
    lease_until TIMESTAMPTZ,
    uploaded_by TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    CONSTRAINT kb_documents_kb_id_name_key UNIQUE (kb_id, name),
    -- What chunks reference, so a chunk's `kb_id` is always its document's.
    UNIQUE (id, kb_id),
    CHECK ((status = 'error') = (error IS NOT NULL)),
    CHECK ((status = 'processing') = (lease_until IS NOT NULL))
);

-- Claims look for the oldest pending or processing document.
CREATE INDEX kb_documents_claimable ON kb_documents (updated_at)
    WHERE status IN ('pending', 'processing');

CREATE INDEX kb_documents_uploaded_by ON kb_documents (uploaded_by);

-- The original upload, apart from the row so listings never read it.
CREATE TABLE kb_document_files (
    document_id TEXT COLLATE "C" PRIMARY KEY REFERENCES kb_documents (id) ON DELETE CASCADE,
    bytes       BYTEA NOT NULL
);

-- `embedding`: the chunk's vector as little-endian 32-bit floats.
CREATE TABLE kb_chunks (
    document_id  TEXT COLLATE "C" NOT NULL,
    kb_id        TEXT NOT NULL,
    ordinal      BIGINT NOT NULL CHECK (ordinal >= 0),
    heading_path JSONB NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(heading_path) = 'array'),
    start_offset BIGINT NOT NULL CHECK (start_offset >= 0),
    end_offset   BIGINT NOT NULL CHECK (end_offset >= start_offset),
    text         TEXT NOT NULL,
    embedding    BYTEA CHECK (octet_length(embedding) % 4 = 0),
    PRIMARY KEY (document_id, ordinal),
    FOREIGN KEY (document_id, kb_id) REFERENCES kb_documents (id, kb_id) ON DELETE CASCADE
);

-- A knowledge base's chunks in (document, ordinal) order: index rebuilds page through them.
CREATE INDEX kb_chunks_kb_id ON kb_chunks (kb_id, document_id, ordinal);

CREATE TABLE kb_changes (
    seq         BIGSERIAL PRIMARY KEY,
    kb_id       TEXT NOT NULL,
    document_id TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL
);
