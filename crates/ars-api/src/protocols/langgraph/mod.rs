//! The LangGraph / Agent Protocol API under `/langgraph`, so that `langgraph_sdk` clients and
//! deepagents' `AsyncSubAgent(graph_id=<agent slug>, url=".../langgraph")` work unchanged.
//!
//! - An assistant is an agent the caller can use, subagents included (`graph_id` = slug,
//!   `assistant_id` = id; either names it).
//! - A thread is an ARS thread with free `metadata`. One created before its first run talks
//!   with the assistant `graph_id` (or `metadata.graph_id`) names, else the default agent; its
//!   first run binds it to that run's assistant. A thread talks with one assistant: a run of
//!   another on a thread that has messages is a 409.
//! - A run is an ARS run; `input.messages` are appended to the thread, the last user message
//!   being the run's input. Statuses: `pending`, `running`, `success`, `error`, `timeout`;
//!   `interrupted` for a cancelled run and for one waiting for a person (its values carry
//!   `__interrupt__`), which a run with `command: {"resume": …}` decides.
//! - `multitask_strategy` on a busy thread: `reject` (409), `interrupt` / `rollback` (cancel
//!   the active run, then start), `enqueue` (start once the active run ends: the request
//!   waits for it).
//! - Streams: `metadata` first, then the modes asked for (`values`, `updates`,
//!   `messages-tuple`, `events` — ARS's own run events), `end` last; event ids are the run's
//!   event ids, so `Last-Event-ID` resumes a joined stream.
//!
//! Authentication: `x-api-key: <token>` (what the SDK sends) or `Authorization: Bearer`.
//! Errors: `{"detail": "…"}` with the status `/api` would answer.

mod assistants;
mod runs;
mod stream;
mod threads;
mod wire;

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use ars_domain::{Agent, Run, Thread, User};

use crate::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/ok", get(|| async { Json(json!({"ok": true})) }))
        .route(
            "/info",
            get(|| async { Json(json!({"version": env!("CARGO_PKG_VERSION")})) }),
        )
        .route("/assistants/search", post(assistants::search))
        .route("/assistants/{id}", get(assistants::get))
        .route("/threads", post(threads::create))
        .route("/threads/search", post(threads::search))
        .route(
            "/threads/{id}",
            get(threads::get)
                .patch(threads::update)
                .delete(threads::delete),
        )
        .route("/threads/{id}/state", get(threads::state))
        .route("/threads/{id}/runs", post(runs::create).get(runs::list))
        .route("/threads/{id}/runs/wait", post(runs::wait))
        .route("/threads/{id}/runs/stream", post(runs::stream))
        .route("/threads/{id}/runs/{run_id}", get(runs::get))
        .route("/threads/{id}/runs/{run_id}/cancel", post(runs::cancel))
        .route("/threads/{id}/runs/{run_id}/join", get(runs::join))
        .route("/threads/{id}/runs/{run_id}/stream", get(runs::join_stream))
        .route("/runs", post(runs::create_stateless))
        .route("/runs/wait", post(runs::wait_stateless))
        .route("/runs/stream", post(runs::stream_stateless))
        .fallback(|| async {
            LgError::from(ApiError::NotFound(
                "no such endpoint under /langgraph".into(),
            ))
        })
        .method_not_allowed_fallback(|| async { LgError::from(ApiError::MethodNotAllowed) })
}

/// An error as the LangGraph servers answer it: `{"detail": "…"}`.
#[derive(Debug)]
pub struct LgError(pub ApiError);

impl From<ApiError> for LgError {
    fn from(error: ApiError) -> Self {
        Self(error)
    }
}

impl From<ars_store::StoreError> for LgError {
    fn from(error: ars_store::StoreError) -> Self {
        Self(error.into())
    }
}

impl IntoResponse for LgError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        let mut response =
            (status, Json(json!({"detail": self.0.public_message()}))).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

/// The assistant `key` (slug or id) names, if the caller may run it: a 404 otherwise.
async fn assistant(state: &AppState, user: &User, key: &str) -> Result<Agent, ApiError> {
    super::usable_agent(state, &ars_domain::Caller::from(user), key, true)
        .await
        .map_err(|e| match e {
            e if e.status() == axum::http::StatusCode::NOT_FOUND => {
                ApiError::NotFound(format!("Assistant {key} not found"))
            }
            other => other,
        })
}

/// A thread of the caller's by id: a 404 in LangGraph's words otherwise.
async fn own_thread(state: &AppState, user: &User, id: &str) -> Result<Thread, ApiError> {
    super::own_thread(state, user, id, None)
        .await
        .map_err(|_| ApiError::NotFound(format!("Thread {id} not found")))
}

/// A thread's metadata, `{}` when it has none.
async fn metadata_of(state: &AppState, thread: &Thread) -> Result<Value, ApiError> {
    Ok(state
        .store
        .thread_metadata(&thread.id)
        .await?
        .unwrap_or_else(|| json!({})))
}

/// The thread's last top-level run (its runs, not its subagents'), if any.
async fn last_run(state: &AppState, thread: &Thread) -> Result<Option<Run>, ApiError> {
    let runs = state.store.thread_runs(&thread.id).await?;
    Ok(runs.into_iter().rev().find(|r| r.parent_run_id().is_none()))
}

/// The thread in LangGraph's shape, with its values and status as they stand.
async fn thread_json(state: &AppState, thread: &Thread) -> Result<Value, ApiError> {
    let metadata = metadata_of(state, thread).await?;
    let last = last_run(state, thread).await?;
    let messages = state.store.messages(&thread.id).await?;
    Ok(wire::thread(thread, &metadata, last.as_ref(), &messages))
}

/// The most metadata a thread may hold, as JSON text.
const MAX_METADATA_BYTES: usize = 16 * 1024;

/// Checks metadata: a JSON object of at most [`MAX_METADATA_BYTES`].
fn valid_metadata(metadata: &Value) -> Result<(), ApiError> {
    if !metadata.is_object() {
        return Err(ApiError::unprocessable(
            "metadata",
            "metadata must be a JSON object",
        ));
    }
    if metadata.to_string().len() > MAX_METADATA_BYTES {
        return Err(ApiError::unprocessable(
            "metadata",
            format!("metadata must be at most {MAX_METADATA_BYTES} bytes as JSON"),
        ));
    }
    Ok(())
}

/// A thread id a client chooses: a UUID in its hyphenated form, as LangGraph's are.
fn uuid_thread_id(text: &str) -> Option<ars_domain::ThreadId> {
    let shaped = text.len() == 36
        && text.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        });
    if shaped {
        ars_domain::ThreadId::parse(&text.to_ascii_lowercase())
    } else {
        None
    }
}

/// Whether `metadata` holds every key of `filter` with the same value (a search's filter).
fn metadata_matches(filter: &serde_json::Map<String, Value>, metadata: &Value) -> bool {
    filter.iter().all(|(k, v)| metadata.get(k) == Some(v))
}
