//! `POST /v1/chat/completions`: a run of the agent `model` names, on a new thread seeded with
//! the request's `messages` (the last one, a user message, is the input), or on the thread
//! `X-ARS-Thread-Id` names (its stored history plus the last user message). The answer is the
//! run's final assistant text, whole or as `chat.completion.chunk`s ending with `[DONE]`.
//! System and developer messages are read and left out: the agent's own system prompt
//! applies.

use std::convert::Infallible;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use ars_domain::{MessageRole, Run, RunStatus, ToolCallRecord};

use super::stream::{Piece, pieces};
use super::{OpenAiError, THREAD_HEADER, model_agent, with_ids};
use crate::extract::{ApiJson, KeyAuth};
use crate::protocols::{
    CancelOnDrop, MAX_SEED_MESSAGES, Seed, ended, own_thread, run_input, seeded_thread, start,
};
use crate::{ApiError, AppState};

/// The request; fields OpenAI defines that an agent has no use for (`temperature`, `user`,
/// …) are read and ignored: the agent's own settings decide.
#[derive(Debug, Deserialize)]
pub(super) struct ChatRequest {
    model: String,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    n: Option<u32>,
    /// Tools the client would run itself: an agent runs only its own.
    #[serde(default)]
    tools: Option<Vec<Value>>,
}

#[derive(Debug, Default, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
    #[serde(default)]
    tool_call_id: Option<String>,
}

/// A message's content: text, or parts of which only text ones are read.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
pub(super) struct Part {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

impl Content {
    /// The text of the content; a part that is not text is refused, naming `at`.
    pub(super) fn text(self, at: &str) -> Result<String, ApiError> {
        match self {
            Content::Text(text) => Ok(text),
            Content::Parts(parts) => {
                let mut text = String::new();
                for (i, part) in parts.into_iter().enumerate() {
                    match (part.kind.as_str(), part.text) {
                        ("text" | "input_text" | "output_text", Some(piece)) => {
                            text.push_str(&piece)
                        }
                        (kind, _) => {
                            return Err(ApiError::unprocessable(
                                format!("{at}.content[{i}]"),
                                format!(
                                    "content parts of type `{kind}` are not supported; send text"
                                ),
                            ));
                        }
                    }
                }
                Ok(text)
            }
        }
    }
}

#[derive(Debug, Deserialize)]
struct WireToolCall {
    id: String,
    function: WireFunction,
}

#[derive(Debug, Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

/// The conversation before the input, and the input (the last message, from the user).
/// System and developer messages are left out: the agent's own system prompt applies.
fn conversation(messages: Vec<ChatMessage>) -> Result<(Vec<Seed>, String), ApiError> {
    if messages.len() > MAX_SEED_MESSAGES {
        return Err(ApiError::unprocessable(
            "messages",
            format!("at most {MAX_SEED_MESSAGES} messages"),
        ));
    }
    let mut seeds = Vec::with_capacity(messages.len());
    for (i, message) in messages.into_iter().enumerate() {
        let at = format!("messages[{i}]");
        let role = match message.role.as_str() {
            // The agent's own system prompt applies, as with the Responses API's
            // `instructions`: a client's is read and left out.
            "system" | "developer" => continue,
            "user" => MessageRole::User,
            "assistant" => MessageRole::Assistant,
            "tool" => MessageRole::Tool,
            other => {
                return Err(ApiError::unprocessable(
                    format!("{at}.role"),
                    format!(
                        "unknown role `{other}`; use system, developer, user, assistant or tool"
                    ),
                ));
            }
        };
        let content = match message.content {
            Some(content) => content.text(&at)?,
            None => String::new(),
        };
        let tool_calls = message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|call| ToolCallRecord {
                id: call.id,
                name: call.function.name,
                arguments: call.function.arguments,
                interrupted: false,
            })
            .collect();
        if role == MessageRole::Tool && message.tool_call_id.is_none() {
            return Err(ApiError::unprocessable(
                format!("{at}.tool_call_id"),
                "a tool message names the call it answers in `tool_call_id`",
            ));
        }
        seeds.push(Seed {
            role,
            content,
            tool_calls,
            tool_call_id: message.tool_call_id,
        });
    }
    match seeds.pop() {
        Some(last) if last.role == MessageRole::User => Ok((seeds, last.content)),
        _ => Err(ApiError::unprocessable(
            "messages",
            "the last message must be the user's: it is what the agent answers",
        )),
    }
}

pub(super) async fn create(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    headers: HeaderMap,
    body: Result<ApiJson<ChatRequest>, ApiError>,
) -> Result<Response, OpenAiError> {
    let auth = auth?;
    let ApiJson(body) = body?;
    if body.n.is_some_and(|n| n != 1) {
        return Err(ApiError::unprocessable("n", "only one choice (`n: 1`) is produced").into());
    }
    if body.tools.as_ref().is_some_and(|tools| !tools.is_empty()) {
        return Err(ApiError::unprocessable(
            "tools",
            "an agent runs its own tools; client-side tools are not supported",
        )
        .into());
    }
    let agent = model_agent(&state, &auth, &body.model).await?;
    let (seeds, input) = conversation(body.messages)?;
    let input = run_input(input, "messages")?;
    let user = &auth.0.user;
    let thread = match headers.get(THREAD_HEADER) {
        Some(id) => {
            let id = id.to_str().unwrap_or_default();
            own_thread(&state, user, id, Some(&agent)).await?
        }
        None => seeded_thread(&state, user, &agent, seeds, input.as_str()).await?,
    };
    let run = start(&state, user, thread, input).await?;
    tracing::info!(run_id = %run.id, agent = %agent.slug, user = %user.id, "run started over /v1/chat/completions");
    let stream = body.stream.unwrap_or(false);
    let include_usage = body
        .stream_options
        .and_then(|o| o.include_usage)
        .unwrap_or(false);
    if stream {
        streamed(&state, run, agent.slug, include_usage).await
    } else {
        let mut guard = CancelOnDrop::new(&state.runtime, run.id);
        let ended = ended(&state.runtime, run.id).await?;
        guard.disarm();
        if ended.status != RunStatus::Success {
            return Err(OpenAiError::of_run(&ended));
        }
        let usage = state
            .runtime
            .total_usage(&ended)
            .await
            .map_err(ApiError::from)?;
        let body = json!({
            "id": completion_id(&ended),
            "object": "chat.completion",
            "created": ended.created_at.timestamp(),
            "model": agent.slug,
            "system_fingerprint": null,
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": ended.output.clone().unwrap_or_default(),
                    "refusal": null,
                },
                "logprobs": null,
                "finish_reason": "stop",
            }],
            "usage": usage_json(usage),
        });
        Ok(with_ids(Json(body).into_response(), &ended))
    }
}

fn completion_id(run: &Run) -> String {
    format!("chatcmpl-{}", run.id)
}

fn usage_json(usage: ars_domain::Usage) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total(),
    })
}

/// The answer as `chat.completion.chunk` events: the role, the text as it streams, the finish
/// reason, the usage when asked for, then `[DONE]`; a run that fails sends an `error` event
/// before `[DONE]`.
async fn streamed(
    state: &AppState,
    run: Run,
    model: String,
    include_usage: bool,
) -> Result<Response, OpenAiError> {
    let pieces = pieces(&state.runtime, run.id).await?;
    let runtime = state.runtime.clone();
    let id = completion_id(&run);
    let created = run.created_at.timestamp();
    let chunk = move |delta: Value, finish: Option<&str>| {
        json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": null,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        })
    };
    let first = chunk(json!({"role": "assistant", "content": ""}), None);
    let events = pieces.then(move |piece| {
        let chunk = chunk.clone();
        let runtime = runtime.clone();
        async move {
            let data: Vec<Value> = match piece {
                Piece::Text(text) => vec![chunk(json!({"content": text}), None)],
                Piece::Ended(run) if run.status == RunStatus::Success => {
                    let mut last = vec![chunk(json!({}), Some("stop"))];
                    if include_usage {
                        match runtime.total_usage(&run).await {
                            Ok(usage) => {
                                let mut usage_chunk = chunk(json!({}), None);
                                usage_chunk["choices"] = json!([]);
                                usage_chunk["usage"] = usage_json(usage);
                                last.push(usage_chunk);
                            }
                            Err(e) => last.push(OpenAiError::from(ApiError::from(e)).body()),
                        }
                    }
                    last
                }
                Piece::Ended(run) => vec![OpenAiError::of_run(&run).body()],
                Piece::Failed(error) => vec![error.body()],
            };
            futures::stream::iter(
                data.into_iter()
                    .map(|d| Event::default().data(d.to_string())),
            )
        }
    });
    let body = futures::stream::once(async move { Event::default().data(first.to_string()) })
        .chain(events.flatten())
        .chain(futures::stream::once(async {
            Event::default().data("[DONE]")
        }))
        .map(Ok::<_, Infallible>);
    let response = Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response();
    Ok(with_ids(response, &run))
}
