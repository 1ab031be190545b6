//! ARS's MCP client (Model Context Protocol), over the official Rust SDK, `rmcp`.
//!
//! - [`Connection`]: one initialised session with a server, over a sandboxed process's pipes
//!   ([`Connection::over_process`]), any pair of streams, or Streamable HTTP
//!   ([`Connection::over_http`]); lists tools, calls them, reads resources, each within a
//!   time limit and cancellable.
//! - [`content`]: a call's result as text plus attachments (images, resources) for the
//!   caller to save as files.
//! - [`names`]: the `mcp__<server>__<tool>` names tools are offered under.
//! - [`Pool`]: connections shared by key, opened lazily, closed when idle, restarted with
//!   back-off, bounded in processes.
//! - [`check`]: connect, initialise, list tools — what `POST /api/mcp-servers/{id}/check`
//!   and `ars mcp check` print.
//! - [`outbound`]: the outbound policy applied to a connection to a URL a non-admin gave
//!   ([`Reach::Checked`]): every address judged where the connection is made, the client
//!   handed only the addresses judged; and [`Outbound::check_url`], the same judgement when a
//!   URL is saved.
//!
//! **Boundary:** no store, no runtime, no HTTP API: it takes a process or a URL and headers
//! and speaks MCP. Secrets it is handed (header values) go on the wire and nowhere else.

mod client;
pub mod content;
mod error;
mod http;
pub mod names;
pub mod outbound;
mod pool;
mod schema;
mod stderr;

use std::time::{Duration, Instant};

use serde::Serialize;

pub use client::{
    Connection, MAX_TOOL_PAGES, MAX_TOOLS, ServerInfo, ServerSummary, ServerTool,
    install_tls_provider,
};
pub use error::McpError;
pub use outbound::{Outbound, PeerText, Reach};
pub use pool::{Pool, PoolConfig, PoolKey};
pub use rmcp;
pub use schema::{ArgsSchema, Limits as SchemaLimits, SchemaRefused};

/// What a connection check found.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    #[serde(flatten)]
    pub summary: ServerSummary,
    pub tools: Vec<ServerTool>,
    /// From the start of the connection to the tool list.
    pub latency_ms: u64,
}

/// Lists what an open connection offers, timing from `started`.
pub async fn check(
    connection: &Connection,
    started: Instant,
    timeout: Duration,
) -> Result<CheckReport, McpError> {
    let tools = connection.list_tools(timeout).await?;
    Ok(CheckReport {
        summary: connection.summary(),
        tools,
        latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}
