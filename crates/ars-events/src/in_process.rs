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
//!
//! Memory: an active run is bounded by `max_events_per_run`; finished runs together by
//! `memory_budget`. When a terminal event takes the finished runs' estimated bytes over the
//! budget, whole finished runs are evicted oldest-finished first, and an evicted run answers
//! exactly like an expired one ([`EventError::NotRetained`]). Active runs are never evicted. A
//! stream already reading an evicted run keeps its handle on the log and reads to the end.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ars_domain::{KnowledgeBaseId, RunId, ThreadId};
use async_trait::async_trait;
use chrono::Utc;
use futures::StreamExt;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::bus::Cursor;
use crate::{
    EventBus, EventError, EventKind, EventStream, KnowledgeEvent, KnowledgeEventStream,
    LocalKnowledgeTopics, LocalTopics, RunEvent, RunRef, SharedEvent, ThreadEvent,
    ThreadEventStream,
};

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
    /// Estimated bytes ([`estimated_size`]) the events of *finished* runs may hold together;
    /// past it the oldest-finished runs are forgotten before their retention runs out. `None`:
    /// no bound but retention.
    pub memory_budget: Option<usize>,
}

/// The default [`InProcessConfig::memory_budget`]: 256 MiB.
pub const DEFAULT_MEMORY_BUDGET: usize = 256 * 1024 * 1024;

impl Default for InProcessConfig {
    fn default() -> Self {
        Self {
            retention: Duration::from_secs(60 * 60),
            max_events_per_run: 100_000,
            memory_budget: Some(DEFAULT_MEMORY_BUDGET),
        }
    }
}

/// What the bus counts for one retained event against the memory budget: the length of its
/// JSON (the text it carries, plus keys and ids spelled out, which roughly covers its heap
/// allocations) plus the size of the `RunEvent` value itself in the log. A run someone streamed
/// also holds its events' JSON text ([`SharedEvent::json`]), which this does not count: at most
/// as much again, for the runs people watch.
pub fn estimated_size(event: &RunEvent) -> usize {
    /// Counts bytes instead of keeping them, so estimating allocates nothing.
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Serializing these plain data types cannot fail; a failure would only undercount.
    let _ = serde_json::to_writer(&mut count, event);
    count.0 + std::mem::size_of::<RunEvent>()
}

/// The in-memory [`EventBus`]. A cheap `Clone` handle: clones share the same runs.
#[derive(Clone)]
pub struct InProcessBus {
    shared: Arc<Shared>,
}

struct Shared {
    config: InProcessConfig,
    runs: Mutex<Runs>,
    /// Followers of thread events.
    threads: LocalTopics,
    /// Followers of knowledge events.
    knowledge: LocalKnowledgeTopics,
}

#[derive(Default)]
struct Runs {
    by_id: HashMap<RunId, Arc<RunState>>,
    /// Finished runs by deadline, with the estimated bytes of their (now immutable) logs.
    /// Retention is one constant, so deadlines arrive in finishing order: the sweep and the
    /// budget eviction both only look at the front.
    expiries: VecDeque<Finished>,
    /// The sum of `bytes` over `expiries`: what finished runs hold against the budget.
    finished_bytes: usize,
}

/// One finished run still in the table.
struct Finished {
    deadline: Instant,
    run_id: RunId,
    bytes: usize,
}

/// One run: its log, and the signal that wakes its subscribers. Subscribers hold an `Arc` so
/// a stream in progress keeps reading even if the run is swept from the table meanwhile.
struct RunState {
    log: Mutex<RunLog>,
    /// Carries the last published id; subscribers use it only as a wake-up.
    changed: watch::Sender<u64>,
}

struct RunLog {
    /// Retained events; ids are consecutive, so `events[i].id == oldest + i`. Shared: a
    /// subscriber copies a pointer out of the log, not the event.
    events: VecDeque<SharedEvent>,
    /// The id of the last event published (0 before the first).
    last_id: u64,
    /// The [`estimated_size`] of `events`, kept as they come and go.
    bytes: usize,
    /// Set by the terminal event: the run is closed and its log is dropped at this instant.
    expires_at: Option<Instant>,
}

impl RunLog {
    /// Up to `limit` retained events with id > `after`, oldest first. If events right after
    /// `after` were dropped, the first one returned is newer than `after + 1`, which the
    /// subscriber's [`Cursor`] reports as a gap.
    fn after(&self, after: u64, limit: usize) -> impl Iterator<Item = &SharedEvent> {
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
                threads: LocalTopics::new(),
                knowledge: LocalKnowledgeTopics::new(),
            }),
        }
    }

    /// How many runs the bus currently holds in memory (for tests and metrics).
    pub fn retained_runs(&self) -> usize {
        let mut runs = lock(&self.shared.runs);
        runs.sweep(Instant::now());
        runs.by_id.len()
    }

    /// How many threads someone follows now (for tests: idle threads hold nothing).
    pub fn followed_threads(&self) -> usize {
        self.shared.threads.followed()
    }

    /// How many knowledge bases someone follows now (for tests: idle ones hold nothing).
    pub fn followed_knowledge_bases(&self) -> usize {
        self.shared.knowledge.followed()
    }

    /// The estimated bytes finished runs hold against the memory budget (for tests and
    /// metrics).
    pub fn finished_bytes(&self) -> usize {
        let mut runs = lock(&self.shared.runs);
        runs.sweep(Instant::now());
        runs.finished_bytes
    }
}

impl Runs {
    /// Drops every run whose retention deadline has passed.
    fn sweep(&mut self, now: Instant) {
        while self.expiries.front().is_some_and(|f| f.deadline <= now) {
            self.forget_oldest_finished();
        }
    }

    /// Drops the oldest finished runs until the finished runs fit in `budget`.
    fn evict_over(&mut self, budget: Option<usize>) {
        let Some(budget) = budget else { return };
        while self.finished_bytes > budget && !self.expiries.is_empty() {
            if let Some(run_id) = self.forget_oldest_finished() {
                tracing::debug!(%run_id, "run events evicted over the memory budget");
            }
        }
    }

    /// Removes the front of `expiries` and its run; `None` when there was none.
    fn forget_oldest_finished(&mut self) -> Option<RunId> {
        let finished = self.expiries.pop_front()?;
        self.finished_bytes -= finished.bytes;
        // Only finished runs are in `expiries`, and run ids are unique, so this never removes
        // an active run.
        self.by_id.remove(&finished.run_id);
        Some(finished.run_id)
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
                        bytes: 0,
                        expires_at: None,
                    }),
                    changed: watch::channel(0).0,
                })
            }))
        };

        let (event, log_bytes) = {
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
            log.bytes += estimated_size(&event);
            log.events.push_back(SharedEvent::from(event.clone()));
            while log.events.len() > self.shared.config.max_events_per_run {
                if let Some(dropped) = log.events.pop_front() {
                    log.bytes -= estimated_size(&dropped);
                }
            }
            if event.kind.is_terminal() {
                log.expires_at = Some(now + self.shared.config.retention);
            }
            (event, log.bytes)
        };

        if event.kind.is_terminal() {
            let mut runs = lock(&self.shared.runs);
            runs.expiries.push_back(Finished {
                deadline: now + self.shared.config.retention,
                run_id: run.run_id,
                bytes: log_bytes,
            });
            runs.finished_bytes += log_bytes;
            runs.evict_over(self.shared.config.memory_budget);
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
            let backlog: VecDeque<SharedEvent> = log.after(after, READ_BATCH).cloned().collect();
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

    async fn publish_thread(
        &self,
        thread: &ThreadId,
        event: &ThreadEvent,
    ) -> Result<(), EventError> {
        self.shared.threads.publish(thread, event);
        Ok(())
    }

    async fn follow_thread(&self, thread: &ThreadId) -> Result<ThreadEventStream, EventError> {
        Ok(self.shared.threads.follow(thread))
    }

    async fn publish_knowledge(
        &self,
        kb: KnowledgeBaseId,
        event: &KnowledgeEvent,
    ) -> Result<(), EventError> {
        self.shared.knowledge.publish(&kb, event);
        Ok(())
    }

    async fn follow_knowledge(
        &self,
        kb: KnowledgeBaseId,
    ) -> Result<KnowledgeEventStream, EventError> {
        Ok(self.shared.knowledge.follow(&kb))
    }
}

/// One subscription's progress through a run's log.
struct Follower {
    state: Arc<RunState>,
    changed: watch::Receiver<u64>,
    cursor: Cursor,
    /// Events read from the log and not yet delivered.
    pending: VecDeque<SharedEvent>,
}

impl Follower {
    /// The next event, an error, or `None` once the terminal event was delivered.
    async fn next(&mut self) -> Option<Result<SharedEvent, EventError>> {
        loop {
            if self.cursor.done {
                return None;
            }
            if let Some(item) = self.cursor.next_from(&mut self.pending) {
                return Some(item);
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

    /// A run streamed to many subscribers is one copy of each event and one JSON text of it,
    /// whether a subscriber replays the event or hears it live.
    #[tokio::test]
    async fn every_subscriber_of_a_run_reads_the_one_copy_of_each_event() {
        let bus = bus(Duration::from_secs(60));
        let run = RunRef::top_level(RunId::new(), ThreadId::new());
        bus.publish(&run, EventKind::status(RunStatus::Running))
            .await
            .unwrap();
        let mut live = bus.subscribe(run.run_id, 0).await.unwrap();
        bus.publish(
            &run,
            EventKind::MessageDelta {
                text: "你好".into(),
            },
        )
        .await
        .unwrap();
        bus.publish(&run, EventKind::status(RunStatus::Success))
            .await
            .unwrap();
        let replayed: Vec<SharedEvent> = bus
            .subscribe(run.run_id, 0)
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        let live: Vec<SharedEvent> = live.by_ref().map(Result::unwrap).collect().await;
        assert_eq!(live.len(), 3);
        for (heard, read) in live.iter().zip(&replayed) {
            assert!(std::ptr::eq::<RunEvent>(&**heard, &**read), "{heard:?}");
            assert!(std::ptr::eq(heard.json().unwrap(), read.json().unwrap()));
        }
    }

    /// A bus whose finished runs may hold `budget` estimated bytes.
    fn budget_bus(budget: usize) -> InProcessBus {
        InProcessBus::new(InProcessConfig {
            memory_budget: Some(budget),
            ..InProcessConfig::default()
        })
    }

    /// Publishes `running`, `deltas` deltas and, if `finish`, `success`; answers the run's
    /// estimated bytes.
    async fn publish_run(bus: &InProcessBus, run: &RunRef, deltas: usize, finish: bool) -> usize {
        let mut bytes = 0;
        let mut publish = async |kind| {
            bytes += estimated_size(&bus.publish(run, kind).await.unwrap());
        };
        publish(EventKind::status(RunStatus::Running)).await;
        for n in 0..deltas {
            publish(EventKind::MessageDelta {
                text: format!("chunk {n} of a typical streamed answer"),
            })
            .await;
        }
        if finish {
            publish(EventKind::status(RunStatus::Success)).await;
        }
        bytes
    }

    fn new_run() -> RunRef {
        RunRef::top_level(RunId::new(), ThreadId::new())
    }

    fn is_gone(result: &Result<EventStream, EventError>) -> bool {
        matches!(result, Err(EventError::NotRetained))
    }

    #[tokio::test]
    async fn over_the_budget_the_oldest_finished_runs_are_evicted_first() {
        // Measure one run's size on an unbounded bus, then allow room for exactly two.
        let probe = InProcessBus::new(InProcessConfig {
            memory_budget: None,
            ..InProcessConfig::default()
        });
        let one_run = publish_run(&probe, &new_run(), 10, true).await;
        assert_eq!(probe.finished_bytes(), one_run);
        assert!(one_run > 0);
        let bus = budget_bus(2 * one_run + one_run / 2);

        let active = new_run();
        publish_run(&bus, &active, 50, false).await;
        let runs: Vec<RunRef> = (0..4).map(|_| new_run()).collect();
        let (mut sizes, mut accounted) = (Vec::new(), Vec::new());
        for run in &runs {
            sizes.push(publish_run(&bus, run, 10, true).await);
            accounted.push(bus.finished_bytes());
        }

        // After the third finish the first run went; after the fourth the second. (Sizes are
        // compared run by run: a timestamp's text can be a few digits shorter.)
        assert_eq!(
            accounted,
            [
                sizes[0],
                sizes[0] + sizes[1],
                sizes[1] + sizes[2],
                sizes[2] + sizes[3]
            ]
        );
        assert!(is_gone(&bus.subscribe(runs[0].run_id, 0).await));
        assert!(is_gone(&bus.subscribe(runs[1].run_id, 0).await));
        for kept in &runs[2..] {
            let events: Vec<_> = bus.subscribe(kept.run_id, 0).await.unwrap().collect().await;
            assert_eq!(events.len(), 12);
        }
        // The active run holds more than the whole budget and is still all there.
        let mut live = bus.subscribe(active.run_id, 0).await.unwrap();
        for id in 1..=51 {
            assert_eq!(live.next().await.unwrap().unwrap().id, id);
        }
        assert_eq!(bus.retained_runs(), 3);
    }

    #[tokio::test]
    async fn a_finished_run_larger_than_the_budget_goes_at_once_but_its_live_reader_finishes() {
        let bus = budget_bus(1);
        let run = new_run();
        publish_run(&bus, &run, 3, false).await;
        let live = bus.subscribe(run.run_id, 0).await.unwrap();
        bus.publish(&run, EventKind::status(RunStatus::Success))
            .await
            .unwrap();

        assert_eq!(bus.finished_bytes(), 0);
        assert_eq!(bus.retained_runs(), 0);
        assert!(is_gone(&bus.subscribe(run.run_id, 0).await));
        let read: Vec<u64> = live.map(|e| e.unwrap().id).collect().await;
        assert_eq!(read, [1, 2, 3, 4, 5]);
    }

    #[tokio::test(start_paused = true)]
    async fn expiry_gives_the_bytes_back() {
        let bus = InProcessBus::new(InProcessConfig {
            retention: Duration::from_secs(10),
            ..InProcessConfig::default()
        });
        publish_run(&bus, &new_run(), 5, true).await;
        assert!(bus.finished_bytes() > 0);
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(bus.finished_bytes(), 0);
    }

    #[test]
    fn the_size_estimate_is_the_json_plus_the_value() {
        let event = RunEvent {
            id: 7,
            run: new_run(),
            at: Utc::now(),
            kind: EventKind::MessageDelta {
                text: "hello".into(),
            },
        };
        let json = serde_json::to_string(&event).unwrap();
        assert_eq!(
            estimated_size(&event),
            json.len() + std::mem::size_of::<RunEvent>()
        );
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
