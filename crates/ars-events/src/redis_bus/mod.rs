//! The scaled event bus: one Redis Stream per run, shared by every `ars serve` instance.
//!
//! One key per run, `{prefix}:run:{run_id}:events`, a stream whose entry ids are
//! `0-{event id}`: Redis itself then orders, ranges, trims and resumes by event id, and an
//! `XREAD` from `0-{Last-Event-ID}` is exactly "every event after the one the client saw".
//! Each entry holds the event's JSON (without the id) in field `event`; the terminal event also
//! carries `terminal = 1`, which is how a publish learns the run is closed.
//!
//! Publishing runs one Lua script (`publish.lua`), so the closed check, the next id (the last
//! entry's id + 1), the append and the trim are atomic across instances. The terminal event
//! sets the key's TTL to `retention`; Redis then forgets the run on its own.
//!
//! Subscribing checks the retained window, then follows the run's mirror on this instance
//! (`mirror`): one reader per run, with `XREAD BLOCK` on a dedicated connection (a blocked read
//! would stall every other command multiplexed on a shared one), whose events every subscriber
//! here shares. Publishing and the window check share one auto-reconnecting connection.
//!
//! Thread and knowledge events go over pub/sub instead (`topics`): they are never replayed.

mod mirror;
mod topics;

use std::sync::Arc;
use std::time::Duration;

use ars_domain::{KnowledgeBaseId, RunId, ThreadId};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::streams::{StreamId, StreamRangeReply};
use redis::{AsyncCommands, AsyncConnectionConfig, Client, Script};
use serde::{Deserialize, Serialize};

use crate::{
    EventBus, EventError, EventKind, EventStream, KnowledgeEvent, KnowledgeEventStream, RunEvent,
    RunRef, ThreadEvent, ThreadEventStream,
};
use mirror::{Mirrors, Reading};

/// How long one `XREAD` waits for new events before the subscriber checks the run still exists
/// (an expired run would otherwise be waited on forever).
const READ_BLOCK: Duration = Duration::from_secs(5);
/// Most entries one read returns.
const READ_BATCH: usize = 256;
/// Bounds on reaching Redis and on any reply (beyond a read's own blocking time), so a dead
/// server turns into an error instead of a hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);
/// Stream entry fields.
const EVENT_FIELD: &str = "event";
const TERMINAL_FIELD: &str = "terminal";

/// Tuning for [`RedisBus`].
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// How long a finished run's events stay available, counted from its terminal event.
    pub retention: Duration,
    /// Namespace of every key this bus writes, so several deployments (or tests) can share a
    /// Redis.
    pub key_prefix: String,
    /// Most events kept per run (exact `MAXLEN`): past it the oldest are trimmed and
    /// subscribers that still needed them get `NotRetained`. At least 1.
    pub max_len: usize,
}

impl Default for RedisConfig {
    fn default() -> Self {
        Self {
            retention: Duration::from_secs(60 * 60),
            key_prefix: "ars".into(),
            max_len: 100_000,
        }
    }
}

/// The Redis Streams [`EventBus`]. A cheap `Clone` handle; instances connected to the same
/// Redis with the same `key_prefix` share every run.
#[derive(Clone)]
pub struct RedisBus {
    /// Opens the dedicated connection of each subscriber.
    client: Client,
    /// Publishes and window checks; reconnects by itself after a failure.
    shared: ConnectionManager,
    config: RedisConfig,
    publish: Script,
    /// What this instance reads of the runs it streams, one reader per run for all of its
    /// subscribers here.
    mirrors: Arc<Mirrors>,
}

/// An event as stored: everything but the id, which is the entry id.
#[derive(Serialize)]
struct StoredRef<'a> {
    #[serde(flatten)]
    run: &'a RunRef,
    at: DateTime<Utc>,
    #[serde(flatten)]
    kind: &'a EventKind,
}

#[derive(Deserialize)]
struct Stored {
    #[serde(flatten)]
    run: RunRef,
    at: DateTime<Utc>,
    #[serde(flatten)]
    kind: EventKind,
}

impl RedisBus {
    /// Connects to `url` (`redis://…` or `rediss://…`); fails if Redis cannot be reached.
    pub async fn connect(url: &str, config: RedisConfig) -> Result<Self, EventError> {
        let client = Client::open(url).map_err(EventError::backend)?;
        let shared = ConnectionManager::new_with_config(
            client.clone(),
            ConnectionManagerConfig::new()
                .set_connection_timeout(CONNECT_TIMEOUT)
                .set_response_timeout(RESPONSE_TIMEOUT),
        )
        .await
        .map_err(EventError::backend)?;
        let config = RedisConfig {
            max_len: config.max_len.max(1),
            ..config
        };
        Ok(Self {
            client,
            shared,
            config,
            publish: Script::new(include_str!("publish.lua")),
            mirrors: Arc::default(),
        })
    }

    /// The stream key of a run.
    fn events_key(&self, run_id: RunId) -> String {
        format!("{}:run:{run_id}:events", self.config.key_prefix)
    }

    /// How many runs this instance reads for its subscribers now (for tests and metrics: a
    /// run nobody here follows holds no reader).
    pub fn mirrored_runs(&self) -> usize {
        self.mirrors.mirrored()
    }

    fn retention_ms(&self) -> u64 {
        u64::try_from(self.config.retention.as_millis())
            .unwrap_or(u64::MAX)
            .max(1)
    }
}

#[async_trait]
impl EventBus for RedisBus {
    async fn publish(&self, run: &RunRef, kind: EventKind) -> Result<RunEvent, EventError> {
        let at = Utc::now();
        let json = serde_json::to_string(&StoredRef {
            run,
            at,
            kind: &kind,
        })
        .map_err(EventError::backend)?;
        let mut invocation = self.publish.prepare_invoke();
        invocation
            .key(self.events_key(run.run_id))
            .arg(json)
            .arg(if kind.is_terminal() { "1" } else { "0" })
            .arg(self.config.max_len)
            .arg(self.retention_ms());
        let id: i64 = invocation
            .invoke_async(&mut self.shared.clone())
            .await
            .map_err(EventError::backend)?;
        let id = u64::try_from(id).map_err(|_| EventError::Closed)?;
        Ok(RunEvent {
            id,
            run: run.clone(),
            at,
            kind,
        })
    }

    async fn subscribe(&self, run_id: RunId, after: u64) -> Result<EventStream, EventError> {
        let key = self.events_key(run_id);
        // First and last entry in one snapshot: the retained window and whether it is closed.
        let (first, last): (StreamRangeReply, StreamRangeReply) = redis::pipe()
            .atomic()
            .cmd("XRANGE")
            .arg(&key)
            .arg("-")
            .arg("+")
            .arg("COUNT")
            .arg(1)
            .cmd("XREVRANGE")
            .arg(&key)
            .arg("+")
            .arg("-")
            .arg("COUNT")
            .arg(1)
            .query_async(&mut self.shared.clone())
            .await
            .map_err(EventError::backend)?;
        let (Some(first), Some(last)) = (first.ids.first(), last.ids.first()) else {
            return Err(EventError::NotRetained);
        };
        if after.saturating_add(1) < entry_id(first)? {
            return Err(EventError::NotRetained);
        }
        if last.contains_key(TERMINAL_FIELD) && entry_id(last)? <= after {
            return Ok(futures::stream::empty().boxed());
        }

        let mirror = match self.mirrors.join(run_id, after) {
            Some(mirror) => mirror,
            None => {
                // A blocked `XREAD` would stall every other command multiplexed on a shared
                // connection: the mirror reads on one of its own.
                let conn = self
                    .client
                    .get_multiplexed_async_connection_with_config(
                        &AsyncConnectionConfig::new()
                            .set_connection_timeout(CONNECT_TIMEOUT)
                            .set_response_timeout(READ_BLOCK + RESPONSE_TIMEOUT),
                    )
                    .await
                    .map_err(EventError::backend)?;
                self.mirrors
                    .start(run_id, key, after, self.config.max_len, conn)
            }
        };
        Ok(
            futures::stream::unfold(Some(Reading::new(mirror, after)), |reading| async move {
                let mut reading = reading?;
                match reading.next().await? {
                    Ok(event) => Some((Ok(event), Some(reading))),
                    // An error is the last item.
                    Err(err) => Some((Err(err), None)),
                }
            })
            .boxed(),
        )
    }

    async fn until_terminal(&self, run_id: RunId) -> Result<(), EventError> {
        let last: StreamRangeReply = self
            .shared
            .clone()
            .xrevrange_count(self.events_key(run_id), "+", "-", 1)
            .await
            .map_err(EventError::backend)?;
        let last = last.ids.first().ok_or(EventError::NotRetained)?;
        if last.contains_key(TERMINAL_FIELD) {
            return Ok(());
        }
        // Only what comes after the last event so far: a long run is not read again.
        let mut events = self.subscribe(run_id, entry_id(last)?).await?;
        while let Some(event) = events.next().await {
            event?;
        }
        Ok(())
    }

    async fn publish_thread(
        &self,
        thread: &ThreadId,
        event: &ThreadEvent,
    ) -> Result<(), EventError> {
        topics::publish(self, self.thread_channel(thread), event.encode()?).await
    }

    async fn follow_thread(&self, thread: &ThreadId) -> Result<ThreadEventStream, EventError> {
        topics::follow(self, self.thread_channel(thread), ThreadEvent::decode).await
    }

    async fn publish_knowledge(
        &self,
        kb: KnowledgeBaseId,
        event: &KnowledgeEvent,
    ) -> Result<(), EventError> {
        topics::publish(self, self.knowledge_channel(kb), event.encode()?).await
    }

    async fn follow_knowledge(
        &self,
        kb: KnowledgeBaseId,
    ) -> Result<KnowledgeEventStream, EventError> {
        topics::follow(self, self.knowledge_channel(kb), KnowledgeEvent::decode).await
    }
}

/// The event id of a stream entry (`0-{id}`).
fn entry_id(entry: &StreamId) -> Result<u64, EventError> {
    entry
        .id
        .strip_prefix("0-")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| EventError::Decode(format!("unexpected stream entry id {}", entry.id)))
}

/// A stored entry back into the event it was published as.
fn decode(entry: &StreamId) -> Result<RunEvent, EventError> {
    let id = entry_id(entry)?;
    let json: String = entry
        .get(EVENT_FIELD)
        .ok_or_else(|| EventError::Decode(format!("entry {} has no event", entry.id)))?;
    let stored: Stored = serde_json::from_str(&json)
        .map_err(|err| EventError::Decode(format!("entry {}: {err}", entry.id)))?;
    Ok(RunEvent {
        id,
        run: stored.run,
        at: stored.at,
        kind: stored.kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> StreamId {
        StreamId {
            id: id.into(),
            ..StreamId::default()
        }
    }

    #[test]
    fn entry_ids_are_event_ids_and_foreign_ids_are_refused() {
        assert_eq!(entry_id(&entry("0-1")).unwrap(), 1);
        assert_eq!(entry_id(&entry("0-123456")).unwrap(), 123_456);
        assert!(matches!(
            entry_id(&entry("1700000000000-0")),
            Err(EventError::Decode(_))
        ));
        assert!(matches!(decode(&entry("0-1")), Err(EventError::Decode(_))));
    }
}
