//! MCP: the MCP servers ARS connects to (a shared resource, see [`crate::shares`]; secret
//! values inside the transport arrive and leave sealed), and the sessions of ARS's own MCP
//! endpoint with the calls in flight in them.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{McpServer, McpServerFields, McpServerId, RunId, UserId};

use crate::{Bound, Deleted, Result};

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// Which MCP servers a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct McpServerFilter {
    /// Only servers this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every server (admins).
    pub visible_to: Option<UserId>,
}

/// MCP servers, and the sessions of ARS's own MCP endpoint.
#[async_trait]
pub trait McpStore: Send + Sync {
    // MCP servers: the row and its shares change together.

    /// Creates an MCP server with this id (its secrets are sealed for it). A taken slug is
    /// `Conflict { field: "slug" }`; an unknown owner or share user is `Invalid`. Nothing is
    /// written on any error.
    async fn create_mcp_server(
        &self,
        id: McpServerId,
        fields: &McpServerFields,
        owner: Option<UserId>,
    ) -> Result<McpServer>;
    /// The server with this id, shares included; no visibility check.
    async fn mcp_server(&self, id: McpServerId) -> Result<Option<McpServer>>;
    /// The server with this slug, shares included; no visibility check.
    async fn mcp_server_by_slug(&self, slug: &str) -> Result<Option<McpServer>>;
    /// Servers matching `filter`, by slug (byte order).
    async fn list_mcp_servers(&self, filter: McpServerFilter) -> Result<Vec<McpServer>>;
    /// Replaces every field but the slug (which never changes: `fields.slug` is ignored) and
    /// the shares, sets `updated_at`, in one transaction; `NotFound` when the server is gone,
    /// an unknown share user `Invalid`.
    async fn update_mcp_server(
        &self,
        id: McpServerId,
        fields: &McpServerFields,
    ) -> Result<McpServer>;
    /// Deletes a server with its shares; [`Deleted::NotFound`] when there was none.
    async fn delete_mcp_server(&self, id: McpServerId) -> Result<Deleted>;

    // Sessions of ARS's own MCP endpoint and the calls in flight in them, shared by every
    // instance: a session opened on one is served by any, a cancellation reaching any cancels
    // the run.

    /// Saves an MCP session's state (JSON text), replacing any under `id`; sessions opened
    /// before `expire_before` (and their calls) go in the same transaction.
    async fn save_mcp_session(
        &self,
        id: &str,
        state: &str,
        expire_before: DateTime<Utc>,
    ) -> Result<()>;
    /// An MCP session's state; `None` when unknown (or expired).
    async fn mcp_session(&self, id: &str) -> Result<Option<String>>;
    /// Deletes an MCP session and its calls.
    async fn delete_mcp_session(&self, id: &str) -> Result<()>;
    /// Makes `user` the owner of MCP session `id`; [`Bound::Refused`] when the session is
    /// unknown or has an owner already (a session's owner never changes).
    async fn bind_mcp_session(&self, id: &str, user: UserId) -> Result<Bound>;
    /// The user MCP session `id` belongs to; `None` when it is unknown or has no owner.
    async fn mcp_session_owner(&self, id: &str) -> Result<Option<UserId>>;
    /// Records that request `request_id` of MCP session `session_id` runs `run`; `Invalid`
    /// when the session or the run is unknown.
    async fn save_mcp_call(&self, session_id: &str, request_id: &str, run: RunId) -> Result<()>;
    /// The run request `request_id` of MCP session `session_id` started, while recorded.
    async fn mcp_call_run(&self, session_id: &str, request_id: &str) -> Result<Option<RunId>>;
    /// Forgets a call (it ended).
    async fn delete_mcp_call(&self, session_id: &str, request_id: &str) -> Result<()>;
}
