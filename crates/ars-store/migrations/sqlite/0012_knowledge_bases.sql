-- Knowledge bases, their documents (with the uploaded bytes), the chunks documents are cut into,
-- and a log of changes to what is searchable. Same conventions as 0001: ids are UUID text,
-- timestamps RFC 3339 UTC text, JSON as text. Knowledge bases share like agents, skills and MCP
-- servers: `visibility` on the row, `share_config.user_ids` / `manager_ids` in
-- `knowledge_base_shares`.
--
-- A knowledge base takes its documents with it, and a document its file and chunks. A
-- re-uploaded document keeps its row (and id) with `version` one higher and its old chunks
-- until the new version's replace them. `lease_until` is set exactly while a worker holds the
-- document (`processing`); a lease that ran out makes it claimable again.
--
-- `kb_changes` records every write that changes a knowledge base's searchable chunks (a
-- document finished or deleted), in the write's transaction, so every instance can bring its
-- search index up to date by reading the log from the last `seq` it applied. Its rows name
-- documents that may be gone, so it has no foreign keys.

CREATE TABLE knowledge_bases (
    id          TEXT PRIMARY KEY NOT NULL,
    slug        TEXT NOT NULL UNIQUE CHECK (length(slug) BETWEEN 1 AND 64),
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    description TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 4000),
    settings    TEXT NOT NULL CHECK (json_valid(settings)
        AND json_extract(settings, '$.chunk_size') BETWEEN 100 AND 4000
        AND json_extract(settings, '$.chunk_overlap')
            BETWEEN 0 AND json_extract(settings, '$.chunk_size') / 2),
    visibility  TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
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
    id          TEXT PRIMARY KEY NOT NULL,
    kb_id       TEXT NOT NULL REFERENCES knowledge_bases (id) ON DELETE CASCADE,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255
        AND name NOT IN ('.', '..') AND instr(name, '/') = 0 AND instr(name, '\') = 0),
    format      TEXT NOT NULL CHECK (length(format) <= 32),
    size_bytes  INTEGER NOT NULL CHECK (size_bytes >= 0),
    sha256      TEXT NOT NULL CHECK (length(sha256) = 64),
    version     INTEGER NOT NULL CHECK (version >= 1),
    status      TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'ready', 'error')),
    progress    REAL NOT NULL CHECK (progress BETWEEN 0 AND 1),
    error       TEXT,
    chunk_count INTEGER NOT NULL CHECK (chunk_count >= 0),
    attempts    INTEGER NOT NULL CHECK (attempts >= 0),
    lease_until TEXT,
    uploaded_by TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (kb_id, name),
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
    document_id TEXT PRIMARY KEY NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
    bytes       BLOB NOT NULL CHECK (typeof(bytes) = 'blob')
);

-- `embedding`: the chunk's vector as little-endian 32-bit floats.
CREATE TABLE kb_chunks (
    document_id  TEXT NOT NULL,
    kb_id        TEXT NOT NULL,
    ordinal      INTEGER NOT NULL CHECK (ordinal >= 0),
    heading_path TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(heading_path)
        AND json_type(heading_path) = 'array'),
    start_offset INTEGER NOT NULL CHECK (start_offset >= 0),
    end_offset   INTEGER NOT NULL CHECK (end_offset >= start_offset),
    text         TEXT NOT NULL,
    embedding    BLOB CHECK (embedding IS NULL
        OR (typeof(embedding) = 'blob' AND length(embedding) % 4 = 0)),
    PRIMARY KEY (document_id, ordinal),
    FOREIGN KEY (document_id, kb_id) REFERENCES kb_documents (id, kb_id) ON DELETE CASCADE
);

-- A knowledge base's chunks in (document, ordinal) order: index rebuilds page through them.
CREATE INDEX kb_chunks_kb_id ON kb_chunks (kb_id, document_id, ordinal);

CREATE TABLE kb_changes (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    kb_id       TEXT NOT NULL,
    document_id TEXT NOT NULL,
    at          TEXT NOT NULL
);
