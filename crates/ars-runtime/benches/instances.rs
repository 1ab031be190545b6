//! Control across instances: two runtimes on one store, as two `ars serve` would be. How long a
//! cancel through B of a run A executes takes to answer (`cancelled`), and how much later than
//! A's own wait a wait through B wakes when the run ends — for each control channel: in
//! process, Redis pub/sub (with the Redis bus, so B follows the run's terminal event) when
//! `ARS_TEST_REDIS_URL` is set, PostgreSQL `LISTEN/NOTIFY` when `ARS_TEST_DATABASE_URL` is.
//!
//! `cargo bench -p ars-runtime --bench instances -- [N]` (default N = 50).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use ars_domain::{
    AgentConfig, AgentContext, AgentDraft, Backend, Caller, ModelConfig, Role, RunStatus,
    ShareConfig, Thread,
};
use ars_events::{
    ControlChannel, EventBus, InProcessBus, LocalChannel, RedisBus, RedisChannel, RedisConfig,
};
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::{Runtime, RuntimeConfig, RuntimeParts, StartRun};
use ars_sandbox::{LocalSandbox, SandboxConfig};
use ars_store::{NewUser, PgControl, Store};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A control channel under test: its name, itself, and the bus the instances share with it
/// (none: each has its own in-process bus).
type Channel = (
    &'static str,
    Arc<dyn ControlChannel>,
    Option<Arc<dyn EventBus>>,
);

struct Setup {
    store: Arc<dyn Store>,
    caller: Caller,
    dir: tempfile::TempDir,
}

impl Setup {
    fn instance(
        &self,
        id: &str,
        events: Arc<dyn EventBus>,
        control: Arc<dyn ControlChannel>,
    ) -> Runtime {
        Runtime::new(RuntimeParts {
            store: Arc::clone(&self.store),
            events,
            models: Arc::new(ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap()),
            secret_key: ars_domain::SecretKey::generate(),
            sandbox: Arc::new(LocalSandbox::new(SandboxConfig::new(
                self.dir.path().to_path_buf(),
            ))),
            tools: ars_runtime::builtin_tools(),
            config: RuntimeConfig {
                instance_id: id.into(),
                // Long: only a signal (or the cancel's own fallback) can stop a run here.
                lease_ttl: Duration::from_secs(300),
                ..RuntimeConfig::default()
            },
            plugins: Vec::new(),
            control,
        })
    }

    async fn threads(&self, slug: &str, script: serde_json::Value, n: usize) -> Vec<Thread> {
        let agent = self
            .store
            .create_agent(
                &AgentDraft {
                    slug: slug.into(),
                    name: slug.into(),
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
                                script: Some(script),
                            }),
                            tools: Some(Vec::new()),
                            ..AgentContext::default()
                        },
                    },
                    share_config: ShareConfig::default(),
                    is_default: false,
                },
                Some(self.caller.id),
            )
            .await
            .unwrap();
        let mut threads = Vec::with_capacity(n);
        for _ in 0..n {
            let thread = Thread::new_root(self.caller.id, agent.id, slug.into());
            threads.push(self.store.create_thread(&thread).await.unwrap());
        }
        threads
    }
}

fn start(thread: &Thread, caller: Caller) -> StartRun {
    StartRun {
        thread: thread.clone(),
        caller,
        input: ars_domain::RunInput::new("go").unwrap(),
        parent: None,
        replace_from: None,
        woken_by: None,
    }
}

/// Cancels through B N runs A executes; answers the sorted latencies.
async fn cancels(s: &Setup, a: &Runtime, b: &Runtime, tag: &str, n: usize) -> Vec<Duration> {
    let threads = s
        .threads(
            &format!("{tag}-long"),
            json!([{"text": "never", "delay_ms": 600_000}]),
            n,
        )
        .await;
    let mut took = Vec::with_capacity(n);
    for thread in &threads {
        let run = a.start_run(start(thread, s.caller)).await.unwrap();
        while !matches!(
            s.store.run(run.id).await.unwrap().unwrap().status,
            RunStatus::Running
        ) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let asked = Instant::now();
        let cancelled = b.cancel(run.id).await.unwrap();
        took.push(asked.elapsed());
        assert_eq!(cancelled.status, RunStatus::Cancelled);
    }
    took.sort();
    took
}

/// N runs of 50 ms on A, each waited for on A and through B at once; answers how much later
/// B's wait woke than A's, sorted.
async fn waits(s: &Setup, a: &Runtime, b: &Runtime, tag: &str, n: usize) -> Vec<Duration> {
    let threads = s
        .threads(
            &format!("{tag}-short"),
            json!([{"text": "done", "delay_ms": 50}]),
            n,
        )
        .await;
    let mut lags = Vec::with_capacity(n);
    for thread in &threads {
        let run = a.start_run(start(thread, s.caller)).await.unwrap();
        let here = {
            let a = a.clone();
            tokio::spawn(async move {
                a.wait(run.id, Duration::from_secs(30)).await.unwrap();
                Instant::now()
            })
        };
        let there = {
            let b = b.clone();
            tokio::spawn(async move {
                let waited = b.wait(run.id, Duration::from_secs(30)).await.unwrap();
                assert_eq!(waited.run().status, RunStatus::Success);
                Instant::now()
            })
        };
        let (here, there) = (here.await.unwrap(), there.await.unwrap());
        lags.push(there.saturating_duration_since(here));
    }
    lags.sort();
    lags
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(50);
    let db = ars_store::test_support::pg_url();
    let redis = std::env::var("ARS_TEST_REDIS_URL").ok();
    let mut _sqlite = None;
    let store: Arc<dyn Store> = match &db {
        Some(url) => Arc::new(ars_store::test_support::pg_fresh(url).await),
        None => {
            let (store, file) = ars_store::test_support::sqlite_fresh().await;
            _sqlite = Some(file);
            Arc::new(store)
        }
    };
    let user = store
        .create_user(NewUser {
            username: "bench".into(),
            password_hash: "x".into(),
            role: Role::User,
        })
        .await
        .unwrap();
    let s = Setup {
        store,
        caller: Caller::from(&user),
        dir: tempfile::tempdir().unwrap(),
    };
    let store_kind = if db.is_some() { "PostgreSQL" } else { "SQLite" };
    println!("two runtimes on one {store_kind} store, N = {n} runs per figure");

    let mut channels: Vec<Channel> = vec![("in process", Arc::new(LocalChannel::new()), None)];
    if let Some(url) = &redis {
        let prefix = format!("ars-bench-{}", std::process::id());
        let bus = RedisBus::connect(
            url,
            RedisConfig {
                key_prefix: prefix.clone(),
                ..RedisConfig::default()
            },
        )
        .await
        .unwrap();
        channels.push((
            "Redis pub/sub + Redis bus",
            Arc::new(RedisChannel::connect(url, &prefix).await.unwrap()),
            Some(Arc::new(bus)),
        ));
    }
    if let Some(url) = &db {
        channels.push((
            "PostgreSQL NOTIFY",
            Arc::new(PgControl::connect(url).await.unwrap()),
            None,
        ));
    }
    for (k, (name, control, shared_bus)) in channels.into_iter().enumerate() {
        // Each instance's own in-process bus, unless they share Redis's.
        let bus = || -> Arc<dyn EventBus> {
            match &shared_bus {
                Some(bus) => Arc::clone(bus),
                None => Arc::new(InProcessBus::new(Default::default())),
            }
        };
        let a = s.instance("a", bus(), Arc::clone(&control));
        let b = s.instance("b", bus(), Arc::clone(&control));
        assert!(a.control_listening(Duration::from_secs(5)).await);
        assert!(b.control_listening(Duration::from_secs(5)).await);
        let tag = format!("c{k}");
        let cancel = cancels(&s, &a, &b, &tag, n).await;
        let wait = waits(&s, &a, &b, &tag, n).await;
        println!(
            "{name}: cancel through the other instance median {:.1} ms, p99 {:.1} ms, max {:.1} ms; \
             wait through the other instance wakes {:.1} ms (median), {:.1} ms (p99) after the executor's",
            ms(percentile(&cancel, 0.5)),
            ms(percentile(&cancel, 0.99)),
            ms(cancel[cancel.len() - 1]),
            ms(percentile(&wait, 0.5)),
            ms(percentile(&wait, 0.99)),
        );
    }
}
