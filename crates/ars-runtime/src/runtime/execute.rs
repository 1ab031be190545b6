//! One run, from its slot to its recorded end: wait for an execution slot, prepare the run
//! (agent, resolved context, model, tools, plug-ins, sandbox scope), drive the loop under
//! cancellation and the wall-clock limit, and write the outcome once — or, when a turn needs
//! people's decisions, write that the run waits, and end the task there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use ars_domain::{
    Agent, Caller, Message, ModelConfig, Resolution, ResolvedContext, Run, RunErrorCode,
    RunFailure, RunOutcome, RunStatus, Thread, Usage, Waiting,
};
use ars_events::EventKind;
use ars_models::ChatModel;
use ars_store::{AnsweredRun, FinishedRun};

use super::Runtime;
use crate::agent_loop::{Answer, LoopEnd, LoopSpec, Progress, TreeBudget, UsageBeyond, run_loop};
use crate::emitter::Emitter;
use crate::metrics::{self, InGauge};
use crate::plugin::RunSetup;
use crate::runs::Slot;
use crate::tool::{RunSandbox, ToolContext};

/// What stopped the loop future.
enum Ending {
    Loop(LoopEnd),
    Cancelled,
    TimedOut,
}

/// Where driving a run left it.
enum Driven {
    Ended(RunOutcome),
    /// Its end is written already (with its final answer), as `FinishedRun` says.
    Written(Box<FinishedRun>, RunOutcome),
    /// It waits for decisions on `Waiting`, having spent `Usage` so far.
    Waits(Waiting, Usage),
}

/// What a run's preparation reads.
struct Prepared<'a> {
    run: &'a Run,
    thread: &'a Thread,
    caller: &'a Caller,
    cancel: &'a CancellationToken,
    usage: &'a Arc<Mutex<Usage>>,
}

/// How a run's task begins.
pub(super) enum Begin {
    /// A new run. `history`: its thread's messages when they are known without reading them —
    /// its input alone, when that is the thread's first message (a new chat, a subagent's new
    /// thread).
    New { history: Option<Vec<Message>> },
    /// Resuming after a wait, with the decision on each call it waited on.
    Resume(HashMap<String, Resolution>),
}

/// One execution of a run: the run, its thread, who it runs for, what cancels it, its slot (or
/// the pool it takes one from), how it begins, and what publishes its events.
pub(super) struct Execution {
    pub run: Run,
    pub thread: Thread,
    pub caller: Caller,
    pub cancel: CancellationToken,
    pub slot: Slot,
    pub begin: Begin,
    pub emitter: Emitter,
}

impl Runtime {
    /// The background part of a run: wait for a slot (unless it holds one already: it was
    /// created `running`), prepare, loop, record the outcome. Runs inside the run's span
    /// (`spans::run`), which it completes.
    ///
    /// A run's task lives as long as the run, most of it waiting inside the loop (on its
    /// model, or on the children it delegated to); thousands wait at once. So the steps
    /// before and after the loop are boxed futures of their own: the task holds only what
    /// the loop's wait needs, not the largest state of every step.
    ///
    /// Answers the run as it ended, or `None` when it stopped to wait for decisions (or its
    /// end could not be recorded).
    pub(super) async fn execute(&self, mut execution: Box<Execution>) -> Option<Run> {
        let Execution {
            run,
            thread,
            caller,
            cancel,
            slot,
            begin,
            emitter,
        } = &mut *execution;
        // A run created `running` holds its slot; a `pending` one waits for one.
        let started = slot.held.is_some();
        let permit = match slot.held.take() {
            Some(permit) => Some(permit),
            None => {
                let _pending = InGauge::enter(metrics::RUNS_PENDING);
                tokio::select! {
                    permit = slot.pool.acquire() => permit,
                    () = cancel.cancelled() => None,
                }
            }
        };
        let driven = match permit {
            None => Driven::Ended(self.cancelled_outcome(run.usage)),
            Some(_permit) => {
                let _active = InGauge::enter(metrics::RUNS_ACTIVE);
                // A resumed run counts on from what it spent before it waited.
                let usage = Arc::new(Mutex::new(run.usage));
                let setup = Prepared {
                    run,
                    thread,
                    caller,
                    cancel,
                    usage: &usage,
                };
                let begin = std::mem::replace(begin, Begin::New { history: None });
                match Box::pin(self.start(setup, started, emitter, begin)).await {
                    Err(failure) => Driven::Ended(RunOutcome::failed(failure, run.usage)),
                    Ok(spec) => self.drive(&spec, cancel, &usage).await,
                }
            }
        };
        Box::pin(self.end(run, thread, driven, emitter)).await
    }

    /// Marks the run running (unless it was `started`: created running) and prepares its loop
    /// (boxed, held while the loop runs).
    async fn start(
        &self,
        setup: Prepared<'_>,
        started: bool,
        emitter: &mut Emitter,
        begin: Begin,
    ) -> Result<Box<LoopSpec>, RunFailure> {
        // A run created running told so as it was launched.
        if !started {
            if let Ok(running) = self.inner.store.mark_run_running(setup.run.id).await {
                self.tell_changed(&emitter.feed, &running).await;
            }
            emitter.emit(EventKind::status(RunStatus::Running)).await;
        }
        self.prepare(setup, emitter, begin).await.map(Box::new)
    }

    /// Records where driving the run left it: its end (once, by whoever writes it), or that it
    /// waits for decisions.
    async fn end(
        &self,
        run: &Run,
        thread: &Thread,
        driven: Driven,
        emitter: &Emitter,
    ) -> Option<Run> {
        let store = &self.inner.store;
        let outcome = match driven {
            Driven::Ended(outcome) => outcome,
            Driven::Written(finished, outcome) => {
                return self.ended(run, *finished, &outcome, emitter).await;
            }
            Driven::Waits(waiting, usage) => {
                match store.wait_run(run.id, &waiting, usage).await {
                    Ok(waits) if waits.status == RunStatus::Waiting => {
                        self.waits(emitter, thread, waits).await;
                        return None;
                    }
                    // Ended meanwhile (cancelled): its writer told of it.
                    Ok(_) => {
                        emitter.feed.close().await;
                        return None;
                    }
                    Err(e) => RunOutcome::failed(
                        format!("cannot record what the run waits on: {e}").into(),
                        usage,
                    ),
                }
            }
        };
        let finished = match store.finish_run(run.id, &outcome).await {
            Ok(finished) => finished,
            Err(e) => {
                tracing::error!(run_id = %run.id, error = %e, "cannot record the end of a run");
                return None;
            }
        };
        self.ended(run, finished, &outcome, emitter).await
    }

    /// Tells of a run's end as `finished` says it was written (by this executor, or by another
    /// writer first), and answers the run as it ended.
    async fn ended(
        &self,
        run: &Run,
        finished: FinishedRun,
        outcome: &RunOutcome,
        emitter: &Emitter,
    ) -> Option<Run> {
        match &finished {
            FinishedRun::Ended(ended) => {
                metrics::run_ended(ended);
                self.tell_changed(&emitter.feed, ended).await;
                // The writer of a run's end is the one that tells the plug-ins following it.
                emitter.feed.ended(ended).await;
            }
            // Someone else wrote the end, and tells of it.
            FinishedRun::AlreadyEnded(_) => emitter.feed.close().await,
        }
        let ended_here = matches!(finished, FinishedRun::Ended(_));
        if ended_here
            && let RunOutcome::Error {
                code: Some(RunErrorCode::BudgetExceeded),
                ..
            } = outcome
        {
            // The tree's budget is spent: nothing it started goes on spending.
            self.cancel_started(run.id).await;
        }
        let finished = finished.into_run();
        crate::spans::record_run_end(&tracing::Span::current(), &finished);
        emitter
            .emit(EventKind::RunStatus {
                status: finished.status,
                error: finished.error.clone(),
                error_code: finished.error_code,
                output: finished.output.clone(),
            })
            .await;
        if ended_here {
            self.announce_end(run.id).await;
        }
        Some(finished)
    }

    /// Runs the loop until it ends, the run is cancelled, or the time limit passes. A final
    /// answer is written with the run's end; when something was sent into the run first, the
    /// loop goes on where it stood (within the same time limit).
    async fn drive(
        &self,
        spec: &LoopSpec,
        cancel: &CancellationToken,
        usage: &Arc<Mutex<Usage>>,
    ) -> Driven {
        let limit_s = spec.limits.timeout_s;
        let limit = Duration::from_secs(limit_s);
        let began = tokio::time::Instant::now();
        let mut progress = Progress::default();
        loop {
            let ending = tokio::select! {
                end = run_loop(spec, &mut progress) => Ending::Loop(end),
                () = cancel.cancelled() => Ending::Cancelled,
                () = tokio::time::sleep(limit.saturating_sub(began.elapsed())) => Ending::TimedOut,
            };
            let usage = usage.lock().map(|u| *u).unwrap_or_default();
            let outcome = match ending {
                // A turn that waits ran none of its calls: nothing was started with the token.
                Ending::Loop(LoopEnd::Waiting(waiting)) if !cancel.is_cancelled() => {
                    return Driven::Waits(waiting, usage);
                }
                Ending::Loop(LoopEnd::Answer(answer)) => {
                    match Box::pin(self.answer(spec, answer, usage)).await {
                        Ok(driven) => {
                            cancel.cancel();
                            return driven;
                        }
                        Err(answer) => {
                            progress.sent_in(answer);
                            continue;
                        }
                    }
                }
                Ending::Loop(LoopEnd::Waiting(_)) | Ending::Cancelled => {
                    self.cancelled_outcome(usage)
                }
                Ending::Loop(LoopEnd::Failed(failure)) => RunOutcome::failed(failure, usage),
                Ending::TimedOut => RunOutcome::Timeout { limit_s, usage },
            };
            // Whatever ended the loop, the runs waited for with its token end with it.
            cancel.cancel();
            return Driven::Ended(outcome);
        }
    }

    /// Writes the loop's final answer with the run's end, in one commit, and announces the
    /// answer; `Err` hands the answer back when something was sent into the run first (nothing
    /// was written).
    async fn answer(
        &self,
        spec: &LoopSpec,
        answer: Box<Answer>,
        usage: Usage,
    ) -> Result<Driven, Box<Answer>> {
        let outcome = RunOutcome::Success {
            output: answer.text.clone(),
            usage,
        };
        let Some((message, seen)) = &answer.unwritten else {
            return Ok(Driven::Ended(outcome));
        };
        let store = &self.inner.store;
        match store
            .finish_run_with_answer(spec.tool_ctx.run_id, &outcome, message, *seen)
            .await
        {
            Ok(AnsweredRun::Ended { run, answer }) => {
                spec.emitter
                    .emit(EventKind::MessageCompleted { message: answer })
                    .await;
                Ok(Driven::Written(Box::new(FinishedRun::Ended(run)), outcome))
            }
            Ok(AnsweredRun::AlreadyEnded(run)) => Ok(Driven::Written(
                Box::new(FinishedRun::AlreadyEnded(run)),
                outcome,
            )),
            Ok(AnsweredRun::SentIn) => Err(answer),
            Err(e) => Ok(Driven::Ended(RunOutcome::failed(
                format!("cannot save a message: {e}").into(),
                usage,
            ))),
        }
    }

    /// Cancellation caused by shutdown is an interruption, not a user's cancel.
    pub(super) fn cancelled_outcome(&self, usage: Usage) -> RunOutcome {
        if self.inner.shutdown.is_cancelled() {
            RunOutcome::Interrupted {
                reason: ars_store::INTERRUPTED_ERROR.into(),
                usage,
            }
        } else {
            RunOutcome::Cancelled { usage }
        }
    }

    /// Why a run of `agent` would fail before its first step (it has no model, or names a
    /// provider this server does not know), in words; `None` when it can start.
    pub async fn cannot_run(&self, agent: &Agent) -> Option<String> {
        let models = match self.inner.models.snapshot().await {
            Ok(models) => models,
            Err(e) => return Some(format!("cannot load the model providers: {e}")),
        };
        let context = models
            .defaults(&self.inner.config.defaults)
            .resolve(agent.backend_id, &agent.config_json.context);
        Self::model_of(&models, &agent.slug, &context)
            .err()
            .map(|f| f.message)
    }

    /// The model of a run with `context`, or why there is none.
    fn model_of(
        models: &crate::models::ModelSnapshot,
        slug: &str,
        context: &ResolvedContext,
    ) -> Result<Arc<dyn ChatModel>, RunFailure> {
        let model_config: &ModelConfig = context.model.as_ref().ok_or_else(|| {
            RunFailure::new(
                RunErrorCode::NoModelConfigured,
                format!(
                    "no model configured for `{slug}`: set config_json.context.model on the \
                     agent, or a server default model (an admin's model settings, or \
                     ARS_DEFAULT_MODEL)"
                ),
            )
        })?;
        models
            .registry
            .model_for(model_config)
            .map_err(|e| crate::model_step::failure(&e))
    }

    /// Resolves the agent's context and assembles model, tools, prompt and plug-ins. The
    /// providers and default model are those in force now, so an admin's change applies from
    /// the next run on.
    async fn prepare(
        &self,
        setup: Prepared<'_>,
        emitter: &mut Emitter,
        begin: Begin,
    ) -> Result<LoopSpec, RunFailure> {
        let Prepared {
            run,
            thread,
            caller,
            cancel,
            usage,
        } = setup;
        let (history, resume) = match begin {
            Begin::New { history } => (history, None),
            Begin::Resume(resolutions) => (None, Some(resolutions)),
        };
        let store = &self.inner.store;
        // The agent and the providers' version in one read: the providers are read again
        // only when they changed.
        let (agent, version): (Agent, i64) = store
            .agent_for_run(thread.agent_id)
            .await
            .map_err(|e| format!("cannot load the agent: {e}"))?
            .filter(|(a, _)| caller.can_view(a))
            .ok_or("the thread's agent no longer exists or is no longer shared with you")?;
        crate::spans::record_agent(&tracing::Span::current(), &agent);
        let models = self
            .inner
            .models
            .snapshot_at(version)
            .await
            .map_err(|e| format!("cannot load the model providers: {e}"))?;
        let context = models
            .defaults(&self.inner.config.defaults)
            .resolve(agent.backend_id, &agent.config_json.context);
        let model = Self::model_of(&models, &agent.slug, &context)?;

        let mut tools = Vec::new();
        for name in &context.tools {
            match self.inner.tools.get(name) {
                Some(tool) => tools.push(tool),
                None => {
                    tracing::warn!(agent = %agent.slug, tool = %name, "agent names an unknown tool; skipped")
                }
            }
        }
        // Its directories are made by the run's first sandbox tool call (`ToolContext::sandbox`).
        let scope = super::thread_scope(thread).map_err(|e| e.to_string())?;

        let mut system_prompt = context.system_prompt.clone();
        let setup = RunSetup {
            runs: self,
            caller,
            run,
            thread,
            agent: &agent,
            context: &context,
            scope: &scope,
            events: &emitter.clone(),
        };
        // The plug-ins prepare at once (their reads, a Skills projection, MCP connections
        // overlap) and mount in their order.
        let built =
            futures::future::join_all(self.inner.plugins.iter().map(|p| p.build(&setup))).await;
        for m in built.into_iter().flatten() {
            m.tools(&mut tools);
            m.system_prompt(&mut system_prompt);
            emitter.middleware.push(m);
        }
        // `deny` means never offered: the model cannot call what it is not told of. An `ask`
        // tool is offered, and its calls wait for a decision (`agent_loop`).
        tools.retain(|tool| context.approvals.decide(tool.name()) != ars_domain::Approval::Deny);
        Ok(LoopSpec {
            store: Arc::clone(store),
            emitter: emitter.clone(),
            model,
            model_name: context
                .model
                .as_ref()
                .map(|m| format!("{}/{}", m.provider, m.name))
                .unwrap_or_default(),
            system_prompt,
            tools,
            limits: context.limits.clone(),
            tool_ctx: ToolContext {
                user_id: thread.user_id,
                thread_id: thread.id.clone(),
                run_id: run.id,
                call_id: String::new(),
                scope,
                sandbox: RunSandbox::new(Arc::clone(&self.inner.sandbox)),
                cancel: cancel.clone(),
                allow_network: context.network,
            },
            usage: Arc::clone(usage),
            retry: self.inner.config.stream_retry.clone(),
            approvals: context.approvals.clone(),
            agent_slug: agent.slug.clone(),
            history,
            resume,
            budget: self.tree_budget(run, &context).await,
        })
    }

    /// The budget of `run`'s tree: its agent's `max_total_tokens`, lowered — for a run another
    /// run started — to what the starter's budget leaves it (the starter's limit less everything
    /// else its tree has spent). `None` when neither sets one.
    async fn tree_budget(&self, run: &Run, context: &ResolvedContext) -> Option<TreeBudget> {
        let own = context.limits.max_total_tokens;
        if let Ok(mut active) = self.inner.active.lock()
            && let Some(entry) = active.get_mut(&run.id)
        {
            entry.tree_limit = Some(own);
        }
        let left = match &run.lineage {
            Some(lineage) => self.left_for(lineage.parent_run_id, run).await,
            None => None,
        };
        let limit = match (own, left) {
            (Some(own), Some(left)) => own.min(left),
            (own, left) => own.or(left)?,
        };
        let runtime = self.clone();
        // Its own tokens are counted by the loop; this adds what the runs it started spend.
        let beyond_of = Run {
            usage: Usage::default(),
            ..run.clone()
        };
        let beyond: UsageBeyond = Arc::new(move || {
            let runtime = runtime.clone();
            let run = beyond_of.clone();
            Box::pin(async move { runtime.total_usage(&run).await.unwrap_or_default() })
        });
        Some(TreeBudget { limit, beyond })
    }

    /// What the budget of run `starter`'s tree leaves `run` (one of the runs it started), or
    /// `None` when that tree has no budget.
    async fn left_for(&self, starter: ars_domain::RunId, run: &Run) -> Option<u64> {
        // A starter executing here knows its limit (most have none): no reads for it.
        let known = self
            .inner
            .active
            .lock()
            .ok()
            .and_then(|active| active.get(&starter).and_then(|a| a.tree_limit));
        let store = &self.inner.store;
        if known == Some(None) {
            return None;
        }
        let starter = store.run(starter).await.ok()??;
        let limit = match known {
            Some(limit) => limit?,
            None => {
                let thread = store.thread(&starter.thread_id).await.ok()??;
                let agent = store.agent(thread.agent_id).await.ok()??;
                crate::runs::Runs::context_of(self, &agent)
                    .await
                    .ok()?
                    .limits
                    .max_total_tokens?
            }
        };
        let tree = self.total_usage(&starter).await.ok()?.total();
        // `run`'s own tokens so far are in the tree's; the budget left counts them as its own.
        let others = tree.saturating_sub(run.usage.total());
        Some(limit.saturating_sub(others))
    }

    /// Cancels the runs `run_id` started that are still active (its budget ran out).
    async fn cancel_started(&self, run_id: ars_domain::RunId) {
        let started = match self.inner.store.child_runs(run_id).await {
            Ok(runs) => runs,
            Err(e) => {
                tracing::warn!(run_id = %run_id, error = %e, "cannot read the runs a run started");
                return;
            }
        };
        let active = started.iter().filter(|r| !r.status.is_terminal());
        futures::future::join_all(active.map(|r| self.cancel(r.id))).await;
    }
}
