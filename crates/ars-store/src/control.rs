//! [`PgControl`]: the control channel over PostgreSQL `LISTEN/NOTIFY`, for instances that share
//! a PostgreSQL database but no Redis. Every signal is one `NOTIFY ars_control, '<json>'`.

use std::str::FromStr;

use async_trait::async_trait;
use futures::StreamExt;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgPoolOptions};

use ars_events::{ControlChannel, EventError, Signal, SignalStream};

use crate::Result;

/// The notification channel (database-wide: every schema's instances hear it, which is
/// harmless, since run ids are unique).
const CHANNEL: &str = "ars_control";

/// Connections for sending; each listener has one of its own besides.
const SENDERS: u32 = 2;

/// The PostgreSQL control channel.
#[derive(Clone, Debug)]
pub struct PgControl {
    /// Sends.
    pool: PgPool,
    options: PgConnectOptions,
}

impl PgControl {
    /// Connects to a `postgres://` URL (the store's).
    pub async fn connect(url: &str) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)?;
        let pool = PgPoolOptions::new()
            .max_connections(SENDERS)
            .connect_with(options.clone())
            .await?;
        Ok(Self { pool, options })
    }
}

#[async_trait]
impl ControlChannel for PgControl {
    async fn send(&self, signal: Signal) -> Result<(), EventError> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(signal.encode())
            .execute(&self.pool)
            .await
            .map_err(EventError::backend)?;
        Ok(())
    }

    async fn listen(&self) -> Result<SignalStream, EventError> {
        // A connection of its own, which the listener also reconnects through; sends never
        // wait behind it.
        let own = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_with(self.options.clone())
            .await
            .map_err(EventError::backend)?;
        let mut listener = PgListener::connect_with(&own)
            .await
            .map_err(EventError::backend)?;
        listener
            .listen(CHANNEL)
            .await
            .map_err(EventError::backend)?;
        Ok(listener
            .into_stream()
            // An error ends the stream: the listener re-listens, and knows it may have missed
            // signals.
            .take_while(|item| futures::future::ready(item.is_ok()))
            .filter_map(|item| async move { Signal::decode(item.ok()?.payload()) })
            .boxed())
    }
}
