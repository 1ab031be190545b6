//! The task tools. Each acts only for its parent thread and user: any other run or thread id
//! answers "not found", so nothing leaks about runs the parent did not start.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use ars_domain::{
    Agent, Delivery, NewMessage, Run, RunId, RunInput, RunInputError, RunLineage, RunStatus,
    Thread, ThreadId,
};

use super::progress::summarize;
use super::{Shared, subagent_runs};
use crate::runs::{ParentLink, RuntimeError, StartRun, Waited};
use crate::tool::{Tool, ToolContext, ToolError, parse_args, to_json};
use crate::tool_meta;

/// `subagent_await`'s default and longest wait.
const AWAIT_DEFAULT_S: u64 = 60;
const AWAIT_MAX_S: u64 = 600;
/// How many progress lines `subagent_status` shows.
const PROGRESS_LINES: usize = 3;
/// How long `subagent_start` waits for a child it knows cannot run to record its failure.
const DOOMED_END_S: u64 = 5;

/// What starting a child run gave.
// A short-lived value on one call's stack: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Started {
    Started {
        run: Run,
        thread: Thread,
        /// Why it will fail at once (no model, an unknown provider), known before it started.
        doomed: Option<String>,
    },
    /// The child thread already has an active run.
    Busy { thread_id: ThreadId, active: RunId },
}

pub(super) fn all(shared: &Arc<Shared>) -> Vec<Arc<dyn Tool>> {
    let s = || Arc::clone(shared);
    vec![
        Arc::new(Task(s())),
        Arc::new(Start(s())),
        Arc::new(Status(s())),
        Arc::new(Cancel(s())),
        Arc::new(Await(s())),
        Arc::new(List(s())),
        Arc::new(SendTo(s())),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DelegateArgs {
    description: String,
    subagent_slug: String,
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    fork: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    run_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    thread_id: Option<String>,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AwaitArgs {
    run_id: String,
    #[serde(default)]
    timeout_s: Option<u64>,
}

fn delegate_schema() -> Value {
    json!({"type": "object", "properties": {
        "description": {"type": "string", "description": "The complete task for the subagent: it sees nothing else of this conversation"},
        "subagent_slug": {"type": "string", "description": "Which subagent"},
        "thread_id": {"type": "string", "description": "Continue an earlier subagent thread (from a previous result)"},
        "fork": {"type": "boolean", "description": "Start the subagent with a copy of this conversation so far (everything before this call), then the description; not with thread_id"}
    }, "required": ["description", "subagent_slug"], "additionalProperties": false})
}

fn run_schema() -> Value {
    json!({"type": "object", "properties": {"run_id": {"type": "string"}}, "required": ["run_id"], "additionalProperties": false})
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::Failed(e.to_string())
}

impl Shared {
    fn slugs(&self) -> String {
        self.allowed
            .iter()
            .map(|a| a.slug.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn subagent(&self, slug: &str) -> Result<&Agent, ToolError> {
        self.allowed.iter().find(|a| a.slug == slug).ok_or_else(|| {
            ToolError::InvalidArguments(format!(
                "unknown subagent `{slug}`; allowed: {}",
                self.slugs()
            ))
        })
    }

    /// The child thread to run on: a new one (stored now only for a fork, which writes into it
    /// first; otherwise created with the run — `true`), or the given one if it is this
    /// parent's child for this subagent and user.
    async fn child_thread(
        &self,
        agent: &Agent,
        args: &DelegateArgs,
    ) -> Result<(Thread, bool), ToolError> {
        let store = self.runs.store();
        match &args.thread_id {
            Some(raw) => {
                let not_found = || {
                    ToolError::InvalidArguments(format!(
                        "thread_id `{raw}` is not a thread of subagent `{}` started from this conversation",
                        agent.slug
                    ))
                };
                let id = ThreadId::parse(raw).ok_or_else(not_found)?;
                let thread = store
                    .thread(&id)
                    .await
                    .map_err(failed)?
                    .ok_or_else(not_found)?;
                let ours = thread.parent_thread_id() == Some(&self.thread.id)
                    && thread.subagent_slug() == Some(agent.slug.as_str())
                    && thread.user_id == self.caller.id;
                if ours {
                    Ok((thread, false))
                } else {
                    Err(not_found())
                }
            }
            None => {
                let title: String = args.description.chars().take(80).collect();
                let child = self.thread.new_child(agent.id, &agent.slug, title);
                if args.fork {
                    Ok((store.create_thread(&child).await.map_err(failed)?, false))
                } else {
                    Ok((child, true))
                }
            }
        }
    }

    /// Starts a child run, delivered to this call as `delivery` says (`task` waits for it and
    /// cancels it with itself; `subagent_start` lets it outlive the parent's run), or finds its
    /// thread busy.
    async fn start(
        &self,
        args: &DelegateArgs,
        ctx: &ToolContext,
        delivery: Delivery,
    ) -> Result<Started, ToolError> {
        let input = RunInput::new(args.description.as_str()).map_err(|e| {
            ToolError::InvalidArguments(match e {
                RunInputError::Blank => "description must not be empty".into(),
                RunInputError::TooLong => format!(
                    "description is longer than {} characters",
                    RunInput::MAX_CHARS
                ),
            })
        })?;
        if args.fork && args.thread_id.is_some() {
            return Err(ToolError::InvalidArguments(
                "fork starts a new subagent thread with a copy of this conversation; it cannot \
                 continue thread_id — drop one of them"
                    .into(),
            ));
        }
        let agent = self.subagent(&args.subagent_slug)?.clone();
        // Started all the same, so its failure is on record where the user looks for it. Only
        // a background start tells it at once; `task` waits for the child, whose end says it.
        let doomed = match delivery {
            Delivery::Background => self.runs.cannot_run(&agent).await,
            _ => None,
        };
        let (thread, new_thread) = self.child_thread(&agent, args).await?;
        if args.fork {
            self.fork_into(&thread, ctx).await?;
        }
        let start = StartRun {
            thread: thread.clone(),
            caller: self.caller,
            input,
            parent: Some(ParentLink {
                lineage: RunLineage {
                    parent_run_id: ctx.run_id,
                    parent_tool_call_id: Some(ctx.call_id.clone()),
                    delivery: Some(delivery),
                },
                cancel_with: (delivery == Delivery::Wait).then(|| ctx.cancel.clone()),
                slots: Some(self.slots.clone()),
                new_thread,
            }),
            replace_from: None,
            woken_by: None,
        };
        match self.runs.start_run(start).await {
            Ok(run) => {
                crate::metrics::subagent_run_started(&agent.slug);
                Ok(Started::Started {
                    run,
                    thread,
                    doomed,
                })
            }
            Err(RuntimeError::Busy { active }) => Ok(Started::Busy {
                thread_id: thread.id,
                active,
            }),
            Err(e) => Err(failed(e)),
        }
    }

    /// Copies this parent thread's history up to (not including) the turn making call `ctx`
    /// into the new child thread `child`, so the child starts where the parent stands.
    async fn fork_into(&self, child: &Thread, ctx: &ToolContext) -> Result<(), ToolError> {
        let store = self.runs.store();
        let history = store.messages(&self.thread.id).await.map_err(failed)?;
        let turn = history
            .iter()
            .position(|m| {
                m.run_id == Some(ctx.run_id) && m.tool_calls.iter().any(|c| c.id == ctx.call_id)
            })
            .unwrap_or(history.len());
        for message in &history[..turn] {
            let copy = NewMessage {
                thread_id: child.id.clone(),
                run_id: None,
                role: message.role,
                content: message.content.clone(),
                tool_calls: message.tool_calls.clone(),
                tool_call_id: message.tool_call_id.clone(),
                tool_name: message.tool_name.clone(),
                is_error: message.is_error,
                notice: message.notice.clone(),
                steer: false,
                tells: None,
                spent: None,
            };
            store.append_message(&copy).await.map_err(failed)?;
        }
        Ok(())
    }

    /// A child run of this parent thread and user, or "not found".
    async fn owned_run(&self, raw: &str) -> Result<(Run, Thread), ToolError> {
        let not_found = || ToolError::Failed(format!("run `{raw}` not found"));
        let id = RunId::parse(raw).ok_or_else(not_found)?;
        let store = self.runs.store();
        let run = store.run(id).await.map_err(failed)?.ok_or_else(not_found)?;
        let thread = store
            .thread(&run.thread_id)
            .await
            .map_err(failed)?
            .ok_or_else(not_found)?;
        let ours = run.lineage.is_some()
            && run.user_id == self.caller.id
            && thread.parent_thread_id() == Some(&self.thread.id);
        if ours {
            Ok((run, thread))
        } else {
            Err(not_found())
        }
    }

    /// A child thread of this parent thread and user (of any subagent), or "not found".
    async fn owned_thread(&self, raw: &str) -> Result<Thread, ToolError> {
        let not_found = || {
            ToolError::Failed(format!(
                "thread `{raw}` is not a subagent thread started from this conversation"
            ))
        };
        let id = ThreadId::parse(raw).ok_or_else(not_found)?;
        let thread = self
            .runs
            .store()
            .thread(&id)
            .await
            .map_err(failed)?
            .ok_or_else(not_found)?;
        let ours =
            thread.parent_thread_id() == Some(&self.thread.id) && thread.user_id == self.caller.id;
        if ours { Ok(thread) } else { Err(not_found()) }
    }

    /// The parent read how its background child `run` ended (its result, or why it failed):
    /// that tells the end, so it neither wakes the parent nor reaches it again as a notice.
    async fn collected(&self, run: &Run) {
        if run.status.is_terminal()
            && let Err(e) = self.runs.store().tell_parent(run.id).await
        {
            tracing::warn!(run_id = %run.id, error = %e, "cannot record that a child's result was read");
        }
    }

    /// The tool-facing result of a child run that has ended: its result, or — when it did not
    /// succeed — the same as a failed call, so the parent (and whoever reads the call) sees
    /// at once that and why it failed.
    fn ended(&self, run: &Run, thread: &Thread) -> Result<String, ToolError> {
        let result = to_json(&self.result(run, thread))?;
        if run.status == RunStatus::Success {
            Ok(result)
        } else {
            Err(ToolError::Failed(result))
        }
    }

    /// The tool-facing result of a child run.
    fn result(&self, run: &Run, thread: &Thread) -> Value {
        let mut value = json!({
            "run_id": run.id,
            "thread_id": thread.id,
            "subagent_slug": thread.subagent_slug(),
            "status": run.status,
            "usage": run.usage,
        });
        if let Some(output) = &run.output {
            value["output"] = json!(output);
        }
        if let Some(error) = &run.error {
            value["error"] = json!(error);
        }
        if let Some(code) = run.error_code {
            value["error_code"] = json!(code);
        }
        // A waiting child says what it waits on (the user decides it; see their pending list).
        if !run.pending.is_empty() {
            value["pending"] = json!(run.pending);
        }
        value
    }

    /// Waits for a run to end, or `timeout`, or the parent's cancellation.
    async fn wait(
        &self,
        run_id: RunId,
        timeout: Duration,
        ctx: &ToolContext,
    ) -> Result<Waited, ToolError> {
        tokio::select! {
            waited = self.runs.wait(run_id, timeout) => waited.map_err(failed),
            () = ctx.cancel.cancelled() => Err(ToolError::Failed("the parent run was cancelled".into())),
        }
    }
}

struct Task(Arc<Shared>);

#[async_trait]
impl Tool for Task {
    tool_meta!(
        "task",
        "Delegate a short task to a subagent and wait for its answer. Returns the child thread_id (to continue it later), run_id, status and the subagent's final answer.",
        delegate_schema()
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: DelegateArgs = parse_args(args)?;
        // Boxed: the call then waits for the child holding only what the wait needs.
        let (run, thread) = match Box::pin(self.0.start(&args, ctx, Delivery::Wait)).await? {
            Started::Started { run, thread, .. } => (run, thread),
            Started::Busy { thread_id, active } => {
                return Err(ToolError::Failed(format!(
                    "thread {thread_id} is busy with run {active}; await it or start a new thread"
                )));
            }
        };
        // The child has its own time limit, so this wait ends; the bound is a backstop. A
        // child waiting for a person's decision keeps this call waiting too.
        let run = loop {
            let waited = match self
                .0
                .wait(run.id, Duration::from_secs(AWAIT_MAX_S), ctx)
                .await
            {
                Ok(waited) => waited,
                Err(e) => {
                    // The call ends with the parent: a child that waits for a decision has no
                    // task the parent's cancellation reaches, so it is cancelled here.
                    if ctx.cancel.is_cancelled() {
                        let _ = self.0.runs.cancel(run.id).await;
                    }
                    return Err(e);
                }
            };
            if let Waited::Finished(run) = waited {
                break run;
            }
        };
        self.0.ended(&run, &thread)
    }
}

struct Start(Arc<Shared>);

#[async_trait]
impl Tool for Start {
    tool_meta!(
        "subagent_start",
        "Start a subagent in the background for long or parallel work. Returns run_id and thread_id at once; follow up with subagent_status / subagent_await.",
        delegate_schema()
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: DelegateArgs = parse_args(args)?;
        // The writer of the child's end leaves the completion notice (see `notice`).
        match self.0.start(&args, ctx, Delivery::Background).await? {
            Started::Busy { thread_id, active } => {
                to_json(&json!({"busy": true, "thread_id": thread_id, "active_run_id": active}))
            }
            Started::Started {
                run,
                thread,
                doomed: None,
            } => to_json(&json!({
                "run_id": run.id,
                "thread_id": thread.id,
                "subagent_slug": thread.subagent_slug(),
                "status": run.status,
            })),
            // It fails as it starts: say so now, with its reason, rather than "started".
            Started::Started {
                run,
                thread,
                doomed: Some(reason),
            } => {
                let waited = self
                    .0
                    .wait(run.id, Duration::from_secs(DOOMED_END_S), ctx)
                    .await?;
                match waited {
                    Waited::Finished(run) => {
                        self.0.collected(&run).await;
                        self.0.ended(&run, &thread)
                    }
                    Waited::StillRunning(run) => {
                        let mut value = self.0.result(&run, &thread);
                        value["error"] = json!(reason);
                        Err(ToolError::Failed(to_json(&value)?))
                    }
                }
            }
        }
    }
}

struct Status(Arc<Shared>);

#[async_trait]
impl Tool for Status {
    tool_meta!(
        "subagent_status",
        "The state of a background subagent run: status, its last few steps, and the result once finished.",
        run_schema()
    );
    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: RunArgs = parse_args(args)?;
        let (run, thread) = self.0.owned_run(&args.run_id).await?;
        let messages = self
            .0
            .runs
            .store()
            .messages(&thread.id)
            .await
            .map_err(failed)?;
        let of_run: Vec<_> = messages
            .into_iter()
            .filter(|m| m.run_id == Some(run.id))
            .collect();
        self.0.collected(&run).await;
        let mut value = self.0.result(&run, &thread);
        value["progress"] = json!(summarize(&of_run, PROGRESS_LINES));
        to_json(&value)
    }
}

struct Cancel(Arc<Shared>);

#[async_trait]
impl Tool for Cancel {
    tool_meta!(
        "subagent_cancel",
        "Cancel a running background subagent run; answers its resulting status.",
        run_schema()
    );
    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let args: RunArgs = parse_args(args)?;
        let (run, thread) = self.0.owned_run(&args.run_id).await?;
        let run = self.0.runs.cancel(run.id).await.map_err(failed)?;
        to_json(&self.0.result(&run, &thread))
    }
}

struct Await(Arc<Shared>);

#[async_trait]
impl Tool for Await {
    tool_meta!(
        "subagent_await",
        "Wait for a background subagent run to finish and return its result. On timeout (default 60 s, max 600 s) returns the current state with wait_timed_out: true.",
        json!({"type": "object", "properties": {
            "run_id": {"type": "string"},
            "timeout_s": {"type": "integer", "minimum": 1, "maximum": AWAIT_MAX_S}
        }, "required": ["run_id"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: AwaitArgs = parse_args(args)?;
        let timeout = Duration::from_secs(
            args.timeout_s
                .unwrap_or(AWAIT_DEFAULT_S)
                .clamp(1, AWAIT_MAX_S),
        );
        let (run, thread) = self.0.owned_run(&args.run_id).await?;
        match self.0.wait(run.id, timeout, ctx).await? {
            Waited::Finished(run) => {
                self.0.collected(&run).await;
                self.0.ended(&run, &thread)
            }
            Waited::StillRunning(run) => {
                let mut value = self.0.result(&run, &thread);
                value["wait_timed_out"] = json!(true);
                to_json(&value)
            }
        }
    }
}

struct SendTo(Arc<Shared>);

/// How `subagent_send` delivered its message.
const SENT_STEER: &str = "steer";
const SENT_NEW_RUN: &str = "new_run";

#[async_trait]
impl Tool for SendTo {
    tool_meta!(
        "subagent_send",
        "Send a message to a subagent started from this conversation, by run_id or thread_id. A running subagent reads it before its next step (sent: steer); a subagent whose run has ended continues its thread with a new background run on the message (sent: new_run), followed like subagent_start's.",
        json!({"type": "object", "properties": {
            "run_id": {"type": "string", "description": "A subagent run (from subagent_start, task or subagent_list)"},
            "thread_id": {"type": "string", "description": "A subagent thread (from a previous result)"},
            "message": {"type": "string", "description": "What to tell the subagent"}
        }, "required": ["message"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: SendArgs = parse_args(args)?;
        let input = RunInput::new(args.message.as_str()).map_err(|e| {
            ToolError::InvalidArguments(match e {
                RunInputError::Blank => "message must not be empty".into(),
                RunInputError::TooLong => {
                    format!("message is longer than {} characters", RunInput::MAX_CHARS)
                }
            })
        })?;
        let thread = match (&args.run_id, &args.thread_id) {
            (None, None) => {
                return Err(ToolError::InvalidArguments(
                    "give the subagent's run_id or thread_id".into(),
                ));
            }
            (Some(run_id), thread_id) => {
                let (_, thread) = self.0.owned_run(run_id).await?;
                if thread_id.as_ref().is_some_and(|t| *t != thread.id.as_str()) {
                    return Err(ToolError::InvalidArguments(format!(
                        "run `{run_id}` is not a run of thread `{}`",
                        thread_id.as_deref().unwrap_or_default()
                    )));
                }
                thread
            }
            (None, Some(thread_id)) => self.0.owned_thread(thread_id).await?,
        };
        let store = self.0.runs.store();
        let reply = |run: &Run, sent: &str| {
            to_json(&json!({
                "sent": sent,
                "run_id": run.id,
                "thread_id": thread.id,
                "subagent_slug": thread.subagent_slug(),
                "status": run.status,
            }))
        };
        // The thread's run may end, or one start, between each read and write: a steer that
        // finds the run ended starts a new one, a start that finds one running steers it.
        for _ in 0..3 {
            if let Some(active) = store.active_run(&thread.id).await.map_err(failed)? {
                match self.0.runs.steer(active.id, input.clone()).await {
                    Ok(_) => return reply(&active, SENT_STEER),
                    Err(RuntimeError::Ended { .. }) => continue,
                    Err(e) => return Err(failed(e)),
                }
            }
            let delegate = DelegateArgs {
                description: input.as_str().to_string(),
                subagent_slug: thread.subagent_slug().unwrap_or_default().to_string(),
                thread_id: Some(thread.id.to_string()),
                fork: false,
            };
            match self.0.start(&delegate, ctx, Delivery::Background).await? {
                Started::Started { run, .. } => return reply(&run, SENT_NEW_RUN),
                Started::Busy { .. } => continue,
            }
        }
        Err(ToolError::Failed(format!(
            "thread {} kept starting and ending runs; try again",
            thread.id
        )))
    }
}

struct List(Arc<Shared>);

#[async_trait]
impl Tool for List {
    tool_meta!(
        "subagent_list",
        "List the subagent runs started from this conversation, with their status.",
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let _: serde::de::IgnoredAny = parse_args(args)?;
        let runs = subagent_runs(
            self.0.runs.store().as_ref(),
            &self.0.thread,
            self.0.caller.id,
        )
        .await
        .map_err(failed)?;
        let list: Vec<Value> = runs
            .iter()
            .map(|r| {
                let description: String = r.run.input.chars().take(120).collect();
                json!({"run_id": r.run.id, "thread_id": r.run.thread_id, "subagent_slug": r.slug, "status": r.run.status, "description": description})
            })
            .collect();
        to_json(&json!({"runs": list}))
    }
}
