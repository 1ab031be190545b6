//! The runtime: starts runs as background tasks, cancels them, waits for them, and recovers
//! after a restart. A subagent run is the same [`Runtime::start_run`] on a child thread.
//!
//! **Invariant:** at most one active run per thread — the store refuses a second one, so this
//! holds across instances too. A run's terminal status is written once (first writer wins).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;

use ars_domain::{
    Agent, Caller, ContextDefaults, MessageRole, ModelConfig, NewMessage, NewRun, Run, RunId,
    RunOutcome, RunStatus, Thread, Usage, UserId,
};
use ars_events::{EventBus, EventKind, ParentRef, RunRef};
use ars_models::ModelRegistry;
use ars_sandbox::{Sandbox, SandboxError, Scope, WorkspaceUsage};
use ars_store::{Store, StoreError};

use crate::agent_loop::{Emitter, LoopEnd, LoopSpec, run_loop};
use crate::middleware::{MiddlewareFactory, RunSetup};
use crate::tool::{ToolContext, ToolInfo, ToolRegistry};

/// Runtime settings.
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// `BaseContext` and `SubAgentContext`.
    pub defaults: ContextDefaults,
    /// Runs executing at once (top-level runs and subagent runs each); more wait, `pending`,
    /// for a slot.
    pub max_concurrent_runs: usize,
    /// Longest a caller may block in [`Runtime::wait`].
    pub max_wait: Duration,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            defaults: ContextDefaults::default(),
            max_concurrent_runs: 256,
            max_wait: Duration::from_secs(600),
        }
    }
}

/// Why a run could not be started or found.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The thread already has an active run; nothing was queued.
    #[error("the thread already has an active run ({active})")]
    Busy { active: RunId },
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A run to start.
pub struct StartRun {
    pub thread: Thread,
    pub caller: Caller,
    /// The user's message.
    pub input: String,
    /// Set for subagent runs.
    pub parent: Option<ParentLink>,
}

/// Which tool call of which run started a child run.
#[derive(Clone, Debug)]
pub struct ParentLink {
    pub run_id: RunId,
    pub tool_call_id: Option<String>,
    /// Set for synchronous children: cancelling (or ending) the parent run cancels the child.
    /// Background children leave it `None` and outlive the parent's run.
    pub cancel_with: Option<CancellationToken>,
}

/// A run executing in this process.
struct ActiveRun {
    cancel: CancellationToken,
    done: watch::Receiver<bool>,
}

struct Inner {
    store: Arc<dyn Store>,
    events: Arc<dyn EventBus>,
    models: Arc<ModelRegistry>,
    sandbox: Arc<dyn Sandbox>,
    tools: ToolRegistry,
    config: RuntimeConfig,
    middleware: Vec<Arc<dyn MiddlewareFactory>>,
    /// Runs executing here. A std `Mutex`: never held across an `.await`.
    active: Mutex<HashMap<RunId, ActiveRun>>,
    /// Execution slots of top-level runs.
    slots: Arc<Semaphore>,
    /// Execution slots of subagent runs, apart from `slots`: a parent waiting in `task` holds
    /// its slot, so children drawing from the same pool could starve behind their parents.
    /// Subagents never nest, so two pools cannot deadlock.
    child_slots: Arc<Semaphore>,
    /// Cancelled on shutdown: every run stops and is marked `interrupted`.
    shutdown: CancellationToken,
}

/// A cheap `Clone` handle on the shared runtime.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

/// The parts a runtime is built from.
pub struct RuntimeParts {
    pub store: Arc<dyn Store>,
    pub events: Arc<dyn EventBus>,
    pub models: Arc<ModelRegistry>,
    pub sandbox: Arc<dyn Sandbox>,
    pub tools: ToolRegistry,
    pub config: RuntimeConfig,
}

impl Runtime {
    pub fn new(parts: RuntimeParts) -> Self {
        let slots = Arc::new(Semaphore::new(parts.config.max_concurrent_runs.max(1)));
        let child_slots = Arc::new(Semaphore::new(parts.config.max_concurrent_runs.max(1)));
        Self {
            inner: Arc::new(Inner {
                store: parts.store,
                events: parts.events,
                models: parts.models,
                sandbox: parts.sandbox,
                tools: parts.tools,
                config: parts.config,
                // Subagents are part of every runtime: the factory mounts the task tools only
                // on normal agents whose allow-list is non-empty.
                middleware: vec![Arc::new(crate::subagents::SubagentMiddlewareFactory)],
                active: Mutex::new(HashMap::new()),
                slots,
                child_slots,
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// Registers a middleware factory; call before the first run (needs the only handle).
    pub fn with_middleware(mut self, factory: Arc<dyn MiddlewareFactory>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.middleware.push(factory);
        } else {
            tracing::error!("middleware must be registered before the runtime is shared");
        }
        self
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    pub fn events(&self) -> &Arc<dyn EventBus> {
        &self.inner.events
    }

    pub fn models(&self) -> &ModelRegistry {
        &self.inner.models
    }

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

    /// What `user`'s sandbox workspace holds against its quota.
    pub async fn workspace_usage(&self, user: UserId) -> Result<WorkspaceUsage, SandboxError> {
        self.inner.sandbox.workspace_usage(user).await
    }

    /// Marks runs a previous process left active as `interrupted`, so their threads accept
    /// new runs. Call once at startup, before serving.
    pub async fn recover(&self) -> Result<Vec<RunId>, StoreError> {
        let ids = self.inner.store.interrupt_active_runs().await?;
        if !ids.is_empty() {
            tracing::warn!(
                count = ids.len(),
                "marked runs cut off by the last stop as interrupted"
            );
        }
        Ok(ids)
    }

    /// Creates a run (status `pending`), commits the user's message, and executes the run in
    /// the background. Answers at once.
    pub async fn start_run(&self, start: StartRun) -> Result<Run, RuntimeError> {
        let store = &self.inner.store;
        let new = NewRun {
            thread_id: start.thread.id.clone(),
            agent_id: start.thread.agent_id,
            user_id: start.thread.user_id,
            input: start.input.clone(),
            parent_run_id: start.parent.as_ref().map(|p| p.run_id),
            parent_tool_call_id: start.parent.as_ref().and_then(|p| p.tool_call_id.clone()),
        };
        let run = match store.create_run(&new).await {
            Err(StoreError::Busy { active }) => return Err(RuntimeError::Busy { active }),
            other => other?,
        };
        let message = NewMessage::text(
            start.thread.id.clone(),
            Some(run.id),
            MessageRole::User,
            start.input,
        );
        if let Err(e) = store.append_message(&message).await {
            let outcome = failed(format!("cannot save the input: {e}"), Usage::default());
            store.finish_run(run.id, &outcome).await?;
            return Err(e.into());
        }
        let run_ref = run_ref(&run, &start.thread);
        let emitter = Emitter {
            bus: Arc::clone(&self.inner.events),
            run: run_ref,
            middleware: Vec::new(),
        };
        emitter
            .emit(EventKind::RunStatus {
                status: RunStatus::Pending,
                error: None,
                output: None,
            })
            .await;

        let cancel = match start.parent.as_ref().and_then(|p| p.cancel_with.as_ref()) {
            Some(parent) => parent.child_token(),
            None => self.inner.shutdown.child_token(),
        };
        let (done_tx, done_rx) = watch::channel(false);
        if let Ok(mut active) = self.inner.active.lock() {
            active.insert(
                run.id,
                ActiveRun {
                    cancel: cancel.clone(),
                    done: done_rx,
                },
            );
        }
        let runtime = self.clone();
        let spawned = run.clone();
        tokio::spawn(async move {
            runtime
                .execute(spawned.clone(), start.thread, start.caller, emitter, cancel)
                .await;
            if let Ok(mut active) = runtime.inner.active.lock() {
                active.remove(&spawned.id);
            }
            let _ = done_tx.send(true);
        });
        Ok(run)
    }

    /// The background part of a run: wait for a slot, build, loop, record the outcome.
    async fn execute(
        &self,
        run: Run,
        thread: Thread,
        caller: Caller,
        mut emitter: Emitter,
        cancel: CancellationToken,
    ) {
        let store = Arc::clone(&self.inner.store);
        let pool = if run.parent_run_id.is_some() {
            &self.inner.child_slots
        } else {
            &self.inner.slots
        };
        let permit = tokio::select! {
            permit = Arc::clone(pool).acquire_owned() => permit.ok(),
            () = cancel.cancelled() => None,
        };
        let usage = Arc::new(Mutex::new(Usage::default()));
        let outcome = match permit {
            None => self.cancelled_outcome(Usage::default()),
            Some(_permit) => {
                let _ = store.mark_run_running(run.id).await;
                emitter
                    .emit(EventKind::RunStatus {
                        status: RunStatus::Running,
                        error: None,
                        output: None,
                    })
                    .await;
                match self
                    .build(&run, &thread, &caller, &mut emitter, &cancel, &usage)
                    .await
                {
                    Err(message) => failed(message, Usage::default()),
                    Ok(spec) => {
                        let timeout = Duration::from_secs(spec.limits.timeout_s);
                        let ending = tokio::select! {
                            end = run_loop(&spec) => Ending::Loop(end),
                            () = cancel.cancelled() => Ending::Cancelled,
                            () = tokio::time::sleep(timeout) => Ending::TimedOut,
                        };
                        // Whatever ended the loop, synchronous children end with it.
                        cancel.cancel();
                        let used = usage.lock().map(|u| *u).unwrap_or_default();
                        match ending {
                            Ending::Loop(LoopEnd::Answer(text)) => RunOutcome {
                                status: RunStatus::Success,
                                output: Some(text),
                                error: None,
                                usage: used,
                            },
                            Ending::Loop(LoopEnd::Failed(message)) => failed(message, used),
                            Ending::TimedOut => RunOutcome {
                                status: RunStatus::Timeout,
                                output: None,
                                error: Some(format!(
                                    "the run hit its time limit of {} s",
                                    spec.limits.timeout_s
                                )),
                                usage: used,
                            },
                            Ending::Cancelled => self.cancelled_outcome(used),
                        }
                    }
                }
            }
        };
        let finished = match store.finish_run(run.id, &outcome).await {
            Ok(run) => run,
            Err(e) => {
                tracing::error!(run_id = %run.id, error = %e, "cannot record the end of a run");
                return;
            }
        };
        emitter
            .emit(EventKind::RunStatus {
                status: finished.status,
                error: finished.error.clone(),
                output: finished.output.clone(),
            })
            .await;
    }

    /// Cancellation caused by shutdown is an interruption, not a user's cancel.
    fn cancelled_outcome(&self, usage: Usage) -> RunOutcome {
        if self.inner.shutdown.is_cancelled() {
            RunOutcome {
                status: RunStatus::Interrupted,
                output: None,
                error: Some("the server stopped while this run was active".into()),
                usage,
            }
        } else {
            RunOutcome {
                status: RunStatus::Cancelled,
                output: None,
                error: Some("cancelled".into()),
                usage,
            }
        }
    }

    /// Resolves the agent's context and assembles model, tools, prompt and middleware.
    async fn build(
        &self,
        run: &Run,
        thread: &Thread,
        caller: &Caller,
        emitter: &mut Emitter,
        cancel: &CancellationToken,
        usage: &Arc<Mutex<Usage>>,
    ) -> Result<LoopSpec, String> {
        let store = &self.inner.store;
        let agent: Agent = store
            .agent(thread.agent_id)
            .await
            .map_err(|e| format!("cannot load the agent: {e}"))?
            .filter(|a| caller.can_view(a))
            .ok_or("the thread's agent no longer exists or is no longer shared with you")?;
        let context = self
            .inner
            .config
            .defaults
            .resolve(agent.backend_id, &agent.config_json.context);
        let model_config: &ModelConfig = context.model.as_ref().ok_or(
            "no model configured: set config_json.context.model on the agent or ARS_DEFAULT_MODEL on the server",
        )?;
        let model = self
            .inner
            .models
            .model_for(model_config)
            .map_err(|e| e.to_string())?;

        let mut tools = Vec::new();
        for name in &context.tools {
            match self.inner.tools.get(name) {
                Some(tool) => tools.push(tool),
                None => {
                    tracing::warn!(agent = %agent.slug, tool = %name, "agent names an unknown tool; skipped")
                }
            }
        }
        let mut system_prompt = context.system_prompt.clone();
        let setup = RunSetup {
            runtime: self,
            caller,
            run,
            thread,
            agent: &agent,
            context: &context,
        };
        for factory in &self.inner.middleware {
            if let Some(m) = factory.build(&setup).await {
                m.tools(&mut tools);
                m.system_prompt(&mut system_prompt);
                emitter.middleware.push(m);
            }
        }

        let scope = Scope::new(
            thread.user_id,
            thread.runtime_scope_id.clone(),
            thread.workdir_path.clone(),
        )
        .map_err(|e| e.to_string())?;
        self.inner
            .sandbox
            .prepare(&scope)
            .await
            .map_err(|e| format!("cannot prepare the workdir: {e}"))?;
        Ok(LoopSpec {
            store: Arc::clone(store),
            emitter: emitter.clone(),
            model,
            system_prompt,
            tools,
            limits: context.limits.clone(),
            tool_ctx: ToolContext {
                user_id: thread.user_id,
                thread_id: thread.id.clone(),
                run_id: run.id,
                call_id: String::new(),
                scope,
                sandbox: Arc::clone(&self.inner.sandbox),
                cancel: cancel.clone(),
                allow_network: context.network,
            },
            usage: Arc::clone(usage),
        })
    }

    /// Cancels a run and answers it once terminal (or as it stands after a few seconds).
    /// A run no process is executing (left over, or on another instance without a shared
    /// bus) is cancelled in the store directly.
    pub async fn cancel(&self, run_id: RunId) -> Result<Run, RuntimeError> {
        let local = self
            .inner
            .active
            .lock()
            .ok()
            .and_then(|a| a.get(&run_id).map(|r| (r.cancel.clone(), r.done.clone())));
        match local {
            Some((token, mut done)) => {
                token.cancel();
                let _ = tokio::time::timeout(Duration::from_secs(5), done.wait_for(|d| *d)).await;
            }
            None => {
                let run = self
                    .inner
                    .store
                    .run(run_id)
                    .await?
                    .ok_or(RuntimeError::NotFound("run"))?;
                if !run.status.is_terminal() {
                    let outcome = RunOutcome {
                        status: RunStatus::Cancelled,
                        output: None,
                        error: Some("cancelled".into()),
                        usage: run.usage,
                    };
                    self.inner.store.finish_run(run_id, &outcome).await?;
                }
            }
        }
        self.inner
            .store
            .run(run_id)
            .await?
            .ok_or(RuntimeError::NotFound("run"))
    }

    /// Waits until the run is terminal or `timeout` passes; answers the run and whether the
    /// wait timed out.
    pub async fn wait(
        &self,
        run_id: RunId,
        timeout: Duration,
    ) -> Result<(Run, bool), RuntimeError> {
        let timeout = timeout.min(self.inner.config.max_wait);
        let deadline = tokio::time::Instant::now() + timeout;
        let local = self
            .inner
            .active
            .lock()
            .ok()
            .and_then(|a| a.get(&run_id).map(|r| r.done.clone()));
        if let Some(mut done) = local {
            let _ = tokio::time::timeout_at(deadline, done.wait_for(|d| *d)).await;
        }
        loop {
            let run = self
                .inner
                .store
                .run(run_id)
                .await?
                .ok_or(RuntimeError::NotFound("run"))?;
            if run.status.is_terminal() {
                return Ok((run, false));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok((run, true));
            }
            // Not executing here (another instance): poll the store.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A run's tokens plus those of every child run it started (subagents do not nest, so one
    /// level is all there is).
    pub async fn total_usage(&self, run: &Run) -> Result<Usage, StoreError> {
        let mut total = run.usage;
        for child in self.inner.store.child_runs(run.id).await? {
            total.add(child.usage);
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
        let pending: Vec<watch::Receiver<bool>> = self
            .inner
            .active
            .lock()
            .map(|a| a.values().map(|r| r.done.clone()).collect())
            .unwrap_or_default();
        let all = futures::future::join_all(pending.into_iter().map(|mut d| async move {
            let _ = d.wait_for(|x| *x).await;
        }));
        let _ = tokio::time::timeout(grace, all).await;
    }
}

/// What stopped the loop future.
enum Ending {
    Loop(LoopEnd),
    Cancelled,
    TimedOut,
}

fn failed(message: String, usage: Usage) -> RunOutcome {
    RunOutcome {
        status: RunStatus::Error,
        output: None,
        error: Some(message),
        usage,
    }
}

/// The event identity of a run: its ids, and its parent's for subagent runs.
pub fn run_ref(run: &Run, thread: &Thread) -> RunRef {
    RunRef {
        run_id: run.id,
        thread_id: thread.id.clone(),
        parent: match (run.parent_run_id, &thread.parent_thread_id) {
            (Some(parent_run_id), Some(parent_thread_id)) => Some(ParentRef {
                parent_run_id,
                parent_tool_call_id: run.parent_tool_call_id.clone(),
                parent_thread_id: parent_thread_id.clone(),
            }),
            _ => None,
        },
    }
}
