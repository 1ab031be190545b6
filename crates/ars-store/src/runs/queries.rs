//! The statements of runs, written once for both databases (`$N` placeholders:
//! see the crate docs).

use crate::conversations::queries::{
    message_at_taken_seq, message_columns, message_insert_columns, take_next_seq, thread_columns,
    written_message,
};

// Runs.

/// The run columns, in [`super::rows::RunRow`] order.
macro_rules! run_columns {
    () => {
        "id, thread_id, agent_id, user_id, status, input, output, error, prompt_tokens, \
         completion_tokens, parent_run_id, parent_tool_call_id, created_at, started_at, \
         finished_at, delivery, error_code, waiting_json"
    };
}

/// The statuses of an active run, as SQL; the same predicate as the one-active-run index,
/// word for word (SQLite matches `ON CONFLICT … WHERE` to an index's predicate term by term).
/// A waiting run is active: it holds its thread, and its end is written like any other's.
/// Comparisons joined by OR, not `IN (…)`: SQLite builds a temporary B-tree for a list of more
/// than two constants each time a statement runs (migration 0021).
macro_rules! active {
    () => {
        "(status = 'pending' OR status = 'running' OR status = 'waiting')"
    };
}
pub(crate) use active;

/// The statuses of a run an instance executes (or is about to): what leases, the reaper and
/// recovery are about. A waiting run is executed nowhere.
macro_rules! executing {
    () => {
        "status IN ('pending', 'running')"
    };
}

/// Creates a run unless the thread already has an active one, in which case nothing is
/// written and no row returned. `$1`: id; `$2`: thread; `$3`: agent; `$4`: user; `$5`: input;
/// `$6`: parent run; `$7`: parent tool call; `$8`: now; `$9`: delivery; `$10`, `$11`: lease
/// owner and expiry; `$12`: the background child whose end it acts on (a wake); `$13`: its
/// status, `pending` or `running`; `$14`: when it started (a running one: now). `ON CONFLICT`
/// names the partial unique index, so a concurrent creator (PostgreSQL waits for it to commit)
/// is a quiet miss rather than an error.
pub(crate) const INSERT_RUN: &str = concat!(
    "INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, parent_run_id, \
     parent_tool_call_id, created_at, delivery, lease_owner, lease_expires_ms, wake_of, \
     started_at) \
     VALUES ($1, $2, $3, $4, $13, $5, $6, $7, $8, $9, $10, $11, $12, $14) \
     ON CONFLICT (thread_id) WHERE ",
    active!(),
    " DO NOTHING RETURNING ",
    run_columns!()
);

/// The run `$id` the statement before inserted or updated, read back in a write at once: a row
/// only when that statement wrote one (see `written_message!`).
macro_rules! written_run {
    ($id:literal) => {
        concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE id = ",
            $id,
            " AND changes() > 0"
        )
    };
}

/// `create_run_with_input` as one round trip to SQLite's writer connection, for a run that
/// neither wakes a parent nor replaces messages: `$thread` (the run's new thread, or nothing),
/// the run ([`INSERT_RUN`], written only while the thread exists and no other run holds it),
/// then — only with the run — the thread's `updated_at` and the run's input, a user message at
/// the thread's next seq. Two rows back (the run, then the message) when it was written; none
/// when the thread is gone or another run holds it, and then nothing was written (a new
/// thread cannot be either). `$1`–`$14` as in [`INSERT_RUN`]; `$15`: the message's id.
/// SQLite's one writer holds the write lock for the whole transaction.
macro_rules! create_run_with_input_at_once {
    ($thread:expr) => {
        concat!(
            $thread,
            "INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, parent_run_id, \
             parent_tool_call_id, created_at, delivery, lease_owner, lease_expires_ms, wake_of, \
             started_at) \
             SELECT $1, $2, $3, $4, $13, $5, $6, $7, $8, $9, $10, $11, $12, $14 \
             WHERE EXISTS (SELECT 1 FROM threads WHERE id = $2) \
             ON CONFLICT (thread_id) WHERE ",
            active!(),
            " DO NOTHING; ",
            written_run!("$1"),
            "; ",
            take_next_seq!("$8"),
            "EXISTS (SELECT 1 FROM runs WHERE id = $1); ",
            message_at_taken_seq!(
                "$15, $2, $1, last_seq, 'user', $5, '[]', NULL, NULL, FALSE, NULL, FALSE, $8"
            ),
            "; ",
            written_message!("$15")
        )
    };
}

/// [`create_run_with_input_at_once!`] on SQLite, in its two texts each
/// ([`crate::sql_store::AtOnce`]): on a thread that exists, and on a new one (`$16`–`$25`: its
/// columns, as `INSERT_THREAD` binds them).
pub(crate) const CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE: crate::runs::RunAtOnce =
    crate::runs::RunAtOnce {
        on_thread: crate::sql_store::at_once!(create_run_with_input_at_once!("")),
        with_thread: crate::sql_store::at_once!(create_run_with_input_at_once!(concat!(
            "INSERT INTO threads (",
            thread_columns!(),
            ") VALUES ($16, $17, $18, $19, $20, $21, $22, $23, $24, $25); "
        ))),
    };

/// [`create_run_with_input_at_once!`] on PostgreSQL: one call of the function that runs
/// `create_run_with_input`'s statements (migration 0022), with the same binds, which raises
/// [`crate::sql_store::REFUSED`] where SQLite's text returns no row.
pub(crate) const CREATE_RUN_WITH_INPUT_AT_ONCE_POSTGRES: crate::runs::RunAtOnce =
    crate::runs::RunAtOnce {
        on_thread: crate::sql_store::AtOnce::one(
            "SELECT * FROM ars_create_run_with_input($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
             $11, $12, $13, $14, $15)",
        ),
        with_thread: crate::sql_store::AtOnce::one(
            "SELECT * FROM ars_create_run_with_input($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
             $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)",
        ),
    };

pub(crate) const RUN_BY_ID: &str = concat!("SELECT ", run_columns!(), " FROM runs WHERE id = $1");

pub(crate) const ACTIVE_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE thread_id = $1 AND ",
    active!()
);

/// Just the id of the thread's active run, to name it in `StoreError::Busy`.
/// An active run on any thread a deletion of agent `$1` would take with it: the agent's own
/// threads and the child threads below them (one level: subagents start no subagents).
pub(crate) const AGENT_ACTIVE_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE ",
    active!(),
    " AND thread_id IN (SELECT id FROM threads WHERE agent_id = $1 \
       OR parent_thread_id IN (SELECT id FROM threads WHERE agent_id = $1)) LIMIT 1"
);

pub(crate) const ACTIVE_RUN_ID: &str =
    concat!("SELECT id FROM runs WHERE thread_id = $1 AND ", active!());

pub(crate) const THREAD_RUNS: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE thread_id = $1 ORDER BY created_at, id"
);

pub(crate) const CHILD_RUNS: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE parent_run_id = $1 ORDER BY created_at, id"
);

/// Runs on the direct child threads of `$1`, oldest first.
pub(crate) const SUBAGENT_RUNS: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE thread_id IN (SELECT id FROM threads WHERE parent_thread_id = $1) \
     ORDER BY created_at, id"
);

/// `$1`: the run; `$2`: now. Only a pending run starts; otherwise no row is returned. A run
/// resumed after waiting keeps the time it first started.
pub(crate) const MARK_RUN_RUNNING: &str = concat!(
    "UPDATE runs SET status = 'running', started_at = COALESCE(started_at, $2) WHERE id = $1 \
     AND status = 'pending' \
     RETURNING ",
    run_columns!()
);

/// `$1`: the run; `$2`, `$3`: prompt and completion tokens. Only an active run's usage moves:
/// an update of no row means the run is not active, so in `append_message` it is the fence
/// too (it locks the row as [`RUN_IS_ACTIVE`] does).
pub(crate) const SET_RUN_USAGE: &str = concat!(
    "UPDATE runs SET prompt_tokens = $2, completion_tokens = $3, model = COALESCE($4, model) \
     WHERE id = $1 AND ",
    active!()
);

/// Whether run `$1` is active: the fence every message of a run passes inside
/// `append_message`'s transaction. A no-op `UPDATE` rather than a `SELECT`, because it holds
/// the run's row lock until the message commits: on PostgreSQL a run's end (its own, a cancel,
/// a reap) written meanwhile waits for the message, and one written first is re-read here and
/// refuses it, so no message of a run commits after the run ended. (`SELECT … FOR SHARE` would
/// do on PostgreSQL, but SQLite has no such clause; its one writer serialises anyway.)
pub(crate) const RUN_IS_ACTIVE: &str = concat!(
    "UPDATE runs SET status = status WHERE id = $1 AND ",
    active!(),
    " RETURNING id"
);

/// Extends every active run's lease held by `$1` to `$2` (Unix ms); answers the runs renewed.
pub(crate) const RENEW_LEASES: &str = concat!(
    "UPDATE runs SET lease_expires_ms = $2 WHERE lease_owner = $1 AND ",
    executing!(),
    " RETURNING id"
);

/// Ends as `interrupted` every active run whose lease ran out before `$3` (Unix ms), or that
/// has none. `$1`: now; `$2`: the error.
pub(crate) const REAP_EXPIRED_RUNS: &str = concat!(
    "UPDATE runs SET status = 'interrupted', error = $2, finished_at = $1 WHERE ",
    executing!(),
    " AND (lease_expires_ms IS NULL OR lease_expires_ms < $3) RETURNING id"
);

/// What a run's end clears: what it waited on, and its lease.
macro_rules! ended_run_clears {
    () => {
        "waiting_json = NULL, waiting_until_ms = NULL, lease_owner = NULL, \
         lease_expires_ms = NULL"
    };
}

/// No message was sent into the run (`steer`: steering, a background result for a running
/// parent) on thread `$thread` after seq `$seen`: the fence of a run's end with its answer.
macro_rules! none_sent_in {
    ($thread:literal, $seen:literal) => {
        concat!(
            "NOT EXISTS (SELECT 1 FROM messages WHERE thread_id = ",
            $thread,
            " AND seq > ",
            $seen,
            " AND steer)"
        )
    };
}

/// `$1`: the run; `$2`: the terminal status; `$3`: output; `$4`: error; `$5`, `$6`: prompt and
/// completion tokens; `$7`: now; `$8`: the error's code. Only an active run finishes: the first
/// writer wins, and on PostgreSQL a second writer waits for the first's row lock, then finds
/// the run terminal.
pub(crate) const FINISH_RUN: &str = concat!(
    "UPDATE runs SET status = $2, output = $3, error = $4, prompt_tokens = $5, \
     completion_tokens = $6, finished_at = $7, error_code = $8, ",
    ended_run_clears!(),
    " WHERE id = $1 AND ",
    active!(),
    " RETURNING ",
    run_columns!()
);

/// A run's end with its final answer, on PostgreSQL (in `finish_run_with_answer`'s transaction,
/// after the thread's row lock, before the answer's insert): [`FINISH_RUN`]'s `$1`–`$8`; `$9`:
/// the model the run talks to (`provider/model`), kept when NULL; `$10`: the answer's thread,
/// the run's; `$11`: the last seq the run's loop holds. Only while nothing was sent into the run
/// after it.
pub(crate) const FINISH_RUN_ANSWERED: &str = concat!(
    "UPDATE runs SET status = $2, output = $3, error = $4, prompt_tokens = $5, \
     completion_tokens = $6, finished_at = $7, error_code = $8, model = COALESCE($9, model), ",
    ended_run_clears!(),
    " WHERE id = $1 AND thread_id = $10 AND ",
    active!(),
    " AND ",
    none_sent_in!("$10", "$11"),
    " RETURNING ",
    run_columns!()
);

/// The fence of [`finish_run_with_answer_at_once!`] (its first statement tests it, the others
/// follow that one): run `$3` is active on thread `$2`, and nothing was sent into it after seq
/// `$16`.
macro_rules! answer_allowed {
    () => {
        concat!(
            "EXISTS (SELECT 1 FROM runs WHERE id = $3 AND thread_id = $2 AND ",
            active!(),
            ") AND ",
            none_sent_in!("$2", "$16")
        )
    };
}

/// `finish_run_with_answer` as one round trip to SQLite's writer connection: the thread's
/// `updated_at` and next seq, the answer at that seq, the run's end — each only while the run
/// is active on the answer's thread and nothing was sent into it after the loop's last seq
/// ([`answer_allowed!`], tested once, by the thread's update, before any statement changes
/// what it reads; each later write follows the one before it with `changes() > 0`), so a
/// refused end (no row back) changes nothing.
/// Two rows back (the answer, then the run) when it was written. `$1`–`$12` as in
/// `APPEND_MESSAGE` (`$3`: the run; `$12`: now); `$13`, `$14`: prompt and completion tokens;
/// `$15`: the model, kept when NULL; `$16`: the last seq the loop holds; `$17`: the terminal
/// status; `$18`: output; `$19`: error; `$20`: the error's code. SQLite's one writer holds the
/// write lock for the whole transaction: nothing is sent in, and the run cannot end, in between.
macro_rules! finish_run_with_answer_at_once {
    () => {
        concat!(
            take_next_seq!("$12"),
            answer_allowed!(),
            "; ",
            message_at_taken_seq!("$1, $2, $3, last_seq, $4, $5, $6, $7, $8, $9, $10, $11, $12"),
            "; ",
            written_message!("$1"),
            // `changes()`: still the answer's insert's (a read changes no count).
            "; UPDATE runs SET status = $17, output = $18, error = $19, prompt_tokens = $13, \
             completion_tokens = $14, finished_at = $12, error_code = $20, \
             model = COALESCE($15, model), ",
            ended_run_clears!(),
            " WHERE id = $3 AND changes() > 0; ",
            written_run!("$3")
        )
    };
}

/// [`finish_run_with_answer_at_once!`]'s two texts (see [`crate::sql_store::AtOnce`]).
pub(crate) const FINISH_RUN_WITH_ANSWER_AT_ONCE_SQLITE: crate::sql_store::AtOnce =
    crate::sql_store::at_once!(finish_run_with_answer_at_once!());

/// [`finish_run_with_answer_at_once!`] on PostgreSQL: one call of the function that runs
/// `finish_run_with_answer`'s statements (migration 0022), with the same binds, which raises
/// [`crate::sql_store::REFUSED`] where SQLite's text returns no row.
pub(crate) const FINISH_RUN_WITH_ANSWER_AT_ONCE_POSTGRES: crate::sql_store::AtOnce =
    crate::sql_store::AtOnce::one(
        "SELECT * FROM ars_finish_run_with_answer($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
         $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)",
    );

/// `$1`: now; `$2`: the error to record. A waiting run is left waiting: nothing of it was
/// executing.
pub(crate) const INTERRUPT_ACTIVE_RUNS: &str = concat!(
    "UPDATE runs SET status = 'interrupted', error = $2, finished_at = $1 WHERE ",
    executing!(),
    " RETURNING id"
);

/// A running run starts waiting: `$2` what it waits on, `$3` until when (Unix ms, or NULL),
/// `$4`, `$5` its prompt and completion tokens. Its lease goes: no instance executes it.
pub(crate) const WAIT_RUN: &str = concat!(
    "UPDATE runs SET status = 'waiting', waiting_json = $2, waiting_until_ms = $3, \
     prompt_tokens = $4, completion_tokens = $5, lease_owner = NULL, lease_expires_ms = NULL \
     WHERE id = $1 AND status = 'running' RETURNING ",
    run_columns!()
);

/// What run `$1` waits on, if it waits.
pub(crate) const RUN_WAITING: &str =
    "SELECT waiting_json FROM runs WHERE id = $1 AND status = 'waiting'";

/// A waiting run is taken to be executed again: `pending` under lease `$2` until `$3`, only if
/// it still waits on exactly `$4` (what the decisions were checked against).
pub(crate) const RESUME_RUN: &str = concat!(
    "UPDATE runs SET status = 'pending', waiting_json = NULL, waiting_until_ms = NULL, \
     lease_owner = $2, lease_expires_ms = $3 WHERE id = $1 AND status = 'waiting' \
     AND waiting_json = $4 RETURNING ",
    run_columns!()
);

/// The waiting runs whose deadline passed before `$1` (Unix ms).
pub(crate) const EXPIRED_WAITS: &str =
    "SELECT id FROM runs WHERE status = 'waiting' AND waiting_until_ms < $1 ORDER BY id";

/// The waiting runs on thread `$1` and on its child threads (its subagents'), oldest first.
pub(crate) const WAITING_RUNS_UNDER: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE status = 'waiting' AND (thread_id = $1 OR thread_id IN \
     (SELECT id FROM threads WHERE parent_thread_id = $1)) ORDER BY created_at, id"
);

/// The top-level threads of user `$1` with a waiting run on them or on a child thread.
pub(crate) const WAITING_THREADS: &str = "SELECT DISTINCT COALESCE(t.parent_thread_id, t.id) \
     FROM runs r JOIN threads t ON t.id = r.thread_id \
     WHERE r.user_id = $1 AND r.status = 'waiting'";

// Background results.

/// Marks that the end of background child `$1` was told to its parent thread; a row only the
/// first time (and only for an ended background child).
pub(crate) const TELL_PARENT: &str = "UPDATE runs SET parent_told = TRUE \
     WHERE id = $1 AND parent_told = FALSE AND delivery = 'background' \
     AND finished_at IS NOT NULL RETURNING id";

/// Background children that ended before `$1` and whose parent was not told, oldest first.
pub(crate) const UNTOLD_CHILDREN: &str = "SELECT id FROM runs \
     WHERE delivery = 'background' AND parent_told = FALSE AND finished_at IS NOT NULL \
     AND finished_at < $1 ORDER BY finished_at LIMIT 100";

/// How many runs background results started on thread `$1` since `$2`.
pub(crate) const WAKES_SINCE: &str =
    "SELECT COUNT(*) FROM runs WHERE thread_id = $1 AND wake_of IS NOT NULL AND created_at > $2";
