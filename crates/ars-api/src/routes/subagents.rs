//! `GET /api/threads/{id}/subagents`: the child runs started from a thread — what the UI's
//! status panel lists (and `GET /api/threads/{id}/events` keeps current). Each child streams
//! over `GET /api/runs/{id}/events` and keeps its history at
//! `GET /api/threads/{child}/messages`.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{Run, RunErrorCode, RunId, RunStatus, Thread, ThreadId, Usage};

use super::threads::owned_thread;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// One subagent run of a thread: the whole entry, so a client that gets a newer one (from the
/// thread's event stream) replaces the one it has with the same `run_id`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubagentRun {
    pub run_id: RunId,
    /// The subagent's slug.
    pub subagent_slug: Option<String>,
    /// The task it was given (the child run's input).
    pub description: String,
    /// The child thread: continue it, or read its history.
    pub thread_id: ThreadId,
    pub status: RunStatus,
    /// The parent run and tool call that started it.
    pub parent_run_id: Option<RunId>,
    pub parent_tool_call_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub usage: Usage,
    /// `usage` plus that of the runs it started: subagents start none, so today the same as
    /// `usage` (and the same field as a run's `total_usage`).
    pub total_usage: Usage,
    /// The final answer once there is one.
    pub output: Option<String>,
    /// Why it failed (`error`, `timeout`, `interrupted`), in words.
    pub error: Option<String>,
    /// Set on some failures: the stable code a client can translate (`error` keeps the words).
    pub error_code: Option<RunErrorCode>,
    /// The values to word the end with in a client's own language (a timeout's `limit_s`).
    #[schema(value_type = Object)]
    pub error_params: serde_json::Map<String, serde_json::Value>,
}

impl SubagentRun {
    /// The entry of child run `run` of the subagent `slug`.
    pub(crate) fn new(run: Run, slug: Option<String>) -> Self {
        let (parent_run_id, parent_tool_call_id) = match run.lineage {
            Some(l) => (Some(l.parent_run_id), l.parent_tool_call_id),
            None => (None, None),
        };
        Self {
            subagent_slug: slug,
            run_id: run.id,
            description: run.input,
            thread_id: run.thread_id,
            status: run.status,
            parent_run_id,
            parent_tool_call_id,
            created_at: run.created_at,
            started_at: run.started_at,
            finished_at: run.finished_at,
            usage: run.usage,
            total_usage: run.usage,
            output: run.output,
            error_params: crate::error::params_json(&ars_domain::run::end_params(
                run.status,
                run.error.as_deref(),
            )),
            error: run.error,
            error_code: run.error_code,
        }
    }
}

/// The subagent entries of `thread`, oldest first.
pub(crate) async fn entries(
    state: &AppState,
    thread: &Thread,
) -> Result<Vec<SubagentRun>, ApiError> {
    let runs = ars_runtime::subagent_runs(state.store.as_ref(), thread, thread.user_id).await?;
    Ok(runs
        .into_iter()
        .map(|r| SubagentRun::new(r.run, r.slug))
        .collect())
}

/// The thread's subagent runs, oldest first.
#[utoipa::path(get, path = "/threads/{id}/subagents", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")),
    responses((status = 200, body = [SubagentRun]), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_subagents(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<SubagentRun>>, ApiError> {
    let thread = owned_thread(&state, &auth, &id).await?;
    Ok(Json(entries(&state, &thread).await?))
}
