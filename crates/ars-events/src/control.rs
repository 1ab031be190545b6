//! The control channel: small signals between `ars serve` instances — "cancel this run",
//! "this run ended", "this account changed" — delivered to every instance listening, this one
//! included.
//!
//! Unlike run events, signals are not stored: an instance that is not listening when one is
//! sent never sees it. Whoever relies on a signal therefore has a slower path that does not
//! (the lease heartbeat stops a run ended elsewhere; a waiter reads the store once its wait
//! ends; what an instance remembers of an account is read again within a second).
//!
//! - [`LocalChannel`]: one process (embedded SQLite).
//! - [`RedisChannel`]: Redis pub/sub, when Redis is configured.
//! - PostgreSQL `LISTEN/NOTIFY` otherwise, in `ars-store` (the crate that knows SQL).

use std::time::Duration;

use ars_domain::{RunId, UserId};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Client};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::EventError;

/// Bounds on reaching Redis and on a reply.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// How many signals a slow local listener may fall behind before it skips some.
const LOCAL_CAPACITY: usize = 1024;

/// One signal between instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "signal", rename_all = "snake_case")]
pub enum Signal {
    /// A user cancelled the run: the instance executing it stops it.
    Cancel { run_id: RunId },
    /// The run's terminal status was written: waiters on other instances may stop waiting.
    Ended { run_id: RunId },
    /// A user's account or tokens changed (disabled, role, password, a token revoked): every
    /// instance forgets what it remembers of the user's credentials.
    AccountChanged { user_id: UserId },
}

impl Signal {
    /// The wire form: a small JSON object, e.g. `{"signal":"cancel","run_id":"…"}`.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// `None` for anything that is not a signal (another version's, or foreign traffic on the
    /// channel), which listeners skip.
    pub fn decode(payload: &str) -> Option<Self> {
        serde_json::from_str(payload).ok()
    }
}

/// Signals sent from the moment of `listen` on, by any instance. The stream ends when the
/// channel's connection is lost; listen again to go on (signals sent in between are missed).
pub type SignalStream = BoxStream<'static, Signal>;

/// Carries [`Signal`]s to every listening instance, this one included.
#[async_trait]
pub trait ControlChannel: Send + Sync + 'static {
    /// Sends `signal` to everyone listening now. Fire-and-forget.
    async fn send(&self, signal: Signal) -> Result<(), EventError>;

    /// Follows the signals sent from now on.
    async fn listen(&self) -> Result<SignalStream, EventError>;
}

/// The control channel of a single process: a broadcast in memory.
#[derive(Clone)]
pub struct LocalChannel {
    sender: broadcast::Sender<Signal>,
}

impl LocalChannel {
    pub fn new() -> Self {
        Self {
            sender: broadcast::channel(LOCAL_CAPACITY).0,
        }
    }
}

impl Default for LocalChannel {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl ControlChannel for LocalChannel {
    async fn send(&self, signal: Signal) -> Result<(), EventError> {
        // No listener is not an error: nobody needed to hear it.
        let _ = self.sender.send(signal);
        Ok(())
    }

    async fn listen(&self) -> Result<SignalStream, EventError> {
        let receiver = self.sender.subscribe();
        Ok(
            futures::stream::unfold(receiver, |mut receiver| async move {
                loop {
                    match receiver.recv().await {
                        Ok(signal) => return Some((signal, receiver)),
                        // Fell behind: the skipped signals are missed, as over a network.
                        Err(broadcast::error::RecvError::Lagged(_)) => {}
                        Err(broadcast::error::RecvError::Closed) => return None,
                    }
                }
            })
            .boxed(),
        )
    }
}

/// The control channel over Redis pub/sub: one channel, `{prefix}:control`, shared by every
/// instance connected with the same prefix.
#[derive(Clone)]
pub struct RedisChannel {
    client: Client,
    shared: ConnectionManager,
    channel: String,
}

impl RedisChannel {
    /// Connects to `url`; fails if Redis cannot be reached.
    pub async fn connect(url: &str, key_prefix: &str) -> Result<Self, EventError> {
        let client = Client::open(url).map_err(EventError::backend)?;
        let shared = ConnectionManager::new_with_config(
            client.clone(),
            ConnectionManagerConfig::new()
                .set_connection_timeout(CONNECT_TIMEOUT)
                .set_response_timeout(RESPONSE_TIMEOUT),
        )
        .await
        .map_err(EventError::backend)?;
        Ok(Self {
            client,
            shared,
            channel: format!("{key_prefix}:control"),
        })
    }
}

#[async_trait]
impl ControlChannel for RedisChannel {
    async fn send(&self, signal: Signal) -> Result<(), EventError> {
        let _receivers: i64 = self
            .shared
            .clone()
            .publish(&self.channel, signal.encode())
            .await
            .map_err(EventError::backend)?;
        Ok(())
    }

    async fn listen(&self) -> Result<SignalStream, EventError> {
        let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, self.client.get_async_pubsub())
            .await
            .map_err(EventError::backend)?
            .map_err(EventError::backend)?;
        pubsub
            .subscribe(&self.channel)
            .await
            .map_err(EventError::backend)?;
        Ok(pubsub
            .into_on_message()
            .filter_map(|message| async move {
                let payload: String = message.get_payload().ok()?;
                Signal::decode(&payload)
            })
            .boxed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_round_trip_and_foreign_payloads_are_skipped() {
        let signals = [
            (
                Signal::Cancel {
                    run_id: RunId::new(),
                },
                r#"{"signal":"cancel","run_id":""#,
            ),
            (
                Signal::AccountChanged {
                    user_id: UserId::new(),
                },
                r#"{"signal":"account_changed","user_id":""#,
            ),
        ];
        for (signal, wire) in signals {
            assert_eq!(Signal::decode(&signal.encode()), Some(signal));
            assert!(signal.encode().starts_with(wire), "{}", signal.encode());
        }
        for foreign in [
            "",
            "hello",
            r#"{"signal":"reboot"}"#,
            r#"{"signal":"cancel"}"#,
        ] {
            assert_eq!(Signal::decode(foreign), None, "{foreign}");
        }
    }
}
