//! A loopback OpenAI-compatible server for the provider tests.
//!
//! It answers `POST /v1/chat/completions` and `POST /v1/embeddings` from a queue of canned [`Reply`]s (the last one
//! repeats), speaks the real wire format (`data: {json}\n\n` events ending in `data: [DONE]`),
//! records every request it received, and notices when a client hangs up mid-stream.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ars_models::{OpenAiOptions, OpenAiProvider, ProviderConfig};
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;

/// One canned answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// An SSE stream of `data:` payloads, `gap` apart; after `stall_after` events it goes
    /// silent for a minute, without closing.
    Sse {
        events: Vec<String>,
        gap: Duration,
        stall_after: Option<usize>,
        /// While stalled, send an SSE comment every few milliseconds, so the server notices
        /// a client that hung up.
        keep_alive: bool,
    },
    /// A plain response, e.g. an error or a non-streaming completion.
    Status {
        status: u16,
        body: String,
        headers: Vec<(&'static str, String)>,
    },
    /// Waits before answering with the inner reply.
    Delayed(Duration, Box<Reply>),
    /// An SSE stream of `data:` payloads that then breaks: the body fails, so the server
    /// drops the connection without ending the chunked body, as a reset would.
    Broken { events: Vec<String> },
}

/// An SSE reply of these chunks, then `[DONE]`.
pub fn sse(chunks: &[Value]) -> Reply {
    let mut events: Vec<String> = chunks.iter().map(Value::to_string).collect();
    events.push("[DONE]".into());
    Reply::Sse {
        events,
        gap: Duration::ZERO,
        stall_after: None,
        keep_alive: false,
    }
}

/// A plain JSON reply.
pub fn status(status: u16, body: Value) -> Reply {
    Reply::Status {
        status,
        body: body.to_string(),
        headers: Vec::new(),
    }
}

/// A streaming chunk with a text delta.
pub fn text_chunk(text: &str) -> Value {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": null }],
    })
}

/// A streaming chunk carrying tool-call fragments.
pub fn tool_chunk(calls: Value) -> Value {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{ "index": 0, "delta": { "tool_calls": calls }, "finish_reason": null }],
    })
}

/// The chunk that says why the model stopped.
pub fn finish_chunk(reason: &str) -> Value {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{ "index": 0, "delta": {}, "finish_reason": reason }],
    })
}

/// The final `include_usage` chunk: no choices, only usage.
pub fn usage_chunk(prompt: u64, completion: u64) -> Value {
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [],
        "usage": { "prompt_tokens": prompt, "completion_tokens": completion,
                   "total_tokens": prompt + completion },
    })
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<Reply>>,
    received: Mutex<Vec<Received>>,
    /// SSE bodies the client dropped before their end.
    aborted: AtomicUsize,
}

pub struct MockServer {
    /// `http://127.0.0.1:<port>/v1`, as `OPENAI_BASE_URL` would be.
    pub base_url: String,
    shared: Arc<Shared>,
}

impl MockServer {
    /// Starts a server on a free loopback port that plays `replies` in order.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let shared = Arc::new(Shared {
            replies: Mutex::new(replies.into()),
            ..Shared::default()
        });
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/embeddings", post(handle))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            base_url: format!("http://{addr}/v1"),
            shared,
        }
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    /// How many SSE bodies were dropped by the client before their end.
    pub fn aborted(&self) -> usize {
        self.shared.aborted.load(Ordering::SeqCst)
    }

    /// A provider named `test` pointing at this server, with `options`.
    pub fn provider(&self, key: Option<&str>, options: OpenAiOptions) -> OpenAiProvider {
        let config = ProviderConfig::openai_compatible("test", &self.base_url);
        OpenAiProvider::new(
            &config,
            key.and_then(ars_models::ApiKey::new),
            None,
            options,
        )
        .unwrap()
    }
}

/// Timing shrunk so that every retry and timeout test runs in well under a second.
pub fn fast_options() -> OpenAiOptions {
    OpenAiOptions {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(2),
        idle_timeout: Duration::from_millis(300),
        non_streaming_timeout: Duration::from_secs(2),
        max_attempts: 3,
        backoff_base: Duration::from_millis(5),
        backoff_max: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(1),
    }
}

async fn handle(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared
        .received
        .lock()
        .unwrap()
        .push(Received { headers, body });
    let reply = {
        let mut replies = shared.replies.lock().unwrap();
        if replies.len() > 1 {
            replies.pop_front()
        } else {
            replies.front().cloned()
        }
    };
    let reply = reply.unwrap_or_else(|| status(500, serde_json::json!({"error": "no reply"})));
    respond(reply, shared).await
}

async fn respond(mut reply: Reply, shared: Arc<Shared>) -> Response {
    while let Reply::Delayed(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    match reply {
        Reply::Status {
            status,
            body,
            headers,
        } => {
            let mut response = Response::builder()
                .status(StatusCode::from_u16(status).unwrap())
                .header("content-type", "application/json");
            for (name, value) in headers {
                response = response.header(name, value);
            }
            response.body(Body::from(body)).unwrap()
        }
        Reply::Sse {
            events,
            gap,
            stall_after,
            keep_alive,
        } => {
            let guard = AbortGuard {
                shared,
                finished: false,
            };
            let state = (0usize, guard);
            let stream = futures::stream::unfold(state, move |(i, mut guard)| {
                let events = events.clone();
                async move {
                    if stall_after.is_some_and(|n| i >= n) {
                        // Silent, or comments only, until the client gives up.
                        let pause = if keep_alive { 10 } else { 60_000 };
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                        let comment = Bytes::from_static(b": still here\n\n");
                        return Some((Ok::<_, Infallible>(comment), (i, guard)));
                    }
                    let Some(event) = events.get(i) else {
                        guard.finished = true;
                        drop(guard);
                        return None;
                    };
                    if i > 0 && !gap.is_zero() {
                        tokio::time::sleep(gap).await;
                    }
                    let frame = Bytes::from(format!("data: {event}\n\n"));
                    Some((Ok(frame), (i + 1, guard)))
                }
            });
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Reply::Broken { events } => {
            use futures::StreamExt;
            let frames = events
                .into_iter()
                .map(|event| Ok(Bytes::from(format!("data: {event}\n\n"))));
            // The pause lets the headers and frames go out before the break.
            let reset = futures::stream::once(async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "reset",
                ))
            });
            let body = futures::stream::iter(frames).chain(reset);
            Response::builder()
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(body))
                .unwrap()
        }
        Reply::Delayed(..) => unreachable!("unwrapped above"),
    }
}

/// Counts SSE bodies dropped before their end, i.e. requests the client aborted.
struct AbortGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.aborted.fetch_add(1, Ordering::SeqCst);
        }
    }
}
