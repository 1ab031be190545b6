//! The protocol adapters driven by the official client libraries, as our users' programs
//! drive them: PyPI `openai`, `langgraph-sdk`, `deepagents` and `a2a-sdk`, pinned and
//! installed by `scripts/protocol-peers.sh` into a venv outside the clone. `scripts/test.sh`
//! points `ARS_TEST_PROTOCOL_PEERS` at that venv; without it these tests say so and pass.
//!
//! Each test starts a real server on loopback, makes the users, tokens and agents a client
//! needs, and runs a Python script of `tests/protocol_clients/` against it: the script asserts
//! what the client sees and exits non-zero, printing why, on the first surprise.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use common::TestApp;

/// The venv's Python, when the peers are installed.
fn python() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("ARS_TEST_PROTOCOL_PEERS") else {
        eprintln!("skipped: ARS_TEST_PROTOCOL_PEERS is not set (scripts/test.sh sets it)");
        return None;
    };
    let python = PathBuf::from(dir).join("bin/python");
    assert!(
        python.exists(),
        "ARS_TEST_PROTOCOL_PEERS has no bin/python: run scripts/protocol-peers.sh"
    );
    Some(python)
}

/// Runs `tests/protocol_clients/<script>` with `env`, and fails with its output unless it
/// exits 0.
async fn run_client(python: &PathBuf, script: &str, env: &[(&str, &str)]) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/protocol_clients")
        .join(script);
    let mut command = tokio::process::Command::new(python);
    command.arg(&path).kill_on_drop(true);
    // The clients read their keys from the environment too: only what a test gives counts.
    for name in [
        "LANGGRAPH_API_KEY",
        "LANGSMITH_API_KEY",
        "LANGCHAIN_API_KEY",
        "OPENAI_API_KEY",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("the client script finishes within 3 minutes")
        .expect("the client script starts");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{script} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    stdout
}

#[tokio::test]
async fn the_openai_python_client_lists_chats_streams_and_continues_responses() {
    let Some(python) = python() else { return };
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.scripted_agent(
        &alice,
        "echo",
        json!([{"text": "heard {{input}} after {{user_turns}} user turns",
                "usage": {"prompt_tokens": 11, "completion_tokens": 7}}]),
    )
    .await;
    let out = run_client(
        &python,
        "openai_client.py",
        &[
            ("ARS_URL", &app.base),
            ("ARS_TOKEN", &alice),
            ("ARS_OTHER_TOKEN", &bob),
        ],
    )
    .await;
    assert!(out.contains("openai client: ok"), "{out}");
}
