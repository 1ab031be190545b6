-- Threads, their messages (the checkpoint) and runs. Same conventions as 0001: ids are text
-- (thread ids `[A-Za-z0-9_-]`, child ids `<parent>_sub_<slug>_<8hex>`; the rest UUID text),
-- timestamps TIMESTAMPTZ, JSON as JSONB. Thread ids use the "C" collation, so tie-breaks on them
-- order the same way as in SQLite (byte order).
--
-- Deletes cascade downwards and never orphan a row:
-- * a user's threads and runs go with the user;
-- * a deleted agent takes its threads with it (and so their messages, runs and child threads):
--   a thread cannot outlive the agent it talks to, and deleting the agent is the explicit act;
-- * a thread takes its child threads (recursively), messages and runs;
-- * a message or child run whose run is gone keeps its row with the reference cleared.

CREATE TABLE threads (
    id               TEXT COLLATE "C" PRIMARY KEY,
    user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    agent_id         TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    title            TEXT NOT NULL,
    parent_thread_id TEXT COLLATE "C" REFERENCES threads (id) ON DELETE CASCADE,
    subagent_slug    TEXT,
    runtime_scope_id TEXT NOT NULL,
    workdir_path     TEXT NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    -- A child thread always records the subagent it runs; a top-level thread never does.
    CONSTRAINT threads_child_has_slug
        CHECK ((parent_thread_id IS NULL) = (subagent_slug IS NULL))
);

-- A user's top-level threads by recency; a thread's children; an agent's threads (cascades).
CREATE INDEX threads_user_updated ON threads (user_id, updated_at);
CREATE INDEX threads_parent_thread_id ON threads (parent_thread_id);
CREATE INDEX threads_agent_id ON threads (agent_id);

CREATE TABLE runs (
    id                  TEXT PRIMARY KEY,
    thread_id           TEXT COLLATE "C" NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    agent_id            TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    user_id             TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    status              TEXT NOT NULL CHECK (status IN ('pending', 'running', 'success', 'error',
                                                        'cancelled', 'timeout', 'interrupted')),
    input               TEXT NOT NULL,
    output              TEXT,
    error               TEXT,
    prompt_tokens       BIGINT NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens   BIGINT NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    parent_run_id       TEXT REFERENCES runs (id) ON DELETE SET NULL,
    parent_tool_call_id TEXT,
    created_at          TIMESTAMPTZ NOT NULL,
    started_at          TIMESTAMPTZ,
    finished_at         TIMESTAMPTZ,
    -- A run has finished exactly when its status is terminal.
    CONSTRAINT runs_finished_when_terminal
        CHECK ((status IN ('pending', 'running')) = (finished_at IS NULL))
);

-- At most one active run per thread: a second creator collides here, even from another instance.
CREATE UNIQUE INDEX runs_one_active_per_thread ON runs (thread_id)
    WHERE status IN ('pending', 'running');
CREATE INDEX runs_thread_id ON runs (thread_id, created_at);
CREATE INDEX runs_parent_run_id ON runs (parent_run_id);
CREATE INDEX runs_agent_id ON runs (agent_id);
CREATE INDEX runs_user_id ON runs (user_id);

CREATE TABLE messages (
    id           TEXT PRIMARY KEY,
    thread_id    TEXT COLLATE "C" NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    run_id       TEXT REFERENCES runs (id) ON DELETE SET NULL,
    seq          BIGINT NOT NULL CHECK (seq >= 1),
    role         TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content      TEXT NOT NULL,
    tool_calls   JSONB NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(tool_calls) = 'array'),
    tool_call_id TEXT,
    tool_name    TEXT,
    is_error     BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL,
    -- The thread's order; also the index that `messages` and the next-seq lookup read.
    CONSTRAINT messages_thread_seq UNIQUE (thread_id, seq)
);

CREATE INDEX messages_run_id ON messages (run_id);
