//! Topics over Redis pub/sub: one channel per key — `{prefix}:thread:{thread_id}` for thread
//! events, `{prefix}:kb:{knowledge_base_id}` for knowledge events.
//!
//! Pub/sub rather than a stream, because topic events are not replayed (a follower reads the
//! state from the store after it follows): Redis then keeps nothing, and a key nobody follows
//! costs nothing. Each follower subscribes on a connection of its own (as each run-event
//! subscriber reads on its own), confirmed before [`follow`] answers, so every later publish
//! reaches it. A task moves its messages into a bounded queue: a follower that stops reading
//! misses what comes past [`TOPIC_BACKLOG`] queued events (and is told, once it has read the
//! queue), instead of the connection buffering without bound. The stream ends when the
//! connection is lost.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures::StreamExt;
use redis::AsyncCommands;
use tokio::sync::mpsc::{self, error::TryRecvError};

use ars_domain::{KnowledgeBaseId, ThreadId};

use super::{CONNECT_TIMEOUT, RESPONSE_TIMEOUT, RedisBus};
use crate::{EventError, TOPIC_BACKLOG, TopicStream};

impl RedisBus {
    /// The pub/sub channel of a thread.
    pub(super) fn thread_channel(&self, thread: &ThreadId) -> String {
        format!("{}:thread:{thread}", self.config.key_prefix)
    }

    /// The pub/sub channel of a knowledge base.
    pub(super) fn knowledge_channel(&self, kb: KnowledgeBaseId) -> String {
        format!("{}:kb:{kb}", self.config.key_prefix)
    }
}

/// Publishes `payload` (an encoded event) on `channel`.
pub(super) async fn publish(
    bus: &RedisBus,
    channel: String,
    payload: String,
) -> Result<(), EventError> {
    let _receivers: i64 = bus
        .shared
        .clone()
        .publish(channel, payload)
        .await
        .map_err(EventError::backend)?;
    Ok(())
}

/// Follows `channel`, reading each message with `decode` (a message it does not read is
/// skipped).
pub(super) async fn follow<E: Send + 'static>(
    bus: &RedisBus,
    channel: String,
    decode: fn(&str) -> Option<E>,
) -> Result<TopicStream<E>, EventError> {
    let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, bus.client.get_async_pubsub())
        .await
        .map_err(EventError::backend)?
        .map_err(EventError::backend)?;
    // Answers once Redis confirmed the subscription.
    tokio::time::timeout(RESPONSE_TIMEOUT, pubsub.subscribe(channel))
        .await
        .map_err(EventError::backend)?
        .map_err(EventError::backend)?;
    let (queue, mut received) = mpsc::channel(TOPIC_BACKLOG);
    // Set when an event was dropped on a full queue; the follower is told once it has read
    // what was queued (what it reads next is then newer than anything it missed).
    let lagged = Arc::new(AtomicBool::new(false));
    let dropped = Arc::clone(&lagged);
    tokio::spawn(async move {
        let mut messages = pubsub.into_on_message();
        loop {
            let message = tokio::select! {
                message = messages.next() => message,
                // The follower is gone: dropping the connection unsubscribes.
                () = queue.closed() => return,
            };
            let Some(message) = message else { return };
            let Some(event) = message
                .get_payload::<String>()
                .ok()
                .and_then(|payload| decode(&payload))
            else {
                continue;
            };
            match queue.try_send(event) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => dropped.store(true, Ordering::SeqCst),
                Err(mpsc::error::TrySendError::Closed(_)) => return,
            }
        }
    });
    let stream = futures::stream::poll_fn(move |cx| match received.try_recv() {
        Ok(event) => Poll::Ready(Some(Ok(event))),
        Err(TryRecvError::Empty) if lagged.swap(false, Ordering::SeqCst) => {
            Poll::Ready(Some(Err(EventError::NotRetained)))
        }
        Err(TryRecvError::Empty) => received.poll_recv(cx).map(|event| event.map(Ok)),
        Err(TryRecvError::Disconnected) => Poll::Ready(None),
    });
    Ok(stream.boxed())
}
