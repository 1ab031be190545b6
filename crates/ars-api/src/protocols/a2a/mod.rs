//! A2A v1.0, one endpoint per agent under `/a2a/{agent_slug}`: the agent card at
//! `/a2a/{agent_slug}/.well-known/agent-card.json` and the JSON-RPC binding at
//! `POST /a2a/{agent_slug}` — `SendMessage`, `SendStreamingMessage` (SSE of task status and
//! artifact updates), `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`.
//!
//! A task is an ARS run, a `contextId` an ARS thread: a message naming a context of the
//! caller's continues it (a new context id the client picks starts a thread with that id); a
//! message naming a task that waits for a person (`TASK_STATE_INPUT_REQUIRED`) answers it.
//! Only a caller who can use the agent sees its card or reaches its endpoint (anyone else gets
//! a 404); a task of another user's, or of another agent, is "task not found". JSON-RPC
//! errors are answered with HTTP 200 and the codes the specification names.

mod stream;
mod wire;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use ars_domain::{Agent, DecisionInput, PendingRequest, Run, RunId, RunStatus, Thread, User};

use crate::extract::{ApiBytes, KeyAuth};
use crate::protocols::{own_run, run_input, start, usable_agent};
use crate::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/{slug}/.well-known/agent-card.json", get(card))
        .route("/{slug}", post(rpc))
        .fallback(|| async { ApiError::NotFound("no such A2A endpoint".into()) })
}

/// The JSON-RPC error codes A2A names.
mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    pub const TASK_NOT_FOUND: i64 = -32001;
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    pub const PUSH_NOT_SUPPORTED: i64 = -32003;
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    pub const EXTENDED_CARD_NOT_CONFIGURED: i64 = -32007;
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
}

/// A JSON-RPC error: its code and words.
#[derive(Debug)]
pub(super) struct RpcError {
    code: i64,
    message: String,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    fn task_not_found(id: &str) -> Self {
        Self::new(code::TASK_NOT_FOUND, format!("Task {id} not found"))
    }

    fn params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }
}

impl From<ApiError> for RpcError {
    fn from(error: ApiError) -> Self {
        let code = match error.status().as_u16() {
            404 => code::TASK_NOT_FOUND,
            400 | 409 | 413 | 422 => code::INVALID_PARAMS,
            _ => code::INTERNAL,
        };
        Self::new(code, error.public_message())
    }
}

impl From<ars_store::StoreError> for RpcError {
    fn from(error: ars_store::StoreError) -> Self {
        ApiError::from(error).into()
    }
}

impl From<ars_runtime::RuntimeError> for RpcError {
    fn from(error: ars_runtime::RuntimeError) -> Self {
        ApiError::from(error).into()
    }
}

fn reply(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error_reply(id: &Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": error.code, "message": error.message}})
}

/// The URL a client reached this server at: the `Host` it sent, over HTTPS when a proxy in
/// front says so (`X-Forwarded-Proto`). Only what the card tells clients depends on it.
fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| !h.is_empty() && h.len() <= 255 && !h.contains(['/', ' ', '"']))
        .unwrap_or("localhost");
    let https = headers
        .get("x-forwarded-proto")
        .is_some_and(|p| p.as_bytes().eq_ignore_ascii_case(b"https"));
    format!("{}://{host}", if https { "https" } else { "http" })
}

/// `GET /a2a/{slug}/.well-known/agent-card.json`: the agent's card, for a caller who can use
/// it: its endpoint, streaming, the bearer scheme, and one skill per capability it declares
/// (itself, and each tool, Skill, subagent, knowledge base and MCP server it names).
async fn card(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(slug): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let KeyAuth(auth) = auth?;
    let agent = usable_agent(&state, &auth.caller(), &slug, true).await?;
    let base = base_url(&headers);
    let description = if agent.description.trim().is_empty() {
        format!("The ARS agent “{}”.", agent.name)
    } else {
        agent.description.clone()
    };
    let mut skills = vec![json!({
        "id": "chat",
        "name": agent.name,
        "description": description,
        "tags": ["chat"],
    })];
    let context = &agent.config_json.context;
    let declared: [(&str, &Option<Vec<String>>, &str); 5] = [
        ("tool", &context.tools, "A tool the agent may call"),
        ("skill", &context.skills, "A Skill the agent may use"),
        (
            "subagent",
            &context.subagents,
            "A subagent the agent may delegate to",
        ),
        (
            "knowledge",
            &context.knowledge_bases,
            "A knowledge base the agent searches",
        ),
        (
            "mcp",
            &context.mcp_servers,
            "An MCP server whose tools the agent may call",
        ),
    ];
    for (kind, names, what) in declared {
        for name in names.iter().flatten() {
            skills.push(json!({
                "id": format!("{kind}:{name}"),
                "name": name,
                "description": format!("{what}: {name}."),
                "tags": [kind],
            }));
        }
    }
    Ok(Json(json!({
        "name": agent.name,
        "description": description,
        "version": "1.0.0",
        "provider": {"organization": "ARS", "url": base},
        "supportedInterfaces": [{
            "url": format!("{base}/a2a/{}", agent.slug),
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills,
    })))
}

/// `POST /a2a/{slug}`: one JSON-RPC request.
async fn rpc(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(slug): Path<String>,
    headers: HeaderMap,
    body: Result<ApiBytes, ApiError>,
) -> Result<Response, ApiError> {
    let KeyAuth(auth) = auth?;
    let agent = usable_agent(&state, &auth.caller(), &slug, true).await?;
    let ApiBytes(bytes) = body?;
    let request = match parse(&bytes) {
        Ok(request) => request,
        Err((id, error)) => return Ok(Json(error_reply(&id, &error)).into_response()),
    };
    let id = request.id.clone();
    if let Some(version) = headers.get("a2a-version").and_then(|v| v.to_str().ok())
        && !(version.trim() == "1" || version.trim().starts_with("1."))
    {
        let error = RpcError::new(
            code::VERSION_NOT_SUPPORTED,
            format!("A2A version {version} is not supported; this endpoint speaks 1.0"),
        );
        return Ok(Json(error_reply(&id, &error)).into_response());
    }
    let call = Call {
        state: &state,
        user: &auth.user,
        agent: &agent,
        params: request.params,
    };
    let answer = match request.method.as_str() {
        "SendMessage" => call.send(false).await,
        "SendStreamingMessage" => call.send(true).await,
        "GetTask" => call.get().await,
        "ListTasks" => call.list().await,
        "CancelTask" => call.cancel().await,
        "SubscribeToTask" => call.subscribe().await,
        "GetExtendedAgentCard" => Err(RpcError::new(
            code::EXTENDED_CARD_NOT_CONFIGURED,
            "this agent has no extended card",
        )),
        method if method.contains("PushNotificationConfig") => Err(RpcError::new(
            code::PUSH_NOT_SUPPORTED,
            "push notifications are not supported; stream or poll the task",
        )),
        method => Err(RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("no method `{method}`"),
        )),
    };
    Ok(match answer {
        Ok(Answer::Result(result)) => Json(reply(&id, result)).into_response(),
        Ok(Answer::Stream(run)) => stream::respond(&state, id, *run).await,
        Err(error) => Json(error_reply(&id, &error)).into_response(),
    })
}

struct Request {
    id: Value,
    method: String,
    params: Value,
}

/// Reads a JSON-RPC 2.0 request; what cannot be read is an error with the id, if any.
fn parse(bytes: &[u8]) -> Result<Request, (Value, RpcError)> {
    use ars_domain::nesting::{MAX_JSON_DEPTH, check_json_depth};
    check_json_depth(bytes, MAX_JSON_DEPTH)
        .map_err(|e| (Value::Null, RpcError::new(code::PARSE_ERROR, e.to_string())))?;
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        (
            Value::Null,
            RpcError::new(code::PARSE_ERROR, format!("malformed JSON: {e}")),
        )
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let invalid = |why: &str| (id.clone(), RpcError::new(code::INVALID_REQUEST, why));
    if !matches!(id, Value::Null | Value::String(_) | Value::Number(_)) {
        return Err((
            Value::Null,
            RpcError::new(code::INVALID_REQUEST, "`id` is a string or a number"),
        ));
    }
    if value.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(invalid("a JSON-RPC 2.0 request has `\"jsonrpc\": \"2.0\"`"));
    }
    let Some(method) = value.get("method").and_then(Value::as_str) else {
        return Err(invalid("a request names its `method`"));
    };
    let params = value.get("params").cloned().unwrap_or_else(|| json!({}));
    if !params.is_object() {
        return Err((id.clone(), RpcError::params("`params` is an object")));
    }
    Ok(Request {
        id,
        method: method.to_owned(),
        params,
    })
}

/// What a method answers: a result, or a stream of a run's task updates.
enum Answer {
    Result(Value),
    Stream(Box<Run>),
}

struct Call<'a> {
    state: &'a AppState,
    user: &'a User,
    agent: &'a Agent,
    params: Value,
}

impl Call<'_> {
    fn str_param(&self, name: &str) -> Result<Option<&str>, RpcError> {
        match self.params.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(RpcError::params(format!("`{name}` is a string"))),
        }
    }

    fn history_length(&self) -> Result<Option<usize>, RpcError> {
        match self.params.get("historyLength") {
            None | Some(Value::Null) => Ok(None),
            Some(n) => n
                .as_u64()
                .map(|n| Some(usize::try_from(n).unwrap_or(usize::MAX)))
                .ok_or_else(|| RpcError::params("`historyLength` is a whole number")),
        }
    }

    /// The task `id` names: a run of the caller's with this agent.
    async fn task(&self, id: &str) -> Result<Run, RpcError> {
        let run = match RunId::parse(id) {
            Some(run) => own_run(self.state, self.user, run).await.ok(),
            None => None,
        };
        run.filter(|r| r.agent_id == self.agent.id)
            .ok_or_else(|| RpcError::task_not_found(id))
    }

    fn id_param(&self) -> Result<&str, RpcError> {
        self.str_param("id")?
            .ok_or_else(|| RpcError::params("`id` names the task"))
    }

    async fn get(&self) -> Result<Answer, RpcError> {
        let run = self.task(self.id_param()?).await?;
        Ok(Answer::Result(wire::task(&run, self.history_length()?)))
    }

    async fn cancel(&self) -> Result<Answer, RpcError> {
        let id = self.id_param()?;
        let run = self.task(id).await?;
        if run.status.is_terminal() {
            return Err(RpcError::new(
                code::TASK_NOT_CANCELABLE,
                format!("Task {id} has ended ({})", wire::state(run.status)),
            ));
        }
        let run = self.state.runtime.cancel(run.id).await?;
        Ok(Answer::Result(wire::task(&run, None)))
    }

    async fn subscribe(&self) -> Result<Answer, RpcError> {
        let id = self.id_param()?;
        let run = self.task(id).await?;
        if run.status.is_terminal() {
            return Err(RpcError::new(
                code::UNSUPPORTED_OPERATION,
                format!(
                    "Task {id} has ended ({}); read it with GetTask",
                    wire::state(run.status)
                ),
            ));
        }
        Ok(Answer::Stream(Box::new(run)))
    }

    /// The caller's tasks with this agent, newest first: those of `contextId`, or of every
    /// context; `status` filters by state, `pageSize` (at most 100) and `pageToken` page.
    async fn list(&self) -> Result<Answer, RpcError> {
        let threads: Vec<Thread> = match self.str_param("contextId")? {
            Some(context) => {
                let thread =
                    crate::protocols::own_thread(self.state, self.user, context, Some(self.agent))
                        .await
                        .map_err(|_| {
                            RpcError::params(format!(
                                "no context {context} of yours with this agent"
                            ))
                        })?;
                vec![thread]
            }
            None => self
                .state
                .store
                .list_threads(self.user.id)
                .await?
                .into_iter()
                .filter(|t| t.agent_id == self.agent.id)
                .collect(),
        };
        let mut runs = Vec::new();
        for thread in &threads {
            let of_thread = self.state.store.thread_runs(&thread.id).await?;
            runs.extend(
                of_thread
                    .into_iter()
                    .filter(|r| r.parent_run_id().is_none()),
            );
        }
        runs.sort_by_key(|r| std::cmp::Reverse(r.created_at));
        if let Some(wanted) = self.str_param("status")? {
            runs.retain(|r| wire::state(r.status) == wanted);
        }
        let total = runs.len();
        let size = match self.params.get("pageSize").and_then(Value::as_u64) {
            Some(n) => usize::try_from(n).unwrap_or(100).clamp(1, 100),
            None => 50,
        };
        let start = match self.str_param("pageToken")? {
            None | Some("") => 0,
            Some(token) => token
                .parse::<usize>()
                .map_err(|_| RpcError::params("`pageToken` is one this endpoint gave"))?,
        };
        let history = self.history_length()?;
        let page: Vec<Value> = runs
            .iter()
            .skip(start)
            .take(size)
            .map(|r| wire::task(r, history))
            .collect();
        let next = if start + page.len() < total {
            (start + page.len()).to_string()
        } else {
            String::new()
        };
        Ok(Answer::Result(json!({
            "tasks": page,
            "nextPageToken": next,
            "pageSize": size,
            "totalSize": total,
        })))
    }

    /// The text of a message's parts: text parts as they are, data parts as JSON; files
    /// (`raw`, `url`) are not read.
    fn text_of(message: &Value) -> Result<String, RpcError> {
        let parts = message
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(|| RpcError::params("`message.parts` is a list of parts"))?;
        let mut texts = Vec::with_capacity(parts.len());
        for part in parts {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                texts.push(text.to_owned());
            } else if let Some(data) = part.get("data") {
                texts.push(data.to_string());
            } else {
                return Err(RpcError::new(
                    code::CONTENT_TYPE_NOT_SUPPORTED,
                    "only text and data parts are read; send files' contents as text",
                ));
            }
        }
        Ok(texts.join("\n"))
    }

    async fn send(&self, streaming: bool) -> Result<Answer, RpcError> {
        let message = self
            .params
            .get("message")
            .filter(|m| m.is_object())
            .ok_or_else(|| RpcError::params("`message` is the message to send"))?;
        let text = Self::text_of(message)?;
        let text_field = |name: &str| match message.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(RpcError::params(format!("`message.{name}` is a string"))),
        };
        let run = if let Some(task) = text_field("taskId")? {
            self.answer(task, text).await?
        } else {
            let input = run_input(text, "message.parts")?;
            let thread = self
                .context(text_field("contextId")?, input.as_str())
                .await?;
            let run = start(self.state, self.user, thread, input).await?;
            tracing::info!(run_id = %run.id, agent = %self.agent.slug, user = %self.user.id, "run started over A2A");
            run
        };
        if streaming {
            return Ok(Answer::Stream(Box::new(run)));
        }
        let immediately = self
            .params
            .pointer("/configuration/returnImmediately")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let run = if immediately {
            run
        } else {
            crate::protocols::settled(&self.state.runtime, run.id).await?
        };
        let history = self
            .params
            .pointer("/configuration/historyLength")
            .and_then(Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        Ok(Answer::Result(json!({"task": wire::task(&run, history)})))
    }

    /// The thread a new task runs on: the caller's context with this agent, a new thread
    /// with the id the client chose, or a new thread.
    async fn context(&self, context: Option<&str>, input: &str) -> Result<Thread, RpcError> {
        let Some(context) = context else {
            return Ok(crate::protocols::seeded_thread(
                self.state,
                self.user,
                self.agent,
                Vec::new(),
                input,
            )
            .await?);
        };
        let id = ars_domain::ThreadId::parse(context).ok_or_else(|| {
            RpcError::params("`message.contextId` is at most 512 of A-Z, a-z, 0-9, `-` and `_`")
        })?;
        match self.state.store.thread(&id).await? {
            Some(thread)
                if thread.user_id == self.user.id
                    && thread.agent_id == self.agent.id
                    && thread.lineage.is_none() =>
            {
                Ok(thread)
            }
            Some(_) => Err(RpcError::params(format!(
                "context {context} is not one of yours with this agent; leave contextId out to start one"
            ))),
            None => {
                let title = crate::protocols::title_of(input);
                let thread = crate::protocols::thread_with_id(id, self.user, self.agent, title);
                Ok(self.state.store.create_thread(&thread).await?)
            }
        }
    }

    /// A message to a task that waits for a person decides it: it answers every question,
    /// and approves every call when it says `approve` or `yes` (rejects them otherwise, the
    /// message being why).
    async fn answer(&self, task: &str, text: String) -> Result<Run, RpcError> {
        let run = self.task(task).await?;
        if run.status != RunStatus::Waiting {
            return Err(RpcError::new(
                code::UNSUPPORTED_OPERATION,
                format!(
                    "Task {task} does not wait for input ({}); send without taskId to go on in its context",
                    wire::state(run.status)
                ),
            ));
        }
        let approve = matches!(
            text.trim().to_lowercase().as_str(),
            "approve" | "yes" | "y" | "ok"
        );
        let decisions: Vec<DecisionInput> = run
            .pending
            .iter()
            .map(|item| {
                let decision = match &item.request {
                    PendingRequest::Question { .. } => json!({"answer": text}),
                    _ if approve => json!({"decision": "approve"}),
                    _ => json!({"decision": "reject", "message": text}),
                };
                let mut decision = decision;
                decision["call_id"] = json!(item.call_id);
                serde_json::from_value(decision)
                    .map_err(|e| RpcError::new(code::INTERNAL, e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        Ok(self.state.runtime.decide(run.id, &decisions).await?)
    }
}
