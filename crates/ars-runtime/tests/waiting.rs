//! Runs that wait for people: a turn calling an `ask` tool, or asking the user a question,
//! stops before any of its calls runs; decisions resume it — approved and edited calls run,
//! rejected ones tell the model why, answers become the result — on whichever runtime gets
//! them; nobody deciding in time rejects them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use serde_json::{Value, json};

use ars_domain::{
    AgentContext, Approval, ApprovalRules, Backend, DecisionInput, Limits, PendingRequest, Run,
    RunStatus, Thread,
};
use ars_runtime::{
    MiddlewareFactory, RunObserver, RunSetup, Runs, RuntimeConfig, RuntimeError, Waited,
    thread_scope,
};
use common::{Harness, harness, harness_config, harness_parts, scripted};

/// A plug-in slow to hear that a run waits: the waiting run's first task is still ending when
/// the decision resumes it.
struct SlowToHearWaiting;

struct SlowObserver;

#[async_trait::async_trait]
impl RunObserver for SlowObserver {
    async fn changed(&self, run: &Run) {
        if run.status == RunStatus::Waiting {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    }
}

#[async_trait::async_trait]
impl MiddlewareFactory for SlowToHearWaiting {
    async fn build(
        &self,
        _setup: &RunSetup<'_>,
    ) -> Option<std::sync::Arc<dyn ars_runtime::Middleware>> {
        None
    }

    fn observe(
        &self,
        _run: &Run,
        _thread: &Thread,
        _runs: &dyn Runs,
    ) -> Option<std::sync::Arc<dyn RunObserver>> {
        Some(std::sync::Arc::new(SlowObserver))
    }
}

fn asks(tools: &[&str]) -> ApprovalRules {
    ApprovalRules(
        tools
            .iter()
            .map(|t| ((*t).to_owned(), Approval::Ask))
            .collect(),
    )
}

/// A thread of an agent playing `script` with `tools`, whose rules ask for `ask`.
async fn thread_asking(
    h: &Harness,
    script: Value,
    tools: &[&str],
    ask: &[&str],
    limits: Limits,
) -> Thread {
    let slug = format!(
        "w{}",
        &ars_domain::RunId::new().to_string().replace('-', "")[20..]
    );
    let context = AgentContext {
        model: Some(scripted(script)),
        tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        approvals: Some(asks(ask)),
        limits: Some(limits),
        ..AgentContext::default()
    };
    let agent = h.agent(&slug, Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

/// Waits until the run waits for a decision (or fails the test).
async fn until_waiting(h: &Harness, run: &Run) -> Run {
    let waited = h
        .runtime
        .wait_for_turn(run.id, Duration::from_secs(20))
        .await
        .unwrap();
    let run = waited.into_run();
    assert_eq!(run.status, RunStatus::Waiting, "{run:?}");
    run
}

async fn finished(h: &Harness, run_id: ars_domain::RunId) -> Run {
    match h
        .runtime
        .wait(run_id, Duration::from_secs(20))
        .await
        .unwrap()
    {
        Waited::Finished(run) => run,
        Waited::StillRunning(run) => panic!("the run did not end: {run:?}"),
    }
}

fn decision(value: Value) -> DecisionInput {
    serde_json::from_value(value).unwrap()
}

async fn file(h: &Harness, thread: &Thread, path: &str) -> Option<String> {
    let scope = thread_scope(thread).unwrap();
    h.sandbox
        .read_bytes(&scope, path, 1 << 20)
        .await
        .ok()
        .map(|b| String::from_utf8(b).unwrap())
}

fn write(id: &str, path: &str, content: &str) -> Value {
    json!({"id": id, "name": "write_file", "arguments": {"path": path, "content": content}})
}

#[tokio::test]
async fn a_turn_with_an_ask_call_waits_before_any_call_and_approve_reject_edit_settle_each() {
    let h = harness().await;
    let thread = thread_asking(
        &h,
        json!([
            {"tool_calls": [
                write("c1", "a.txt", "A"),
                write("c2", "b.txt", "B"),
                write("c3", "c.txt", "C"),
                {"id": "c4", "name": "ls", "arguments": {}}
            ]},
            {"text": "done"}
        ]),
        &["write_file", "ls"],
        &["write_file"],
        Limits::default(),
    )
    .await;
    let run = h.start(&thread, "write three files").await;
    let waiting = until_waiting(&h, &run).await;

    // Every `ask` call of the turn is pending, in call order; the allowed `ls` is not.
    let ids: Vec<&str> = waiting.pending.iter().map(|p| p.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    let first = &waiting.pending[0];
    assert_eq!(first.run_id, run.id);
    assert_eq!(first.thread_id, thread.id);
    assert!(first.agent_slug.starts_with('w'));
    assert_eq!(
        first.request,
        PendingRequest::Approval {
            tool: "write_file".into(),
            arguments: json!({"path": "a.txt", "content": "A"})
        }
    );
    // None of the turn's calls ran, not even the allowed one.
    assert!(h.tool_results(&thread).await.is_empty());
    assert_eq!(file(&h, &thread, "a.txt").await, None);
    // The run holds no task here.
    assert!(!h.runtime.is_local(run.id));

    let resumed = h
        .runtime
        .decide(
            run.id,
            &[
                decision(json!({"call_id": "c1", "decision": "approve"})),
                decision(json!({"call_id": "c2", "decision": "reject", "message": "not b"})),
                decision(json!({"call_id": "c3", "decision": "edit",
                                "arguments": {"path": "c.txt", "content": "EDITED"}})),
            ],
        )
        .await
        .unwrap();
    assert_eq!(resumed.status, RunStatus::Pending);
    let ended = finished(&h, run.id).await;
    assert_eq!(ended.status, RunStatus::Success, "{ended:?}");
    assert_eq!(ended.output.as_deref(), Some("done"));

    assert_eq!(file(&h, &thread, "a.txt").await.as_deref(), Some("A"));
    assert_eq!(file(&h, &thread, "b.txt").await, None, "rejected: not run");
    assert_eq!(file(&h, &thread, "c.txt").await.as_deref(), Some("EDITED"));
    // Results in call order: the refusal says why, the edit says what ran, `ls` ran too.
    let results = h.tool_results(&thread).await;
    assert_eq!(results.len(), 4, "{results:?}");
    let text = |i: usize| results[i].to_string();
    assert!(
        text(1).contains("refused") && text(1).contains("not b"),
        "{}",
        text(1)
    );
    assert!(
        text(2).contains("edited") && text(2).contains("EDITED"),
        "{}",
        text(2)
    );
    // `ls` ran beside the writes (calls of a turn run concurrently), so what it saw varies;
    // that it ran does not.
    assert!(
        !text(3).contains("refused") && !text(3).contains("did not run"),
        "{}",
        text(3)
    );
}

#[tokio::test]
async fn decisions_must_cover_the_pending_calls_fit_the_schema_and_find_a_waiting_run() {
    let h = harness().await;
    let thread = thread_asking(
        &h,
        json!([
            {"tool_calls": [write("c1", "a.txt", "A"), write("c2", "b.txt", "B")]},
            {"text": "done"}
        ]),
        &["write_file"],
        &["write_file"],
        Limits::default(),
    )
    .await;
    let run = h.start(&thread, "go").await;
    until_waiting(&h, &run).await;
    let invalid_field = |e: RuntimeError| match e {
        RuntimeError::Invalid(ars_domain::ValidationError::Invalid(f)) => f.field,
        other => panic!("not invalid: {other}"),
    };
    // One call only: refused, nothing resumed.
    let partial = h
        .runtime
        .decide(
            run.id,
            &[decision(json!({"call_id": "c1", "decision": "approve"}))],
        )
        .await
        .unwrap_err();
    assert_eq!(invalid_field(partial), "decisions");
    // Edited arguments against the tool's schema (`content` is required).
    let misfit = h
        .runtime
        .decide(
            run.id,
            &[
                decision(json!({"call_id": "c1", "decision": "approve"})),
                decision(json!({"call_id": "c2", "decision": "edit", "arguments": {"path": "x"}})),
            ],
        )
        .await
        .unwrap_err();
    assert_eq!(invalid_field(misfit), "decisions[1].arguments");
    assert_eq!(
        h.store.run(run.id).await.unwrap().unwrap().status,
        RunStatus::Waiting,
        "a refused decision loses nothing"
    );
    // Both at once: resumed; a second decision finds nothing waiting.
    let both = [
        decision(json!({"call_id": "c1", "decision": "reject"})),
        decision(json!({"call_id": "c2", "decision": "reject"})),
    ];
    h.runtime.decide(run.id, &both).await.unwrap();
    let ended = finished(&h, run.id).await;
    assert_eq!(ended.status, RunStatus::Success);
    assert!(matches!(
        h.runtime.decide(run.id, &both).await,
        Err(RuntimeError::NotWaiting {
            status: RunStatus::Success
        })
    ));
}

#[tokio::test]
async fn ask_user_waits_for_an_answer_that_becomes_the_result() {
    let h = harness().await;
    let thread = thread_asking(
        &h,
        json!([
            {"tool_calls": [{"id": "q1", "name": "ask_user",
                             "arguments": {"question": "Which colour?", "options": ["red", "blue"]}}]},
            {"text": "You chose {{last_tool_result}}"}
        ]),
        &["ask_user"],
        &[],
        Limits::default(),
    )
    .await;
    let run = h.start(&thread, "paint it").await;
    let waiting = until_waiting(&h, &run).await;
    assert_eq!(
        waiting.pending[0].request,
        PendingRequest::Question {
            question: "Which colour?".into(),
            options: vec!["red".into(), "blue".into()]
        }
    );
    h.runtime
        .decide(
            run.id,
            &[decision(json!({"call_id": "q1", "answer": "green"}))],
        )
        .await
        .unwrap();
    let ended = finished(&h, run.id).await;
    assert_eq!(ended.output.as_deref(), Some("You chose green"));
}

#[tokio::test]
async fn nobody_deciding_within_the_approval_timeout_rejects_the_pending_calls() {
    let h = harness_config(RuntimeConfig {
        // The heartbeat sweeps for deadlines every third of the lease.
        lease_ttl: Duration::from_millis(300),
        ..RuntimeConfig::default()
    })
    .await;
    let thread = thread_asking(
        &h,
        json!([
            {"tool_calls": [write("c1", "a.txt", "A")]},
            {"text": "after: {{last_tool_result}}"}
        ]),
        &["write_file"],
        &["write_file"],
        Limits {
            approval_timeout_s: Some(1),
            ..Limits::default()
        },
    )
    .await;
    let run = h.start(&thread, "go").await;
    until_waiting(&h, &run).await;
    let ended = finished(&h, run.id).await;
    assert_eq!(ended.status, RunStatus::Success, "{ended:?}");
    let output = ended.output.unwrap();
    assert!(output.contains("within 1 s"), "{output}");
    assert_eq!(file(&h, &thread, "a.txt").await, None);
}

#[tokio::test]
async fn a_waiting_run_is_cancelled_in_the_store_and_holds_its_thread_until_then() {
    let h = harness().await;
    let thread = thread_asking(
        &h,
        json!([{"tool_calls": [write("c1", "a.txt", "A")]}, {"text": "done"}]),
        &["write_file"],
        &["write_file"],
        Limits::default(),
    )
    .await;
    let run = h.start(&thread, "go").await;
    until_waiting(&h, &run).await;
    let busy = h
        .runtime
        .start_run(ars_runtime::StartRun {
            thread: thread.clone(),
            caller: h.caller,
            input: ars_domain::RunInput::new("again").unwrap(),
            parent: None,
            replace_from: None,
            woken_by: None,
        })
        .await;
    assert!(matches!(busy, Err(RuntimeError::Busy { active }) if active == run.id));
    let cancelled = h.runtime.cancel(run.id).await.unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert!(cancelled.pending.is_empty());
    // The thread takes a new run (whose script asks again).
    let again = h.start(&thread, "again").await;
    assert_ne!(again.id, run.id);
    until_waiting(&h, &again).await;
}

#[tokio::test]
async fn a_run_resumed_the_moment_it_waits_stays_known_to_this_runtime_as_executing() {
    let h = harness_parts(RuntimeConfig::default(), |_, _| {
        vec![std::sync::Arc::new(SlowToHearWaiting)]
    })
    .await;
    let thread = thread_asking(
        &h,
        json!([
            {"tool_calls": [write("c1", "a.txt", "A")]},
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 5000}}]},
            {"text": "done"}
        ]),
        &["write_file", "sleep"],
        &["write_file"],
        Limits::default(),
    )
    .await;
    let run = h.start(&thread, "go").await;
    let approve = [decision(json!({"call_id": "c1", "decision": "approve"}))];
    // Decided as soon as the store says it waits, while its first task is still ending.
    loop {
        match h.runtime.decide(run.id, &approve).await {
            Ok(_) => break,
            Err(RuntimeError::NotWaiting { .. }) => tokio::task::yield_now().await,
            Err(e) => panic!("{e}"),
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The first task's end did not take the resumed execution's place with it: the run is
    // executing here, and a cancel reaches it at once.
    assert!(h.runtime.is_local(run.id));
    let cancelled = h.runtime.cancel(run.id).await.unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
}

#[tokio::test]
async fn an_ask_user_call_that_is_not_a_question_does_not_wait_and_says_why() {
    let h = harness().await;
    let thread = thread_asking(
        &h,
        json!([
            {"tool_calls": [{"id": "q1", "name": "ask_user", "arguments": {"options": ["a"]}}]},
            {"text": "{{last_tool_result}}"}
        ]),
        &["ask_user"],
        &[],
        Limits::default(),
    )
    .await;
    let ended = h.finish(&thread, "go").await;
    assert_eq!(ended.status, RunStatus::Success);
    let output = ended.output.unwrap();
    assert!(output.contains("invalid arguments"), "{output}");
}

#[tokio::test]
async fn a_background_childs_status_says_waiting_with_its_pending_calls() {
    let h = harness().await;
    let child = AgentContext {
        model: Some(scripted(
            json!([{"tool_calls": [write("c1", "a.txt", "A")]}, {"text": "child done"}]),
        )),
        tools: Some(vec!["write_file".into()]),
        approvals: Some(asks(&["write_file"])),
        ..AgentContext::default()
    };
    h.agent("bg", Backend::SubAgent, child).await;
    let parent = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"name": "subagent_start",
                             "arguments": {"description": "write", "subagent_slug": "bg"}}]},
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 500}}]},
            {"tool_calls": [{"name": "subagent_status",
                             "arguments": {"run_id": "{{tool_result.0.run_id}}"}}]},
            {"text": "parent done"}
        ]))),
        tools: Some(vec!["sleep".into()]),
        ..AgentContext::default()
    };
    let agent = h.agent("lead", Backend::Default, parent).await;
    let thread = h.thread_of(&agent, &h.caller.clone()).await;
    assert_eq!(h.finish(&thread, "go").await.status, RunStatus::Success);
    let status = &h.tool_results(&thread).await[2];
    assert_eq!(status["status"], "waiting", "{status}");
    assert_eq!(status["pending"][0]["call_id"], "c1", "{status}");
    assert_eq!(status["pending"][0]["tool"], "write_file", "{status}");
    // The child still waits, after its parent ended.
    let child_run: ars_domain::RunId = serde_json::from_value(status["run_id"].clone()).unwrap();
    assert_eq!(
        h.store.run(child_run).await.unwrap().unwrap().status,
        RunStatus::Waiting
    );
}
