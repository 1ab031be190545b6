//! `GET /metrics`: the process's metrics in the Prometheus text format, and what the API itself
//! measures (open SSE streams).
//!
//! The API does not know the recorder: the server assembly installs one and hands over how to
//! render it ([`MetricsEndpoint::render`]). On the main listener `/metrics` answers to the
//! configured metrics token or, when none is configured, to an admin's bearer token;
//! [`serve_metrics`] serves it without credentials on a listener of its own, meant for a
//! private interface. It is not in the OpenAPI document: it is for scrapers, not API clients.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use metrics::{describe_gauge, gauge};
use subtle::ConstantTimeEq;

use ars_domain::credentials::token_hash;

use crate::extract::bearer_token;
use crate::{ApiError, AppState, Auth};

pub const SSE_SUBSCRIBERS: &str = "ars_sse_subscribers";

/// The media type of the Prometheus text exposition format.
const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders the metrics recorded so far in the Prometheus text format.
pub type RenderMetrics = Arc<dyn Fn() -> String + Send + Sync>;

/// What `GET /metrics` serves on the main listener, and to whom.
#[derive(Clone)]
pub struct MetricsEndpoint {
    pub render: RenderMetrics,
    pub access: MetricsAccess,
}

impl std::fmt::Debug for MetricsEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsEndpoint")
            .field("access", &self.access)
            .finish_non_exhaustive()
    }
}

/// Who may read `/metrics` on the main listener.
#[derive(Clone, Debug)]
pub enum MetricsAccess {
    /// `Authorization: Bearer <token>` with exactly this token (`ARS_METRICS_TOKEN`).
    Token(MetricsToken),
    /// An admin's bearer token, as for any admin endpoint.
    Admins,
}

/// The configured metrics token, kept as its SHA-256: a guess is compared digest to digest, in
/// constant time, so neither its length nor its first wrong byte shows in the answer's timing.
/// Never printed by `Debug`.
#[derive(Clone)]
pub struct MetricsToken(String);

impl MetricsToken {
    pub fn new(token: &str) -> Self {
        Self(token_hash(token))
    }

    fn admits(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token)
            .ok_or_else(|| {
                ApiError::Unauthorized(
                    "missing `Authorization: Bearer <metrics token>` header".into(),
                )
            })?;
        let guess = token_hash(token);
        if bool::from(guess.as_bytes().ct_eq(self.0.as_bytes())) {
            Ok(())
        } else {
            Err(ApiError::Unauthorized("invalid metrics token".into()))
        }
    }
}

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsToken(…)")
    }
}

/// Gives the installed recorder the help text of the API's own metrics, exported from zero on.
pub fn describe() {
    gauge!(SSE_SUBSCRIBERS).increment(0.0);
    describe_gauge!(
        SSE_SUBSCRIBERS,
        "Run event streams (SSE) open on this instance now."
    );
}

/// One open event stream's place in [`SSE_SUBSCRIBERS`], given back when the stream is
/// dropped (it ended, or the client went away).
#[must_use = "the gauge goes back down when the guard is dropped"]
pub(crate) struct SseSubscriber(());

impl SseSubscriber {
    pub(crate) fn enter() -> Self {
        gauge!(SSE_SUBSCRIBERS).increment(1.0);
        Self(())
    }
}

impl Drop for SseSubscriber {
    fn drop(&mut self) {
        gauge!(SSE_SUBSCRIBERS).decrement(1.0);
    }
}

/// `GET /metrics` on the main listener.
pub(crate) async fn scrape(
    State(state): State<AppState>,
    mut parts: Parts,
) -> Result<Response, ApiError> {
    let endpoint = state
        .config
        .metrics
        .as_ref()
        .ok_or_else(|| ApiError::NotFound("metrics are not enabled on this server".into()))?;
    match &endpoint.access {
        MetricsAccess::Token(token) => token.admits(&parts.headers)?,
        MetricsAccess::Admins => {
            Auth::from_request_parts(&mut parts, &state)
                .await?
                .require_admin()?;
        }
    }
    Ok(exposition(&endpoint.render))
}

fn exposition(render: &RenderMetrics) -> Response {
    ([(header::CONTENT_TYPE, EXPOSITION)], render()).into_response()
}

/// Serves only `GET /metrics`, without credentials, on `listener` until `shutdown` resolves:
/// for a listener bound to an address only the scraper reaches (`ARS_METRICS_LISTEN`).
pub async fn serve_metrics(
    listener: tokio::net::TcpListener,
    render: RenderMetrics,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let render = Arc::clone(&render);
                async move { exposition(&render) }
            }),
        )
        .fallback(|| async { ApiError::NotFound("only /metrics is served here".into()) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with_authorization(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(header::AUTHORIZATION, value);
        }
        headers
    }

    #[test]
    fn the_metrics_token_admits_exactly_its_bearer() {
        let token = MetricsToken::new("s3cret-token");
        assert!(
            token
                .admits(&with_authorization("Bearer s3cret-token"))
                .is_ok()
        );
        assert!(
            token
                .admits(&with_authorization("bearer s3cret-token"))
                .is_ok()
        );
        for refused in [
            "",
            "Bearer",
            "Bearer s3cret-toke",
            "Bearer s3cret-token2",
            "Bearer S3CRET-TOKEN",
            "Basic s3cret-token",
            "s3cret-token",
        ] {
            assert!(
                matches!(
                    token.admits(&with_authorization(refused)),
                    Err(ApiError::Unauthorized(_))
                ),
                "{refused:?}"
            );
        }
        assert!(!format!("{token:?}").contains("s3cret"));
    }
}
