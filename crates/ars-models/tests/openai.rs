//! The OpenAI-compatible provider against a loopback server speaking the real wire format.
//! Each test is named after the rule it checks.

// This whole crate is test code; `allow-unwrap-in-tests` covers only `#[test]` functions,
// not the helpers around them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use ars_models::{
    ChatEvent, ChatModel, ChatRequest, FinishReason, Message, ModelError, ModelRegistry,
    ModelsConfig, ProviderConfig, SamplingParams, ToolDefinition, TurnAccumulator, Usage,
};
use futures::StreamExt;
use serde_json::json;
use support::{
    MockServer, Reply, fast_options, finish_chunk, sse, status, text_chunk, tool_chunk, usage_chunk,
};

fn weather_tool() -> ToolDefinition {
    ToolDefinition {
        name: "get_weather".into(),
        description: "Current weather of a city".into(),
        parameters: json!({
            "type": "object",
            "properties": { "city": { "type": "string" } },
            "required": ["city"],
        })
        .into(),
    }
}

fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Be brief."),
        Message::user("Weather in Paris and Rome?"),
    ])
}

fn tool_request() -> ChatRequest {
    request().with_tools(vec![weather_tool()])
}

async fn model_on(server: &MockServer) -> ars_models::OpenAiModel {
    server
        .provider(Some("sk-test"), fast_options())
        .model("gpt-test", SamplingParams::default())
}

async fn error_of(model: &dyn ChatModel, request: ChatRequest) -> ModelError {
    match model.stream(request).await {
        Err(error) => error,
        Ok(stream) => TurnAccumulator::new().collect(stream).await.unwrap_err(),
    }
}

#[tokio::test]
async fn text_deltas_stream_in_order_and_fold_into_the_answer() {
    let server = MockServer::start(vec![sse(&[
        text_chunk("Hel"),
        text_chunk("lo"),
        finish_chunk("stop"),
        usage_chunk(5, 2),
    ])])
    .await;
    let model = model_on(&server).await;
    let events: Vec<_> = model.stream(request()).await.unwrap().collect().await;
    let events: Vec<ChatEvent> = events.into_iter().map(Result::unwrap).collect();
    assert_eq!(events[0], ChatEvent::TextDelta { text: "Hel".into() });
    assert_eq!(events[1], ChatEvent::TextDelta { text: "lo".into() });
    let turn = model.complete(request()).await.unwrap();
    assert_eq!(turn.text, "Hello");
    assert_eq!(turn.finish_reason, FinishReason::Stop);
}

#[tokio::test]
async fn tool_call_id_name_and_arguments_split_across_chunks_are_assembled() {
    let server = MockServer::start(vec![sse(&[
        tool_chunk(json!([{ "index": 0, "id": "call_", "type": "function",
                            "function": { "name": "get_", "arguments": "" } }])),
        tool_chunk(json!([{ "index": 0, "id": "abc", "function": { "name": "weather" } }])),
        tool_chunk(json!([{ "index": 0, "function": { "arguments": "{\"ci" } }])),
        tool_chunk(json!([{ "index": 0, "function": { "arguments": "ty\": \"Paris\"}" } }])),
        finish_chunk("tool_calls"),
        usage_chunk(20, 9),
    ])])
    .await;
    let turn = model_on(&server)
        .await
        .complete(tool_request())
        .await
        .unwrap();
    assert_eq!(turn.tool_calls.len(), 1);
    let call = &turn.tool_calls[0];
    assert_eq!(call.id, "call_abc");
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.arguments, r#"{"city": "Paris"}"#);
    assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
}

#[tokio::test]
async fn two_parallel_tool_calls_interleaved_by_index_are_both_assembled() {
    let server = MockServer::start(vec![sse(&[
        text_chunk("Checking both."),
        tool_chunk(json!([{ "index": 0, "id": "call_a", "type": "function",
                            "function": { "name": "get_weather", "arguments": "" } }])),
        tool_chunk(json!([{ "index": 1, "id": "call_b", "type": "function",
                            "function": { "name": "get_weather", "arguments": "{\"city\":" } }])),
        tool_chunk(json!([{ "index": 0, "function": { "arguments": "{\"city\":\"Paris\"}" } }])),
        tool_chunk(json!([{ "index": 1, "function": { "arguments": "\"Rome\"}" } }])),
        finish_chunk("tool_calls"),
        usage_chunk(20, 30),
    ])])
    .await;
    let turn = model_on(&server)
        .await
        .complete(tool_request())
        .await
        .unwrap();
    assert_eq!(turn.text, "Checking both.");
    let calls: Vec<_> = turn
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "get_weather", r#"{"city":"Paris"}"#),
            ("call_b", "get_weather", r#"{"city":"Rome"}"#),
        ]
    );
}

#[tokio::test]
async fn usage_comes_from_the_include_usage_chunk_and_the_request_asks_for_it() {
    let server = MockServer::start(vec![sse(&[
        text_chunk("Hi"),
        finish_chunk("stop"),
        usage_chunk(42, 7),
    ])])
    .await;
    let model = server.provider(None, fast_options()).model(
        "gpt-test",
        SamplingParams {
            temperature: Some(0.2),
            max_tokens: Some(100),
            top_p: None,
        },
    );
    let mut request = tool_request();
    request.params.top_p = Some(0.9);
    let turn = model.complete(request).await.unwrap();
    assert_eq!(
        turn.usage,
        Some(Usage {
            prompt_tokens: 42,
            completion_tokens: 7
        })
    );

    let body = &server.received()[0].body;
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"][0],
        "city"
    );
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["top_p"], 0.9);
}

#[tokio::test]
async fn tool_loop_messages_are_sent_in_the_openai_shape() {
    let server = MockServer::start(vec![sse(&[text_chunk("Sunny."), finish_chunk("stop")])]).await;
    let call = ars_models::ToolCall {
        id: "call_1".into(),
        name: "get_weather".into(),
        arguments: r#"{"city":"Paris"}"#.into(),
    };
    let mut request = tool_request();
    request.messages.push(Message::assistant("", vec![call]));
    request.messages.push(Message::tool("call_1", "18C, sunny"));
    model_on(&server).await.complete(request).await.unwrap();
    let messages = &server.received()[0].body["messages"];
    assert_eq!(messages[2]["role"], "assistant");
    assert!(messages[2]["content"].is_null());
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["arguments"],
        r#"{"city":"Paris"}"#
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "18C, sunny"})
    );
}

#[tokio::test]
async fn rate_limit_429_is_retried_and_then_succeeds() {
    let limited = Reply::Status {
        status: 429,
        body: json!({"error": {"message": "slow down"}}).to_string(),
        headers: vec![("retry-after", "0".into())],
    };
    let server = MockServer::start(vec![
        limited,
        sse(&[text_chunk("ok"), finish_chunk("stop")]),
    ])
    .await;
    let turn = model_on(&server).await.complete(request()).await.unwrap();
    assert_eq!(turn.text, "ok");
    assert_eq!(
        server.received().len(),
        2,
        "one refused attempt, one success"
    );
}

#[tokio::test]
async fn server_errors_exhaust_bounded_attempts_into_unavailable() {
    let server = MockServer::start(vec![status(500, json!({"error": {"message": "boom"}}))]).await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert_eq!(
        error,
        ModelError::Unavailable {
            provider: "test".into(),
            status: Some(500),
            attempts: 3,
            message: "boom".into(),
        }
    );
    assert_eq!(server.received().len(), 3);
    assert!(error.to_string().contains("HTTP 500"), "{error}");
}

#[tokio::test]
async fn a_long_retry_after_ends_the_call_without_waiting() {
    let limited = Reply::Status {
        status: 429,
        body: json!({"error": {"message": "quota"}}).to_string(),
        headers: vec![("retry-after", "3600".into())],
    };
    let server = MockServer::start(vec![limited]).await;
    let started = Instant::now();
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        matches!(
            error,
            ModelError::Unavailable {
                status: Some(429),
                attempts: 1,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("retry after 3600s"), "{error}");
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported_as_connect() {
    // Bind and drop a listener so the port is known to be closed.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = ProviderConfig::openai_compatible("test", format!("http://{addr}/v1"));
    let provider = ars_models::OpenAiProvider::new(&config, None, None, fast_options()).unwrap();
    let error = error_of(&provider.model("m", SamplingParams::default()), request()).await;
    assert!(matches!(error, ModelError::Connect { .. }), "{error:?}");
    assert!(error.to_string().contains("after 3 attempt(s)"), "{error}");
}

#[tokio::test]
async fn a_bad_json_chunk_is_a_malformed_stream() {
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![
            text_chunk("ok").to_string(),
            "{not json".into(),
            "[DONE]".into(),
        ],
        gap: Duration::ZERO,
        stall_after: None,
        keep_alive: false,
    }])
    .await;
    let mut stream = model_on(&server).await.stream(request()).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(ChatEvent::TextDelta { .. }))
    ));
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(error, ModelError::MalformedStream { .. }),
        "{error:?}"
    );
    assert!(stream.next().await.is_none(), "nothing follows an error");
}

#[tokio::test]
async fn an_event_that_never_ends_is_refused_at_its_bound_not_buffered() {
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![
            text_chunk("ok").to_string(),
            "x".repeat(17 * 1024 * 1024),
            "[DONE]".into(),
        ],
        gap: Duration::ZERO,
        stall_after: None,
        keep_alive: false,
    }])
    .await;
    let mut stream = model_on(&server).await.stream(request()).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(ChatEvent::TextDelta { .. }))
    ));
    let error = stream.next().await.unwrap().unwrap_err();
    match &error {
        ModelError::MalformedStream { message, .. } => {
            assert!(message.contains("longer than 16 MiB"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(stream.next().await.is_none(), "nothing follows an error");
}

#[tokio::test]
async fn an_error_event_inside_the_stream_is_a_provider_error() {
    let server = MockServer::start(vec![sse(&[
        text_chunk("par"),
        json!({"error": {"message": "overloaded mid-stream"}}),
    ])])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert_eq!(error, ModelError::Provider("overloaded mid-stream".into()));
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![text_chunk("first").to_string()],
        gap: Duration::ZERO,
        stall_after: Some(1),
        keep_alive: false,
    }])
    .await;
    let started = Instant::now();
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(matches!(error, ModelError::Idle { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn slow_chunks_within_the_idle_timeout_are_fine() {
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![
            text_chunk("a").to_string(),
            text_chunk("b").to_string(),
            finish_chunk("stop").to_string(),
            "[DONE]".into(),
        ],
        gap: Duration::from_millis(100),
        stall_after: None,
        keep_alive: false,
    }])
    .await;
    let turn = model_on(&server).await.complete(request()).await.unwrap();
    assert_eq!(turn.text, "ab");
}

#[tokio::test]
async fn headers_that_never_come_hit_the_request_timeout() {
    let slow = Reply::Delayed(Duration::from_secs(30), Box::new(sse(&[])));
    let server = MockServer::start(vec![slow]).await;
    let mut options = fast_options();
    options.request_timeout = Duration::from_millis(200);
    let model = server
        .provider(None, options)
        .model("m", SamplingParams::default());
    let error = error_of(&model, request()).await;
    assert!(matches!(error, ModelError::Timeout { .. }), "{error:?}");
    assert_eq!(server.received().len(), 1, "a timeout is not retried");
}

#[tokio::test]
async fn unauthorized_401_is_an_auth_error_with_the_servers_message() {
    let server = MockServer::start(vec![status(
        401,
        json!({"error": {"message": "Incorrect API key provided: sk-test", "code": "invalid_api_key"}}),
    )])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    let ModelError::Auth { message, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(
        message, "Incorrect API key provided: ***",
        "the key is redacted"
    );
    assert_eq!(server.received().len(), 1, "auth errors are not retried");
    assert_eq!(
        error.to_string(),
        "the provider `test` refused the API key: Incorrect API key provided: ***"
    );
    assert!(!error.is_stream_fault());
}

#[tokio::test]
async fn unknown_model_404_is_unknown_model() {
    let server = MockServer::start(vec![status(
        404,
        json!({"error": {"message": "The model `gpt-test` does not exist", "code": "model_not_found"}}),
    )])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(
        matches!(&error, ModelError::UnknownModel { model, .. } if model == "gpt-test"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_400_naming_the_model_as_missing_is_unknown_model() {
    let server = MockServer::start(vec![status(
        400,
        json!({"error": "model \"gpt-test\" not found, try pulling it first"}),
    )])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(
        matches!(error, ModelError::UnknownModel { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn other_4xx_are_rejected_requests_and_not_retried() {
    let server = MockServer::start(vec![status(
        400,
        json!({"error": {"message": "max_tokens too large"}}),
    )])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(
        matches!(error, ModelError::Rejected { status: 400, .. }),
        "{error:?}"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn stream_with_tools_refusal_falls_back_to_non_streaming_and_is_remembered() {
    let refusal = status(
        400,
        json!({"error": {"message": "Streaming is not supported with tools"}}),
    );
    let completion = status(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{ "index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{ "id": "call_x", "type": "function",
                    "function": { "name": "get_weather", "arguments": "{\"city\":\"Paris\"}" } }],
            }}],
            "usage": { "prompt_tokens": 11, "completion_tokens": 6, "total_tokens": 17 },
        }),
    );
    let server = MockServer::start(vec![refusal, completion]).await;
    let provider = server.provider(None, fast_options());

    let turn = provider
        .model("gpt-test", SamplingParams::default())
        .complete(tool_request())
        .await
        .unwrap();
    assert_eq!(turn.tool_calls[0].id, "call_x");
    assert_eq!(turn.tool_calls[0].arguments, r#"{"city":"Paris"}"#);
    assert_eq!(turn.usage.map(|u| u.total()), Some(17));
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body["stream"], true);
    assert_eq!(received[1].body["stream"], false);
    assert!(received[1].body.get("stream_options").is_none());

    // A later call, even through a freshly bound model, goes straight to non-streaming.
    let again = provider
        .model("gpt-test", SamplingParams::default())
        .complete(tool_request())
        .await
        .unwrap();
    assert_eq!(again.tool_calls.len(), 1);
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert_eq!(received[2].body["stream"], false);
}

#[tokio::test]
async fn configured_headers_and_the_bearer_key_are_sent() {
    let server = MockServer::start(vec![sse(&[text_chunk("ok"), finish_chunk("stop")])]).await;
    let mut config = ProviderConfig::openai_compatible("local", &server.base_url);
    config.api_key_env = Some("LOCAL_KEY".into());
    config.headers.insert("X-Org".into(), "acme".into());
    let models = ModelsConfig {
        providers: vec![config],
        openai: fast_options(),
    };
    let registry = ModelRegistry::new(&models, |name| {
        (name == "LOCAL_KEY").then(|| "sk-local".to_string())
    })
    .unwrap();
    let model = registry
        .model_for(&ars_models::parse_model_ref("local/some/model").unwrap())
        .unwrap();
    assert_eq!(model.model(), "some/model");
    model.complete(request()).await.unwrap();
    let headers = &server.received()[0].headers;
    assert_eq!(headers["authorization"], "Bearer sk-local");
    assert_eq!(headers["x-org"], "acme");
    assert_eq!(headers["content-type"], "application/json");
    assert!(!format!("{registry:?}").contains("sk-local"));
}

#[tokio::test]
async fn a_missing_key_variable_is_named_in_the_auth_error() {
    let server =
        MockServer::start(vec![status(401, json!({"error": {"message": "no key"}}))]).await;
    let mut config = ProviderConfig::openai_compatible("local", &server.base_url);
    config.api_key_env = Some("UNSET_KEY_VAR".into());
    let models = ModelsConfig {
        providers: vec![config],
        openai: fast_options(),
    };
    let registry = ModelRegistry::new(&models, |_| None).unwrap();
    let model = registry
        .model_for(&ars_models::parse_model_ref("local/m").unwrap())
        .unwrap();
    let error = error_of(model.as_ref(), request()).await;
    assert!(
        error.to_string().contains("UNSET_KEY_VAR is not set"),
        "{error}"
    );
}

#[tokio::test]
async fn dropping_the_stream_aborts_the_http_request() {
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![text_chunk("first").to_string()],
        gap: Duration::ZERO,
        stall_after: Some(1),
        keep_alive: true,
    }])
    .await;
    let model = model_on(&server).await;
    let mut stream = model.stream(request()).await.unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(ChatEvent::TextDelta { .. }))
    ));
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(3);
    while server.aborted() == 0 {
        assert!(
            Instant::now() < deadline,
            "the server never saw the request end"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_stream_that_ends_without_a_finish_is_a_stream_fault() {
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![text_chunk("cut").to_string()],
        gap: Duration::ZERO,
        stall_after: None,
        keep_alive: false,
    }])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(error.is_stream_fault(), "{error:?}");
    assert_eq!(
        error.to_string(),
        "the provider `test` closed the stream before the answer was complete"
    );
}

#[tokio::test]
async fn a_connection_reset_mid_stream_is_a_stream_fault_in_plain_words() {
    let server = MockServer::start(vec![Reply::Broken {
        events: vec![text_chunk("cut").to_string()],
    }])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert!(error.is_stream_fault(), "{error:?}");
    let message = error.to_string();
    assert_eq!(
        message,
        "the provider `test` broke the connection before the answer was complete"
    );
}

#[tokio::test]
async fn headers_then_silence_says_the_model_sent_nothing_for_the_idle_timeout() {
    let server = MockServer::start(vec![Reply::Sse {
        events: Vec::new(),
        gap: Duration::ZERO,
        stall_after: Some(0),
        keep_alive: false,
    }])
    .await;
    let error = error_of(&model_on(&server).await, request()).await;
    assert_eq!(
        error.to_string(),
        "the model sent nothing for 0.3 s (provider `test`)"
    );
    assert!(!error.is_stream_fault(), "an idle model is not asked again");
}

#[tokio::test]
async fn a_refused_connection_says_so_without_http_library_text() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = ProviderConfig::openai_compatible("test", format!("http://{addr}/v1"));
    let provider = ars_models::OpenAiProvider::new(&config, None, None, fast_options()).unwrap();
    let error = error_of(&provider.model("m", SamplingParams::default()), request()).await;
    assert_eq!(
        error.to_string(),
        "cannot reach provider `test`: the connection could not be opened (after 3 attempt(s))"
    );
}

#[tokio::test]
async fn events_nested_a_million_levels_are_skipped_or_refused_never_a_crash() {
    // Nesting where the answer has no field is skipped (without recursion); nesting in place
    // of the answer itself is a malformed stream. Either way the stream goes on or ends in
    // words, and nothing overflows.
    let skipped = format!(
        r#"{{"choices": [{{"index": 0, "delta": {{"content": "x", "extra": {}1{}}}}}]}}"#,
        "[".repeat(1_000_000),
        "]".repeat(1_000_000)
    );
    let refused = format!("{}1{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
    let server = MockServer::start(vec![Reply::Sse {
        events: vec![
            text_chunk("ok").to_string(),
            skipped,
            refused,
            "[DONE]".into(),
        ],
        gap: Duration::ZERO,
        stall_after: None,
        keep_alive: false,
    }])
    .await;
    let mut stream = model_on(&server).await.stream(request()).await.unwrap();
    for expected in ["ok", "x"] {
        match stream.next().await {
            Some(Ok(ChatEvent::TextDelta { text })) => assert_eq!(text, expected),
            other => panic!("{other:?}"),
        }
    }
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(
        matches!(error, ModelError::MalformedStream { .. }),
        "{error:?}"
    );
    assert!(stream.next().await.is_none(), "nothing follows an error");
}
