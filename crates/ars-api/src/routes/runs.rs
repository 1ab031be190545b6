//! Runs: start one on a thread, read it, wait for it, cancel it.
//!
//! A run executes in the background (`ars-runtime`); `POST` answers `202` at once. At most one
//! run is active per thread: a second start is a `409 busy` naming the active run, never a
//! hidden queue. Runs are their owner's alone, like threads: anyone else gets a 404.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use chrono::{DateTime, Utc};

use ars_domain::{
    AgentId, Delivery, MessageId, Run, RunErrorCode, RunId, RunInput, RunStatus, ThreadId, Usage,
    UserId,
};
use ars_runtime::{StartRun, Waited};

use super::threads::owned_thread;
use crate::error::input_reason;
use crate::extract::{ApiJson, ApiQuery};
use crate::{ApiError, AppState, Auth, ErrorBody};

/// `wait` blocks this long when the caller does not say.
const DEFAULT_WAIT_S: u64 = 30;

/// The longest `wait` a caller may ask for.
const MAX_WAIT_S: u64 = 600;

/// The body of `POST /api/threads/{id}/runs`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartRunBody {
    /// The user's message: 1 to 100 000 characters, not blank.
    #[schema(
        max_length = 100_000,
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    input: String,
    /// Regenerate or edit: the id of a user message of this thread's history. It and every
    /// message after it leave the history (the model no longer sees them; they are listed only
    /// with `GET /api/threads/{id}/messages?include_replaced=true`), and `input` takes its
    /// place, in the same step that starts the run. Regenerate: the same text; edit: new
    /// text. Their runs stay in the thread's runs; their subagent threads and the workdir's
    /// files stay as they are.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Uuid)]
    replace_from: Option<MessageId>,
}

/// A run as stored and served.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[schema(as = Run)]
pub struct RunView {
    pub id: RunId,
    pub thread_id: ThreadId,
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub status: RunStatus,
    /// The user's message that started the run.
    pub input: String,
    /// The final assistant text, once there is one.
    pub output: Option<String>,
    pub error: Option<String>,
    /// Set on some failed runs: what went wrong as a stable code a client can translate
    /// (`error` keeps the words).
    pub error_code: Option<RunErrorCode>,
    /// The values to word the end with in a client's own language (a timeout's `limit_s`).
    #[schema(value_type = Object)]
    pub error_params: serde_json::Map<String, serde_json::Value>,
    /// This run's own tokens (children's are reported separately and rolled up by the caller).
    pub usage: Usage,
    /// Set on subagent runs: the run whose tool call started this one.
    pub parent_run_id: Option<RunId>,
    /// Set on subagent runs: the tool call id in the parent run.
    pub parent_tool_call_id: Option<String>,
    /// Set on subagent runs: whether the parent waits for it or it runs in the background.
    pub delivery: Option<Delivery>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// What a `waiting` run needs decisions on (`POST /api/runs/{id}/decisions`); empty
    /// otherwise.
    pub pending: Vec<ars_domain::PendingItem>,
}

impl From<Run> for RunView {
    fn from(run: Run) -> Self {
        let (parent_run_id, parent_tool_call_id, delivery) = match run.lineage {
            Some(l) => (Some(l.parent_run_id), l.parent_tool_call_id, l.delivery),
            None => (None, None, None),
        };
        Self {
            id: run.id,
            thread_id: run.thread_id,
            agent_id: run.agent_id,
            user_id: run.user_id,
            status: run.status,
            input: run.input,
            output: run.output,
            error_params: crate::error::params_json(&ars_domain::run::end_params(
                run.status,
                run.error.as_deref(),
            )),
            error: run.error,
            error_code: run.error_code,
            usage: run.usage,
            parent_run_id,
            parent_tool_call_id,
            delivery,
            created_at: run.created_at,
            started_at: run.started_at,
            finished_at: run.finished_at,
            pending: run.pending,
        }
    }
}

/// The answer to `POST /api/threads/{id}/runs`: the run, `running` (`pending` while every
/// execution slot is taken).
#[derive(Debug, Serialize, ToSchema)]
pub struct RunAccepted {
    run: RunView,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct WaitQuery {
    /// Seconds to wait for the run to end: 0 to 600, default 30.
    #[serde(default)]
    #[param(minimum = 0, maximum = 600)]
    timeout_s: Option<u64>,
}

/// The answer to `GET /api/runs/{id}/wait`.
#[derive(Debug, Serialize, ToSchema)]
pub struct WaitReply {
    /// The run: terminal, waiting for a decision, or as it stood when the wait timed out.
    run: RunView,
    /// `true` when the timeout passed before the run ended.
    wait_timed_out: bool,
}

/// Loads a run the caller owns; anything else (malformed id, missing, someone else's) is a 404.
pub(crate) async fn owned_run(state: &AppState, auth: &Auth, id: &str) -> Result<Run, ApiError> {
    let Some(id) = RunId::parse(id) else {
        return Err(ApiError::not_found(ars_domain::Subject::Run));
    };
    state
        .store
        .run(id)
        .await?
        .filter(|r| r.user_id == auth.user.id)
        .ok_or_else(|| ApiError::not_found(ars_domain::Subject::Run))
}

/// Sends the user's message and starts the agent on it, in the background. Follow the run with
/// `GET /api/runs/{id}/events` (SSE) or `GET /api/runs/{id}/wait`. With `replace_from`, the
/// message replaces one of the thread's user messages and everything after it (regenerate,
/// edit-and-resend).
#[utoipa::path(post, path = "/threads/{id}/runs", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")), request_body = StartRunBody,
    responses(
        (status = 202, body = RunAccepted),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`busy`: the thread has an active run, \
            `active_run_id` names it; `conflict` naming `replace_from`: it is not a user message \
            of the thread's history"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "Blank or over-long `input`; a \
            `replace_from` that is not a message id"),
    ))]
pub async fn start_run(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<StartRunBody>,
) -> Result<(StatusCode, Json<RunAccepted>), ApiError> {
    let input = RunInput::new(body.input)
        .map_err(|e| ApiError::unprocessable("input", e.to_string()).because(input_reason(&e)))?;
    let thread = owned_thread(&state, &auth, &id).await?;
    let run = state
        .runtime
        .start_run(StartRun {
            thread,
            caller: auth.caller(),
            input,
            parent: None,
            replace_from: body.replace_from,
            woken_by: None,
        })
        .await?;
    Ok((StatusCode::ACCEPTED, Json(RunAccepted { run: run.into() })))
}

/// Every run of a thread, oldest first.
#[utoipa::path(get, path = "/threads/{id}/runs", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")),
    responses((status = 200, body = [RunView]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_runs(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<RunView>>, ApiError> {
    let thread = owned_thread(&state, &auth, &id).await?;
    let runs = state.store.thread_runs(&thread.id).await?;
    Ok(Json(runs.into_iter().map(RunView::from).collect()))
}

/// A run with its tokens rolled up over the subagent runs it started.
#[derive(Debug, serde::Serialize, ToSchema)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: RunView,
    /// `usage` plus the usage of every child (subagent) run of this run.
    pub total_usage: ars_domain::Usage,
}

/// One run, as it stands, with `total_usage` including its subagent runs.
#[utoipa::path(get, path = "/runs/{id}", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = RunDetail), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_run(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<RunDetail>, ApiError> {
    let run = owned_run(&state, &auth, &id).await?;
    let total_usage = state.runtime.total_usage(&run).await?;
    Ok(Json(RunDetail {
        run: run.into(),
        total_usage,
    }))
}

/// Blocks until the run ends, starts waiting for a decision (`status: waiting`, with its
/// `pending` items), or `timeout_s` passes; on timeout answers the current snapshot with
/// `wait_timed_out: true`.
#[utoipa::path(get, path = "/runs/{id}/wait", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Run id"), WaitQuery),
    responses(
        (status = 200, body = WaitReply),
        (status = 400, body = ErrorBody, description = "Unreadable query"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "`timeout_s` over 600"),
    ))]
pub async fn wait_run(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<WaitQuery>,
) -> Result<Json<WaitReply>, ApiError> {
    let timeout_s = query.timeout_s.unwrap_or(DEFAULT_WAIT_S);
    if timeout_s > MAX_WAIT_S {
        return Err(ApiError::unprocessable(
            "timeout_s",
            format!("timeout_s must be at most {MAX_WAIT_S}"),
        ));
    }
    let run = owned_run(&state, &auth, &id).await?;
    // An ended run stays as it ended: the row just read is the answer.
    let waited = if run.status.is_terminal() {
        Waited::Finished(run)
    } else {
        state
            .runtime
            .wait_for_turn(run.id, Duration::from_secs(timeout_s))
            .await?
    };
    Ok(Json(WaitReply {
        wait_timed_out: matches!(&waited, Waited::StillRunning(run) if run.status != RunStatus::Waiting),
        run: waited.into_run().into(),
    }))
}

/// Cancels a run and answers it once it has ended (`cancelled`, or whatever it reached first).
/// Cancelling a run that already ended answers it unchanged.
#[utoipa::path(post, path = "/runs/{id}/cancel", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = RunView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn cancel_run(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    let run = owned_run(&state, &auth, &id).await?;
    if run.status.is_terminal() {
        return Ok(Json(run.into()));
    }
    Ok(Json(state.runtime.cancel(run.id).await?.into()))
}
