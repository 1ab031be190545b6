-- Sessions of ARS's own MCP endpoint (`/api/mcp`), so that every instance can serve a session
-- another one opened (`state`: the client's `initialize` parameters, as JSON text), and the tool
-- calls in flight in them, so that a client's cancellation reaching any instance cancels the
-- run. Sessions expire a while after they were opened; their calls go with them.

CREATE TABLE mcp_sessions (
    id         TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 256),
    state      TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX mcp_sessions_created_at ON mcp_sessions (created_at);

CREATE TABLE mcp_calls (
    session_id TEXT NOT NULL REFERENCES mcp_sessions (id) ON DELETE CASCADE,
    request_id TEXT NOT NULL CHECK (length(request_id) BETWEEN 1 AND 256),
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    PRIMARY KEY (session_id, request_id)
);

CREATE INDEX mcp_calls_run_id ON mcp_calls (run_id);
