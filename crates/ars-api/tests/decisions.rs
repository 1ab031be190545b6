//! `POST /api/runs/{id}/decisions` and `GET /api/threads/{id}/pending`: a run whose turn calls
//! an `ask` tool waits (`status: waiting`, `pending` on the run); its owner decides every call
//! at once — anyone else gets a 404, a run not waiting a 409, a partial or ill-fitting set a
//! 422 — and a subagent's waiting call shows on the root thread's pending list and events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::TestApp;
use common::stream::LiveSse;
use reqwest::StatusCode;
use serde_json::{Value, json};

const PROMPT: Duration = Duration::from_secs(15);

fn write(id: &str, path: &str) -> Value {
    json!({"id": id, "name": "write_file", "arguments": {"path": path, "content": "x"}})
}

/// An agent that writes two files (the writes ask), then answers "done".
async fn asking_agent(app: &TestApp, token: &str, slug: &str, backend: Option<&str>) {
    let mut body = json!({"slug": slug, "name": slug, "description": "writes",
    "config_json": {"context": {
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [write("c1", "a.txt"), write("c2", "b.txt")]},
            {"text": "done"}
        ]},
        "tools": ["write_file"],
        "approvals": {"write_file": "ask"}
    }}});
    if let Some(backend) = backend {
        body["backend_id"] = json!(backend);
    }
    app.agent(token, body).await;
}

#[tokio::test]
async fn only_the_owner_decides_all_calls_at_once_and_a_run_not_waiting_is_a_409() {
    let app = TestApp::spawn().await;
    let (_, token) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    asking_agent(&app, &token, "writer", None).await;
    let thread = app.thread(&token, "writer").await;
    let run = app.start_run(&token, &thread, "write").await;

    // `wait` answers as soon as the run waits on its owner.
    let waited = app.wait(&token, &run, 20).await;
    assert_eq!(waited["wait_timed_out"], false);
    assert_eq!(waited["run"]["status"], "waiting");
    let got = app.get(&format!("/api/runs/{run}"), &token).await;
    let pending = got.body["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0]["kind"], "approval");
    assert_eq!(pending[0]["tool"], "write_file");
    assert_eq!(pending[0]["arguments"]["path"], "a.txt");
    assert_eq!(pending[0]["run_id"], run.as_str());
    assert_eq!(pending[0]["thread_id"], thread.as_str());
    assert_eq!(pending[0]["agent_slug"], "writer");
    let listed = app
        .get(&format!("/api/threads/{thread}/pending"), &token)
        .await;
    assert_eq!(listed.body.as_array().unwrap().len(), 2);
    // The thread list marks the thread as waiting on its owner.
    let threads = app.get("/api/threads", &token).await;
    let listed_thread = threads
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == thread.as_str())
        .unwrap()
        .clone();
    assert_eq!(listed_thread["waiting"], true, "{listed_thread}");

    let path = format!("/api/runs/{run}/decisions");
    let approve_both = json!({"decisions": [
        {"call_id": "c1", "decision": "approve"},
        {"call_id": "c2", "decision": "reject", "message": "not b"}
    ]});
    // Someone else: not found, as for every run operation; nothing decided.
    let foreign = app.post(&path, &bob, approve_both.clone()).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let foreign = app
        .get(&format!("/api/threads/{thread}/pending"), &bob)
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    // Malformed, wrong shape, partial, unknown: refused, naming what.
    let malformed = app
        .raw(
            reqwest::Method::POST,
            &path,
            &token,
            "application/json",
            b"{\"decisions\": [".to_vec(),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    let extra = app
        .post(&path, &token, json!({"decisions": [], "also": 1}))
        .await;
    assert_eq!(extra.status, StatusCode::UNPROCESSABLE_ENTITY);
    let partial = app
        .post(
            &path,
            &token,
            json!({"decisions": [{"call_id": "c1", "decision": "approve"}]}),
        )
        .await;
    assert_eq!(partial.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(partial.field(), Some("decisions"));
    let unknown = app
        .post(
            &path,
            &token,
            json!({"decisions": [{"call_id": "c1", "decision": "approve"},
                                 {"call_id": "zz", "decision": "approve"}]}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(unknown.field(), Some("decisions[1].call_id"));
    let misfit = app
        .post(
            &path,
            &token,
            json!({"decisions": [{"call_id": "c1", "decision": "approve"},
                                 {"call_id": "c2", "decision": "edit", "arguments": {"content": 1}}]}),
        )
        .await;
    assert_eq!(misfit.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(misfit.field(), Some("decisions[1].arguments"));
    let still = app.get(&format!("/api/runs/{run}"), &token).await;
    assert_eq!(still.body["status"], "waiting", "a refusal loses nothing");

    // The owner decides both: the run resumes and ends.
    let decided = app.post(&path, &token, approve_both.clone()).await;
    assert_eq!(decided.status, StatusCode::OK, "{}", decided.body);
    assert_eq!(decided.body["id"], run.as_str());
    let ended = app.wait(&token, &run, 20).await;
    assert_eq!(ended["run"]["status"], "success", "{ended}");
    assert_eq!(ended["run"]["pending"], json!([]));
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &token)
        .await;
    let tools: Vec<&Value> = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1]["is_error"], true);
    assert!(
        tools[1]["content"].as_str().unwrap().contains("not b"),
        "{}",
        tools[1]
    );
    // Decided already: a 409 saying the run does not wait.
    let again = app.post(&path, &token, approve_both).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    let threads = app.get("/api/threads", &token).await;
    assert!(threads.body[0].get("waiting").is_none(), "{}", threads.body);
}

#[tokio::test]
async fn a_subagents_waiting_call_is_listed_on_the_root_thread_and_decided_through_the_child_run() {
    let app = TestApp::spawn().await;
    let (_, token) = app.user("alice").await;
    asking_agent(&app, &token, "writer", Some("SubAgentBackend")).await;
    app.scripted_agent(
        &token,
        "lead",
        json!([
            {"tool_calls": [{"name": "task", "arguments":
                {"description": "write the files", "subagent_slug": "writer"}}]},
            {"text": "lead: {{last_tool_result.output}}"}
        ]),
    )
    .await;
    let thread = app.thread(&token, "lead").await;
    let mut events = LiveSse::open(&app, &format!("/api/threads/{thread}/events"), Some(&token))
        .await
        .unwrap_or_else(|(status, body)| panic!("{status}: {body}"));
    let run = app.start_run(&token, &thread, "go").await;

    let requested = events
        .until(PROMPT, |m| m.event == "approval_requested")
        .await
        .pop()
        .unwrap();
    let child_run = requested.data["run_id"].as_str().unwrap().to_string();
    let child_thread = requested.data["thread_id"].as_str().unwrap().to_string();
    assert_ne!(child_run, run);
    assert_ne!(child_thread, thread);
    assert_eq!(requested.data["items"].as_array().unwrap().len(), 2);
    // The root's pending list carries the child's ids; the parent keeps waiting in `task`.
    let listed = app
        .get(&format!("/api/threads/{thread}/pending"), &token)
        .await;
    let items = listed.body.as_array().unwrap();
    assert_eq!(items.len(), 2, "{}", listed.body);
    assert_eq!(items[0]["run_id"], child_run.as_str());
    assert_eq!(items[0]["thread_id"], child_thread.as_str());
    assert_eq!(items[0]["agent_slug"], "writer");
    let parent = app.get(&format!("/api/runs/{run}"), &token).await;
    assert_eq!(parent.body["status"], "running");

    let decided = app
        .post(
            &format!("/api/runs/{child_run}/decisions"),
            &token,
            json!({"decisions": [{"call_id": "c1", "decision": "approve"},
                                 {"call_id": "c2", "decision": "approve"}]}),
        )
        .await;
    assert_eq!(decided.status, StatusCode::OK, "{}", decided.body);
    let resolved = events
        .until(PROMPT, |m| m.event == "approval_resolved")
        .await
        .pop()
        .unwrap();
    assert_eq!(resolved.data["run_id"], child_run.as_str());
    assert_eq!(resolved.data["call_ids"], json!(["c1", "c2"]));
    let ended = app.wait(&token, &run, 20).await;
    assert_eq!(ended["run"]["status"], "success", "{ended}");
    assert_eq!(ended["run"]["output"], "lead: done");
    let listed = app
        .get(&format!("/api/threads/{thread}/pending"), &token)
        .await;
    assert_eq!(listed.body, json!([]));
}

#[tokio::test]
async fn absurd_decision_bodies_are_refused_and_lose_nothing() {
    let app = TestApp::spawn().await;
    let (_, token) = app.user("alice").await;
    asking_agent(&app, &token, "writer", None).await;
    let thread = app.thread(&token, "writer").await;
    let run = app.start_run(&token, &thread, "write").await;
    assert_eq!(app.wait(&token, &run, 20).await["run"]["status"], "waiting");
    let path = format!("/api/runs/{run}/decisions");

    // Edited arguments nested a million levels deep: refused before any parser recurses.
    let depth = 1_000_000;
    let mut body =
        String::from(r#"{"decisions": [{"call_id": "c1", "decision": "edit", "arguments": "#);
    body.push_str(&"[".repeat(depth));
    body.push_str(&"]".repeat(depth));
    body.push_str("}]}");
    let deep = app
        .raw(
            reqwest::Method::POST,
            &path,
            &token,
            "application/json",
            body.into_bytes(),
        )
        .await;
    assert!(
        deep.status.is_client_error(),
        "{}: {}",
        deep.status,
        deep.body
    );
    // Ten thousand decisions: more than any turn has.
    let many: Vec<Value> = (0..10_000)
        .map(|i| json!({"call_id": format!("c{i}"), "decision": "approve"}))
        .collect();
    let many = app.post(&path, &token, json!({"decisions": many})).await;
    assert_eq!(
        many.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        many.body
    );
    assert_eq!(many.field(), Some("decisions"));
    // A reason longer than any allowed.
    let long = app
        .post(
            &path,
            &token,
            json!({"decisions": [{"call_id": "c1", "decision": "approve"},
                                 {"call_id": "c2", "decision": "reject", "message": "x".repeat(100_001)}]}),
        )
        .await;
    assert_eq!(
        long.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        long.body
    );
    assert_eq!(long.field(), Some("decisions[1].message"));
    // Nothing was lost: the run still waits on both calls, and deciding them works.
    let still = app.get(&format!("/api/runs/{run}"), &token).await;
    assert_eq!(still.body["status"], "waiting");
    assert_eq!(still.body["pending"].as_array().unwrap().len(), 2);
    let decided = app
        .post(
            &path,
            &token,
            json!({"decisions": [{"call_id": "c1", "decision": "approve"},
                                 {"call_id": "c2", "decision": "approve"}]}),
        )
        .await;
    assert_eq!(decided.status, StatusCode::OK, "{}", decided.body);
}
