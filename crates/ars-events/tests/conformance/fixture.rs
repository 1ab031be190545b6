//! What a check gets: a way to make buses of the implementation under test, plus helpers.

use std::sync::Arc;
use std::time::Duration;

use ars_domain::{RunId, RunStatus, ThreadId};
use ars_events::{
    ControlChannel, EventBus, EventError, EventKind, EventStream, InProcessBus, InProcessConfig,
    LocalChannel, RedisBus, RedisChannel, RedisConfig, RunEvent, RunRef, SharedEvent,
};
use futures::StreamExt;

/// Long enough for any check to finish reading a finished run; short checks override it.
pub const LONG: Duration = Duration::from_secs(600);

/// How long a check waits for a stream before calling it hung.
const STREAM_TIMEOUT: Duration = Duration::from_secs(10);

/// The bus settings a check asks for, mapped onto each implementation's config.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub retention: Duration,
    pub max_events: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            retention: LONG,
            max_events: 100_000,
        }
    }
}

/// The implementation under test.
pub enum Fixture {
    InProcess,
    /// Every bus of this fixture writes under `prefix`, unique to the test; dropping the
    /// fixture deletes those keys.
    Redis {
        url: String,
        prefix: String,
    },
}

impl Fixture {
    pub fn in_process() -> Self {
        Self::InProcess
    }

    /// `None` when `ARS_TEST_REDIS_URL` is not set.
    pub fn redis() -> Option<Self> {
        let url = std::env::var("ARS_TEST_REDIS_URL").ok()?;
        let prefix = format!("ars-test-{}", RunId::new());
        Some(Self::Redis { url, prefix })
    }

    /// A bus with default options.
    pub async fn bus(&self) -> Arc<dyn EventBus> {
        self.bus_with(Options::default()).await
    }

    /// A new, empty bus.
    pub async fn bus_with(&self, options: Options) -> Arc<dyn EventBus> {
        match self {
            Self::InProcess => Arc::new(InProcessBus::new(InProcessConfig {
                retention: options.retention,
                max_events_per_run: options.max_events,
                memory_budget: None,
            })),
            Self::Redis { url, prefix } => Arc::new(
                RedisBus::connect(
                    url,
                    RedisConfig {
                        retention: options.retention,
                        key_prefix: prefix.clone(),
                        max_len: options.max_events,
                    },
                )
                .await
                .unwrap(),
            ),
        }
    }

    /// Another instance sharing `bus`'s events, as a second `ars serve` would: on Redis a new
    /// connection with the same prefix; in process it can only be another handle on `bus`.
    pub async fn peer(&self, bus: &Arc<dyn EventBus>, options: Options) -> Arc<dyn EventBus> {
        match self {
            Self::InProcess => Arc::clone(bus),
            Self::Redis { .. } => self.bus_with(options).await,
        }
    }

    /// A control channel of the implementation under test.
    pub async fn control(&self) -> Arc<dyn ControlChannel> {
        match self {
            Self::InProcess => Arc::new(LocalChannel::new()),
            Self::Redis { url, prefix } => {
                Arc::new(RedisChannel::connect(url, prefix).await.unwrap())
            }
        }
    }

    /// Another instance's handle on `channel`: on Redis its own connections, in process
    /// another handle on the same channel.
    pub async fn control_peer(&self, channel: &Arc<dyn ControlChannel>) -> Arc<dyn ControlChannel> {
        match self {
            Self::InProcess => Arc::clone(channel),
            Self::Redis { .. } => self.control().await,
        }
    }
}

impl Drop for Fixture {
    /// Deletes the test's keys, also when the check panicked. Synchronous, because `Drop` is.
    fn drop(&mut self) {
        let Self::Redis { url, prefix } = self else {
            return;
        };
        let cleanup = || -> redis::RedisResult<()> {
            let mut conn = redis::Client::open(url.as_str())?.get_connection()?;
            let keys: Vec<String> =
                redis::Commands::scan_match(&mut conn, format!("{prefix}:*"))?.collect();
            if !keys.is_empty() {
                redis::Commands::del::<_, ()>(&mut conn, keys)?;
            }
            Ok(())
        };
        if let Err(err) = cleanup() {
            eprintln!("could not delete test keys under {prefix}: {err}");
        }
    }
}

/// A fresh top-level run.
pub fn new_run() -> RunRef {
    RunRef::top_level(RunId::new(), ThreadId::new())
}

pub fn running() -> EventKind {
    EventKind::status(RunStatus::Running)
}

pub fn success() -> EventKind {
    EventKind::RunStatus {
        status: RunStatus::Success,
        error: None,
        error_code: None,
        output: Some("done".into()),
    }
}

pub fn delta(n: u64) -> EventKind {
    EventKind::MessageDelta {
        text: format!("chunk {n}"),
    }
}

/// Publishes `running`, `deltas` deltas and (if `finish`) `success`; returns the events.
pub async fn publish_run(
    bus: &dyn EventBus,
    run: &RunRef,
    deltas: u64,
    finish: bool,
) -> Vec<RunEvent> {
    let mut events = vec![bus.publish(run, running()).await.unwrap()];
    for n in 0..deltas {
        events.push(bus.publish(run, delta(n)).await.unwrap());
    }
    if finish {
        events.push(bus.publish(run, success()).await.unwrap());
    }
    events
}

/// Reads the whole stream (it must end), failing the test if it hangs or yields an error.
pub async fn collect(stream: EventStream) -> Vec<RunEvent> {
    let items = collect_results(stream).await;
    items
        .into_iter()
        .map(|item| item.unwrap_or_else(|err| panic!("stream yielded an error: {err}")))
        .collect()
}

/// Reads the whole stream (it must end), keeping errors as items.
pub async fn collect_results(stream: EventStream) -> Vec<Result<RunEvent, EventError>> {
    tokio::time::timeout(STREAM_TIMEOUT, stream.collect::<Vec<_>>())
        .await
        .expect("the stream did not end")
        .into_iter()
        .map(|item| item.map(SharedEvent::into_event))
        .collect()
}

/// Reads the next `n` events, failing if the stream ends, errs or hangs first.
pub async fn take(stream: &mut EventStream, n: usize) -> Vec<RunEvent> {
    let mut events = Vec::with_capacity(n);
    for _ in 0..n {
        let next = tokio::time::timeout(STREAM_TIMEOUT, stream.next())
            .await
            .expect("the stream hung")
            .expect("the stream ended early")
            .expect("the stream yielded an error");
        events.push(next.into_event());
    }
    events
}

/// The ids of `events`.
pub fn ids(events: &[RunEvent]) -> Vec<u64> {
    events.iter().map(|e| e.id).collect()
}

/// Whether `result` is `NotRetained`.
pub fn is_not_retained<T>(result: &Result<T, EventError>) -> bool {
    matches!(result, Err(EventError::NotRetained))
}
