//! Subagent delegation benchmarks (durable SQLite store, scripted models):
//!
//! - `turn [N]` (default 1000): one parent turn with one synchronous `task`, zero-latency
//!   models; median and p99 per turn, one turn at a time.
//! - `fanout [N]` (default 1000): N concurrent parent turns, each delegating one `task` to a
//!   child whose model answers after 1 s; total wall time and the process's peak RSS. Run each
//!   N in its own process so the peak belongs to it.
//!
//! Both report the store's writes and its writer's commits, and `turn` the process's context
//! switches and CPU time per turn (`support/work.rs`: counts that a busy neighbour on the
//! machine does not blur as it does wall times); with `ARS_BENCH_STATEMENTS=1`, also
//! every SQL statement run (each a round trip to a connection's thread), by text and count
//! (counting slows the run: leave it off for timings).
//!
//! `cargo bench -p ars-runtime --bench subagents -- fanout 10000`

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/queries.rs"]
mod queries;
#[path = "support/work.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use ars_domain::{
    Agent, AgentConfig, AgentContext, AgentDraft, Backend, Caller, ModelConfig, Role, RunStatus,
    ShareConfig, Thread,
};
use ars_events::InProcessBus;
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::{Runtime, RuntimeConfig, RuntimeParts, StartRun, SubagentMiddlewareFactory};
use ars_sandbox::{LocalSandbox, SandboxConfig};
use ars_store::{NewUser, Store};
use queries::Queries;

fn model(script: Value) -> Option<ModelConfig> {
    Some(ModelConfig {
        provider: "scripted".into(),
        name: "bench".into(),
        temperature: None,
        max_tokens: None,
        top_p: None,
        script: Some(script),
    })
}

async fn agent(
    store: &dyn Store,
    owner: &Caller,
    slug: &str,
    backend: Backend,
    script: Value,
) -> Agent {
    let draft = AgentDraft {
        slug: slug.into(),
        name: slug.into(),
        description: format!("{slug} bench agent"),
        backend,
        config: AgentConfig {
            context: AgentContext {
                model: model(script),
                tools: Some(Vec::new()),
                subagents: (backend == Backend::Default).then(|| vec!["child".to_string()]),
                ..AgentContext::default()
            },
        },
        share_config: ShareConfig::default(),
        is_default: false,
    };
    store.create_agent(&draft, Some(owner.id)).await.unwrap()
}

/// Peak resident set size of this process (`VmHWM`), in MiB.
fn peak_rss_mib() -> f64 {
    support::status_mib("self", "VmHWM:")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let statements = std::env::var_os("ARS_BENCH_STATEMENTS").map(|_| Queries::install());
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mode = args.first().cloned().unwrap_or_else(|| "turn".into());
    let n: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let child_delay_ms = if mode == "fanout" { 1000 } else { 0 };

    let (sqlite, _db) = ars_store::test_support::sqlite_fresh().await;
    let commits = sqlite.clone();
    let store: Arc<dyn Store> = Arc::new(sqlite);
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
        config: RuntimeConfig {
            max_concurrent_runs: n.max(1),
            ..RuntimeConfig::default()
        },
        plugins: vec![Arc::new(SubagentMiddlewareFactory::new())],
        control: Arc::new(ars_events::LocalChannel::new()),
    });
    agent(
        &*store,
        &caller,
        "child",
        Backend::SubAgent,
        json!([{"text": "child result", "delay_ms": child_delay_ms}]),
    )
    .await;
    let parent_script = json!([
        {"tool_calls": [{"name": "task", "arguments": {"description": "do the sub-task", "subagent_slug": "child"}}]},
        {"text": "{{last_tool_result.output}}"}
    ]);
    let parent = agent(&*store, &caller, "parent", Backend::Default, parent_script).await;
    let mut threads = Vec::with_capacity(n);
    for _ in 0..n {
        threads.push(
            store
                .create_thread(&Thread::new_root(user.id, parent.id, "bench".into()))
                .await
                .unwrap(),
        );
    }
    let turn = |thread: Thread| {
        let runtime = runtime.clone();
        async move {
            let run = runtime
                .start_run(StartRun {
                    thread,
                    caller,
                    input: ars_domain::RunInput::new("delegate").unwrap(),
                    parent: None,
                    replace_from: None,
                    woken_by: None,
                })
                .await
                .unwrap();
            let run = runtime
                .wait(run.id, Duration::from_secs(600))
                .await
                .unwrap()
                .into_run();
            assert_eq!(run.status, RunStatus::Success, "{run:?}");
            assert_eq!(run.output.as_deref(), Some("child result"));
        }
    };

    if let Some(statements) = &statements {
        statements.clear();
    }
    match mode.as_str() {
        "fanout" => {
            let started = Instant::now();
            let turns: Vec<_> = threads.into_iter().map(|t| tokio::spawn(turn(t))).collect();
            for t in turns {
                t.await.unwrap();
            }
            let wall = started.elapsed();
            println!(
                "fanout: N = {n} concurrent parent turns, each one `task` to a child answering after 1 s"
            );
            println!(
                "fanout: wall {:.2} s, peak RSS {:.0} MiB",
                wall.as_secs_f64(),
                peak_rss_mib()
            );
        }
        _ => {
            let mut latencies = Vec::with_capacity(n);
            let (switches, cpu) = support::work("self");
            for thread in threads {
                let t = Instant::now();
                turn(thread).await;
                latencies.push(t.elapsed());
            }
            let (switches_after, cpu_after) = support::work("self");
            latencies.sort();
            println!(
                "turn: N = {n} parent turns, one synchronous `task` each, zero-latency models"
            );
            println!(
                "turn: per turn, {:.0} context switches and {:.2} ms of CPU",
                switches_after.saturating_sub(switches) as f64 / n.max(1) as f64,
                (cpu_after.saturating_sub(cpu)).as_secs_f64() * 1e3 / n.max(1) as f64
            );
            println!(
                "turn: median {:.2} ms, p99 {:.2} ms",
                percentile(&latencies, 0.5).as_secs_f64() * 1e3,
                percentile(&latencies, 0.99).as_secs_f64() * 1e3
            );
        }
    }
    // What the store did: group commit puts the writes queued together in one commit.
    let writes: u64 = ars_store::StoreKind::writes(&commits).values().sum();
    println!(
        "{mode}: the store made {writes} writes in {} commits of its writer",
        commits.writer_rounds()
    );
    if let Some(statements) = statements {
        let mut texts: Vec<_> = statements.snapshot().into_iter().collect();
        let run: u64 = texts.iter().map(|(_, n)| n).sum();
        println!(
            "{mode}: {run} SQL queries, {:.1} per parent turn",
            run as f64 / n.max(1) as f64
        );
        texts.sort_by_key(|t| std::cmp::Reverse(t.1));
        for (text, count) in texts {
            println!("{count:>8}  {}", text.chars().take(160).collect::<String>());
        }
    }
}
