//! Rows of `mcp_servers`, and their conversion into domain types.
//!
//! Secret values inside the transport pass through as the sealed text they were written as:
//! the store never holds a key and never sees a secret in clear.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{McpServer, McpServerFields, McpServerId, McpTransport};

use crate::Result;
use crate::rows::{ShareRow, corrupt, parse_user_id, share_config, shares_by_resource};

#[derive(sqlx::FromRow)]
pub(crate) struct McpServerRow {
    id: String,
    slug: String,
    name: String,
    description: String,
    transport: Json<McpTransport>,
    enabled_tools: Option<Json<Vec<String>>>,
    visibility: String,
    owner_id: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl McpServerRow {
    /// The stored id text, to look up this server's shares.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The server, with `shares` being exactly its share rows (in any order).
    pub(crate) fn into_server(self, shares: Vec<ShareRow>) -> Result<McpServer> {
        Ok(McpServer {
            id: McpServerId::parse(&self.id).ok_or_else(|| corrupt("mcp server id", &self.id))?,
            fields: McpServerFields {
                slug: self.slug,
                name: self.name,
                description: self.description,
                transport: self.transport.0,
                enabled_tools: self.enabled_tools.map(|tools| tools.0),
                share_config: share_config("mcp_servers.visibility", &self.visibility, shares)?,
            },
            owner_id: self.owner_id.as_deref().map(parse_user_id).transpose()?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Joins server rows with the share rows of all of them, keeping the servers' order.
pub(crate) fn assemble_servers(
    rows: Vec<McpServerRow>,
    shares: Vec<ShareRow>,
) -> Result<Vec<McpServer>> {
    let mut by_server = shares_by_resource(shares);
    rows.into_iter()
        .map(|row| {
            let shares = by_server.remove(&row.id).unwrap_or_default();
            row.into_server(shares)
        })
        .collect()
}

/// `transport_type`, as stored beside the transport.
pub(crate) fn transport_type(transport: &McpTransport) -> &'static str {
    match transport {
        McpTransport::Stdio(_) => "stdio",
        McpTransport::StreamableHttp(_) => "streamable_http",
    }
}
