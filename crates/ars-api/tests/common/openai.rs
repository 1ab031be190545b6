//! A loopback OpenAI-compatible model server for the provider tests. It speaks the real wire
//! format — `GET /v1/models` (`{data: [{id}]}`), `POST /v1/chat/completions` streamed
//! (`data: {chunk}` events ending in `data: [DONE]`) or not — accepts one API key, serves a
//! fixed list of models, refuses the rest as OpenAI does (401 `invalid_api_key`, 404
//! `model_not_found`), and answers every chat with `reply from <label>`, so a test can tell
//! which server a run reached. It records what it received.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: &'static str,
    pub headers: HeaderMap,
    pub body: Value,
}

struct Shared {
    label: String,
    key: Option<String>,
    models: Vec<String>,
    seen: Mutex<Vec<Seen>>,
}

pub struct FakeOpenAi {
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    shared: Arc<Shared>,
}

impl FakeOpenAi {
    /// Starts a server named `label` that accepts `key` (any request, when `None`) and serves
    /// `models`.
    pub async fn start(label: &str, key: Option<&str>, models: &[&str]) -> Self {
        let shared = Arc::new(Shared {
            label: label.to_string(),
            key: key.map(str::to_string),
            models: models.iter().map(|m| m.to_string()).collect(),
            seen: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .route("/v1/models", get(list_models))
            .route("/v1/chat/completions", post(chat))
            .route("/v1/embeddings", post(embeddings))
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
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

/// A base URL on which nothing listens: a port that was just free.
pub async fn unreachable_base_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

fn error(status: StatusCode, message: &str, code: &str) -> Response {
    let body = json!({"error": {
        "message": message, "type": "invalid_request_error", "param": null, "code": code,
    }});
    (status, Json(body)).into_response()
}

/// The refusal for a request without the accepted key, if it lacks it.
fn refuse_key(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let expected = shared.key.as_ref()?;
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    (given != Some(expected.as_str())).then(|| {
        error(
            StatusCode::UNAUTHORIZED,
            "Incorrect API key provided. You can find your API key in your account settings.",
            "invalid_api_key",
        )
    })
}

fn record(shared: &Shared, path: &'static str, headers: &HeaderMap, body: Value) {
    shared.seen.lock().unwrap().push(Seen {
        path,
        headers: headers.clone(),
        body,
    });
}

async fn list_models(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    record(&shared, "/v1/models", &headers, Value::Null);
    if let Some(refused) = refuse_key(&shared, &headers) {
        return refused;
    }
    let data: Vec<Value> = shared
        .models
        .iter()
        .map(
            |id| json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "test"}),
        )
        .collect();
    Json(json!({"object": "list", "data": data})).into_response()
}

/// `POST /v1/embeddings`: each input's deterministic hashing embedding (the one the retrieval
/// benchmarks use), in input order, as OpenAI answers them.
async fn embeddings(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    record(&shared, "/v1/embeddings", &headers, body.clone());
    if let Some(refused) = refuse_key(&shared, &headers) {
        return refused;
    }
    let model = body["model"].as_str().unwrap_or_default().to_string();
    if !shared.models.contains(&model) {
        return error(
            StatusCode::NOT_FOUND,
            &format!("The model `{model}` does not exist or you do not have access to it."),
            "model_not_found",
        );
    }
    let inputs: Vec<String> = match &body["input"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items
            .iter()
            .map(|item| item.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => Vec::new(),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            json!({"object": "embedding", "index": index,
                   "embedding": ars_knowledge::vectors::hash_embedding(text)})
        })
        .collect();
    Json(json!({"object": "list", "data": data, "model": model,
                "usage": {"prompt_tokens": inputs.len(), "total_tokens": inputs.len()}}))
    .into_response()
}

async fn chat(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    record(&shared, "/v1/chat/completions", &headers, body.clone());
    if let Some(refused) = refuse_key(&shared, &headers) {
        return refused;
    }
    let model = body["model"].as_str().unwrap_or_default().to_string();
    if !shared.models.contains(&model) {
        return error(
            StatusCode::NOT_FOUND,
            &format!("The model `{model}` does not exist or you do not have access to it."),
            "model_not_found",
        );
    }
    let text = format!("reply from {}", shared.label);
    if body["stream"].as_bool() != Some(true) {
        return Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        }))
        .into_response();
    }
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let usage = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    });
    let events = [
        chunk(json!({"role": "assistant", "content": ""}), Value::Null).to_string(),
        chunk(json!({"content": text}), Value::Null).to_string(),
        chunk(json!({}), json!("stop")).to_string(),
        usage.to_string(),
        "[DONE]".to_string(),
    ];
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from(body))
        .unwrap()
}
