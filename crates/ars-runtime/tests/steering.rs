//! Messages into running runs: a message sent into an active run is stored on its thread as a
//! user message marked `steer` and the model reads it exactly once, before its next model call
//! — after the results of the calls it had open, also when the run waited and resumes on
//! another runtime; a run that has ended refuses it. `subagent_send` steers a running child and
//! continues an ended one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use serde_json::{Value, json};

use ars_domain::{
    AgentContext, Approval, ApprovalRules, Backend, DecisionInput, Message, MessageRole, Run,
    RunInput, RunStatus, Thread,
};
use ars_runtime::{Runtime, RuntimeConfig, RuntimeError, Waited};
use common::delegation::{parent, start_call, sub};
use common::{Harness, harness, scripted};

fn input(text: &str) -> RunInput {
    RunInput::new(text).unwrap()
}

async fn thread_with(h: &Harness, script: Value, tools: &[&str], ask: &[&str]) -> Thread {
    let slug = format!(
        "s{}",
        &ars_domain::RunId::new().to_string().replace('-', "")[20..]
    );
    let context = AgentContext {
        model: Some(scripted(script)),
        tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        approvals: Some(ApprovalRules(
            ask.iter()
                .map(|t| ((*t).to_owned(), Approval::Ask))
                .collect(),
        )),
        ..AgentContext::default()
    };
    let agent = h.agent(&slug, Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

/// Polls the thread until `found` holds of its messages (or fails the test).
async fn until_messages(h: &Harness, thread: &Thread, found: impl Fn(&[Message]) -> bool) {
    for _ in 0..400 {
        if found(&h.store.messages(&thread.id).await.unwrap()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the thread never got there");
}

async fn ended(runtime: &Runtime, run: &Run) -> Run {
    match runtime.wait(run.id, Duration::from_secs(20)).await.unwrap() {
        Waited::Finished(run) => run,
        other => panic!("the run did not end: {other:?}"),
    }
}

fn steers(messages: &[Message]) -> Vec<&Message> {
    messages.iter().filter(|m| m.steer).collect()
}

#[tokio::test]
async fn a_steer_message_sent_while_a_tool_runs_reaches_the_next_model_call_exactly_once() {
    let h = harness().await;
    let thread = thread_with(
        &h,
        json!([
            {"tool_calls": [{"name": "sleep", "arguments": {"ms": 500}}]},
            {"text": "{{input}} | {{user_turns}} | {{last_tool_result}}"}
        ]),
        &["sleep"],
        &[],
    )
    .await;
    let run = h.start(&thread, "first").await;
    // The turn calling `sleep` is committed before the call runs.
    until_messages(&h, &thread, |m| {
        m.iter().any(|m| m.role == MessageRole::Assistant)
    })
    .await;
    let sent = h
        .runtime
        .steer(run.id, input("use the other file"))
        .await
        .unwrap();
    assert!(sent.steer);
    assert_eq!(sent.role, MessageRole::User);
    assert_eq!(sent.run_id, Some(run.id));

    let run = ended(&h.runtime, &run).await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    // The model read the steer message as the last user turn, once: two user turns in all.
    assert_eq!(
        run.output.as_deref(),
        Some("use the other file | 2 | slept 500 ms")
    );
    let messages = h.store.messages(&thread.id).await.unwrap();
    assert_eq!(steers(&messages).len(), 1);
    // Stored where it was sent: between the turn and the result of the call it had open.
    let at = messages.iter().position(|m| m.steer).unwrap();
    assert_eq!(messages[at - 1].role, MessageRole::Assistant);
    assert_eq!(messages[at + 1].role, MessageRole::Tool);
}

#[tokio::test]
async fn a_steer_message_sent_while_the_model_answers_is_answered_before_the_run_ends() {
    let h = harness().await;
    let thread = thread_with(
        &h,
        json!([{"text": "{{input}} | {{user_turns}}", "delay_ms": 800}]),
        &[],
        &[],
    )
    .await;
    let run = h.start(&thread, "first").await;
    for _ in 0..200 {
        if h.store.run(run.id).await.unwrap().unwrap().status == RunStatus::Running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Inside the model call's delay.
    tokio::time::sleep(Duration::from_millis(200)).await;
    h.runtime.steer(run.id, input("second")).await.unwrap();
    let run = ended(&h.runtime, &run).await;
    assert_eq!(run.output.as_deref(), Some("second | 2"), "{run:?}");
    let answers: Vec<String> = h
        .store
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == MessageRole::Assistant)
        .map(|m| m.content)
        .collect();
    assert_eq!(answers, ["first | 1", "second | 2"]);
}

#[tokio::test]
async fn a_steer_message_for_a_run_that_has_ended_is_refused_and_not_stored() {
    let h = harness().await;
    let thread = thread_with(&h, json!([{"text": "done"}]), &[], &[]).await;
    let run = h.finish(&thread, "go").await;
    let before = h.store.messages(&thread.id).await.unwrap().len();
    let refused = h
        .runtime
        .steer(run.id, input("too late"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            RuntimeError::Ended {
                status: RunStatus::Success
            }
        ),
        "{refused}"
    );
    assert!(refused.to_string().contains("start a new run"), "{refused}");
    assert_eq!(h.store.messages(&thread.id).await.unwrap().len(), before);
    let unknown = h
        .runtime
        .steer(ars_domain::RunId::new(), input("x"))
        .await
        .unwrap_err();
    assert!(matches!(unknown, RuntimeError::NotFound(_)), "{unknown}");
}

fn approve(call_id: &str) -> Vec<DecisionInput> {
    vec![serde_json::from_value(json!({"call_id": call_id, "decision": "approve"})).unwrap()]
}

#[tokio::test]
async fn a_steer_message_sent_while_the_run_waits_is_read_once_after_the_decided_calls_on_another_runtime()
 {
    let h = harness().await;
    let thread = thread_with(
        &h,
        json!([
            {"tool_calls": [{"id": "w", "name": "write_file",
                             "arguments": {"path": "a.txt", "content": "A"}}]},
            {"text": "{{input}} | {{user_turns}}"}
        ]),
        &["write_file"],
        &["write_file"],
    )
    .await;
    let run = h.start(&thread, "write it").await;
    let waiting = h
        .runtime
        .wait_for_turn(run.id, Duration::from_secs(20))
        .await
        .unwrap()
        .into_run();
    assert_eq!(waiting.status, RunStatus::Waiting);
    let sent = h
        .runtime
        .steer(run.id, input("and then stop"))
        .await
        .unwrap();
    assert!(sent.steer);

    // Decided through another runtime: the call runs first, then the model reads the steer
    // message (the new last user turn replays the script: its write waits again).
    let other = h.other_runtime(RuntimeConfig::default(), Vec::new());
    other.decide(run.id, &approve("w")).await.unwrap();
    let again = other
        .wait_for_turn(run.id, Duration::from_secs(20))
        .await
        .unwrap()
        .into_run();
    assert_eq!(again.status, RunStatus::Waiting, "{again:?}");
    other.decide(run.id, &approve("w")).await.unwrap();
    let run = ended(&other, &run).await;
    assert_eq!(run.output.as_deref(), Some("and then stop | 2"), "{run:?}");

    // The model's view puts the decided call's result before the steer message.
    let messages = h.store.messages(&thread.id).await.unwrap();
    let model = ars_runtime::agent_loop::to_model_messages(&messages);
    let roles: Vec<ars_models::Role> = model.iter().map(|m| m.role()).collect();
    use ars_models::Role::{Assistant, Tool, User};
    assert_eq!(
        roles,
        [User, Assistant, Tool, User, Assistant, Tool, Assistant]
    );
    assert_eq!(steers(&messages).len(), 1);
}

#[tokio::test]
async fn subagent_send_steers_a_running_child_and_continues_an_ended_one() {
    let h = harness().await;
    sub(
        &h,
        "helper",
        json!([{"text": "{{input}} / {{user_turns}}", "delay_ms": 700}]),
    )
    .await;
    let send = |target: Value, message: &str| {
        let mut arguments = target;
        arguments["message"] = json!(message);
        json!({"name": "subagent_send", "arguments": arguments})
    };
    let script = json!([
        {"tool_calls": [start_call("helper", "first")]},
        {"tool_calls": [{"name": "sleep", "arguments": {"ms": 250}}]},
        {"tool_calls": [send(json!({"run_id": "{{tool_result.0.run_id}}"}), "more")]},
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{tool_result.0.run_id}}"}}]},
        {"tool_calls": [send(json!({"thread_id": "{{tool_result.0.thread_id}}"}), "again")]},
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{last_tool_result.run_id}}"}}]},
        {"tool_calls": [send(json!({"run_id": "not-a-run"}), "x")]},
        {"tool_calls": [send(json!({}), "x")]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &["sleep"], None).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let r = h.tool_results(&thread).await;
    assert_eq!(r[2]["sent"], "steer", "{}", r[2]);
    assert_eq!(r[2]["run_id"], r[0]["run_id"]);
    assert_eq!(r[3]["output"], "more / 2", "the running child read it once");
    assert_eq!(r[4]["sent"], "new_run", "{}", r[4]);
    assert_eq!(r[4]["thread_id"], r[0]["thread_id"]);
    assert_ne!(r[4]["run_id"], r[0]["run_id"]);
    assert_eq!(
        r[5]["output"], "again / 3",
        "the ended child's thread continued"
    );
    assert!(r[6].to_string().contains("not found"), "{}", r[6]);
    assert!(r[7].to_string().contains("run_id or thread_id"), "{}", r[7]);
}

#[tokio::test]
async fn subagent_send_finds_only_children_of_its_own_conversation() {
    let h = harness().await;
    sub(&h, "helper", json!([{"text": "hi"}])).await;
    // Another conversation's child.
    let elsewhere = parent(
        &h,
        json!([{"tool_calls": [start_call("helper", "x")]}, {"text": "ok"}]),
        &[],
        None,
    )
    .await;
    h.finish(&elsewhere, "go").await;
    let foreign = h.tool_results(&elsewhere).await[0].clone();
    let script = json!([
        {"tool_calls": [{"name": "subagent_send", "arguments": {"run_id": foreign["run_id"], "message": "hi"}}]},
        {"tool_calls": [{"name": "subagent_send", "arguments": {"thread_id": foreign["thread_id"], "message": "hi"}}]},
        {"text": "ok"}
    ]);
    let thread = parent(&h, script, &[], None).await;
    h.finish(&thread, "go").await;
    let r = h.tool_results(&thread).await;
    assert!(r[0].to_string().contains("not found"), "{}", r[0]);
    assert!(
        r[1].to_string().contains("not a subagent thread"),
        "{}",
        r[1]
    );
    // Nothing reached the other conversation's child.
    let child = ars_domain::ThreadId::parse(foreign["thread_id"].as_str().unwrap()).unwrap();
    assert!(steers(&h.store.messages(&child).await.unwrap()).is_empty());
    assert_eq!(h.store.thread_runs(&child).await.unwrap().len(), 1);
}
