//! The statements of MCP servers and of the sessions of ARS's own MCP endpoint, written once
//! for both databases (`$N` placeholders: see the crate docs).

use crate::shares::{Dialects, ShareTable, share_table, visible_to, with_shares};

/// The MCP server columns, in [`super::rows::McpServerRow`] order; unqualified so they
/// also serve `RETURNING` clauses.
macro_rules! mcp_server_columns {
    () => {
        "id, slug, name, description, transport, enabled_tools, visibility, owner_id, \
         created_at, updated_at"
    };
}

/// `$10`: now, both timestamps.
pub(crate) const INSERT_MCP_SERVER: &str = concat!(
    "INSERT INTO mcp_servers (id, slug, name, description, transport_type, transport, \
     enabled_tools, visibility, owner_id, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ",
    mcp_server_columns!()
);

/// Everything but the id, the slug, the owner and `created_at`. `$8`: now.
pub(crate) const UPDATE_MCP_SERVER: &str = concat!(
    "UPDATE mcp_servers SET name = $2, description = $3, transport_type = $4, transport = $5, \
     enabled_tools = $6, visibility = $7, updated_at = $8 WHERE id = $1 RETURNING ",
    mcp_server_columns!()
);

pub(crate) const MCP_SERVER_BY_ID: Dialects = with_shares!(
    ("mcp_servers", "mcp_server_shares", "mcp_server_id"),
    concat!("SELECT ", mcp_server_columns!()),
    " FROM mcp_servers WHERE id = $1"
);

pub(crate) const MCP_SERVER_BY_SLUG: Dialects = with_shares!(
    ("mcp_servers", "mcp_server_shares", "mcp_server_id"),
    concat!("SELECT ", mcp_server_columns!()),
    " FROM mcp_servers WHERE slug = $1"
);

/// `$1`: the viewing user's id, or NULL for every server. By slug, in byte order in both
/// databases (the PostgreSQL column uses the "C" collation). Each with its shares.
pub(crate) const LIST_MCP_SERVERS: Dialects = with_shares!(
    ("mcp_servers", "mcp_server_shares", "mcp_server_id"),
    concat!("SELECT ", mcp_server_columns!()),
    concat!(
        " FROM mcp_servers WHERE ",
        visible_to!("mcp_servers", "mcp_server_shares", "mcp_server_id", "$1"),
        " ORDER BY slug"
    )
);

/// The share rows of MCP servers.
pub(crate) const MCP_SERVER_SHARES: ShareTable = share_table!("mcp_server_shares", "mcp_server_id");

/// Shares go with the row (ON DELETE CASCADE), in the same statement.
pub(crate) const DELETE_MCP_SERVER: &str = "DELETE FROM mcp_servers WHERE id = $1";

// Sessions of ARS's own MCP endpoint and their calls in flight.

pub(crate) const UPSERT_MCP_SESSION: &str = "INSERT INTO mcp_sessions (id, state, created_at) \
     VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET state = excluded.state";

/// Calls go with their sessions (ON DELETE CASCADE).
pub(crate) const EXPIRE_MCP_SESSIONS: &str = "DELETE FROM mcp_sessions WHERE created_at < $1";

pub(crate) const MCP_SESSION: &str = "SELECT state FROM mcp_sessions WHERE id = $1";

pub(crate) const DELETE_MCP_SESSION: &str = "DELETE FROM mcp_sessions WHERE id = $1";

/// Only a session nobody owns yet takes an owner.
pub(crate) const BIND_MCP_SESSION: &str =
    "UPDATE mcp_sessions SET user_id = $2 WHERE id = $1 AND user_id IS NULL";

pub(crate) const MCP_SESSION_OWNER: &str =
    "SELECT user_id FROM mcp_sessions WHERE id = $1 AND user_id IS NOT NULL";

pub(crate) const UPSERT_MCP_CALL: &str = "INSERT INTO mcp_calls (session_id, request_id, run_id) \
     VALUES ($1, $2, $3) ON CONFLICT (session_id, request_id) DO UPDATE SET run_id = excluded.run_id";

pub(crate) const MCP_CALL_RUN: &str =
    "SELECT run_id FROM mcp_calls WHERE session_id = $1 AND request_id = $2";

pub(crate) const DELETE_MCP_CALL: &str =
    "DELETE FROM mcp_calls WHERE session_id = $1 AND request_id = $2";
