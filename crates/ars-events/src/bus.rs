//! The `EventBus` seam: publish a run's events, subscribe from an event id.

use std::collections::VecDeque;

use ars_domain::{KnowledgeBaseId, RunId, ThreadId};
use async_trait::async_trait;
use futures::StreamExt;

use crate::{
    EventError, EventKind, KnowledgeEvent, KnowledgeEventStream, RunEvent, RunRef, SharedEvent,
    ThreadEvent, ThreadEventStream,
};

/// A run's events from some id on: replayed ones first, then live ones, ending right after the
/// terminal event. An `Err` item (e.g. [`EventError::NotRetained`] when the subscriber fell behind
/// the retained window) is always the last item. Events come shared ([`SharedEvent`]): a bus
/// hands every subscriber of a run the one copy it holds, where it can.
pub type EventStream = futures::stream::BoxStream<'static, Result<SharedEvent, EventError>>;

/// Carries run events from the runtime to any number of subscribers, with replay; and thread
/// and knowledge events (see [`crate::topic`]) to whoever follows a thread or a knowledge base
/// at the time, without.
///
/// Object-safe, so the server holds an `Arc<dyn EventBus>` chosen by configuration: the
/// in-process bus for one `ars serve`, Redis Streams when several instances share a Redis.
/// Both pass the same conformance suite (`tests/conformance.rs`).
#[async_trait]
pub trait EventBus: Send + Sync + 'static {
    /// Appends to the run's stream and assigns the next id (1, 2, 3, … per run, also under
    /// concurrent publishers). Publishing after the terminal event is an error
    /// ([`EventError::Closed`]); the terminal event starts the retention clock, and once it
    /// runs out the bus forgets the run entirely (a publish would start a new sequence at 1,
    /// which run ids being unique makes moot).
    async fn publish(&self, run: &RunRef, kind: EventKind) -> Result<RunEvent, EventError>;

    /// Every retained event with id > `after`, then live ones, ending right after the terminal
    /// event (the stream then ends). `Err(EventError::NotRetained)` when the bus has no record of
    /// the run (never published, expired after retention, or — in process — evicted over the
    /// memory budget) or when `after` is older than the oldest retained event (a gap would
    /// follow). `after` at or past the terminal event gives an empty stream that ends at once.
    async fn subscribe(&self, run_id: RunId, after: u64) -> Result<EventStream, EventError>;

    /// Publishes a terminal event written away from the run's executor (a reaper, a cancel its
    /// instance did not answer), but only to a run the bus knows and that is still open:
    /// followers of a known run get its end, while a run the bus never knew or has forgotten
    /// (an in-process bus of another, or a crashed, process) stays unknown, so late readers
    /// fall back to the store instead of seeing a run of one event. `None` when nothing was
    /// published.
    async fn publish_end(
        &self,
        run: &RunRef,
        kind: EventKind,
    ) -> Result<Option<RunEvent>, EventError> {
        // Past every id: an empty stream for a closed run, `NotRetained` for an unknown one.
        match self.subscribe(run.run_id, u64::MAX).await {
            Err(EventError::NotRetained) => return Ok(None),
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        match self.publish(run, kind).await {
            Ok(event) => Ok(Some(event)),
            Err(EventError::Closed) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Resolves once the run's terminal event is published — at once if it already was.
    /// `Err(EventError::NotRetained)` when the bus has no record of the run (see
    /// [`EventBus::subscribe`]); waiters then learn the end some other way.
    ///
    /// The default follows the whole run; an implementation that can find its last event
    /// cheaply follows only what comes after it.
    async fn until_terminal(&self, run_id: RunId) -> Result<(), EventError> {
        let mut events = self.subscribe(run_id, 0).await?;
        while let Some(event) = events.next().await {
            event?;
        }
        Ok(())
    }

    /// Delivers `event` to everyone following `thread` now, on every instance sharing the bus.
    /// Not stored: with nobody following, nothing is kept.
    async fn publish_thread(
        &self,
        thread: &ThreadId,
        event: &ThreadEvent,
    ) -> Result<(), EventError>;

    /// Follows `thread`'s events. Once this answers, every event published afterwards, by any
    /// instance, is delivered (each publisher's in the order it published them); nothing
    /// published before is. See [`ThreadEventStream`] for how the stream reports falling
    /// behind and ends.
    async fn follow_thread(&self, thread: &ThreadId) -> Result<ThreadEventStream, EventError>;

    /// Delivers `event` to everyone following knowledge base `kb` now, on every instance
    /// sharing the bus. Not stored: with nobody following, nothing is kept.
    async fn publish_knowledge(
        &self,
        kb: KnowledgeBaseId,
        event: &KnowledgeEvent,
    ) -> Result<(), EventError>;

    /// Follows knowledge base `kb`'s events, as [`EventBus::follow_thread`] follows a
    /// thread's: every event published once this answered, by any instance, is delivered.
    async fn follow_knowledge(
        &self,
        kb: KnowledgeBaseId,
    ) -> Result<KnowledgeEventStream, EventError>;
}

/// Guards the no-gap, no-duplicate promise on a subscription: remembers the last id delivered
/// and judges each next event against it.
#[derive(Debug)]
pub(crate) struct Cursor {
    /// The id of the last event delivered (or the subscriber's `after`).
    pub(crate) last: u64,
    /// Set once the terminal event was delivered; the stream ends there.
    pub(crate) done: bool,
}

/// What to do with an event read from the log.
#[derive(Debug, PartialEq)]
enum Step {
    /// The next event in sequence: deliver it.
    Deliver,
    /// Already delivered (a re-read overlapped): drop it silently.
    Skip,
    /// Events between the last delivered one and this one are gone.
    Gap,
}

impl Cursor {
    pub(crate) fn new(after: u64) -> Self {
        Self {
            last: after,
            done: false,
        }
    }

    /// The next item `pending` (events read from a log, oldest first) holds for this
    /// subscription: the next event in sequence (those already delivered are dropped on the
    /// way) or `NotRetained` at a gap. `None` once `pending` is used up, or once the terminal
    /// event was delivered.
    pub(crate) fn next_from(
        &mut self,
        pending: &mut VecDeque<SharedEvent>,
    ) -> Option<Result<SharedEvent, EventError>> {
        while !self.done {
            let event = pending.pop_front()?;
            match self.advance(&event) {
                Step::Deliver => return Some(Ok(event)),
                Step::Skip => {}
                Step::Gap => return Some(Err(EventError::NotRetained)),
            }
        }
        None
    }

    /// Classifies `event` and, when it is the next one, advances past it.
    fn advance(&mut self, event: &RunEvent) -> Step {
        if event.id <= self.last {
            Step::Skip
        } else if Some(event.id) == self.last.checked_add(1) {
            self.last = event.id;
            self.done = event.kind.is_terminal();
            Step::Deliver
        } else {
            Step::Gap
        }
    }
}
