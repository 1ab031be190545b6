//! Durable runs across process deaths: a killed server's runs are `interrupted` after restart
//! with every committed message kept; a stopped (SIGTERM) server interrupts its runs itself.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Server, eventually, get, login, post, scripted_agent};
use serde_json::{Value, json};

const PASSWORD: &str = "admin-password";

/// A tool-call turn, then a turn that waits ten minutes: the run stays busy after its first
/// tool result is committed.
fn tool_then_stall() -> Value {
    json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}]},
        {"text": "never reached", "delay_ms": 600_000}
    ])
}

/// Starts a run on a new thread and waits until its tool message is committed; returns
/// (thread id, run id, the messages at that point).
async fn run_until_tool_committed(base: &str, token: &str) -> (String, String, Value) {
    let (status, thread) = post(base, "/api/threads", token, json!({"agent_id": "stalls"})).await;
    assert_eq!(status, 201, "{thread}");
    let thread = thread["id"].as_str().unwrap().to_string();
    let (status, run) = post(
        base,
        &format!("/api/threads/{thread}/runs"),
        token,
        json!({"input": "go"}),
    )
    .await;
    assert_eq!(status, 202, "{run}");
    let run = run["run"]["id"].as_str().unwrap().to_string();
    let path = format!("/api/threads/{thread}/messages");
    eventually(30, "the tool message", || async {
        let messages = get(base, &path, token).await;
        messages
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool")
    })
    .await;
    let messages = get(base, &path, token).await;
    (thread, run, messages)
}

#[tokio::test]
async fn a_killed_server_leaves_its_runs_interrupted_after_restart_with_every_committed_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    scripted_agent(&server.base, &token, "stalls", tool_then_stall()).await;
    let (thread, run, before) = run_until_tool_committed(&server.base, &token).await;
    let roles: Vec<_> = before
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(
        get(&server.base, &format!("/api/runs/{run}"), &token).await["status"],
        "running"
    );
    server.kill();

    let server = Server::start(dir.path(), Some(PASSWORD));
    assert!(
        server.log.iter().any(|l| l.contains("interrupted")),
        "recovery is logged:\n{}",
        server.log.join("\n")
    );
    let base = server.base.clone();
    let token = login(&base, "admin", PASSWORD).await;
    let after = get(&base, &format!("/api/runs/{run}"), &token).await;
    assert_eq!(after["status"], "interrupted", "{after}");
    assert!(after["finished_at"].is_string());
    assert_eq!(
        get(&base, &format!("/api/threads/{thread}/messages"), &token).await,
        before
    );

    let (status, next) = post(
        &base,
        &format!("/api/threads/{thread}/runs"),
        &token,
        json!({"input": "again"}),
    )
    .await;
    assert_eq!(status, 202, "the thread accepts a new run: {next}");
    // Its events are live on the new process; the old run's are gone with the old one.
    let (status, _) = common::call(
        reqwest::Method::GET,
        format!("{base}/api/runs/{run}/events"),
        Some(&token),
        None,
    )
    .await;
    assert_eq!(status, 410);
    server.kill();
}

#[tokio::test]
async fn sigterm_interrupts_active_runs_and_keeps_their_messages() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    scripted_agent(&server.base, &token, "stalls", tool_then_stall()).await;
    let (thread, run, before) = run_until_tool_committed(&server.base, &token).await;

    let started = std::time::Instant::now();
    let status = server.terminate();
    assert!(status.success(), "graceful stop exits 0, got {status}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );

    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    let after = get(&server.base, &format!("/api/runs/{run}"), &token).await;
    assert_eq!(after["status"], "interrupted", "{after}");
    assert!(
        after["error"].as_str().unwrap().contains("stopped"),
        "recorded by the stopping server itself: {after}"
    );
    assert_eq!(
        get(
            &server.base,
            &format!("/api/threads/{thread}/messages"),
            &token
        )
        .await,
        before
    );
    server.terminate();
}

/// The value of the Prometheus sample `name` (no labels) in `text`.
fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// SQLite commits what is queued for its writer together (group commit), and answers each
/// write only once the transaction holding it has committed: every thread the server answered
/// `201` for is there after it is killed (SIGKILL) in the middle of such batches.
#[tokio::test]
async fn every_answered_write_survives_kill_9_in_the_middle_of_batched_commits() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let base = server.base.clone();
    let token = login(&base, "admin", PASSWORD).await;
    scripted_agent(&base, &token, "quiet", json!([{"text": "ok"}])).await;
    let answered = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut writers = Vec::new();
    for _ in 0..16 {
        let (base, token) = (base.clone(), token.clone());
        let answered = std::sync::Arc::clone(&answered);
        writers.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            loop {
                let sent = client
                    .post(format!("{base}/api/threads"))
                    .bearer_auth(&token)
                    .json(&json!({"agent_id": "quiet"}))
                    .send()
                    .await;
                let Ok(reply) = sent else { break };
                if reply.status() != 201 {
                    break;
                }
                let Ok(thread) = reply.json::<Value>().await else {
                    break;
                };
                let id = thread["id"].as_str().unwrap().to_string();
                answered.lock().unwrap().push(id);
            }
        }));
    }
    eventually(60, "several hundred answered writes", || {
        let answered = std::sync::Arc::clone(&answered);
        async move { answered.lock().unwrap().len() >= 400 }
    })
    .await;
    let metrics = reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    server.kill();
    for writer in writers {
        writer.await.unwrap();
    }
    let (writes, commits) = (
        sample(&metrics, "ars_store_writes_per_commit_sum"),
        sample(&metrics, "ars_store_writes_per_commit_count"),
    );
    assert!(
        commits > 0.0 && writes > commits,
        "some commits held more than one write: {writes} writes in {commits} commits"
    );
    let answered = answered.lock().unwrap().clone();

    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    let listed: std::collections::HashSet<String> = get(&server.base, "/api/threads", &token)
        .await
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    let lost: Vec<_> = answered.iter().filter(|id| !listed.contains(*id)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} answered writes lost: {lost:?}",
        lost.len(),
        answered.len()
    );
    server.kill();
}
