//! `/v1`: models are the chat agents a caller can use; a chat completion or a response is a
//! run on a thread seeded with the conversation (or continued); errors are OpenAI's shape.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::TestApp;

/// The `data:` payloads of an SSE body, in order (`[DONE]` kept as a string).
fn sse_data(body: &str) -> Vec<(Option<String>, Value)> {
    let mut out = Vec::new();
    for block in body.split("\n\n") {
        let mut event = None;
        let mut data = String::new();
        for line in block.lines() {
            if let Some(name) = line.strip_prefix("event: ") {
                event = Some(name.to_string());
            } else if let Some(value) = line.strip_prefix("data: ") {
                data.push_str(value);
            }
        }
        if data.is_empty() {
            continue;
        }
        let value = serde_json::from_str(&data).unwrap_or(Value::String(data));
        out.push((event, value));
    }
    out
}

async fn post_raw(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    body: Value,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = app.client.post(format!("{}{path}", app.base)).json(&body);
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    tokio::time::timeout(Duration::from_secs(30), req.send())
        .await
        .expect("answers")
        .unwrap()
}

/// An OpenAI error body: `{"error": {"message", "type", "param", "code"}}`.
fn assert_openai_error(body: &Value, kind: &str) {
    let error = &body["error"];
    assert!(
        error["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    assert_eq!(error["type"], kind, "{body}");
    assert!(
        error.get("code").is_some() && error.get("param").is_some(),
        "{body}"
    );
}

async fn echo_agent(app: &TestApp, token: &str, slug: &str) {
    app.scripted_agent(
        token,
        slug,
        json!([{"text": "heard {{input}} after {{user_turns}} user turns",
                "usage": {"prompt_tokens": 11, "completion_tokens": 7}}]),
    )
    .await;
}

#[tokio::test]
async fn models_are_the_chat_agents_the_caller_can_use_and_nothing_else() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    echo_agent(&app, &alice, "alices-echo").await;
    app.agent(&alice, crate::common::subagent("alices-helper"))
        .await;
    let reply = app.get("/v1/models", &alice).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["object"], "list");
    let ids: Vec<&str> = reply.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"alices-echo"), "{ids:?}");
    assert!(
        !ids.contains(&"alices-helper"),
        "subagents are not models: {ids:?}"
    );
    assert!(reply.body["data"][0]["object"] == "model");

    // Bob sees neither Alice's agent in the list nor by name.
    let bobs = app.get("/v1/models", &bob).await;
    assert!(
        !bobs.body.to_string().contains("alices-echo"),
        "{}",
        bobs.body
    );
    let one = app.get("/v1/models/alices-echo", &bob).await;
    assert_eq!(one.status, StatusCode::NOT_FOUND);
    assert_openai_error(&one.body, "invalid_request_error");
    let mine = app.get("/v1/models/alices-echo", &alice).await;
    assert_eq!(mine.body["id"], "alices-echo");

    // No token, a wrong one: 401 in OpenAI's shape.
    let anonymous = app.call(Method::GET, "/v1/models", None, None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    assert_openai_error(&anonymous.body, "invalid_request_error");
    assert_eq!(anonymous.body["error"]["code"], "invalid_api_key");
    let wrong = app.get("/v1/models", "not-a-token").await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    // An unknown path under /v1 is an OpenAI 404, not the web UI.
    let unknown = app.get("/v1/embeddings", &alice).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_openai_error(&unknown.body, "invalid_request_error");
}

#[tokio::test]
async fn a_chat_completion_runs_the_agent_on_a_new_thread_seeded_with_the_messages() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    echo_agent(&app, &alice, "echo").await;
    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "echo", "temperature": 0.2, "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ]}),
        &[],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let thread = res.headers()["x-ars-thread-id"]
        .to_str()
        .unwrap()
        .to_string();
    let run = res.headers()["x-ars-run-id"].to_str().unwrap().to_string();
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["id"], format!("chatcmpl-{run}"));
    assert_eq!(body["model"], "echo");
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "heard second after 2 user turns"
    );
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"]["prompt_tokens"], 11);
    assert_eq!(body["usage"]["completion_tokens"], 7);
    assert_eq!(body["usage"]["total_tokens"], 18);

    // The thread is Alice's, in /api too, holding the conversation and the answer.
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &alice)
        .await;
    assert_eq!(messages.status, StatusCode::OK);
    // The client's system message is left out: the agent's own system prompt applies.
    let roles_and_text: Vec<(String, String)> = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().into(),
                m["content"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        roles_and_text,
        vec![
            ("user".into(), "first".into()),
            ("assistant".into(), "ok".into()),
            ("user".into(), "second".into()),
            ("assistant".into(), "heard second after 2 user turns".into()),
        ]
    );

    // X-ARS-Thread-Id continues that thread: its history plus the last user message.
    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "echo", "messages": [{"role": "user", "content": "third"}]}),
        &[("x-ars-thread-id", &thread)],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["x-ars-thread-id"].to_str().unwrap(), thread);
    let body: Value = res.json().await.unwrap();
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "heard third after 3 user turns"
    );
}

#[tokio::test]
async fn a_streamed_chat_completion_sends_chunks_then_usage_when_asked_then_done() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    echo_agent(&app, &alice, "echo").await;
    for include_usage in [true, false] {
        let res = post_raw(
            &app,
            "/v1/chat/completions",
            Some(&alice),
            json!({"model": "echo", "stream": true,
                   "stream_options": {"include_usage": include_usage},
                   "messages": [{"role": "user", "content": "hello there"}]}),
            &[],
        )
        .await;
        assert_eq!(res.status(), StatusCode::OK);
        assert!(
            res.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let body = res.text().await.unwrap();
        let data: Vec<Value> = sse_data(&body).into_iter().map(|(_, d)| d).collect();
        assert_eq!(data.last().unwrap(), &json!("[DONE]"), "{body}");
        let chunks = &data[..data.len() - 1];
        assert!(
            chunks
                .iter()
                .all(|c| c["object"] == "chat.completion.chunk"),
            "{body}"
        );
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        let text: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(text, "heard hello there after 1 user turns");
        assert!(chunks.len() > 3, "the text streams in pieces: {body}");
        let finish: Vec<&Value> = chunks
            .iter()
            .filter(|c| !c["choices"][0]["finish_reason"].is_null())
            .collect();
        assert_eq!(finish.len(), 1);
        assert_eq!(finish[0]["choices"][0]["finish_reason"], "stop");
        let usage = chunks.iter().find(|c| !c["usage"].is_null());
        if include_usage {
            let usage = usage.expect("a usage chunk");
            assert_eq!(usage["choices"], json!([]));
            assert_eq!(usage["usage"]["total_tokens"], 18);
            assert!(
                std::ptr::eq(usage, chunks.last().unwrap()),
                "usage comes last"
            );
        } else {
            assert!(usage.is_none(), "{body}");
        }
    }
}

#[tokio::test]
async fn chat_completions_refuse_bad_bodies_unknown_models_and_others_threads_in_openai_shape() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    echo_agent(&app, &alice, "echo").await;
    let user_says = json!([{"role": "user", "content": "hi"}]);
    let cases = [
        (
            json!({"model": "nope", "messages": user_says}),
            StatusCode::NOT_FOUND,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "messages": []}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "messages": [{"role": "assistant", "content": "hi"}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "messages": [{"role": "user", "content": "   "}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "messages": [{"role": "wizard", "content": "hi"}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "http://127.0.0.1/x.png"}}]}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "n": 2, "messages": user_says}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "tools": [{"type": "function", "function": {"name": "f"}}],
                "messages": user_says}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
        (
            json!({"model": "echo", "messages": [{"role": "user", "content": "x".repeat(200_001)}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request_error",
        ),
    ];
    for (body, status, kind) in cases {
        let reply = app.post("/v1/chat/completions", &alice, body.clone()).await;
        assert_eq!(reply.status, status, "{body} → {}", reply.body);
        assert_openai_error(&reply.body, kind);
    }
    // Bob cannot use Alice's agent: it does not exist for him.
    let reply = app
        .post(
            "/v1/chat/completions",
            &bob,
            json!({"model": "echo", "messages": user_says}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("echo")
    );
    assert_eq!(reply.body["error"]["code"], "model_not_found");
    assert_eq!(reply.body["error"]["param"], "model");
    // Malformed JSON, a non-JSON body.
    let malformed = app
        .raw(
            Method::POST,
            "/v1/chat/completions",
            &alice,
            "application/json",
            b"{\"model\":".to_vec(),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_openai_error(&malformed.body, "invalid_request_error");
    let text = app
        .raw(
            Method::POST,
            "/v1/chat/completions",
            &alice,
            "text/plain",
            b"hi".to_vec(),
        )
        .await;
    assert_eq!(text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // Bob cannot continue Alice's thread, nor can Alice name a malformed one.
    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "echo", "messages": user_says}),
        &[],
    )
    .await;
    let thread = res.headers()["x-ars-thread-id"]
        .to_str()
        .unwrap()
        .to_string();
    app.agent(&bob, json!({"slug": "bobs", "name": "bobs"}))
        .await;
    for (token, model, id) in [
        (&bob, "bobs", thread.as_str()),
        (&alice, "echo", "not-an-id"),
    ] {
        let res = post_raw(
            &app,
            "/v1/chat/completions",
            Some(token),
            json!({"model": model, "messages": user_says}),
            &[("x-ars-thread-id", id)],
        )
        .await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND);
        assert_openai_error(&res.json().await.unwrap(), "invalid_request_error");
    }
    // Nothing was stored for the refused requests: Alice has the one thread, Bob none.
    let threads = app.get("/api/threads", &alice).await;
    assert_eq!(
        threads.body.as_array().unwrap().len(),
        1,
        "{}",
        threads.body
    );
    let threads = app.get("/api/threads", &bob).await;
    assert_eq!(
        threads.body.as_array().unwrap().len(),
        0,
        "{}",
        threads.body
    );
}

#[tokio::test]
async fn a_busy_thread_is_a_409_and_a_failed_run_a_500_the_sdks_do_not_retry() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "slow", json!([{"text": "done", "delay_ms": 1500}]))
        .await;
    app.scripted_agent(&alice, "broken", json!([{"error": "the model fell over"}]))
        .await;
    let thread = app.thread(&alice, "slow").await;
    let _run = app.start_run(&alice, &thread, "busy now").await;
    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "slow", "messages": [{"role": "user", "content": "hi"}]}),
        &[("x-ars-thread-id", &thread)],
    )
    .await;
    assert_eq!(res.status(), StatusCode::CONFLICT);
    assert_eq!(res.headers()["x-should-retry"], "false");
    assert_openai_error(&res.json().await.unwrap(), "invalid_request_error");

    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "broken", "messages": [{"role": "user", "content": "hi"}]}),
        &[],
    )
    .await;
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(res.headers()["x-should-retry"], "false");
    let body: Value = res.json().await.unwrap();
    assert_openai_error(&body, "server_error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fell over"),
        "{body}"
    );

    // Streamed, the failure is an `error` payload before [DONE].
    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "broken", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
        &[],
    )
    .await;
    let body = res.text().await.unwrap();
    let data = sse_data(&body);
    assert_eq!(data.last().unwrap().1, json!("[DONE]"));
    let error = &data[data.len() - 2].1;
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("fell over"),
        "{body}"
    );
}

#[tokio::test]
async fn a_client_that_leaves_a_streamed_completion_cancels_its_run() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "slow",
        json!([{"text": "one two three four five six",
        "chunk_delay_ms": 400}]),
    )
    .await;
    let res = post_raw(
        &app,
        "/v1/chat/completions",
        Some(&alice),
        json!({"model": "slow", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
        &[],
    )
    .await;
    let run = res.headers()["x-ars-run-id"].to_str().unwrap().to_string();
    let mut res = res;
    // Read the first piece, then go away.
    let _ = res.chunk().await.unwrap();
    drop(res);
    let waited = app.wait(&alice, &run, 10).await;
    assert_eq!(waited["run"]["status"], "cancelled", "{waited}");
}

#[tokio::test]
async fn a_response_is_a_run_and_previous_response_id_continues_its_thread() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    echo_agent(&app, &alice, "echo").await;
    let first = app
        .post(
            "/v1/responses",
            &alice,
            json!({"model": "echo", "input": "hello",
            "instructions": "ignored"}),
        )
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let body = &first.body;
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "completed");
    let id = body["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("resp_"));
    assert_eq!(body["output"][0]["type"], "message");
    assert_eq!(body["output"][0]["content"][0]["type"], "output_text");
    assert_eq!(
        body["output"][0]["content"][0]["text"],
        "heard hello after 1 user turns"
    );
    assert_eq!(body["usage"]["input_tokens"], 11);
    assert_eq!(body["usage"]["output_tokens"], 7);

    let second = app
        .post(
            "/v1/responses",
            &alice,
            json!({"model": "echo", "previous_response_id": id,
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "again"}]}]}),
        )
        .await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(
        second.body["output"][0]["content"][0]["text"],
        "heard again after 2 user turns"
    );
    assert_eq!(second.body["previous_response_id"], id);
    assert_eq!(
        second.headers["x-ars-thread-id"], first.headers["x-ars-thread-id"],
        "the same thread"
    );

    // Read back; Bob sees neither response nor can continue it.
    let back = app.get(&format!("/v1/responses/{id}"), &alice).await;
    assert_eq!(back.status, StatusCode::OK);
    assert_eq!(
        back.body["output"][0]["content"][0]["text"],
        "heard hello after 1 user turns"
    );
    let second_id = second.body["id"].as_str().unwrap();
    let back = app.get(&format!("/v1/responses/{second_id}"), &alice).await;
    assert_eq!(back.body["previous_response_id"], id);
    for path in [
        format!("/v1/responses/{id}"),
        "/v1/responses/resp_nothing".into(),
    ] {
        let reply = app.get(&path, &bob).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert_openai_error(&reply.body, "invalid_request_error");
    }
    app.agent(&bob, json!({"slug": "bobs", "name": "bobs"}))
        .await;
    let reply = app
        .post(
            "/v1/responses",
            &bob,
            json!({"model": "bobs", "previous_response_id": id,
            "input": "mine now"}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    // Continuing with another model is refused.
    echo_agent(&app, &alice, "other-echo").await;
    let reply = app
        .post(
            "/v1/responses",
            &alice,
            json!({"model": "other-echo",
            "previous_response_id": id, "input": "switch"}),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    // Bad input items.
    for input in [
        json!([]),
        json!([{"type": "function_call_output", "output": "x"}]),
        json!([{"role": "assistant", "content": "last"}]),
        json!(42),
    ] {
        let reply = app
            .post(
                "/v1/responses",
                &alice,
                json!({"model": "echo", "input": input}),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{input} → {}",
            reply.body
        );
        assert_openai_error(&reply.body, "invalid_request_error");
    }
}

#[tokio::test]
async fn a_streamed_response_opens_streams_and_closes_its_output_in_order() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    echo_agent(&app, &alice, "echo").await;
    let res = post_raw(
        &app,
        "/v1/responses",
        Some(&alice),
        json!({"model": "echo", "input": "stream it", "stream": true}),
        &[],
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    let body = res.text().await.unwrap();
    let events = sse_data(&body);
    let kinds: Vec<&str> = events.iter().map(|(e, _)| e.as_deref().unwrap()).collect();
    let mut deduped = kinds.clone();
    deduped.dedup();
    assert_eq!(
        deduped,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ],
        "{body}"
    );
    for (i, (kind, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], kind.as_deref().unwrap());
        assert_eq!(data["sequence_number"], i, "{body}");
    }
    let text: String = events
        .iter()
        .filter(|(_, d)| d["type"] == "response.output_text.delta")
        .map(|(_, d)| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "heard stream it after 1 user turns");
    let completed = &events.last().unwrap().1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0]["content"][0]["text"], text);
    assert_eq!(completed["usage"]["total_tokens"], 18);
}
