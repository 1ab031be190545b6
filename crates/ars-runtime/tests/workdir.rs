//! SPEC §6: a run's sandbox scope (workspace, workdir) is made by its first sandbox tool call,
//! not at its start: a run that only talks, or only delegates, makes no directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;

use ars_domain::{Limits, MessageRole, RunStatus};
use ars_runtime::thread_scope;
use ars_sandbox::SandboxError;
use common::delegation::{parent, sub, task};
use common::harness;

#[tokio::test]
async fn a_run_that_calls_no_sandbox_tool_makes_no_directory() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "done"}])).await;
    let talker = h
        .thread(
            json!([{"text": "hello"}]),
            &["ls", "write_file"],
            Limits::default(),
        )
        .await;
    let delegator = parent(
        &h,
        json!([{"tool_calls": [task("helper", "answer")]}, {"text": "{{last_tool_result}}"}]),
        &["ls", "write_file"],
        None,
    )
    .await;
    for thread in [&talker, &delegator] {
        let run = h.finish(thread, "go").await;
        assert_eq!(run.status, RunStatus::Success, "{run:?}");
    }
    let users = h.data.path().join("users");
    assert!(
        !users.exists(),
        "a run without a sandbox tool made {}",
        users.display()
    );
    // What a reader of the workdir sees: nothing there, not a broken workspace.
    let scope = thread_scope(&talker).unwrap();
    let listed = h.sandbox.list(&scope, ".").await;
    assert!(
        matches!(listed, Err(SandboxError::NotFound { .. })),
        "{listed:?}"
    );
}

#[tokio::test]
async fn the_first_sandbox_calls_of_a_run_find_the_workdir_made_even_side_by_side() {
    let h = harness().await;
    // Five calls of the run's first step run concurrently, each the run's first sandbox use.
    let script = json!([
        {"tool_calls": [
            {"name": "ls", "arguments": {}},
            {"name": "glob", "arguments": {"pattern": "**/*"}},
            {"name": "grep", "arguments": {"pattern": "alpha"}},
            {"name": "write_file", "arguments": {"path": "notes/a.md", "content": "alpha"}},
            {"name": "execute", "arguments": {"command": "pwd"}}
        ]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes/a.md"}}]},
        {"text": "{{last_tool_result}}"}
    ]);
    let thread = h
        .thread(
            script,
            &["ls", "glob", "grep", "write_file", "execute", "read_file"],
            Limits::default(),
        )
        .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let calls = h.messages_in(&thread, MessageRole::Tool).await;
    assert_eq!(calls.len(), 6, "{calls:?}");
    for call in &calls {
        assert!(
            !call.is_error,
            "{:?} failed: {}",
            call.tool_name, call.content
        );
    }
    let pwd = &calls[4].content;
    assert!(pwd.contains(thread.workdir_path.as_str()), "{pwd}");
    assert!(run.output.unwrap().contains("alpha"));
    // The directory the calls made is the thread's workdir, kept for its next run.
    let scope = thread_scope(&thread).unwrap();
    let listed = h.sandbox.list(&scope, ".").await.unwrap();
    let names: Vec<_> = listed.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["notes"]);
}
