//! What each subcommand does.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;

use ars_api::ApiError;
use ars_api::accounts::{self, AdminBootstrap};
use ars_domain::Role;
use ars_store::Store;

use crate::cli::{Command, TokenCommand, UserCommand};
use crate::config::Config;
use crate::server;

pub async fn run(command: Command, config: Config) -> anyhow::Result<()> {
    match command {
        Command::Serve => serve(config).await,
        Command::Chat(args) => crate::chat::run(args, config).await,
        Command::Migrate => {
            let store = open_store(&config).await?;
            tracing::info!(store = store.kind(), "migrations applied");
            Ok(())
        }
        Command::User(cmd) => user(cmd, &config, &*open_store(&config).await?).await,
        Command::Token(cmd) => token(cmd, &*open_store(&config).await?).await,
    }
}

/// Connects (creating the data dir for SQLite) and runs migrations.
pub async fn open_store(config: &Config) -> anyhow::Result<Arc<dyn Store>> {
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("cannot create data dir {}", config.data_dir.display()))?;
    let url = config.database_url();
    ars_store::connect(&url)
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

async fn serve(config: Config) -> anyhow::Result<()> {
    let store = open_store(&config).await?;
    let state = server::build(&config, Arc::clone(&store)).await?;
    // Runs a previous process left active were cut off: they end `interrupted`, with every
    // message they committed, and their threads take new runs again.
    state
        .runtime
        .recover()
        .await
        .context("cannot mark interrupted runs")?;
    ensure_admin(&*store, &config).await?;
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let addr = listener.local_addr()?;
    tracing::info!(store = store.kind(), data_dir = %config.data_dir.display(), "listening on http://{addr}");
    server::run(listener, state, shutdown_signal()).await?;
    tracing::info!("shut down");
    Ok(())
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
fn describe(error: &ApiError) -> String {
    match error {
        ApiError::Unprocessable {
            message,
            field: Some(field),
        } => format!("{field}: {message}"),
        other => other.to_string(),
    }
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

async fn user(cmd: UserCommand, config: &Config, store: &dyn Store) -> anyhow::Result<()> {
    let policy = config.password_policy();
    match cmd {
        UserCommand::Add {
            username,
            admin,
            password_stdin,
        } => {
            let (password, generated) = if password_stdin {
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line)?;
                (line.trim_end_matches(['\r', '\n']).to_string(), false)
            } else {
                (
                    ars_domain::credentials::generate_password(policy.min_chars),
                    true,
                )
            };
            let role = if admin { Role::Admin } else { Role::User };
            let user = accounts::create_user(store, policy, &username, &password, role)
                .await
                .map_err(|e| anyhow::anyhow!("cannot create user: {}", describe(&e)))?;
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
                println!("{}\t{}\t{}", user.id, user.username, user.role.as_str());
            }
            Ok(())
        }
    }
}

async fn token(cmd: TokenCommand, store: &dyn Store) -> anyhow::Result<()> {
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
