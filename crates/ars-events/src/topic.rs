//! Topics: events for whoever follows a key (a thread, a knowledge base) at the time, not
//! numbered and not stored. A follower calls `follow` first and reads the state from the store
//! after it answered, so nothing published in between is missed; each event then says what
//! changed, and nobody following means nothing is kept: a key costs memory only while someone
//! follows it.
//!
//! [`Topics`] is the in-process delivery (one broadcast per followed key); Redis pub/sub
//! carries topics between instances (`redis_bus::topics`).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::StreamExt;
use futures::stream::BoxStream;
use tokio::sync::broadcast;

use crate::EventError;

/// How many events a follower may fall behind before it misses some (and is told so).
pub const TOPIC_BACKLOG: usize = 256;

/// A topic's events from the moment of following on. An `Err(EventError::NotRetained)` item
/// means the follower fell more than [`TOPIC_BACKLOG`] events behind and missed some (it
/// should read the state again); the stream goes on after it. The stream ends when the bus
/// loses its connection: follow again, and read the state again.
pub type TopicStream<E> = BoxStream<'static, Result<E, EventError>>;

/// The followers of each key in one process: a broadcast per key that has at least one
/// follower, removed with its last follower, so idle keys hold nothing.
///
/// A std `Mutex`: it is held only to look up, add or remove an entry, never across an `.await`.
pub struct Topics<K, E> {
    topics: Arc<Mutex<HashMap<K, broadcast::Sender<E>>>>,
}

impl<K, E> Clone for Topics<K, E> {
    fn clone(&self) -> Self {
        Self {
            topics: Arc::clone(&self.topics),
        }
    }
}

impl<K, E> Default for Topics<K, E> {
    fn default() -> Self {
        Self {
            topics: Arc::default(),
        }
    }
}

impl<K, E> Topics<K, E>
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
    E: Clone + Send + 'static,
{
    pub fn new() -> Self {
        Self::default()
    }

    /// Delivers `event` to the key's followers in this process; nobody following is fine.
    pub fn publish(&self, key: &K, event: &E) {
        let sender = lock(&self.topics).get(key).cloned();
        if let Some(sender) = sender {
            // Fails only with no receiver left, a follower that just went: nobody to tell.
            let _ = sender.send(event.clone());
        }
    }

    /// Follows `key` from now on; the stream never ends by itself.
    pub fn follow(&self, key: &K) -> TopicStream<E> {
        let receiver = lock(&self.topics)
            .entry(key.clone())
            .or_insert_with(|| broadcast::channel(TOPIC_BACKLOG).0)
            .subscribe();
        let follower = Follower {
            receiver: Some(receiver),
            topics: self.clone(),
            key: key.clone(),
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

    /// How many keys have followers now (for tests: idle keys hold nothing).
    pub fn followed(&self) -> usize {
        lock(&self.topics).len()
    }
}

/// One follower of one key; its drop removes the key's entry if it was the last.
struct Follower<K: Eq + Hash, E> {
    /// Always `Some` until dropped (taken first, so the count below no longer includes it).
    receiver: Option<broadcast::Receiver<E>>,
    topics: Topics<K, E>,
    key: K,
}

impl<K: Eq + Hash, E> Drop for Follower<K, E> {
    fn drop(&mut self) {
        drop(self.receiver.take());
        let mut topics = lock(&self.topics.topics);
        // Followers subscribe under this same lock, so a count of 0 here stays 0.
        if topics
            .get(&self.key)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            topics.remove(&self.key);
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

    #[test]
    fn a_key_holds_an_entry_only_while_someone_follows_it() {
        let topics: Topics<u32, String> = Topics::new();
        topics.publish(&1, &"lost".to_string());
        assert_eq!(topics.followed(), 0, "publishing keeps nothing");
        let first = topics.follow(&1);
        let second = topics.follow(&1);
        assert_eq!(topics.followed(), 1);
        drop(first);
        assert_eq!(topics.followed(), 1, "one follower is left");
        drop(second);
        assert_eq!(topics.followed(), 0, "the last one took the entry");
    }
}
