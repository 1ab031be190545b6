//! What each subcommand does.

use std::io::BufRead;
use std::sync::Arc;

use anyhow::Context;

use ars_api::accounts;
use ars_domain::user::last_admin_refusal;
use ars_domain::{AccountChange, Role, User};
use ars_store::{AccountStore, UserUpdate};

use crate::cli::{Command, KbCommand, McpCommand, TokenCommand, UserCommand};
use crate::config::Config;
use crate::server;

pub async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve => serve(config).await,
        Command::Chat(args) => crate::chat::run(args, config).await,
        Command::Migrate => {
            let store = server::open_store(&config).await?;
            tracing::info!(store = store.kind(), "migrations applied");
            Ok(())
        }
        Command::User(cmd) => user(cmd, &config, &*server::open_store(&config).await?).await,
        Command::Token(cmd) => token(cmd, &*server::open_store(&config).await?).await,
        Command::Mcp(McpCommand::Check(args)) => crate::mcp_check::run(args).await,
        Command::Kb(KbCommand::Reindex { slugs }) => reindex(&config, &slugs).await,
    }
}

/// `ars kb reindex`: rebuilds the named knowledge bases' indexes (all, when none is named).
async fn reindex(config: &Config, slugs: &[String]) -> anyhow::Result<()> {
    let store = server::open_store(config).await?;
    // Rebuilding an index changes no document: nobody needs telling, so the bus is local.
    let hub = ars_runtime::knowledge::KnowledgeHub::new(
        Arc::clone(&store) as Arc<dyn ars_store::KnowledgeStore>,
        Arc::new(ars_events::InProcessBus::new(Default::default())),
        config.knowledge.runtime_config(&config.data_dir),
    );
    let all = store
        .list_knowledge_bases(ars_store::KnowledgeBaseFilter::default())
        .await?;
    let chosen: Vec<_> = if slugs.is_empty() {
        all
    } else {
        let mut chosen = Vec::new();
        for slug in slugs {
            let kb = all
                .iter()
                .find(|kb| &kb.fields.slug == slug)
                .with_context(|| format!("no knowledge base `{slug}`"))?;
            chosen.push(kb.clone());
        }
        chosen
    };
    for kb in chosen {
        let chunks = hub
            .reindex(kb.id)
            .await
            .with_context(|| format!("cannot rebuild the index of `{}`", kb.fields.slug))?;
        println!("{}: {chunks} chunks indexed", kb.fields.slug);
    }
    Ok(())
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let store = server::open_store(&config).await?;
    let state = server::build(&config, Arc::clone(&store)).await?;
    // Runs a previous process left active were cut off: they end `interrupted`, with every
    // message they committed, and their threads take new runs again.
    state
        .runtime
        .recover()
        .await
        .context("cannot mark interrupted runs")?;
    server::ensure_admin(&*store, &config).await?;
    if let Some(addr) = config.metrics_listen {
        server::spawn_metrics_listener(addr, &state).await?;
    }
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let addr = listener.local_addr()?;
    tracing::info!(store = store.kind(), data_dir = %config.data_dir.display(), "listening on http://{addr}");
    server::run(listener, state, shutdown_signal()).await?;
    tracing::info!("shut down");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for ctrl-c");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutdown requested; no new connections, stopping active runs");
}

async fn user(cmd: UserCommand, config: &Config, store: &dyn AccountStore) -> anyhow::Result<()> {
    let policy = config.password_policy();
    match cmd {
        UserCommand::Add {
            username,
            admin,
            password_stdin,
        } => {
            let (password, generated) = new_password(password_stdin, policy.min_chars)?;
            let role = if admin { Role::Admin } else { Role::User };
            let user = accounts::create_user(store, policy, &username, &password, role)
                .await
                .map_err(|e| anyhow::anyhow!("cannot create user: {}", server::describe(&e)))?;
            println!(
                "created {} ({}, id {})",
                user.username,
                user.role.as_str(),
                user.id
            );
            if generated {
                println!("password: {password}");
            }
            Ok(())
        }
        UserCommand::List => {
            for user in store.list_users().await? {
                let disabled = if user.disabled { "\tdisabled" } else { "" };
                println!(
                    "{}\t{}\t{}{disabled}",
                    user.id,
                    user.username,
                    user.role.as_str()
                );
            }
            Ok(())
        }
        UserCommand::Disable { username } => set_disabled(store, &username, true).await,
        UserCommand::Enable { username } => set_disabled(store, &username, false).await,
        UserCommand::Password {
            username,
            password_stdin,
        } => {
            let user = named_user(store, &username).await?;
            let (password, generated) = new_password(password_stdin, policy.min_chars)?;
            accounts::change_password(store, policy, user.id, &password, None, "password")
                .await
                .map_err(|e| {
                    anyhow::anyhow!("cannot set the password: {}", server::describe(&e))
                })?;
            println!("password of {username} set; its tokens are revoked");
            if generated {
                println!("password: {password}");
            }
            Ok(())
        }
    }
}

/// A password from the first line of standard input, or a generated one (then `true`).
fn new_password(from_stdin: bool, min_chars: usize) -> anyhow::Result<(String, bool)> {
    if from_stdin {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        Ok((line.trim_end_matches(['\r', '\n']).to_string(), false))
    } else {
        Ok((ars_domain::credentials::generate_password(min_chars), true))
    }
}

async fn named_user(store: &dyn AccountStore, username: &str) -> anyhow::Result<User> {
    let (user, _) = store
        .user_credentials(username)
        .await?
        .with_context(|| format!("no user named {username}"))?;
    Ok(user)
}

/// Disables or enables an account, keeping an active admin as the API does.
async fn set_disabled(
    store: &dyn AccountStore,
    username: &str,
    disabled: bool,
) -> anyhow::Result<()> {
    let user = named_user(store, username).await?;
    let change = AccountChange {
        role: None,
        disabled: Some(disabled),
    };
    match store.update_user(user.id, change).await? {
        UserUpdate::Updated(_) => {
            let done = if disabled { "disabled" } else { "enabled" };
            println!("{username} {done}");
            Ok(())
        }
        UserUpdate::LastAdmin(user) => {
            anyhow::bail!("{}", last_admin_refusal(&user, &change))
        }
    }
}

async fn token(cmd: TokenCommand, store: &dyn AccountStore) -> anyhow::Result<()> {
    let TokenCommand::Create {
        username,
        name,
        expires_in_days,
    } = cmd;
    let (user, _) = store
        .user_credentials(&username)
        .await?
        .with_context(|| format!("no user named {username}"))?;
    let expires_at =
        expires_in_days.map(|days| ars_domain::time::now() + chrono::Duration::days(days.into()));
    let (secret, _) = accounts::create_token(store, &user, &name, expires_at)
        .await
        .map_err(|e| anyhow::anyhow!("cannot create token: {e}"))?;
    println!("{secret}");
    Ok(())
}
