//! Server configuration: built-in defaults, then `ars.toml`, then `ARS_*` environment variables.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use ars_domain::ContextDefaults;
use ars_models::ModelsConfig;
use ars_sandbox::ShellMode;

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
    /// Password of the `admin` user created on first start (`ARS_ADMIN_PASSWORD`); generated
    /// and logged once when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admin_password: Option<String>,
    /// Largest accepted request body in bytes (`ARS_BODY_LIMIT`).
    pub body_limit: usize,
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
    /// How `execute` runs commands (`ARS_SANDBOX`): `bubblewrap` (isolated) or `host`.
    pub sandbox: SandboxMode,
    /// Seconds a finished run's events stay available for SSE replay (`ARS_EVENT_RETENTION_S`).
    pub event_retention_s: u64,
    /// Runs executing at once; more wait as `pending` (`ARS_MAX_CONCURRENT_RUNS`).
    pub max_concurrent_runs: usize,
    /// `redis://…` selects the Redis Streams event bus, shared by every instance
    /// (`ARS_REDIS_URL`); default: the in-process bus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis_url: Option<String>,
}

/// The `execute` tool's isolation, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Commands run under bubblewrap and see only their scope (SPEC §6).
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
            admin_password: None,
            body_limit: ars_api::DEFAULT_BODY_LIMIT,
            session_ttl_hours: 24 * 30,
            log_format: LogFormat::Pretty,
            defaults: ContextDefaults::default(),
            models: ModelsConfig::default(),
            default_model: None,
            sandbox: SandboxMode::Bubblewrap,
            event_retention_s: 60 * 60,
            max_concurrent_runs: 256,
            redis_url: None,
        }
    }
}

/// Read from the working directory when no file is named.
const DEFAULT_FILE: &str = "ars.toml";

/// The top-level settings that `ARS_<NAME>` variables may set.
const SETTINGS: [&str; 12] = [
    "bind",
    "data_dir",
    "database_url",
    "admin_password",
    "body_limit",
    "session_ttl_hours",
    "log_format",
    "default_model",
    "sandbox",
    "event_retention_s",
    "max_concurrent_runs",
    "redis_url",
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
                SETTINGS.contains(&key.as_str()) || key.starts_with("defaults__")
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
        Ok(config)
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
            session_ttl: chrono::Duration::hours(self.session_ttl_hours.into()),
            ui: ars_api::UiAssets::web_dist(),
        }
    }

    pub fn runtime_config(&self) -> ars_runtime::RuntimeConfig {
        ars_runtime::RuntimeConfig {
            defaults: self.defaults.clone(),
            max_concurrent_runs: self.max_concurrent_runs,
            ..ars_runtime::RuntimeConfig::default()
        }
    }
}

/// Structured logs to stderr; `RUST_LOG` overrides the default filter, which is `warn` when
/// `quiet` (a terminal chat).
pub fn init_tracing(config: &Config, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = if quiet {
        "warn"
    } else {
        "info,sqlx=warn,tower_http=info"
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    match config.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Pretty => builder.init(),
    }
}

#[cfg(test)]
// `figment::Jail` fixes the closure's error type; its size is not ours to choose.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn env_overrides_file_overrides_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "ars.toml",
                r#"
                bind = "127.0.0.1:9000"
                data_dir = "/srv/ars"
                [defaults.subagent.limits]
                max_steps = 12
                "#,
            )?;
            jail.set_env("ARS_BIND", "0.0.0.0:7000");
            jail.set_env("ARS_DATABASE_URL", "postgres://db/ars");
            jail.set_env("ARS_TEST_DATABASE_URL", "not a setting, ignored");
            let config = Config::load(None).map_err(|e| e.to_string())?;
            assert_eq!(config.bind.to_string(), "0.0.0.0:7000");
            assert_eq!(config.data_dir, PathBuf::from("/srv/ars"));
            assert_eq!(config.database_url(), "postgres://db/ars");
            let limits = config.defaults.subagent.limits.clone().unwrap_or_default();
            assert_eq!(limits.max_steps, Some(12));
            // Keys the file did not set keep their built-in values.
            assert!(config.defaults.subagent.system_prompt.is_some());
            Ok(())
        });
    }

    #[test]
    fn database_defaults_to_sqlite_in_the_data_dir() {
        let config = Config {
            data_dir: PathBuf::from("/tmp/x"),
            ..Config::default()
        };
        assert_eq!(config.database_url(), "sqlite:///tmp/x/ars.db");
    }

    #[test]
    fn runtime_settings_come_from_the_environment() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "ars.toml",
                r#"
                [[models.providers]]
                name = "local"
                kind = "openai-compatible"
                base_url = "http://127.0.0.1:11434/v1"
                "#,
            )?;
            jail.set_env("ARS_DEFAULT_MODEL", "local/llama3.1:8b");
            jail.set_env("ARS_SANDBOX", "host");
            jail.set_env("ARS_EVENT_RETENTION_S", "5");
            jail.set_env("ARS_MAX_CONCURRENT_RUNS", "3");
            let config = Config::load(None).map_err(|e| e.to_string())?;
            let model = config.defaults.base.model.clone().unwrap_or_else(|| {
                panic!("ARS_DEFAULT_MODEL sets the base model");
            });
            assert_eq!(
                (model.provider.as_str(), model.name.as_str()),
                ("local", "llama3.1:8b")
            );
            assert_eq!(config.models.providers[0].name, "local");
            assert_eq!(config.sandbox, SandboxMode::Host);
            assert_eq!(config.event_retention_s, 5);
            assert_eq!(config.runtime_config().max_concurrent_runs, 3);
            Ok(())
        });
    }

    #[test]
    fn a_malformed_default_model_is_refused() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("ARS_DEFAULT_MODEL", "gpt-4o");
            let error = Config::load(None)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains("default_model"), "{error}");
            jail.set_env("ARS_DEFAULT_MODEL", "openai/gpt-4o");
            jail.set_env("ARS_SANDBOX", "docker");
            assert!(Config::load(None).is_err());
            Ok(())
        });
    }

    #[test]
    fn unknown_settings_are_refused() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("ars.toml", "bnid = \"x\"")?;
            assert!(Config::load(None).is_err());
            Ok(())
        });
    }
}
