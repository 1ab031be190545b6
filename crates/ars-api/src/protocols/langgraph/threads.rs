//! Threads: create (with `if_exists`), read, update metadata, delete, search, state.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use ars_domain::{Agent, Caller, Thread, ThreadId, User};

use super::{
    LgError, assistant, last_run, metadata_of, own_thread, thread_json, valid_metadata, wire,
};
use crate::extract::{ApiJsonOrEmpty, KeyAuth};
use crate::protocols::{thread_with_id, usable_agents};
use crate::{ApiError, AppState};

/// The most threads one search answers.
const MAX_LIMIT: usize = 1000;

#[derive(Debug, Default, Deserialize)]
pub(super) struct CreateBody {
    #[serde(default)]
    thread_id: Option<String>,
    #[serde(default)]
    metadata: Option<Value>,
    /// `raise` (default): a taken id is a 409; `do_nothing`: answer the existing thread.
    #[serde(default)]
    if_exists: Option<String>,
    /// The assistant the thread talks with, until its first run says otherwise.
    #[serde(default)]
    graph_id: Option<String>,
}

/// The agent a thread created without a run talks with: the one `graph_id` (or
/// `metadata.graph_id`) names, else the default agent, else the caller's first.
async fn first_agent(
    state: &AppState,
    user: &User,
    graph_id: Option<&str>,
) -> Result<Agent, ApiError> {
    if let Some(key) = graph_id {
        return assistant(state, user, key).await;
    }
    let caller = Caller::from(user);
    if let Some(default) = state.store.default_agent().await?
        && caller.can_view(&default)
    {
        return Ok(default);
    }
    usable_agents(state, &caller, false)
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::Conflict {
            message: "you can use no agent to talk with".into(),
            field: None,
        })
}

pub(super) async fn create(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Result<ApiJsonOrEmpty<CreateBody>, ApiError>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let ApiJsonOrEmpty(body) = body?;
    let user = &auth.user;
    if let Some(metadata) = &body.metadata {
        valid_metadata(metadata)?;
    }
    let raise = match body.if_exists.as_deref() {
        None | Some("raise") => true,
        Some("do_nothing") => false,
        Some(other) => {
            return Err(ApiError::unprocessable(
                "if_exists",
                format!("if_exists is `raise` or `do_nothing`, not `{other}`"),
            )
            .into());
        }
    };
    let graph_id = body.graph_id.clone().or_else(|| {
        body.metadata
            .as_ref()
            .and_then(|m| m.get("graph_id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let id = match &body.thread_id {
        Some(text) => Some(
            super::uuid_thread_id(text)
                .ok_or_else(|| ApiError::unprocessable("thread_id", "thread_id must be a UUID"))?,
        ),
        None => None,
    };
    if let Some(id) = &id
        && let Some(existing) = state.store.thread(id).await?
    {
        if raise || existing.user_id != user.id {
            return Err(ApiError::Conflict {
                message: format!("Thread {id} already exists"),
                field: Some("thread_id".into()),
            }
            .into());
        }
        return Ok(Json(thread_json(&state, &existing).await?));
    }
    let agent = first_agent(&state, user, graph_id.as_deref()).await?;
    let thread = match id {
        Some(id) => thread_with_id(id, user, &agent, "New chat".into()),
        None => Thread::new_root(user.id, agent.id, "New chat".into()),
    };
    let thread = state.store.create_thread(&thread).await?;
    if let Some(metadata) = &body.metadata {
        state
            .store
            .set_thread_metadata(&thread.id, user.id, metadata)
            .await?;
    }
    tracing::info!(thread = %thread.id, agent = %agent.slug, user = %user.id, "thread created over /langgraph");
    Ok(Json(thread_json(&state, &thread).await?))
}

pub(super) async fn get(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let thread = own_thread(&state, &auth.user, &id).await?;
    Ok(Json(thread_json(&state, &thread).await?))
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct UpdateBody {
    #[serde(default)]
    metadata: Option<serde_json::Map<String, Value>>,
}

/// `PATCH /threads/{id}`: merges `metadata` key by key (`null` removes a key).
pub(super) async fn update(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
    body: Result<ApiJsonOrEmpty<UpdateBody>, ApiError>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let ApiJsonOrEmpty(body) = body?;
    let thread = own_thread(&state, &auth.user, &id).await?;
    if let Some(patch) = body.metadata {
        let mut metadata = match metadata_of(&state, &thread).await? {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        for (key, value) in patch {
            if value.is_null() {
                metadata.remove(&key);
            } else {
                metadata.insert(key, value);
            }
        }
        let metadata = Value::Object(metadata);
        valid_metadata(&metadata)?;
        state
            .store
            .set_thread_metadata(&thread.id, auth.user.id, &metadata)
            .await?;
    }
    Ok(Json(thread_json(&state, &thread).await?))
}

/// `DELETE /threads/{id}`: stops its active run, then deletes it with its runs and files.
pub(super) async fn delete(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
) -> Result<StatusCode, LgError> {
    let KeyAuth(auth) = auth?;
    let thread = own_thread(&state, &auth.user, &id).await?;
    if let Some(active) = state.store.active_run(&thread.id).await? {
        state
            .runtime
            .cancel(active.id)
            .await
            .map_err(ApiError::from)?;
    }
    crate::routes::threads::remove_thread(&state, &thread).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct SearchBody {
    #[serde(default)]
    metadata: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    ids: Option<Vec<String>>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    offset: Option<usize>,
}

/// `POST /threads/search`: the caller's threads, most recently active first, filtered by
/// metadata (every key equal), ids and status.
pub(super) async fn search(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Result<ApiJsonOrEmpty<SearchBody>, ApiError>,
) -> Result<Json<Vec<Value>>, LgError> {
    let KeyAuth(auth) = auth?;
    let ApiJsonOrEmpty(body) = body?;
    let limit = body.limit.unwrap_or(10).min(MAX_LIMIT);
    let offset = body.offset.unwrap_or(0);
    let metadata: std::collections::HashMap<ThreadId, Value> = state
        .store
        .user_thread_metadata(auth.user.id)
        .await?
        .into_iter()
        .collect();
    let empty = json!({});
    let mut found = Vec::new();
    let mut skipped = 0;
    for thread in state.store.list_threads(auth.user.id).await? {
        if found.len() == limit {
            break;
        }
        let own = metadata.get(&thread.id).unwrap_or(&empty);
        if let Some(filter) = &body.metadata
            && !super::metadata_matches(filter, own)
        {
            continue;
        }
        if let Some(ids) = &body.ids
            && !ids.iter().any(|id| *id == thread.id.to_string())
        {
            continue;
        }
        if let Some(status) = &body.status {
            let last = last_run(&state, &thread).await?;
            if wire::thread_status(last.as_ref()) != status {
                continue;
            }
        }
        if skipped < offset {
            skipped += 1;
            continue;
        }
        found.push(thread_json(&state, &thread).await?);
    }
    Ok(Json(found))
}

/// `GET /threads/{id}/state`: the values, what runs next (nothing: a run's steps are not
/// exposed as graph nodes), the checkpoint (the last message), and the interrupts.
pub(super) async fn state(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let thread = own_thread(&state, &auth.user, &id).await?;
    Ok(Json(thread_state(&state, &thread).await?))
}

pub(super) async fn thread_state(state: &AppState, thread: &Thread) -> Result<Value, ApiError> {
    let last = last_run(state, thread).await?;
    let messages = state.store.messages(&thread.id).await?;
    let values = wire::values(&messages, last.as_ref());
    let interrupts: Vec<Value> = match last.as_ref() {
        Some(run) if run.status == ars_domain::RunStatus::Waiting => {
            run.pending.iter().map(wire::interrupt).collect()
        }
        _ => Vec::new(),
    };
    let checkpoint = messages
        .last()
        .map_or_else(|| thread.id.to_string(), |m| m.id.to_string());
    Ok(json!({
        "values": if values.is_null() { json!({"messages": []}) } else { values },
        "next": [],
        "tasks": [],
        "checkpoint": {"thread_id": thread.id.to_string(), "checkpoint_ns": "",
                       "checkpoint_id": checkpoint, "checkpoint_map": null},
        "metadata": {"source": "loop", "step": messages.len()},
        "created_at": thread.updated_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, false),
        "parent_checkpoint": null,
        "interrupts": interrupts,
    }))
}
