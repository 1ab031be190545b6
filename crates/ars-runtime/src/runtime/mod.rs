//! The runtime handle: starts runs as background tasks, cancels them, waits for them, and
//! recovers after a restart. A run another run's tool call starts is the same
//! [`Runtime::start_run`], with a [`ParentLink`]. One run's preparation and driving live in
//! `execute`; what a run tells beyond its event stream in [`crate::feed`].
//!
//! The core knows no capability: subagents, Skills, MCP and knowledge are plug-ins
//! ([`MiddlewareFactory`]) the server assembly passes in [`RuntimeParts::plugins`], and they
//! act on runs through the [`Runs`] handle this runtime implements.
//!
//! **Invariant:** at most one active run per thread — the store refuses a second one, so this
//! holds across instances too. A run's terminal status is written once (first writer wins).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use ars_domain::{
    Agent, ContextDefaults, Lease, Lineage, Message, NewRun, ResolvedContext, Run, RunId, RunInput,
    RunOutcome, RunStatus, SecretKey, Thread, Usage, UserId,
};
use ars_events::{ControlChannel, EventBus, EventKind, ParentRef, RunRef, Signal};
use ars_models::ModelRegistry;
use ars_sandbox::{Sandbox, SandboxError, Scope, WorkspaceUsage};
use ars_store::{FinishedRun, Store, StoreError};

use crate::emitter::Emitter;
use crate::feed::Feed;
use crate::metrics;
use crate::models::{ModelSnapshot, ModelSource};
use crate::plugin::MiddlewareFactory;
use crate::runs::{ParentLink, Runs, RuntimeError, Slot, Slots, StartRun, Waited};
use crate::tool::{ToolInfo, ToolRegistry};

mod control;
mod execute;
mod lease;
mod steer;
mod waiting;

pub use lease::now_ms;

/// Runtime settings.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// `BaseContext` and `SubAgentContext`.
    pub defaults: ContextDefaults,
    /// Runs executing at once from one pool of slots (the runtime's, and each pool a plug-in
    /// keeps for the runs it starts); more wait, `pending`, for a slot.
    pub max_concurrent_runs: usize,
    /// Longest a caller may block in [`Runtime::wait`].
    pub max_wait: Duration,
    /// This process's id: the owner of the leases of the runs it executes.
    pub instance_id: String,
    /// How long a run's lease holds unless its instance renews it (every third of it).
    pub lease_ttl: Duration,
    /// What [`Runtime::recover`] ends, and whether a reaper runs.
    pub recovery: Recovery,
    /// How a model stream that breaks mid-answer is asked again.
    pub stream_retry: crate::StreamRetry,
}

/// Which runs a starting instance may end as `interrupted`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Every active run: the only instance (embedded SQLite) left them all behind.
    AllActive,
    /// Only runs whose lease ran out — a crashed instance's — at start and periodically, so
    /// several instances on one database never end each other's runs.
    ExpiredLeases,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            defaults: ContextDefaults::default(),
            max_concurrent_runs: 256,
            max_wait: Duration::from_secs(600),
            instance_id: uuid::Uuid::new_v4().to_string(),
            lease_ttl: Duration::from_secs(15),
            recovery: Recovery::AllActive,
            stream_retry: crate::StreamRetry::default(),
        }
    }
}

/// Where an execution of a run stands, as its waiters see it.
#[derive(Clone, Debug, Default)]
enum Done {
    #[default]
    Executing,
    /// Its task is over: with the run as its end was written (here or by whoever ended it
    /// first), or `None` when it stopped to wait for decisions.
    Over(Option<Arc<Run>>),
}

impl Done {
    fn is_over(&self) -> bool {
        matches!(self, Self::Over(_))
    }

    /// The run as it ended, when this execution saw its end.
    fn ended(&self) -> Option<Run> {
        match self {
            Self::Over(Some(run)) if run.status.is_terminal() => Some(Run::clone(run)),
            _ => None,
        }
    }
}

/// A run executing in this process.
struct ActiveRun {
    cancel: CancellationToken,
    done: watch::Receiver<Done>,
    /// Its agent's `max_total_tokens` as the run started with it (`Some(None)`: none), once
    /// prepared: what the runs it starts read here instead of from the store.
    tree_limit: Option<Option<u64>>,
    /// The runs it started, as far as this process knows them (`Runs::started_usage`).
    started: Started,
}

/// What a run executing here knows of the runs it started (those that have it as their
/// parent run), so that counting its tree's tokens need not read them back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Started {
    /// Every run it started was started here: `open` of them have not ended yet, and those
    /// that ended spent `usage` between them.
    Here { open: usize, usage: Usage },
    /// Some may have been started, or may end, where this process does not see: it was
    /// resumed after a wait (it may have started some before, on any instance), one of them
    /// stopped to wait (it may resume anywhere), or a start's outcome is unknown.
    Unknown,
}

impl Started {
    const NONE: Self = Self::Here {
        open: 0,
        usage: Usage {
            prompt_tokens: 0,
            completion_tokens: 0,
        },
    };

    /// One more is about to be started (before it exists: nobody may count them meanwhile).
    fn starting(&mut self) {
        if let Self::Here { open, .. } = self {
            *open += 1;
        }
    }

    /// One of them stopped executing here: ended, having spent `spent`, or not ended
    /// (`None`: it waits, or its end could not be recorded).
    fn stopped(&mut self, spent: Option<Usage>) {
        *self = match (*self, spent) {
            (Self::Here { open, mut usage }, Some(spent)) if open > 0 => {
                usage.add(spent);
                Self::Here {
                    open: open - 1,
                    usage,
                }
            }
            _ => Self::Unknown,
        };
    }

    /// What they spent, when every one of them ended here.
    fn spent(self) -> Option<Usage> {
        match self {
            Self::Here { open: 0, usage } => Some(usage),
            _ => None,
        }
    }
}

struct Inner {
    store: Arc<dyn Store>,
    events: Arc<dyn EventBus>,
    /// The configured providers, the stored ones and the default model, reloaded when they
    /// change.
    models: ModelSource,
    sandbox: Arc<dyn Sandbox>,
    tools: ToolRegistry,
    config: RuntimeConfig,
    /// The capability plug-ins, asked in order to shape each run and to follow it.
    plugins: Vec<Arc<dyn MiddlewareFactory>>,
    /// Runs executing here. A std `Mutex`: never held across an `.await`.
    active: Mutex<HashMap<RunId, ActiveRun>>,
    /// Execution slots of the runs that bring no pool of their own ([`ParentLink::slots`]).
    slots: Slots,
    /// Cancelled on shutdown: every run stops and is marked `interrupted`.
    shutdown: CancellationToken,
    /// Cancelled once shutdown is over (runs stopped and recorded): streams that would
    /// otherwise never end (thread events) end then.
    closed: CancellationToken,
    /// Signals between instances: cancels, and ends of runs.
    control: Arc<dyn ControlChannel>,
    /// Ends of runs the control channel announced, for waiters on runs executing elsewhere.
    ended: broadcast::Sender<RunId>,
    /// Users whose account or tokens changed, as the control channel announced them (this
    /// instance's changes included), for whoever remembers credentials.
    accounts: broadcast::Sender<ars_domain::UserId>,
    /// Whether the control channel is being listened to.
    listening: watch::Receiver<bool>,
}

/// Ends of runs announced but not yet taken by a slow waiter; past it the waiter re-reads.
const ENDED_CAPACITY: usize = 1024;

/// How often a waiter on a run executing elsewhere reads the store when no word comes.
const FALLBACK_READ: Duration = Duration::from_secs(2);

/// A cheap `Clone` handle on the shared runtime.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

/// The parts a runtime is built from.
pub struct RuntimeParts {
    pub store: Arc<dyn Store>,
    pub events: Arc<dyn EventBus>,
    /// The configured model providers; those stored in the database are layered over them at
    /// each run start.
    pub models: Arc<ModelRegistry>,
    /// Opens the stored providers' secrets (and seals new ones, through the API).
    pub secret_key: SecretKey,
    pub sandbox: Arc<dyn Sandbox>,
    pub tools: ToolRegistry,
    pub config: RuntimeConfig,
    /// Capability plug-ins (subagents, Skills, …), in the order they shape a run.
    pub plugins: Vec<Arc<dyn MiddlewareFactory>>,
    /// How instances tell each other of cancels and ends: in process for one server, Redis
    /// pub/sub or PostgreSQL `LISTEN/NOTIFY` for several.
    pub control: Arc<dyn ControlChannel>,
}

impl Runtime {
    /// Builds the runtime and, inside a Tokio runtime, starts its lease heartbeat (and, with
    /// [`Recovery::ExpiredLeases`], the reaper) and its listener on the control channel.
    pub fn new(parts: RuntimeParts) -> Self {
        let (listening_tx, listening) = watch::channel(false);
        let runtime = Self::assemble(parts, listening);
        if tokio::runtime::Handle::try_current().is_ok() {
            lease::spawn_heartbeat(&runtime);
            control::spawn_listener(&runtime, listening_tx);
        }
        runtime
    }

    fn assemble(parts: RuntimeParts, listening: watch::Receiver<bool>) -> Self {
        let slots = Slots::new(parts.config.max_concurrent_runs);
        let models = ModelSource::new(
            (*parts.models).clone(),
            parts.config.defaults.base.model.clone(),
            Arc::clone(&parts.store),
            parts.secret_key,
        );
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                events: parts.events,
                models,
                sandbox: parts.sandbox,
                tools: parts.tools,
                config: parts.config,
                plugins: parts.plugins,
                active: Mutex::new(HashMap::new()),
                slots,
                shutdown: CancellationToken::new(),
                closed: CancellationToken::new(),
                control: parts.control,
                ended: broadcast::channel(ENDED_CAPACITY).0,
                accounts: broadcast::channel(ENDED_CAPACITY).0,
                listening,
            }),
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    pub fn events(&self) -> &Arc<dyn EventBus> {
        &self.inner.events
    }

    /// The configured model providers alone (built-in and from the server configuration).
    pub fn config_models(&self) -> &ModelRegistry {
        self.inner.models.config()
    }

    /// Where runs get their models: configured and stored providers, the default model, and
    /// the key of the stored secrets.
    pub fn model_source(&self) -> &ModelSource {
        &self.inner.models
    }

    /// The providers and default model in force now (see [`ModelSource::snapshot`]).
    pub async fn model_snapshot(&self) -> Result<Arc<ModelSnapshot>, StoreError> {
        self.inner.models.snapshot().await
    }

    /// The configured `BaseContext` and `SubAgentContext` (see [`ModelSnapshot::defaults`]
    /// for them with the default model in force).
    pub fn defaults(&self) -> &ContextDefaults {
        &self.inner.config.defaults
    }

    /// The built-in tools, for `GET /api/tools`.
    pub fn tool_infos(&self) -> Vec<ToolInfo> {
        self.inner.tools.infos()
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools.names()
    }

    /// The sandbox the tools act in, for the server's view of a thread's workdir (always
    /// through [`thread_scope`], so it sees exactly what the thread's runs see).
    pub fn sandbox(&self) -> &Arc<dyn Sandbox> {
        &self.inner.sandbox
    }

    /// What `user`'s sandbox workspace holds against its quota.
    pub async fn workspace_usage(&self, user: UserId) -> Result<WorkspaceUsage, SandboxError> {
        self.inner.sandbox.workspace_usage(user).await
    }

    /// Marks runs a previous process left active as `interrupted`, so their threads accept
    /// new runs, and tells of their ends as their writer (plug-ins following them hear it).
    /// Call once at startup, before serving.
    pub async fn recover(&self) -> Result<Vec<RunId>, StoreError> {
        let store = &self.inner.store;
        let ids = match self.inner.config.recovery {
            Recovery::AllActive => store.interrupt_active_runs().await?,
            Recovery::ExpiredLeases => store.reap_expired_runs(now_ms()).await?,
        };
        self.after_reaping(&ids).await?;
        self.sweep_plugins().await;
        Ok(ids)
    }

    /// Each plug-in's sweep (see `MiddlewareFactory::sweep`).
    async fn sweep_plugins(&self) {
        for plugin in &self.inner.plugins {
            plugin.sweep(self).await;
        }
    }

    /// Logs runs ended by recovery or the reaper and tells of their ends.
    async fn after_reaping(&self, ids: &[RunId]) -> Result<(), StoreError> {
        if !ids.is_empty() {
            tracing::warn!(
                count = ids.len(),
                "marked runs cut off by a stop (their instance's lease ran out) as interrupted"
            );
        }
        metrics::runs_reaped(ids.len());
        for id in ids {
            if let Some(run) = self.inner.store.run(*id).await? {
                self.ended_here(&run).await?;
            }
        }
        Ok(())
    }

    /// After this instance wrote the end of a run it does not execute (recovery, the reaper,
    /// a cancel nobody answered): the terminal event for its followers, its thread's followers
    /// and the plug-ins following it, and the word to waiters on every instance.
    async fn ended_here(&self, run: &Run) -> Result<(), StoreError> {
        let store = &self.inner.store;
        metrics::foreign_run_ended(run);
        if let Some(thread) = store.thread(&run.thread_id).await? {
            let published = self
                .inner
                .events
                .publish_end(
                    &run_ref(run, &thread),
                    EventKind::RunStatus {
                        status: run.status,
                        error: run.error.clone(),
                        error_code: run.error_code,
                        output: run.output.clone(),
                    },
                )
                .await;
            if let Err(e) = published {
                tracing::warn!(run_id = %run.id, error = %e, "cannot publish the end of a run");
            }
            let feed = self.feed(run, &thread);
            self.tell_changed(&feed, run).await;
            feed.ended(run).await;
        }
        self.announce_end(run.id).await;
        Ok(())
    }

    /// Creates a run (status `pending`) and commits the user's message in one store
    /// transaction (with `replace_from`, the replaced messages leave the history in it too),
    /// and executes the run in the background. Answers at once.
    pub async fn start_run(&self, start: StartRun) -> Result<Run, RuntimeError> {
        let store = &self.inner.store;
        let (cancel_with, slots) = match &start.parent {
            Some(ParentLink {
                cancel_with, slots, ..
            }) => (cancel_with.clone(), slots.clone()),
            None => (None, None),
        };
        if let Some(parent) = &start.parent
            && let Ok(mut active) = self.inner.active.lock()
            && let Some(starter) = active.get_mut(&parent.lineage.parent_run_id)
        {
            starter.started.starting();
        }
        let pool = slots.unwrap_or_else(|| self.inner.slots.clone());
        // A slot free now is taken before the run is written, so the run is written `running`:
        // one commit instead of a `pending` one and another once it starts.
        let held = pool.try_acquire();
        let new = NewRun {
            thread_id: start.thread.id.clone(),
            agent_id: start.thread.agent_id,
            user_id: start.thread.user_id,
            input: start.input.as_str().to_owned(),
            lineage: start.parent.as_ref().map(|p| p.lineage.clone()),
            lease: Some(Lease {
                owner: self.inner.config.instance_id.clone(),
                expires_ms: now_ms() + lease::ttl_ms(&self.inner.config),
            }),
            woken_by: start.woken_by,
            new_thread: start
                .parent
                .as_ref()
                .is_some_and(|p| p.new_thread)
                .then(|| start.thread.clone()),
            running: held.is_some(),
        };
        let created = store.create_run_with_input(&new, start.replace_from).await;
        if let (Err(_), Some(parent)) = (&created, &start.parent) {
            // Whether it was written is not known: the starter's runs are read from now on.
            self.started_stopped(parent.lineage.parent_run_id, None);
        }
        let created = match created {
            Err(StoreError::Busy { active }) => return Err(RuntimeError::Busy { active }),
            other => other?,
        };
        let run = created.run;
        // Messages take seqs from 1: an input at 1 is all its thread holds.
        let history = (created.input.seq == 1).then(|| vec![created.input]);
        metrics::run_started();
        let cancel = match cancel_with {
            Some(starter) => starter.child_token(),
            None => self.inner.shutdown.child_token(),
        };
        let slot = Slot { pool, held };
        let begin = execute::Begin::New { history };
        self.launch(run.clone(), start.thread, start.caller, cancel, slot, begin)
            .await;
        Ok(run)
    }

    /// Executes a run in the background (a new one, or one taken to resume after a wait): its
    /// first status event (`pending`, or `running` for one created with its slot) and feed, its
    /// place among the runs executing here, its task.
    async fn launch(
        &self,
        run: Run,
        thread: Thread,
        caller: ars_domain::Caller,
        cancel: CancellationToken,
        slot: Slot,
        begin: execute::Begin,
    ) {
        let feed = self.feed(&run, &thread);
        let emitter = Emitter {
            bus: Arc::clone(&self.inner.events),
            run: run_ref(&run, &thread),
            middleware: Vec::new(),
            feed: Arc::clone(&feed),
        };
        emitter
            .emit(EventKind::RunStatus {
                status: run.status,
                error: None,
                error_code: None,
                output: None,
            })
            .await;
        self.tell_changed(&feed, &run).await;
        let (done_tx, done_rx) = watch::channel(Done::Executing);
        let mine = done_rx.clone();
        if let Ok(mut active) = self.inner.active.lock() {
            active.insert(
                run.id,
                ActiveRun {
                    cancel: cancel.clone(),
                    done: done_rx,
                    tree_limit: None,
                    started: match begin {
                        execute::Begin::Resume(_) => Started::Unknown,
                        execute::Begin::New { .. } => Started::NONE,
                    },
                },
            );
        }
        let runtime = self.clone();
        let span = crate::spans::run(&run);
        let id = run.id;
        let starter = run.lineage.as_ref().map(|l| l.parent_run_id);
        // Boxed: the task holds a pointer to what the run needs, not a copy of it per step.
        let execution = Box::new(execute::Execution {
            run,
            thread,
            caller,
            cancel,
            slot,
            begin,
            emitter,
        });
        tokio::spawn(
            async move {
                let ended = runtime.execute(execution).await;
                // Its starter counts what it spent before anyone waiting on it hears it ended.
                if let Some(starter) = starter {
                    let spent = ended
                        .as_ref()
                        .filter(|run| run.status.is_terminal())
                        .map(|run| run.usage);
                    runtime.started_stopped(starter, spent);
                }
                // Only this execution's entry: a run that waited may already be executing
                // again here, resumed by a decision, under an entry of its own.
                if let Ok(mut active) = runtime.inner.active.lock()
                    && active.get(&id).is_some_and(|a| a.done.same_channel(&mine))
                {
                    active.remove(&id);
                }
                let _ = done_tx.send(Done::Over(ended.map(Arc::new)));
            }
            .instrument(span),
        );
    }

    /// Cancels a run and answers it once terminal (or as it stands after a few seconds).
    /// A run executing elsewhere is cancelled by its instance, asked over the control channel;
    /// if that instance does not end it within [`control::CANCEL_ANSWER`] (it died, or cannot
    /// hear), the run is cancelled in the store here, and an executor still alive stops at its
    /// next heartbeat.
    pub async fn cancel(&self, run_id: RunId) -> Result<Run, RuntimeError> {
        let local = self
            .inner
            .active
            .lock()
            .ok()
            .and_then(|a| a.get(&run_id).map(|r| (r.cancel.clone(), r.done.clone())));
        if let Some((token, mut done)) = local {
            token.cancel();
            let ended = tokio::time::timeout(Duration::from_secs(5), done.wait_for(Done::is_over))
                .await
                .ok()
                .and_then(|over| over.ok().and_then(|over| over.ended()));
            // Its task hands over the run as its end was written; otherwise it is read.
            let run = match ended {
                Some(run) => run,
                None => self.stored_run(run_id).await?,
            };
            // Its task may have started waiting just before the cancel reached it.
            if run.status != RunStatus::Waiting {
                return Ok(run);
            }
        }
        let run = self.stored_run(run_id).await?;
        if run.status.is_terminal() {
            return Ok(run);
        }
        // A waiting run is executed nowhere: its end is written here.
        if run.status != RunStatus::Waiting {
            self.cancel_elsewhere(run_id).await?;
        }
        let run = self.stored_run(run_id).await?;
        if run.status.is_terminal() {
            return Ok(run);
        }
        let outcome = RunOutcome::Cancelled { usage: run.usage };
        if let FinishedRun::Ended(ended) = self.inner.store.finish_run(run_id, &outcome).await? {
            tracing::info!(run_id = %run_id, "cancelled in the store: no instance executes it");
            self.ended_here(&ended).await?;
        }
        self.stored_run(run_id).await
    }

    /// Asks the instance executing a run to cancel it, and waits a little for its end.
    async fn cancel_elsewhere(&self, run_id: RunId) -> Result<(), RuntimeError> {
        match self.inner.control.send(Signal::Cancel { run_id }).await {
            Ok(()) => {
                self.await_end(run_id, control::CANCEL_ANSWER, false)
                    .await?;
            }
            Err(e) => {
                tracing::warn!(run_id = %run_id, error = %e, "cannot send a cancel to the run's instance");
            }
        }
        Ok(())
    }

    async fn stored_run(&self, run_id: RunId) -> Result<Run, RuntimeError> {
        self.inner
            .store
            .run(run_id)
            .await?
            .ok_or(RuntimeError::NotFound(ars_domain::Subject::Run))
    }

    /// Waits until the run is terminal or `timeout` passes (at most the configured
    /// `max_wait`).
    pub async fn wait(&self, run_id: RunId, timeout: Duration) -> Result<Waited, RuntimeError> {
        self.await_end(run_id, timeout.min(self.inner.config.max_wait), false)
            .await
    }

    /// As [`Runtime::wait`], but answers as soon as the run waits for a decision too
    /// (`Waited::StillRunning` with the run `waiting`): a client waiting on a run learns at
    /// once that the run now waits on it.
    pub async fn wait_for_turn(
        &self,
        run_id: RunId,
        timeout: Duration,
    ) -> Result<Waited, RuntimeError> {
        self.await_end(run_id, timeout.min(self.inner.config.max_wait), true)
            .await
    }

    /// Waits for the end of a run: executing here, for its task; executing elsewhere, for the
    /// bus's terminal event or the control channel's word that it ended, whichever comes
    /// first — with a store read every [`FALLBACK_READ`] in case neither can tell (the bus
    /// holds no record of the run and a signal was missed).
    async fn await_end(
        &self,
        run_id: RunId,
        timeout: Duration,
        or_waiting: bool,
    ) -> Result<Waited, RuntimeError> {
        let deadline = tokio::time::Instant::now() + timeout;
        // Subscribed before the store is read, so an end announced in between is not missed.
        let mut ended = self.inner.ended.subscribe();
        let local = self
            .inner
            .active
            .lock()
            .ok()
            .and_then(|a| a.get(&run_id).map(|r| r.done.clone()));
        if let Some(mut done) = local
            && let Ok(Ok(over)) =
                tokio::time::timeout_at(deadline, done.wait_for(Done::is_over)).await
            && let Some(run) = over.ended()
        {
            // Its executor wrote (or read) its end: no need to read it again.
            return Ok(Waited::Finished(run));
        }
        let bus = Arc::clone(&self.inner.events);
        let on_bus = async move { bus.until_terminal(run_id).await };
        tokio::pin!(on_bus);
        let (mut bus_open, mut signals_open) = (true, true);
        loop {
            let run = self.stored_run(run_id).await?;
            if run.status.is_terminal() {
                return Ok(Waited::Finished(run));
            }
            if (or_waiting && run.status == RunStatus::Waiting)
                || tokio::time::Instant::now() >= deadline
            {
                return Ok(Waited::StillRunning(run));
            }
            tokio::select! {
                followed = &mut on_bus, if bus_open => {
                    bus_open = false;
                    if let Err(e) = followed {
                        tracing::debug!(run_id = %run_id, error = %e, "the bus cannot follow the run; waiting for a signal");
                    }
                }
                open = end_of(&mut ended, run_id), if signals_open => signals_open = open,
                () = tokio::time::sleep(FALLBACK_READ) => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
        }
    }

    /// A run's tokens plus those spent on its behalf outside it, as the plug-ins count them
    /// (the runs it started, say).
    pub async fn total_usage(&self, run: &Run) -> Result<Usage, StoreError> {
        let mut total = run.usage;
        for plugin in &self.inner.plugins {
            total.add(plugin.usage_beyond(run, self).await?);
        }
        Ok(total)
    }

    /// Whether this process is executing the run.
    pub fn is_local(&self, run_id: RunId) -> bool {
        self.inner
            .active
            .lock()
            .map(|a| a.contains_key(&run_id))
            .unwrap_or(false)
    }

    /// Stops every run (they end `interrupted`) and waits up to `grace` for them to record it.
    pub async fn shutdown(&self, grace: Duration) {
        self.inner.shutdown.cancel();
        let pending: Vec<watch::Receiver<Done>> = self
            .inner
            .active
            .lock()
            .map(|a| a.values().map(|r| r.done.clone()).collect())
            .unwrap_or_default();
        let all = futures::future::join_all(pending.into_iter().map(|mut d| async move {
            let _ = d.wait_for(Done::is_over).await;
        }));
        let _ = tokio::time::timeout(grace, all).await;
        self.inner.closed.cancel();
    }

    /// Resolves once [`Runtime::shutdown`] is over: streams that never end by themselves
    /// (thread events) end then, after the runs' ends were told.
    pub fn closed(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.inner.closed.clone().cancelled_owned()
    }

    /// The feed of a run: what it tells the followers of its thread and the plug-ins that
    /// follow it.
    fn feed(&self, run: &Run, thread: &Thread) -> Arc<Feed> {
        let observers = self
            .inner
            .plugins
            .iter()
            .filter_map(|p| p.observe(run, thread, self))
            .collect();
        Feed::new(Arc::clone(&self.inner.events), thread.id.clone(), observers)
    }

    /// One of the runs `starter` started stopped executing here: ended, having spent `spent`
    /// (`None`: not ended, or not known to have been started at all).
    fn started_stopped(&self, starter: RunId, spent: Option<Usage>) {
        if let Ok(mut active) = self.inner.active.lock()
            && let Some(entry) = active.get_mut(&starter)
        {
            entry.started.stopped(spent);
        }
    }

    /// Tells `feed` that its run's row changed; an ended run's thread hears its total tokens.
    async fn tell_changed(&self, feed: &Feed, run: &Run) {
        let total = if run.status.is_terminal() {
            self.total_usage(run).await.unwrap_or_else(|e| {
                tracing::warn!(run_id = %run.id, error = %e, "cannot count a run's total usage");
                run.usage
            })
        } else {
            run.usage
        };
        feed.changed(run, total).await;
    }
}

#[async_trait]
impl Runs for Runtime {
    async fn start_run(&self, start: StartRun) -> Result<Run, RuntimeError> {
        Runtime::start_run(self, start).await
    }

    async fn wait(&self, run_id: RunId, timeout: Duration) -> Result<Waited, RuntimeError> {
        Runtime::wait(self, run_id, timeout).await
    }

    async fn cancel(&self, run_id: RunId) -> Result<Run, RuntimeError> {
        Runtime::cancel(self, run_id).await
    }

    async fn cannot_run(&self, agent: &Agent) -> Option<String> {
        Runtime::cannot_run(self, agent).await
    }

    async fn steer(&self, run_id: RunId, input: RunInput) -> Result<Message, RuntimeError> {
        Runtime::steer(self, run_id, input).await
    }

    async fn context_of(&self, agent: &Agent) -> Result<ResolvedContext, StoreError> {
        let models = self.inner.models.snapshot().await?;
        Ok(models
            .defaults(&self.inner.config.defaults)
            .resolve(agent.backend_id, &agent.config_json.context))
    }

    fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    fn events(&self) -> &Arc<dyn EventBus> {
        &self.inner.events
    }

    fn models(&self) -> &ModelSource {
        &self.inner.models
    }

    fn max_concurrent_runs(&self) -> usize {
        self.inner.config.max_concurrent_runs
    }

    fn started_usage(&self, run_id: RunId) -> Option<Usage> {
        self.inner
            .active
            .lock()
            .ok()
            .and_then(|a| a.get(&run_id).and_then(|r| r.started.spent()))
    }

    fn handle(&self) -> Arc<dyn Runs> {
        Arc::new(self.clone())
    }
}

/// Resolves when `run_id`'s end is announced, or when announcements were missed (so the
/// caller reads the store); `false` if no more will come.
async fn end_of(ended: &mut broadcast::Receiver<RunId>, run_id: RunId) -> bool {
    loop {
        match ended.recv().await {
            Ok(id) if id != run_id => {}
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => return true,
            Err(broadcast::error::RecvError::Closed) => return false,
        }
    }
}

/// The sandbox scope a thread's tools run in: its owner's workspace, and the runtime scope and
/// workdir the thread stores. A child thread stores its root's (`Thread::new_child`), so a
/// parent, its subagents and anything else that goes through here see one workdir (SPEC §6).
pub fn thread_scope(thread: &Thread) -> Result<Scope, SandboxError> {
    Scope::new(
        thread.user_id,
        thread.runtime_scope_id.clone(),
        thread.workdir_path.clone(),
    )
}

/// The event identity of a run: its ids, and for a run another run started, its lineage.
pub fn run_ref(run: &Run, thread: &Thread) -> RunRef {
    RunRef {
        run_id: run.id,
        thread_id: thread.id.clone(),
        parent: Lineage::of(run, thread).map(|lineage| ParentRef {
            parent_run_id: lineage.parent_run_id(),
            parent_tool_call_id: lineage.run.parent_tool_call_id.clone(),
            parent_thread_id: lineage.parent_thread_id().clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(prompt_tokens: u64) -> Option<Usage> {
        Some(Usage {
            prompt_tokens,
            completion_tokens: 1,
        })
    }

    #[test]
    fn a_runs_started_runs_are_known_only_while_every_one_ended_here() {
        let mut started = Started::NONE;
        assert_eq!(started.spent(), Some(Usage::default()), "none started");
        started.starting();
        started.starting();
        assert_eq!(started.spent(), None, "two still open");
        started.stopped(spent(10));
        assert_eq!(started.spent(), None, "one still open");
        started.stopped(spent(20));
        assert_eq!(
            started.spent(),
            spent(30).map(|mut u| {
                u.completion_tokens = 2;
                u
            })
        );

        // One that stopped without an end (it waits: it may resume anywhere) makes them
        // unknown for good.
        started.starting();
        started.stopped(None);
        assert_eq!(started, Started::Unknown);
        started.starting();
        started.stopped(spent(5));
        assert_eq!(started.spent(), None, "unknown stays unknown");

        // One more stopped than started: unknown.
        let mut started = Started::NONE;
        started.stopped(spent(5));
        assert_eq!(started, Started::Unknown);
    }
}
