//! A run waiting for a decision holds no lease and no task: it survives its instance's kill -9
//! unchanged (never reaped), and the decision sent to another instance resumes it there. Real
//! processes on one PostgreSQL and one Redis; runs whenever `ARS_TEST_DATABASE_URL` and
//! `ARS_TEST_REDIS_URL` are set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::cluster::{Cluster, LEASE_TTL_S};
use common::eventually;
use serde_json::json;

#[tokio::test]
async fn a_waiting_run_survives_kill_9_and_is_decided_through_another_instance() {
    let Some(mut c) = Cluster::start("waiting", 2).await else {
        return;
    };
    let agent = json!({"slug": "writer", "name": "writer", "config_json": {"context": {
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"id": "c1", "name": "write_file",
                             "arguments": {"path": "note.txt", "content": "kept"}}]},
            {"text": "wrote: {{last_tool_result}}"}
        ]},
        "tools": ["write_file"],
        "approvals": {"write_file": "ask"}
    }}});
    let (status, body) = c.post(0, "/api/agent", agent).await;
    assert_eq!(status, 201, "{body}");
    let thread = c.thread(0, "writer").await;
    let run = c.start_run(0, &thread, "write a note").await;
    eventually(20, "the run waits", || async {
        c.run(0, &run).await["status"] == "waiting"
    })
    .await;

    // Instance 0 dies without a word; well past a lease TTL nothing has touched the run.
    c.kill(0);
    tokio::time::sleep(Duration::from_secs(LEASE_TTL_S) * 2).await;
    let after = c.run(1, &run).await;
    assert_eq!(after["status"], "waiting", "{after}");
    assert_eq!(after["pending"][0]["call_id"], "c1");
    let listed = c.get(1, &format!("/api/threads/{thread}/pending")).await;
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");

    // Decided through instance 1, which executes the rest.
    let decided_at = Instant::now();
    let (status, body) = c
        .post(
            1,
            &format!("/api/runs/{run}/decisions"),
            json!({"decisions": [{"call_id": "c1", "decision": "approve"}]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let ended = c.until_ended(1, &run, 20).await;
    assert_eq!(ended["status"], "success", "{ended}");
    assert!(
        decided_at.elapsed() < Duration::from_secs(10),
        "resumed promptly"
    );
    let messages = c.messages(1, &thread).await;
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_ne!(tool["is_error"], true, "{tool}");
    assert!(
        tool["content"].as_str().unwrap().contains("bytes_written"),
        "{tool}"
    );
}
