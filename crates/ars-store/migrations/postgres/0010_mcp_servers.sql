-- MCP servers agents name in `context.mcp_servers`. Same conventions as 0001: ids are UUID
-- text, timestamps TIMESTAMPTZ, JSON as JSONB. They share like agents and skills:
-- `visibility` on the row, `share_config.user_ids` / `manager_ids` in `mcp_server_shares`.
-- Slugs use the "C" collation, so lists order the same way as in SQLite (byte order).
--
-- `transport` is the whole transport as JSON (`{"type": "stdio", ...}` or
-- `{"type": "streamable_http", ...}`); secret values inside it are the sealed text they arrive
-- as (the store never holds a key). `transport_type` repeats its type for queries and checks.

CREATE TABLE mcp_servers (
    id             TEXT PRIMARY KEY,
    slug           TEXT COLLATE "C" NOT NULL CONSTRAINT mcp_servers_slug_key UNIQUE
        CHECK (char_length(slug) BETWEEN 1 AND 64),
    name           TEXT NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
    description    TEXT NOT NULL DEFAULT '',
    transport_type TEXT NOT NULL CHECK (transport_type IN ('stdio', 'streamable_http')),
    transport      JSONB NOT NULL CHECK (transport ->> 'type' = transport_type),
    enabled_tools  JSONB,
    visibility     TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id       TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at     TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL
);

CREATE INDEX mcp_servers_owner_id ON mcp_servers (owner_id);

CREATE TABLE mcp_server_shares (
    mcp_server_id TEXT NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role          TEXT NOT NULL CHECK (role IN ('user', 'manager')),
    PRIMARY KEY (mcp_server_id, user_id, role)
);

CREATE INDEX mcp_server_shares_user_id ON mcp_server_shares (user_id);
