-- A run may wait for people: status `waiting`, with what it waits on in `waiting_json` (the
-- pending calls and questions, the schemas to check edited arguments against, the deadline)
-- and the deadline again in `waiting_until_ms` for the sweep that rejects calls nobody decided.
-- A waiting run is active (it holds its thread) but executed nowhere (no lease).
--
-- SQLite cannot change a table's CHECK constraints in place, so the table is rebuilt (the
-- migrations run with foreign-key enforcement off and a foreign_key_check after, as SQLite's
-- documented procedure asks; see `SqliteStore::migrate`).
CREATE TABLE runs_next (
    id                  TEXT PRIMARY KEY NOT NULL,
    thread_id           TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    agent_id            TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    user_id             TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    status              TEXT NOT NULL CHECK (status IN ('pending', 'running', 'waiting',
                                                        'success', 'error', 'cancelled',
                                                        'timeout', 'interrupted')),
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
    -- A run has finished exactly when its status is terminal.
    CONSTRAINT runs_finished_when_terminal
        CHECK ((status IN ('pending', 'running', 'waiting')) = (finished_at IS NULL)),
    -- A run waits exactly when it says on what.
    CONSTRAINT runs_waiting_on_something
        CHECK ((status = 'waiting') = (waiting_json IS NOT NULL))
);

INSERT INTO runs_next (id, thread_id, agent_id, user_id, status, input, output, error,
                       prompt_tokens, completion_tokens, parent_run_id, parent_tool_call_id,
                       created_at, started_at, finished_at, delivery, lease_owner,
                       lease_expires_ms, error_code)
SELECT id, thread_id, agent_id, user_id, status, input, output, error, prompt_tokens,
       completion_tokens, parent_run_id, parent_tool_call_id, created_at, started_at,
       finished_at, delivery, lease_owner, lease_expires_ms, error_code
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_next RENAME TO runs;

-- At most one active run per thread, a waiting one included.
CREATE UNIQUE INDEX runs_one_active_per_thread ON runs (thread_id)
    WHERE status IN ('pending', 'running', 'waiting');
CREATE INDEX runs_thread_id ON runs (thread_id, created_at);
CREATE INDEX runs_parent_run_id ON runs (parent_run_id);
CREATE INDEX runs_agent_id ON runs (agent_id);
CREATE INDEX runs_user_id ON runs (user_id);
CREATE INDEX runs_lease_owner ON runs (lease_owner) WHERE status IN ('pending', 'running');
CREATE INDEX runs_waiting_until ON runs (waiting_until_ms) WHERE status = 'waiting';
