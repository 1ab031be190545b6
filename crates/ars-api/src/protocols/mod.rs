//! Adapters for the protocols our users' clients already speak — OpenAI (`/v1`), LangGraph /
//! Agent Protocol (`/langgraph`) and A2A (`/a2a/{agent}`) — over the same agents, threads,
//! runs, permissions and events as `/api`. Each adapter owns its wire shapes and its error
//! shape; what they share is here: who the caller is ([`KeyAuth`](crate::extract::KeyAuth)),
//! which agents they may use, a thread seeded with a conversation, a run followed to its end
//! and cancelled when its client goes away.
//!
//! **Invariant:** an adapter reaches agents, threads and runs only through these helpers and
//! the runtime, so a caller sees exactly what `/api` shows them: another user's thread or run
//! is "not found", an agent they cannot use does not exist.

pub mod a2a;
pub mod langgraph;
pub mod openai;

use std::time::Duration;

use axum::Router;

use ars_domain::{
    Agent, Caller, MessageRole, NewMessage, Run, RunId, RunInput, RunInputError, Thread, ThreadId,
    ToolCallRecord, User,
};
use ars_runtime::{Runtime, StartRun, Waited};
use ars_store::{AgentFilter, AgentKinds};

use crate::{ApiError, AppState};

/// Every protocol adapter's routes, at their prefixes.
pub fn router() -> Router<AppState> {
    Router::new()
        .nest("/v1", openai::router())
        .nest("/langgraph", langgraph::router())
        .nest("/a2a", a2a::router())
}

/// The most messages a client may send as a conversation to seed a thread with.
pub const MAX_SEED_MESSAGES: usize = 1_000;

/// The agents `caller` may run, oldest first: every normal agent they can see, and their
/// subagents too when `with_subagents`.
pub(crate) async fn usable_agents(
    state: &AppState,
    caller: &Caller,
    with_subagents: bool,
) -> Result<Vec<Agent>, ApiError> {
    let filter = AgentFilter {
        visible_to: Some(caller.id),
        kinds: AgentKinds::chat_or_all(with_subagents),
    };
    Ok(state
        .store
        .list_agents(filter)
        .await?
        .into_iter()
        .filter(|agent| caller.can_view(agent))
        .collect())
}

/// The agent `key` (its slug or id) names, if `caller` may run it (a subagent only when
/// `with_subagents`); anything else is a 404 `agent`.
pub(crate) async fn usable_agent(
    state: &AppState,
    caller: &Caller,
    key: &str,
    with_subagents: bool,
) -> Result<Agent, ApiError> {
    let agent = crate::routes::agents::visible_agent(state, caller, key).await?;
    if agent.is_subagent && !with_subagents {
        return Err(ApiError::not_found(ars_domain::Subject::Agent));
    }
    Ok(agent)
}

/// One message of a conversation a client sends, to be stored before the run's input.
#[derive(Clone, Debug)]
pub(crate) struct Seed {
    pub role: MessageRole,
    pub content: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub tool_call_id: Option<String>,
}

impl Seed {
    pub fn text(role: MessageRole, content: String) -> Self {
        Self {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A new top-level thread of `user` with `agent`, titled after `input`, holding `seeds` in
/// order (the history the run on it starts from).
pub(crate) async fn seeded_thread(
    state: &AppState,
    user: &User,
    agent: &Agent,
    seeds: Vec<Seed>,
    input: &str,
) -> Result<Thread, ApiError> {
    let thread = Thread::new_root(user.id, agent.id, title_of(input));
    let thread = state.store.create_thread(&thread).await?;
    for seed in seeds {
        let mut message = NewMessage::text(thread.id.clone(), None, seed.role, seed.content);
        message.tool_calls = seed.tool_calls;
        message.tool_call_id = seed.tool_call_id;
        state.store.append_message(&message).await?;
    }
    Ok(thread)
}

/// A new top-level thread of `user` with `agent` under an id the client chose (a LangGraph
/// thread id, an A2A context id), laid out as [`Thread::new_root`] lays one out.
pub(crate) fn thread_with_id(id: ThreadId, user: &User, agent: &Agent, title: String) -> Thread {
    let mut thread = Thread::new_root(user.id, agent.id, title);
    thread.runtime_scope_id = id.to_string();
    thread.workdir_path = format!("threads/{id}");
    thread.id = id;
    thread
}

/// A thread's title from the message that starts it: its words, at most 60 characters.
pub(crate) fn title_of(input: &str) -> String {
    let words = input.split_whitespace().collect::<Vec<_>>().join(" ");
    let title: String = words.chars().take(60).collect();
    if title.is_empty() {
        "New chat".into()
    } else {
        title
    }
}

/// A top-level thread of the caller's, by id; with `agent`, only one with that agent.
/// Anything else (malformed, missing, someone else's, a child thread) is a 404 `thread`.
pub(crate) async fn own_thread(
    state: &AppState,
    user: &User,
    id: &str,
    agent: Option<&Agent>,
) -> Result<Thread, ApiError> {
    let Some(id) = ThreadId::parse(id) else {
        return Err(ApiError::not_found(ars_domain::Subject::Thread));
    };
    state
        .store
        .thread(&id)
        .await?
        .filter(|t| t.user_id == user.id && t.lineage.is_none())
        .filter(|t| agent.is_none_or(|a| a.id == t.agent_id))
        .ok_or_else(|| ApiError::not_found(ars_domain::Subject::Thread))
}

/// A run of the caller's, by id (any thread of theirs); anything else is a 404 `run`.
pub(crate) async fn own_run(state: &AppState, user: &User, id: RunId) -> Result<Run, ApiError> {
    state
        .store
        .run(id)
        .await?
        .filter(|r| r.user_id == user.id)
        .ok_or_else(|| ApiError::not_found(ars_domain::Subject::Run))
}

/// A run's input under the one input rule, in words that name `field`.
pub(crate) fn run_input(text: String, field: &str) -> Result<RunInput, ApiError> {
    RunInput::new(text).map_err(|e| match e {
        RunInputError::Blank => ApiError::unprocessable(field, "the input message is empty"),
        RunInputError::TooLong => ApiError::unprocessable(
            field,
            format!(
                "the input message is longer than {} characters",
                RunInput::MAX_CHARS
            ),
        ),
    })
}

/// Starts the caller's run on `thread` with `input`: 409 `busy` when the thread has one.
pub(crate) async fn start(
    state: &AppState,
    user: &User,
    thread: Thread,
    input: RunInput,
) -> Result<Run, ApiError> {
    Ok(state
        .runtime
        .start_run(StartRun {
            thread,
            caller: Caller::from(user),
            input,
            parent: None,
            replace_from: None,
            woken_by: None,
        })
        .await?)
}

/// How long one wait on a run lasts before it is renewed (the run may wait on a person for
/// as long as they take).
const WAIT_SLICE: Duration = Duration::from_secs(60);

/// The run once it has ended.
pub(crate) async fn ended(runtime: &Runtime, run: RunId) -> Result<Run, ApiError> {
    loop {
        match runtime.wait(run, WAIT_SLICE).await? {
            Waited::Finished(run) => return Ok(run),
            Waited::StillRunning(_) => continue,
        }
    }
}

/// The run once it has ended or waits for a person.
pub(crate) async fn settled(runtime: &Runtime, run: RunId) -> Result<Run, ApiError> {
    loop {
        match runtime.wait_for_turn(run, WAIT_SLICE).await? {
            Waited::Finished(run) => return Ok(run),
            Waited::StillRunning(run) if run.status == ars_domain::RunStatus::Waiting => {
                return Ok(run);
            }
            Waited::StillRunning(_) => continue,
        }
    }
}

/// Cancels its run when dropped before [`CancelOnDrop::disarm`]: a client that goes away
/// from a request that runs an agent for it stops that agent, as a closed OpenAI stream
/// stops generation.
pub(crate) struct CancelOnDrop {
    runtime: Runtime,
    run: Option<RunId>,
}

impl CancelOnDrop {
    pub fn new(runtime: &Runtime, run: RunId) -> Self {
        Self {
            runtime: runtime.clone(),
            run: Some(run),
        }
    }

    /// The run ended (or is handed on): nothing to cancel.
    pub fn disarm(&mut self) {
        self.run = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(run) = self.run.take() {
            let runtime = self.runtime.clone();
            tracing::info!(run_id = %run, "the client went away; cancelling its run");
            tokio::spawn(async move {
                if let Err(e) = runtime.cancel(run).await {
                    tracing::warn!(run_id = %run, error = %e, "cannot cancel the run");
                }
            });
        }
    }
}
