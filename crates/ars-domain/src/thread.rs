//! Threads and their messages: the durable conversation history (the checkpoint).
//!
//! A thread belongs to one user and one agent. Top-level threads own a sandbox runtime scope and
//! a project workdir; child threads (subagent runs) record their parent and share the parent's
//! `runtime_scope_id` and `workdir_path`, so parent and child read the same live bytes.

use std::collections::HashSet;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::lineage::ThreadLineage;
use crate::{AgentId, RunId, RunStatus, UserId};

/// Identifies a thread. Text, because child thread ids embed their parent's:
/// `<parent_thread_id>_sub_<slug>_<uuid8>`. Top-level ids are UUIDv7 text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = String)]
pub struct ThreadId(String);

/// Longest accepted thread id: room for a few levels of `_sub_` suffixes, bounded for indexes.
pub const MAX_THREAD_ID_LEN: usize = 512;

impl ThreadId {
    /// A fresh top-level thread id.
    pub fn new() -> Self {
        Self(uuid::Uuid::now_v7().hyphenated().to_string())
    }

    /// Accepts `[A-Za-z0-9_-]`, 1–512 characters; anything else is not a thread id.
    pub fn parse(text: &str) -> Option<Self> {
        let ok = !text.is_empty()
            && text.len() <= MAX_THREAD_ID_LEN
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        ok.then(|| Self(text.to_string()))
    }

    /// The id of a new child thread of `self` for subagent `slug`.
    pub fn child(&self, slug: &str) -> Self {
        let uuid = uuid::Uuid::new_v4().simple().to_string();
        Self(format!("{}_sub_{slug}_{}", self.0, &uuid[..8]))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ThreadId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A conversation with one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub id: ThreadId,
    pub user_id: UserId,
    pub agent_id: AgentId,
    pub title: String,
    /// Set on child threads: the thread whose agent delegated to this one, and the subagent
    /// it runs. Served as `parent_thread_id` and `subagent_slug`.
    #[serde(flatten, with = "crate::lineage::thread_fields")]
    pub lineage: Option<ThreadLineage>,
    /// The sandbox runtime this thread's tools run in: the root conversation's.
    pub runtime_scope_id: String,
    /// The project workdir, relative to the user's workspace (`/home/gem/user-data/<this>`).
    pub workdir_path: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Thread {
    /// A new top-level thread: its own runtime scope and a workdir named after it.
    pub fn new_root(user_id: UserId, agent_id: AgentId, title: String) -> Self {
        let id = ThreadId::new();
        let now = crate::time::now();
        Self {
            runtime_scope_id: id.to_string(),
            workdir_path: format!("threads/{id}"),
            id,
            user_id,
            agent_id,
            title,
            lineage: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// A new child thread of `self` for subagent `agent` (`slug`): same user, runtime scope
    /// and workdir.
    pub fn new_child(&self, agent_id: AgentId, slug: &str, title: String) -> Self {
        let now = crate::time::now();
        Self {
            id: self.id.child(slug),
            user_id: self.user_id,
            agent_id,
            title,
            lineage: Some(ThreadLineage {
                parent_thread_id: self.id.clone(),
                subagent_slug: slug.to_string(),
            }),
            runtime_scope_id: self.runtime_scope_id.clone(),
            workdir_path: self.workdir_path.clone(),
            created_at: now,
            updated_at: now,
        }
    }

    /// The thread whose agent delegated to this one, if any.
    pub fn parent_thread_id(&self) -> Option<&ThreadId> {
        self.lineage.as_ref().map(|l| &l.parent_thread_id)
    }

    /// The subagent this thread runs, if it is a child thread.
    pub fn subagent_slug(&self) -> Option<&str> {
        self.lineage.as_ref().map(|l| l.subagent_slug.as_str())
    }
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MessageRole {
    System,
    User,
    Assistant,
    Tool,
}

impl MessageRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Tool => "tool",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::System, Self::User, Self::Assistant, Self::Tool]
            .into_iter()
            .find(|r| r.as_str() == text)
    }
}

/// A tool call the assistant asked for, as persisted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    /// The raw JSON text of the arguments, as the model produced it.
    pub arguments: String,
    /// Set when served, never stored: the call never got a result and its run is over (a
    /// stop, crash or cancel cut it off), so it will never get one. See
    /// [`mark_interrupted_calls`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// Marks the tool calls of `messages` (one thread's, in order) that never got a result and
/// never will: their run is not `active` (a thread has at most one active run; every other
/// run of it has ended).
pub fn mark_interrupted_calls(messages: &mut [Message], active: Option<RunId>) {
    mark_interrupted_calls_with(messages, active, &HashSet::new());
}

/// The calls of `messages` answered among them, by run.
fn answered_in(messages: &[Message]) -> HashSet<(RunId, String)> {
    messages
        .iter()
        .filter_map(|m| Some((m.run_id?, m.tool_call_id.clone()?)))
        .collect()
}

/// The ended runs (not `active`) with a tool call in `messages` whose result is not among
/// them: for one page of a thread, the runs whose results may lie beyond the page.
pub fn runs_with_unanswered_calls(messages: &[Message], active: Option<RunId>) -> Vec<RunId> {
    let answered = answered_in(messages);
    let mut runs = Vec::new();
    for message in messages {
        let Some(run) = message.run_id.filter(|run| Some(*run) != active) else {
            continue;
        };
        let open = message
            .tool_calls
            .iter()
            .any(|call| !answered.contains(&(run, call.id.clone())));
        if open && !runs.contains(&run) {
            runs.push(run);
        }
    }
    runs
}

/// As [`mark_interrupted_calls`] for a page of a thread: `answered_elsewhere` holds the calls
/// answered outside the page (see [`runs_with_unanswered_calls`]).
pub fn mark_interrupted_calls_with(
    messages: &mut [Message],
    active: Option<RunId>,
    answered_elsewhere: &HashSet<(RunId, String)>,
) {
    let answered = answered_in(messages);
    for message in messages.iter_mut() {
        let Some(run) = message.run_id.filter(|run| Some(*run) != active) else {
            continue;
        };
        for call in &mut message.tool_calls {
            let key = (run, call.id.clone());
            call.interrupted = !answered.contains(&key) && !answered_elsewhere.contains(&key);
        }
    }
}

/// One committed message of a thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Message {
    pub id: crate::MessageId,
    pub thread_id: ThreadId,
    /// The run that produced it; `None` for messages written outside a run (notices).
    pub run_id: Option<RunId>,
    /// Position in the thread, strictly increasing.
    pub seq: i64,
    pub role: MessageRole,
    pub content: String,
    /// Assistant messages: the tool calls it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRecord>,
    /// Tool messages: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Tool messages: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool messages: whether the call failed (the content is then the error the model saw).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Completion notices: the background subagent run it reports on, so a client can link
    /// to it without reading the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<MessageNotice>,
    /// Sent into a run while it was active (steering, or a notice that reached a running
    /// parent): the model read it before its next model call, after the results of the calls
    /// it had open.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steer: bool,
    pub created_at: DateTime<Utc>,
    /// The run that replaced this message (a regenerate or an edit started with
    /// `replace_from`): it has left the thread's history. Absent for the current history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by_run_id: Option<RunId>,
}

/// What a completion notice (a system message written when a background subagent run ends
/// after its parent's run) reports on: the child run as it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MessageNotice {
    /// The child run.
    pub run_id: RunId,
    /// The child thread: its history, or where to continue it.
    pub thread_id: ThreadId,
    /// The subagent that ran it.
    pub subagent_slug: Option<String>,
    /// How it ended (a terminal status).
    pub status: RunStatus,
}

/// A message to append; the store assigns `id`, `seq` and `created_at`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMessage {
    pub thread_id: ThreadId,
    pub run_id: Option<RunId>,
    pub role: MessageRole,
    pub content: String,
    pub tool_calls: Vec<ToolCallRecord>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub notice: Option<MessageNotice>,
    /// Sent into the active run `run_id` from outside it (see [`Message::steer`]).
    pub steer: bool,
    /// The background child run whose end this message tells its parent thread of: written
    /// only if nobody has told it yet, so once per child.
    pub tells: Option<RunId>,
    /// What run `run_id` has spent so far, recorded on the run with the message (one commit
    /// for the model's answer and its accounting).
    pub spent: Option<RunSpend>,
}

/// A run's tokens so far and the model it talks to (`provider/model`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSpend {
    pub usage: crate::Usage,
    pub model: Option<String>,
}

impl NewMessage {
    /// A plain message with no tool data.
    pub fn text(
        thread_id: ThreadId,
        run_id: Option<RunId>,
        role: MessageRole,
        content: String,
    ) -> Self {
        Self {
            thread_id,
            run_id,
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            notice: None,
            steer: false,
            tells: None,
            spent: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MessageId;

    fn message(
        run: Option<RunId>,
        role: MessageRole,
        calls: &[&str],
        answers: Option<&str>,
    ) -> Message {
        Message {
            id: MessageId::new(),
            thread_id: ThreadId::new(),
            run_id: run,
            seq: 0,
            role,
            content: String::new(),
            tool_calls: calls
                .iter()
                .map(|id| ToolCallRecord {
                    id: id.to_string(),
                    name: "ls".into(),
                    arguments: "{}".into(),
                    interrupted: false,
                })
                .collect(),
            tool_call_id: answers.map(str::to_string),
            tool_name: None,
            is_error: false,
            notice: None,
            steer: false,
            created_at: crate::time::now(),
            replaced_by_run_id: None,
        }
    }

    #[test]
    fn calls_without_a_result_of_ended_runs_are_marked_interrupted_and_the_active_runs_are_not() {
        let (ended, active) = (RunId::new(), RunId::new());
        let mut messages = vec![
            message(Some(ended), MessageRole::Assistant, &["a", "b"], None),
            message(Some(ended), MessageRole::Tool, &[], Some("a")),
            message(Some(active), MessageRole::Assistant, &["c"], None),
        ];
        mark_interrupted_calls(&mut messages, Some(active));
        let flags: Vec<bool> = messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.interrupted))
            .collect();
        assert_eq!(flags, vec![false, true, false]);
        // The flag is served, not stored: false is not even serialised.
        let json = serde_json::to_value(&messages[0].tool_calls[0]).unwrap_or_default();
        assert!(json.get("interrupted").is_none(), "{json}");
    }

    #[test]
    fn a_page_names_the_runs_whose_results_may_lie_beyond_it_and_counts_them_answered() {
        let (ended, active) = (RunId::new(), RunId::new());
        // A page that ends on a call of an ended run: its result is on the next page.
        let mut page = vec![
            message(Some(ended), MessageRole::Assistant, &["a", "b"], None),
            message(Some(active), MessageRole::Assistant, &["c"], None),
        ];
        assert_eq!(runs_with_unanswered_calls(&page, Some(active)), vec![ended]);
        let elsewhere = HashSet::from([(ended, "a".to_string())]);
        mark_interrupted_calls_with(&mut page, Some(active), &elsewhere);
        let flags: Vec<bool> = page
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.interrupted))
            .collect();
        assert_eq!(flags, vec![false, true, false]);
        let answered = vec![
            message(Some(ended), MessageRole::Assistant, &["a"], None),
            message(Some(ended), MessageRole::Tool, &[], Some("a")),
        ];
        assert_eq!(runs_with_unanswered_calls(&answered, None), Vec::new());
    }

    #[test]
    fn child_thread_ids_embed_parent_slug_and_eight_hex_chars() {
        let parent = ThreadId::new();
        let child = parent.child("researcher");
        let prefix = format!("{parent}_sub_researcher_");
        let suffix = child.as_str().strip_prefix(&prefix).unwrap();
        assert_eq!(suffix.len(), 8);
        assert!(suffix.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(ThreadId::parse(child.as_str()), Some(child));
    }

    #[test]
    fn thread_ids_refuse_odd_characters() {
        for bad in ["", "a/b", "../x", "a b", "a\0b"] {
            assert_eq!(ThreadId::parse(bad), None, "{bad:?}");
        }
        assert_eq!(ThreadId::parse(&"a".repeat(MAX_THREAD_ID_LEN + 1)), None);
    }

    #[test]
    fn children_share_scope_and_workdir() {
        let root = Thread::new_root(UserId::new(), AgentId::new(), "t".into());
        let child = root.new_child(AgentId::new(), "gp", "c".into());
        assert_eq!(child.runtime_scope_id, root.runtime_scope_id);
        assert_eq!(child.workdir_path, root.workdir_path);
        assert_eq!(child.parent_thread_id(), Some(&root.id));
    }
}
