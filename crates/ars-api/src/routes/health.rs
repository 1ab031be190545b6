//! `GET /api/health`: liveness without credentials.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` when the server answers.
    status: &'static str,
    /// The store implementation in use: `sqlite` or `postgres`.
    store: &'static str,
    version: &'static str,
}

/// Liveness: answers without credentials.
#[utoipa::path(get, path = "/health", tag = "system", responses((status = 200, body = Health)))]
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    Json(Health {
        status: "ok",
        store: state.store.kind(),
        version: env!("CARGO_PKG_VERSION"),
    })
}
