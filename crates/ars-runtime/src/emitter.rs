//! A run's event emitter: every event a run publishes goes through it, so the run's middleware
//! observes it and its feed hears of the tokens spent. Publishing is best-effort: the store,
//! not the event stream, is the record.

use std::sync::Arc;

use ars_events::{EventBus, EventKind, RunRef};

use crate::feed::Feed;
use crate::middleware::Middleware;

/// Publishes one run's events (see the module docs). Cheap to clone.
#[derive(Clone)]
pub struct Emitter {
    pub bus: Arc<dyn EventBus>,
    pub run: RunRef,
    pub middleware: Vec<Arc<dyn Middleware>>,
    /// What the run tells thread event streams and the plug-ins following it.
    pub(crate) feed: Arc<Feed>,
}

impl Emitter {
    pub async fn emit(&self, kind: EventKind) {
        for m in &self.middleware {
            m.on_event(&kind);
        }
        let usage = match &kind {
            EventKind::Usage { usage } => Some(*usage),
            _ => None,
        };
        if let Err(e) = self.bus.publish(&self.run, kind).await {
            tracing::warn!(run_id = %self.run.run_id, error = %e, "cannot publish run event");
        }
        if let Some(usage) = usage {
            self.feed.usage(usage).await;
        }
    }
}
