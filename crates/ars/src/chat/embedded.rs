//! The in-process server of `ars chat` without `--url`: the configured store, the same assembly
//! as `ars serve` (`server::build`), on 127.0.0.1:0, with a token minted for the chosen user.
//!
//! It does not run `Runtime::recover`: an `ars serve` may be running on the same store, and
//! recovering would mark that server's live runs interrupted. The chat only ever uses threads
//! it creates itself, so runs left over from elsewhere cannot block it.

use std::sync::Arc;

use anyhow::Context;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use ars_api::accounts;
use ars_domain::{TokenId, UserId};
use ars_store::Store;

use super::client::Client;
use crate::config::Config;
use crate::server;

/// The chat's token expires on its own even if the process dies before revoking it.
const TOKEN_TTL: chrono::Duration = chrono::Duration::hours(12);

pub struct Embedded {
    client: Client,
    store: Arc<dyn Store>,
    user: UserId,
    token: TokenId,
    stop: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Embedded {
    /// Opens the store, mints a token for `username` and starts serving.
    pub async fn start(config: &Config, username: &str) -> anyhow::Result<Self> {
        let store = server::open_store(config).await?;
        server::ensure_admin(&*store, config).await?;
        let (user, _) = store
            .user_credentials(username)
            .await?
            .with_context(|| format!("no user named `{username}` (see `ars user add`)"))?;
        let expires = ars_domain::time::now() + TOKEN_TTL;
        let (secret, token) = accounts::create_token(&*store, &user, "ars chat", Some(expires))
            .await
            .map_err(|e| anyhow::anyhow!("cannot create a token for `{username}`: {e}"))?;
        let state = server::build(config, Arc::clone(&store)).await?;
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("cannot open a local port for the embedded server")?;
        let base = format!("http://{}", listener.local_addr()?);
        tracing::info!("embedded server listening on {base}");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server::run(listener, state, async {
            let _ = stopped.await;
        }));
        Ok(Self {
            client: Client::new(&base, secret),
            store,
            user: user.id,
            token: token.id,
            stop,
            task,
        })
    }

    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Stops the server (active runs end `interrupted`) and revokes the chat's token.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "the embedded server stopped with an error"),
            Err(e) => tracing::warn!(error = %e, "the embedded server task failed"),
        }
        if let Err(e) = self.store.revoke_token(self.user, self.token).await {
            tracing::warn!(error = %e, "cannot revoke the chat's token; it expires on its own");
        }
    }
}
