//! Sending one request: timeouts, retries with exponential backoff, and turning HTTP failures
//! into [`ModelError`]s.
//!
//! Retries happen only here, before a response is handed on, so a retry can never repeat a
//! part of an answer the runtime has already seen.

use std::time::Duration;

use bytes::Bytes;
use rand::Rng;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap};

use super::Shared;
use super::wire;
use crate::ModelError;

/// A request that got an answer, but not a successful one.
pub(super) enum Failure {
    /// A 4xx other than 429. Not retried; the caller reads the body before classifying it,
    /// since some refusals (stream + tools) have a remedy.
    Refused { status: StatusCode, body: String },
    /// Anything else, already classified.
    Error(ModelError),
}

/// Posts `body` to the provider, retrying 429, 5xx and connection failures, and returns the
/// response once its headers say success. `header_timeout` bounds each attempt's wait for the
/// response headers.
pub(super) async fn send(
    shared: &Shared,
    body: Bytes,
    header_timeout: Duration,
) -> Result<reqwest::Response, Failure> {
    send_to(shared, &shared.endpoint, body, header_timeout).await
}

/// [`send`] to another endpoint of the provider (e.g. `/embeddings`).
pub(super) async fn send_to(
    shared: &Shared,
    url: &str,
    body: Bytes,
    header_timeout: Duration,
) -> Result<reqwest::Response, Failure> {
    let options = &shared.options;
    let max_attempts = options.max_attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let request = shared
            .client
            .post(url)
            .headers(request_headers(shared))
            .body(body.clone());
        let sent = tokio::time::timeout(header_timeout, request.send()).await;
        // Each arm either returns or says why this attempt may be retried.
        let (status, message, retry_after) = match sent {
            Err(_) => {
                // A server that took this long would likely do it again, and a retry would
                // double the wait (and maybe the bill): give up at once.
                return Err(Failure::Error(ModelError::Timeout {
                    provider: shared.name.clone(),
                    phase: "waiting for response headers",
                    waited: header_timeout,
                }));
            }
            Ok(Err(error)) => {
                let detail = shared.redact(&describe(&error));
                tracing::warn!(provider = %shared.name, attempt, "model request failed");
                tracing::debug!(provider = %shared.name, attempt, error = %detail, "model request failed");
                (None, plain(&error).to_string(), None)
            }
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status();
                let retry_after = retry_after(response.headers());
                let text = read_body(response, header_timeout).await;
                if !(status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) {
                    return Err(Failure::Refused { status, body: text });
                }
                let message = shared.redact(&wire::error_message(&text));
                tracing::warn!(provider = %shared.name, attempt, %status, %message, "model request failed");
                (Some(status.as_u16()), message, retry_after)
            }
        };
        let exhausted = |message: String| match status {
            Some(status) => ModelError::Unavailable {
                provider: shared.name.clone(),
                status: Some(status),
                attempts: attempt,
                message,
            },
            None => ModelError::Connect {
                provider: shared.name.clone(),
                message: format!("{message} (after {attempt} attempt(s))"),
            },
        };
        if attempt >= max_attempts {
            return Err(Failure::Error(exhausted(message)));
        }
        let delay = match retry_after {
            Some(wait) if wait > options.max_retry_after => {
                let message = format!(
                    "{message}; the server asks to retry after {}s",
                    wait.as_secs()
                );
                return Err(Failure::Error(exhausted(message)));
            }
            Some(wait) => wait,
            None => backoff(options.backoff_base, options.backoff_max, attempt),
        };
        tokio::time::sleep(delay).await;
    }
}

/// Classifies a refusal that has no remedy.
pub(super) fn refusal_error(
    shared: &Shared,
    model: &str,
    status: StatusCode,
    body: &str,
) -> ModelError {
    let message = shared.redact(&wire::error_message(body));
    let provider = shared.name.clone();
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ModelError::Auth {
            provider,
            message: match &shared.missing_key_hint {
                Some(hint) => format!("{message} ({hint})"),
                None => message,
            },
        },
        StatusCode::NOT_FOUND => ModelError::UnknownModel {
            provider,
            model: model.to_string(),
            message,
        },
        _ if wire::mentions_unknown_model(body) => ModelError::UnknownModel {
            provider,
            model: model.to_string(),
            message,
        },
        _ => ModelError::Rejected {
            provider,
            status: status.as_u16(),
            message,
        },
    }
}

pub(super) fn request_headers(shared: &Shared) -> HeaderMap {
    let mut headers = shared.headers.clone();
    headers.insert(
        CONTENT_TYPE,
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    if let Some(auth) = &shared.authorization {
        headers.insert(AUTHORIZATION, auth.clone());
    }
    headers
}

/// The most bytes of an answer read whole (a non-streaming completion, an embeddings list,
/// a model listing): a provider cannot make the server buffer without bound.
pub(super) const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// The most bytes read of an error body (its start says what went wrong).
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// Why an answer could not be read whole.
#[derive(Debug)]
pub(super) enum ReadError {
    Network(reqwest::Error),
    /// Longer than the bound given.
    TooLarge(usize),
}

/// Reads an answer whole, refusing one longer than `max` bytes as soon as it is.
pub(super) async fn read_capped(
    mut response: reqwest::Response,
    max: usize,
) -> Result<String, ReadError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(ReadError::Network)? {
        if body.len() + chunk.len() > max {
            return Err(ReadError::TooLarge(max));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// Reads the start of an error body, giving up quietly: the status alone still says what
/// went wrong.
pub(super) async fn read_body(mut response: reqwest::Response, limit: Duration) -> String {
    let read = async {
        let mut body = Vec::new();
        while let Ok(Some(chunk)) = response.chunk().await {
            let room = MAX_ERROR_BYTES - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= MAX_ERROR_BYTES {
                break;
            }
        }
        String::from_utf8_lossy(&body).into_owned()
    };
    tokio::time::timeout(limit, read).await.unwrap_or_default()
}

/// A provider's answer too long to read.
pub(super) fn too_large(shared: &Shared, max: usize) -> ModelError {
    ModelError::Provider(format!(
        "provider `{}` answered more than {} MiB, more than ARS reads",
        shared.name,
        max / (1024 * 1024)
    ))
}

/// `retry-after-ms` (sent by OpenAI) or `Retry-After` in seconds. The HTTP-date form is not
/// honoured: servers of this API do not use it, and backoff is a fine fallback.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

/// Exponential backoff with "equal jitter": half the step fixed, half random, so clients that
/// failed together do not retry together.
fn backoff(base: Duration, max: Duration, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    let step = base.saturating_mul(factor).min(max);
    let half = step / 2;
    let half_micros = u64::try_from(half.as_micros()).unwrap_or(u64::MAX);
    let jitter = rand::thread_rng().gen_range(0..=half_micros);
    half + Duration::from_micros(jitter)
}

/// What went wrong with a request, in words fit for a user; the library's own chain (see
/// [`describe`]) is for the debug log.
pub(super) fn plain(error: &reqwest::Error) -> &'static str {
    if error.is_connect() {
        "the connection could not be opened"
    } else if error.is_timeout() {
        "the connection timed out"
    } else if error.is_body() || error.is_decode() {
        "the connection broke while reading the answer"
    } else {
        "the connection failed"
    }
}

/// A reqwest error with its causes, which hold the useful part ("connection refused").
pub(super) fn describe(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let base = Duration::from_millis(100);
        let max = Duration::from_millis(1000);
        for attempt in 1..10 {
            let delay = backoff(base, max, attempt);
            let step = (base * 2u32.pow(attempt - 1)).min(max);
            assert!(delay >= step / 2 && delay <= step, "{attempt}: {delay:?}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_milliseconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
    }
}
