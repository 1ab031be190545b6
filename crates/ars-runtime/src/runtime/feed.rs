//! What a run tells the followers of thread event streams ([`EventBus::publish_thread`]): its
//! own thread hears when it is created, changes status and ends ([`ThreadEvent::Run`]); a
//! subagent run's parent thread also hears of every change of the child's entry
//! ([`ThreadEvent::Subagent`]), its tokens included — those at most every [`USAGE_INTERVAL`],
//! the latest always told in the end.
//!
//! Each event carries the run as it now stands, so a follower replaces by run id. Best-effort
//! like run events: the store is the record, and every follower starts from it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

use ars_domain::{Run, Thread, ThreadId, Usage};
use ars_events::{EventBus, ThreadEvent};
use ars_store::RunStore;

/// How often a child's tokens alone are told to its parent thread, at most.
pub(crate) const USAGE_INTERVAL: Duration = Duration::from_millis(500);

/// One run's feed, made when the run is created (or when another instance's run is ended
/// here).
pub(crate) struct Feed {
    bus: Arc<dyn EventBus>,
    store: Arc<dyn RunStore>,
    /// The run's own thread.
    thread_id: ThreadId,
    /// A subagent run's parent thread and the subagent's slug.
    parent: Option<(ThreadId, Option<String>)>,
    /// A tokio `Mutex`, held while publishing, so one run's events leave in the order they
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

impl Feed {
    pub(crate) fn new(
        bus: Arc<dyn EventBus>,
        store: Arc<dyn RunStore>,
        run: &Run,
        thread: &Thread,
    ) -> Arc<Self> {
        let parent = match (&thread.parent_thread_id, run.parent_run_id) {
            (Some(parent), Some(_)) => Some((parent.clone(), thread.subagent_slug.clone())),
            _ => None,
        };
        Arc::new(Self {
            bus,
            store,
            thread_id: thread.id.clone(),
            parent,
            state: Mutex::new(State {
                run: run.clone(),
                usage_told_at: None,
                usage_waiting: false,
                ended: false,
            }),
        })
    }

    /// The run's row changed (created, running, ended): tells its thread and, for a child, the
    /// parent thread. After the end nothing more is told.
    pub(crate) async fn changed(&self, run: &Run) {
        let mut state = self.state.lock().await;
        if state.ended {
            return;
        }
        state.run = run.clone();
        state.usage_waiting = false;
        state.ended = run.status.is_terminal();
        let total_usage = self.total_usage(run).await;
        self.publish(
            &self.thread_id,
            &ThreadEvent::Run {
                run: run.clone(),
                total_usage,
            },
        )
        .await;
        self.tell_parent(&state.run).await;
    }

    /// Tokens the run has spent so far. A child's are told to its parent thread at once when
    /// the last telling is [`USAGE_INTERVAL`] old, else by a delayed update then.
    pub(crate) async fn usage(self: &Arc<Self>, usage: Usage) {
        if self.parent.is_none() {
            return;
        }
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
            let feed = Arc::clone(self);
            tokio::spawn(async move {
                tokio::time::sleep(wait).await;
                let mut state = feed.state.lock().await;
                if state.usage_waiting && !state.ended {
                    state.usage_told_at = Some(Instant::now());
                    state.usage_waiting = false;
                    feed.tell_parent(&state.run).await;
                }
            });
        }
    }

    /// Tells nothing more: the run's end was written by someone else, who tells of it.
    pub(crate) async fn close(&self) {
        self.state.lock().await.ended = true;
    }

    /// A run's tokens plus its children's; a child has none of its own (subagents do not
    /// nest), and a run that has not ended has not been asked for its total yet.
    async fn total_usage(&self, run: &Run) -> Usage {
        if self.parent.is_some() || !run.status.is_terminal() {
            return run.usage;
        }
        let mut total = run.usage;
        match self.store.child_runs(run.id).await {
            Ok(children) => children.iter().for_each(|c| total.add(c.usage)),
            Err(e) => {
                tracing::warn!(run_id = %run.id, error = %e, "cannot read a run's children for its total usage");
            }
        }
        total
    }

    async fn tell_parent(&self, run: &Run) {
        if let Some((parent, slug)) = &self.parent {
            let event = ThreadEvent::Subagent {
                run: run.clone(),
                subagent_slug: slug.clone(),
            };
            self.publish(parent, &event).await;
        }
    }

    async fn publish(&self, thread: &ThreadId, event: &ThreadEvent) {
        if let Err(e) = self.bus.publish_thread(thread, event).await {
            tracing::warn!(thread_id = %thread, error = %e, "cannot publish a thread event");
        }
    }
}
