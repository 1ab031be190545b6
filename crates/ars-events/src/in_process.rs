//! The embedded event bus: every run's log in memory, for a single `ars serve` process.
//!
//! Each run has a log (the retained events, oldest first) and a `watch` channel that only says
//! "the log changed". Subscribers always read events *from the log*, so a slow subscriber never
//! lags behind a channel and never skips: it either catches up or, if the events it needs were
//! dropped to bound memory, gets [`EventError::NotRetained`] as its last item.
//!
//! Locking: a std `Mutex` guards the run table and one guards each run's log. Both are held only
//! for short, synchronous sections and **never across an `.await`** (the workspace denies
//! `await_holding_lock`), so the std mutex is cheaper than tokio's and cannot deadlock a task.
//!
//! Retention is lazy, with no background task: a run's log is dropped by the first publish or
//! subscribe that finds its deadline (terminal event + `retention`) passed.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ars_domain::RunId;
use async_trait::async_trait;
use chrono::Utc;
use futures::StreamExt;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::bus::{Cursor, Step};
use crate::{EventBus, EventError, EventKind, EventStream, RunEvent, RunRef};

/// Most events a subscriber copies out of a log per lock, so one slow reader of a long log does
/// not hold the lock against publishers.
const READ_BATCH: usize = 256;

/// Tuning for [`InProcessBus`].
#[derive(Clone, Debug)]
pub struct InProcessConfig {
    /// How long a finished run's events stay available to late subscribers, counted from its
    /// terminal event.
    pub retention: Duration,
    /// Memory bound per run: past it the oldest events are dropped (subscribers that still
    /// needed them get `NotRetained`). At least 1.
    pub max_events_per_run: usize,
}

impl Default for InProcessConfig {
    fn default() -> Self {
        Self {
            retention: Duration::from_secs(60 * 60),
            max_events_per_run: 100_000,
        }
    }
}

/// The in-memory [`EventBus`]. A cheap `Clone` handle: clones share the same runs.
#[derive(Clone)]
pub struct InProcessBus {
    shared: Arc<Shared>,
}

struct Shared {
    config: InProcessConfig,
    runs: Mutex<Runs>,
}

#[derive(Default)]
struct Runs {
    by_id: HashMap<RunId, Arc<RunState>>,
    /// Finished runs by deadline. Retention is one constant, so deadlines arrive in order and
    /// the sweep only looks at the front.
    expiries: VecDeque<(Instant, RunId)>,
}

/// One run: its log, and the signal that wakes its subscribers. Subscribers hold an `Arc` so
/// a stream in progress keeps reading even if the run is swept from the table meanwhile.
struct RunState {
    log: Mutex<RunLog>,
    /// Carries the last published id; subscribers use it only as a wake-up.
    changed: watch::Sender<u64>,
}

struct RunLog {
    /// Retained events; ids are consecutive, so `events[i].id == oldest + i`.
    events: VecDeque<RunEvent>,
    /// The id of the last event published (0 before the first).
    last_id: u64,
    /// Set by the terminal event: the run is closed and its log is dropped at this instant.
    expires_at: Option<Instant>,
}

impl RunLog {
    /// Up to `limit` retained events with id > `after`, oldest first. If events right after
    /// `after` were dropped, the first one returned is newer than `after + 1`, which the
    /// subscriber's [`Cursor`] reports as a gap.
    fn after(&self, after: u64, limit: usize) -> impl Iterator<Item = &RunEvent> {
        let oldest = self.events.front().map_or(self.last_id + 1, |e| e.id);
        let skip =
            usize::try_from(after.saturating_add(1).saturating_sub(oldest)).unwrap_or(usize::MAX);
        self.events.iter().skip(skip).take(limit)
    }
}

/// Locks `mutex`, ignoring poisoning: every critical section leaves the data consistent
/// between statements, so a panic elsewhere does not make it unsafe to read.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl InProcessBus {
    pub fn new(config: InProcessConfig) -> Self {
        let config = InProcessConfig {
            max_events_per_run: config.max_events_per_run.max(1),
            ..config
        };
        Self {
            shared: Arc::new(Shared {
                config,
                runs: Mutex::new(Runs::default()),
            }),
        }
    }

    /// How many runs the bus currently holds in memory (for tests and metrics).
    pub fn retained_runs(&self) -> usize {
        let mut runs = lock(&self.shared.runs);
        runs.sweep(Instant::now());
        runs.by_id.len()
    }
}

impl Runs {
    /// Drops every run whose retention deadline has passed.
    fn sweep(&mut self, now: Instant) {
        while let Some(&(deadline, run_id)) = self.expiries.front() {
            if deadline > now {
                break;
            }
            self.expiries.pop_front();
            let expired = self
                .by_id
                .get(&run_id)
                .is_some_and(|state| lock(&state.log).expires_at.is_some_and(|at| at <= now));
            if expired {
                self.by_id.remove(&run_id);
            }
        }
    }
}

#[async_trait]
impl EventBus for InProcessBus {
    async fn publish(&self, run: &RunRef, kind: EventKind) -> Result<RunEvent, EventError> {
        let now = Instant::now();
        let state = {
            let mut runs = lock(&self.shared.runs);
            runs.sweep(now);
            Arc::clone(runs.by_id.entry(run.run_id).or_insert_with(|| {
                Arc::new(RunState {
                    log: Mutex::new(RunLog {
                        events: VecDeque::new(),
                        last_id: 0,
                        expires_at: None,
                    }),
                    changed: watch::channel(0).0,
                })
            }))
        };

        let event = {
            let mut log = lock(&state.log);
            if log.expires_at.is_some() {
                return Err(EventError::Closed);
            }
            let event = RunEvent {
                id: log.last_id + 1,
                run: run.clone(),
                at: Utc::now(),
                kind,
            };
            log.last_id = event.id;
            log.events.push_back(event.clone());
            while log.events.len() > self.shared.config.max_events_per_run {
                log.events.pop_front();
            }
            if event.kind.is_terminal() {
                log.expires_at = Some(now + self.shared.config.retention);
            }
            event
        };

        if event.kind.is_terminal() {
            let deadline = now + self.shared.config.retention;
            lock(&self.shared.runs)
                .expiries
                .push_back((deadline, run.run_id));
        }
        // `send_replace` updates the value even with no subscriber; receivers only wake up.
        state.changed.send_replace(event.id);
        Ok(event)
    }

    async fn subscribe(&self, run_id: RunId, after: u64) -> Result<EventStream, EventError> {
        let now = Instant::now();
        let state = {
            let mut runs = lock(&self.shared.runs);
            runs.sweep(now);
            runs.by_id.get(&run_id).cloned()
        }
        .ok_or(EventError::NotRetained)?;

        // Snapshot and wake-up receiver are taken under the same lock a publisher appends
        // under: every event is either in the snapshot or announced to the receiver.
        let (backlog, changed) = {
            let log = lock(&state.log);
            if log.expires_at.is_some_and(|at| at <= now) {
                return Err(EventError::NotRetained);
            }
            let oldest = log.events.front().map_or(log.last_id + 1, |e| e.id);
            if after.saturating_add(1) < oldest {
                return Err(EventError::NotRetained);
            }
            let backlog: VecDeque<RunEvent> = log.after(after, READ_BATCH).cloned().collect();
            (backlog, state.changed.subscribe())
        };

        let follower = Follower {
            state,
            changed,
            cursor: Cursor::new(after),
            pending: backlog,
        };
        Ok(
            futures::stream::unfold(Some(follower), |follower| async move {
                let mut follower = follower?;
                match follower.next().await? {
                    Ok(event) => Some((Ok(event), Some(follower))),
                    // An error is the last item.
                    Err(err) => Some((Err(err), None)),
                }
            })
            .boxed(),
        )
    }
}

/// One subscription's progress through a run's log.
struct Follower {
    state: Arc<RunState>,
    changed: watch::Receiver<u64>,
    cursor: Cursor,
    /// Events read from the log and not yet delivered.
    pending: VecDeque<RunEvent>,
}

impl Follower {
    /// The next event, an error, or `None` once the terminal event was delivered.
    async fn next(&mut self) -> Option<Result<RunEvent, EventError>> {
        loop {
            if self.cursor.done {
                return None;
            }
            while let Some(event) = self.pending.pop_front() {
                match self.cursor.advance(&event) {
                    Step::Deliver => return Some(Ok(event)),
                    Step::Skip => {}
                    Step::Gap => return Some(Err(EventError::NotRetained)),
                }
            }
            // Mark the current version seen *before* reading the log: a publish that lands
            // after the read then still wakes us below.
            self.changed.borrow_and_update();
            let closed = {
                let log = lock(&self.state.log);
                self.pending
                    .extend(log.after(self.cursor.last, READ_BATCH).cloned());
                log.expires_at.is_some()
            };
            if self.pending.is_empty() {
                if closed {
                    // The subscriber started at or past the terminal event: nothing will come.
                    return None;
                }
                if self.changed.changed().await.is_err() {
                    // Unreachable while we hold the run's state (which owns the sender).
                    return None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ars_domain::{RunStatus, ThreadId};

    fn bus(retention: Duration) -> InProcessBus {
        InProcessBus::new(InProcessConfig {
            retention,
            ..InProcessConfig::default()
        })
    }

    #[tokio::test(start_paused = true)]
    async fn default_retention_keeps_a_finished_run_for_an_hour_then_frees_it() {
        let bus = bus(InProcessConfig::default().retention);
        let run = RunRef::top_level(RunId::new(), ThreadId::new());
        bus.publish(&run, EventKind::status(RunStatus::Running))
            .await
            .unwrap();
        bus.publish(&run, EventKind::status(RunStatus::Success))
            .await
            .unwrap();

        tokio::time::advance(Duration::from_secs(59 * 60)).await;
        assert!(bus.subscribe(run.run_id, 0).await.is_ok());
        assert_eq!(bus.retained_runs(), 1);

        tokio::time::advance(Duration::from_secs(2 * 60)).await;
        assert!(matches!(
            bus.subscribe(run.run_id, 0).await,
            Err(EventError::NotRetained)
        ));
        assert_eq!(bus.retained_runs(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn active_runs_never_expire() {
        let bus = bus(Duration::from_secs(1));
        let run = RunRef::top_level(RunId::new(), ThreadId::new());
        bus.publish(&run, EventKind::status(RunStatus::Running))
            .await
            .unwrap();
        tokio::time::advance(Duration::from_secs(24 * 60 * 60)).await;
        assert!(bus.subscribe(run.run_id, 0).await.is_ok());
    }

    #[test]
    fn zero_max_events_is_raised_to_one() {
        let bus = InProcessBus::new(InProcessConfig {
            max_events_per_run: 0,
            ..InProcessConfig::default()
        });
        assert_eq!(bus.shared.config.max_events_per_run, 1);
    }
}
