//! Runs: one per model turn sequence a thread asks for, at most one active per thread, ended
//! once (the first writer wins), held by an instance through a lease.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{
    AgentId, Lease, Message, MessageId, NewRun, Run, RunId, RunOutcome, ThreadId, Usage, Waiting,
};

use crate::Result;

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// The error `interrupt_active_runs` records on the runs it ends.
pub const INTERRUPTED_ERROR: &str = "the server stopped while this run was active";

/// How many times `create_run` tries again when the run that blocked it ended before it could
/// be named. Each retry means another run was created and finished in between, so a few
/// suffice.
pub(crate) const CREATE_RUN_ATTEMPTS: usize = 8;

/// What [`RunStore::create_run_with_input`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct RunWithInput {
    /// The new run, `pending`.
    pub run: Run,
    /// Its input, the thread's newest message.
    pub input: Message,
    /// How many messages left the history for it (0 without `replace_from`).
    pub replaced: u64,
}

/// What [`RunStore::finish_run`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum FinishedRun {
    /// This call wrote the run's end.
    Ended(Run),
    /// The run had already ended (another writer won); it is returned as it stands.
    AlreadyEnded(Run),
}

impl FinishedRun {
    pub fn run(&self) -> &Run {
        match self {
            Self::Ended(run) | Self::AlreadyEnded(run) => run,
        }
    }

    pub fn into_run(self) -> Run {
        match self {
            Self::Ended(run) | Self::AlreadyEnded(run) => run,
        }
    }
}

/// What [`RunStore::finish_run_with_answer`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum AnsweredRun {
    /// This call wrote the run's answer and its end, in one commit.
    Ended { run: Run, answer: Box<Message> },
    /// The run had already ended (another writer won): nothing was written; the run as it
    /// stands.
    AlreadyEnded(Run),
    /// A message was sent into the run after the seq its loop holds: nothing was written, and
    /// the run goes on (its loop commits the answer alone and reads what was sent).
    SentIn,
}

/// What a waiting run waits on, with the text it is stored as: [`RunStore::resume_run`] takes
/// the run only if it still waits on exactly that.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredWaiting {
    pub waiting: ars_domain::Waiting,
    pub stored: String,
}

/// Runs: their creation (with their input), status, usage, end and leases.
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Creates a `pending` run. When the thread already has an active (pending or running) run,
    /// nothing is written and the result is `StoreError::Busy` naming that run; a unique index
    /// decides, so of several concurrent creators (on any instance) exactly one wins. An unknown
    /// thread, agent, user or parent run is `Invalid`.
    async fn create_run(&self, new: &NewRun) -> Result<Run>;
    /// Creates a `pending` run and commits its input (`new.input`) as the thread's next user
    /// message, in one transaction, so a run never exists without its input. With
    /// `replace_from` (a user message of the thread's history), that message and every message
    /// after it leave the history first, marked as replaced by the new run (regenerate,
    /// edit-and-resend). Nothing is written on any error: `Busy` exactly as
    /// [`RunStore::create_run`] (checked first), `NotReplaceable` for a `replace_from` that is
    /// not in the thread, not a user message or already replaced, `Invalid` for an unknown
    /// thread, agent, user or parent run.
    async fn create_run_with_input(
        &self,
        new: &NewRun,
        replace_from: Option<MessageId>,
    ) -> Result<RunWithInput>;
    /// The run with this id, if any.
    async fn run(&self, id: RunId) -> Result<Option<Run>>;
    /// The thread's active (pending or running) run, if any; there is at most one.
    async fn active_run(&self, thread: &ThreadId) -> Result<Option<Run>>;
    /// An active run on a thread that deleting `agent` would delete (its threads and their
    /// child threads), if any.
    async fn agent_active_run(&self, agent: AgentId) -> Result<Option<Run>>;
    /// Every run of the thread, oldest first.
    async fn thread_runs(&self, thread: &ThreadId) -> Result<Vec<Run>>;
    /// The runs started by `parent_run` (their `parent_run_id`), oldest first.
    async fn child_runs(&self, parent_run: RunId) -> Result<Vec<Run>>;
    /// The runs on the direct child threads of `thread` (its subagents' runs), oldest first.
    async fn subagent_runs(&self, thread: &ThreadId) -> Result<Vec<Run>>;
    /// Moves a pending run to `running` and sets `started_at`. A run in any other status is
    /// returned unchanged; `NotFound` when there is no such run.
    async fn mark_run_running(&self, id: RunId) -> Result<Run>;
    /// Records an active run's usage so far (live accounting) and, when given, the model it
    /// talks to (`provider/model`, for usage by model). A run that has already finished
    /// keeps the usage its outcome wrote; `NotFound` when there is no such run.
    async fn set_run_usage(&self, id: RunId, usage: Usage, model: Option<&str>) -> Result<()>;
    /// Ends an active run with `outcome` (status, output, error, usage, `finished_at`). The first
    /// writer wins: a run already terminal is returned unchanged as
    /// [`FinishedRun::AlreadyEnded`], so a cancel racing a success records exactly one of them
    /// and exactly one caller learns it wrote the end. `NotFound` when there is no such run.
    async fn finish_run(&self, id: RunId, outcome: &RunOutcome) -> Result<FinishedRun>;
    /// Ends active run `id` with `outcome` and commits its final answer `answer` (a message of
    /// the run: its usage and model recorded on the run with the end) in one transaction — only
    /// while nothing was sent into the run (a `steer` message on its thread) after seq `seen`,
    /// the last its loop holds. So a message sent in before the end is answered by the run,
    /// never left for the thread's next one: [`AnsweredRun::SentIn`], nothing written. The
    /// first writer of the end wins as in [`RunStore::finish_run`]
    /// ([`AnsweredRun::AlreadyEnded`], nothing written). `NotFound` when there is no such run;
    /// `Invalid` (nothing written) when `answer` is not the run's or not on its thread.
    async fn finish_run_with_answer(
        &self,
        id: RunId,
        outcome: &RunOutcome,
        answer: &ars_domain::NewMessage,
        seen: i64,
    ) -> Result<AnsweredRun>;
    /// Ends every active run as `interrupted`, with `finished_at` and [`INTERRUPTED_ERROR`], and
    /// returns their ids. Meant for startup after a stop: it ends the active runs of every
    /// instance sharing the database, so a scaled deployment calls it only when no other
    /// instance is running any.
    async fn interrupt_active_runs(&self) -> Result<Vec<RunId>>;
    /// Extends to `expires_ms` (Unix ms) the lease of every active run `owner` holds, and
    /// answers those runs: an executing run missing from the answer has been ended elsewhere
    /// (cancelled, or reaped after its lease ran out).
    async fn renew_leases(&self, owner: &str, expires_ms: i64) -> Result<Vec<RunId>>;
    /// Ends as `interrupted` (with [`INTERRUPTED_ERROR`]) every active run whose lease ran out
    /// before `now_ms` or that has none — the runs of a crashed instance — and answers them.
    /// Runs of live instances, whose leases are renewed, are never touched.
    async fn reap_expired_runs(&self, now_ms: i64) -> Result<Vec<RunId>>;
    /// A running run starts waiting on `waiting` (its usage so far recorded, its lease
    /// dropped). Answers the run as it now stands: `waiting`, or — when it was no longer
    /// running (cancelled meanwhile) — unchanged. `NotFound` when there is no such run.
    async fn wait_run(&self, id: RunId, waiting: &Waiting, usage: Usage) -> Result<Run>;
    /// What the run waits on, if it is waiting.
    async fn run_waiting(&self, id: RunId) -> Result<Option<StoredWaiting>>;
    /// Takes a waiting run to execute it again: `pending` under `lease`, only if it still
    /// waits on exactly `expected` (the stored text decisions were checked against). `None`
    /// when it does not (decided by someone else, cancelled, or waiting on something new).
    async fn resume_run(&self, id: RunId, lease: &Lease, expected: &str) -> Result<Option<Run>>;
    /// The waiting runs whose deadline for a decision passed before `now_ms` (Unix ms).
    async fn expired_waits(&self, now_ms: i64) -> Result<Vec<RunId>>;
    /// The waiting runs on `thread` and on its child threads (its subagents'), oldest first.
    async fn waiting_runs_under(&self, thread: &ThreadId) -> Result<Vec<Run>>;
    /// `user`'s top-level threads with a waiting run on them or on one of their child threads.
    async fn waiting_threads(&self, user: ars_domain::UserId) -> Result<Vec<ThreadId>>;

    // Background results: the end of a background child is told to its parent thread once.
    // What tells it — a message with `NewMessage::tells`, a run with `NewRun::woken_by` — is
    // written only together with the mark, and this marks it with nothing written.

    /// Marks that background child `child`'s end was told to its parent thread; `false` when it
    /// was told already (or is not an ended background child).
    async fn tell_parent(&self, child: RunId) -> Result<bool>;
    /// Background children that ended before `before` and whose parent thread was not told
    /// (their teller stopped first), oldest first, at most 100.
    async fn untold_children(&self, before: DateTime<Utc>) -> Result<Vec<RunId>>;
    /// How many runs background results started (`NewRun::woken_by`) on `thread` after
    /// `since`.
    async fn wakes_since(&self, thread: &ThreadId, since: DateTime<Utc>) -> Result<u64>;
}

/// A store's `create_run_with_input` as one query (see `sql_store`): the texts for a run on a
/// thread that exists, and for a run with its new thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunAtOnce {
    pub(crate) on_thread: crate::sql_store::AtOnce,
    pub(crate) with_thread: crate::sql_store::AtOnce,
}
