//! Assembling and running a server: opening the store and creating the first admin; store →
//! models, sandbox, event bus → runtime → API state (with the metrics recorder); then serving
//! until told to stop, and stopping in the right order.
//!
//! `ars serve` and the embedded server of `ars chat` are built by the same [`build`] and run by
//! the same [`run`], so the chat talks to exactly what `serve` would answer.

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use ars_api::accounts::{self, AdminBootstrap};
use ars_api::{ApiError, AppState};
use ars_events::{
    ControlChannel, EventBus, InProcessBus, InProcessConfig, LocalChannel, RedisBus, RedisChannel,
    RedisConfig,
};
use ars_models::ModelRegistry;
use ars_runtime::knowledge::KnowledgeHub;
use ars_runtime::knowledge::tools::KnowledgePlugin;
use ars_runtime::mcp::{McpHub, McpPlugin};
use ars_runtime::skills::{SkillLibrary, SkillsPlugin};
use ars_runtime::{
    MiddlewareFactory, Runtime, RuntimeParts, SubagentMiddlewareFactory, builtin_tools,
};
use ars_sandbox::{LocalSandbox, Sandbox};
use ars_store::{KnowledgeStore, PgControl, SkillStore, Store};

use crate::config::{Config, SandboxMode};
use crate::metrics;

/// How long active runs get to record their interruption when the server stops.
const RUN_GRACE: Duration = Duration::from_secs(5);

/// How long start-up waits for the control channel to listen.
const CONTROL_LISTEN: Duration = Duration::from_secs(5);

/// How long open connections (SSE streams, waits) get to finish once runs have stopped.
const DRAIN: Duration = Duration::from_secs(5);

/// Connects (creating the data dir for SQLite) and runs migrations.
pub async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("cannot create data dir {}", config.data_dir.display()))?;
    let url = config.database_url();
    ars_store::connect_sized(&url, config.database_max_connections)
        .await
        .with_context(|| format!("cannot open the store at {}", redact(&url)))
}

/// Hides a password in a database URL before it is logged.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

/// Creates the `admin` user on an empty database. A configured password must satisfy the
/// password policy (a clear start-up error otherwise). A generated one never reaches the log:
/// it is written to a file only the server's user can read, whose path the log gives, and
/// shown once on stderr when that is a terminal (not a log collector).
pub async fn ensure_admin(store: &dyn Store, config: &Config) -> anyhow::Result<()> {
    if store.count_users().await? > 0 {
        return Ok(());
    }
    let policy = config.password_policy();
    if let Some(password) = config.admin_password.as_deref() {
        policy.validate(password).map_err(|e| {
            anyhow::anyhow!(
                "ARS_ADMIN_PASSWORD (admin_password) is not accepted: the {e}; choose a longer \
                 one or unset it to have one generated"
            )
        })?;
        return match accounts::ensure_admin(store, policy, Some(password))
            .await
            .map_err(|e| anyhow::anyhow!("cannot create the admin user: {}", describe(&e)))?
        {
            AdminBootstrap::Created => {
                tracing::info!("created user `admin` with ARS_ADMIN_PASSWORD");
                Ok(())
            }
            AdminBootstrap::Existing | AdminBootstrap::CreatedWithPassword(_) => Ok(()),
        };
    }
    // Opened before the admin exists, so an unwritable data dir fails before a password is
    // chosen that nobody could ever read.
    let path = config.admin_password_file();
    let mut file =
        create_private_file(&path).with_context(|| format!("cannot create {}", path.display()))?;
    let created = accounts::ensure_admin(store, policy, None)
        .await
        .map_err(|e| anyhow::anyhow!("cannot create the admin user: {e}"));
    let password = match created {
        Ok(AdminBootstrap::CreatedWithPassword(password)) => password,
        other => {
            // Another instance created the admin first (or creating it failed): nothing to keep.
            drop(file);
            let _ = std::fs::remove_file(&path);
            return other.map(|_| ());
        }
    };
    writeln!(file, "{password}")
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tracing::warn!(
        file = %path.display(),
        "created user `admin` with a generated password, written to the file (readable only by \
         this user); log in, then delete the file"
    );
    if std::io::stderr().is_terminal() {
        eprintln!(
            "\n  admin password: {password}\n  (shown only this once; also in {})\n",
            path.display()
        );
    }
    Ok(())
}

/// Creates `path` afresh, readable and writable by this user only. An existing file (or a
/// link planted in its place) is removed first rather than opened, so its old mode or target
/// never applies.
fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// An API error as the CLI says it: naming the field at fault, if any.
pub(crate) fn describe(error: &ApiError) -> String {
    match error.kind() {
        ApiError::Unprocessable {
            message,
            field: Some(field),
        } => format!("{field}: {message}"),
        other => other.to_string(),
    }
}

/// Builds the API state over an open store: the model registry, the local sandbox, the event
/// bus (Redis Streams when `redis_url` is set, else in-process) and the runtime.
pub async fn build(config: &Config, store: Arc<dyn Store>) -> anyhow::Result<AppState> {
    let models = ModelRegistry::from_env(&config.models).context("invalid model configuration")?;
    let secret_key = config.secret_key()?;
    let sandbox = Arc::new(LocalSandbox::new(config.sandbox_config()));
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
        None => {
            let memory_budget = config.event_memory_budget();
            match memory_budget {
                Some(_) => tracing::info!(
                    memory_mb = config.event_memory_mb,
                    retention_s = config.event_retention_s,
                    "run events stay in process memory; finished runs past the budget are \
                     forgotten oldest first (ARS_EVENT_MEMORY_MB)"
                ),
                None => tracing::info!(
                    retention_s = config.event_retention_s,
                    "run events stay in process memory, with no memory budget for finished \
                     runs (ARS_EVENT_MEMORY_MB=0)"
                ),
            }
            Arc::new(InProcessBus::new(InProcessConfig {
                retention,
                memory_budget,
                ..InProcessConfig::default()
            }))
        }
    };
    let control = control_channel(config).await?;
    let skills = SkillLibrary::new(
        Arc::clone(&store) as Arc<dyn SkillStore>,
        Arc::clone(&sandbox) as Arc<dyn Sandbox>,
    );
    let mut mcp_config = config.mcp.runtime_config();
    mcp_config.outbound = config.network.outbound()?;
    let mcp = McpHub::new(
        Arc::clone(&store),
        Arc::clone(&sandbox) as Arc<dyn Sandbox>,
        secret_key.clone(),
        mcp_config,
    );
    let knowledge = KnowledgeHub::new(
        Arc::clone(&store) as Arc<dyn KnowledgeStore>,
        Arc::clone(&events),
        config.knowledge.runtime_config(&config.data_dir),
    );
    let runtime = Runtime::new(RuntimeParts {
        store: Arc::clone(&store),
        events,
        models: Arc::new(models),
        secret_key,
        sandbox: Arc::clone(&sandbox) as Arc<dyn Sandbox>,
        tools: builtin_tools(),
        config: config.runtime_config(),
        plugins: plugins(
            config.subagents.runtime_settings(),
            &skills,
            &mcp,
            &knowledge,
        ),
        control,
    });
    check_models(&runtime).await;
    if !runtime.control_listening(CONTROL_LISTEN).await {
        tracing::warn!(
            "not yet listening on the control channel: cancels from other instances take up to a \
             second until it does"
        );
    }
    let mut api = config.api_config();
    api.metrics = Some(ars_api::MetricsEndpoint {
        render: metrics::render(metrics::handle()?),
        access: config.metrics_access(),
    });
    // After the metrics recorder is installed: a store write in flight across its
    // installation would leave the write-queue gauge off by one for good.
    knowledge.start(runtime.model_source().clone());
    Ok(AppState::new(store, api, runtime, skills, mcp, knowledge))
}

/// Reads the model providers once (so the first run finds them loaded) and says at start-up
/// what will not work: a default model whose provider is missing, stored providers whose
/// secrets this server's key does not open (those were logged as they were read).
async fn check_models(runtime: &Runtime) {
    let snapshot = match runtime.model_snapshot().await {
        Ok(snapshot) => snapshot,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the stored model providers");
            return;
        }
    };
    if let Some(default) = &snapshot.default_model
        && !snapshot.registry.contains(&default.model.provider)
    {
        tracing::warn!(
            provider = %default.model.provider,
            "the default model's provider is not configured: agents without a model of their own \
             will fail until it is (add it as an admin under model configuration, set \
             OPENAI_BASE_URL/OPENAI_API_KEY, or add it under [models])"
        );
    }
    if snapshot.registry.list().len() == 1 {
        tracing::info!(
            "no model provider is configured besides the built-in test model: an admin can \
             connect one from the web UI (model configuration)"
        );
    }
}

/// Binds `addr` (`ARS_METRICS_LISTEN`) and serves `/metrics` there, without credentials, for as
/// long as the process lives: a scrape during the shutdown drain still sees the runs stop.
pub async fn spawn_metrics_listener(addr: SocketAddr, state: &AppState) -> anyhow::Result<()> {
    let Some(endpoint) = &state.config.metrics else {
        return Ok(());
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen for metrics on {addr}"))?;
    tracing::info!(
        "serving metrics without credentials on http://{}/metrics",
        listener.local_addr()?
    );
    let render = Arc::clone(&endpoint.render);
    tokio::spawn(async move {
        if let Err(e) = ars_api::serve_metrics(listener, render, std::future::pending()).await {
            tracing::error!(error = %e, "the metrics listener failed");
        }
    });
    Ok(())
}

/// The channel instances signal each other on (cancels, ends of runs): Redis pub/sub when
/// Redis is configured, else PostgreSQL `LISTEN/NOTIFY` on a PostgreSQL store, else in process.
async fn control_channel(config: &Config) -> anyhow::Result<Arc<dyn ControlChannel>> {
    if let Some(url) = &config.redis_url {
        let channel = RedisChannel::connect(url, RedisConfig::default().key_prefix.as_str())
            .await
            .context("cannot connect to Redis (ARS_REDIS_URL)")?;
        return Ok(Arc::new(channel));
    }
    let url = config.database_url();
    if url.starts_with("postgres") {
        let channel = PgControl::connect(&url)
            .await
            .with_context(|| format!("cannot open the control channel at {}", redact(&url)))?;
        tracing::info!("instances signal each other through PostgreSQL LISTEN/NOTIFY");
        return Ok(Arc::new(channel));
    }
    Ok(Arc::new(LocalChannel::new()))
}

/// The capability plug-ins every run may use, in the order they shape it.
fn plugins(
    subagents: ars_runtime::SubagentSettings,
    skills: &SkillLibrary,
    mcp: &McpHub,
    knowledge: &KnowledgeHub,
) -> Vec<Arc<dyn MiddlewareFactory>> {
    vec![
        Arc::new(SubagentMiddlewareFactory::with_settings(subagents)),
        Arc::new(SkillsPlugin::new(skills.clone())),
        Arc::new(McpPlugin::new(mcp.clone())),
        Arc::new(KnowledgePlugin::new(knowledge.clone())),
    ]
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
    let mcp = state.mcp.clone();
    let knowledge = state.knowledge.clone();
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
    // Runs are over: no MCP call is in flight any more.
    mcp.shutdown().await;
    // A document being ingested is given back, to be taken up again here or elsewhere.
    knowledge.shutdown().await;
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

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn database_passwords_are_redacted() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact("sqlite://./data/ars.db"), "sqlite://./data/ars.db");
    }
}
