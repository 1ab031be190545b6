//! SPEC §2 and §4: the task middleware and `task`, with scripted models for parents and
//! children. The async lifecycle tools, completion notices and child events are in
//! `subagent_lifecycle.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use ars_domain::{
    AgentContext, Backend, ContextDefaults, Limits, MessageRole, RunStatus, ShareConfig, Visibility,
};
use common::delegation::{parent, start_call, sub, sub_with, task};
use common::{harness, harness_with, scripted};

#[tokio::test]
async fn an_empty_allow_list_mounts_every_visible_subagent_including_general_purpose() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "hi"}])).await;
    let bob = h.user("bob").await;
    let public = ShareConfig {
        visibility: Visibility::Public,
        ..ShareConfig::default()
    };
    let sub_ctx = AgentContext::default();
    h.agent_of(
        &bob,
        "bobs-public",
        Backend::SubAgent,
        sub_ctx.clone(),
        public,
    )
    .await;
    h.agent_of(
        &bob,
        "bobs-secret",
        Backend::SubAgent,
        sub_ctx,
        ShareConfig::default(),
    )
    .await;
    for allow_list in [None, Some(vec![])] {
        let thread = parent(&h, json!([{"text": "{{system_prompt}}"}]), &[], allow_list).await;
        let prompt = h.finish(&thread, "who can help?").await.output.unwrap();
        for visible in ["- general-purpose:", "- helper:", "- bobs-public:"] {
            assert!(
                prompt.contains(visible),
                "{visible} missing from:\n{prompt}"
            );
        }
        assert!(!prompt.contains("bobs-secret"));
        assert!(prompt.contains("never through the shell, curl or the HTTP API"));
    }
}

#[tokio::test]
async fn an_explicit_allow_list_is_exactly_the_visible_subagents_it_names() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "hi"}])).await;
    sub(&h, "other", json!([{"text": "hi"}])).await;
    h.agent("plain", Backend::Default, AgentContext::default())
        .await;
    let bob = h.user("bob").await;
    h.agent_of(
        &bob,
        "bobs-secret",
        Backend::SubAgent,
        AgentContext::default(),
        ShareConfig::default(),
    )
    .await;

    let script = json!([
        {"text": "{{system_prompt}}", "tool_calls": [task("bobs-secret", "steal"), task("plain", "x"), task("other", "x")]},
        {"text": "done"}
    ]);
    let thread = parent(
        &h,
        script,
        &[],
        Some(vec!["helper", "bobs-secret", "plain", "missing"]),
    )
    .await;
    let run = h.finish(&thread, "go").await;
    let messages = h.store.messages(&thread.id).await.unwrap();
    let prompt = &messages[1].content;
    assert!(prompt.contains("- helper:"));
    for absent in [
        "general-purpose",
        "bobs-secret",
        "plain",
        "other",
        "missing",
    ] {
        assert!(
            !prompt.contains(&format!("- {absent}:")),
            "{absent} must not be offered"
        );
    }
    assert_eq!(run.status, RunStatus::Success);
    let refusals: Vec<_> = messages
        .iter()
        .filter(|m| m.role == MessageRole::Tool)
        .collect();
    for (m, slug) in refusals.iter().zip(["bobs-secret", "plain", "other"]) {
        assert!(m.is_error, "{slug} must be refused");
        assert!(
            m.content
                .contains(&format!("unknown subagent `{slug}`; allowed: helper")),
            "{}",
            m.content
        );
    }
}

#[tokio::test]
async fn a_subagents_tools_never_include_the_task_tools_even_if_its_stored_config_lists_subagents()
{
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "hi"}])).await;
    // Stored directly: the API would refuse this config, the runtime must hold the rule too.
    let nester = AgentContext {
        model: Some(scripted(
            json!([{"tool_calls": [{"name": "probe", "arguments": {}}]}, {"text": "{{system_prompt}} TOOLS: {{last_tool_result}}"}]),
        )),
        subagents: Some(vec!["helper".into()]),
        ..AgentContext::default()
    };
    let agent = h.agent("nester", Backend::SubAgent, nester).await;
    let thread = h.thread_of(&agent, &h.caller.clone()).await;
    let output = h.finish(&thread, "go").await.output.unwrap();
    let offered: Vec<&str> = output
        .split("available tools: ")
        .nth(1)
        .unwrap()
        .split(", ")
        .collect();
    assert_eq!(
        offered,
        ars_domain::context::BUILTIN_TOOLS.to_vec(),
        "{output}"
    );
    for name in ars_runtime::TASK_TOOLS {
        assert!(
            !offered.contains(&name),
            "{name} offered to a subagent: {output}"
        );
    }
    assert!(!output.contains("## Subagents"));

    // Called as a child, the same holds.
    let parent_thread = parent(
        &h,
        json!([{"tool_calls": [task("nester", "probe")]}, {"text": "{{last_tool_result}}"}]),
        &[],
        None,
    )
    .await;
    let output = h.finish(&parent_thread, "go").await.output.unwrap();
    assert!(
        output.contains("available tools: ") && !output.contains("subagent_start"),
        "{output}"
    );
}

#[tokio::test]
async fn general_purpose_runs_with_the_resolved_defaults() {
    let mut defaults = ContextDefaults::default();
    defaults.base.model = Some(scripted(
        json!([{"text": "gp got: {{input}} | {{system_prompt}}"}]),
    ));
    let h = harness_with(defaults).await;
    let thread = parent(&h, json!([{"tool_calls": [task("general-purpose", "summarise the notes")]}, {"text": "{{last_tool_result.output}}"}]), &[], None).await;
    let output = h.finish(&thread, "go").await.output.unwrap();
    assert!(
        output.starts_with("gp got: summarise the notes"),
        "{output}"
    );
    assert!(
        output.contains("You are a general-purpose subagent"),
        "SubAgentContext prompt: {output}"
    );
}

#[tokio::test]
async fn a_task_result_names_a_child_thread_of_the_documented_form() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "done: {{input}}"}])).await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [task("helper", "do x")]}, {"text": "ok"}]),
        &[],
        None,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    let result = &h.tool_results(&thread).await[0];
    assert_eq!(result["status"], "success");
    assert_eq!(result["output"], "done: do x");
    let child_id = result["thread_id"].as_str().unwrap();
    let suffix = child_id
        .strip_prefix(&format!("{}_sub_helper_", thread.id))
        .unwrap();
    assert!(
        suffix.len() == 8 && suffix.chars().all(|c| c.is_ascii_hexdigit()),
        "{child_id}"
    );
    let child = h
        .store
        .thread(&ars_domain::ThreadId::parse(child_id).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(child.parent_thread_id(), Some(&thread.id));
    assert_eq!(child.subagent_slug(), Some("helper"));
    assert_eq!(
        (child.runtime_scope_id.as_str(), child.workdir_path.as_str()),
        (
            thread.runtime_scope_id.as_str(),
            thread.workdir_path.as_str()
        )
    );
    let child_run = h
        .store
        .run(
            result["run_id"]
                .as_str()
                .and_then(ars_domain::RunId::parse)
                .unwrap(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(child_run.parent_run_id(), Some(run.id));
}

#[tokio::test]
async fn a_child_thread_can_be_continued_and_sees_its_earlier_turn() {
    let h = harness().await;
    sub(
        &h,
        "helper",
        json!([{"text": "turn {{user_turns}}: {{input}}"}]),
    )
    .await;
    let script = json!([
        {"tool_calls": [task("helper", "first")]},
        {"tool_calls": [{"name": "task", "arguments": {"description": "second", "subagent_slug": "helper", "thread_id": "{{last_tool_result.thread_id}}"}}]},
        {"text": "done"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "go").await;
    let results = h.tool_results(&thread).await;
    assert_eq!(results[0]["output"], "turn 1: first");
    assert_eq!(
        results[1]["output"], "turn 2: second",
        "the child saw its earlier turn"
    );
    assert_eq!(results[0]["thread_id"], results[1]["thread_id"]);
}

#[tokio::test]
async fn a_foreign_or_malformed_child_thread_id_is_refused() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "hi"}])).await;
    sub(&h, "other", json!([{"text": "hi"}])).await;
    // A child thread of another parent thread.
    let elsewhere = parent(
        &h,
        json!([{"tool_calls": [task("helper", "x")]}, {"text": "ok"}]),
        &[],
        None,
    )
    .await;
    h.finish(&elsewhere, "go").await;
    let foreign = h.tool_results(&elsewhere).await[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string();

    let call = |thread_id: &str, slug: &str| json!({"name": "task", "arguments": {"description": "x", "subagent_slug": slug, "thread_id": thread_id}});
    let script = json!([
        {"tool_calls": [call(&foreign, "helper"), call("../../etc", "helper"), call("no-such-thread", "helper"), task("other", "x")]},
        {"tool_calls": [call("{{tool_result.3.thread_id}}", "helper")]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "go").await;
    let messages: Vec<_> = h
        .store
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == MessageRole::Tool)
        .collect();
    for i in [0, 1, 2, 4] {
        assert!(
            messages[i].is_error,
            "call {i} should be refused: {}",
            messages[i].content
        );
        assert!(
            messages[i]
                .content
                .contains("is not a thread of subagent `helper`"),
            "{}",
            messages[i].content
        );
    }
    assert!(!messages[3].is_error);
}

#[tokio::test]
async fn parent_and_child_share_the_workdir_both_ways() {
    let h = harness().await;
    sub_with(
        &h,
        "helper",
        json!([
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "from-parent.txt"}}]},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "from-child.txt", "content": "written by the child"}}]},
            {"text": "child read: {{tool_result.0}}"}
        ]),
        &["read_file", "write_file"],
        Limits::default(),
    )
    .await;
    let script = json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "from-parent.txt", "content": "written by the parent"}}]},
        {"tool_calls": [task("helper", "read mine, write yours")]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "from-child.txt"}}]},
        {"text": "{{tool_result.1.output}} / parent read: {{last_tool_result}}"}
    ]);
    let thread = parent(&h, script, &["read_file", "write_file"], None).await;
    let output = h.finish(&thread, "go").await.output.unwrap();
    assert!(
        output.contains("child read:") && output.contains("written by the parent"),
        "{output}"
    );
    assert!(
        output.contains("parent read:") && output.contains("written by the child"),
        "{output}"
    );
}

#[tokio::test]
async fn a_failing_or_timed_out_child_is_reported_and_the_parent_continues() {
    let h = harness().await;
    sub(&h, "broken", json!([{"error": "boom"}])).await;
    sub_with(
        &h,
        "slow",
        json!([{"text": "late", "delay_ms": 5000}]),
        &[],
        Limits {
            timeout_s: Some(1),
            ..Limits::default()
        },
    )
    .await;
    let script =
        json!([{"tool_calls": [task("broken", "x"), task("slow", "y")]}, {"text": "carried on"}]);
    let thread = parent(&h, script, &[], None).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(
        (run.status, run.output.as_deref()),
        (RunStatus::Success, Some("carried on"))
    );
    let results = h.tool_results(&thread).await;
    assert_eq!(results[0]["status"], "error");
    assert!(results[0]["error"].as_str().unwrap().contains("boom"));
    assert_eq!(results[1]["status"], "timeout");
    // Both calls failed, as a reader of the conversation sees them.
    let calls = h.messages_in(&thread, MessageRole::Tool).await;
    assert!(calls.iter().all(|m| m.is_error), "{calls:?}");
}

#[tokio::test]
async fn a_subagent_that_cannot_run_says_why_in_the_call_its_run_and_its_last_event() {
    // No model anywhere: the built-in general-purpose subagent fails at once.
    let h = harness().await;
    let script = json!([
        {"tool_calls": [start_call("general-purpose", "summarise the notes")]},
        {"tool_calls": [task("general-purpose", "summarise the notes again")]},
        {"text": "carried on"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.output.as_deref(), Some("carried on"));
    let reason = "no model configured for `general-purpose`";
    let calls = h.messages_in(&thread, MessageRole::Tool).await;
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert!(call.is_error, "a failed call, not a started one: {call:?}");
        let result: Value = serde_json::from_str(&call.content).unwrap();
        assert_eq!(result["status"], "error", "{result}");
        assert!(
            result["error"].as_str().unwrap().starts_with(reason),
            "{result}"
        );
        assert_eq!(result["subagent_slug"], "general-purpose");
        let child = ars_domain::RunId::parse(result["run_id"].as_str().unwrap()).unwrap();
        let stored = h.store.run(child).await.unwrap().unwrap();
        assert_eq!(stored.status, RunStatus::Error);
        assert!(stored.error.as_deref().unwrap().starts_with(reason));
        let events: Vec<_> = futures::StreamExt::collect::<Vec<_>>(
            h.runtime.events().subscribe(child, 0).await.unwrap(),
        )
        .await;
        match &events.last().unwrap().as_ref().unwrap().kind {
            ars_events::EventKind::RunStatus { status, error, .. } => {
                assert_eq!(*status, RunStatus::Error);
                assert!(error.as_deref().unwrap().starts_with(reason), "{error:?}");
            }
            other => panic!("the last event is the end: {other:?}"),
        }
    }
}

#[tokio::test]
async fn cancelling_the_parent_cancels_its_synchronous_child() {
    let h = harness().await;
    sub(&h, "slow", json!([{"text": "late", "delay_ms": 10000}])).await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [task("slow", "wait")]}, {"text": "never"}]),
        &[],
        None,
    )
    .await;
    let run = h.start(&thread, "go").await;
    let child = loop {
        if let Some(child) = h.store.child_runs(run.id).await.unwrap().pop() {
            break child;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let started = Instant::now();
    assert_eq!(
        h.runtime.cancel(run.id).await.unwrap().status,
        RunStatus::Cancelled
    );
    let child = h
        .runtime
        .wait(child.id, Duration::from_secs(2))
        .await
        .unwrap()
        .into_run();
    assert_eq!(child.status, RunStatus::Cancelled, "{child:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn parents_holding_every_slot_do_not_starve_their_children() {
    let config = ars_runtime::RuntimeConfig {
        max_concurrent_runs: 1,
        ..Default::default()
    };
    let h = common::harness_config(config).await;
    sub(&h, "helper", json!([{"text": "child done"}])).await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [task("helper", "x")]}, {"text": "{{last_tool_result.output}}"}]),
        &[],
        None,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.output.as_deref(), Some("child done"));
}

#[tokio::test]
async fn two_tasks_in_one_turn_run_concurrently() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "done", "delay_ms": 400}])).await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [task("helper", "a"), task("helper", "b")]}, {"text": "ok"}]),
        &[],
        None,
    )
    .await;
    let started = Instant::now();
    h.finish(&thread, "go").await;
    assert!(
        started.elapsed() < Duration::from_millis(750),
        "two 400 ms children took {:?}",
        started.elapsed()
    );
    let results = h.tool_results(&thread).await;
    assert_ne!(results[0]["thread_id"], results[1]["thread_id"]);
}

/// The total a run's end tells its thread's followers: its own tokens and, for a parent, its
/// children's — read for a run that started some, known to be its own for one that started
/// none.
#[tokio::test]
async fn a_runs_told_total_adds_its_childrens_tokens_and_only_theirs() {
    use ars_events::ThreadEvent;
    use futures::StreamExt;

    /// The total the end of the run on `thread` told, and the run as it ended.
    async fn told_end(h: &common::Harness, thread: &ars_domain::Thread) -> (ars_domain::Run, u64) {
        let mut follow = h.runtime.events().follow_thread(&thread.id).await.unwrap();
        let run = h.finish(thread, "go").await;
        loop {
            let event = tokio::time::timeout(Duration::from_secs(5), follow.next())
                .await
                .expect("the end is told")
                .unwrap()
                .unwrap();
            if let ThreadEvent::Run {
                run: told,
                total_usage,
            } = event
                && told.id == run.id
                && told.status.is_terminal()
            {
                return (run, total_usage.total());
            }
        }
    }

    let h = harness().await;
    let delegating = common::delegation::counted_delegation(&h).await;
    let (run, total) = told_end(&h, &delegating).await;
    assert_eq!(run.usage.total(), 24, "the parent's own two answers");
    assert_eq!(total, 36, "its own and its child's");

    let alone = parent(
        &h,
        json!([{"text": "no help needed", "usage": common::delegation::answer_usage()}]),
        &[],
        Some(vec!["helper"]),
    )
    .await;
    let (run, total) = told_end(&h, &alone).await;
    assert_eq!(run.usage.total(), 12);
    assert_eq!(total, 12, "a run that started none has only its own");

    // Two children at once, both ended here before their parent: each counted once.
    let usage = common::delegation::answer_usage();
    let twice = parent(
        &h,
        json!([
            {"tool_calls": [task("helper", "one"), task("helper", "two")], "usage": usage},
            {"text": "both done", "usage": usage}
        ]),
        &[],
        Some(vec!["helper"]),
    )
    .await;
    let (run, total) = told_end(&h, &twice).await;
    assert_eq!(run.usage.total(), 24);
    assert_eq!(total, 48, "its own and both children's");

    // A child still running when its parent ends, having spent 12 already (its first answer):
    // what it spent so far is read, not taken as nothing.
    sub_with(
        &h,
        "slow",
        json!([
            {"tool_calls": [{"name": "ls", "arguments": {}}], "usage": usage},
            {"text": "late", "usage": usage, "delay_ms": 3000}
        ]),
        &["ls"],
        Limits::default(),
    )
    .await;
    let leaving = parent(
        &h,
        json!([
            {"tool_calls": [start_call("slow", "in the background")], "usage": usage},
            {"text": "started it", "usage": usage, "delay_ms": 300}
        ]),
        &["subagent_start"],
        Some(vec!["slow"]),
    )
    .await;
    let (run, total) = told_end(&h, &leaving).await;
    assert_eq!(run.usage.total(), 24);
    assert_eq!(total, 36, "its own and what the running child spent so far");
}
