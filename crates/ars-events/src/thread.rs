//! Thread events: what changed on a thread — its runs, the subagent runs started from it, the
//! completion notices written to it — for the followers of its event stream.
//!
//! Unlike run events they are neither numbered nor stored: a thread is a topic (see
//! [`crate::topic`]). A follower calls
//! [`EventBus::follow_thread`](crate::EventBus::follow_thread) first and reads the thread's
//! state from the store after it answered, so nothing published in between is missed; from then
//! on each event carries the whole new state of what it is about (a run as it now stands), so a
//! follower replaces by run id and applying one twice changes nothing.

use ars_domain::{Message, Run, ThreadId, Usage};
use serde::{Deserialize, Serialize};

use crate::EventError;
use crate::topic::{TOPIC_BACKLOG, TopicStream, Topics};

/// How many events a follower may fall behind before it misses some (and is told so).
pub const THREAD_BACKLOG: usize = TOPIC_BACKLOG;

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
    /// A run of the thread, or of a subagent started from it, started waiting for people:
    /// `run` as it stands, its `pending` the calls and questions to decide.
    ApprovalRequested { run: Run },
    /// What `run` waited on was decided (or its time for a decision ran out): the items by
    /// call id, and `run` as it now stands.
    ApprovalResolved { run: Run, call_ids: Vec<String> },
}

impl ThreadEvent {
    /// The run the event is about.
    pub fn run(&self) -> &Run {
        match self {
            Self::Run { run, .. }
            | Self::Subagent { run, .. }
            | Self::Notice { run, .. }
            | Self::ApprovalRequested { run }
            | Self::ApprovalResolved { run, .. } => run,
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

/// A thread's events from the moment of following on (see [`TopicStream`]).
pub type ThreadEventStream = TopicStream<ThreadEvent>;

/// The followers of each thread in one process.
pub type LocalTopics = Topics<ThreadId, ThreadEvent>;

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
                pending: Vec::new(),
            },
            total_usage: Usage::default(),
        }
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
