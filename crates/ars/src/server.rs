//! Assembling and running a server: store → models, sandbox, event bus → runtime → API state;
//! then serving until told to stop, and stopping in the right order.
//!
//! `ars serve` and the embedded server of `ars chat` are built by the same [`build`] and run by
//! the same [`run`], so the chat talks to exactly what `serve` would answer.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use ars_api::AppState;
use ars_events::{EventBus, InProcessBus, InProcessConfig, RedisBus, RedisConfig};
use ars_models::ModelRegistry;
use ars_runtime::{Runtime, RuntimeParts, builtin_tools};
use ars_sandbox::{LocalSandbox, SandboxConfig};
use ars_store::Store;

use crate::config::{Config, SandboxMode};

/// How long active runs get to record their interruption when the server stops.
const RUN_GRACE: Duration = Duration::from_secs(5);

/// How long open connections (SSE streams, waits) get to finish once runs have stopped.
const DRAIN: Duration = Duration::from_secs(5);

/// Builds the API state over an open store: the model registry, the local sandbox, the event
/// bus (Redis Streams when `redis_url` is set, else in-process) and the runtime.
pub async fn build(config: &Config, store: Arc<dyn Store>) -> anyhow::Result<AppState> {
    let models = ModelRegistry::from_env(&config.models).context("invalid model configuration")?;
    if let Some(model) = &config.defaults.base.model
        && !models.contains(&model.provider)
    {
        tracing::warn!(
            provider = %model.provider,
            "the default model's provider is not configured: agents without a model of their own \
             will fail until it is (set OPENAI_BASE_URL/OPENAI_API_KEY or add it under [models])"
        );
    }
    let mut sandbox = SandboxConfig::new(&config.data_dir);
    sandbox.shell = config.sandbox.mode.into();
    sandbox.limits = config.sandbox.limits.clone();
    let sandbox = LocalSandbox::new(sandbox);
    check_sandbox(config.sandbox.mode, &sandbox);
    if config.sandbox.mode == SandboxMode::Bubblewrap {
        check_limits(&sandbox);
    }
    let retention = Duration::from_secs(config.event_retention_s);
    let events: Arc<dyn EventBus> = match &config.redis_url {
        Some(url) => {
            let bus = RedisBus::connect(
                url,
                RedisConfig {
                    retention,
                    ..RedisConfig::default()
                },
            )
            .await
            .context("cannot connect to Redis (ARS_REDIS_URL)")?;
            tracing::info!("run events go through Redis Streams");
            Arc::new(bus)
        }
        None => Arc::new(InProcessBus::new(InProcessConfig {
            retention,
            ..InProcessConfig::default()
        })),
    };
    let runtime = Runtime::new(RuntimeParts {
        store: Arc::clone(&store),
        events,
        models: Arc::new(models),
        sandbox: Arc::new(sandbox),
        tools: builtin_tools(),
        config: config.runtime_config(),
    });
    Ok(AppState::new(store, config.api_config(), runtime))
}

/// Says at start-up how `execute` will run, loudly when it is not isolated.
fn check_sandbox(mode: SandboxMode, sandbox: &LocalSandbox) {
    match (mode, sandbox.check_shell()) {
        (SandboxMode::Host, _) => tracing::warn!(
            "ARS_SANDBOX=host: the `execute` tool runs commands UNCONFINED on this machine, with \
             the server's user rights and network access. Use this only on a trusted development \
             machine; install bubblewrap and unset ARS_SANDBOX everywhere else."
        ),
        (SandboxMode::Bubblewrap, Ok(Some(bwrap))) => {
            tracing::info!(bwrap = %bwrap.display(), "the `execute` tool runs isolated under bubblewrap");
        }
        (SandboxMode::Bubblewrap, Ok(None)) => {}
        (SandboxMode::Bubblewrap, Err(e)) => tracing::warn!(
            error = %e,
            "bubblewrap (`bwrap`) was not found: the `execute` tool will fail until it is \
             installed (`apt-get install bubblewrap`, `dnf install bubblewrap`, `apk add \
             bubblewrap` or `pacman -S bubblewrap`); file tools work without it"
        ),
    }
}

/// Says at start-up what holds a command's process tree to the process and memory limits,
/// loudly when nothing does for a server running as root.
fn check_limits(sandbox: &LocalSandbox) {
    let limits = &sandbox.config().limits;
    match sandbox.cgroups() {
        Some(kind) => tracing::info!(
            cgroups = ?kind,
            processes = limits.processes,
            memory_bytes = limits.memory_bytes,
            workspace_quota_bytes = limits.workspace_quota_bytes,
            "each `execute` command runs in a cgroup of its own, under rlimits"
        ),
        None if !sandbox.process_limit_holds() => tracing::warn!(
            "the server runs as root and cannot create cgroups: the kernel does not apply the \
             process-count rlimit to root, so a command's process count is NOT limited; give \
             the server a delegated cgroup (v2) or a writable pids hierarchy (v1)"
        ),
        None => tracing::info!(
            processes = limits.processes,
            "no cgroups for `execute` commands: their limits are rlimits"
        ),
    }
}

/// Serves `state` on `listener` until `shutdown` resolves, then stops in order: no new
/// connections; active runs interrupted (their committed messages stay); open streams and waits,
/// which end with their runs, drained for a few seconds.
pub async fn run(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let runtime = state.runtime.clone();
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let mut server = tokio::spawn(ars_api::serve(listener, state, async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    }));
    tokio::select! {
        joined = &mut server => {
            // The server ended without being asked to: a listener failure.
            joined.context("the HTTP server task failed")??;
            anyhow::bail!("the HTTP server stopped unexpectedly");
        }
        () = shutdown => {}
    }
    let _ = stop.send(true);
    stop_runs(&runtime).await;
    match tokio::time::timeout(DRAIN, server).await {
        Ok(joined) => joined.context("the HTTP server task failed")??,
        Err(_) => tracing::warn!("connections still open after {DRAIN:?}; closing them"),
    }
    Ok(())
}

/// Interrupts every active run and waits (a bounded time) for each to record it.
async fn stop_runs(runtime: &Runtime) {
    tracing::info!("stopping active runs");
    runtime.shutdown(RUN_GRACE).await;
}
