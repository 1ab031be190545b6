//! `GET /api/threads/{id}/subagents`: the child runs started from a thread — what the UI's
//! status panel lists. Each child streams over `GET /api/runs/{id}/events` and keeps its
//! history at `GET /api/threads/{child}/messages`.

use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{RunId, RunStatus, ThreadId, Usage};

use super::threads::owned_thread;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// One subagent run of a thread.
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
    /// The final answer once there is one.
    pub output: Option<String>,
    pub error: Option<String>,
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
    let runs = ars_runtime::subagent_runs(state.store.as_ref(), &thread, auth.user.id).await?;
    let list = runs
        .into_iter()
        .map(|ars_runtime::SubagentRun { run: r, slug }| SubagentRun {
            subagent_slug: slug,
            run_id: r.id,
            description: r.input,
            thread_id: r.thread_id,
            status: r.status,
            parent_run_id: r.parent_run_id,
            parent_tool_call_id: r.parent_tool_call_id,
            created_at: r.created_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            usage: r.usage,
            output: r.output,
            error: r.error,
        })
        .collect();
    Ok(Json(list))
}
