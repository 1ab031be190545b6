//! Runs that survive model faults, over the real OpenAI-compatible HTTP path: a stream that
//! breaks before its turn is committed is asked again, and what cannot be saved ends the run
//! with an error in plain words. Each test is named after the rule it checks.

// Helpers outside `#[test]` functions unwrap too; this whole file is test code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use ars_domain::{AgentContext, Backend, Limits, MessageRole, ModelConfig, Run, RunStatus, Thread};
use ars_events::EventKind;
use ars_models::{ModelsConfig, OpenAiOptions, ProviderConfig};
use ars_runtime::RuntimeConfig;
use common::wire_server::{Answer, WireServer};
use common::{Harness, harness_models};

/// A harness whose `mock` provider is `server`, with timing shrunk so faults show fast.
async fn harness_on(server: &WireServer) -> Harness {
    let models = ModelsConfig {
        providers: vec![ProviderConfig::openai_compatible("mock", &server.base_url)],
        openai: OpenAiOptions {
            idle_timeout: Duration::from_millis(300),
            max_attempts: 3,
            backoff_base: Duration::from_millis(5),
            backoff_max: Duration::from_millis(20),
            ..OpenAiOptions::default()
        },
    };
    harness_models(RuntimeConfig::default(), models, |_, _| Vec::new()).await
}

async fn thread_on(h: &Harness) -> Thread {
    let context = AgentContext {
        model: Some(ModelConfig {
            provider: "mock".into(),
            name: "m".into(),
            temperature: None,
            max_tokens: None,
            top_p: None,
            script: None,
        }),
        tools: Some(Vec::new()),
        limits: Some(Limits::default()),
        ..AgentContext::default()
    };
    let agent = h.agent("faulty", Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

fn error_of(run: &Run) -> &str {
    let error = run.error.as_deref().unwrap_or_else(|| panic!("{run:?}"));
    assert!(!error.contains("model error: model error"), "{error}");
    error
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_asked_again_and_only_the_whole_answer_is_committed() {
    let server = WireServer::start(vec![
        Answer::Cut(vec!["The answer ", "is"]),
        Answer::Whole(vec!["The answer ", "is 42."]),
    ])
    .await;
    let h = harness_on(&server).await;
    let thread = thread_on(&h).await;
    let run = h.finish(&thread, "what is it?").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    assert_eq!(run.output.as_deref(), Some("The answer is 42."));
    assert_eq!(server.requests(), 2);
    let messages = h.messages_in(&thread, MessageRole::Assistant).await;
    let texts: Vec<_> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["The answer is 42."], "one message, not the partial");

    // The retry is announced, and the message restarts so a transcript replaces the partial.
    let events: Vec<_> = h
        .runtime
        .events()
        .subscribe(run.id, 0)
        .await
        .unwrap()
        .map(|e| e.unwrap())
        .collect()
        .await;
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::MessageStarted { .. } => Some("started".to_string()),
            EventKind::Error { message } => Some(message.clone()),
            EventKind::MessageCompleted { .. } => Some("completed".to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "started",
            "the model stream broke; retrying (attempt 2 of 3)",
            "started",
            "completed"
        ]
    );
}

#[tokio::test]
async fn a_stream_that_always_breaks_ends_the_run_after_three_attempts_committing_nothing() {
    let server = WireServer::start(vec![Answer::Cut(vec!["par", "tial"])]).await;
    let h = harness_on(&server).await;
    let thread = thread_on(&h).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Error, "{run:?}");
    assert_eq!(
        error_of(&run),
        "the provider `mock` broke the connection before the answer was complete (after 3 attempts)"
    );
    assert_eq!(server.requests(), 3);
    assert!(
        h.messages_in(&thread, MessageRole::Assistant)
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_malformed_chunk_mid_stream_is_asked_again_like_a_cut() {
    let server = WireServer::start(vec![
        Answer::Malformed(vec!["half"]),
        Answer::Whole(vec!["whole"]),
    ])
    .await;
    let h = harness_on(&server).await;
    let thread = thread_on(&h).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    assert_eq!(server.requests(), 2);
    let messages = h.messages_in(&thread, MessageRole::Assistant).await;
    let texts: Vec<_> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["whole"]);
}

#[tokio::test]
async fn a_refused_key_is_not_retried_and_says_the_key_was_refused() {
    let server = WireServer::start(vec![Answer::Status(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    )])
    .await;
    let h = harness_on(&server).await;
    let thread = thread_on(&h).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Error, "{run:?}");
    assert_eq!(
        error_of(&run),
        "the provider `mock` refused the API key: Incorrect API key provided"
    );
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_model_that_sends_nothing_ends_the_run_saying_for_how_long() {
    let server = WireServer::start(vec![Answer::Silent]).await;
    let h = harness_on(&server).await;
    let thread = thread_on(&h).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Error, "{run:?}");
    assert_eq!(
        error_of(&run),
        "the model sent nothing for 0.3 s (provider `mock`)"
    );
    assert_eq!(server.requests(), 1, "silence is not asked again");
}

#[tokio::test]
async fn a_scripted_model_error_is_said_once() {
    let server = WireServer::start(vec![Answer::Whole(vec!["unused"])]).await;
    let h = harness_on(&server).await;
    let thread = h
        .thread(json!([{"error": "model exploded"}]), &[], Limits::default())
        .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(
        error_of(&run),
        "the model reported an error: model exploded"
    );
}
