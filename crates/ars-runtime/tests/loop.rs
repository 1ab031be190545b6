//! The agent loop through the real runtime: SQLite store, in-process events, scripted models,
//! the local sandbox.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use serde_json::json;

use ars_domain::{Limits, MessageRole, RunStatus};
use ars_runtime::{StartRun, Waited};
use common::harness;

#[tokio::test]
async fn multi_step_tool_use_writes_reads_and_answers() {
    let h = harness().await;
    let script = json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "alpha beta"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.md"}}]},
        {"text": "The file says: {{last_tool_result}}"}
    ]);
    let thread = h
        .thread(script, &["write_file", "read_file"], Limits::default())
        .await;
    let run = h.finish(&thread, "write and read").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    assert!(run.output.as_deref().unwrap().contains("alpha beta"));
    assert!(run.usage.total() > 0);

    let messages = h.store.messages(&thread.id).await.unwrap();
    let roles: Vec<MessageRole> = messages.iter().map(|m| m.role).collect();
    use MessageRole::{Assistant as A, Tool as T, User as U};
    assert_eq!(roles, vec![U, A, T, A, T, A]);
    assert_eq!(messages[1].tool_calls[0].name, "write_file");
    assert_eq!(messages[2].tool_name.as_deref(), Some("write_file"));
    assert!(messages.iter().all(|m| m.run_id == Some(run.id)));
    assert!(messages.windows(2).all(|w| w[0].seq < w[1].seq));
}

#[tokio::test]
async fn tool_calls_of_one_turn_run_concurrently_and_answer_in_call_order() {
    let h = harness().await;
    let script = json!([
        {"tool_calls": [{"name": "sleep", "arguments": {"ms": 300}}, {"name": "sleep", "arguments": {"ms": 310}}]},
        {"text": "done"}
    ]);
    let thread = h.thread(script, &["sleep"], Limits::default()).await;
    let started = Instant::now();
    let run = h.finish(&thread, "sleep twice").await;
    let elapsed = started.elapsed();
    assert_eq!(run.status, RunStatus::Success);
    assert!(
        elapsed < Duration::from_millis(550),
        "two 300 ms tools took {elapsed:?}"
    );
    let tools: Vec<_> = h
        .store
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.role == MessageRole::Tool)
        .map(|m| m.content)
        .collect();
    assert_eq!(tools, vec!["slept 300 ms", "slept 310 ms"]);
}

#[tokio::test]
async fn the_step_limit_ends_a_run_that_never_answers() {
    let h = harness().await;
    let script = json!([{"tool_calls": [{"name": "sleep", "arguments": {"ms": 1}}]}]);
    let limits = Limits {
        max_steps: Some(3),
        ..Limits::default()
    };
    let thread = h.thread(script, &["sleep"], limits).await;
    let run = h.finish(&thread, "loop").await;
    assert_eq!(run.status, RunStatus::Error);
    assert!(
        run.error.as_deref().unwrap().contains("step limit"),
        "{run:?}"
    );
    let assistants = h
        .store
        .messages(&thread.id)
        .await
        .unwrap()
        .iter()
        .filter(|m| m.role == MessageRole::Assistant)
        .count();
    assert_eq!(assistants, 3);
}

#[tokio::test]
async fn the_wall_clock_limit_times_a_run_out() {
    let h = harness().await;
    let script =
        json!([{"tool_calls": [{"name": "sleep", "arguments": {"ms": 5000}}]}, {"text": "late"}]);
    let limits = Limits {
        timeout_s: Some(1),
        ..Limits::default()
    };
    let thread = h.thread(script, &["sleep"], limits).await;
    let started = Instant::now();
    let run = h.finish(&thread, "slow").await;
    assert_eq!(run.status, RunStatus::Timeout, "{run:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn cancellation_stops_a_run_mid_model_stream_within_a_second() {
    let h = harness().await;
    let text = (0..200)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = json!([{"text": text, "chunk_delay_ms": 50}]);
    let thread = h.thread(script, &[], Limits::default()).await;
    let run = h.start(&thread, "talk").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let cancelled = h.runtime.cancel(run.id).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "cancel took {:?}",
        started.elapsed()
    );
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    // The half-streamed message is not committed; the user's input is.
    let messages = h.store.messages(&thread.id).await.unwrap();
    assert_eq!(messages.len(), 1);
    // The thread accepts a new run afterwards.
    let script_done = h.start(&thread, "again").await;
    h.runtime.cancel(script_done.id).await.unwrap();
}

#[tokio::test]
async fn cancellation_stops_a_run_mid_tool_within_a_second() {
    let h = harness().await;
    let script = json!([{"tool_calls": [{"name": "execute", "arguments": {"command": "sleep 30"}}]}, {"text": "never"}]);
    let thread = h.thread(script, &["execute"], Limits::default()).await;
    let run = h.start(&thread, "run a long command").await;
    // Wait for the assistant's tool call to be committed: the tool is now running.
    for _ in 0..100 {
        if h.store.messages(&thread.id).await.unwrap().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let cancelled = h.runtime.cancel(run.id).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "cancel took {:?}",
        started.elapsed()
    );
    assert_eq!(cancelled.status, RunStatus::Cancelled);
}

#[tokio::test]
async fn invalid_tool_arguments_are_reported_to_the_model_which_can_retry() {
    let h = harness().await;
    let script = json!([
        {"tool_calls": [{"name": "sleep", "arguments": "{\"ms\": "}]},
        {"tool_calls": [{"name": "sleep", "arguments": {"ms": 1}}]},
        {"text": "recovered: {{last_tool_result}}"}
    ]);
    let thread = h.thread(script, &["sleep"], Limits::default()).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    assert_eq!(run.output.as_deref(), Some("recovered: slept 1 ms"));
    let first_tool = h
        .store
        .messages(&thread.id)
        .await
        .unwrap()
        .into_iter()
        .find(|m| m.role == MessageRole::Tool)
        .unwrap();
    assert!(first_tool.is_error);
    assert!(
        first_tool.content.contains("not valid JSON"),
        "{}",
        first_tool.content
    );
}

#[tokio::test]
async fn repeated_invalid_arguments_end_the_run_with_a_clear_error() {
    let h = harness().await;
    let script = json!([{"tool_calls": [{"name": "sleep", "arguments": "not json"}]}]);
    let thread = h.thread(script, &["sleep"], Limits::default()).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Error);
    assert!(
        run.error
            .as_deref()
            .unwrap()
            .contains("invalid tool-call arguments"),
        "{run:?}"
    );
}

#[tokio::test]
async fn unknown_tools_and_model_errors_are_readable() {
    let h = harness().await;
    let script = json!([{"tool_calls": [{"name": "teleport", "arguments": {}}]}, {"text": "{{last_tool_result}}"}]);
    let thread = h.thread(script, &["sleep"], Limits::default()).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success);
    assert!(
        run.output
            .as_deref()
            .unwrap()
            .contains("unknown tool `teleport`")
    );

    let thread = h
        .thread(json!([{"error": "model exploded"}]), &[], Limits::default())
        .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Error);
    assert!(
        run.error.as_deref().unwrap().contains("model exploded"),
        "{run:?}"
    );
}

#[tokio::test]
async fn a_second_run_on_a_busy_thread_is_refused_naming_the_active_run() {
    let h = harness().await;
    let thread = h
        .thread(
            json!([{"text": "slow", "delay_ms": 2000}]),
            &[],
            Limits::default(),
        )
        .await;
    let first = h.start(&thread, "one").await;
    let err = h
        .runtime
        .start_run(StartRun {
            thread: thread.clone(),
            caller: h.caller,
            input: ars_domain::RunInput::new("two").unwrap(),
            parent: None,
            replace_from: None,
            woken_by: None,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, ars_runtime::RuntimeError::Busy { active } if active == first.id));
    h.runtime.cancel(first.id).await.unwrap();
}

#[tokio::test]
async fn wait_times_out_with_the_current_snapshot() {
    let h = harness().await;
    let thread = h
        .thread(
            json!([{"text": "slow", "delay_ms": 3000}]),
            &[],
            Limits::default(),
        )
        .await;
    let run = h.start(&thread, "one").await;
    let waited = h
        .runtime
        .wait(run.id, Duration::from_millis(200))
        .await
        .unwrap();
    let Waited::StillRunning(snapshot) = waited else {
        panic!("the run cannot have finished: {waited:?}");
    };
    assert!(!snapshot.status.is_terminal());
    h.runtime.cancel(run.id).await.unwrap();
}

#[tokio::test]
async fn events_tell_the_whole_story_in_order() {
    use ars_events::EventKind;
    use futures::StreamExt;
    let h = harness().await;
    let script =
        json!([{"tool_calls": [{"name": "sleep", "arguments": {"ms": 1}}]}, {"text": "all done"}]);
    let thread = h.thread(script, &["sleep"], Limits::default()).await;
    let run = h.finish(&thread, "go").await;
    let events: Vec<_> = h
        .runtime
        .events()
        .subscribe(run.id, 0)
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    let names: Vec<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(names.first(), Some(&"run_status"));
    assert!(names.contains(&"tool_call_started") && names.contains(&"tool_call_finished"));
    assert!(names.contains(&"message_delta") && names.contains(&"usage"));
    match &events.last().unwrap().kind {
        EventKind::RunStatus { status, output, .. } => {
            assert_eq!(*status, RunStatus::Success);
            assert_eq!(output.as_deref(), Some("all done"));
        }
        other => panic!("last event is {other:?}"),
    }
    assert!(events.windows(2).all(|w| w[1].id == w[0].id + 1));
}

#[tokio::test]
async fn recover_marks_runs_left_active_as_interrupted() {
    let h = harness().await;
    let thread = h
        .thread(json!([{"text": "x"}]), &[], Limits::default())
        .await;
    let left = h
        .store
        .create_run(&ars_domain::NewRun {
            thread_id: thread.id.clone(),
            agent_id: thread.agent_id,
            user_id: thread.user_id,
            input: "cut off".into(),
            lineage: None,
            lease: None,
            woken_by: None,
            new_thread: None,
            running: false,
        })
        .await
        .unwrap();
    assert_eq!(h.runtime.recover().await.unwrap(), vec![left.id]);
    assert_eq!(
        h.store.run(left.id).await.unwrap().unwrap().status,
        RunStatus::Interrupted
    );
    let run = h.finish(&thread, "new run").await;
    assert_eq!(run.status, RunStatus::Success);
}

#[test]
fn the_base_context_grants_exactly_the_builtin_tools_but_ask_user() {
    // `ask_user` pauses a run for a person: offered only to agents that list it.
    let mut names = ars_runtime::builtin_tools().names();
    names.sort();
    let mut expected: Vec<String> = ars_domain::context::BUILTIN_TOOLS
        .iter()
        .map(|s| s.to_string())
        .chain(["ask_user".to_string()])
        .collect();
    expected.sort();
    assert_eq!(names, expected);
}

#[tokio::test]
async fn a_run_on_a_new_thread_begins_from_its_input_and_a_later_run_reads_the_history() {
    let h = harness().await;
    let thread = h
        .thread(
            json!([{"text": "{{user_turns}} turns, last: {{input}}"}]),
            &[],
            Limits::default(),
        )
        .await;
    // The input is the thread's first message: the history is that input alone.
    let first = h.finish(&thread, "one").await;
    assert_eq!(first.output.as_deref(), Some("1 turns, last: one"));
    // The thread holds more now: the run reads it, the earlier turn included.
    let second = h.finish(&thread, "two").await;
    assert_eq!(second.output.as_deref(), Some("2 turns, last: two"));
}
