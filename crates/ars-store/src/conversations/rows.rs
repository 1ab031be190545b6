//! Rows of `threads` and `messages`, and their conversion into domain types.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{
    Message, MessageId, MessageNotice, MessageRole, Thread, ThreadLineage, ToolCallRecord,
};

use crate::Result;
use crate::rows::{corrupt, parse_agent_id, parse_run_id, parse_thread_id, parse_user_id};

#[derive(sqlx::FromRow)]
pub(crate) struct ThreadRow {
    id: String,
    user_id: String,
    agent_id: String,
    title: String,
    parent_thread_id: Option<String>,
    subagent_slug: Option<String>,
    runtime_scope_id: String,
    workdir_path: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ThreadRow {
    pub(crate) fn into_thread(self) -> Result<Thread> {
        Ok(Thread {
            id: parse_thread_id(&self.id)?,
            user_id: parse_user_id(&self.user_id)?,
            agent_id: parse_agent_id(&self.agent_id)?,
            title: self.title,
            lineage: match (self.parent_thread_id, self.subagent_slug) {
                (Some(parent), Some(subagent_slug)) => Some(ThreadLineage {
                    parent_thread_id: parse_thread_id(&parent)?,
                    subagent_slug,
                }),
                (None, None) => None,
                // The table's `CHECK` sets both or neither.
                (Some(parent), None) => return Err(corrupt("threads.subagent_slug", &parent)),
                (None, Some(slug)) => return Err(corrupt("threads.parent_thread_id", &slug)),
            },
            runtime_scope_id: self.runtime_scope_id,
            workdir_path: self.workdir_path,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct MessageRow {
    id: String,
    thread_id: String,
    run_id: Option<String>,
    seq: i64,
    role: String,
    content: String,
    tool_calls: Json<Vec<ToolCallRecord>>,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    is_error: bool,
    notice: Option<Json<MessageNotice>>,
    steer: bool,
    created_at: DateTime<Utc>,
    replaced_by_run_id: Option<String>,
}

impl MessageRow {
    pub(crate) fn into_message(self) -> Result<Message> {
        Ok(Message {
            id: MessageId::parse(&self.id).ok_or_else(|| corrupt("message id", &self.id))?,
            thread_id: parse_thread_id(&self.thread_id)?,
            run_id: self.run_id.as_deref().map(parse_run_id).transpose()?,
            seq: self.seq,
            role: MessageRole::parse(&self.role)
                .ok_or_else(|| corrupt("messages.role", &self.role))?,
            content: self.content,
            tool_calls: self.tool_calls.0,
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            is_error: self.is_error,
            notice: self.notice.map(|n| n.0),
            steer: self.steer,
            created_at: self.created_at,
            replaced_by_run_id: self
                .replaced_by_run_id
                .as_deref()
                .map(parse_run_id)
                .transpose()?,
        })
    }
}
