//! Budgets that stop a tree (issue 24 §5): `limits.max_total_tokens` stops a run once its own
//! tokens and its subagents' pass it, after the model call that passed it (`budget_exceeded`),
//! and cancels its running subagents; a subagent's budget is the lower of its own and what its
//! parent's leaves it, and the parent sees a subagent stopped by it as a failed call with that
//! code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use ars_domain::{
    AgentContext, Approval, ApprovalRules, Backend, DecisionInput, Limits, RunErrorCode, RunStatus,
    Thread,
};
use ars_runtime::{RuntimeConfig, SubagentMiddlewareFactory};
use common::delegation::{start_call, sub_with, task};
use common::{Harness, harness, scripted};

fn budget(tokens: u64) -> Limits {
    Limits {
        max_total_tokens: Some(tokens),
        ..Limits::default()
    }
}

fn spent(prompt: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": 0})
}

async fn parent_with_budget(h: &Harness, script: Value, tokens: u64) -> Thread {
    let context = AgentContext {
        model: Some(scripted(script)),
        tools: Some(vec!["sleep".into()]),
        limits: Some(budget(tokens)),
        ..AgentContext::default()
    };
    let agent = h.agent("boss", Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

#[tokio::test]
async fn a_budget_stops_the_tree_after_the_call_that_passes_it_and_cancels_running_subagents() {
    let h = harness().await;
    sub_with(
        &h,
        "slow",
        json!([{"text": "late", "delay_ms": 10000, "usage": spent(1)}]),
        &[],
        Limits::default(),
    )
    .await;
    let thread = parent_with_budget(
        &h,
        json!([
            {"tool_calls": [start_call("slow", "take long")], "usage": spent(20)},
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 200}}], "usage": spent(20)},
            {"text": "one more thought", "usage": spent(70)},
            {"text": "never", "usage": spent(1)}
        ]),
        100,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Error, "{run:?}");
    assert_eq!(run.error_code, Some(RunErrorCode::BudgetExceeded));
    assert!(
        run.error.as_deref().unwrap().contains("110 of 100"),
        "{run:?}"
    );
    // The answer of the call that passed it is kept; nothing came after.
    let messages = h.store.messages(&thread.id).await.unwrap();
    let answers: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == ars_domain::MessageRole::Assistant)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(answers.last(), Some(&"one more thought"), "{answers:?}");
    // The background child stopped with it.
    let child = &h.store.child_runs(run.id).await.unwrap()[0];
    let mut status = child.status;
    for _ in 0..100 {
        status = h.store.run(child.id).await.unwrap().unwrap().status;
        if status.is_terminal() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, RunStatus::Cancelled);
}

#[tokio::test]
async fn a_childs_budget_is_what_its_parent_leaves_and_the_parent_sees_the_code() {
    let h = harness().await;
    // Its own limit is higher than what the parent's leaves it (100 - 60 = 40).
    sub_with(
        &h,
        "spender",
        json!([
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 1}}], "usage": spent(30)},
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 1}}], "usage": spent(30)},
            {"text": "never", "usage": spent(1)}
        ]),
        &["sleep"],
        budget(1000),
    )
    .await;
    let thread = parent_with_budget(
        &h,
        json!([
            {"tool_calls": [task("spender", "spend")], "usage": spent(60)},
            {"text": "after: {{last_tool_result}}", "usage": spent(0)}
        ]),
        100,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    let child = &h.store.child_runs(run.id).await.unwrap()[0];
    assert_eq!(
        child.error_code,
        Some(RunErrorCode::BudgetExceeded),
        "{child:?}"
    );
    assert_eq!(
        child.usage.total(),
        60,
        "stopped after the call that passed 40"
    );
    let result = &h.tool_results(&thread).await[0];
    assert_eq!(result["error_code"], "budget_exceeded", "{result}");
    assert_eq!(result["status"], "error");
    // The tree is past the parent's budget as well: the parent stops at its next call.
    assert_eq!(
        run.error_code,
        Some(RunErrorCode::BudgetExceeded),
        "{run:?}"
    );
}

#[tokio::test]
async fn a_childs_own_lower_budget_wins_over_what_its_parent_leaves() {
    let h = harness().await;
    sub_with(
        &h,
        "frugal",
        json!([
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 1}}], "usage": spent(15)},
            {"text": "never", "usage": spent(15)}
        ]),
        &["sleep"],
        budget(20),
    )
    .await;
    let thread = parent_with_budget(
        &h,
        json!([
            {"tool_calls": [task("frugal", "spend a little")], "usage": spent(1)},
            {"text": "ok", "usage": spent(1)}
        ]),
        1000,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let child = &h.store.child_runs(run.id).await.unwrap()[0];
    assert_eq!(
        child.error_code,
        Some(RunErrorCode::BudgetExceeded),
        "{child:?}"
    );
    assert_eq!(child.usage.total(), 30);
}

/// A child resumed on another instance than its parent's (a decision taken there) learns what
/// the parent's budget leaves it from the store: the starter executes elsewhere.
#[tokio::test]
async fn a_child_resumed_on_another_instance_reads_what_its_starters_budget_leaves_it() {
    let h = harness().await;
    // Its first call waits for a decision; after it, the child spends past the 40 left.
    let context = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"id": "l", "name": "ls", "arguments": {}}], "usage": spent(30)},
            {"tool_calls": [{"id": "m", "name": "ls", "arguments": {}}], "usage": spent(30)},
            {"text": "never", "usage": spent(1)}
        ]))),
        tools: Some(vec!["ls".into()]),
        limits: Some(budget(1000)),
        approvals: Some(ApprovalRules(
            [("ls".to_string(), Approval::Ask)].into_iter().collect(),
        )),
        ..AgentContext::default()
    };
    h.agent("asker", Backend::SubAgent, context).await;
    let thread = parent_with_budget(
        &h,
        json!([
            {"tool_calls": [task("asker", "look")], "usage": spent(60)},
            {"text": "after: {{last_tool_result}}", "usage": spent(0)}
        ]),
        100,
    )
    .await;
    let run = h.start(&thread, "go").await;
    let mut child = None;
    for _ in 0..200 {
        let runs = h.store.child_runs(run.id).await.unwrap();
        if let Some(waiting) = runs.into_iter().find(|r| r.status == RunStatus::Waiting) {
            child = Some(waiting);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let child = child.expect("the child waits for a decision");

    let other = h.other_runtime(
        RuntimeConfig::default(),
        vec![Arc::new(SubagentMiddlewareFactory::new())],
    );
    let approve: Vec<DecisionInput> =
        vec![serde_json::from_value(json!({"call_id": "l", "decision": "approve"})).unwrap()];
    other.decide(child.id, &approve).await.unwrap();
    let child = other
        .wait(child.id, Duration::from_secs(20))
        .await
        .unwrap()
        .into_run();
    assert_eq!(
        child.error_code,
        Some(RunErrorCode::BudgetExceeded),
        "the parent's 100 less its own 60 left 40: {child:?}"
    );
    assert_eq!(child.usage.total(), 60, "{child:?}");
    let run = h.wait(&run).await;
    assert!(run.status.is_terminal(), "{run:?}");
}
