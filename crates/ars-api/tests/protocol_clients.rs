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

/// Alice and Bob, and Alice's agents the LangGraph, deepagents and A2A scripts use: `echo`,
/// `slow` (answers after 3 s) and the subagent `researcher` (writes a file with its own tool,
/// then answers after 1.5 s). Answers Alice's and Bob's tokens.
async fn agents_of_alice(app: &TestApp) -> (String, String) {
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.scripted_agent(
        &alice,
        "echo",
        json!([{"text": "heard {{input}} after {{user_turns}} user turns",
                "usage": {"prompt_tokens": 11, "completion_tokens": 7}}]),
    )
    .await;
    app.scripted_agent(
        &alice,
        "slow",
        json!([{"text": "slow answer to {{input}}", "delay_ms": 3000}]),
    )
    .await;
    app.agent(
        &alice,
        json!({"slug": "researcher", "name": "Researcher", "description": "researches",
               "backend_id": "SubAgentBackend", "config_json": {"context": {
                   "tools": ["write_file"],
                   "model": {"provider": "scripted", "name": "demo", "script": [
                       {"tool_calls": [{"name": "write_file",
                                        "arguments": {"path": "notes.txt", "content": "{{input}}"}}]},
                       {"text": "researched: {{input}}", "delay_ms": 1500}]}}}}),
    )
    .await;
    (alice, bob)
}

#[tokio::test]
async fn the_langgraph_sdk_searches_assistants_runs_streams_joins_and_cancels() {
    let Some(python) = python() else { return };
    let app = TestApp::spawn().await;
    let (alice, bob) = agents_of_alice(&app).await;
    let env = [
        ("ARS_URL", app.base.as_str()),
        ("ARS_TOKEN", &alice),
        ("ARS_OTHER_TOKEN", &bob),
    ];
    let out = run_client(&python, "langgraph_client.py", &env).await;
    assert!(out.contains("langgraph client: ok"), "{out}");
}

#[tokio::test]
async fn a_deepagents_main_agent_runs_an_ars_agent_as_its_async_subagent() {
    let Some(python) = python() else { return };
    let app = TestApp::spawn().await;
    let (alice, bob) = agents_of_alice(&app).await;
    let env = [
        ("ARS_URL", app.base.as_str()),
        ("ARS_TOKEN", &alice),
        ("ARS_OTHER_TOKEN", &bob),
    ];
    let out = run_client(&python, "deepagents_client.py", &env).await;
    assert!(out.contains("deepagents client: ok"), "{out}");
    // The child ran as an ARS agent with its own tools: its file is in Alice's workspace.
    let notes = walk_for(&app.sandbox_dir, "notes.txt");
    assert!(
        !notes.is_empty(),
        "the researcher wrote notes.txt with its own tool"
    );
}

/// Files named `name` under `dir`, at any depth.
fn walk_for(dir: &std::path::Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == name) {
                found.push(path);
            }
        }
    }
    found
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

#[tokio::test]
async fn the_a2a_sdk_resolves_the_card_sends_streams_continues_and_cancels_tasks() {
    let Some(python) = python() else { return };
    let app = TestApp::spawn().await;
    let (alice, bob) = agents_of_alice(&app).await;
    let env = [
        ("ARS_URL", app.base.as_str()),
        ("ARS_TOKEN", &alice),
        ("ARS_OTHER_TOKEN", &bob),
    ];
    let out = run_client(&python, "a2a_client.py", &env).await;
    assert!(out.contains("a2a client: ok"), "{out}");
}
