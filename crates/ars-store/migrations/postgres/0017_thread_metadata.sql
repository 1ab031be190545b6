-- What the protocol adapters keep beside a thread: the free metadata a LangGraph client gives
-- it (a JSON object, searched by the `/langgraph/threads/search` filter).
CREATE TABLE thread_metadata (
    thread_id TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    metadata TEXT NOT NULL
);
CREATE INDEX thread_metadata_user ON thread_metadata (user_id);
