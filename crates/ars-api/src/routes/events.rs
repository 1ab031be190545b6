//! `GET /api/runs/{id}/events`: a run's live events as Server-Sent Events.
//!
//! The SSE wire shape is defined here and nowhere else. Each run event is one SSE message:
//!
//! ```text
//! event: <EventKind::name()>      e.g. message_delta, tool_call_started, run_status
//! id: <RunEvent.id>               1, 2, 3, … per run
//! data: <RunEvent as JSON>        {"id":…,"run_id":…,"thread_id":…,"at":…,"type":…,…}
//! ```
//!
//! Replayed events come first, then live ones; the stream ends right after the terminal
//! `run_status` event. A reconnecting client sends `Last-Event-ID` (or `?after=N`) and gets
//! exactly the events after it. Comment lines keep idle connections open (every 15 s unless
//! `ApiConfig::sse_keep_alive` says otherwise).
//!
//! If the run's events are no longer retained the answer is a plain `410 gone` before any
//! streaming starts. Should that happen mid-stream (a reader so slow that the events it still
//! needed were dropped), one last `event: stream_error` message carries an error body
//! (`{"error":{"code":"gone",…}}`) and the stream ends: the client then reads the run and the
//! thread's messages instead.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use ars_events::SharedEvent;

use super::runs::owned_run;
use crate::extract::ApiQuery;
use crate::metrics::SseSubscriber;
use crate::{ApiError, AppState, Auth, ErrorBody, ErrorDetail};

/// The SSE `event:` name of a failure after streaming started.
const STREAM_ERROR: &str = "stream_error";

const LAST_EVENT_ID: &str = "last-event-id";

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Send only events with a greater id (a `Last-Event-ID` header takes precedence).
    #[serde(default)]
    after: Option<u64>,
}

/// Where to resume: the `Last-Event-ID` header, else `?after=`, else the start.
fn resume_point(headers: &HeaderMap, query: &EventsQuery) -> Result<u64, ApiError> {
    // The document states event ids as int64, as clients in most languages read them.
    let in_range = |id: u64| -> Result<u64, ApiError> {
        if i64::try_from(id).is_ok() {
            Ok(id)
        } else {
            Err(ApiError::BadRequest(format!(
                "an event id is at most {}",
                i64::MAX
            )))
        }
    };
    match headers.get(LAST_EVENT_ID) {
        None => in_range(query.after.unwrap_or(0)),
        // Present means an event id: clients that have none send no header at all (as
        // `EventSource` does), so an empty value is as unreadable as a word.
        Some(value) => value
            .to_str()
            .ok()
            .map(str::trim)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                ApiError::BadRequest("Last-Event-ID must be an event id (a whole number)".into())
            })
            .and_then(in_range),
    }
}

// Only described, never built: `sse_event` and `stream_error` write the frames.
/// One message of a run's event stream, as an SSE parser reads it (OpenAPI 3.1 cannot type
/// a stream, so this describes each message).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct RunEventMessage {
    /// The event type (`run_status`, `message_delta`, …), or `stream_error` when the stream
    /// cannot go on.
    event: String,
    /// The event id, for `Last-Event-ID`; absent on `stream_error`.
    #[serde(default)]
    #[schema(pattern = "^[0-9]+$")]
    id: String,
    /// The event as JSON: a run event, or an `ErrorBody` for `stream_error`.
    data: String,
}

/// One run event as one SSE message. Its `data:` is the event's shared JSON text: a run
/// streamed to a thousand subscribers is serialized once, not once for each of them.
fn sse_event(event: &SharedEvent) -> Result<Event, axum::Error> {
    let json = event.json().map_err(axum::Error::new)?;
    Ok(Event::default()
        .event(event.kind.name())
        .id(event.id.to_string())
        .data(json))
}

/// The last message of a stream that cannot go on (run events here, thread events too).
pub(super) fn stream_error(error: ApiError) -> Result<Event, axum::Error> {
    let detail = match error.kind() {
        ApiError::Gone(message) => ErrorDetail {
            code: "gone",
            message: message.clone(),
            field: None,
            active_run_id: None,
            reason: ars_domain::ErrorReason::Gone,
            params: serde_json::Map::new(),
        },
        other => {
            tracing::error!(error = %other, "event stream failed");
            ErrorDetail {
                code: "internal",
                message: "internal error".into(),
                field: None,
                active_run_id: None,
                reason: ars_domain::ErrorReason::Internal,
                params: serde_json::Map::new(),
            }
        }
    };
    Event::default()
        .event(STREAM_ERROR)
        .json_data(ErrorBody { error: detail })
}

/// Streams a run's events (SSE): replay, then live, ending after the terminal `run_status`.
/// Resume with `Last-Event-ID` or `?after=N`.
#[utoipa::path(get, path = "/runs/{id}/events", tag = "runs", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "Run id"),
        ("Last-Event-ID" = Option<u64>, Header, nullable = false, minimum = 0, description = "Resume after this event id"),
        EventsQuery,
    ),
    responses(
        (status = 200, content_type = "text/event-stream", body = RunEventMessage,
         description = "One SSE message per run event: `event:` the event type, `id:` the event id, `data:` the event as JSON"),
        (status = 400, body = ErrorBody, description = "Unreadable `Last-Event-ID` or query"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 410, body = ErrorBody, description = "The run's events are no longer retained"),
    ))]
pub async fn run_events(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, axum::Error>>>, ApiError> {
    let after = resume_point(&headers, &query)?;
    let run = owned_run(&state, &auth, &id).await?;
    let events = state.runtime.events().subscribe(run.id, after).await?;
    // Counted while the stream lives: the guard goes with the closure, dropped with the stream.
    let subscriber = SseSubscriber::enter();
    // The bus ends the stream after the terminal event, and an error is always its last item.
    let stream = events.map(move |item| {
        let _counted = &subscriber;
        match item {
            Ok(event) => sse_event(&event),
            Err(error) => stream_error(error.into()),
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(state.config.sse_keep_alive)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn last_event_id_wins_over_the_query_and_must_be_a_number() {
        let query = EventsQuery { after: Some(3) };
        let mut headers = HeaderMap::new();
        assert_eq!(resume_point(&headers, &query).ok(), Some(3));
        headers.insert(LAST_EVENT_ID, HeaderValue::from_static("7"));
        assert_eq!(resume_point(&headers, &query).ok(), Some(7));
        for unreadable in ["seven", "", "true", "-1", "1.5", "9223372036854775808"] {
            headers.insert(LAST_EVENT_ID, HeaderValue::from_static(unreadable));
            assert!(
                matches!(resume_point(&headers, &query), Err(ApiError::BadRequest(_))),
                "{unreadable:?}"
            );
        }
        let beyond = EventsQuery {
            after: Some(u64::MAX),
        };
        assert!(resume_point(&HeaderMap::new(), &beyond).is_err());
    }
}
