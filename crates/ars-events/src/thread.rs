//! Thread events: what changed on a thread — its runs, the subagent runs started from it, the
//! completion notices written to it — for the followers of its event stream.
//!
//! Unlike run events they are neither numbered nor stored. A follower calls
//! [`EventBus::follow_thread`](crate::EventBus::follow_thread) first and reads the thread's
//! state from the store after it answered, so nothing published in between is missed; from then
//! on each event carries the whole new state of what it is about (a run as it now stands), so a
//! follower replaces by run id and applying one twice changes nothing. Nobody following means
//! nothing is kept: a thread costs memory only while someone follows it.
//!
//! [`LocalTopics`] is the in-process delivery (one broadcast per followed thread); Redis
//! pub/sub carries them between instances (`redis_bus::threads`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ars_domain::{Message, Run, ThreadId, Usage};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::EventError;

/// How many events a follower may fall behind before it misses some (and is told so).
pub const THREAD_BACKLOG: usize = 256;

/// What changed on a thread. The `type` tag names it on the wire between instances.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThreadEvent {
    /// A run on the thread was created, changed status or ended; `total_usage` adds the usage
    /// of the child runs it started.
    Run { run: Run, total_usage: Usage },
    /// A subagent run started from the thread (a run on one of its child threads) was created,
    /// changed status, spent tokens or ended.
    Subagent {
        run: Run,
        subagent_slug: Option<String>,
    },
    /// A completion notice was committed to the thread: `message` as stored, about `run` (the
    /// background child as it ended). Boxed: a message is large beside the other variants.
    Notice {
        message: Box<Message>,
        run: Run,
        subagent_slug: Option<String>,
    },
}

impl ThreadEvent {
    /// The run the event is about.
    pub fn run(&self) -> &Run {
        match self {
            Self::Run { run, .. } | Self::Subagent { run, .. } | Self::Notice { run, .. } => run,
        }
    }

    /// The wire form between instances.
    pub fn encode(&self) -> Result<String, EventError> {
        serde_json::to_string(self).map_err(EventError::backend)
    }

    /// `None` for anything that is not a thread event (another version's, or foreign traffic),
    /// which followers skip.
    pub fn decode(payload: &str) -> Option<Self> {
        serde_json::from_str(payload).ok()
    }
}

/// A thread's events from the moment of following on. An `Err(EventError::NotRetained)` item
/// means the follower fell more than [`THREAD_BACKLOG`] events behind and missed some (it
/// should read the state again); the stream goes on after it. The stream ends when the bus
/// loses its connection: follow again, and read the state again.
pub type ThreadEventStream = BoxStream<'static, Result<ThreadEvent, EventError>>;

/// The followers of each thread in one process: a broadcast per thread that has at least one
/// follower, removed with its last follower, so idle threads hold nothing.
///
/// A std `Mutex`: it is held only to look up, add or remove an entry, never across an `.await`.
#[derive(Clone, Default)]
pub struct LocalTopics {
    topics: Arc<Mutex<HashMap<ThreadId, broadcast::Sender<ThreadEvent>>>>,
}

impl LocalTopics {
    pub fn new() -> Self {
        Self::default()
    }

    /// Delivers `event` to the thread's followers in this process; nobody following is fine.
    pub fn publish(&self, thread: &ThreadId, event: &ThreadEvent) {
        let sender = lock(&self.topics).get(thread).cloned();
        if let Some(sender) = sender {
            // Fails only with no receiver left, a follower that just went: nobody to tell.
            let _ = sender.send(event.clone());
        }
    }

    /// Follows `thread` from now on; the stream never ends by itself.
    pub fn follow(&self, thread: &ThreadId) -> ThreadEventStream {
        let receiver = lock(&self.topics)
            .entry(thread.clone())
            .or_insert_with(|| broadcast::channel(THREAD_BACKLOG).0)
            .subscribe();
        let follower = Follower {
            receiver: Some(receiver),
            topics: self.clone(),
            thread: thread.clone(),
        };
        futures::stream::unfold(follower, |mut follower| async move {
            let receiver = follower.receiver.as_mut()?;
            let item = match receiver.recv().await {
                Ok(event) => Ok(event),
                Err(broadcast::error::RecvError::Lagged(_)) => Err(EventError::NotRetained),
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((item, follower))
        })
        .boxed()
    }

    /// How many threads have followers now (for tests: idle threads hold nothing).
    pub fn followed_threads(&self) -> usize {
        lock(&self.topics).len()
    }
}

/// One follower of one thread; its drop removes the thread's entry if it was the last.
struct Follower {
    /// Always `Some` until dropped (taken first, so the count below no longer includes it).
    receiver: Option<broadcast::Receiver<ThreadEvent>>,
    topics: LocalTopics,
    thread: ThreadId,
}

impl Drop for Follower {
    fn drop(&mut self) {
        drop(self.receiver.take());
        let mut topics = lock(&self.topics.topics);
        // Followers subscribe under this same lock, so a count of 0 here stays 0.
        if topics
            .get(&self.thread)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            topics.remove(&self.thread);
        }
    }
}

/// Locks `mutex`, ignoring poisoning: every critical section leaves the map consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ars_domain::{AgentId, RunStatus, UserId};

    fn event() -> ThreadEvent {
        let now = ars_domain::time::now();
        ThreadEvent::Run {
            run: Run {
                id: ars_domain::RunId::new(),
                thread_id: ThreadId::new(),
                agent_id: AgentId::new(),
                user_id: UserId::new(),
                status: RunStatus::Pending,
                input: "go".into(),
                output: None,
                error: None,
                error_code: None,
                usage: Usage::default(),
                lineage: None,
                created_at: now,
                started_at: None,
                finished_at: None,
            },
            total_usage: Usage::default(),
        }
    }

    #[test]
    fn a_thread_holds_an_entry_only_while_someone_follows_it() {
        let topics = LocalTopics::new();
        let thread = ThreadId::new();
        topics.publish(&thread, &event());
        assert_eq!(topics.followed_threads(), 0, "publishing keeps nothing");
        let first = topics.follow(&thread);
        let second = topics.follow(&thread);
        assert_eq!(topics.followed_threads(), 1);
        drop(first);
        assert_eq!(topics.followed_threads(), 1, "one follower is left");
        drop(second);
        assert_eq!(topics.followed_threads(), 0, "the last one took the entry");
    }

    #[test]
    fn foreign_payloads_are_not_thread_events() {
        let event = event();
        assert_eq!(ThreadEvent::decode(&event.encode().unwrap()), Some(event));
        for foreign in ["", "{}", r#"{"type":"reboot"}"#, r#"{"signal":"cancel"}"#] {
            assert_eq!(ThreadEvent::decode(foreign), None, "{foreign}");
        }
    }
}
