//! One conformance suite for every `ChatModel`: the scripted model and the OpenAI-compatible
//! provider must tell the same answer through the same events, so the runtime can be tested
//! on either and trust both.

// This whole crate is test code; `allow-unwrap-in-tests` covers only `#[test]` functions,
// not the helpers around them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;

use ars_models::{
    AssistantTurn, ChatEvent, ChatModel, ChatRequest, FinishReason, Message, ModelError,
    ModelRegistry, ModelsConfig, SamplingParams, ToolCall, ToolDefinition, Usage,
};
use futures::StreamExt;
use serde_json::{Value, json};
use support::{MockServer, fast_options, finish_chunk, sse, text_chunk, tool_chunk, usage_chunk};

fn request() -> ChatRequest {
    ChatRequest::new(vec![Message::user("Weather in Paris and Rome?")]).with_tools(vec![
        ToolDefinition {
            name: "get_weather".into(),
            description: "Current weather of a city".into(),
            parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}})
                .into(),
        },
    ])
}

fn scripted(script: Value) -> Arc<dyn ChatModel> {
    let registry = ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap();
    let mut config = ars_models::parse_model_ref("scripted/demo").unwrap();
    config.script = Some(script);
    registry.model_for(&config).unwrap()
}

async fn openai(server: &MockServer) -> Arc<dyn ChatModel> {
    Arc::new(
        server
            .provider(None, fast_options())
            .model("m", SamplingParams::default()),
    )
}

/// Plays `request` on `model` and checks the stream invariants every provider keeps: one
/// `Finished`, at most one `Usage`, nothing after an error. Returns the folded turn or the
/// error, with the text streamed before it.
async fn check(model: &Arc<dyn ChatModel>) -> (String, Result<AssistantTurn, ModelError>) {
    let items: Vec<_> = model.stream(request()).await.unwrap().collect().await;
    let mut acc = ars_models::TurnAccumulator::new();
    let (mut finished, mut usages) = (0, 0);
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok(event) => {
                finished += usize::from(matches!(event, ChatEvent::Finished { .. }));
                usages += usize::from(matches!(event, ChatEvent::Usage(_)));
                acc.push(event);
            }
            Err(error) => {
                assert_eq!(i, items.len() - 1, "nothing may follow an error");
                return (acc.text().to_string(), Err(error.clone()));
            }
        }
    }
    assert_eq!(finished, 1, "exactly one Finished event");
    assert!(usages <= 1, "at most one Usage event");
    (acc.text().to_string(), acc.finish())
}

#[tokio::test]
async fn every_provider_tells_the_same_tool_turn() {
    let expected = AssistantTurn {
        text: "Let me check both.".into(),
        tool_calls: vec![
            ToolCall {
                id: "call_a".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
            },
            ToolCall {
                id: "call_b".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Rome"}"#.into(),
            },
        ],
        usage: Some(Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
        }),
        finish_reason: FinishReason::ToolCalls,
    };
    let script = scripted(json!([{
        "text": "Let me check both.",
        "tool_calls": [
            { "id": "call_a", "name": "get_weather", "arguments": r#"{"city":"Paris"}"# },
            { "id": "call_b", "name": "get_weather", "arguments": r#"{"city":"Rome"}"# },
        ],
        "usage": { "prompt_tokens": 10, "completion_tokens": 5 },
    }]));
    let server = MockServer::start(vec![sse(&[
        text_chunk("Let me "),
        text_chunk("check both."),
        tool_chunk(json!([{ "index": 0, "id": "call_a", "type": "function",
                            "function": { "name": "get_weather", "arguments": "{\"city\":" } }])),
        tool_chunk(json!([{ "index": 1, "id": "call_b", "type": "function",
                            "function": { "name": "get_weather", "arguments": "{\"city\":\"Rome\"}" } }])),
        tool_chunk(json!([{ "index": 0, "function": { "arguments": "\"Paris\"}" } }])),
        finish_chunk("tool_calls"),
        usage_chunk(10, 5),
    ])])
    .await;
    for model in [script, openai(&server).await] {
        let (_, turn) = check(&model).await;
        assert_eq!(turn.unwrap(), expected, "{}", model.provider());
    }
}

#[tokio::test]
async fn every_provider_ends_a_failed_stream_with_one_error_after_the_text() {
    let script = scripted(json!([{ "text": "partial", "error": "overloaded" }]));
    let server = MockServer::start(vec![sse(&[
        text_chunk("partial"),
        json!({"error": {"message": "overloaded"}}),
    ])])
    .await;
    for model in [script, openai(&server).await] {
        let (text, result) = check(&model).await;
        assert_eq!(text, "partial", "{}", model.provider());
        assert_eq!(result, Err(ModelError::Provider("overloaded".into())));
    }
}
