//! Threads and their messages: the durable conversation history (the checkpoint).
//!
//! A thread belongs to one user and one agent. Top-level threads own a sandbox runtime scope and
//! a project workdir; child threads (subagent runs) record their parent and share the parent's
//! `runtime_scope_id` and `workdir_path`, so parent and child read the same live bytes.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{AgentId, RunId, UserId};

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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Thread {
    pub id: ThreadId,
    pub user_id: UserId,
    pub agent_id: AgentId,
    pub title: String,
    /// Set on child threads: the thread whose agent delegated to this one.
    pub parent_thread_id: Option<ThreadId>,
    /// Set on child threads: the subagent slug this thread runs.
    pub subagent_slug: Option<String>,
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
            parent_thread_id: None,
            subagent_slug: None,
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
            parent_thread_id: Some(self.id.clone()),
            subagent_slug: Some(slug.to_string()),
            runtime_scope_id: self.runtime_scope_id.clone(),
            workdir_path: self.workdir_path.clone(),
            created_at: now,
            updated_at: now,
        }
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
    pub created_at: DateTime<Utc>,
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(child.parent_thread_id.as_ref(), Some(&root.id));
    }
}
