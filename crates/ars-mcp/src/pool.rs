//! Open connections, shared: one per key (for a stdio server, the server and the root
//! conversation's runtime scope, so a parent and its subagents share one process; for an HTTP
//! server, the server and the user).
//!
//! A connection opens on first use; concurrent first users wait for the one opening. It is
//! closed when idle past the idle timeout (a sweep in the background), when it is evicted to
//! make room, and at shutdown. A connection that died is opened again on next use, with
//! back-off when it keeps dying young or failing to start. Process connections are bounded in
//! number: at the bound the least recently used idle one is closed, and with none idle the
//! caller gets [`McpError::LimitReached`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::client::Connection;
use crate::error::McpError;

/// How the pool behaves.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Server processes running at once, over every server and conversation.
    pub max_processes: usize,
    /// A connection nobody used for this long is closed.
    pub idle_timeout: Duration,
    /// The first back-off after a failure; it doubles with each failure in a row.
    pub backoff_initial: Duration,
    /// The longest back-off.
    pub backoff_max: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_processes: 64,
            idle_timeout: Duration::from_secs(600),
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
        }
    }
}

/// What a connection is shared by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PoolKey {
    /// The server's id.
    pub server: String,
    /// The server's configuration revision (its `updated_at`): a changed server gets a new
    /// connection, and the old one idles out.
    pub revision: String,
    /// The root runtime scope (stdio) or the user (HTTP).
    pub partition: String,
}

/// A connection that lived at least this long did not "die young": its death resets the
/// back-off.
const STABLE_AFTER: Duration = Duration::from_secs(30);
/// A back-off shorter than this is waited out; a longer one fails the caller at once.
const MAX_WAIT: Duration = Duration::from_secs(2);

/// The shared connections. A cheap `Clone` handle.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    config: PoolConfig,
    slots: Mutex<HashMap<PoolKey, Arc<Slot>>>,
    processes: Arc<Semaphore>,
}

#[derive(Default)]
struct Slot {
    state: tokio::sync::Mutex<SlotState>,
    last_used: Mutex<Option<Instant>>,
}

#[derive(Default)]
struct SlotState {
    live: Option<Live>,
    /// Failures (deaths young or failed starts) in a row.
    failures: u32,
    last_start: Option<Instant>,
    last_error: Option<String>,
}

struct Live {
    connection: Arc<Connection>,
    /// Held while a process runs.
    _permit: Option<OwnedSemaphorePermit>,
}

impl Slot {
    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map_or(Duration::MAX, |at| at.elapsed())
    }
}

impl Pool {
    /// An empty pool. In a Tokio runtime it sweeps idle connections in the background for as
    /// long as a handle to it lives.
    pub fn new(config: PoolConfig) -> Self {
        let processes = Arc::new(Semaphore::new(config.max_processes));
        let pool = Self {
            inner: Arc::new(Inner {
                config,
                slots: Mutex::default(),
                processes,
            }),
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            let weak = Arc::downgrade(&pool.inner);
            let every = (pool.inner.config.idle_timeout / 4)
                .clamp(Duration::from_millis(200), Duration::from_secs(30));
            tokio::spawn(sweep_forever(weak, every));
        }
        pool
    }

    /// The configuration.
    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// The connection for `key`, opened with `connect` when there is none (or it died).
    /// `is_process` says whether it counts against the process bound.
    pub async fn get<F, Fut>(
        &self,
        key: &PoolKey,
        server: &str,
        is_process: bool,
        connect: F,
    ) -> Result<Arc<Connection>, McpError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Connection, McpError>>,
    {
        let slot = self.slot(key);
        slot.touch();
        let mut state = slot.state.lock().await;
        if let Some(live) = &state.live {
            if !live.connection.is_closed() {
                return Ok(Arc::clone(&live.connection));
            }
            let lived = live.connection.age();
            tracing::warn!(
                server,
                lived_s = lived.as_secs(),
                "MCP server stopped; it is started again on next use"
            );
            state.failures = if lived < STABLE_AFTER {
                state.failures + 1
            } else {
                0
            };
            state.last_error = Some(format!("it stopped after {} s", lived.as_secs()));
            state.live = None;
        }
        if state.failures > 0
            && let Some(started) = state.last_start
        {
            let backoff = self.backoff(state.failures);
            let since = started.elapsed();
            if since < backoff {
                let remaining = backoff - since;
                if remaining > MAX_WAIT {
                    return Err(McpError::Start {
                        server: server.into(),
                        message: format!(
                            "it failed {} time(s) in a row (last: {}); next attempt in {} s",
                            state.failures,
                            state.last_error.as_deref().unwrap_or("unknown"),
                            remaining.as_secs().max(1)
                        ),
                    });
                }
                tokio::time::sleep(remaining).await;
            }
        }
        let permit = if is_process {
            Some(self.process_permit(key, server).await?)
        } else {
            None
        };
        state.last_start = Some(Instant::now());
        match connect().await {
            Ok(connection) => {
                let connection = Arc::new(connection);
                state.live = Some(Live {
                    connection: Arc::clone(&connection),
                    _permit: permit,
                });
                Ok(connection)
            }
            Err(error) => {
                state.failures += 1;
                state.last_error = Some(error.to_string());
                Err(error)
            }
        }
    }

    /// Drops `connection` from the pool after an error that broke it, so the next use opens
    /// a new one (a newer connection under the same key is left alone).
    pub async fn discard(&self, key: &PoolKey, connection: &Arc<Connection>) {
        let Some(slot) = self.existing(key) else {
            return;
        };
        let mut state = slot.state.lock().await;
        if state
            .live
            .as_ref()
            .is_some_and(|live| Arc::ptr_eq(&live.connection, connection))
        {
            if connection.age() < STABLE_AFTER {
                state.failures += 1;
            }
            state.last_error = Some("the connection broke".into());
            state.live = None;
        }
    }

    /// Closes the connections of `server` under `partition` that belong to another revision
    /// than `current` and that nobody holds (the server was changed: its old process would
    /// only idle out).
    pub async fn retire_revisions(&self, server: &str, partition: &str, current: &str) {
        let stale: Vec<(PoolKey, Arc<Slot>)> = {
            let slots = self
                .inner
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            slots
                .iter()
                .filter(|(key, _)| {
                    key.server == server && key.partition == partition && key.revision != current
                })
                .map(|(key, slot)| (key.clone(), Arc::clone(slot)))
                .collect()
        };
        for (key, slot) in stale {
            let Ok(mut state) = slot.state.try_lock() else {
                continue;
            };
            if state
                .live
                .as_ref()
                .is_some_and(|live| Arc::strong_count(&live.connection) > 1)
            {
                continue;
            }
            let live = state.live.take();
            drop(state);
            if let Some(live) = live {
                tracing::info!(
                    server = live.connection.server(),
                    "closing the connection of a changed MCP server's old settings"
                );
                close(live).await;
            }
            let mut slots = self
                .inner
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                slots.remove(&key);
            }
        }
    }

    /// Server processes running now.
    pub fn processes(&self) -> usize {
        self.inner.config.max_processes - self.inner.processes.available_permits()
    }

    /// Closes every connection now (server shutdown).
    pub async fn shutdown(&self) {
        let slots: Vec<Arc<Slot>> = {
            let mut slots = self
                .inner
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            slots.drain().map(|(_, slot)| slot).collect()
        };
        // Each close may wait a moment for its process: together, not one after another.
        futures::future::join_all(slots.into_iter().map(|slot| async move {
            let live = slot.state.lock().await.live.take();
            if let Some(live) = live {
                close(live).await;
            }
        }))
        .await;
    }

    /// Closes connections idle past the idle timeout that nobody holds.
    pub async fn sweep(&self) {
        sweep(&self.inner).await;
    }

    fn backoff(&self, failures: u32) -> Duration {
        let config = &self.inner.config;
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
        config
            .backoff_initial
            .saturating_mul(factor)
            .min(config.backoff_max)
    }

    fn slot(&self, key: &PoolKey) -> Arc<Slot> {
        let mut slots = self
            .inner
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(slots.entry(key.clone()).or_default())
    }

    fn existing(&self, key: &PoolKey) -> Option<Arc<Slot>> {
        let slots = self
            .inner
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        slots.get(key).cloned()
    }

    /// A place for one more process: free, or made by closing the least recently used idle
    /// process (not `key`'s own).
    async fn process_permit(
        &self,
        key: &PoolKey,
        server: &str,
    ) -> Result<OwnedSemaphorePermit, McpError> {
        loop {
            if let Ok(permit) = Arc::clone(&self.inner.processes).try_acquire_owned() {
                return Ok(permit);
            }
            if !self.evict_one(key).await {
                return Err(McpError::LimitReached {
                    server: server.into(),
                    limit: self.inner.config.max_processes,
                });
            }
        }
    }

    /// Closes the least recently used idle process connection; `false` when there is none.
    async fn evict_one(&self, except: &PoolKey) -> bool {
        let mut candidates: Vec<(Duration, Arc<Slot>)> = {
            let slots = self
                .inner
                .slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            slots
                .iter()
                .filter(|(key, _)| *key != except)
                .map(|(_, slot)| (slot.idle_for(), Arc::clone(slot)))
                .collect()
        };
        candidates.sort_by_key(|(idle, _)| std::cmp::Reverse(*idle));
        for (_, slot) in candidates {
            let Ok(mut state) = slot.state.try_lock() else {
                continue;
            };
            let idle = state.live.as_ref().is_some_and(|live| {
                live.connection.is_process() && Arc::strong_count(&live.connection) == 1
            });
            if idle && let Some(live) = state.live.take() {
                drop(state);
                tracing::info!(
                    server = live.connection.server(),
                    "closing an idle MCP server process to make room"
                );
                close(live).await;
                return true;
            }
        }
        false
    }
}

async fn close(live: Live) {
    let Live {
        connection,
        _permit: permit,
    } = live;
    match Arc::try_unwrap(connection) {
        Ok(connection) => connection.close().await,
        // Someone still holds it: it closes (and its process is killed) when they let go.
        Err(shared) => drop(shared),
    }
    drop(permit);
}

async fn sweep(inner: &Inner) {
    let idle_timeout = inner.config.idle_timeout;
    let slots: Vec<(PoolKey, Arc<Slot>)> = {
        let slots = inner.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots
            .iter()
            .filter(|(_, slot)| slot.idle_for() >= idle_timeout)
            .map(|(key, slot)| (key.clone(), Arc::clone(slot)))
            .collect()
    };
    for (key, slot) in slots {
        let Ok(mut state) = slot.state.try_lock() else {
            continue;
        };
        let held = state
            .live
            .as_ref()
            .is_some_and(|live| Arc::strong_count(&live.connection) > 1);
        if held {
            continue;
        }
        if let Some(live) = state.live.take() {
            tracing::debug!(
                server = live.connection.server(),
                "closing an idle MCP connection"
            );
            drop(state);
            close(live).await;
        } else {
            drop(state);
        }
        // Forget the slot (and its failure count) once it is idle and empty.
        let mut slots = inner.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.get(&key).is_some_and(|s| Arc::ptr_eq(s, &slot)) && Arc::strong_count(&slot) == 2 {
            slots.remove(&key);
        }
    }
}

async fn sweep_forever(inner: Weak<Inner>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        sweep(&inner).await;
    }
}
