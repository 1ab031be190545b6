//! Regenerate and edit-and-resend: `POST /api/threads/{id}/runs {input, replace_from}` takes a
//! user message and everything after it out of the thread's history and starts the run on the
//! new input, in one step. What the model is sent is read off a loopback OpenAI-compatible
//! server that records every request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use common::{Setup, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

use ars_models::{ModelsConfig, ProviderConfig};

/// A loopback OpenAI-compatible server: every request body is kept, and each answer is
/// `answer <n>` (n counting from 1), streamed in the real wire format.
struct RecordingModel {
    base_url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl RecordingModel {
    async fn start() -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(answer))
            .with_state(Arc::clone(&requests));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { base_url, requests }
    }

    /// The `(role, content)` pairs of the `n`-th request (from 0), system prompt left out.
    fn conversation(&self, n: usize) -> Vec<(String, String)> {
        let requests = self.requests.lock().unwrap();
        requests[n]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_string(),
                    m["content"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

async fn answer(
    State(requests): State<Arc<Mutex<Vec<Value>>>>,
    axum::Json(body): axum::Json<Value>,
) -> axum::response::Response {
    let n = {
        let mut requests = requests.lock().unwrap();
        requests.push(body);
        requests.len()
    };
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let events = [
        chunk(json!({"content": format!("answer {n}")}), Value::Null).to_string(),
        chunk(json!({}), json!("stop")).to_string(),
        "[DONE]".to_string(),
    ];
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    axum::response::Response::builder()
        .header("content-type", "text/event-stream")
        .body(axum::body::Body::from(body))
        .unwrap()
}

/// A server whose `local` provider is `model`, and a user `alice` with an agent `chat` on it.
async fn app_with(model: &RecordingModel) -> (TestApp, String) {
    let app = TestApp::spawn_setup(Setup {
        models: ModelsConfig {
            providers: vec![ProviderConfig::openai_compatible("local", &model.base_url)],
            ..ModelsConfig::default()
        },
        ..Setup::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    app.agent(
        &alice,
        json!({"slug": "chat", "name": "Chat", "config_json": {"context": {
            "model": {"provider": "local", "name": "m"}}}}),
    )
    .await;
    (app, alice)
}

/// The thread's messages (with `?include_replaced=true` when `all`), asserting 200.
async fn messages(app: &TestApp, token: &str, thread: &str, all: bool) -> Vec<Value> {
    let query = if all { "?include_replaced=true" } else { "" };
    let r = app
        .get(&format!("/api/threads/{thread}/messages{query}"), token)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body.as_array().unwrap().clone()
}

/// `(role, content)` of each message.
fn said(messages: &[Value]) -> Vec<(&str, &str)> {
    messages
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect()
}

/// The id of the last user message.
fn last_user_id(messages: &[Value]) -> String {
    messages.iter().rev().find(|m| m["role"] == "user").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// One turn: starts a run on `input` (optionally replacing) and waits for its success.
async fn turn(app: &TestApp, token: &str, thread: &str, body: Value) -> String {
    let r = app
        .post(&format!("/api/threads/{thread}/runs"), token, body)
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let run = r.body["run"]["id"].as_str().unwrap().to_string();
    let done = app.wait(token, &run, 30).await;
    assert_eq!(done["run"]["status"], "success", "{done}");
    run
}

/// A script that echoes the input.
fn echo() -> Value {
    json!([{"text": "You said: {{input}}"}])
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

#[tokio::test]
async fn regenerate_replaces_the_last_answer_and_the_model_never_sees_the_replaced_turn() {
    let model = RecordingModel::start().await;
    let (app, alice) = app_with(&model).await;
    let thread = app.thread(&alice, "chat").await;
    let first = turn(&app, &alice, &thread, json!({"input": "What is 2+2?"})).await;
    let second = turn(&app, &alice, &thread, json!({"input": "And 3+3?"})).await;
    let before = messages(&app, &alice, &thread, false).await;
    assert_eq!(
        said(&before),
        [
            ("user", "What is 2+2?"),
            ("assistant", "answer 1"),
            ("user", "And 3+3?"),
            ("assistant", "answer 2"),
        ]
    );

    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": "And 3+3?", "replace_from": last_user_id(&before)}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    assert_eq!(r.body["run"]["status"], "running");
    assert_eq!(r.body["run"]["input"], "And 3+3?");
    let third = r.body["run"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        app.wait(&alice, &third, 30).await["run"]["status"],
        "success"
    );

    // The list ends with the same user text and a new answer.
    let after = messages(&app, &alice, &thread, false).await;
    assert_eq!(
        said(&after),
        [
            ("user", "What is 2+2?"),
            ("assistant", "answer 1"),
            ("user", "And 3+3?"),
            ("assistant", "answer 3"),
        ]
    );
    assert_eq!(after[..2], before[..2], "the first turn is untouched");
    assert_ne!(
        after[2]["id"], before[2]["id"],
        "the input is a new message"
    );
    assert_eq!(after[2]["run_id"], third.as_str());
    assert!(after.iter().all(|m| m.get("replaced_by_run_id").is_none()));

    // The model was asked with the first turn and the new input only.
    assert_eq!(model.count(), 3);
    assert_eq!(
        model.conversation(2),
        pairs(&[
            ("user", "What is 2+2?"),
            ("assistant", "answer 1"),
            ("user", "And 3+3?"),
        ])
    );

    // The replaced run is still listed; its messages are only there on request.
    let runs = app
        .get(&format!("/api/threads/{thread}/runs"), &alice)
        .await
        .body;
    let ids: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str(), third.as_str()]);
    assert_eq!(runs[1]["status"], "success");
    assert_eq!(runs[1]["output"], "answer 2");
    let all = messages(&app, &alice, &thread, true).await;
    assert_eq!(all.len(), 6);
    let replaced: Vec<_> = all
        .iter()
        .filter(|m| m.get("replaced_by_run_id").is_some())
        .collect();
    assert_eq!(replaced.len(), 2);
    for (message, old) in replaced.iter().zip(&before[2..]) {
        assert_eq!(message["replaced_by_run_id"], third.as_str());
        assert_eq!(message["id"], old["id"]);
        assert_eq!(message["run_id"], second.as_str());
    }
    let seqs: Vec<i64> = all.iter().map(|m| m["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6]);

    // A thread's next turn builds on the regenerated answer.
    turn(&app, &alice, &thread, json!({"input": "Thanks"})).await;
    assert_eq!(
        model.conversation(3),
        pairs(&[
            ("user", "What is 2+2?"),
            ("assistant", "answer 1"),
            ("user", "And 3+3?"),
            ("assistant", "answer 3"),
            ("user", "Thanks"),
        ])
    );
}

#[tokio::test]
async fn edit_and_resend_replaces_the_message_with_new_text_earlier_ones_included() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "echo",
        json!([{"text": "You said: {{input}} ({{user_turns}} user turns)"}]),
    )
    .await;
    let thread = app.thread(&alice, "echo").await;
    turn(&app, &alice, &thread, json!({"input": "first"})).await;
    turn(&app, &alice, &thread, json!({"input": "second"})).await;

    // Edit the last user message.
    let before = messages(&app, &alice, &thread, false).await;
    let edited = turn(
        &app,
        &alice,
        &thread,
        json!({"input": "second, edited", "replace_from": last_user_id(&before)}),
    )
    .await;
    let after = messages(&app, &alice, &thread, false).await;
    assert_eq!(
        said(&after),
        [
            ("user", "first"),
            ("assistant", "You said: first (1 user turns)"),
            ("user", "second, edited"),
            ("assistant", "You said: second, edited (2 user turns)"),
        ]
    );
    assert!(after[2..].iter().all(|m| m["run_id"] == edited.as_str()));

    // Edit an earlier one: everything from it on leaves.
    let first_id = after[0]["id"].as_str().unwrap();
    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": "first, edited", "replace_from": first_id}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let run = r.body["run"]["id"].as_str().unwrap();
    assert_eq!(app.wait(&alice, run, 30).await["run"]["status"], "success");
    assert_eq!(
        said(&messages(&app, &alice, &thread, false).await),
        [
            ("user", "first, edited"),
            ("assistant", "You said: first, edited (1 user turns)"),
        ]
    );
    let all = messages(&app, &alice, &thread, true).await;
    assert_eq!(all.len(), 8, "every message is kept");
    let by: Vec<&str> = all
        .iter()
        .map(|m| m["replaced_by_run_id"].as_str().unwrap_or("-"))
        .collect();
    let edited = edited.as_str();
    assert_eq!(by, [run, run, edited, edited, run, run, "-", "-"]);
}

#[tokio::test]
async fn replace_while_a_run_is_active_is_busy_and_removes_nothing() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "slow", json!([{"text": "slow", "delay_ms": 2000}]))
        .await;
    let thread = app.thread(&alice, "slow").await;
    turn(&app, &alice, &thread, json!({"input": "one"})).await;
    let first_id = messages(&app, &alice, &thread, false).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let active = app.start_run(&alice, &thread, "two").await;
    let before = messages(&app, &alice, &thread, true).await;

    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": "one again", "replace_from": first_id}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(r.code(), Some("busy"));
    assert_eq!(r.body["error"]["active_run_id"], active.as_str());
    assert_eq!(messages(&app, &alice, &thread, true).await, before);
    let runs = app
        .get(&format!("/api/threads/{thread}/runs"), &alice)
        .await
        .body;
    assert_eq!(runs.as_array().unwrap().len(), 2, "no run was added");

    // Once the run ends, the same request goes through.
    assert_eq!(
        app.wait(&alice, &active, 30).await["run"]["status"],
        "success"
    );
    turn(
        &app,
        &alice,
        &thread,
        json!({"input": "one again", "replace_from": first_id}),
    )
    .await;
    assert_eq!(
        said(&messages(&app, &alice, &thread, false).await)[0],
        ("user", "one again")
    );
}

#[tokio::test]
async fn an_unusable_replace_from_is_refused_naming_it_and_removes_nothing() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.scripted_agent(&alice, "echo-alice", echo()).await;
    app.scripted_agent(&bob, "echo-bob", echo()).await;
    let thread = app.thread(&alice, "echo-alice").await;
    let other = app.thread(&alice, "echo-alice").await;
    let bobs = app.thread(&bob, "echo-bob").await;
    turn(&app, &alice, &thread, json!({"input": "one"})).await;
    turn(&app, &alice, &other, json!({"input": "elsewhere"})).await;
    turn(&app, &bob, &bobs, json!({"input": "bob's"})).await;
    let first = messages(&app, &alice, &thread, false).await;
    turn(
        &app,
        &alice,
        &thread,
        json!({"input": "one, edited", "replace_from": first[0]["id"]}),
    )
    .await;
    let current = messages(&app, &alice, &thread, false).await;
    let before = messages(&app, &alice, &thread, true).await;
    let runs = app
        .get(&format!("/api/threads/{thread}/runs"), &alice)
        .await
        .body;

    // Not a message id at all: the schema refuses it.
    let malformed = [
        json!("message-1"),
        json!(7),
        json!({"id": current[0]["id"]}),
    ];
    for replace_from in malformed {
        let r = app
            .post(
                &format!("/api/threads/{thread}/runs"),
                &alice,
                json!({"input": "again", "replace_from": replace_from}),
            )
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{replace_from}: {}",
            r.body
        );
        assert_eq!(r.code(), Some("validation_failed"));
        assert_eq!(r.field(), Some("replace_from"), "{}", r.body);
    }
    // A message id the stored thread cannot take: a conflict naming the field.
    let refused = [
        (
            "an unknown id",
            json!("0190f5b4-7c1d-7000-8000-000000000000"),
        ),
        (
            "a message of another thread",
            messages(&app, &alice, &other, false).await[0]["id"].clone(),
        ),
        (
            "a message of another user's thread",
            messages(&app, &bob, &bobs, false).await[0]["id"].clone(),
        ),
        ("an assistant message", current[1]["id"].clone()),
        ("a replaced message", first[0]["id"].clone()),
    ];
    for (case, replace_from) in refused {
        let r = app
            .post(
                &format!("/api/threads/{thread}/runs"),
                &alice,
                json!({"input": "again", "replace_from": replace_from}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CONFLICT, "{case}: {}", r.body);
        assert_eq!(r.code(), Some("conflict"), "{case}");
        assert_eq!(r.field(), Some("replace_from"), "{case}: {}", r.body);
        assert!(r.body["error"].get("active_run_id").is_none(), "{case}");
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("replace_from"), "{case}: {message}");
    }
    // A bad input is refused before anything is replaced.
    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": "x".repeat(100_001), "replace_from": current[0]["id"]}),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(r.field(), Some("input"));
    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": " ", "replace_from": current[0]["id"]}),
        )
        .await;
    assert_eq!(r.field(), Some("input"), "{}", r.body);

    assert_eq!(messages(&app, &alice, &thread, true).await, before);
    let after = app
        .get(&format!("/api/threads/{thread}/runs"), &alice)
        .await
        .body;
    assert_eq!(after, runs, "no run was added");
}

#[tokio::test]
async fn replace_on_another_users_thread_is_a_404_and_removes_nothing() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.scripted_agent(&alice, "echo", echo()).await;
    let thread = app.thread(&alice, "echo").await;
    turn(&app, &alice, &thread, json!({"input": "mine"})).await;
    let before = messages(&app, &alice, &thread, true).await;
    let body = json!({"input": "theirs", "replace_from": before[0]["id"]});

    for token in [&bob, &app.admin] {
        let r = app
            .post(&format!("/api/threads/{thread}/runs"), token, body.clone())
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
        let r = app
            .get(
                &format!("/api/threads/{thread}/messages?include_replaced=true"),
                token,
            )
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    }
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/threads/{thread}/runs"),
            None,
            Some(body),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(messages(&app, &alice, &thread, true).await, before);
}

#[tokio::test]
async fn the_include_replaced_query_is_a_boolean_and_nothing_else() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "echo", echo()).await;
    let thread = app.thread(&alice, "echo").await;
    for query in [
        "include_replaced=maybe",
        "include_replaced=",
        "replaced=true",
    ] {
        let r = app
            .get(&format!("/api/threads/{thread}/messages?{query}"), &alice)
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.body);
        assert_eq!(r.code(), Some("bad_request"));
    }
    for query in ["include_replaced=false", "include_replaced=true", ""] {
        let r = app
            .get(&format!("/api/threads/{thread}/messages?{query}"), &alice)
            .await;
        assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.body);
    }
}
