//! The protocol aggregate's statements, one text for both databases.

pub(crate) const THREAD_METADATA: &str =
    "SELECT metadata FROM thread_metadata WHERE thread_id = $1";

/// Binds thread id, user id, metadata; writes only for the thread's owner.
pub(crate) const UPSERT_THREAD_METADATA: &str = "INSERT INTO thread_metadata (thread_id, user_id, \
     metadata) SELECT id, user_id, $3 FROM threads WHERE id = $1 AND user_id = $2 \
     ON CONFLICT (thread_id) DO UPDATE SET metadata = excluded.metadata";

pub(crate) const USER_THREAD_METADATA: &str =
    "SELECT thread_id, metadata FROM thread_metadata WHERE user_id = $1";

pub(crate) const BIND_EMPTY_THREAD: &str = "UPDATE threads SET agent_id = $2 WHERE id = $1 \
     AND NOT EXISTS (SELECT 1 FROM messages WHERE thread_id = $1)";
