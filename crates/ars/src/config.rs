//! Server configuration: built-in defaults, then `ars.toml`, then `ARS_*` environment variables.

mod network;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use ars_domain::ContextDefaults;
use ars_domain::user::PasswordPolicy;
use ars_models::ModelsConfig;
use ars_sandbox::{SandboxConfig, SandboxLimits, ShellMode};

pub use network::NetworkSettings;

/// Every setting of the server.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address to listen on (`ARS_BIND`).
    pub bind: SocketAddr,
    /// Root of everything the server keeps on disk (`ARS_DATA_DIR`).
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…` (`ARS_DATABASE_URL`); default: SQLite in the data dir.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    /// Connections this instance keeps open to PostgreSQL (`ARS_DATABASE_MAX_CONNECTIONS`,
    /// default 10); instances sharing a database share its connection limit. Not used by
    /// SQLite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_max_connections: Option<u32>,
    /// Password of the `admin` user created on first start (`ARS_ADMIN_PASSWORD`); when absent,
    /// one is generated and written to `<data dir>/admin-password.txt` (mode 0600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_password: Option<String>,
    /// The key for secrets at rest such as provider API keys (`ARS_SECRET_KEY`): the base64
    /// of 32 bytes (`openssl rand -base64 32`). When absent, `<data dir>/secret.key` is
    /// generated on first start (mode 0600) and reused. Instances sharing a database need the
    /// same key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<SecretText>,
    /// Largest accepted request body in bytes (`ARS_BODY_LIMIT`).
    pub body_limit: usize,
    /// Largest file uploaded into a thread's workdir, in bytes (`ARS_FILE_UPLOAD_LIMIT`).
    pub file_upload_limit: usize,
    /// MiB of uploads read whole (knowledge-base documents) this server holds in memory at
    /// once, across all requests (`ARS_UPLOAD_MEMORY_MB`); past it an upload is answered 503
    /// with `Retry-After`.
    pub upload_memory_mb: usize,
    /// Lifetime of login tokens in hours (`ARS_SESSION_TTL_HOURS`).
    pub session_ttl_hours: u32,
    /// `pretty` or `json` (`ARS_LOG_FORMAT`).
    pub log_format: LogFormat,
    /// `BaseContext` and `SubAgentContext` (`[defaults.base]`, `[defaults.subagent]`).
    pub defaults: ContextDefaults,
    /// Model providers (`[[models.providers]]`, `[models.openai]` timing). `OPENAI_BASE_URL` and
    /// `OPENAI_API_KEY` add an `openai` provider on their own; `scripted` always exists.
    pub models: ModelsConfig,
    /// `provider/name` (`ARS_DEFAULT_MODEL`): the `BaseContext` model, overriding
    /// `[defaults.base.model]`. Applied by [`Config::load`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_model: Option<String>,
    /// `[sandbox]`: how `execute` runs commands (`mode`, `ARS_SANDBOX`) and what one command
    /// and one workspace may consume (`[sandbox.limits]`, `ARS_SANDBOX__LIMITS__<NAME>`).
    pub sandbox: SandboxSettings,
    /// Seconds a finished run's events stay available for SSE replay (`ARS_EVENT_RETENTION_S`).
    pub event_retention_s: u64,
    /// MiB the in-process bus may hold in finished runs' events before it forgets the
    /// oldest-finished runs early (`ARS_EVENT_MEMORY_MB`); 0: bounded by retention only.
    /// Not used with Redis, whose own `maxmemory` applies.
    pub event_memory_mb: u64,
    /// Runs executing at once; more wait as `pending` (`ARS_MAX_CONCURRENT_RUNS`).
    pub max_concurrent_runs: usize,
    /// Seconds a run's lease holds unless its instance renews it (`ARS_LEASE_TTL_S`): on
    /// PostgreSQL, a crashed instance's runs are ended `interrupted` this long after its last
    /// heartbeat, and never a live instance's.
    pub lease_ttl_s: u64,
    /// `redis://…` selects the Redis Streams event bus, shared by every instance
    /// (`ARS_REDIS_URL`); default: the in-process bus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis_url: Option<String>,
    /// The fewest characters of a new password (`ARS_PASSWORD_MIN_LENGTH`).
    pub password_min_length: usize,
    /// Failed logins per username and per client address before back-off starts
    /// (`ARS_LOGIN_FREE_FAILURES`).
    pub login_free_failures: u32,
    /// The first login lock-out in seconds; each further failure doubles it
    /// (`ARS_LOGIN_BACKOFF_INITIAL_S`).
    pub login_backoff_initial_s: u64,
    /// The longest login lock-out in seconds (`ARS_LOGIN_BACKOFF_MAX_S`).
    pub login_backoff_max_s: u64,
    /// Usernames, and client addresses, whose failed logins are remembered at once
    /// (`ARS_LOGIN_THROTTLE_ENTRIES`); bounds the counters' memory.
    pub login_throttle_entries: usize,
    /// The bearer token `GET /metrics` on the main listener asks for (`ARS_METRICS_TOKEN`);
    /// when absent, an admin's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_token: Option<String>,
    /// A listener of its own serving only `/metrics`, without credentials
    /// (`ARS_METRICS_LISTEN`, e.g. `127.0.0.1:9464`): bind it to an address only the scraper
    /// reaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<SocketAddr>,
    /// `[mcp]`: timeouts and bounds of agents' MCP servers (`ARS_MCP__<NAME>`).
    pub mcp: McpSettings,
    /// `[knowledge]`: knowledge bases' limits and ingestion (`ARS_KNOWLEDGE__<NAME>`).
    pub knowledge: KnowledgeSettings,
    /// `[network]`: exceptions to the outbound policy for URLs non-admins give
    /// (`ARS_NETWORK__ALLOW`).
    pub network: NetworkSettings,
    /// `[subagents]`: bounds of what background subagents do to their parent threads
    /// (`ARS_SUBAGENTS__<NAME>`).
    pub subagents: SubagentSettings,
}

/// `[subagents]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubagentSettings {
    /// The most runs background results start on one thread within an hour (`wake`); past
    /// it, they leave a note and a log line.
    pub max_wakes_per_hour: u32,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        Self {
            max_wakes_per_hour: ars_runtime::SubagentSettings::default().max_wakes_per_hour,
        }
    }
}

impl SubagentSettings {
    pub fn runtime_settings(&self) -> ars_runtime::SubagentSettings {
        ars_runtime::SubagentSettings {
            max_wakes_per_hour: self.max_wakes_per_hour,
        }
    }
}

/// `[knowledge]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KnowledgeSettings {
    /// The largest document one upload may hold, in MiB.
    pub max_document_mb: u64,
    /// The most MiB of documents one knowledge base may hold.
    pub max_knowledge_base_mb: u64,
    /// Documents ingested at once on this instance.
    pub workers: usize,
    /// Seconds a worker holds a document before another instance may take it over (renewed
    /// while it works).
    pub lease_s: u64,
    /// Times a document may be taken up with its worker dying while reading it (a crash, a
    /// kill) before it is marked failed; a worker stopping with its server gives it back
    /// without counting. 1: a document whose reading killed the server is not read again.
    pub max_attempts: u32,
    /// Seconds `pdftotext` may take over one PDF.
    pub pdf_timeout_s: u64,
    /// Seconds one embeddings request may take.
    pub embed_timeout_s: u64,
}

impl Default for KnowledgeSettings {
    fn default() -> Self {
        Self {
            max_document_mb: 32,
            max_knowledge_base_mb: 1024,
            workers: 2,
            lease_s: 60,
            max_attempts: 1,
            pdf_timeout_s: 60,
            embed_timeout_s: 60,
        }
    }
}

impl KnowledgeSettings {
    /// The runtime's configuration, with the indexes under `<data dir>/knowledge`.
    pub fn runtime_config(&self, data_dir: &Path) -> ars_runtime::knowledge::KnowledgeConfig {
        let mut config = ars_runtime::knowledge::KnowledgeConfig::new(data_dir.join("knowledge"));
        config.max_document_bytes = self.max_document_mb.max(1) * 1024 * 1024;
        config.max_kb_bytes = self.max_knowledge_base_mb.max(1) * 1024 * 1024;
        config.workers = self.workers.max(1);
        config.lease = Duration::from_secs(self.lease_s.max(5));
        config.max_attempts = self.max_attempts.max(1);
        config.extract.pdf_timeout = Duration::from_secs(self.pdf_timeout_s.max(1));
        config.embed_timeout = Duration::from_secs(self.embed_timeout_s.max(1));
        config
    }
}

/// `[mcp]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpSettings {
    /// Seconds one MCP tool call may take.
    pub call_timeout_s: u64,
    /// Seconds a server may take to start and answer the handshake, or to list its tools.
    pub connect_timeout_s: u64,
    /// Seconds an unused connection (a stdio server's process) stays open.
    pub idle_timeout_s: u64,
    /// Stdio server processes running at once on this instance.
    pub max_processes: usize,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            call_timeout_s: 60,
            connect_timeout_s: 30,
            idle_timeout_s: 600,
            max_processes: 64,
        }
    }
}

impl McpSettings {
    pub fn runtime_config(&self) -> ars_runtime::mcp::McpConfig {
        let defaults = ars_runtime::mcp::McpConfig::default();
        ars_runtime::mcp::McpConfig {
            call_timeout: Duration::from_secs(self.call_timeout_s.max(1)),
            connect_timeout: Duration::from_secs(self.connect_timeout_s.max(1)),
            pool: ars_mcp::PoolConfig {
                max_processes: self.max_processes.max(1),
                idle_timeout: Duration::from_secs(self.idle_timeout_s.max(1)),
                ..defaults.pool
            },
            ..defaults
        }
    }
}

/// A secret setting: serialized as itself (the configuration's layers need it), never shown
/// by `Debug`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SecretText(pub String);

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// `[sandbox]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// `bubblewrap` (isolated, the default) or `host` (`ARS_SANDBOX`).
    pub mode: SandboxMode,
    /// Processes, memory, open files, file size, CPU time, `/tmp` and `$HOME` sizes, the
    /// workspace quota.
    pub limits: SandboxLimits,
    /// Host directories shown read-only inside the sandbox at the same path, e.g. where MCP
    /// servers or a toolchain are installed outside `/usr` (`/opt/mcp`).
    pub extra_ro_binds: Vec<PathBuf>,
}

/// The `execute` tool's isolation, as configured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Commands run under bubblewrap and see only their scope (SPEC §6).
    #[default]
    Bubblewrap,
    /// Commands run unconfined on the host: development machines without bubblewrap only.
    Host,
}

impl From<SandboxMode> for ShellMode {
    fn from(mode: SandboxMode) -> Self {
        match mode {
            SandboxMode::Bubblewrap => ShellMode::Bubblewrap,
            SandboxMode::Host => ShellMode::Host,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Pretty,
    Json,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("./data"),
            database_url: None,
            database_max_connections: None,
            admin_password: None,
            secret_key: None,
            body_limit: ars_api::DEFAULT_BODY_LIMIT,
            file_upload_limit: ars_api::DEFAULT_FILE_UPLOAD_LIMIT,
            upload_memory_mb: ars_api::DEFAULT_UPLOAD_MEMORY / (1024 * 1024),
            session_ttl_hours: 24 * 30,
            log_format: LogFormat::Pretty,
            defaults: ContextDefaults::default(),
            models: ModelsConfig::default(),
            default_model: None,
            sandbox: SandboxSettings::default(),
            event_retention_s: 60 * 60,
            event_memory_mb: 256,
            max_concurrent_runs: 256,
            lease_ttl_s: 15,
            redis_url: None,
            password_min_length: ars_domain::user::DEFAULT_MIN_PASSWORD_CHARS,
            login_free_failures: 5,
            login_backoff_initial_s: 1,
            login_backoff_max_s: 15 * 60,
            login_throttle_entries: 10_000,
            metrics_token: None,
            metrics_listen: None,
            mcp: McpSettings::default(),
            knowledge: KnowledgeSettings::default(),
            network: NetworkSettings::default(),
            subagents: SubagentSettings::default(),
        }
    }
}

/// Read from the working directory when no file is named.
const DEFAULT_FILE: &str = "ars.toml";

/// The top-level settings that `ARS_<NAME>` variables may set.
const SETTINGS: [&str; 29] = [
    "bind",
    "data_dir",
    "database_url",
    "database_max_connections",
    "admin_password",
    "secret_key",
    "body_limit",
    "file_upload_limit",
    "upload_memory_mb",
    "session_ttl_hours",
    "log_format",
    "default_model",
    "sandbox",
    "event_retention_s",
    "event_memory_mb",
    "max_concurrent_runs",
    "lease_ttl_s",
    "redis_url",
    "password_min_length",
    "login_free_failures",
    "login_backoff_initial_s",
    "login_backoff_max_s",
    "login_throttle_entries",
    "metrics_token",
    "metrics_listen",
    "mcp",
    "knowledge",
    "network",
    "subagents",
];

impl Config {
    /// Loads the layers. An explicitly named file must exist; `ars.toml` is optional.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Self> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) if !path.exists() => {
                anyhow::bail!("configuration file {} does not exist", path.display())
            }
            Some(path) => figment = figment.merge(Toml::file_exact(path)),
            None if Path::new(DEFAULT_FILE).exists() => {
                figment = figment.merge(Toml::file_exact(DEFAULT_FILE));
            }
            None => {}
        }
        // Only our own keys: other `ARS_*` variables (a test harness's, say) are not settings.
        let env = Env::prefixed("ARS_")
            .filter(|key| {
                let key = key.as_str().to_ascii_lowercase();
                SETTINGS.contains(&key.as_str())
                    || key.starts_with("defaults__")
                    || key.starts_with("sandbox__")
                    || key.starts_with("mcp__")
                    || key.starts_with("knowledge__")
                    || key.starts_with("network__")
                    || key.starts_with("subagents__")
            })
            // `ARS_SANDBOX` predates the `[sandbox]` table and still names the mode.
            .map(|key| {
                if key.as_str().eq_ignore_ascii_case("sandbox") {
                    "sandbox__mode".into()
                } else {
                    key.into()
                }
            })
            .split("__");
        Self::from_figment(figment.merge(env))
    }

    fn from_figment(figment: Figment) -> anyhow::Result<Self> {
        let mut config: Self = figment
            .extract()
            .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))?;
        if let Some(reference) = &config.default_model {
            let model = ars_models::parse_model_ref(reference)
                .map_err(|e| anyhow::anyhow!("invalid configuration: default_model: {e}"))?;
            config.defaults.base.model = Some(model);
        }
        if config.database_max_connections == Some(0) {
            anyhow::bail!("invalid configuration: database_max_connections must be at least 1");
        }
        if config.password_min_length == 0 {
            anyhow::bail!("invalid configuration: password_min_length must be at least 1");
        }
        if config.login_backoff_initial_s == 0
            || config.login_backoff_max_s < config.login_backoff_initial_s
        {
            anyhow::bail!(
                "invalid configuration: login_backoff_initial_s must be at least 1 and at most \
                 login_backoff_max_s"
            );
        }
        if config
            .metrics_token
            .as_deref()
            .is_some_and(|t| t.trim().is_empty())
        {
            anyhow::bail!("invalid configuration: metrics_token must not be empty");
        }
        for (layer, context) in [
            ("defaults.base", &config.defaults.base),
            ("defaults.subagent", &config.defaults.subagent),
        ] {
            context
                .validate(layer)
                .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))?;
        }
        config.network.policy()?;
        config
            .sandbox_config()
            .check()
            .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))?;
        Ok(config)
    }

    /// The local sandbox's configuration: the data dir and `[sandbox]`.
    pub fn sandbox_config(&self) -> SandboxConfig {
        let mut sandbox = SandboxConfig::new(&self.data_dir);
        sandbox.shell = self.sandbox.mode.into();
        sandbox.limits = self.sandbox.limits.clone();
        sandbox.extra_ro_binds = self.sandbox.extra_ro_binds.clone();
        sandbox
    }

    /// Who may read `/metrics` on the main listener: the metrics token's bearer, or admins.
    pub fn metrics_access(&self) -> ars_api::MetricsAccess {
        match &self.metrics_token {
            Some(token) => ars_api::MetricsAccess::Token(ars_api::MetricsToken::new(token)),
            None => ars_api::MetricsAccess::Admins,
        }
    }

    /// The database URL in force: configured, or `sqlite://<data dir>/ars.db`.
    pub fn database_url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", self.data_dir.join("ars.db").display()))
    }

    pub fn api_config(&self) -> ars_api::ApiConfig {
        ars_api::ApiConfig {
            defaults: self.defaults.clone(),
            body_limit: self.body_limit,
            file_upload_limit: self.file_upload_limit,
            upload_memory: self.upload_memory_mb.max(1).saturating_mul(1024 * 1024),
            session_ttl: chrono::Duration::hours(self.session_ttl_hours.into()),
            ui: ars_api::UiAssets::web_dist(),
            login_throttle: ars_api::LoginThrottleConfig {
                free_failures: self.login_free_failures,
                initial_backoff: Duration::from_secs(self.login_backoff_initial_s),
                max_backoff: Duration::from_secs(self.login_backoff_max_s),
                max_entries: self.login_throttle_entries,
                clock: ars_api::Clock::system(),
            },
            password_policy: self.password_policy(),
            // The recorder is the server assembly's: `server::build` fills this in.
            metrics: None,
            sse_keep_alive: ars_api::DEFAULT_SSE_KEEP_ALIVE,
        }
    }

    /// What a new password must satisfy, wherever it is set.
    pub fn password_policy(&self) -> PasswordPolicy {
        PasswordPolicy {
            min_chars: self.password_min_length,
        }
    }

    /// The key for secrets at rest: the configured one, or the data dir's key file (created
    /// on first start).
    pub fn secret_key(&self) -> anyhow::Result<ars_domain::SecretKey> {
        crate::secret_key::load(
            self.secret_key.as_ref().map(|s| s.0.as_str()),
            &self.data_dir,
        )
    }

    /// Where a generated first-start admin password is written.
    pub fn admin_password_file(&self) -> PathBuf {
        self.data_dir.join("admin-password.txt")
    }

    pub fn runtime_config(&self) -> ars_runtime::RuntimeConfig {
        // One SQLite file has one server: everything active at its start was cut off. Several
        // instances share a PostgreSQL database: only expired leases are theirs to end.
        let recovery = if self.database_url().starts_with("postgres") {
            ars_runtime::Recovery::ExpiredLeases
        } else {
            ars_runtime::Recovery::AllActive
        };
        ars_runtime::RuntimeConfig {
            defaults: self.defaults.clone(),
            max_concurrent_runs: self.max_concurrent_runs,
            lease_ttl: std::time::Duration::from_secs(self.lease_ttl_s.max(1)),
            recovery,
            ..ars_runtime::RuntimeConfig::default()
        }
    }

    /// The in-process bus's byte budget for finished runs: `event_memory_mb` in bytes, `None`
    /// for 0 (unbounded but by retention). Saturates rather than overflowing on a 32-bit host.
    pub fn event_memory_budget(&self) -> Option<usize> {
        (self.event_memory_mb > 0).then(|| {
            usize::try_from(self.event_memory_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
        })
    }
}

#[cfg(test)]
// `figment::Jail` fixes the closure's error type; its size is not ours to choose.
#[allow(clippy::result_large_err)]
mod tests;
