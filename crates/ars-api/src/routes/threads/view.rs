//! A thread and its messages on the wire. Their fields mirror the stored rows today; the views
//! keep the wire shape where it is when the rows change.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{
    AgentId, Message, MessageId, MessageNotice, MessageRole, RunId, Thread, ThreadId,
    ToolCallRecord, UserId,
};

/// A conversation with one agent.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[schema(as = Thread)]
pub struct ThreadView {
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
    /// In the thread list: a run of the thread, or of one of its subagents, waits for your
    /// decision (`GET /api/threads/{id}/pending`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub waiting: bool,
}

impl From<Thread> for ThreadView {
    fn from(thread: Thread) -> Self {
        let (parent_thread_id, subagent_slug) = match thread.lineage {
            Some(l) => (Some(l.parent_thread_id), Some(l.subagent_slug)),
            None => (None, None),
        };
        Self {
            id: thread.id,
            user_id: thread.user_id,
            agent_id: thread.agent_id,
            title: thread.title,
            parent_thread_id,
            subagent_slug,
            runtime_scope_id: thread.runtime_scope_id,
            workdir_path: thread.workdir_path,
            created_at: thread.created_at,
            updated_at: thread.updated_at,
            waiting: false,
        }
    }
}

/// One committed message of a thread.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[schema(as = Message)]
pub struct MessageView {
    pub id: MessageId,
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
    /// Sent into a run while it was active (`POST /api/runs/{id}/messages`, or a completion
    /// notice that reached a running parent): the model read it before its next model call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steer: bool,
    pub created_at: DateTime<Utc>,
    /// The run that replaced this message (a regenerate or an edit started with
    /// `replace_from`): it has left the thread's history. Absent for the current history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by_run_id: Option<RunId>,
}

impl From<Message> for MessageView {
    fn from(message: Message) -> Self {
        Self {
            id: message.id,
            thread_id: message.thread_id,
            run_id: message.run_id,
            seq: message.seq,
            role: message.role,
            content: message.content,
            tool_calls: message.tool_calls,
            tool_call_id: message.tool_call_id,
            tool_name: message.tool_name,
            is_error: message.is_error,
            notice: message.notice,
            steer: message.steer,
            created_at: message.created_at,
            replaced_by_run_id: message.replaced_by_run_id,
        }
    }
}
