-- MCP servers agents name in `context.mcp_servers`. Same conventions as 0001: ids are UUID
-- text, timestamps RFC 3339 UTC text, JSON as text. They share like agents and skills:
-- `visibility` on the row, `share_config.user_ids` / `manager_ids` in `mcp_server_shares`.
--
-- `transport` is the whole transport as JSON (`{"type": "stdio", ...}` or
-- `{"type": "streamable_http", ...}`); secret values inside it are the sealed text they arrive
-- as (the store never holds a key). `transport_type` repeats its type for queries and checks.

CREATE TABLE mcp_servers (
    id             TEXT PRIMARY KEY NOT NULL,
    slug           TEXT NOT NULL UNIQUE CHECK (length(slug) BETWEEN 1 AND 64),
    name           TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    description    TEXT NOT NULL DEFAULT '',
    transport_type TEXT NOT NULL CHECK (transport_type IN ('stdio', 'streamable_http')),
    transport      TEXT NOT NULL CHECK (json_valid(transport)
        AND json_extract(transport, '$.type') = transport_type),
    enabled_tools  TEXT CHECK (enabled_tools IS NULL OR json_valid(enabled_tools)),
    visibility     TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id       TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

CREATE INDEX mcp_servers_owner_id ON mcp_servers (owner_id);

CREATE TABLE mcp_server_shares (
    mcp_server_id TEXT NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role          TEXT NOT NULL CHECK (role IN ('user', 'manager')),
    PRIMARY KEY (mcp_server_id, user_id, role)
);

CREATE INDEX mcp_server_shares_user_id ON mcp_server_shares (user_id);
