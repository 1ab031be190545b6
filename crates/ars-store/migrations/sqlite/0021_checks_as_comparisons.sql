-- The constraints and partial-index predicates that every run and message write evaluates say
-- "one of these values" as comparisons joined by OR rather than `IN (…)`: SQLite evaluates a
-- list of more than two constants by building a temporary B-tree, once per statement, and a
-- run's insert or status update built four of them. Same rules, same data; the queries that
-- name the one-active-run index (`ON CONFLICT … WHERE`) use the same text, which SQLite
-- compares term by term. PostgreSQL keeps its `IN` lists (it proves one from the other).
--
-- SQLite cannot change a table's CHECK constraints in place, so both tables are rebuilt (the
-- migrations run with foreign-key enforcement off and a foreign_key_check after, as SQLite's
-- documented procedure asks; see `SqliteStore::migrate`).
CREATE TABLE runs_next (
    id                  TEXT PRIMARY KEY NOT NULL,
    thread_id           TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    agent_id            TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    user_id             TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    status              TEXT NOT NULL CHECK (status = 'pending' OR status = 'running'
                                             OR status = 'waiting' OR status = 'success'
                                             OR status = 'error' OR status = 'cancelled'
                                             OR status = 'timeout' OR status = 'interrupted'),
    input               TEXT NOT NULL,
    output              TEXT,
    error               TEXT,
    prompt_tokens       INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens   INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    parent_run_id       TEXT REFERENCES runs (id) ON DELETE SET NULL,
    parent_tool_call_id TEXT,
    created_at          TEXT NOT NULL,
    started_at          TEXT,
    finished_at         TEXT,
    delivery            TEXT CHECK (delivery IN ('wait', 'background')),
    lease_owner         TEXT,
    lease_expires_ms    BIGINT,
    error_code          TEXT,
    waiting_json        TEXT,
    waiting_until_ms    BIGINT,
    parent_told         BOOLEAN NOT NULL DEFAULT FALSE CHECK (parent_told IN (0, 1)),
    wake_of             TEXT REFERENCES runs (id) ON DELETE SET NULL,
    model               TEXT,
    -- A run has finished exactly when its status is terminal.
    CONSTRAINT runs_finished_when_terminal
        CHECK ((status = 'pending' OR status = 'running' OR status = 'waiting')
               = (finished_at IS NULL)),
    -- A run waits exactly when it says on what.
    CONSTRAINT runs_waiting_on_something
        CHECK ((status = 'waiting') = (waiting_json IS NOT NULL))
);

INSERT INTO runs_next (id, thread_id, agent_id, user_id, status, input, output, error,
                       prompt_tokens, completion_tokens, parent_run_id, parent_tool_call_id,
                       created_at, started_at, finished_at, delivery, lease_owner,
                       lease_expires_ms, error_code, waiting_json, waiting_until_ms,
                       parent_told, wake_of, model)
SELECT id, thread_id, agent_id, user_id, status, input, output, error, prompt_tokens,
       completion_tokens, parent_run_id, parent_tool_call_id, created_at, started_at,
       finished_at, delivery, lease_owner, lease_expires_ms, error_code, waiting_json,
       waiting_until_ms, parent_told, wake_of, model
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_next RENAME TO runs;

-- At most one active run per thread, a waiting one included. The predicate is the runs
-- queries' `active!()`, word for word.
CREATE UNIQUE INDEX runs_one_active_per_thread ON runs (thread_id)
    WHERE (status = 'pending' OR status = 'running' OR status = 'waiting');
CREATE INDEX runs_thread_id ON runs (thread_id, created_at);
CREATE INDEX runs_parent_run_id ON runs (parent_run_id);
CREATE INDEX runs_agent_id ON runs (agent_id);
-- Two constants are compared one by one already.
CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE status IN ('pending', 'running');
CREATE INDEX runs_waiting_until ON runs (waiting_until_ms) WHERE status = 'waiting';
CREATE INDEX runs_untold ON runs (finished_at)
    WHERE delivery = 'background' AND parent_told = FALSE AND finished_at IS NOT NULL;
CREATE INDEX runs_wakes ON runs (thread_id, created_at) WHERE wake_of IS NOT NULL;
CREATE INDEX runs_user_created ON runs (user_id, created_at);
CREATE INDEX runs_created ON runs (created_at);
CREATE INDEX runs_waiting_user ON runs (user_id) WHERE status = 'waiting';

CREATE TABLE messages_next (
    id                 TEXT PRIMARY KEY NOT NULL,
    thread_id          TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    run_id             TEXT REFERENCES runs (id) ON DELETE SET NULL,
    seq                INTEGER NOT NULL CHECK (seq >= 1),
    role               TEXT NOT NULL CHECK (role = 'system' OR role = 'user'
                                            OR role = 'assistant' OR role = 'tool'),
    content            TEXT NOT NULL,
    tool_calls         TEXT NOT NULL DEFAULT '[]'
                       CHECK (json_valid(tool_calls) AND json_type(tool_calls) = 'array'),
    tool_call_id       TEXT,
    tool_name          TEXT,
    is_error           BOOLEAN NOT NULL DEFAULT FALSE CHECK (is_error IN (0, 1)),
    created_at         TEXT NOT NULL,
    notice             TEXT
        CHECK (notice IS NULL OR (json_valid(notice) AND json_type(notice) = 'object')),
    replaced_by_run_id TEXT,
    steer              BOOLEAN NOT NULL DEFAULT FALSE CHECK (steer IN (0, 1)),
    -- The thread's order; also the index that `messages` and the next-seq lookup read.
    CONSTRAINT messages_thread_seq UNIQUE (thread_id, seq)
);

INSERT INTO messages_next (id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id,
                           tool_name, is_error, created_at, notice, replaced_by_run_id, steer)
SELECT id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id, tool_name, is_error,
       created_at, notice, replaced_by_run_id, steer
FROM messages;

DROP TABLE messages;
ALTER TABLE messages_next RENAME TO messages;

CREATE INDEX messages_run_id ON messages (run_id);
