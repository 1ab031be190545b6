//! Rows of `mcp_servers`, and their conversion into domain types.
//!
//! Secret values inside the transport pass through as the sealed text they were written as:
//! the store never holds a key and never sees a secret in clear.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{McpServer, McpServerFields, McpServerId, McpTransport};

use crate::Result;
use crate::rows::{corrupt, parse_user_id};
use crate::shares::{ShareRow, SharedRow, share_config};

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

impl SharedRow for McpServerRow {
    type Resource = McpServer;

    fn id(&self) -> &str {
        &self.id
    }

    fn into_resource(self, shares: Vec<ShareRow>) -> Result<McpServer> {
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

/// `transport_type`, as stored beside the transport.
pub(crate) fn transport_type(transport: &McpTransport) -> &'static str {
    match transport {
        McpTransport::Stdio(_) => "stdio",
        McpTransport::StreamableHttp(_) => "streamable_http",
    }
}
