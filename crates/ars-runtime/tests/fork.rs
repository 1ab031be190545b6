//! Fork (issue 24 §4): `task` and `subagent_start` with `fork: true` start the child thread with
//! a copy of the parent thread's history up to (not including) the calling turn, then the
//! description; `fork` with `thread_id` is refused, saying why.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;

use ars_domain::MessageRole;
use common::delegation::{parent, sub};
use common::harness;

#[tokio::test]
async fn a_forked_child_starts_with_the_parents_history_then_the_description() {
    let h = harness().await;
    sub(
        &h,
        "helper",
        json!([{"text": "{{user_turns}} turns, last: {{input}}"}]),
    )
    .await;
    let fork = |description: &str| json!({"name": "task", "arguments": {"description": description, "subagent_slug": "helper", "fork": true}});
    let script = json!({
        "turns": [{"text": "noted"}],
        "when": [{"input_contains": "delegate", "turns": [
            {"tool_calls": [fork("summarise what we said")]},
            {"text": "child: {{last_tool_result.output}}"}
        ]}]
    });
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "my name is 李雷").await;
    let run = h.finish(&thread, "now delegate").await;
    assert_eq!(
        run.output.as_deref(),
        Some("child: 3 turns, last: summarise what we said"),
        "{run:?}"
    );
    let child = &h.store.child_threads(&thread.id).await.unwrap()[0];
    let copied = h.store.messages(&child.id).await.unwrap();
    let seen: Vec<(MessageRole, &str)> = copied
        .iter()
        .map(|m| (m.role, m.content.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (MessageRole::User, "my name is 李雷"),
            (MessageRole::Assistant, "noted"),
            (MessageRole::User, "now delegate"),
            (MessageRole::User, "summarise what we said"),
            (
                MessageRole::Assistant,
                "3 turns, last: summarise what we said"
            ),
        ]
    );
    // The parent's history is untouched.
    assert_eq!(h.store.messages(&thread.id).await.unwrap().len(), 6);
}

#[tokio::test]
async fn fork_with_thread_id_is_refused_saying_why() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "hi"}])).await;
    let script = json!([
        {"tool_calls": [{"name": "subagent_start", "arguments": {
            "description": "x", "subagent_slug": "helper", "fork": true, "thread_id": "t"}}]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "go").await;
    let result = h.tool_results(&thread).await[0].to_string();
    assert!(
        result.contains("fork") && result.contains("thread_id"),
        "{result}"
    );
    assert!(h.store.child_threads(&thread.id).await.unwrap().is_empty());
}
