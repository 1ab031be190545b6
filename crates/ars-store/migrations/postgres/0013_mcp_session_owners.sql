-- Each session of ARS's own MCP endpoint (`/api/mcp`) belongs to the user who opened it: a
-- request carrying another user's `Mcp-Session-Id` is answered 404 and touches nothing. The
-- owner is written right after the session's `initialize` is answered, before the client can
-- know the id. Sessions opened before this migration have no owner and are refused like any
-- unknown session, which MCP clients answer by opening a new one. A user's sessions go with
-- the user.

ALTER TABLE mcp_sessions ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
