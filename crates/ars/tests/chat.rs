//! `ars chat` driven with piped stdin against scripted agents: over `--url`, embedded on the
//! configured store, Ctrl-C cancelling a run, and clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{BIN, Server, eventually, get, login, post, scripted_agent};
use serde_json::{Value, json};

const PASSWORD: &str = "admin-password";

fn write_then_answer() -> Value {
    json!([
        {"text": "Let me note that.", "tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "hi"}}]},
        {"text": "Saved your notes.", "chunk_delay_ms": 5}
    ])
}

/// `ars chat ARGS` on `data_dir`, with nothing inherited that could change its settings.
fn chat(data_dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("chat")
        .args(args)
        .current_dir(data_dir)
        .env("ARS_DATA_DIR", data_dir.join("data"))
        .env_remove("ARS_DATABASE_URL")
        .env_remove("ARS_TOKEN")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs a chat with `input` on stdin (then end of input) and returns its output.
fn chat_with_input(mut cmd: Command, input: &str) -> Output {
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the chat ends at end of input")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn chat_over_url_prints_streamed_text_and_one_line_per_tool_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    scripted_agent(&server.base, &token, "notes", write_then_answer()).await;

    let cmd = chat(
        dir.path(),
        &["notes", "--url", &server.base, "--token", &token],
    );
    let out = chat_with_input(
        cmd,
        "please note hi\n/new\n\nsecond thread\n/quit\nnot sent\n",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let expected_turn = "Let me note that.\n⚙ write_file {\"content\":\"hi\",\"path\":\"notes.md\"}\n✓ write_file: ";
    assert_eq!(stdout.matches(expected_turn).count(), 2, "{stdout}");
    assert_eq!(stdout.matches("Saved your notes.\n").count(), 2, "{stdout}");
    assert!(stderr.contains("new thread"), "{stderr}");

    let threads = get(&server.base, "/api/threads", &token).await;
    assert_eq!(
        threads.as_array().unwrap().len(),
        2,
        "/new started a second thread"
    );
    for thread in threads.as_array().unwrap() {
        let messages = get(
            &server.base,
            &format!("/api/threads/{}/messages", thread["id"].as_str().unwrap()),
            &token,
        )
        .await;
        assert_eq!(
            messages.as_array().unwrap().len(),
            4,
            "nothing after /quit was sent: {messages}"
        );
    }
    // The token also comes from ARS_TOKEN.
    let mut cmd = chat(dir.path(), &["notes", "--url", &server.base]);
    cmd.env("ARS_TOKEN", &token);
    let out = chat_with_input(cmd, "hello\n");
    assert!(
        text(&out.stdout).contains("Saved your notes."),
        "{}",
        text(&out.stderr)
    );
    server.terminate();
}

#[tokio::test]
async fn chat_without_url_runs_an_embedded_server_on_the_store_as_the_named_user() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let admin = login(&server.base, "admin", PASSWORD).await;
    let (status, _) = post(
        &server.base,
        "/api/users",
        &admin,
        json!({"username": "bob", "password": "bob-password"}),
    )
    .await;
    assert_eq!(status, 201);
    let bob = login(&server.base, "bob", "bob-password").await;
    scripted_agent(&server.base, &bob, "bobs-notes", write_then_answer()).await;
    assert!(server.terminate().success());

    let out = chat_with_input(
        chat(dir.path(), &["bobs-notes", "--user", "bob"]),
        "note it\n",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("⚙ write_file"), "{stdout}");
    assert!(stdout.contains("Saved your notes."), "{stdout}");
    assert!(
        !stderr.contains("INFO"),
        "the chat is not drowned in server logs: {stderr}"
    );

    let server = Server::start(dir.path(), Some(PASSWORD));
    let bob = login(&server.base, "bob", "bob-password").await;
    let threads = get(&server.base, "/api/threads", &bob).await;
    assert_eq!(
        threads.as_array().unwrap().len(),
        1,
        "the chat ran as bob: {threads}"
    );
    let tokens = get(&server.base, "/api/tokens", &bob).await;
    assert!(
        tokens
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["name"] != "ars chat"),
        "the chat's token is revoked when it ends: {tokens}"
    );
    server.terminate();
}

#[tokio::test]
async fn chat_ctrl_c_during_a_run_cancels_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    scripted_agent(
        &server.base,
        &token,
        "slow",
        json!([{"text": "one two three four five six", "chunk_delay_ms": 1000}]),
    )
    .await;

    let mut child = chat(
        dir.path(),
        &["slow", "--url", &server.base, "--token", &token],
    )
    .spawn()
    .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"take your time\n").unwrap();
    let base = server.base.clone();
    eventually(30, "a running run", || async {
        let threads = get(&base, "/api/threads", &token).await;
        let Some(thread) = threads.as_array().unwrap().first() else {
            return false;
        };
        let runs = get(
            &base,
            &format!("/api/threads/{}/runs", thread["id"].as_str().unwrap()),
            &token,
        )
        .await;
        runs.as_array()
            .unwrap()
            .iter()
            .any(|r| r["status"] == "running")
    })
    .await;
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();

    let thread = get(&base, "/api/threads", &token).await[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    eventually(5, "the run to be cancelled", || async {
        let runs = get(&base, &format!("/api/threads/{thread}/runs"), &token).await;
        runs[0]["status"] == "cancelled"
    })
    .await;
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "Ctrl-C during a run does not end the chat: {stderr}"
    );
    assert!(stderr.contains("cancelling"), "{stderr}");
    assert!(stderr.contains("✗ run cancelled"), "{stderr}");
    server.terminate();
}

#[tokio::test]
async fn chat_reports_errors_clearly_and_keeps_going_after_a_failed_run() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;

    let out = chat_with_input(
        chat(
            dir.path(),
            &["no-such-agent", "--url", &server.base, "--token", &token],
        ),
        "hi\n",
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no-such-agent") && stderr.contains("agent_id"),
        "{stderr}"
    );

    let out = chat_with_input(chat(dir.path(), &["x", "--url", &server.base]), "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("ARS_TOKEN"),
        "{}",
        text(&out.stderr)
    );

    let out = chat_with_input(
        chat(
            dir.path(),
            &["x", "--url", &server.base, "--token", "ars_wrong"],
        ),
        "",
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("401"), "{}", text(&out.stderr));

    scripted_agent(
        &server.base,
        &token,
        "fails",
        json!([{"error": "the model fell over"}]),
    )
    .await;
    let out = chat_with_input(
        chat(
            dir.path(),
            &["fails", "--url", &server.base, "--token", &token],
        ),
        "hi\n/unknown\n",
    );
    let stderr = text(&out.stderr);
    assert!(
        out.status.success(),
        "a failed run does not end the chat: {stderr}"
    );
    assert!(
        stderr.contains("✗ run ended with status `error`")
            && stderr.contains("the model fell over"),
        "{stderr}"
    );
    assert!(stderr.contains("unknown command `/unknown`"), "{stderr}");
    server.terminate();

    let out = chat_with_input(chat(dir.path(), &["fails", "--user", "nobody"]), "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no user named `nobody`"),
        "{}",
        text(&out.stderr)
    );
}
