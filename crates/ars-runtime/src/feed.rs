//! What a run tells beyond its own event stream. Its own thread's followers hear when it is
//! created, changes status and ends ([`ThreadEvent::Run`], through
//! [`EventBus::publish_thread`]), the end with its total tokens. The plug-ins following the run
//! ([`RunObserver`], from [`crate::MiddlewareFactory::observe`]) hear the same changes, the
//! tokens it spends and, on the instance that wrote it, its end — so a plug-in that started
//! the run tells whoever it tells (another thread, say) without the core knowing.
//!
//! Each thread event carries the run as it now stands, so a follower replaces by run id.
//! Best-effort like run events: the store is the record, and every follower starts from it.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::Mutex;

use ars_domain::{Run, ThreadId, Usage};
use ars_events::{EventBus, ThreadEvent};

/// A plug-in following one run. Hooks are called in the order things happened, one at a time
/// per run, and nothing after the run's end was told (or closed).
#[async_trait]
pub trait RunObserver: Send + Sync {
    /// The run's row changed: created, running, ended.
    async fn changed(&self, _run: &Run) {}

    /// The tokens the run has spent so far, after each model answer.
    async fn usage(self: Arc<Self>, _usage: Usage) {}

    /// This instance wrote the run's end, just told by [`RunObserver::changed`]. Exactly one
    /// instance does, wherever the run executed: its executor, or whoever ended it in the
    /// store (recovery after a crash, the reaper, a cancel nobody answered).
    async fn ended(&self, _run: &Run) {}

    /// Someone else wrote the run's end and tells of it: say nothing more.
    async fn closed(&self) {}
}

/// One run's feed, made when the run is created (or when another instance's run is ended
/// here).
pub(crate) struct Feed {
    bus: Arc<dyn EventBus>,
    /// The run's own thread.
    thread_id: ThreadId,
    /// The plug-ins following the run.
    observers: Vec<Arc<dyn RunObserver>>,
    /// Whether the end was told: nothing is told after it. A tokio `Mutex`, held while
    /// telling, so one run's changes leave in the order they happened.
    ended: Mutex<bool>,
}

impl Feed {
    pub(crate) fn new(
        bus: Arc<dyn EventBus>,
        thread_id: ThreadId,
        observers: Vec<Arc<dyn RunObserver>>,
    ) -> Arc<Self> {
        Arc::new(Self {
            bus,
            thread_id,
            observers,
            ended: Mutex::new(false),
        })
    }

    /// The run's row changed (created, running, ended): tells its thread, with `total_usage`
    /// (its tokens and those spent on its behalf), and its observers.
    pub(crate) async fn changed(&self, run: &Run, total_usage: Usage) {
        let mut ended = self.ended.lock().await;
        if *ended {
            return;
        }
        *ended = run.status.is_terminal();
        let event = ThreadEvent::Run {
            run: run.clone(),
            total_usage,
        };
        if let Err(e) = self.bus.publish_thread(&self.thread_id, &event).await {
            tracing::warn!(thread_id = %self.thread_id, error = %e, "cannot publish a thread event");
        }
        for observer in &self.observers {
            observer.changed(run).await;
        }
    }

    /// Tokens the run has spent so far; only its observers hear of them.
    pub(crate) async fn usage(&self, usage: Usage) {
        if self.observers.is_empty() {
            return;
        }
        let ended = self.ended.lock().await;
        if *ended {
            return;
        }
        for observer in &self.observers {
            Arc::clone(observer).usage(usage).await;
        }
    }

    /// This instance wrote the run's end (told by `changed` just before).
    pub(crate) async fn ended(&self, run: &Run) {
        for observer in &self.observers {
            observer.ended(run).await;
        }
    }

    /// Tells nothing more: the run's end was written by someone else, who tells of it.
    pub(crate) async fn close(&self) {
        *self.ended.lock().await = true;
        for observer in &self.observers {
            observer.closed().await;
        }
    }
}
