//! SPEC §4 and §7: the async lifecycle tools (`subagent_start`, `subagent_status`,
//! `subagent_await`, `subagent_cancel`), completion notices of background children, and the
//! events and usage of child runs, with scripted models for parents and children.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use ars_domain::{
    AgentContext, Backend, Delivery, Limits, MessageRole, NewRun, RunLineage, RunStatus,
    ShareConfig,
};
use common::delegation::{parent, start_call, sub, sub_with, task};
use common::{Harness, harness, scripted};

fn run_call(tool: &str, run_id: &str) -> Value {
    json!({"name": tool, "arguments": {"run_id": run_id}})
}

#[tokio::test]
async fn start_then_status_shows_progress_then_await_returns_the_result() {
    let h = harness().await;
    sub_with(
        &h,
        "writer",
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "report.md", "content": "# Report"}}]},
            {"text": "report written", "delay_ms": 600}
        ]),
        &["write_file"],
        Limits::default(),
    )
    .await;
    let script = json!([
        {"tool_calls": [start_call("writer", "write the report")]},
        {"tool_calls": [{"name": "sleep", "arguments": {"ms": 300}}]},
        {"tool_calls": [run_call("subagent_status", "{{tool_result.0.run_id}}")]},
        {"tool_calls": [run_call("subagent_await", "{{tool_result.0.run_id}}")]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &["sleep"], None).await;
    let started = Instant::now();
    h.finish(&thread, "go").await;
    let results = h.tool_results(&thread).await;
    assert_eq!(results[0]["status"], "running");
    assert!(results[0]["run_id"].is_string() && results[0]["thread_id"].is_string());
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "await waited for the child"
    );
    let status = &results[2];
    assert_eq!(status["status"], "running", "{status}");
    assert_eq!(status["progress"], json!(["wrote report.md"]));
    assert!(status.get("output").is_none());
    let done = &results[3];
    assert_eq!(
        (done["status"].as_str(), done["output"].as_str()),
        (Some("success"), Some("report written"))
    );
    assert!(done.get("wait_timed_out").is_none());
    for result in &results {
        assert!(
            result.get("type").is_none() && result.get("events").is_none(),
            "no raw events in tool results"
        );
    }
}

#[tokio::test]
async fn await_times_out_with_a_snapshot_and_cancel_stops_the_child() {
    let h = harness().await;
    sub(&h, "slow", json!([{"text": "late", "delay_ms": 10000}])).await;
    let script = json!([
        {"tool_calls": [start_call("slow", "take your time")]},
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{tool_result.0.run_id}}", "timeout_s": 1}}]},
        {"tool_calls": [run_call("subagent_cancel", "{{tool_result.0.run_id}}")]},
        {"tool_calls": [run_call("subagent_status", "{{tool_result.0.run_id}}")]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "go").await;
    let results = h.tool_results(&thread).await;
    assert_eq!(results[1]["wait_timed_out"], true);
    assert_eq!(results[1]["status"], "running");
    assert_eq!(results[2]["status"], "cancelled");
    assert_eq!(results[3]["status"], "cancelled");
}

#[tokio::test]
async fn starting_on_a_busy_child_thread_answers_busy_and_a_finished_one_continues() {
    let h = harness().await;
    sub(
        &h,
        "helper",
        json!([{"text": "turn {{user_turns}}", "delay_ms": 300}]),
    )
    .await;
    let again = |thread: &str| json!({"name": "subagent_start", "arguments": {"description": "more", "subagent_slug": "helper", "thread_id": thread}});
    let script = json!([
        {"tool_calls": [start_call("helper", "first")]},
        {"tool_calls": [again("{{tool_result.0.thread_id}}")]},
        {"tool_calls": [run_call("subagent_await", "{{tool_result.0.run_id}}")]},
        {"tool_calls": [again("{{tool_result.0.thread_id}}")]},
        {"tool_calls": [run_call("subagent_await", "{{last_tool_result.run_id}}")]},
        {"tool_calls": [{"name": "subagent_list", "arguments": {}}]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "go").await;
    let r = h.tool_results(&thread).await;
    assert_eq!(r[1]["busy"], true);
    assert_eq!(r[1]["active_run_id"], r[0]["run_id"]);
    assert_eq!(r[1]["thread_id"], r[0]["thread_id"]);
    assert_eq!(r[2]["output"], "turn 1");
    assert_eq!(r[3]["thread_id"], r[0]["thread_id"]);
    assert_ne!(r[3]["run_id"], r[0]["run_id"]);
    assert_eq!(
        r[4]["output"], "turn 2",
        "a new run on the finished child thread continues it"
    );
    let listed = r[5]["runs"].as_array().unwrap();
    assert_eq!(listed.len(), 2);
    assert!(
        listed
            .iter()
            .all(|x| x["subagent_slug"] == "helper" && x["status"] == "success")
    );
}

#[tokio::test]
async fn lifecycle_tools_answer_not_found_for_runs_of_other_threads_or_users() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "secret result"}])).await;
    let first = parent(
        &h,
        json!([{"tool_calls": [start_call("helper", "x")]}, {"text": "ok"}]),
        &[],
        None,
    )
    .await;
    h.finish(&first, "go").await;
    let foreign_run = h.tool_results(&first).await[0]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The first thread's own parent run is not a child either.
    let own_parent_run = h.store.thread_runs(&first.id).await.unwrap()[0]
        .id
        .to_string();

    let probes = |tool: &str| json!([{"tool_calls": [run_call(tool, &foreign_run), run_call(tool, "not-a-run"), run_call(tool, &own_parent_run)]}, {"text": "ok"}]);
    for tool in ["subagent_status", "subagent_cancel", "subagent_await"] {
        let other = parent(&h, probes(tool), &[], None).await;
        h.finish(&other, "go").await;
        for m in h
            .store
            .messages(&other.id)
            .await
            .unwrap()
            .iter()
            .filter(|m| m.role == MessageRole::Tool)
        {
            assert!(
                m.is_error && m.content.contains("not found"),
                "{tool}: {}",
                m.content
            );
            assert!(!m.content.contains("secret result"));
        }
    }
    // Another user, even with a thread of the same agent, sees nothing.
    let bob = h.user("bob").await;
    let bobs = {
        let agent = h
            .agent_of(
                &bob,
                "bobs-parent",
                Backend::Default,
                AgentContext {
                    model: Some(scripted(probes("subagent_status"))),
                    ..AgentContext::default()
                },
                ShareConfig::default(),
            )
            .await;
        h.thread_of(&agent, &bob).await
    };
    let run = h.start_as(bob, &bobs, "go").await;
    h.wait(&run).await;
    for m in h
        .store
        .messages(&bobs.id)
        .await
        .unwrap()
        .iter()
        .filter(|m| m.role == MessageRole::Tool)
    {
        assert!(m.content.contains("not found"), "{}", m.content);
    }
    assert_eq!(
        h.store
            .run(ars_domain::RunId::parse(&foreign_run).unwrap())
            .await
            .unwrap()
            .unwrap()
            .status,
        RunStatus::Success
    );
}

#[tokio::test]
async fn a_background_child_finishing_after_the_parent_run_leaves_a_notice() {
    let h = harness().await;
    sub(
        &h,
        "slow",
        json!([{"text": "the long answer", "delay_ms": 700}]),
    )
    .await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [start_call("slow", "x")]}, {"text": "started it"}]),
        &[],
        None,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.output.as_deref(), Some("started it"));
    let child_id = h.tool_results(&thread).await[0]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let child = h
        .runtime
        .wait(
            ars_domain::RunId::parse(&child_id).unwrap(),
            Duration::from_secs(5),
        )
        .await
        .unwrap()
        .into_run();
    assert_eq!(
        child.status,
        RunStatus::Success,
        "the child outlived its parent's run"
    );
    let mut notice = None;
    for _ in 0..50 {
        notice = h
            .store
            .messages(&thread.id)
            .await
            .unwrap()
            .into_iter()
            .find(|m| m.role == MessageRole::System);
        if notice.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let notice = notice.expect("a completion notice on the parent thread");
    assert_eq!(
        notice.content,
        "Background subagent `slow` finished (task: “x”): the long answer"
    );
    let about = notice.notice.expect("the notice names the child");
    assert_eq!(
        (about.run_id.to_string(), about.status),
        (child_id.clone(), RunStatus::Success)
    );
    assert_eq!(about.thread_id, child.thread_id);
    assert_eq!(about.subagent_slug.as_deref(), Some("slow"));

    // The parent sees it on its next turn.
    let next = parent(&h, json!([{"text": "{{input}}"}]), &[], None).await;
    let _ = next;
}

/// The system messages (completion notices) of a thread: their text, and the child run and
/// status each names.
async fn notices(h: &Harness, thread: &ars_domain::Thread) -> Vec<(String, String, RunStatus)> {
    h.store
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == MessageRole::System)
        .map(|m| {
            let about = m.notice.expect("a notice names its child");
            (m.content, about.run_id.to_string(), about.status)
        })
        .collect()
}

#[tokio::test]
async fn a_background_child_cut_off_by_a_restart_leaves_a_notice_saying_interrupted() {
    let h = harness().await;
    sub(&h, "slow", json!([{"text": "never", "delay_ms": 30_000}])).await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [start_call("slow", "x")]}, {"text": "started it"}]),
        &[],
        None,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.output.as_deref(), Some("started it"));
    let child_id = h.tool_results(&thread).await[0]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        notices(&h, &thread).await.is_empty(),
        "the child still runs"
    );

    // The server stops while the child is running: its own ending path writes the notice
    // before the stop completes — no watcher task is left to do it.
    h.runtime.shutdown(Duration::from_secs(5)).await;
    let child = h
        .store
        .run(ars_domain::RunId::parse(&child_id).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(child.status, RunStatus::Interrupted);
    let notices = notices(&h, &thread).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    let (text, run_id, status) = &notices[0];
    assert_eq!((run_id, *status), (&child_id, RunStatus::Interrupted));
    assert!(
        text.starts_with("Background subagent `slow` was interrupted"),
        "{text}"
    );
}

#[tokio::test]
async fn a_background_child_cut_off_by_a_crash_gets_its_notice_at_recovery_and_a_waited_one_none() {
    let h = harness().await;
    sub(&h, "slow", json!([{"text": "x"}])).await;
    let slow = h
        .store
        .list_agents(ars_store::AgentFilter {
            visible_to: None,
            kinds: ars_store::AgentKinds::Subagents,
        })
        .await
        .unwrap()
        .into_iter()
        .find(|a| a.slug == "slow")
        .unwrap();
    let thread = parent(&h, json!([{"text": "done"}]), &[], None).await;
    let parent_run = h.finish(&thread, "go").await;

    // What a crashed process leaves behind: two active children of an ended parent run.
    let mut children = Vec::new();
    for delivery in [Delivery::Background, Delivery::Wait] {
        let child = thread.new_child(slow.id, "slow", "t".into());
        let child = h.store.create_thread(&child).await.unwrap();
        let run = h
            .store
            .create_run(&NewRun {
                thread_id: child.id.clone(),
                agent_id: slow.id,
                user_id: child.user_id,
                input: "x".into(),
                lineage: Some(RunLineage {
                    parent_run_id: parent_run.id,
                    parent_tool_call_id: Some("call_1".into()),
                    delivery: Some(delivery),
                }),
                lease: None,
                woken_by: None,
                new_thread: None,
                running: false,
            })
            .await
            .unwrap();
        children.push(run);
    }
    let recovered = h.runtime.recover().await.unwrap();
    assert_eq!(recovered.len(), 2);
    let notices = notices(&h, &thread).await;
    assert_eq!(notices.len(), 1, "only the background child: {notices:?}");
    let (text, run_id, status) = &notices[0];
    assert_eq!(
        (run_id, *status),
        (&children[0].id.to_string(), RunStatus::Interrupted)
    );
    assert!(text.contains("was interrupted"), "{text}");
}

#[tokio::test]
async fn child_events_carry_the_parent_ids_and_usage_rolls_up() {
    let h = harness().await;
    sub(
        &h,
        "helper",
        json!([{"text": "child answer with several words"}]),
    )
    .await;
    let thread = parent(
        &h,
        json!([{"tool_calls": [task("helper", "x"), task("helper", "y")]}, {"text": "ok"}]),
        &[],
        None,
    )
    .await;
    let run = h.finish(&thread, "go").await;
    let children = h.store.child_runs(run.id).await.unwrap();
    assert_eq!(children.len(), 2);
    let calls: Vec<String> = h.store.messages(&thread.id).await.unwrap()[1]
        .tool_calls
        .iter()
        .map(|c| c.id.clone())
        .collect();
    for child in &children {
        use futures::StreamExt;
        let events: Vec<_> = h
            .runtime
            .events()
            .subscribe(child.id, 0)
            .await
            .unwrap()
            .map(|e| e.unwrap())
            .collect()
            .await;
        assert!(!events.is_empty());
        for event in &events {
            let parent_ref = event
                .run
                .parent
                .as_ref()
                .expect("child events carry their parent");
            assert_eq!(parent_ref.parent_run_id, run.id);
            assert_eq!(parent_ref.parent_thread_id, thread.id);
            assert!(calls.contains(parent_ref.parent_tool_call_id.as_ref().unwrap()));
            assert_eq!(event.run.thread_id, child.thread_id);
        }
        assert!(child.usage.total() > 0);
    }
    assert_ne!(children[0].lineage, children[1].lineage);
    let total = h.runtime.total_usage(&run).await.unwrap();
    assert_eq!(
        total.total(),
        run.usage.total() + children[0].usage.total() + children[1].usage.total()
    );
}
