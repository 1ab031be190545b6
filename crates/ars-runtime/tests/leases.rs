//! Run leases with several instances on one database: a starting instance ends only runs
//! whose lease ran out (a crashed instance's), never a live instance's; the reaper on every
//! instance ends a crashed one's within the TTL; a run ended elsewhere stops where it runs.
//! A cancel through another instance reaches the executor over the control channel, and a
//! wait on another instance answers when the run ends, not at a poll.
//! On PostgreSQL when `ARS_TEST_DATABASE_URL` is set, else on one SQLite store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use ars_domain::{
    AgentConfig, AgentContext, AgentDraft, Backend, Caller, Lease, ModelConfig, NewRun, Role,
    RunStatus, ShareConfig, Thread,
};
use ars_events::{ControlChannel, InProcessBus, LocalChannel};
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::{
    Recovery, Runtime, RuntimeConfig, RuntimeParts, StartRun, Waited, builtin_tools, now_ms,
};
use ars_sandbox::{LocalSandbox, SandboxConfig};
use ars_store::{NewUser, Store};

const TTL: Duration = Duration::from_millis(900);

struct Cluster {
    store: Arc<dyn Store>,
    /// The control channel the instances made by [`Cluster::hearing`] share.
    control: Arc<dyn ControlChannel>,
    caller: Caller,
    _dirs: Vec<tempfile::TempDir>,
}

async fn cluster() -> Cluster {
    let mut dirs = Vec::new();
    let store: Arc<dyn Store> = match ars_store::test_support::pg_url() {
        Some(url) => Arc::new(ars_store::test_support::pg_fresh(&url).await),
        None => {
            let (store, dir) = ars_store::test_support::sqlite_fresh().await;
            dirs.push(dir);
            Arc::new(store)
        }
    };
    let user = store
        .create_user(NewUser {
            username: "alice".into(),
            password_hash: "x".into(),
            role: Role::User,
        })
        .await
        .unwrap();
    dirs.push(tempfile::tempdir().unwrap());
    Cluster {
        store,
        control: Arc::new(LocalChannel::new()),
        caller: Caller::from(&user),
        _dirs: dirs,
    }
}

impl Cluster {
    /// An instance: its own runtime (id, heartbeat, reaper) on the shared store, deaf to the
    /// others' signals.
    fn instance(&self, id: &str) -> Runtime {
        self.instance_with(id, TTL, Arc::new(LocalChannel::new()))
    }

    /// An instance on the shared control channel, with a lease TTL so long that its
    /// heartbeat never stops a run within a test: only a signal can.
    async fn hearing(&self, id: &str) -> Runtime {
        let runtime = self.instance_with(id, Duration::from_secs(60), Arc::clone(&self.control));
        assert!(runtime.control_listening(Duration::from_secs(5)).await);
        runtime
    }

    fn instance_with(&self, id: &str, ttl: Duration, control: Arc<dyn ControlChannel>) -> Runtime {
        Runtime::new(RuntimeParts {
            store: Arc::clone(&self.store),
            events: Arc::new(InProcessBus::new(Default::default())),
            models: Arc::new(ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap()),
            secret_key: ars_domain::SecretKey::generate(),
            sandbox: Arc::new(LocalSandbox::new(SandboxConfig::new(
                self._dirs[self._dirs.len() - 1].path().to_path_buf(),
            ))),
            tools: builtin_tools(),
            config: RuntimeConfig {
                instance_id: id.into(),
                lease_ttl: ttl,
                recovery: Recovery::ExpiredLeases,
                ..RuntimeConfig::default()
            },
            plugins: Vec::new(),
            control,
        })
    }

    /// A thread of an agent whose model answers after `delay_ms`.
    async fn slow_thread(&self, name: &str, delay_ms: u64) -> Thread {
        self.thread_playing(name, json!([{"text": "done", "delay_ms": delay_ms}]))
            .await
    }

    /// A thread of an agent playing `script`.
    async fn thread_playing(&self, name: &str, script: serde_json::Value) -> Thread {
        let context = AgentContext {
            model: Some(ModelConfig {
                provider: "scripted".into(),
                name: "test".into(),
                temperature: None,
                max_tokens: None,
                top_p: None,
                script: Some(script),
            }),
            tools: Some(vec!["ls".into()]),
            ..AgentContext::default()
        };
        let agent = self
            .store
            .create_agent(
                &AgentDraft {
                    slug: name.into(),
                    name: name.into(),
                    description: String::new(),
                    backend: Backend::Default,
                    config: AgentConfig { context },
                    share_config: ShareConfig::default(),
                    is_default: false,
                },
                Some(self.caller.id),
            )
            .await
            .unwrap();
        let thread = Thread::new_root(self.caller.id, agent.id, name.into());
        self.store.create_thread(&thread).await.unwrap()
    }

    async fn status(&self, run: ars_domain::RunId) -> RunStatus {
        self.store.run(run).await.unwrap().unwrap().status
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

#[tokio::test]
async fn starting_a_second_instance_does_not_touch_the_first_ones_active_runs() {
    let c = cluster().await;
    let a = c.instance("a");
    let mut runs = Vec::new();
    for i in 0..3 {
        let thread = c.slow_thread(&format!("slow{i}"), 2_500).await;
        runs.push(a.start_run(start(&thread, c.caller)).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    // B starts on the same database while A's runs are active, and keeps reaping for a while.
    let b = c.instance("b");
    assert_eq!(b.recover().await.unwrap(), vec![]);
    tokio::time::sleep(TTL * 2).await;
    for run in &runs {
        assert!(!c.status(run.id).await.is_terminal(), "B ended A's run");
    }
    for run in &runs {
        let done = a
            .wait(run.id, Duration::from_secs(10))
            .await
            .unwrap()
            .into_run();
        assert_eq!(done.status, RunStatus::Success, "{done:?}");
        assert_eq!(done.output.as_deref(), Some("done"));
    }
}

#[tokio::test]
async fn a_crashed_instances_runs_are_reaped_within_the_lease_ttl() {
    let c = cluster().await;
    let thread = c.slow_thread("orphan", 0).await;
    // What a crashed instance leaves: an active run whose lease nobody renews.
    let orphan = c
        .store
        .create_run(&NewRun {
            thread_id: thread.id.clone(),
            agent_id: thread.agent_id,
            user_id: thread.user_id,
            input: "cut off".into(),
            lineage: None,
            lease: Some(Lease {
                owner: "crashed".into(),
                expires_ms: now_ms() + TTL.as_millis() as i64,
            }),
            woken_by: None,
            new_thread: None,
            running: false,
        })
        .await
        .unwrap();
    let b = c.instance("b");
    // Not yet expired: a start leaves it alone.
    assert_eq!(b.recover().await.unwrap(), vec![]);
    let started = Instant::now();
    while !c.status(orphan.id).await.is_terminal() {
        assert!(started.elapsed() < TTL * 3, "not reaped within the TTL");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(c.status(orphan.id).await, RunStatus::Interrupted);
    // The thread takes a new run, executed by B.
    let run = b.start_run(start(&thread, c.caller)).await.unwrap();
    let done = b
        .wait(run.id, Duration::from_secs(10))
        .await
        .unwrap()
        .into_run();
    assert_eq!(done.status, RunStatus::Success);
}

#[tokio::test]
async fn a_run_ended_elsewhere_stops_on_its_instance_at_the_next_heartbeat() {
    let c = cluster().await;
    let a = c.instance("a");
    let thread = c.slow_thread("long", 30_000).await;
    let run = a.start_run(start(&thread, c.caller)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Another instance cancels it in the store (it does not execute it).
    let b = c.instance("b");
    let cancelled = b.cancel(run.id).await.unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    let started = Instant::now();
    while a.is_local(run.id) {
        assert!(
            started.elapsed() < TTL * 2,
            "A kept executing a run ended elsewhere"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(c.status(run.id).await, RunStatus::Cancelled);
}

#[tokio::test]
async fn a_run_reaped_while_its_executor_lives_writes_nothing_afterwards() {
    let c = cluster().await;
    let a = c.instance("a");
    let step = json!({"tool_calls": [{"name": "ls", "arguments": {}}], "delay_ms": 150});
    let thread = c
        .thread_playing(
            "busy",
            json!([step, step, step, step, step, step, {"text": "end"}]),
        )
        .await;
    let run = a.start_run(start(&thread, c.caller)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    // A partition: another instance no longer sees A's heartbeat and reaps the run.
    let reaped = c
        .store
        .reap_expired_runs(now_ms() + 3_600_000)
        .await
        .unwrap();
    assert_eq!(reaped, vec![run.id]);
    let at_reap = c.store.messages(&thread.id).await.unwrap().len();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let after = c.store.messages(&thread.id).await.unwrap();
    assert_eq!(
        after.len(),
        at_reap,
        "the cut-off executor wrote after the reap: {after:?}"
    );
    let run = c.store.run(run.id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(!a.is_local(run.id), "the executor stopped");
}

#[tokio::test]
async fn a_cancel_through_another_instance_stops_the_run_where_it_executes_within_a_second() {
    let c = cluster().await;
    let (a, b) = (c.hearing("a").await, c.hearing("b").await);
    let thread = c.slow_thread("long", 30_000).await;
    let run = a.start_run(start(&thread, c.caller)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let asked = Instant::now();
    let cancelled = b.cancel(run.id).await.unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    // A's heartbeat would not notice for a minute: the signal stopped it.
    while a.is_local(run.id) {
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "A kept executing a run cancelled through B"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_cancel_nobody_answers_ends_the_run_in_the_store_within_a_second() {
    let c = cluster().await;
    // A cannot hear B (its instance died, or its channel is down).
    let a = c.instance_with("a", Duration::from_secs(60), Arc::new(LocalChannel::new()));
    let b = c.hearing("b").await;
    let thread = c.slow_thread("long", 30_000).await;
    let run = a.start_run(start(&thread, c.caller)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let asked = Instant::now();
    let cancelled = b.cancel(run.id).await.unwrap();
    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert!(a.is_local(run.id), "A could not have heard it");
}

#[tokio::test]
async fn a_wait_on_another_instance_answers_when_the_run_ends_not_at_a_poll() {
    let c = cluster().await;
    let (a, b) = (c.hearing("a").await, c.hearing("b").await);
    let thread = c.slow_thread("short", 500).await;
    let started = Instant::now();
    let run = a.start_run(start(&thread, c.caller)).await.unwrap();

    let waited = b.wait(run.id, Duration::from_secs(10)).await.unwrap();
    let Waited::Finished(done) = waited else {
        panic!("still running: {waited:?}");
    };
    assert_eq!(done.status, RunStatus::Success);
    // B's bus knows nothing of the run; B's fallback reads the store every 2 s.
    assert!(
        started.elapsed() < Duration::from_millis(1_500),
        "the wait answered {:?} after the start of a 500 ms run",
        started.elapsed()
    );
    // A wait that runs out answers the run as it stands.
    let thread = c.slow_thread("long", 30_000).await;
    let run = a.start_run(start(&thread, c.caller)).await.unwrap();
    let waited = b.wait(run.id, Duration::from_millis(300)).await.unwrap();
    assert!(matches!(waited, Waited::StillRunning(_)), "{waited:?}");
}
