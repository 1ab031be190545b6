//! Run overhead: N single-turn runs of a zero-latency scripted model against a durable SQLite
//! store, first one at a time (latency per run), then all at once (throughput).
//!
//! `cargo bench -p ars-runtime --bench runs -- [N]` (default N = 1000).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use ars_domain::{
    AgentConfig, AgentContext, AgentDraft, Backend, Caller, ModelConfig, Role, RunStatus,
    ShareConfig, Thread,
};
use ars_events::InProcessBus;
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::{Runtime, RuntimeConfig, RuntimeParts, StartRun};
use ars_sandbox::{LocalSandbox, SandboxConfig};
use ars_store::{NewUser, Store};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000);
    let (store, _db) = ars_store::test_support::sqlite_fresh().await;
    let store: Arc<dyn Store> = Arc::new(store);
    let dir = tempfile::tempdir().unwrap();
    let user = store
        .create_user(NewUser {
            username: "bench".into(),
            password_hash: "x".into(),
            role: Role::User,
        })
        .await
        .unwrap();
    let caller = Caller::from(&user);
    let runtime = Runtime::new(RuntimeParts {
        store: Arc::clone(&store),
        events: Arc::new(InProcessBus::new(Default::default())),
        models: Arc::new(ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap()),
        secret_key: ars_domain::SecretKey::generate(),
        sandbox: Arc::new(LocalSandbox::new(SandboxConfig::new(
            dir.path().to_path_buf(),
        ))),
        tools: ars_runtime::builtin_tools(),
        config: RuntimeConfig::default(),
        plugins: Vec::new(),
        control: Arc::new(ars_events::LocalChannel::new()),
    });
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
                    script: Some(json!([{"text": "ok"}])),
                }),
                ..AgentContext::default()
            },
        },
        share_config: ShareConfig::default(),
        is_default: false,
    };
    let agent = store.create_agent(&draft, Some(user.id)).await.unwrap();
    let mut threads = Vec::with_capacity(2 * n);
    for _ in 0..2 * n {
        let thread = Thread::new_root(user.id, agent.id, "bench".into());
        threads.push(store.create_thread(&thread).await.unwrap());
    }
    let (sequential, concurrent) = threads.split_at(n);

    // One at a time: the latency of a whole run (create, input, model, answer, finish).
    let mut latencies = Vec::with_capacity(n);
    let started = Instant::now();
    for thread in sequential {
        let t = Instant::now();
        let run = runtime
            .start_run(StartRun {
                thread: thread.clone(),
                caller,
                input: ars_domain::RunInput::new("hi").unwrap(),
                parent: None,
                replace_from: None,
                woken_by: None,
            })
            .await
            .unwrap();
        let run = runtime
            .wait(run.id, Duration::from_secs(30))
            .await
            .unwrap()
            .into_run();
        assert_eq!(run.status, RunStatus::Success);
        latencies.push(t.elapsed());
    }
    let seq_total = started.elapsed();
    latencies.sort();

    // All at once: throughput with the default concurrency cap.
    let started = Instant::now();
    let mut ids = Vec::with_capacity(n);
    for thread in concurrent {
        let run = runtime
            .start_run(StartRun {
                thread: thread.clone(),
                caller,
                input: ars_domain::RunInput::new("hi").unwrap(),
                parent: None,
                replace_from: None,
                woken_by: None,
            })
            .await
            .unwrap();
        ids.push(run.id);
    }
    for id in ids {
        let run = runtime
            .wait(id, Duration::from_secs(120))
            .await
            .unwrap()
            .into_run();
        assert_eq!(run.status, RunStatus::Success);
    }
    let conc_total = started.elapsed();

    println!("single-turn runs, scripted model, SQLite (WAL) store, N = {n}");
    println!(
        "sequential: median {:.2} ms, p99 {:.2} ms, {:.0} runs/s",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        n as f64 / seq_total.as_secs_f64()
    );
    println!(
        "concurrent: {:.2} s total, {:.0} runs/s",
        conc_total.as_secs_f64(),
        n as f64 / conc_total.as_secs_f64()
    );
}
