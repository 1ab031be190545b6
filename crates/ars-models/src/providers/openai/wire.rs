//! The OpenAI chat-completions wire format: request bodies, stream chunks, whole responses and
//! error bodies. Private to this provider; nothing here crosses the seam.

use std::collections::VecDeque;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::{ChatEvent, ChatRequest, FinishReason, Message, SamplingParams, Usage};

/// The JSON body of `POST /chat/completions`.
pub(super) fn request_body(
    model: &str,
    request: &ChatRequest,
    params: SamplingParams,
    streaming: bool,
) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(message).collect();
    let mut body = json!({ "model": model, "messages": messages, "stream": streaming });
    if streaming {
        // Without this the final chunk carries no usage and token budgets cannot be kept.
        body["stream_options"] = json!({ "include_usage": true });
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    if let Some(temperature) = params.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = params.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    if let Some(top_p) = params.top_p {
        body["top_p"] = json!(top_p);
    }
    body
}

fn message(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({ "role": "system", "content": content }),
        Message::User { content } => json!({ "role": "user", "content": content }),
        Message::Assistant {
            content,
            tool_calls,
        } if !tool_calls.is_empty() => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments },
                    })
                })
                .collect();
            // `null` rather than "" is what the reference API emits for a tool-only turn.
            let content = (!content.is_empty()).then_some(content);
            json!({ "role": "assistant", "content": content, "tool_calls": calls })
        }
        Message::Assistant { content, .. } => json!({ "role": "assistant", "content": content }),
        Message::Tool {
            tool_call_id,
            content,
        } => json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content }),
    }
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        }
    }
}

/// One `data:` payload of a stream. Every field is lenient: servers differ in what they omit
/// or send as `null` (vLLM ends with `"choices": null`, for one).
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<DeltaToolCall>>,
}

#[derive(Deserialize)]
struct DeltaToolCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<DeltaFunction>,
}

#[derive(Deserialize)]
struct DeltaFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// Why a chunk could not become events.
#[derive(Debug)]
pub(super) enum ChunkError {
    /// Not the wire format.
    Malformed(String),
    /// The server reported an error inside the stream.
    Provider(String),
}

/// Turns stream chunks into events. Usage is held back until the end, since some servers
/// repeat it on every chunk and only the last count is the total.
#[derive(Default)]
pub(super) struct ChunkParser {
    usage: Option<Usage>,
    finished: bool,
}

impl ChunkParser {
    /// Parses one `data:` payload (not `[DONE]`) into `out`.
    pub(super) fn chunk(
        &mut self,
        data: &str,
        out: &mut VecDeque<ChatEvent>,
    ) -> Result<(), ChunkError> {
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            ChunkError::Malformed(format!("bad JSON chunk ({e}): {}", truncate(data, 200)))
        })?;
        if let Some(error) = chunk.error {
            return Err(ChunkError::Provider(error_text(&error)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        // We never ask for `n > 1`, so the first choice is the answer.
        let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) else {
            return Ok(());
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                out.push_back(ChatEvent::TextDelta { text });
            }
            for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
                let (name, arguments) = call
                    .function
                    .map(|f| (f.name, f.arguments.unwrap_or_default()))
                    .unwrap_or_default();
                if call.id.is_none() && name.is_none() && arguments.is_empty() {
                    continue;
                }
                out.push_back(ChatEvent::ToolCallDelta {
                    index: call.index.unwrap_or(position),
                    id: call.id.filter(|s| !s.is_empty()),
                    name: name.filter(|s| !s.is_empty()),
                    arguments,
                });
            }
        }
        // Only the first reason counts; some servers repeat it on the usage chunk.
        if let Some(reason) = choice
            .finish_reason
            .filter(|r| !r.is_empty() && !self.finished)
        {
            self.finished = true;
            out.push_back(ChatEvent::Finished {
                reason: FinishReason::from_wire(&reason),
            });
        }
        Ok(())
    }

    /// Whether the model said why it stopped, i.e. the answer is complete.
    pub(super) fn finished(&self) -> bool {
        self.finished
    }

    /// The events due at the end of the stream.
    pub(super) fn finish(&mut self, out: &mut VecDeque<ChatEvent>) {
        if let Some(usage) = self.usage.take() {
            out.push_back(ChatEvent::Usage(usage));
        }
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<CompletionChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct CompletionChoice {
    message: CompletionMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct CompletionMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CompletionToolCall>>,
}

#[derive(Deserialize)]
struct CompletionToolCall {
    #[serde(default)]
    id: Option<String>,
    function: CompletionFunction,
}

#[derive(Deserialize)]
struct CompletionFunction {
    name: String,
    /// A JSON string per the spec; some servers send the object itself.
    #[serde(default)]
    arguments: Value,
}

/// The events a whole (non-streaming) response stands for, in stream order.
pub(super) fn completion_events(body: &str) -> Result<Vec<ChatEvent>, ChunkError> {
    let completion: Completion = serde_json::from_str(body).map_err(|e| {
        ChunkError::Malformed(format!("bad JSON response ({e}): {}", truncate(body, 200)))
    })?;
    if let Some(error) = completion.error {
        return Err(ChunkError::Provider(error_text(&error)));
    }
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| ChunkError::Malformed("response has no choices".into()))?;
    let mut events = Vec::new();
    if let Some(text) = choice.message.content.filter(|t| !t.is_empty()) {
        events.push(ChatEvent::TextDelta { text });
    }
    for (index, call) in choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let arguments = match call.function.arguments {
            Value::String(text) => text,
            Value::Null => String::new(),
            other => other.to_string(),
        };
        events.push(ChatEvent::ToolCallDelta {
            index,
            id: call.id,
            name: Some(call.function.name),
            arguments,
        });
    }
    let reason = choice.finish_reason.as_deref().map(FinishReason::from_wire);
    if let Some(reason) = reason {
        events.push(ChatEvent::Finished { reason });
    }
    if let Some(usage) = completion.usage {
        events.push(ChatEvent::Usage(usage.into()));
    }
    Ok(events)
}

/// The human part of an error body: `{"error": {"message"}}`, `{"error": "…"}`,
/// `{"message"}` or `{"detail"}`, else the raw text.
pub(super) fn error_message(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => {
            let text = value.get("error").map(error_text).or_else(|| {
                ["message", "detail"]
                    .iter()
                    .find_map(|k| value.get(*k).and_then(Value::as_str).map(str::to_string))
            });
            text.unwrap_or_else(|| truncate(body, 500))
        }
        Err(_) if body.trim().is_empty() => "(empty response body)".into(),
        Err(_) => truncate(body.trim(), 500),
    }
}

fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => text.clone(),
        other => other
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| truncate(&other.to_string(), 500), str::to_string),
    }
}

/// Whether an error body says the model does not exist (OpenAI's `model_not_found`, Ollama's
/// `model "x" not found`, vLLM's `The model `x` does not exist`).
pub(super) fn mentions_unknown_model(body: &str) -> bool {
    let body = body.to_lowercase();
    body.contains("model_not_found")
        || (body.contains("model")
            && [
                "not found",
                "does not exist",
                "not exist",
                "unknown model",
                "no such model",
            ]
            .iter()
            .any(|phrase| body.contains(phrase)))
}

/// Whether a refusal says streaming cannot be combined with tools, as llama.cpp's Python
/// server answers ("Streaming is not supported with tools", and similar wordings).
pub(super) fn refuses_stream_with_tools(body: &str) -> bool {
    let body = body.to_lowercase();
    body.contains("stream") && (body.contains("tool") || body.contains("function"))
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_found_in_every_common_shape() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message(r#"{"detail":"nope"}"#), "nope");
        assert_eq!(error_message("plain text"), "plain text");
    }

    #[test]
    fn unknown_model_wordings_are_recognised() {
        assert!(mentions_unknown_model(
            r#"{"error":"model \"x\" not found, try pulling it"}"#
        ));
        assert!(mentions_unknown_model("The model `x` does not exist."));
        assert!(!mentions_unknown_model("max_tokens is too large"));
    }

    #[test]
    fn assistant_tool_turns_send_null_content() {
        let call = crate::ToolCall {
            id: "c1".into(),
            name: "ls".into(),
            arguments: "{}".into(),
        };
        let value = message(&Message::assistant("", vec![call]));
        assert!(value["content"].is_null());
        assert_eq!(value["tool_calls"][0]["function"]["name"], "ls");
    }

    #[test]
    fn non_streaming_responses_become_the_same_events() {
        let body = r#"{"choices":[{"message":{"content":null,"tool_calls":[
            {"id":"a","type":"function","function":{"name":"f","arguments":{"x":1}}}]},
            "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let events = completion_events(body).unwrap();
        assert_eq!(
            events[0],
            ChatEvent::ToolCallDelta {
                index: 0,
                id: Some("a".into()),
                name: Some("f".into()),
                arguments: "{\"x\":1}".into(),
            }
        );
        assert_eq!(events.len(), 3);
    }
}
