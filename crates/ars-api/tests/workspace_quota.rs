//! The workspace quota over HTTP: what an agent's commands write is counted at any depth in
//! `GET /api/me`, a command that writes past the quota is stopped near it and its tool result
//! says so with the way out, and the file browser lists the deep tree down to its bound.
//!
//! Needs bubblewrap (CI installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Setup, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

const MIB: u64 = 1024 * 1024;

#[tokio::test]
async fn deep_writes_are_counted_and_a_command_past_the_quota_is_stopped_near_it() {
    let mut setup = Setup::default();
    setup.sandbox_limits.workspace_quota_bytes = 16 * MIB;
    let app = TestApp::spawn_setup(setup).await;
    let (_, alice) = app.user("alice").await;
    // 3 MiB 300 folders down (where the walk used to stop), then one `dd` of 2000 MiB.
    let deep = "python3 -c 'import os\nfor _ in range(300): os.mkdir(\"d\"); os.chdir(\"d\")\n\
                open(\"f\", \"wb\").write(bytes(3 << 20))'";
    let dd = "dd if=/dev/zero of=big bs=1M count=2000";
    app.scripted_agent(
        &alice,
        "filler",
        json!([
            {"tool_calls": [{"name": "execute", "arguments": {"command": deep}}]},
            {"tool_calls": [{"name": "execute", "arguments": {"command": dd}}]},
            {"text": "done"}
        ]),
    )
    .await;
    let thread = app.thread(&alice, "filler").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let done = app.wait(&alice, &run, 120).await;
    assert_eq!(done["run"]["status"], "success", "{done}");

    let me = app.get("/api/me", &alice).await;
    let used = me.body["workspace"]["used_bytes"].as_u64().unwrap();
    assert!(used >= 16 * MIB, "the deep file and dd's: {}", me.body);
    assert!(
        used <= 17 * MIB + 64 * 1024,
        "past quota + margin: {}",
        me.body
    );

    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &alice)
        .await;
    let results: Vec<Value> = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(results.len(), 2, "{}", messages.body);
    let stderr = results[1]["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("quota") && stderr.contains("Files view"),
        "{stderr}"
    );

    // The file browser lists the tree down to its bound and says it left the rest out.
    let listing = app
        .get(
            &format!("/api/threads/{thread}/files?recursive=true&max_depth=16"),
            &alice,
        )
        .await;
    assert_eq!(listing.status, StatusCode::OK, "{}", listing.body);
    assert_eq!(listing.body["truncated"], true, "{}", listing.body);
    let deepest = listing.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["path"].as_str())
        .map(|p| p.matches('/').count())
        .max();
    assert_eq!(deepest, Some(15), "{}", listing.body);
}

#[tokio::test]
async fn deleting_a_conversation_frees_its_files() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "writer",
        json!([
            {"tool_calls": [{"name": "execute", "arguments": {"command": "head -c 3M /dev/zero > big"}}]},
            {"text": "done"}
        ]),
    )
    .await;
    let thread = app.thread(&alice, "writer").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let done = app.wait(&alice, &run, 60).await;
    assert_eq!(done["run"]["status"], "success", "{done}");
    let body = app
        .get(&format!("/api/threads/{thread}"), &alice)
        .await
        .body;
    let workdir = app
        .sandbox_dir
        .join("users")
        .join(body["user_id"].as_str().unwrap())
        .join("user-data")
        .join(body["workdir_path"].as_str().unwrap());
    assert!(workdir.join("big").exists());
    let used = |body: &Value| body["workspace"]["used_bytes"].as_u64().unwrap();
    let before = used(&app.get("/api/me", &alice).await.body);
    assert!(before >= 3 * MIB, "{before}");

    let deleted = app.delete(&format!("/api/threads/{thread}"), &alice).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    assert!(!workdir.exists());
    let after = used(&app.get("/api/me", &alice).await.body);
    assert!(after < MIB, "{after} used after the deletion");
}
