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

/// A listening connection and one for sending.
const CONNECTIONS: u32 = 2;

/// The PostgreSQL control channel.
#[derive(Clone, Debug)]
pub struct PgControl {
    pool: PgPool,
}

impl PgControl {
    /// Connects to a `postgres://` URL (the store's).
    pub async fn connect(url: &str) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(CONNECTIONS)
            .connect_with(PgConnectOptions::from_str(url)?)
            .await?;
        Ok(Self { pool })
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
        let mut listener = PgListener::connect_with(&self.pool)
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
