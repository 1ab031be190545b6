//! The scripted test/demo provider, through the registry as the runtime uses it. Each test is
//! named after the rule it checks.

// This whole crate is test code; `allow-unwrap-in-tests` covers only `#[test]` functions,
// not the helpers around them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use ars_models::{
    AssistantTurn, ChatEvent, ChatModel, ChatRequest, FinishReason, Message, ModelError,
    ModelRegistry, ModelsConfig, ToolCall, Usage, validate_script,
};
use futures::StreamExt;
use serde_json::{Value, json};

fn scripted(script: Value) -> Arc<dyn ChatModel> {
    let registry = ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap();
    let mut config = ars_models::parse_model_ref("scripted/demo").unwrap();
    config.script = Some(script);
    registry.model_for(&config).unwrap()
}

async fn play(model: &Arc<dyn ChatModel>, messages: Vec<Message>) -> AssistantTurn {
    model.complete(ChatRequest::new(messages)).await.unwrap()
}

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "t".into(),
        arguments: "{}".into(),
    }
}

fn three_turns() -> Value {
    json!([{ "text": "one" }, { "text": "two" }, { "text": "three" }])
}

#[tokio::test]
async fn the_turn_is_the_number_of_assistant_messages_after_the_last_user_message() {
    let model = scripted(three_turns());
    let first = play(&model, vec![Message::user("hi")]).await;
    assert_eq!(first.text, "one");
    let second = play(
        &model,
        vec![
            Message::user("hi"),
            Message::assistant("", vec![call("c1")]),
            Message::tool("c1", "result"),
        ],
    )
    .await;
    assert_eq!(second.text, "two");
}

#[tokio::test]
async fn each_new_user_message_replays_the_script_from_the_start() {
    let model = scripted(three_turns());
    let turn = play(
        &model,
        vec![
            Message::user("hi"),
            Message::assistant("one", vec![]),
            Message::assistant("two", vec![]),
            Message::user("again"),
        ],
    )
    .await;
    assert_eq!(turn.text, "one");
}

#[tokio::test]
async fn past_the_end_the_last_turn_repeats() {
    let model = scripted(three_turns());
    let mut messages = vec![Message::user("hi")];
    messages.extend((0..5).map(|_| Message::assistant("x", vec![])));
    assert_eq!(play(&model, messages).await.text, "three");
}

#[tokio::test]
async fn placeholders_are_filled_from_the_request() {
    let model = scripted(json!({ "turns": [
        { "text": "[{{system_prompt}}] you said {{input}} ({{user_turns}} turns)" },
        { "text": "tool said {{ last_tool_result }}" },
    ]}));
    let messages = vec![
        Message::system("Be kind."),
        Message::user("first"),
        Message::assistant("one", vec![]),
        Message::user("hello there"),
    ];
    assert_eq!(
        play(&model, messages.clone()).await.text,
        "[Be kind.] you said hello there (2 turns)"
    );
    let mut with_tool = messages;
    with_tool.push(Message::assistant("", vec![call("c1")]));
    with_tool.push(Message::tool("c1", "42"));
    assert_eq!(play(&model, with_tool).await.text, "tool said 42");
}

#[tokio::test]
async fn tool_calls_get_deterministic_ids_and_rendered_arguments() {
    let model = scripted(json!([{
        "text": "Let me look.",
        "tool_calls": [
            { "name": "search", "arguments": { "q": "{{input}}", "n": 3 } },
            { "name": "shell", "arguments": "{\"cmd\": \"ls\"", "id": "mine" },
        ],
    }]));
    let turn = play(&model, vec![Message::user("rust")]).await;
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
    assert_eq!(turn.tool_calls.len(), 2);
    assert_eq!(turn.tool_calls[0].id, "call_0_0");
    assert_eq!(turn.tool_calls[0].name, "search");
    let args: Value = serde_json::from_str(&turn.tool_calls[0].arguments).unwrap();
    assert_eq!(args, json!({ "q": "rust", "n": 3 }));
    assert_eq!(turn.tool_calls[1].id, "mine");
    assert_eq!(
        turn.tool_calls[1].arguments, "{\"cmd\": \"ls\"",
        "string arguments pass through unchanged, even broken JSON"
    );
}

#[tokio::test]
async fn the_second_turn_of_a_tool_loop_numbers_its_ids_by_turn() {
    let model = scripted(json!([
        { "tool_calls": [{ "name": "a", "arguments": {} }] },
        { "tool_calls": [{ "name": "b", "arguments": {} }] },
    ]));
    let turn = play(
        &model,
        vec![
            Message::user("go"),
            Message::assistant("", vec![call("call_0_0")]),
            Message::tool("call_0_0", "done"),
        ],
    )
    .await;
    assert_eq!(turn.tool_calls[0].id, "call_1_0");
}

#[tokio::test]
async fn text_streams_as_several_word_deltas() {
    let model = scripted(json!([{ "text": "one two three" }]));
    let events: Vec<_> = model
        .stream(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let texts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["one ", "two ", "three"]);
    assert!(matches!(events.last(), Some(ChatEvent::Usage(_))));
}

#[tokio::test(start_paused = true)]
async fn delay_ms_passes_before_the_first_event() {
    let model = scripted(json!([{ "text": "late", "delay_ms": 5000 }]));
    let started = tokio::time::Instant::now();
    let mut stream = model
        .stream(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1),
        "stream() itself does not wait"
    );
    stream.next().await.unwrap().unwrap();
    assert!(started.elapsed() >= Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn chunk_delays_let_a_run_be_cancelled_mid_stream() {
    let model = scripted(json!([{ "text": "a b c d e f", "chunk_delay_ms": 1000 }]));
    let started = tokio::time::Instant::now();
    let mut stream = model
        .stream(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let mut acc = ars_models::TurnAccumulator::new();
    for _ in 0..2 {
        acc.push(&stream.next().await.unwrap().unwrap());
    }
    drop(stream);
    assert_eq!(acc.text(), "a b ");
    assert_eq!(started.elapsed(), Duration::from_secs(1));
}

#[tokio::test]
async fn an_error_turn_fails_with_a_provider_error_after_its_text() {
    let model = scripted(json!([{ "text": "partial", "error": "backend fell over on {{input}}" }]));
    let mut stream = model
        .stream(ChatRequest::new(vec![Message::user("q")]))
        .await
        .unwrap();
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ChatEvent::TextDelta {
            text: "partial".into()
        }
    );
    assert_eq!(
        stream.next().await.unwrap().unwrap_err(),
        ModelError::Provider("backend fell over on q".into())
    );
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn usage_is_the_scripted_one_or_a_deterministic_estimate() {
    let given =
        scripted(json!([{ "text": "x", "usage": { "prompt_tokens": 9, "completion_tokens": 1 } }]));
    let turn = play(&given, vec![Message::user("hi")]).await;
    assert_eq!(
        turn.usage,
        Some(Usage {
            prompt_tokens: 9,
            completion_tokens: 1
        })
    );
    let estimated = scripted(json!([{ "text": "12345678" }]));
    let turn = play(&estimated, vec![Message::user("abcdefghijkl")]).await;
    assert_eq!(
        turn.usage,
        Some(Usage {
            prompt_tokens: 3,
            completion_tokens: 2
        })
    );
}

#[tokio::test]
async fn without_a_script_the_model_echoes() {
    let registry = ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap();
    let model = registry
        .model_for(&ars_models::parse_model_ref("scripted/echo").unwrap())
        .unwrap();
    let turn = play(&model, vec![Message::user("ping")]).await;
    assert_eq!(turn.text, "You said: ping");
    assert_eq!(turn.finish_reason, FinishReason::Stop);
}

#[test]
fn validate_script_rejects_bad_scripts_with_clear_messages() {
    let cases = [
        (json!("hello"), "an array of turns"),
        (json!([]), "at least one turn"),
        (json!({ "steps": [] }), "unknown field `steps`"),
        (json!([{ "txt": "typo" }]), "turn 0: unknown field `txt`"),
        (json!([{ "text": "ok" }, { "text": 5 }]), "turn 1:"),
        (
            json!([{ "tool_calls": [{ "arguments": {} }] }]),
            "missing field `name`",
        ),
        (
            json!([{ "tool_calls": [{ "name": " " }] }]),
            "tool call 0 needs a `name`",
        ),
        (
            json!([{ "tool_calls": [{ "name": "t", "arguments": 3 }] }]),
            "must be an object or a string",
        ),
        (
            json!([{ "text": "{{inptu}}" }]),
            "unknown placeholder `{{inptu}}`",
        ),
        (json!([{ "delay_ms": 99_999_999u64 }]), "`delay_ms`"),
        (json!([3]), "turn 0: a turn must be an object"),
    ];
    for (script, expected) in cases {
        let error = validate_script(&script).unwrap_err();
        assert!(error.contains(expected), "{script}: {error}");
    }
    assert_eq!(validate_script(&three_turns()), Ok(()));
}
