//! Subagents over HTTP: the thread's subagent listing, child streams and history, usage
//! roll-up.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestApp;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_threads_subagents_are_listed_with_their_child_threads_streams_and_usage() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let sub = json!({"slug": "helper", "name": "Helper", "description": "helps", "backend_id": "SubAgentBackend",
        "config_json": {"context": {"model": {"provider": "scripted", "name": "demo", "script": [{"text": "helped with {{input}}"}]}}}});
    assert_eq!(
        app.post("/api/agent", &alice, sub).await.status,
        StatusCode::CREATED
    );
    app.scripted_agent(&alice, "boss", json!([
        {"tool_calls": [
            {"name": "task", "arguments": {"description": "sync job", "subagent_slug": "helper"}},
            {"name": "subagent_start", "arguments": {"description": "background job", "subagent_slug": "helper"}}
        ]},
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{tool_result.1.run_id}}"}}]},
        {"text": "all done"}
    ])).await;
    let thread = app.thread(&alice, "boss").await;
    let run = app.start_run(&alice, &thread, "go").await;
    assert_eq!(app.wait(&alice, &run, 20).await["run"]["status"], "success");

    let r = app
        .get(&format!("/api/threads/{thread}/subagents"), &alice)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let list = r.body.as_array().unwrap();
    assert_eq!(list.len(), 2);
    let mut descriptions: Vec<&str> = list
        .iter()
        .map(|c| c["description"].as_str().unwrap())
        .collect();
    descriptions.sort();
    assert_eq!(descriptions, vec!["background job", "sync job"]);
    let mut child_usage = 0;
    for child in list {
        assert_eq!(child["subagent_slug"], "helper");
        assert_eq!(child["status"], "success");
        assert_eq!(child["parent_run_id"], run.as_str());
        assert!(
            child["parent_tool_call_id"].is_string()
                && child["started_at"].is_string()
                && child["finished_at"].is_string()
        );
        let child_thread = child["thread_id"].as_str().unwrap();
        assert!(child_thread.starts_with(&format!("{thread}_sub_helper_")));
        // The child's history and its event stream.
        let messages = app
            .get(&format!("/api/threads/{child_thread}/messages"), &alice)
            .await
            .body;
        assert_eq!(
            messages.as_array().unwrap().last().unwrap()["content"],
            format!("helped with {}", child["description"].as_str().unwrap())
        );
        let (status, events) = app
            .events(&alice, child["run_id"].as_str().unwrap(), None)
            .await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            events
                .iter()
                .all(|e| e.data["parent"]["parent_run_id"] == run.as_str())
        );
        child_usage += child["usage"]["prompt_tokens"].as_u64().unwrap()
            + child["usage"]["completion_tokens"].as_u64().unwrap();
    }
    assert!(child_usage > 0);
    let detail = app.get(&format!("/api/runs/{run}"), &alice).await.body;
    let own = detail["usage"]["prompt_tokens"].as_u64().unwrap()
        + detail["usage"]["completion_tokens"].as_u64().unwrap();
    let total = detail["total_usage"]["prompt_tokens"].as_u64().unwrap()
        + detail["total_usage"]["completion_tokens"].as_u64().unwrap();
    assert_eq!(
        total,
        own + child_usage,
        "usage rolls up into the parent run"
    );

    // Another user sees nothing of it.
    let (_, bob) = app.user("bob").await;
    assert_eq!(
        app.get(&format!("/api/threads/{thread}/subagents"), &bob)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}
