//! Background results wake the parent (issue 24 §3): a background child that ends after its
//! parent's run starts a new run on the parent thread whose input is the completion notice; a
//! parent thread with an active run reads the notice as a message into that run; `note` leaves
//! a note only; past `max_wakes_per_hour` a note is left instead of a run; and the end is told
//! exactly once, also when its teller stopped between the end and the telling.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use ars_domain::{
    AgentContext, Backend, Delivery, Message, MessageRole, NewRun, Run, RunLineage, RunOutcome,
    RunStatus, SubagentResults, Thread, Usage,
};
use ars_runtime::{RuntimeConfig, SubagentMiddlewareFactory, SubagentSettings};
use common::delegation::{start_call, sub};
use common::{Harness, harness_parts, scripted};

/// A runtime whose heartbeat (and so the sweep for untold results) beats every 100 ms.
fn config() -> RuntimeConfig {
    RuntimeConfig {
        lease_ttl: Duration::from_millis(300),
        ..RuntimeConfig::default()
    }
}

async fn harness_waking(max_wakes_per_hour: u32) -> Harness {
    harness_parts(config(), move |_, _| {
        vec![Arc::new(SubagentMiddlewareFactory::with_settings(
            SubagentSettings { max_wakes_per_hour },
        ))]
    })
    .await
}

/// A parent whose first run starts background children and says it will report; a run whose
/// input is a completion notice reports it.
fn reporter(starts: &[Value]) -> Value {
    json!({
        "turns": [
            {"tool_calls": starts},
            {"text": "I will tell you when it is done"}
        ],
        "when": [{"input_contains": "[notice]", "turns": [{"text": "Reported: {{input}}"}]}]
    })
}

async fn parent_thread(h: &Harness, script: Value, mode: SubagentResults) -> Thread {
    let slug = format!(
        "p{}",
        &ars_domain::RunId::new().to_string().replace('-', "")[20..]
    );
    let context = AgentContext {
        model: Some(scripted(script)),
        tools: Some(vec!["sleep".into()]),
        subagent_results: Some(mode),
        ..AgentContext::default()
    };
    let agent = h.agent(&slug, Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

/// Polls until the thread's runs satisfy `done` (or fails the test).
async fn until_runs(h: &Harness, thread: &Thread, done: impl Fn(&[Run]) -> bool) -> Vec<Run> {
    for _ in 0..500 {
        let runs = h.store.thread_runs(&thread.id).await.unwrap();
        if done(&runs) {
            return runs;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "the thread never got there: {:?}",
        h.store.thread_runs(&thread.id).await.unwrap()
    );
}

fn all_ended(n: usize) -> impl Fn(&[Run]) -> bool {
    move |runs| runs.len() == n && runs.iter().all(|r| r.status.is_terminal())
}

async fn notices(h: &Harness, thread: &Thread) -> Vec<Message> {
    h.store
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.notice.is_some())
        .collect()
}

#[tokio::test]
async fn a_background_child_wakes_its_ended_parent_once_with_the_notice_as_input() {
    let h = harness_waking(30).await;
    sub(
        &h,
        "helper",
        json!([{"text": "the answer is 42", "delay_ms": 300}]),
    )
    .await;
    let thread = parent_thread(
        &h,
        reporter(&[start_call("helper", "find the answer")]),
        SubagentResults::Wake,
    )
    .await;
    let first = h.finish(&thread, "go").await;
    assert_eq!(
        first.output.as_deref(),
        Some("I will tell you when it is done")
    );

    let runs = until_runs(&h, &thread, all_ended(2)).await;
    let woken = &runs[1];
    assert_eq!(woken.status, RunStatus::Success, "{woken:?}");
    let output = woken.output.as_deref().unwrap();
    assert!(
        output.starts_with(
            "Reported: [notice] Background subagent `helper` finished (task: “find the answer”): \
             the answer is 42"
        ),
        "{output}"
    );
    // The notice that woke it is the run's input message, naming the child.
    let told = notices(&h, &thread).await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].role, MessageRole::System);
    assert_eq!(told[0].run_id, Some(woken.id));
    let child = h.store.subagent_runs(&thread.id).await.unwrap();
    assert_eq!(told[0].notice.as_ref().unwrap().run_id, child[0].id);

    // Sweeps keep beating: nothing is told twice.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.store.thread_runs(&thread.id).await.unwrap().len(), 2);
    assert_eq!(notices(&h, &thread).await.len(), 1);
}

#[tokio::test]
async fn a_background_childs_end_reaches_a_running_parent_as_a_message_into_its_run() {
    let h = harness_waking(30).await;
    sub(&h, "helper", json!([{"text": "42", "delay_ms": 100}])).await;
    let script = json!({
        "turns": [
            {"tool_calls": [start_call("helper", "find it")]},
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 2500}}]},
            {"text": "never noticed"}
        ],
        "when": [{"input_contains": "[notice]", "turns": [{"text": "noticed: {{input}}"}]}]
    });
    let thread = parent_thread(&h, script, SubagentResults::Wake).await;
    let run = h.finish(&thread, "go").await;
    let output = run.output.as_deref().unwrap();
    assert!(
        output.starts_with("noticed: [notice] Background subagent `helper` finished"),
        "{output}"
    );
    // No new run: the running one read it, as a message sent into it.
    assert_eq!(h.store.thread_runs(&thread.id).await.unwrap().len(), 1);
    let told = notices(&h, &thread).await;
    assert_eq!(told.len(), 1);
    assert!(told[0].steer);
    assert_eq!(told[0].run_id, Some(run.id));
}

#[tokio::test]
async fn note_mode_leaves_a_note_for_the_next_run_and_starts_nothing() {
    let h = harness_waking(30).await;
    sub(&h, "helper", json!([{"text": "42", "delay_ms": 200}])).await;
    let thread = parent_thread(
        &h,
        reporter(&[start_call("helper", "find it")]),
        SubagentResults::Note,
    )
    .await;
    h.finish(&thread, "go").await;
    for _ in 0..200 {
        if !notices(&h, &thread).await.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let told = notices(&h, &thread).await;
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0].run_id, None, "a note, not a run's message");
    assert!(!told[0].steer);
    assert_eq!(h.store.thread_runs(&thread.id).await.unwrap().len(), 1);
}

#[tokio::test]
async fn past_max_wakes_per_hour_a_background_result_leaves_a_note_instead_of_a_run() {
    let h = harness_waking(1).await;
    sub(&h, "quick", json!([{"text": "first", "delay_ms": 200}])).await;
    sub(&h, "slow", json!([{"text": "second", "delay_ms": 1200}])).await;
    let thread = parent_thread(
        &h,
        reporter(&[start_call("quick", "a"), start_call("slow", "b")]),
        SubagentResults::Wake,
    )
    .await;
    h.finish(&thread, "go").await;
    until_runs(&h, &thread, all_ended(2)).await;
    for _ in 0..200 {
        if notices(&h, &thread).await.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let told = notices(&h, &thread).await;
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told[0].run_id.is_some(), "the first result woke the thread");
    assert_eq!(told[1].run_id, None, "the second, past the cap, is a note");
    assert!(told[1].content.contains("`slow`"), "{}", told[1].content);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.store.thread_runs(&thread.id).await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_end_left_untold_by_a_stopped_teller_wakes_the_parent_once_from_any_instances_sweep() {
    let h = harness_waking(30).await;
    let helper = h
        .agent(
            "helper",
            Backend::SubAgent,
            AgentContext {
                model: Some(scripted(json!([{"text": "x"}]))),
                ..AgentContext::default()
            },
        )
        .await;
    let thread = parent_thread(&h, reporter(&[]), SubagentResults::Wake).await;
    let parent = h.finish(&thread, "go").await;
    // A background child whose end was written by an instance that stopped right after: the
    // end is in the store, told to nobody.
    let child_thread = h
        .store
        .create_thread(&thread.new_child(helper.id, "helper", "job".into()))
        .await
        .unwrap();
    let child = h
        .store
        .create_run(&NewRun {
            thread_id: child_thread.id.clone(),
            agent_id: helper.id,
            user_id: thread.user_id,
            input: "the job".into(),
            lineage: Some(RunLineage {
                parent_run_id: parent.id,
                parent_tool_call_id: Some("call_x".into()),
                delivery: Some(Delivery::Background),
            }),
            lease: None,
            woken_by: None,
            new_thread: None,
            running: false,
        })
        .await
        .unwrap();
    let outcome = RunOutcome::Success {
        output: "done while nobody listened".into(),
        usage: Usage::default(),
    };
    h.store.finish_run(child.id, &outcome).await.unwrap();

    // Two instances sweep at once; one of them tells it.
    let other = h.other_runtime(config(), vec![Arc::new(SubagentMiddlewareFactory::new())]);
    let runs = until_runs(&h, &thread, all_ended(2)).await;
    let output = runs[1].output.as_deref().unwrap();
    assert!(
        output.contains("finished (task: “the job”): done while nobody listened"),
        "{output}"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.store.thread_runs(&thread.id).await.unwrap().len(), 2);
    assert_eq!(notices(&h, &thread).await.len(), 1);
    drop(other);
}

#[tokio::test]
async fn a_result_the_parent_collected_with_subagent_await_neither_wakes_nor_reaches_it_again() {
    let h = harness_waking(30).await;
    sub(&h, "helper", json!([{"text": "42", "delay_ms": 200}])).await;
    let script = json!([
        {"tool_calls": [start_call("helper", "find it")]},
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{last_tool_result.run_id}}"}}]},
        {"text": "got {{last_tool_result.output}}"}
    ]);
    let thread = parent_thread(&h, script, SubagentResults::Wake).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.output.as_deref(), Some("got 42"));
    // Sweeps beat every 100 ms: the collected result stays told.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(h.store.thread_runs(&thread.id).await.unwrap().len(), 1);
    assert!(notices(&h, &thread).await.is_empty());
}
