-- Users, API tokens and agents (subagents are agents rows), plus the built-in general-purpose
-- subagent. Ids are UUID text, timestamps TIMESTAMPTZ, configuration JSONB. Agent names sort
-- with the "C" collation so that lists order the same way as in SQLite (byte order).
-- Threads, messages and runs come in a later migration with ids and timestamps of these kinds.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL CONSTRAINT users_username_key UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_tokens (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    token_hash TEXT NOT NULL CONSTRAINT api_tokens_token_hash_key UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ
);

CREATE INDEX api_tokens_user_id ON api_tokens (user_id);

CREATE TABLE agents (
    id          TEXT PRIMARY KEY,
    slug        TEXT NOT NULL CONSTRAINT agents_slug_key UNIQUE,
    name        TEXT COLLATE "C" NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    backend_id  TEXT NOT NULL CHECK (backend_id IN ('DefaultBackend', 'SubAgentBackend')),
    is_subagent BOOLEAN NOT NULL,
    config_json JSONB NOT NULL,
    visibility  TEXT NOT NULL CHECK (visibility IN ('private', 'users', 'public')),
    owner_id    TEXT REFERENCES users (id) ON DELETE SET NULL,
    is_default  BOOLEAN NOT NULL DEFAULT FALSE,
    is_builtin  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
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
    date_trunc('microseconds', now()),
    date_trunc('microseconds', now())
);
