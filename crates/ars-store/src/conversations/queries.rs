//! The statements of conversations (threads and their messages), written once for both
//! databases (`$N` placeholders: see the crate docs).

use crate::runs::queries::active;

// Threads.

/// The thread columns, in [`super::rows::ThreadRow`] order.
macro_rules! thread_columns {
    () => {
        "id, user_id, agent_id, title, parent_thread_id, subagent_slug, runtime_scope_id, \
         workdir_path, created_at, updated_at"
    };
}
pub(crate) use thread_columns;

pub(crate) const INSERT_THREAD: &str = concat!(
    "INSERT INTO threads (",
    thread_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ",
    thread_columns!()
);

pub(crate) const THREAD_BY_ID: &str =
    concat!("SELECT ", thread_columns!(), " FROM threads WHERE id = $1");

/// `SELECT … FROM threads WHERE id IN ($1, …, $n)` for `n` (≥ 1) ids.
pub(crate) fn threads_by_ids(n: usize) -> String {
    format!(
        concat!(
            "SELECT ",
            thread_columns!(),
            " FROM threads WHERE id IN ({})"
        ),
        crate::sql_store::placeholders(n)
    )
}

/// A user's top-level threads, most recently updated first.
pub(crate) const LIST_THREADS: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE user_id = $1 AND parent_thread_id IS NULL \
     ORDER BY updated_at DESC, id DESC"
);

/// One page of a user's top-level threads, as [`LIST_THREADS`], at most `$2`.
pub(crate) const THREAD_PAGE_FIRST: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE user_id = $1 AND parent_thread_id IS NULL \
     ORDER BY updated_at DESC, id DESC LIMIT $2"
);

/// The page after the thread (`$3` updated at, `$4` id) that ended the previous one. The range
/// on `updated_at` alone is what the `(user_id, updated_at)` index serves.
pub(crate) const THREAD_PAGE_BEFORE: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE user_id = $1 AND parent_thread_id IS NULL \
     AND updated_at <= $3 AND (updated_at < $3 OR id < $4) \
     ORDER BY updated_at DESC, id DESC LIMIT $2"
);

/// A thread's direct children, oldest first.
pub(crate) const CHILD_THREADS: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE parent_thread_id = $1 ORDER BY created_at, id"
);

/// `$1`: the thread; `$2`: the new title; `$3`: now.
pub(crate) const RENAME_THREAD: &str = concat!(
    "UPDATE threads SET title = $2, updated_at = $3 WHERE id = $1 RETURNING ",
    thread_columns!()
);

/// Child threads, messages and runs go with the row (ON DELETE CASCADE, recursively), in the
/// same statement.
pub(crate) const DELETE_THREAD: &str = "DELETE FROM threads WHERE id = $1";

/// A row when thread `$1` exists.
pub(crate) const THREAD_EXISTS: &str = "SELECT id FROM threads WHERE id = $1";

/// `$1`: the thread; `$2`: now. Takes the thread's next seq (`last_seq`) for the one message
/// the transaction appends ([`APPEND_MESSAGE`] reads it back from the row). Inside the append's
/// transaction this also locks the thread row (PostgreSQL), so appends to one thread take their
/// turns.
pub(crate) const TOUCH_THREAD: &str =
    "UPDATE threads SET updated_at = $2, last_seq = last_seq + 1 WHERE id = $1";

// Messages.

/// The message columns an append writes, in [`super::rows::MessageRow`] order.
macro_rules! message_insert_columns {
    () => {
        "id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id, tool_name, \
         is_error, notice, steer, created_at"
    };
}
pub(crate) use message_insert_columns;

/// The message columns, in [`super::rows::MessageRow`] order.
macro_rules! message_columns {
    () => {
        concat!(message_insert_columns!(), ", replaced_by_run_id")
    };
}
pub(crate) use message_columns;

/// Appends a message at the seq its transaction took from the thread ([`TOUCH_THREAD`]: the
/// last one + 1, from 1, replaced messages counted too). `$1`: id; `$2`: thread; `$3`: run;
/// `$4`: role; `$5`: content; `$6`: tool calls; `$7`: tool call id; `$8`: tool name; `$9`: is
/// error; `$10`: notice; `$11`: steer; `$12`: now.
/// The seq comes from the thread's row, not from `messages`' maximum: an `INSERT … SELECT`
/// that reads the table it writes is filled into a temporary table first (SQLite).
pub(crate) const APPEND_MESSAGE: &str = concat!(
    "INSERT INTO messages (",
    message_insert_columns!(),
    ") SELECT $1, $2, $3, last_seq, $4, $5, $6, $7, $8, $9, $10, $11, $12 \
     FROM threads WHERE id = $2 RETURNING ",
    message_columns!()
);

/// In a write at once, the thread's `updated_at` = `$now` and its next seq taken (as
/// [`TOUCH_THREAD`] does), only `WHERE` the fence holds (the rest of the statement): the
/// statement that decides whether the write at once writes anything, every later one following
/// it with `changes() > 0`.
macro_rules! take_next_seq {
    ($now:literal) => {
        concat!(
            "UPDATE threads SET updated_at = ",
            $now,
            ", last_seq = last_seq + 1 WHERE id = $2 AND "
        )
    };
}
pub(crate) use take_next_seq;

/// In a write at once, right after [`take_next_seq!`]: the message (the values after `SELECT`,
/// with `last_seq` as its seq), only when the thread's update took a seq (`changes()`: the rows
/// the statement before wrote).
macro_rules! message_at_taken_seq {
    ($values:literal) => {
        concat!(
            "INSERT INTO messages (",
            message_insert_columns!(),
            ") SELECT ",
            $values,
            " FROM threads WHERE id = $2 AND changes() > 0"
        )
    };
}
pub(crate) use message_at_taken_seq;

/// The message `$id` just inserted, read back by the statement after the insert in a write at
/// once: a row only when the insert wrote one (`changes()`: the rows the statement before
/// wrote). SQLite collects the rows of a `RETURNING` in a temporary table (and an
/// `INSERT … SELECT` with one in another), each built and dropped as the statement runs; a read
/// by key builds none.
macro_rules! written_message {
    ($id:literal) => {
        concat!(
            "SELECT ",
            message_columns!(),
            " FROM messages WHERE id = ",
            $id,
            " AND changes() > 0"
        )
    };
}
pub(crate) use written_message;

/// The message's run (`$3`), if it has one, is active: the fence of an append at once.
macro_rules! message_allowed {
    () => {
        concat!(
            "($3 IS NULL OR EXISTS (SELECT 1 FROM runs WHERE id = $3 AND ",
            active!(),
            "))"
        )
    };
}

/// `append_message` as one round trip to SQLite's writer connection, for a message that tells
/// no parent of a child's end: statements that run together. The run's usage, when the
/// message carries it (`$16`); the thread's `updated_at` and next seq ([`take_next_seq!`]);
/// the message at that seq ([`message_at_taken_seq!`]), read back ([`written_message!`]).
/// Each is written only while the thread exists and the run (if the message has one) is
/// active — the thread's update tests it, the message follows that update — so a refused
/// message (no row back) changes nothing. `$1`–`$12` as in
/// [`APPEND_MESSAGE`]; `$13`, `$14`: prompt and completion tokens; `$15`: the model. SQLite's
/// one writer holds the write lock for the whole transaction, so the order PostgreSQL needs
/// (the thread's row lock before the seq is read) does not matter here, and neither can the
/// run end in between.
macro_rules! append_message_at_once {
    () => {
        concat!(
            "UPDATE runs SET prompt_tokens = $13, completion_tokens = $14, \
             model = COALESCE($15, model) WHERE $16 AND id = $3 AND ",
            active!(),
            "; ",
            take_next_seq!("$12"),
            message_allowed!(),
            "; ",
            message_at_taken_seq!("$1, $2, $3, last_seq, $4, $5, $6, $7, $8, $9, $10, $11, $12"),
            "; ",
            written_message!("$1")
        )
    };
}

/// [`append_message_at_once!`]'s two texts (see [`crate::sql_store::AtOnce`]).
pub(crate) const APPEND_MESSAGE_AT_ONCE_SQLITE: crate::sql_store::AtOnce =
    crate::sql_store::at_once!(append_message_at_once!());

/// [`append_message_at_once!`] on PostgreSQL: one call of the function that runs
/// `append_message`'s statements (migration 0022), with its binds in the same order. It raises
/// [`crate::sql_store::REFUSED`] where SQLite's text returns no row.
pub(crate) const APPEND_MESSAGE_AT_ONCE_POSTGRES: crate::sql_store::AtOnce =
    crate::sql_store::AtOnce::one(
        "SELECT * FROM ars_append_message($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
         $13, $14, $15, $16)",
    );

/// The thread's history: its messages no run has replaced.
pub(crate) const THREAD_MESSAGES: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id = $1 AND replaced_by_run_id IS NULL ORDER BY seq"
);

/// The thread's history after seq `$2`.
pub(crate) const THREAD_MESSAGES_AFTER: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id = $1 AND seq > $2 AND replaced_by_run_id IS NULL ORDER BY seq"
);

/// The last `$3` messages of thread `$1` before seq `$2`, in `seq` order; replaced ones only
/// when `$4`. Read backwards along the `(thread_id, seq)` index, so as cheap at the end of a
/// long thread as at its start.
pub(crate) const MESSAGE_PAGE: &str = concat!(
    "SELECT * FROM (SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id = $1 AND seq < $2 \
     AND (replaced_by_run_id IS NULL OR $4) ORDER BY seq DESC LIMIT $3) AS page ORDER BY seq"
);

/// The tool calls of run `$1` that have their result (by the `run_id` index).
pub(crate) const ANSWERED_CALLS: &str =
    "SELECT tool_call_id FROM messages WHERE run_id = $1 AND tool_call_id IS NOT NULL";

/// Every message of the thread, replaced ones included.
pub(crate) const ALL_THREAD_MESSAGES: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id = $1 ORDER BY seq"
);

/// What a `replace_from` must be checked against: the message's thread, seq, role and whether
/// it was replaced already.
pub(crate) const MESSAGE_TO_REPLACE: &str =
    "SELECT thread_id, seq, role, replaced_by_run_id FROM messages WHERE id = $1";

/// Takes every message of thread `$1` from seq `$2` on out of its history, as replaced by run
/// `$3`; messages replaced earlier keep the run that replaced them.
pub(crate) const REPLACE_MESSAGES: &str = "UPDATE messages SET replaced_by_run_id = $3 \
     WHERE thread_id = $1 AND seq >= $2 AND replaced_by_run_id IS NULL";

/// `$1`'s messages (user and assistant, in top-level threads, not replaced) whose content holds
/// `$2` — a `LIKE` pattern with `\` escaping — ignoring ASCII case, newest first, at most `$3`.
pub(crate) const SEARCH_MESSAGES: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id IN \
     (SELECT id FROM threads WHERE user_id = $1 AND parent_thread_id IS NULL) \
     AND replaced_by_run_id IS NULL AND role IN ('user', 'assistant') \
     AND LOWER(content) LIKE LOWER($2) ESCAPE '\\' \
     ORDER BY created_at DESC, id DESC LIMIT $3"
);

/// `text` as a literal inside a `LIKE` pattern escaped with `\`.
pub(crate) fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
