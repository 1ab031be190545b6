//! Thread events over Redis pub/sub: one channel per thread, `{prefix}:thread:{thread_id}`.
//!
//! Pub/sub rather than a stream, because thread events are not replayed (a follower reads the
//! state from the store after it follows): Redis then keeps nothing, and a thread nobody follows
//! costs nothing. Each follower subscribes on a connection of its own (as each run-event
//! subscriber reads on its own), confirmed before [`follow`] answers, so every later publish
//! reaches it. A task moves its messages into a bounded queue: a follower that stops reading
//! misses what comes past [`THREAD_BACKLOG`] queued events (and is told, once it has read the
//! queue), instead of the connection buffering without bound. The stream ends when the
//! connection is lost.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures::StreamExt;
use redis::AsyncCommands;
use tokio::sync::mpsc::{self, error::TryRecvError};

use ars_domain::ThreadId;

use super::{CONNECT_TIMEOUT, RESPONSE_TIMEOUT, RedisBus};
use crate::{EventError, THREAD_BACKLOG, ThreadEvent, ThreadEventStream};

impl RedisBus {
    /// The pub/sub channel of a thread.
    fn thread_channel(&self, thread: &ThreadId) -> String {
        format!("{}:thread:{thread}", self.config.key_prefix)
    }
}

pub(super) async fn publish(
    bus: &RedisBus,
    thread: &ThreadId,
    event: &ThreadEvent,
) -> Result<(), EventError> {
    let _receivers: i64 = bus
        .shared
        .clone()
        .publish(bus.thread_channel(thread), event.encode()?)
        .await
        .map_err(EventError::backend)?;
    Ok(())
}

pub(super) async fn follow(
    bus: &RedisBus,
    thread: &ThreadId,
) -> Result<ThreadEventStream, EventError> {
    let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, bus.client.get_async_pubsub())
        .await
        .map_err(EventError::backend)?
        .map_err(EventError::backend)?;
    // Answers once Redis confirmed the subscription.
    tokio::time::timeout(
        RESPONSE_TIMEOUT,
        pubsub.subscribe(bus.thread_channel(thread)),
    )
    .await
    .map_err(EventError::backend)?
    .map_err(EventError::backend)?;
    let (queue, mut received) = mpsc::channel(THREAD_BACKLOG);
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
                .and_then(|payload| ThreadEvent::decode(&payload))
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
