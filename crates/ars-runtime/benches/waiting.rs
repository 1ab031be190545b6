//! The cost of a turn that waits and resumes: N runs whose first turn calls an `ask` tool, each
//! decided as soon as it waits; timed from the decision to the resumed run's next model call
//! (its `message_started` event) and to its end. Decided through the runtime the run waited on
//! ("same instance") and through a second runtime over the same store and bus ("another
//! instance": the decision's path is the same as across processes, minus the network).
//!
//! And steer delivery: N runs whose model streams a 20-word answer (2 ms between words); a
//! message is sent into each at its first word, and timed to the model call that reads it
//! (the loop reads arrivals before it takes an answer as the end) — from the send, and from the
//! end of the turn in progress (what the delivery itself costs).
//!
//! `cargo bench -p ars-runtime --bench waiting -- [N]` (default N = 500).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use ars_domain::{
    AgentConfig, AgentContext, AgentDraft, Approval, ApprovalRules, Backend, Caller, DecisionInput,
    ModelConfig, Role, RunStatus, ShareConfig, Thread,
};
use ars_events::{EventBus, EventKind, InProcessBus};
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::{Runtime, RuntimeConfig, RuntimeParts, StartRun};
use ars_sandbox::{LocalSandbox, SandboxConfig};
use ars_store::{NewUser, Store};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn runtime(store: &Arc<dyn Store>, bus: &Arc<InProcessBus>, dir: &std::path::Path) -> Runtime {
    Runtime::new(RuntimeParts {
        store: Arc::clone(store),
        events: Arc::clone(bus) as Arc<dyn EventBus>,
        models: Arc::new(ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap()),
        secret_key: ars_domain::SecretKey::generate(),
        sandbox: Arc::new(LocalSandbox::new(SandboxConfig::new(dir.to_path_buf()))),
        tools: ars_runtime::builtin_tools(),
        config: RuntimeConfig::default(),
        plugins: Vec::new(),
        control: Arc::new(ars_events::LocalChannel::new()),
    })
}

/// Starts a run on `thread` through `first`, waits until it waits, decides it through
/// `decider`; answers (decision → next model call, decision → end).
async fn one(
    first: &Runtime,
    decider: &Runtime,
    bus: &InProcessBus,
    thread: &Thread,
    caller: Caller,
) -> (Duration, Duration) {
    let run = first
        .start_run(StartRun {
            thread: thread.clone(),
            caller,
            input: ars_domain::RunInput::new("go").unwrap(),
            parent: None,
            replace_from: None,
            woken_by: None,
        })
        .await
        .unwrap();
    let waiting = first
        .wait_for_turn(run.id, Duration::from_secs(30))
        .await
        .unwrap()
        .into_run();
    assert_eq!(waiting.status, RunStatus::Waiting);
    // The whole stream: the first `message_started` after the `waiting` status is the resumed
    // run's model call.
    let mut events = bus.subscribe(run.id, 0).await.unwrap();
    let decision: DecisionInput =
        serde_json::from_value(json!({"call_id": "c1", "decision": "approve"})).unwrap();
    let decided = Instant::now();
    decider.decide(run.id, &[decision]).await.unwrap();
    let (mut waited, mut to_model) = (false, None);
    while let Some(Ok(event)) = events.next().await {
        match event.kind {
            EventKind::RunStatus {
                status: RunStatus::Waiting,
                ..
            } => waited = true,
            EventKind::MessageStarted { .. } if waited && to_model.is_none() => {
                to_model = Some(decided.elapsed());
            }
            EventKind::RunStatus { status, .. } if status.is_terminal() => break,
            _ => {}
        }
    }
    let ended = decider
        .wait(run.id, Duration::from_secs(30))
        .await
        .unwrap()
        .into_run();
    assert_eq!(ended.status, RunStatus::Success);
    (
        to_model.expect("a model call after the decision"),
        decided.elapsed(),
    )
}

/// Starts a run on `thread`, sends a message in at its first streamed word; answers (send →
/// the model call that reads it, end of the turn in progress → that call).
async fn steer_one(
    runtime: &Runtime,
    bus: &InProcessBus,
    thread: &Thread,
    caller: Caller,
) -> (Duration, Duration) {
    let run = runtime
        .start_run(StartRun {
            thread: thread.clone(),
            caller,
            input: ars_domain::RunInput::new("go").unwrap(),
            parent: None,
            replace_from: None,
            woken_by: None,
        })
        .await
        .unwrap();
    let mut events = bus.subscribe(run.id, 0).await.unwrap();
    let (mut sent, mut turn_end, mut read) = (None, None, None);
    while let Some(Ok(event)) = events.next().await {
        match event.into_event().kind {
            EventKind::MessageDelta { .. } if sent.is_none() => {
                let input = ars_domain::RunInput::new("and another thing").unwrap();
                let at = Instant::now();
                runtime.steer(run.id, input).await.unwrap();
                sent = Some(at);
            }
            EventKind::MessageCompleted { message }
                if message.role == ars_domain::MessageRole::Assistant && turn_end.is_none() =>
            {
                turn_end = Some(Instant::now());
            }
            EventKind::MessageStarted { .. } if turn_end.is_some() && read.is_none() => {
                read = Some(Instant::now());
            }
            EventKind::RunStatus { status, .. } if status.is_terminal() => break,
            _ => {}
        }
    }
    let (sent, turn_end, read) = (sent.unwrap(), turn_end.unwrap(), read.unwrap());
    (read - sent, read - turn_end)
}

fn report(name: &str, mut to_model: Vec<Duration>, mut to_end: Vec<Duration>) {
    to_model.sort();
    to_end.sort();
    println!(
        "{name}: decision → next model call p50 {:?} p99 {:?}; decision → end p50 {:?} p99 {:?}",
        percentile(&to_model, 0.5),
        percentile(&to_model, 0.99),
        percentile(&to_end, 0.5),
        percentile(&to_end, 0.99),
    );
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    let (store, _db) = ars_store::test_support::sqlite_fresh().await;
    let store: Arc<dyn Store> = Arc::new(store);
    let bus = Arc::new(InProcessBus::new(Default::default()));
    let dir = tempfile::tempdir().unwrap();
    let a = runtime(&store, &bus, dir.path());
    let b = runtime(&store, &bus, dir.path());
    let user = store
        .create_user(NewUser {
            username: "bench".into(),
            password_hash: "x".into(),
            role: Role::User,
        })
        .await
        .unwrap();
    let caller = Caller::from(&user);
    let draft = AgentDraft {
        slug: "bench".into(),
        name: "Bench".into(),
        description: String::new(),
        backend: Backend::Default,
        config: AgentConfig {
            context: AgentContext {
                model: Some(ModelConfig {
                    provider: "scripted".into(),
                    name: "bench".into(),
                    temperature: None,
                    max_tokens: None,
                    top_p: None,
                    script: Some(json!([
                        {"tool_calls": [{"id": "c1", "name": "ls", "arguments": {}}]},
                        {"text": "ok"}
                    ])),
                }),
                tools: Some(vec!["ls".into()]),
                approvals: Some(ApprovalRules(
                    [("ls".to_string(), Approval::Ask)].into_iter().collect(),
                )),
                ..AgentContext::default()
            },
        },
        share_config: ShareConfig::default(),
        is_default: false,
    };
    let agent = store.create_agent(&draft, Some(user.id)).await.unwrap();

    println!("waiting runs, scripted model, SQLite (WAL) store, N = {n} each");
    for (name, decider) in [("same instance", &a), ("another instance", &b)] {
        let (mut to_model, mut to_end) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let thread = Thread::new_root(user.id, agent.id, "bench".into());
            let thread = store.create_thread(&thread).await.unwrap();
            let (model, end) = one(&a, decider, &bus, &thread, caller).await;
            to_model.push(model);
            to_end.push(end);
        }
        report(name, to_model, to_end);
    }

    let words: Vec<String> = (1..=20).map(|i| format!("w{i}")).collect();
    let draft = AgentDraft {
        slug: "steered".into(),
        name: "Steered".into(),
        description: String::new(),
        backend: Backend::Default,
        config: AgentConfig {
            context: AgentContext {
                model: Some(ModelConfig {
                    provider: "scripted".into(),
                    name: "bench".into(),
                    temperature: None,
                    max_tokens: None,
                    top_p: None,
                    script: Some(json!([{"text": words.join(" "), "chunk_delay_ms": 2}])),
                }),
                tools: Some(Vec::new()),
                ..AgentContext::default()
            },
        },
        share_config: ShareConfig::default(),
        is_default: false,
    };
    let steered = store.create_agent(&draft, Some(user.id)).await.unwrap();
    let (mut from_send, mut from_turn_end) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let thread = Thread::new_root(user.id, steered.id, "bench".into());
        let thread = store.create_thread(&thread).await.unwrap();
        let (send, turn_end) = steer_one(&a, &bus, &thread, caller).await;
        from_send.push(send);
        from_turn_end.push(turn_end);
    }
    from_send.sort();
    from_turn_end.sort();
    println!(
        "steering: send → the model call that reads it p50 {:?} p99 {:?} (the turn in progress \
         streams ~40 ms); end of that turn → the call p50 {:?} p99 {:?}",
        percentile(&from_send, 0.5),
        percentile(&from_send, 0.99),
        percentile(&from_turn_end, 0.5),
        percentile(&from_turn_end, 0.99),
    );
}
