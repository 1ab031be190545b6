//! `POST /assistants/search`, `GET /assistants/{id}`: the agents the caller can use,
//! subagents included.

use axum::Json;
use axum::extract::{Path, State};
use serde::Deserialize;
use serde_json::Value;

use super::{LgError, assistant, wire};
use crate::extract::{ApiJsonOrEmpty, KeyAuth};
use crate::protocols::usable_agents;
use crate::{ApiError, AppState};

/// The most assistants one search answers.
const MAX_LIMIT: usize = 1000;

#[derive(Debug, Default, Deserialize)]
pub(super) struct SearchBody {
    #[serde(default)]
    graph_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    /// Matched against each assistant's metadata, key by key.
    #[serde(default)]
    metadata: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    offset: Option<usize>,
}

pub(super) async fn search(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Result<ApiJsonOrEmpty<SearchBody>, ApiError>,
) -> Result<Json<Vec<Value>>, LgError> {
    let KeyAuth(auth) = auth?;
    let ApiJsonOrEmpty(body) = body?;
    let agents = usable_agents(&state, &auth.caller(), true).await?;
    let limit = body.limit.unwrap_or(10).min(MAX_LIMIT);
    let found = agents
        .iter()
        .filter(|a| {
            body.graph_id
                .as_ref()
                .is_none_or(|g| *g == a.slug || *g == a.id.to_string())
        })
        .filter(|a| {
            body.name
                .as_ref()
                .is_none_or(|n| a.name.contains(n.as_str()))
        })
        .map(wire::assistant)
        .filter(|a| {
            body.metadata
                .as_ref()
                .is_none_or(|m| super::metadata_matches(m, &a["metadata"]))
        })
        .skip(body.offset.unwrap_or(0))
        .take(limit)
        .collect();
    Ok(Json(found))
}

pub(super) async fn get(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
) -> Result<Json<Value>, LgError> {
    let KeyAuth(auth) = auth?;
    let agent = assistant(&state, &auth.user, &id).await?;
    Ok(Json(wire::assistant(&agent)))
}
