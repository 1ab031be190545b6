//! Conversations: threads (top-level and the child threads of subagents) and their messages,
//! the checkpoint a run writes as it goes.

use async_trait::async_trait;

use ars_domain::{Message, NewMessage, RunId, Thread, ThreadId, UserId};
use chrono::{DateTime, Utc};

use crate::{Deleted, Result};

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// Threads and their messages.
#[async_trait]
pub trait ConversationStore: Send + Sync {
    // Threads.

    /// Stores `thread` as given (timestamps kept to the microsecond) and returns it as stored.
    /// A taken id is `Conflict { field: "id" }`; an unknown user, agent or parent thread, or a
    /// child thread without a subagent slug (or a top-level one with a slug), is `Invalid`.
    async fn create_thread(&self, thread: &Thread) -> Result<Thread>;
    /// The thread with this id, top-level or child; no ownership check.
    async fn thread(&self, id: &ThreadId) -> Result<Option<Thread>>;
    /// The threads with these ids that exist, in no particular order (one statement per 500
    /// ids); no ownership check.
    async fn threads(&self, ids: &[ThreadId]) -> Result<Vec<Thread>>;
    /// `user`'s top-level threads (child threads are reached through their parent), most
    /// recently updated first.
    async fn list_threads(&self, user: UserId) -> Result<Vec<Thread>>;
    /// At most `limit` of `user`'s top-level threads in [`Self::list_threads`]' order, after
    /// `before` (the last thread of the previous page) or from the first: keyset pagination,
    /// as cheap on the thousandth page as on the first.
    async fn thread_page(
        &self,
        user: UserId,
        limit: u32,
        before: Option<&ThreadCursor>,
    ) -> Result<Vec<Thread>>;
    /// The direct child threads of `parent`, oldest first.
    async fn child_threads(&self, parent: &ThreadId) -> Result<Vec<Thread>>;
    /// Sets the title and `updated_at`; `NotFound` when the thread is gone.
    async fn rename_thread(&self, id: &ThreadId, title: &str) -> Result<Thread>;
    /// Deletes the thread with its child threads (recursively) and all their messages and runs,
    /// in one statement; [`Deleted::NotFound`] when there was no such thread. Active runs are
    /// not stopped: callers cancel them first.
    async fn delete_thread(&self, id: &ThreadId) -> Result<Deleted>;

    // Messages: the checkpoint. Each call commits one complete message.

    /// Appends a message at the thread's next `seq` (previous maximum + 1, from 1), assigned in
    /// the same transaction that writes it, so concurrent appends, from any instance, never
    /// share or skip a seq. Bumps the thread's `updated_at` to the message's `created_at`.
    /// `NotFound` when the thread is gone. A message of a run (`run_id` set) is written only
    /// while that run is active: otherwise `RunEnded` (the fence), and for an unknown run too.
    async fn append_message(&self, message: &NewMessage) -> Result<Message>;
    /// A thread's history: its messages in `seq` order, without those a later run replaced
    /// (empty for an unknown thread). This is what the model sees.
    async fn messages(&self, thread: &ThreadId) -> Result<Vec<Message>>;
    /// The thread's history after `seq` (as [`Self::messages`]): what a running loop has not
    /// read yet.
    async fn messages_after(&self, thread: &ThreadId, seq: i64) -> Result<Vec<Message>>;
    /// Every message of a thread in `seq` order, replaced ones included (they carry
    /// `replaced_by_run_id`).
    async fn all_messages(&self, thread: &ThreadId) -> Result<Vec<Message>>;
    /// The last `limit` messages of a thread before seq `before` (from its end when `None`),
    /// in `seq` order; replaced ones too when `include_replaced`.
    async fn message_page(
        &self,
        thread: &ThreadId,
        limit: u32,
        before: Option<i64>,
        include_replaced: bool,
    ) -> Result<Vec<Message>>;
    /// The ids of the tool calls of `run` that have their result message.
    async fn answered_calls(&self, run: RunId) -> Result<Vec<String>>;
    /// `user`'s messages (theirs and their agents' answers, in their top-level threads, not
    /// replaced) that contain `text`, ignoring ASCII case, newest first, at most `limit`.
    async fn search_messages(&self, user: UserId, text: &str, limit: u32) -> Result<Vec<Message>>;
}

/// Where a page of threads starts: after the thread that ended the previous page (its
/// `updated_at` and id), or, without an id, at the threads updated before `updated_at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadCursor {
    pub updated_at: DateTime<Utc>,
    pub id: Option<ThreadId>,
}
