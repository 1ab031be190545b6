//! The configuration's layering, defaults and checks.

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
fn an_extra_bind_the_sandbox_cannot_show_stops_the_load() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "ars.toml",
            r#"
            [sandbox]
            extra_ro_binds = ["/opt/mcp", "/tmp/tools"]
            "#,
        )?;
        let config = Config::load(None).map_err(|e| e.to_string())?;
        assert_eq!(config.sandbox_config().extra_ro_binds.len(), 2);
        jail.set_env(
            "ARS_SANDBOX__EXTRA_RO_BINDS",
            r#"["/home/gem/user-data/tools"]"#,
        );
        let err = Config::load(None).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains("sandbox.extra_ro_binds: `/home/gem/user-data/tools` is inside"),
            "{err}"
        );
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
fn the_event_memory_budget_defaults_to_the_bus_default_and_zero_means_none() {
    let config = Config::default();
    assert_eq!(
        config.event_memory_budget(),
        Some(ars_events::DEFAULT_MEMORY_BUDGET)
    );
    let unbounded = Config {
        event_memory_mb: 0,
        ..Config::default()
    };
    assert_eq!(unbounded.event_memory_budget(), None);
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
        jail.set_env("ARS_EVENT_MEMORY_MB", "2");
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
        assert_eq!(config.sandbox.mode, SandboxMode::Host);
        assert_eq!(config.event_retention_s, 5);
        assert_eq!(config.event_memory_budget(), Some(2 * 1024 * 1024));
        assert_eq!(config.runtime_config().max_concurrent_runs, 3);
        Ok(())
    });
}

#[test]
fn postgres_recovers_only_expired_leases_and_sqlite_every_active_run() {
    figment::Jail::expect_with(|jail| {
        let config = Config::load(None).map_err(|e| e.to_string())?;
        let runtime = config.runtime_config();
        assert_eq!(runtime.recovery, ars_runtime::Recovery::AllActive);
        assert_eq!(runtime.lease_ttl, std::time::Duration::from_secs(15));
        jail.set_env("ARS_DATABASE_URL", "postgres://db/ars");
        jail.set_env("ARS_LEASE_TTL_S", "6");
        let config = Config::load(None).map_err(|e| e.to_string())?;
        let runtime = config.runtime_config();
        assert_eq!(runtime.recovery, ars_runtime::Recovery::ExpiredLeases);
        assert_eq!(runtime.lease_ttl, std::time::Duration::from_secs(6));
        Ok(())
    });
}

#[test]
fn sandbox_limits_come_from_the_sandbox_table_and_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "ars.toml",
            r#"
            [sandbox]
            mode = "bubblewrap"

            [sandbox.limits]
            processes = 64
            workspace_quota_bytes = 1048576
            "#,
        )?;
        jail.set_env("ARS_SANDBOX__LIMITS__MEMORY_BYTES", "536870912");
        let config = Config::load(None).map_err(|e| e.to_string())?;
        let limits = &config.sandbox.limits;
        assert_eq!(config.sandbox.mode, SandboxMode::Bubblewrap);
        assert_eq!(
            (
                limits.processes,
                limits.workspace_quota_bytes,
                limits.memory_bytes
            ),
            (64, 1_048_576, 536_870_912)
        );
        // Unset limits keep their defaults.
        assert_eq!(limits.open_files, SandboxLimits::default().open_files);
        // A misspelt limit is an error, not silently ignored.
        jail.create_file("ars.toml", "[sandbox.limits]\nprocesess = 1\n")?;
        let error = Config::load(None).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("processes")));
        Ok(())
    });
}

/// Why loading the configuration as it stands fails ("" when it loads).
fn load_error() -> String {
    Config::load(None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

#[test]
fn the_postgresql_pool_size_comes_from_the_environment_and_zero_is_refused() {
    figment::Jail::expect_with(|jail| {
        let load = || Config::load(None).map_err(|e| e.to_string());
        assert_eq!(load()?.database_max_connections, None);
        jail.set_env("ARS_DATABASE_MAX_CONNECTIONS", "32");
        assert_eq!(load()?.database_max_connections, Some(32));
        jail.set_env("ARS_DATABASE_MAX_CONNECTIONS", "0");
        let error = load_error();
        assert!(error.contains("database_max_connections"), "{error}");
        jail.set_env("ARS_DATABASE_MAX_CONNECTIONS", "many");
        assert!(Config::load(None).is_err());
        Ok(())
    });
}

#[test]
fn a_malformed_default_model_is_refused() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("ARS_DEFAULT_MODEL", "gpt-4o");
        let error = load_error();
        assert!(error.contains("default_model"), "{error}");
        jail.set_env("ARS_DEFAULT_MODEL", "openai/gpt-4o");
        jail.set_env("ARS_SANDBOX", "docker");
        assert!(Config::load(None).is_err());
        Ok(())
    });
}

#[test]
fn auth_settings_have_defaults_and_come_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        let config = Config::load(None).map_err(|e| e.to_string())?;
        let api = config.api_config();
        assert_eq!(api.password_policy.min_chars, 12);
        assert_eq!(api.login_throttle.free_failures, 5);
        assert_eq!(api.login_throttle.max_backoff, Duration::from_secs(900));
        jail.set_env("ARS_PASSWORD_MIN_LENGTH", "16");
        jail.set_env("ARS_LOGIN_FREE_FAILURES", "3");
        jail.set_env("ARS_LOGIN_BACKOFF_INITIAL_S", "2");
        jail.set_env("ARS_LOGIN_BACKOFF_MAX_S", "60");
        jail.set_env("ARS_LOGIN_THROTTLE_ENTRIES", "100");
        let api = Config::load(None).map_err(|e| e.to_string())?.api_config();
        assert_eq!(api.password_policy.min_chars, 16);
        assert_eq!(api.login_throttle.free_failures, 3);
        assert_eq!(api.login_throttle.initial_backoff, Duration::from_secs(2));
        assert_eq!(api.login_throttle.max_backoff, Duration::from_secs(60));
        assert_eq!(api.login_throttle.max_entries, 100);
        jail.set_env("ARS_LOGIN_BACKOFF_MAX_S", "1");
        assert!(Config::load(None).is_err(), "max below initial");
        jail.set_env("ARS_LOGIN_BACKOFF_MAX_S", "60");
        jail.set_env("ARS_PASSWORD_MIN_LENGTH", "0");
        assert!(Config::load(None).is_err());
        Ok(())
    });
}

#[test]
fn metrics_settings_come_from_the_environment_and_default_to_admins_only() {
    figment::Jail::expect_with(|jail| {
        let config = Config::load(None).map_err(|e| e.to_string())?;
        assert!(matches!(
            config.metrics_access(),
            ars_api::MetricsAccess::Admins
        ));
        assert_eq!(config.metrics_listen, None);
        jail.set_env("ARS_METRICS_TOKEN", "scrape-secret");
        jail.set_env("ARS_METRICS_LISTEN", "127.0.0.1:9464");
        let config = Config::load(None).map_err(|e| e.to_string())?;
        assert!(matches!(
            config.metrics_access(),
            ars_api::MetricsAccess::Token(_)
        ));
        assert_eq!(
            config.metrics_listen.map(|a| a.to_string()).as_deref(),
            Some("127.0.0.1:9464")
        );
        // The token is never printed with the configuration's API side.
        let api = format!("{:?}", config.metrics_access());
        assert!(!api.contains("scrape-secret"), "{api}");
        jail.set_env("ARS_METRICS_TOKEN", " ");
        assert!(Config::load(None).is_err(), "an empty token is refused");
        jail.set_env("ARS_METRICS_TOKEN", "scrape-secret");
        jail.set_env("ARS_METRICS_LISTEN", "not an address");
        assert!(Config::load(None).is_err());
        Ok(())
    });
}

#[test]
fn mcp_settings_and_extra_sandbox_folders_come_from_the_file_and_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "ars.toml",
            r#"
            [sandbox]
            extra_ro_binds = ["/opt/mcp"]

            [mcp]
            call_timeout_s = 5
            max_processes = 3
            "#,
        )?;
        jail.set_env("ARS_MCP__IDLE_TIMEOUT_S", "42");
        let config = Config::load(None).map_err(|e| e.to_string())?;
        assert_eq!(
            config.sandbox.extra_ro_binds,
            vec![PathBuf::from("/opt/mcp")]
        );
        let mcp = config.mcp.runtime_config();
        assert_eq!(mcp.call_timeout, Duration::from_secs(5));
        assert_eq!(mcp.pool.max_processes, 3);
        assert_eq!(mcp.pool.idle_timeout, Duration::from_secs(42));
        // Unset ones keep their defaults.
        assert_eq!(mcp.connect_timeout, Duration::from_secs(30));
        jail.create_file("ars.toml", "[mcp]\ncall_timeout = 1\n")?;
        let error = Config::load(None).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("call_timeout")));
        Ok(())
    });
}

#[test]
fn every_top_level_setting_but_the_tables_has_an_environment_variable() {
    let text = Some(String::from("x"));
    let all_set = Config {
        database_url: text.clone(),
        admin_password: text.clone(),
        secret_key: Some(SecretText("x".into())),
        default_model: text.clone(),
        redis_url: text.clone(),
        metrics_token: text,
        metrics_listen: Some(SocketAddr::from(([127, 0, 0, 1], 9464))),
        ..Config::default()
    };
    let value = serde_json::to_value(all_set).map_err(|e| e.to_string());
    let keys: Vec<String> = value
        .ok()
        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
        .unwrap_or_default();
    assert!(keys.len() > SETTINGS.len(), "{keys:?}");
    for key in keys {
        let table = key == "defaults" || key == "models";
        assert!(table || SETTINGS.contains(&key.as_str()), "ARS_{key}");
    }
}

#[test]
fn the_secret_key_comes_from_the_environment_and_never_prints() {
    figment::Jail::expect_with(|jail| {
        let key = ars_domain::SecretKey::generate();
        jail.set_env("ARS_SECRET_KEY", key.to_base64().as_str());
        let config = Config::load(None).map_err(|e| e.to_string())?;
        let loaded = config.secret_key().map_err(|e| e.to_string())?;
        assert_eq!(loaded.id(), key.id());
        let debug = format!("{config:?}");
        assert!(!debug.contains(key.to_base64().as_str()), "{debug}");
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

#[test]
fn approval_rules_in_the_defaults_are_read_and_checked() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "ars.toml",
            r#"
            [defaults.base.approvals]
            execute = "ask"
            "mcp__github__*" = "deny"
            [defaults.subagent.approvals]
            "*" = "ask"
            "#,
        )?;
        let config = Config::load(None).map_err(|e| e.to_string())?;
        let base = config.defaults.base.approvals.clone().unwrap_or_default();
        assert_eq!(base.decide("execute"), ars_domain::Approval::Ask);
        assert_eq!(base.decide("mcp__github__list"), ars_domain::Approval::Deny);
        assert_eq!(base.decide("ls"), ars_domain::Approval::Allow);
        let sub = config
            .defaults
            .subagent
            .approvals
            .clone()
            .unwrap_or_default();
        assert_eq!(sub.decide("ls"), ars_domain::Approval::Ask);

        jail.create_file(
            "ars.toml",
            r#"
            [defaults.base.approvals]
            "rm -rf" = "deny"
            "#,
        )?;
        let err = Config::load(None).unwrap_err().to_string();
        assert!(err.contains("defaults.base.approvals.rm -rf"), "{err}");
        Ok(())
    });
}
