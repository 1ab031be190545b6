//! What a child run tells its parent thread: every change of its entry
//! ([`ThreadEvent::Subagent`]), its tokens included — those at most every [`USAGE_INTERVAL`],
//! the latest always told in the end — and, when this instance wrote its end, a background
//! child's result (`notice`).
//!
//! Each event carries the child run as it now stands, so a follower replaces by run id.
//! Best-effort like run events: the store is the record, and every follower starts from it.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::Mutex;
use tokio::time::Instant;

use ars_domain::{Lineage, Run, Thread, ThreadId, Usage};
use ars_events::{EventBus, ThreadEvent};

use super::{SubagentSettings, notice};
use crate::feed::RunObserver;
use crate::runs::Runs;

/// How often a child's tokens alone are told to its parent thread, at most.
pub(crate) const USAGE_INTERVAL: Duration = Duration::from_millis(500);

/// One child run, followed from its creation (or from its end, when this instance ends a run
/// that executed elsewhere).
pub(super) struct Child {
    bus: Arc<dyn EventBus>,
    runs: Arc<dyn Runs>,
    settings: SubagentSettings,
    /// The child's thread, whose lineage names the parent thread and the subagent.
    thread: Thread,
    parent_thread: ThreadId,
    slug: String,
    /// A tokio `Mutex`, held while publishing, so the child's entries leave in the order they
    /// happened (a delayed token update never overtakes the end).
    state: Mutex<State>,
}

struct State {
    /// The run as last told, with the latest tokens.
    run: Run,
    /// When tokens alone were last told.
    usage_told_at: Option<Instant>,
    /// Newer tokens than those told are waiting for a delayed update.
    usage_waiting: bool,
    /// The run ended: nothing more is told.
    ended: bool,
}

impl Child {
    pub(super) fn follow(
        run: &Run,
        thread: &Thread,
        lineage: Lineage<'_>,
        runs: &dyn Runs,
        settings: SubagentSettings,
    ) -> Arc<Self> {
        Arc::new(Self {
            bus: Arc::clone(runs.events()),
            runs: runs.handle(),
            settings,
            thread: thread.clone(),
            parent_thread: lineage.parent_thread_id().clone(),
            slug: lineage.subagent_slug().to_string(),
            state: Mutex::new(State {
                run: run.clone(),
                usage_told_at: None,
                usage_waiting: false,
                ended: false,
            }),
        })
    }

    async fn tell_parent(&self, run: &Run) {
        let event = ThreadEvent::Subagent {
            run: run.clone(),
            subagent_slug: Some(self.slug.clone()),
        };
        if let Err(e) = self.bus.publish_thread(&self.parent_thread, &event).await {
            tracing::warn!(thread_id = %self.parent_thread, error = %e, "cannot publish a thread event");
        }
    }
}

#[async_trait]
impl RunObserver for Child {
    async fn changed(&self, run: &Run) {
        let mut state = self.state.lock().await;
        if state.ended {
            return;
        }
        state.run = run.clone();
        state.usage_waiting = false;
        state.ended = run.status.is_terminal();
        self.tell_parent(&state.run).await;
    }

    /// Told to the parent thread at once when the last telling is [`USAGE_INTERVAL`] old, else
    /// by a delayed update then.
    async fn usage(self: Arc<Self>, usage: Usage) {
        let mut state = self.state.lock().await;
        if state.ended {
            return;
        }
        state.run.usage = usage;
        let wait = state.usage_told_at.map_or(Duration::ZERO, |at| {
            USAGE_INTERVAL.saturating_sub(at.elapsed())
        });
        if wait.is_zero() {
            state.usage_told_at = Some(Instant::now());
            state.usage_waiting = false;
            self.tell_parent(&state.run).await;
        } else if !state.usage_waiting {
            state.usage_waiting = true;
            let child = Arc::clone(&self);
            tokio::spawn(async move {
                tokio::time::sleep(wait).await;
                let mut state = child.state.lock().await;
                if state.usage_waiting && !state.ended {
                    state.usage_told_at = Some(Instant::now());
                    state.usage_waiting = false;
                    child.tell_parent(&state.run).await;
                }
            });
        }
    }

    /// The writer of a child's end is the one that tells its parent thread of a background
    /// child's end.
    async fn ended(&self, run: &Run) {
        notice::child_ended(self.runs.as_ref(), &self.settings, run, &self.thread).await;
    }

    async fn closed(&self) {
        self.state.lock().await.ended = true;
    }
}
