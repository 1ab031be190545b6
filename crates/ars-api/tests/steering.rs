//! `POST /api/runs/{id}/messages`: a message into an active run is accepted (202) for the run's
//! owner, stored as a user message marked `steer` and read by the model before its next model
//! call; anyone else gets a 404, a run that has ended a 409 saying to start a new run, and a
//! blank, over-long, malformed or unauthenticated message is refused, storing nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn only_the_owner_steers_an_active_run_and_a_run_that_has_ended_is_a_409() {
    let app = TestApp::spawn().await;
    let (_, token) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(
        &token,
        json!({"slug": "slow", "name": "slow", "description": "answers slowly",
               "config_json": {"context": {"model": {"provider": "scripted", "name": "demo",
                   "script": [{"text": "{{input}} | {{user_turns}}", "delay_ms": 1500}]}}}}),
    )
    .await;
    let thread = app.thread(&token, "slow").await;
    let run = app.start_run(&token, &thread, "first").await;
    let path = format!("/api/runs/{run}/messages");

    // Refused without storing anything: someone else's run, no token, a malformed or extra
    // field body, blank or over-long content.
    let foreign = app.post(&path, &bob, json!({"content": "hi"})).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let anonymous = app
        .call(Method::POST, &path, None, Some(json!({"content": "hi"})))
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let malformed = app
        .raw(
            Method::POST,
            &path,
            &token,
            "application/json",
            b"{\"content\":".to_vec(),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    let extra = app
        .post(&path, &token, json!({"content": "hi", "role": "system"}))
        .await;
    assert_eq!(extra.status, StatusCode::UNPROCESSABLE_ENTITY);
    let blank = app.post(&path, &token, json!({"content": "  \n"})).await;
    assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(blank.field(), Some("content"));
    let long = app
        .post(&path, &token, json!({"content": "字".repeat(100_001)}))
        .await;
    assert_eq!(long.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(long.field(), Some("content"));
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &token)
        .await;
    assert_eq!(messages.body.as_array().unwrap().len(), 1, "only the input");

    // The owner, while the model answers: accepted, as a steer message of the run.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = app
        .post(&path, &token, json!({"content": "请改用中文"}))
        .await;
    assert_eq!(sent.status, StatusCode::ACCEPTED, "{:?}", sent.body);
    assert_eq!(sent.body["role"], "user");
    assert_eq!(sent.body["steer"], true);
    assert_eq!(sent.body["run_id"], run.as_str());
    assert_eq!(sent.body["content"], "请改用中文");

    let waited = app.wait(&token, &run, 20).await;
    assert_eq!(waited["run"]["status"], "success");
    assert_eq!(
        waited["run"]["output"], "请改用中文 | 2",
        "read once, before the end"
    );

    let late = app.post(&path, &token, json!({"content": "more"})).await;
    assert_eq!(late.status, StatusCode::CONFLICT);
    let said = late.body["error"]["message"].as_str().unwrap();
    assert!(said.contains("start a new run"), "{said}");
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &token)
        .await;
    let steered: Vec<_> = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["steer"] == true)
        .collect();
    assert_eq!(steered.len(), 1);
}
