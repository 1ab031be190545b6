-- Users, API tokens and agents (subagents are agents rows), plus the built-in general-purpose
-- subagent. Ids are UUID text. Timestamps are RFC 3339 UTC text as sqlx writes `DateTime<Utc>`
-- (`2025-01-02T03:04:05.123456+00:00`), so text comparison orders them. Booleans are 0/1.
-- Threads, messages and runs come in a later migration with ids and timestamps of these kinds.

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    expires_at TEXT
);

CREATE INDEX api_tokens_user_id ON api_tokens (user_id);

CREATE TABLE agents (
    id          TEXT PRIMARY KEY NOT NULL,
    slug        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    backend_id  TEXT NOT NULL CHECK (backend_id IN ('DefaultBackend', 'SubAgentBackend')),
    is_subagent BOOLEAN NOT NULL CHECK (is_subagent IN (0, 1)),
    config_json TEXT NOT NULL CHECK (json_valid(config_json)),
    visibility  TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    is_default  BOOLEAN NOT NULL DEFAULT FALSE CHECK (is_default IN (0, 1)),
    is_builtin  BOOLEAN NOT NULL DEFAULT FALSE CHECK (is_builtin IN (0, 1)),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    CONSTRAINT agents_subagent_matches_backend
        CHECK (is_subagent = (backend_id = 'SubAgentBackend')),
    CONSTRAINT agents_subagent_never_default CHECK (NOT (is_subagent AND is_default))
);

-- At most one default agent: every default row has the same key, so a second one collides.
CREATE UNIQUE INDEX agents_is_default_once ON agents (is_default) WHERE is_default;
CREATE INDEX agents_owner_id ON agents (owner_id);

-- `share_config.user_ids` (role 'user') and `share_config.manager_ids` (role 'manager').
CREATE TABLE agent_shares (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role     TEXT NOT NULL CHECK (role IN ('user', 'manager')),
    PRIMARY KEY (agent_id, user_id, role)
);

CREATE INDEX agent_shares_user_id ON agent_shares (user_id);

INSERT INTO agents (
    id, slug, name, description, backend_id, is_subagent, config_json, visibility, owner_id,
    is_default, is_builtin, created_at, updated_at
) VALUES (
    '00000000-0000-7000-8000-000000000001',
    'general-purpose',
    'General purpose',
    'Built-in subagent for general tasks: analysis, research, writing and file work, using the server''s default runtime config.',
    'SubAgentBackend',
    TRUE,
    '{"context":{}}',
    'public',
    NULL,
    FALSE,
    TRUE,
    strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'),
    strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')
);
