//! What the protocol adapters (OpenAI, LangGraph, A2A) keep beside ARS's own data: the free
//! metadata a LangGraph client gives a thread, and the agent a thread created before its first
//! run is bound to.

use async_trait::async_trait;
use serde_json::Value;

use ars_domain::{AgentId, ThreadId, UserId};

use crate::{Result, Updated};

pub(crate) mod queries;
pub(crate) mod sql;

/// Thread metadata and late binding, for the protocol adapters.
#[async_trait]
pub trait ProtocolStore: Send + Sync {
    /// A thread's metadata (a JSON object), `None` when it has none.
    async fn thread_metadata(&self, thread: &ThreadId) -> Result<Option<Value>>;
    /// Replaces a thread's metadata; the thread must be `user`'s (`NotFound` otherwise, and
    /// when it is gone).
    async fn set_thread_metadata(
        &self,
        thread: &ThreadId,
        user: UserId,
        metadata: &Value,
    ) -> Result<Updated>;
    /// Every thread of `user`'s that has metadata, with it.
    async fn user_thread_metadata(&self, user: UserId) -> Result<Vec<(ThreadId, Value)>>;
    /// Binds a thread that holds no message yet to `agent`, in one statement that checks
    /// both: [`Updated::NotFound`] when it is gone or already holds messages.
    async fn bind_empty_thread(&self, thread: &ThreadId, agent: AgentId) -> Result<Updated>;
}
