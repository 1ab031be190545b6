//! `/api/mcp`: ARS's agents as the tools of an MCP server (Streamable HTTP, `rmcp`'s server
//! side), so Claude Code, Cursor or any MCP client can hand work to an ARS agent — and through
//! it to its subagents.
//!
//! Every request carries `Authorization: Bearer <token>` (an API token); the token's user is
//! checked on each request, exactly as the REST API does (a middleware answers 401/403 before
//! MCP sees the request). Each normal agent that user can see is one tool: its name is the
//! agent's slug, its description the agent's, its input `{input, thread_id?}`. A call starts a
//! run — on a new thread, or on `thread_id` (one of the user's threads with that agent) to go
//! on with a conversation — sends the run's progress as progress notifications when the client
//! asked for them, and answers the final text with the thread id (`structuredContent`
//! `{thread_id, run_id, status}`). A client's cancellation cancels the run.
//!
//! Sessions are shared by every instance through the store: a session's `initialize`
//! parameters are saved when it opens, so another instance restores it on its first request
//! there; and each call in flight is recorded with its run, so a client's cancellation
//! reaching any instance cancels the run wherever it executes. No session affinity is needed.
//! A session belongs to the user who opened it (`mcp_sessions.user_id`): another user's
//! request in it, whatever its method, is a 404.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::model::{CancelledNotificationParam, RequestId};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use ars_domain::{Agent, Caller, RunInput, RunInputError, RunStatus, Thread, ThreadId, User};
use ars_events::EventKind;
use ars_runtime::{StartRun, Waited};
use ars_store::{AgentFilter, AgentKinds};

use crate::{ApiError, AppState, Auth};

/// Where the endpoint is mounted.
pub const PATH: &str = "/api/mcp";
/// How long one wait for the run lasts before looking at the client again.
const WAIT_SLICE: Duration = Duration::from_secs(30);
/// The header that names a request's session.
const SESSION_HEADER: &str = "mcp-session-id";
/// How long a session is kept in the store after it was opened.
const SESSION_LIFETIME: chrono::Duration = chrono::Duration::days(7);

/// The user a request to `/api/mcp` acts for, put in the request's extensions by
/// [`authenticate`] (rmcp hands the request's parts to the handler).
#[derive(Clone)]
struct McpUser(User);

/// The service mounted at [`PATH`].
pub fn service(
    state: AppState,
    shutdown: CancellationToken,
) -> StreamableHttpService<AgentsServer, LocalSessionManager> {
    // The Host check guards unauthenticated local servers against DNS rebinding; every
    // request here needs a bearer token a rebinding page cannot have, and ARS runs under any
    // host name.
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown)
        .disable_allowed_hosts();
    config.session_store = Some(Arc::new(SharedSessions(Arc::clone(&state.store))));
    StreamableHttpService::new(
        move || {
            Ok(AgentsServer {
                state: state.clone(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// Checks the bearer token of every request to the endpoint, as the REST API's `Auth` does,
/// and keeps each session to the user who opened it: a request carrying another user's (or an
/// unknown) `Mcp-Session-Id` is a 404 that reaches nothing, and a session opened here is
/// given its owner before its id is answered — so before anyone can present it.
pub async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let auth = match <Auth as axum::extract::FromRequestParts<AppState>>::from_request_parts(
        &mut parts, &state,
    )
    .await
    {
        Ok(auth) => auth,
        Err(error) => return error.into_response(),
    };
    let user = auth.user.id;
    let session = parts
        .headers
        .get(SESSION_HEADER)
        .map(|value| value.to_str().unwrap_or_default().to_owned());
    if let Some(session) = &session {
        match state.store.mcp_session_owner(session).await {
            Ok(Some(owner)) if owner == user => {}
            Ok(_) => return ApiError::not_found(ars_domain::Subject::McpSession).into_response(),
            Err(e) => return ApiError::from(e).into_response(),
        }
    }
    parts.extensions.insert(McpUser(auth.user));
    let response = next.run(Request::from_parts(parts, body)).await;
    if session.is_none()
        && let Some(opened) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
    {
        match state.store.bind_mcp_session(opened, user).await {
            Ok(ars_store::Bound::Bound) => {}
            // The session's state was not saved (rmcp logged why): nobody can use it.
            Ok(ars_store::Bound::Refused) => {
                return ApiError::Internal(format!("MCP session {opened} was not stored"))
                    .into_response();
            }
            Err(e) => return ApiError::from(e).into_response(),
        }
    }
    response
}

/// MCP sessions in the store, so every instance serves every session.
struct SharedSessions(Arc<dyn ars_store::Store>);

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        match self.0.mcp_session(session_id).await? {
            Some(text) => Ok(Some(serde_json::from_str(&text)?)),
            None => Ok(None),
        }
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let text = serde_json::to_string(state)?;
        let expire_before = ars_domain::time::now() - SESSION_LIFETIME;
        Ok(self
            .0
            .save_mcp_session(session_id, &text, expire_before)
            .await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.0.delete_mcp_session(session_id).await?)
    }
}

/// The session a request or notification belongs to (its `Mcp-Session-Id`).
fn session_of(extensions: &rmcp::model::Extensions) -> Option<String> {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(SESSION_HEADER))
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// A request id as the store keeps it.
fn request_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// One session's handler: the agents of the user each request is authenticated as.
#[derive(Clone)]
pub struct AgentsServer {
    state: AppState,
}

impl AgentsServer {
    fn user(context: &RequestContext<RoleServer>) -> Result<User, ErrorData> {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<McpUser>())
            .map(|user| user.0.clone())
            .ok_or_else(|| ErrorData::invalid_request("not authenticated", None))
    }

    async fn agents(&self, caller: &Caller) -> Result<Vec<Agent>, ErrorData> {
        let filter = AgentFilter {
            visible_to: Some(caller.id),
            kinds: AgentKinds::Chat,
        };
        let agents = self
            .state
            .store
            .list_agents(filter)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(agents
            .into_iter()
            .filter(|agent| !agent.is_subagent && caller.can_view(agent))
            .collect())
    }

    /// The thread a call runs on: `thread_id` (the caller's, with this agent), or a new one.
    async fn thread(
        &self,
        user: &User,
        agent: &Agent,
        thread_id: Option<&str>,
        input: &str,
    ) -> Result<Thread, String> {
        let store = &self.state.store;
        match thread_id {
            Some(id) => {
                let thread = match ThreadId::parse(id) {
                    Some(id) => store.thread(&id).await.map_err(|e| e.to_string())?,
                    None => None,
                };
                match thread {
                    Some(thread) if thread.user_id == user.id && thread.agent_id == agent.id => {
                        Ok(thread)
                    }
                    _ => Err(format!(
                        "no thread `{id}` of yours with agent `{}`; leave thread_id out to start \
                         a new one",
                        agent.slug
                    )),
                }
            }
            None => {
                let title: String = input.split_whitespace().collect::<Vec<_>>().join(" ");
                let title: String = title.chars().take(60).collect();
                let thread = Thread::new_root(user.id, agent.id, title);
                store
                    .create_thread(&thread)
                    .await
                    .map_err(|e| e.to_string())
            }
        }
    }
}

fn tool_of(agent: &Agent) -> Tool {
    let description = if agent.description.trim().is_empty() {
        format!("Ask the ARS agent “{}”.", agent.name)
    } else {
        agent.description.clone()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "input": {"type": "string", "description": "What to ask the agent", "minLength": 1},
            "thread_id": {"type": "string", "description":
                "Go on with this conversation (the thread_id an earlier call answered); leave out to start a new one"}
        },
        "required": ["input"],
        "additionalProperties": false
    });
    let schema: JsonObject = match schema {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(agent.slug.clone(), description, Arc::new(schema)).with_title(agent.name.clone())
}

fn failure(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(text.into())]).into()
}

/// A run event as one progress line, if it is worth one.
fn progress_line(kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::ToolCallStarted { name, .. } => Some(format!("calling {name}")),
        EventKind::ToolCallFinished {
            name,
            is_error: true,
            ..
        } => Some(format!("{name} failed")),
        EventKind::Error { message } => Some(message.clone()),
        EventKind::RunStatus { status, .. } => Some(format!("run {}", status.as_str())),
        _ => None,
    }
}

impl AgentsServer {
    async fn forget_call(&self, call: Option<&(String, String)>) {
        if let Some((session, request)) = call
            && let Err(e) = self.state.store.delete_mcp_call(session, request).await
        {
            tracing::debug!(error = %e, "cannot forget an MCP call");
        }
    }
}

impl ServerHandler for AgentsServer {
    /// A client's cancellation: the call's run is cancelled wherever it executes (a call this
    /// instance serves is also given up through its own token).
    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        let (Some(request), Some(session)) =
            (notification.request_id, session_of(&context.extensions))
        else {
            return;
        };
        let Some(user) = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<McpUser>())
        else {
            return;
        };
        let store = &self.state.store;
        let Ok(Some(run_id)) = store.mcp_call_run(&session, &request_key(&request)).await else {
            return;
        };
        // Only the caller's own runs.
        match store.run(run_id).await {
            Ok(Some(run)) if run.user_id == user.0.id && !run.status.is_terminal() => {
                tracing::info!(run_id = %run_id, "the MCP client cancelled the call; cancelling the run");
                let _ = self.state.runtime.cancel(run_id).await;
            }
            _ => {}
        }
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("ars", env!("CARGO_PKG_VERSION")).with_title("ARS"),
            )
            .with_instructions(
                "Each tool is an ARS agent. Call it with `input` (what to ask); the answer ends \
                 with the thread id, which `thread_id` takes to go on with the same \
                 conversation.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let user = Self::user(&context)?;
        let agents = self.agents(&Caller::from(&user)).await?;
        Ok(ListToolsResult::with_all_items(
            agents.iter().map(tool_of).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let user = Self::user(&context)?;
        let caller = Caller::from(&user);
        let name: &str = request.name.as_ref();
        let agent = self
            .agents(&caller)
            .await?
            .into_iter()
            .find(|agent| agent.slug == name);
        let Some(agent) = agent else {
            return Ok(failure(format!("no agent `{name}` that you can use")));
        };
        let args = request.arguments.unwrap_or_default();
        // The one rule of a run's input, in this endpoint's words.
        let input = match args
            .get("input")
            .and_then(|v| v.as_str())
            .map(RunInput::new)
        {
            Some(Ok(input)) => input,
            None | Some(Err(RunInputError::Blank)) => {
                return Ok(failure("`input` must be a non-empty string"));
            }
            Some(Err(RunInputError::TooLong)) => {
                return Ok(failure(format!(
                    "`input` is longer than {} characters",
                    RunInput::MAX_CHARS
                )));
            }
        };
        if let Some(extra) = args.keys().find(|k| *k != "input" && *k != "thread_id") {
            return Ok(failure(format!("unknown argument `{extra}`")));
        }
        let thread_id = match args.get("thread_id") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(id)) => Some(id.as_str()),
            Some(_) => return Ok(failure("`thread_id` must be a string")),
        };
        let thread = match self.thread(&user, &agent, thread_id, input.as_str()).await {
            Ok(thread) => thread,
            Err(message) => return Ok(failure(message)),
        };
        let thread_id = thread.id.clone();
        let runtime = &self.state.runtime;
        let run = match runtime
            .start_run(StartRun {
                thread,
                caller,
                input,
                parent: None,
                replace_from: None,
                woken_by: None,
            })
            .await
        {
            Ok(run) => run,
            Err(e) => return Ok(failure(e.to_string())),
        };
        tracing::info!(run_id = %run.id, agent = %agent.slug, user = %user.id, "run started over MCP");
        // So that a cancellation reaching another instance finds the run.
        let call =
            session_of(&context.extensions).map(|session| (session, request_key(&context.id)));
        if let Some((session, request)) = &call
            && let Err(e) = self
                .state
                .store
                .save_mcp_call(session, request, run.id)
                .await
        {
            tracing::warn!(run_id = %run.id, error = %e, "cannot record the MCP call; only this instance can cancel it");
        }

        // Progress: the run's events as lines, while the client listens.
        let progress = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            let events = Arc::clone(runtime.events());
            let run_id = run.id;
            tokio::spawn(async move {
                let Ok(mut stream) = events.subscribe(run_id, 0).await else {
                    return;
                };
                let mut step = 0.0;
                while let Some(Ok(event)) = stream.next().await {
                    if let Some(line) = progress_line(&event.kind) {
                        step += 1.0;
                        let note =
                            ProgressNotificationParam::new(token.clone(), step).with_message(line);
                        if peer.notify_progress(note).await.is_err() {
                            return;
                        }
                    }
                }
            })
        });

        let ended = loop {
            tokio::select! {
                () = context.ct.cancelled() => {
                    tracing::info!(run_id = %run.id, "the MCP client cancelled the call; cancelling the run");
                    let _ = runtime.cancel(run.id).await;
                    if let Some(task) = progress {
                        task.abort();
                    }
                    self.forget_call(call.as_ref()).await;
                    return Err(ErrorData::internal_error("cancelled by the client", None));
                }
                waited = runtime.wait(run.id, WAIT_SLICE) => match waited {
                    Ok(Waited::Finished(run)) => break run,
                    Ok(Waited::StillRunning(_)) => continue,
                    Err(e) => {
                        self.forget_call(call.as_ref()).await;
                        return Ok(failure(e.to_string()));
                    }
                },
            }
        };
        self.forget_call(call.as_ref()).await;
        if let Some(task) = progress {
            // The stream ends with the run's last event; the last lines go out first.
            let _ = tokio::time::timeout(Duration::from_secs(2), task).await;
        }
        let structured = json!({
            "thread_id": thread_id,
            "run_id": ended.id,
            "status": ended.status.as_str(),
        });
        let footer = format!("[thread_id: {thread_id}]");
        let mut result = if ended.status == RunStatus::Success {
            CallToolResult::success(vec![
                ContentBlock::text(ended.output.clone().unwrap_or_default()),
                ContentBlock::text(footer),
            ])
        } else {
            let why = ended
                .error
                .clone()
                .unwrap_or_else(|| format!("the run ended {}", ended.status.as_str()));
            CallToolResult::error(vec![ContentBlock::text(why), ContentBlock::text(footer)])
        };
        result.structured_content = Some(structured);
        Ok(result.into())
    }
}
