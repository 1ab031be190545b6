//! Asking a provider about itself, for an admin's "Refresh models" and "Test connection":
//! `GET {base_url}/models` and a tiny chat request. Each is one attempt within a time limit
//! (an admin waits for the answer; a retry would only make them wait longer), and failures are
//! classified exactly as in a run: [`ModelError::Auth`], [`ModelError::UnknownModel`],
//! [`ModelError::Connect`] / [`ModelError::Timeout`], or another.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{OpenAiProvider, Shared, http, wire};
use crate::ModelError;

/// What the test request asks for: a few tokens at most, so a test costs next to nothing.
const TEST_MAX_TOKENS: u32 = 8;

impl OpenAiProvider {
    /// The model ids the server lists at `GET {base_url}/models` (the OpenAI format,
    /// `{"data": [{"id": …}, …]}`), in the server's order.
    pub async fn list_models(&self, limit: Duration) -> Result<Vec<String>, ModelError> {
        let shared = &self.shared;
        let url = format!("{}/models", shared.base_url);
        let request = shared
            .client
            .get(&url)
            .headers(http::request_headers(shared));
        let (status, body) = exchange(shared, request, limit, "listing the models").await?;
        if !status.is_success() {
            return Err(match status {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                    http::refusal_error(shared, "", status, &body)
                }
                StatusCode::NOT_FOUND => ModelError::Rejected {
                    provider: shared.name.clone(),
                    status: status.as_u16(),
                    message: format!(
                        "the server has no model list at {url}; type the model names instead"
                    ),
                },
                _ => failure(shared, "", status, &body),
            });
        }
        let listing: Value = serde_json::from_str(&body).map_err(|_| not_a_listing(shared))?;
        let items = listing
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| not_a_listing(shared))?;
        Ok(items
            .iter()
            .filter_map(|item| item.get("id").and_then(Value::as_str))
            .map(str::to_string)
            .collect())
    }

    /// Sends `model` a one-line chat request (no streaming, a few tokens at most) and answers
    /// how long the whole answer took.
    pub async fn check_chat(&self, model: &str, limit: Duration) -> Result<Duration, ModelError> {
        let shared = &self.shared;
        let started = Instant::now();
        let mut body = json!({
            "model": model,
            "messages": [{"role": "user", "content": "Reply with the word OK."}],
            "max_tokens": TEST_MAX_TOKENS,
            "stream": false,
        });
        let mut renamed = false;
        loop {
            let request = shared
                .client
                .post(&shared.endpoint)
                .headers(http::request_headers(shared))
                .body(body.to_string());
            let left = limit.saturating_sub(started.elapsed());
            let (status, text) = exchange(shared, request, left, "answering the test").await?;
            if status.is_success() {
                // Some servers answer 200 with an error object in the body.
                if let Ok(answer) = serde_json::from_str::<Value>(&text)
                    && answer.get("error").is_some_and(|e| !e.is_null())
                {
                    return Err(ModelError::Provider(
                        shared.redact(&wire::error_message(&text)),
                    ));
                }
                return Ok(started.elapsed());
            }
            // Newer OpenAI models refuse `max_tokens` and want `max_completion_tokens`: the
            // key and the model are fine, so ask once more in their words.
            if status == StatusCode::BAD_REQUEST
                && !renamed
                && text.contains("max_completion_tokens")
                && let Some(object) = body.as_object_mut()
            {
                object.remove("max_tokens");
                object.insert("max_completion_tokens".into(), TEST_MAX_TOKENS.into());
                renamed = true;
                continue;
            }
            return Err(failure(shared, model, status, &text));
        }
    }
}

/// Sends `request` and reads the whole answer within `limit`.
async fn exchange(
    shared: &Shared,
    request: reqwest::RequestBuilder,
    limit: Duration,
    phase: &'static str,
) -> Result<(StatusCode, String), ModelError> {
    let timeout = || ModelError::Timeout {
        provider: shared.name.clone(),
        phase,
        waited: limit,
    };
    let response = match tokio::time::timeout(limit, request.send()).await {
        Err(_) => return Err(timeout()),
        Ok(Err(error)) => {
            tracing::debug!(
                provider = %shared.name,
                error = %shared.redact(&http::describe(&error)),
                "a probe of the provider failed"
            );
            if error.is_timeout() {
                return Err(timeout());
            }
            return Err(ModelError::Connect {
                provider: shared.name.clone(),
                message: http::plain(&error).to_string(),
            });
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    match tokio::time::timeout(limit, http::read_capped(response, http::MAX_ANSWER_BYTES)).await {
        Ok(Ok(text)) => Ok((status, text)),
        Ok(Err(http::ReadError::TooLarge(max))) => Err(http::too_large(shared, max)),
        Ok(Err(http::ReadError::Network(_))) => Err(ModelError::StreamCut {
            provider: shared.name.clone(),
            how: "broke the connection",
        }),
        Err(_) => Err(timeout()),
    }
}

/// A failed answer, as a run would see it: a refusal (401/403/404/other 4xx) or the server
/// being unavailable (429, 5xx).
fn failure(shared: &Shared, model: &str, status: StatusCode, body: &str) -> ModelError {
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return ModelError::Unavailable {
            provider: shared.name.clone(),
            status: Some(status.as_u16()),
            attempts: 1,
            message: shared.redact(&wire::error_message(body)),
        };
    }
    http::refusal_error(shared, model, status, body)
}

fn not_a_listing(shared: &Shared) -> ModelError {
    ModelError::Malformed {
        provider: shared.name.clone(),
        message: "the model list is not in the OpenAI format (`{\"data\": [{\"id\": …}]}`)".into(),
    }
}
