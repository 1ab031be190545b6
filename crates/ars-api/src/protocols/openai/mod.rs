//! The OpenAI-compatible API under `/v1`: an agent is a model (`id` = its slug), a chat
//! completion or a response is a run.
//!
//! - `GET /v1/models`, `GET /v1/models/{id}`: the chat agents the caller can use.
//! - `POST /v1/chat/completions` ([`chat`]): the `messages` seed a new thread, the last user
//!   message is the run's input; `X-ARS-Thread-Id` continues a thread instead.
//! - `POST /v1/responses`, `GET /v1/responses/{id}` ([`responses`]): a response is a run
//!   (`resp_<run id>`), `previous_response_id` continues its thread.
//!
//! Every answer names the thread and run it used in `X-ARS-Thread-Id` and `X-ARS-Run-Id`.
//! Errors are OpenAI's shape, `{"error": {"message", "type", "param", "code"}}`, with the
//! status `/api` would answer.

mod chat;
mod responses;
mod stream;

use axum::extract::{Path, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use ars_domain::{Agent, Run, RunStatus};

use super::usable_agents;
use crate::extract::KeyAuth;
use crate::{ApiError, AppState};

/// The ARS thread a request used or should continue.
pub const THREAD_HEADER: HeaderName = HeaderName::from_static("x-ars-thread-id");
/// The ARS run an answer comes from.
pub const RUN_HEADER: HeaderName = HeaderName::from_static("x-ars-run-id");

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/models", get(list_models))
        .route("/models/{id}", get(get_model))
        .route("/chat/completions", post(chat::create))
        .route("/responses", post(responses::create))
        .route("/responses/{id}", get(responses::retrieve))
        .fallback(|| async {
            OpenAiError::from(ApiError::NotFound("no such endpoint under /v1".into()))
        })
        .method_not_allowed_fallback(|| async { OpenAiError::from(ApiError::MethodNotAllowed) })
}

/// An error in OpenAI's shape: an [`ApiError`] with the status `/api` gives it, or a run that
/// ended without an answer.
#[derive(Debug)]
pub enum OpenAiError {
    Api(ApiError),
    /// A 500 carrying the run's own words and code, marked `x-should-retry: false` so the SDKs
    /// do not run the agent again on their own.
    Run {
        message: String,
        code: String,
    },
    /// A 404 `model_not_found` naming the model, as OpenAI answers it.
    UnknownModel(String),
}

impl From<ApiError> for OpenAiError {
    fn from(error: ApiError) -> Self {
        Self::Api(error)
    }
}

impl OpenAiError {
    /// A run that ended without an answer.
    pub(crate) fn of_run(run: &Run) -> Self {
        let message = run.error.clone().unwrap_or_else(|| match run.status {
            RunStatus::Cancelled => "the run was cancelled".into(),
            RunStatus::Timeout => "the run timed out".into(),
            RunStatus::Interrupted => "the run was interrupted by a server stop".into(),
            other => format!("the run ended {}", other.as_str()),
        });
        let code = match run.error_code {
            Some(code) => code.as_str().to_string(),
            None => format!("run_{}", run.status.as_str()),
        };
        Self::Run { message, code }
    }

    fn status(&self) -> StatusCode {
        match self {
            Self::Api(error) => error.status(),
            Self::Run { .. } => StatusCode::INTERNAL_SERVER_ERROR,
            Self::UnknownModel(_) => StatusCode::NOT_FOUND,
        }
    }

    /// `{"error": {...}}`; also what a stream sends when it fails midway.
    pub(crate) fn body(&self) -> serde_json::Value {
        match self {
            Self::Api(error) => {
                let (kind, code) = match error.status().as_u16() {
                    401 => ("invalid_request_error", "invalid_api_key"),
                    500.. => ("server_error", error.code()),
                    _ => ("invalid_request_error", error.code()),
                };
                json!({"error": {
                    "message": error.public_message(),
                    "type": kind,
                    "param": error.field(),
                    "code": code,
                }})
            }
            Self::UnknownModel(name) => json!({"error": {
                "message": format!(
                    "The model `{name}` does not exist or you do not have access to it."
                ),
                "type": "invalid_request_error",
                "param": "model",
                "code": "model_not_found",
            }}),
            Self::Run { message, code } => json!({"error": {
                "message": message,
                "type": "server_error",
                "param": null,
                "code": code,
            }}),
        }
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, Json(self.body())).into_response();
        let headers = response.headers_mut();
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(
                axum::http::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer"),
            );
        }
        // A failed run is not run again, and a busy thread is the caller's to see (the SDKs
        // retry 409s and 5xx on their own otherwise).
        if matches!(self, Self::Run { .. }) || status == StatusCode::CONFLICT {
            headers.insert(SHOULD_RETRY, HeaderValue::from_static("false"));
        }
        response
    }
}

/// Tells the OpenAI SDKs whether to retry on their own.
const SHOULD_RETRY: HeaderName = HeaderName::from_static("x-should-retry");

/// The model `name` names: a chat agent the caller can use, by slug (or id); anything else is
/// a 404 in OpenAI's words.
async fn model_agent(state: &AppState, auth: &KeyAuth, name: &str) -> Result<Agent, OpenAiError> {
    super::usable_agent(state, &auth.0.caller(), name, false)
        .await
        .map_err(|e| match e {
            e if e.status() == axum::http::StatusCode::NOT_FOUND => {
                OpenAiError::UnknownModel(name.to_string())
            }
            other => other.into(),
        })
}

fn model_of(agent: &Agent) -> serde_json::Value {
    json!({
        "id": agent.slug,
        "object": "model",
        "created": agent.created_at.timestamp(),
        "owned_by": if agent.is_builtin { "ars" } else { "user" },
        "name": agent.name,
        "description": agent.description,
    })
}

/// `GET /v1/models`: the chat agents (not subagents) the caller can use.
async fn list_models(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
) -> Result<Json<serde_json::Value>, OpenAiError> {
    let auth = auth?;
    let agents = usable_agents(&state, &auth.0.caller(), false).await?;
    let data: Vec<_> = agents.iter().map(model_of).collect();
    Ok(Json(json!({"object": "list", "data": data})))
}

/// `GET /v1/models/{id}`.
async fn get_model(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, OpenAiError> {
    let auth = auth?;
    let agent = model_agent(&state, &auth, &id).await?;
    Ok(Json(model_of(&agent)))
}

/// `X-ARS-Thread-Id` and `X-ARS-Run-Id` on an answer.
pub(crate) fn with_ids(mut response: Response, run: &Run) -> Response {
    for (name, value) in [
        (THREAD_HEADER, run.thread_id.to_string()),
        (RUN_HEADER, run.id.to_string()),
    ] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
