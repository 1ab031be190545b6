//! Server configuration: built-in defaults, then `ars.toml`, then `ARS_*` environment variables.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use ars_domain::ContextDefaults;

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
        }
    }
}

/// Read from the working directory when no file is named.
const DEFAULT_FILE: &str = "ars.toml";

/// The top-level settings that `ARS_<NAME>` variables may set.
const SETTINGS: [&str; 7] = [
    "bind",
    "data_dir",
    "database_url",
    "admin_password",
    "body_limit",
    "session_ttl_hours",
    "log_format",
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
        figment
            .extract()
            .map_err(|e| anyhow::anyhow!("invalid configuration: {e}"))
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
        }
    }
}

/// Structured logs to stderr; `RUST_LOG` overrides the default filter.
pub fn init_tracing(config: &Config) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
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
    fn unknown_settings_are_refused() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("ars.toml", "bnid = \"x\"")?;
            assert!(Config::load(None).is_err());
            Ok(())
        });
    }
}
