//! Runs: create (in the background), wait, stream, list, read, cancel, join; on a thread or
//! stateless (on a new thread of their own, which stays).

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use ars_domain::{
    Agent, DecisionInput, MessageRole, PendingRequest, Run, RunId, RunStatus, Thread, User,
};

use super::stream::{StreamSpec, modes, respond};
use super::threads::thread_state;
use super::{LgError, assistant, last_run, own_thread, wire};
use crate::extract::{ApiJson, KeyAuth};
use crate::protocols::{MAX_SEED_MESSAGES, Seed, own_run, run_input, start};
use crate::{ApiError, AppState};

#[derive(Debug, Deserialize)]
pub(super) struct RunBody {
    assistant_id: String,
    #[serde(default)]
    input: Option<Value>,
    #[serde(default)]
    command: Option<Value>,
    #[serde(default)]
    metadata: Option<Value>,
    #[serde(default)]
    multitask_strategy: Option<String>,
    #[serde(default)]
    stream_mode: Option<Value>,
    /// `cancel` (default): a client that leaves a stream cancels its run; `continue`.
    #[serde(default)]
    on_disconnect: Option<String>,
    /// `create`: a thread id not yet known is created for the run; `reject` (default): 404.
    #[serde(default)]
    if_not_exists: Option<String>,
}

/// What a run is started or resumed with, read from a body.
struct Launch {
    agent: Agent,
    metadata: Value,
    strategy: String,
}

async fn launch_spec(state: &AppState, user: &User, body: &RunBody) -> Result<Launch, ApiError> {
    let agent = assistant(state, user, &body.assistant_id).await?;
    let metadata = body.metadata.clone().unwrap_or_else(|| json!({}));
    super::valid_metadata(&metadata)?;
    let strategy = body
        .multitask_strategy
        .clone()
        .unwrap_or_else(|| "reject".into());
    if !["reject", "interrupt", "rollback", "enqueue"].contains(&strategy.as_str()) {
        return Err(ApiError::unprocessable(
            "multitask_strategy",
            "multitask_strategy is reject, interrupt, rollback or enqueue",
        ));
    }
    Ok(Launch {
        agent,
        metadata,
        strategy,
    })
}

/// The conversation `input.messages` appends before the run, and the run's input (the last
/// message, a user's). Messages are `{role, content}` or LangChain dicts (`{type, content}`);
/// content is text or text blocks. System messages are left out (the agent's own prompt
/// applies), and so are tool messages and tool calls: an agent runs its own tools.
fn conversation(input: Option<&Value>) -> Result<(Vec<Seed>, String), ApiError> {
    let messages = input
        .and_then(|i| i.get("messages"))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            ApiError::unprocessable(
                "input",
                "input is {\"messages\": [...]}, ending with the user's message",
            )
        })?;
    if messages.len() > MAX_SEED_MESSAGES {
        return Err(ApiError::unprocessable(
            "input.messages",
            format!("at most {MAX_SEED_MESSAGES} messages"),
        ));
    }
    let mut seeds = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let kind = message
            .get("role")
            .or_else(|| message.get("type"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let role = match kind {
            "user" | "human" => MessageRole::User,
            "assistant" | "ai" => MessageRole::Assistant,
            "system" | "developer" | "tool" => continue,
            other => {
                return Err(ApiError::unprocessable(
                    format!("input.messages[{i}].role"),
                    format!("unknown role `{other}`"),
                ));
            }
        };
        let content = match message.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|b| match b {
                    Value::String(text) => Some(text.as_str()),
                    block => block.get("text").and_then(Value::as_str),
                })
                .collect(),
            _ => String::new(),
        };
        seeds.push(Seed::text(role, content));
    }
    match seeds.pop() {
        Some(last) if last.role == MessageRole::User => Ok((seeds, last.content)),
        _ => Err(ApiError::unprocessable(
            "input.messages",
            "the last message must be the user's: it is what the agent answers",
        )),
    }
}

/// The decisions a `command: {"resume": …}` makes for the run waiting on `pending`: a list of
/// ARS decisions as it is; a map from interrupt (call) id to a decision; or one value for
/// every pending item. A decision is an object (`decision`, `message`, `arguments`, `answer`)
/// or a word: an approval's `approve`/`reject`, a question's answer.
fn resume_decisions(
    resume: &Value,
    pending: &[ars_domain::PendingItem],
) -> Result<Vec<DecisionInput>, ApiError> {
    let invalid = |why: String| ApiError::unprocessable("command.resume", why);
    let decide = |call_id: &str, value: &Value| -> Result<DecisionInput, ApiError> {
        let item = pending.iter().find(|p| p.call_id == call_id);
        let mut decision = match value {
            Value::String(word) => match item.map(|i| &i.request) {
                Some(PendingRequest::Question { .. }) => json!({"answer": word}),
                _ => json!({"decision": word}),
            },
            Value::Object(_) => value.clone(),
            other => {
                return Err(invalid(format!(
                    "a decision is a word or an object, not {other}"
                )));
            }
        };
        decision["call_id"] = json!(call_id);
        serde_json::from_value(decision).map_err(|e| invalid(e.to_string()))
    };
    match resume {
        Value::Array(_) => {
            serde_json::from_value(resume.clone()).map_err(|e| invalid(e.to_string()))
        }
        Value::Object(map)
            if !map.is_empty() && map.keys().all(|k| pending.iter().any(|p| p.call_id == *k)) =>
        {
            map.iter().map(|(id, value)| decide(id, value)).collect()
        }
        value => pending.iter().map(|p| decide(&p.call_id, value)).collect(),
    }
}

/// Starts (or, with `command.resume`, resumes) the run a body asks for on `thread`.
async fn launch(
    state: &AppState,
    user: &User,
    mut thread: Thread,
    body: &RunBody,
    spec: &Launch,
) -> Result<Run, ApiError> {
    if let Some(resume) = body.command.as_ref().and_then(|c| c.get("resume")) {
        let waiting = last_run(state, &thread)
            .await?
            .filter(|r| r.status == RunStatus::Waiting)
            .ok_or_else(|| ApiError::Conflict {
                message: "no run of this thread waits for a decision: nothing to resume".into(),
                field: Some("command.resume".into()),
            })?;
        let decisions = resume_decisions(resume, &waiting.pending)?;
        return Ok(state.runtime.decide(waiting.id, &decisions).await?);
    }
    let (seeds, input) = conversation(body.input.as_ref())?;
    let input = run_input(input, "input.messages")?;
    if thread.agent_id != spec.agent.id {
        if state
            .store
            .bind_empty_thread(&thread.id, spec.agent.id)
            .await?
            == ars_store::Updated::NotFound
        {
            return Err(ApiError::Conflict {
                message: format!(
                    "Thread {} talks with another assistant; start a new thread for `{}`",
                    thread.id, spec.agent.slug
                ),
                field: Some("assistant_id".into()),
            });
        }
        thread.agent_id = spec.agent.id;
    }
    if let Some(active) = state.store.active_run(&thread.id).await? {
        match spec.strategy.as_str() {
            "interrupt" | "rollback" => {
                state.runtime.cancel(active.id).await?;
            }
            "enqueue" => {
                crate::protocols::ended(&state.runtime, active.id).await?;
            }
            _ => {
                return Err(ApiError::Conflict {
                    message: "Thread is already running a task. Wait for it to finish or \
                              choose a different multitask strategy."
                        .into(),
                    field: None,
                });
            }
        }
    }
    for seed in seeds {
        let message =
            ars_domain::NewMessage::text(thread.id.clone(), None, seed.role, seed.content);
        state.store.append_message(&message).await?;
    }
    let run = start(state, user, thread, input).await?;
    tracing::info!(run_id = %run.id, agent = %spec.agent.slug, user = %user.id, "run started over /langgraph");
    Ok(run)
}

/// The thread a run body names: the caller's, or with `if_not_exists: "create"` a new one
/// with that id.
async fn run_thread(
    state: &AppState,
    user: &User,
    id: &str,
    body: &RunBody,
    agent: &Agent,
) -> Result<Thread, ApiError> {
    match own_thread(state, user, id).await {
        Err(e)
            if e.status() == StatusCode::NOT_FOUND
                && body.if_not_exists.as_deref() == Some("create") =>
        {
            let id = super::uuid_thread_id(id)
                .ok_or_else(|| ApiError::unprocessable("thread_id", "a thread id is a UUID"))?;
            if state.store.thread(&id).await?.is_some() {
                return Err(ApiError::NotFound(format!("Thread {id} not found")));
            }
            let thread = crate::protocols::thread_with_id(id, user, agent, "New chat".into());
            Ok(state.store.create_thread(&thread).await?)
        }
        other => other,
    }
}

/// A new thread of its own for a stateless run.
async fn new_thread(state: &AppState, user: &User, agent: &Agent) -> Result<Thread, ApiError> {
    let thread = Thread::new_root(user.id, agent.id, "New chat".into());
    Ok(state.store.create_thread(&thread).await?)
}

/// `Content-Location: /threads/{thread}/runs/{run}`, which the SDK's `on_run_created` reads.
fn located(mut response: Response, run: &Run) -> Response {
    let location = format!("/threads/{}/runs/{}", run.thread_id, run.id);
    if let Ok(value) = HeaderValue::from_str(&location) {
        response
            .headers_mut()
            .insert(header::CONTENT_LOCATION, value);
    }
    response
}

/// What `wait` and `join` answer: the thread's values once the run settled, with
/// `__error__` when it failed.
async fn final_values(state: &AppState, thread: &Thread, run: RunId) -> Result<Value, ApiError> {
    let run = crate::protocols::settled(&state.runtime, run).await?;
    let mut values = thread_state(state, thread).await?["values"].take();
    if matches!(
        run.status,
        RunStatus::Error | RunStatus::Timeout | RunStatus::Interrupted
    ) {
        values["__error__"] = json!({
            "error": run.error_code.map_or("RunError", |c| c.as_str()),
            "message": run.error.unwrap_or_else(|| format!("the run ended {}", run.status.as_str())),
        });
    }
    Ok(values)
}

type Body = Result<ApiJson<RunBody>, ApiError>;

/// What a run request answers.
#[derive(Clone, Copy)]
enum Answer {
    /// The run, at once (it goes on in the background).
    Run,
    /// The thread's values once the run settled.
    Values,
    /// The run's stream.
    Stream,
}

/// Starts the run a body asks for, on thread `id` (or on a new thread of its own: a stateless
/// run), and answers as `answer` says.
async fn run_request(
    state: &AppState,
    auth: Result<KeyAuth, ApiError>,
    id: Option<&str>,
    body: Body,
    answer: Answer,
) -> Result<Response, LgError> {
    let KeyAuth(auth) = auth?;
    let ApiJson(body) = body?;
    let user = &auth.user;
    let spec = launch_spec(state, user, &body).await?;
    let thread = match id {
        Some(id) => run_thread(state, user, id, &body, &spec.agent).await?,
        None => new_thread(state, user, &spec.agent).await?,
    };
    match answer {
        Answer::Run => {
            let run = launch(state, user, thread, &body, &spec).await?;
            let json = wire::run(&run, &spec.metadata, &spec.strategy);
            Ok(located(Json(json).into_response(), &run))
        }
        Answer::Values => waited(state, user, thread, &body, &spec).await,
        Answer::Stream => streamed(state, user, thread, &body, spec).await,
    }
}

pub(super) async fn create(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, LgError> {
    run_request(&state, auth, Some(&id), body, Answer::Run).await
}

pub(super) async fn create_stateless(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Body,
) -> Result<Response, LgError> {
    run_request(&state, auth, None, body, Answer::Run).await
}

pub(super) async fn wait(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, LgError> {
    run_request(&state, auth, Some(&id), body, Answer::Values).await
}

pub(super) async fn wait_stateless(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Body,
) -> Result<Response, LgError> {
    run_request(&state, auth, None, body, Answer::Values).await
}

pub(super) async fn stream(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, LgError> {
    run_request(&state, auth, Some(&id), body, Answer::Stream).await
}

pub(super) async fn stream_stateless(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Body,
) -> Result<Response, LgError> {
    run_request(&state, auth, None, body, Answer::Stream).await
}

async fn waited(
    state: &AppState,
    user: &User,
    thread: Thread,
    body: &RunBody,
    spec: &Launch,
) -> Result<Response, LgError> {
    let run = launch(state, user, thread.clone(), body, spec).await?;
    let mut guard = crate::protocols::CancelOnDrop::new(&state.runtime, run.id);
    let values = final_values(state, &thread, run.id).await?;
    guard.disarm();
    Ok(located(Json(values).into_response(), &run))
}

async fn streamed(
    state: &AppState,
    user: &User,
    thread: Thread,
    body: &RunBody,
    spec: Launch,
) -> Result<Response, LgError> {
    let modes = modes(body.stream_mode.as_ref())?;
    let run = launch(state, user, thread.clone(), body, &spec).await?;
    let response = respond(StreamSpec {
        runtime: state.runtime.clone(),
        store: state.store.clone(),
        thread,
        run: run.clone(),
        graph_id: spec.agent.slug,
        modes,
        after: 0,
        cancel_on_disconnect: body.on_disconnect.as_deref() != Some("continue"),
    })
    .await?;
    Ok(located(response, &run))
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    status: Option<String>,
}

/// `GET /threads/{id}/runs`: the thread's runs, newest first.
pub(super) async fn list(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<Value>>, LgError> {
    let KeyAuth(auth) = auth?;
    let Query(query) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let thread = own_thread(&state, &auth.user, &id).await?;
    let runs = state.store.thread_runs(&thread.id).await?;
    let empty = json!({});
    let found = runs
        .iter()
        .rev()
        .filter(|r| r.parent_run_id().is_none())
        .filter(|r| {
            query
                .status
                .as_ref()
                .is_none_or(|s| wire::run_status(r.status) == s)
        })
        .skip(query.offset.unwrap_or(0))
        .take(query.limit.unwrap_or(10).min(1000))
        .map(|r| wire::run(r, &empty, "reject"))
        .collect();
    Ok(Json(found))
}

/// The run `run_id` of thread `id`, both the caller's: a 404 otherwise.
async fn thread_run(
    state: &AppState,
    user: &User,
    id: &str,
    run_id: &str,
) -> Result<(Thread, Run), ApiError> {
    let thread = own_thread(state, user, id).await?;
    let run = match RunId::parse(run_id) {
        Some(run) => own_run(state, user, run).await.ok(),
        None => None,
    }
    .filter(|r| r.thread_id == thread.id)
    .ok_or_else(|| ApiError::NotFound(format!("Run {run_id} not found")))?;
    Ok((thread, run))
}

pub(super) async fn get(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path((id, run_id)): Path<(String, String)>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let (_, run) = thread_run(&state, &auth.user, &id, &run_id).await?;
    Ok(Json(wire::run(&run, &json!({}), "reject")))
}

/// `POST …/cancel?wait=0|1&action=interrupt|rollback`: cancels the run (both actions keep
/// its messages) and answers it once it has ended.
pub(super) async fn cancel(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path((id, run_id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Response, LgError> {
    let KeyAuth(auth) = auth?;
    let (_, run) = thread_run(&state, &auth.user, &id, &run_id).await?;
    let run = if run.status.is_terminal() {
        run
    } else {
        state.runtime.cancel(run.id).await.map_err(ApiError::from)?
    };
    let status = if query.get("wait").is_some_and(|w| w == "1" || w == "true") {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Json(wire::run(&run, &json!({}), "reject"))).into_response())
}

/// `GET …/join`: waits for the run to end (or wait for a person) and answers the thread's
/// values.
pub(super) async fn join(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path((id, run_id)): Path<(String, String)>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let (thread, run) = thread_run(&state, &auth.user, &id, &run_id).await?;
    Ok(Json(final_values(&state, &thread, run.id).await?))
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct JoinStreamQuery {
    #[serde(default)]
    stream_mode: Option<String>,
    #[serde(default)]
    cancel_on_disconnect: Option<bool>,
}

/// `GET …/stream`: joins a run's stream; `Last-Event-ID` resumes after that event.
pub(super) async fn join_stream(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path((id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
    query: Result<Query<JoinStreamQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, LgError> {
    let KeyAuth(auth) = auth?;
    let Query(query) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let (thread, run) = thread_run(&state, &auth.user, &id, &run_id).await?;
    let after = match headers.get("last-event-id") {
        None => 0,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|id| i64::try_from(*id).is_ok())
            .ok_or_else(|| ApiError::BadRequest("Last-Event-ID must be an event id".into()))?,
    };
    let modes = modes(query.stream_mode.map(Value::String).as_ref())?;
    let graph_id = state
        .store
        .agent(run.agent_id)
        .await
        .map_err(ApiError::from)?
        .map_or_else(String::new, |a| a.slug);
    Ok(respond(StreamSpec {
        runtime: state.runtime.clone(),
        store: state.store.clone(),
        thread,
        run,
        graph_id,
        modes,
        after,
        cancel_on_disconnect: query.cancel_on_disconnect.unwrap_or(false),
    })
    .await?)
}
