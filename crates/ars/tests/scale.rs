//! Scaled deployment: two `ars serve` instances on one PostgreSQL and one Redis. A run started
//! on one instance streams, live and in full, from the other. Runs whenever
//! `ARS_TEST_DATABASE_URL` and `ARS_TEST_REDIS_URL` are set (CI sets both).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Server, login, post, scripted_agent};
use serde_json::json;

const PASSWORD: &str = "admin-password";

#[tokio::test]
async fn a_run_started_on_one_instance_streams_from_another() {
    let (Ok(db), Ok(redis)) = (
        std::env::var("ARS_TEST_DATABASE_URL"),
        std::env::var("ARS_TEST_REDIS_URL"),
    ) else {
        return;
    };
    // A schema of its own, so this test sees no other test's rows.
    let schema = format!("ars_scale_{}", std::process::id());
    let created = std::process::Command::new("psql")
        .args([
            db.as_str(),
            "-qc",
            &format!("CREATE SCHEMA IF NOT EXISTS {schema}"),
        ])
        .status()
        .unwrap();
    assert!(created.success());
    let separator = if db.contains('?') { '&' } else { '?' };
    let url = format!("{db}{separator}options=-c%20search_path%3D{schema}");
    let env = [
        ("ARS_DATABASE_URL", url.as_str()),
        ("ARS_REDIS_URL", redis.as_str()),
    ];
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Server::start_with(dir_a.path(), Some(PASSWORD), &env);
    let b = Server::start_with(dir_b.path(), Some(PASSWORD), &env);

    let token = login(&a.base, "admin", PASSWORD).await;
    let words: Vec<String> = (0..30).map(|i| format!("w{i}")).collect();
    scripted_agent(
        &a.base,
        &token,
        "talker",
        json!([{"text": words.join(" "), "chunk_delay_ms": 30}]),
    )
    .await;
    let (_, thread) = post(
        &a.base,
        "/api/threads",
        &token,
        json!({"agent_id": "talker"}),
    )
    .await;
    let thread = thread["id"].as_str().unwrap();
    let (status, run) = post(
        &a.base,
        &format!("/api/threads/{thread}/runs"),
        &token,
        json!({"input": "talk"}),
    )
    .await;
    assert_eq!(status, 202);
    let run = run["run"]["id"].as_str().unwrap();

    // Instance B streams the run that A executes, from the first event to the last.
    let body = reqwest::Client::new()
        .get(format!("{}/api/runs/{run}/events", b.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let ids: Vec<u64> = body
        .lines()
        .filter_map(|l| l.strip_prefix("id:"))
        .map(|v| v.trim().parse().unwrap())
        .collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "every event once, in order"
    );
    let deltas: String = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
        .filter(|e| e["type"] == "message_delta")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(deltas.split_whitespace().count(), 30, "{deltas}");
    assert!(
        body.contains("\"status\":\"success\""),
        "ends with the terminal status"
    );
    let (_, done) = post(
        &b.base,
        &format!("/api/runs/{run}/cancel"),
        &token,
        json!({}),
    )
    .await;
    assert_eq!(done["status"], "success", "B reads the run A finished");

    a.terminate();
    b.terminate();
    let _ = std::process::Command::new("psql")
        .args([db.as_str(), "-qc", &format!("DROP SCHEMA {schema} CASCADE")])
        .status();
}
