//! The `request` span of every HTTP request: method, URI and `x-request-id` from the start,
//! the route once routing matched one, the status once answered. Fields named `otel.*` shape
//! the span for an OpenTelemetry exporter (a server span named after the method, failed on a
//! 5xx) and are ordinary fields to the logs; this crate knows no OpenTelemetry.

use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use tower_http::trace::{DefaultOnResponse, OnResponse};
use tracing::Span;
use tracing::field::Empty;

/// The request's span. Its name for exporters is the method: the route, which would name it
/// better (paths carry ids, routes do not), is known only after routing, once the span has
/// started, so it is an attribute (`route`).
pub(crate) fn request_span<B>(req: &Request<B>, request_id: &str) -> Span {
    tracing::info_span!(
        "request",
        method = %req.method(),
        uri = %req.uri(),
        request_id,
        route = Empty,
        status = Empty,
        otel.name = %req.method(),
        otel.kind = "server",
        otel.status_description = Empty,
    )
}

/// Middleware on the matched routes: records the route in the request's span.
pub(crate) async fn record_route(req: Request, next: Next) -> Response {
    if let Some(route) = req.extensions().get::<MatchedPath>() {
        Span::current().record("route", route.as_str());
    }
    next.run(req).await
}

/// Records the status in the span, then logs the response as tower-http does by default.
pub(crate) fn on_response<B>(res: &Response<B>, latency: Duration, span: &Span) {
    let status = res.status();
    // As `i64`, the integer type exporters keep as a number.
    span.record("status", i64::from(status.as_u16()));
    if status.is_server_error() {
        span.record("otel.status_description", status.as_str());
    }
    DefaultOnResponse::new()
        .level(tracing::Level::INFO)
        .on_response(res, latency, span);
}
