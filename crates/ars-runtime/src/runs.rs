//! What a plug-in may do with runs, and the words for it: [`Runs`] is the handle a plug-in
//! gets instead of the runtime — start a run ([`StartRun`]), wait for one ([`Waited`]), cancel
//! one, ask whether an agent can run at all, and read the store, the event bus and the model
//! providers. The runtime implements it; a plug-in sees nothing else of the runtime.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use ars_domain::{
    Agent, Caller, Message, MessageId, MessageNotice, ResolvedContext, Run, RunId, RunInput,
    RunLineage, Thread, Usage,
};
use ars_events::EventBus;
use ars_store::{Store, StoreError};

use crate::models::ModelSource;

/// What a plug-in may do with runs and read beside them.
#[async_trait]
pub trait Runs: Send + Sync {
    /// Creates a run with its input and executes it in the background; answers at once.
    async fn start_run(&self, start: StartRun) -> Result<Run, RuntimeError>;

    /// Waits until the run is terminal or `timeout` passes (at most the configured longest
    /// wait).
    async fn wait(&self, run_id: RunId, timeout: Duration) -> Result<Waited, RuntimeError>;

    /// Cancels a run and answers it once terminal (or as it stands after a few seconds).
    async fn cancel(&self, run_id: RunId) -> Result<Run, RuntimeError>;

    /// Sends `input` into the active run `run_id`: the model reads it before its next model
    /// call. `Ended` once the run has ended.
    async fn steer(&self, run_id: RunId, input: RunInput) -> Result<Message, RuntimeError>;

    /// The context `agent` runs with now: its own over the server's defaults.
    async fn context_of(&self, agent: &Agent) -> Result<ResolvedContext, StoreError>;

    /// Why a run of `agent` would fail before its first step, in words; `None` when it can
    /// start.
    async fn cannot_run(&self, agent: &Agent) -> Option<String>;

    fn store(&self) -> &Arc<dyn Store>;

    /// The run and thread events, for a plug-in that tells thread followers of what it owns.
    fn events(&self) -> &Arc<dyn EventBus>;

    /// The model providers runs use, e.g. to embed a query with a configured model.
    fn models(&self) -> &ModelSource;

    /// How many runs execute at once from one pool of slots; a plug-in that keeps a pool of
    /// its own ([`ParentLink::slots`]) sizes it alike.
    fn max_concurrent_runs(&self) -> usize;

    /// What the runs `run_id` started (those that have it as their parent run) spent, when
    /// this process knows it without reading the store: `run_id` executes here, was started
    /// here rather than resumed, and every run it started (none, say) ended here. `None` when
    /// that is not known — read the store.
    fn started_usage(&self, run_id: RunId) -> Option<Usage>;

    /// An owned handle, for tools that act on runs after the setup is gone.
    fn handle(&self) -> Arc<dyn Runs>;
}

/// A run to start.
pub struct StartRun {
    pub thread: Thread,
    pub caller: Caller,
    /// The user's message, already held to the one input rule.
    pub input: RunInput,
    /// Set on a run another run's tool call starts.
    pub parent: Option<ParentLink>,
    /// A user message of the thread's history that this input replaces, with every message
    /// after it (regenerate, edit-and-resend): they leave the history the model sees.
    pub replace_from: Option<MessageId>,
    /// A run a background child's end starts on its parent thread: the completion notice about
    /// the child, which is the run's input message instead of a user message. Starting it tells
    /// the child's parent of the end, so it starts at most once per child; a second start is
    /// `Store(Conflict { field: "woken_by" })`.
    pub woken_by: Option<MessageNotice>,
}

/// How a run started from another run's tool call hangs on that run.
#[derive(Clone, Debug)]
pub struct ParentLink {
    /// Stored with the run: the run and tool call that started it, and how that run takes its
    /// result.
    pub lineage: RunLineage,
    /// The run is cancelled when this token is: a starter that waits for the run passes its
    /// call's, so cancelling (or ending) the starter ends the run. Without one the run
    /// outlives its starter; only its own cancel or a shutdown stop it.
    pub cancel_with: Option<CancellationToken>,
    /// Where the run waits for an execution slot; without, in the runtime's own pool. A
    /// starter that holds its slot while it waits for the run gives it another pool, or
    /// starters could take every slot and starve the runs they wait for.
    pub slots: Option<Slots>,
    /// The run's thread is new (not stored yet): it is created with the run.
    pub new_thread: bool,
}

/// A pool of execution slots: a run holds one while it executes, and waits (`pending`) for
/// one before.
#[derive(Clone, Debug)]
pub struct Slots(Arc<Semaphore>);

impl Slots {
    /// A pool of `size` slots (at least one).
    pub fn new(size: usize) -> Self {
        Self(Arc::new(Semaphore::new(size.max(1))))
    }

    /// Waits for a slot; `None` only if the pool was closed.
    pub(crate) async fn acquire(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.0).acquire_owned().await.ok()
    }

    /// A slot if one is free now and no run waits for one (the pool is first come, first
    /// served); `None` otherwise.
    pub(crate) fn try_acquire(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.0).try_acquire_owned().ok()
    }
}

/// Where a run executes: the pool it takes its slot from, and the slot itself when its
/// starter took one already (a run created `running`).
#[derive(Debug)]
pub(crate) struct Slot {
    pub pool: Slots,
    pub held: Option<OwnedSemaphorePermit>,
}

impl Slot {
    /// A slot to wait for in `pool`.
    pub(crate) fn waiting(pool: Slots) -> Self {
        Self { pool, held: None }
    }
}

/// What [`Runs::wait`] found when it stopped waiting.
#[derive(Clone, Debug, PartialEq)]
pub enum Waited {
    /// The run is terminal.
    Finished(Run),
    /// The wait's time ran out first; the run as it stands.
    StillRunning(Run),
}

impl Waited {
    pub fn run(&self) -> &Run {
        match self {
            Self::Finished(run) | Self::StillRunning(run) => run,
        }
    }

    pub fn into_run(self) -> Run {
        match self {
            Self::Finished(run) | Self::StillRunning(run) => run,
        }
    }
}

/// Why a run could not be started or found.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The thread already has an active run; nothing was queued.
    #[error("the thread already has an active run ({active})")]
    Busy { active: RunId },
    #[error("{} not found", .0.noun())]
    NotFound(ars_domain::Subject),
    /// A decision for a run that is not waiting for one.
    #[error("the run is not waiting for a decision (it is {})", status.as_str())]
    NotWaiting { status: ars_domain::RunStatus },
    /// A message for a run that has ended.
    #[error("the run has ended ({}); start a new run on its thread to continue", status.as_str())]
    Ended { status: ars_domain::RunStatus },
    /// Decisions that do not fit what the run waits on.
    #[error(transparent)]
    Invalid(ars_domain::ValidationError),
    #[error(transparent)]
    Store(#[from] StoreError),
}
