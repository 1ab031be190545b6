//! What goes wrong talking to an MCP server, in words that name the server.

use std::time::Duration;

/// Why a connection, a listing or a call failed. The message names the server and is what a
/// model or a person reads; it never carries a secret (header values and environment values
/// are not part of any message) nor the server's stderr.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The process could not be started (the sandbox refused, or the program is missing).
    #[error("MCP server `{server}` could not be started: {message}")]
    Start { server: String, message: String },
    /// The endpoint could not be reached (refused, DNS, TLS).
    #[error("MCP server `{server}` is unreachable: {message}")]
    Unreachable { server: String, message: String },
    /// The endpoint answered 401/403.
    #[error("MCP server `{server}` refused the credentials (HTTP 401/403): check its headers")]
    Unauthorized { server: String },
    /// The server did not complete the MCP handshake.
    #[error("MCP server `{server}` did not complete the MCP handshake: {message}")]
    Handshake { server: String, message: String },
    /// Nothing came back in time.
    #[error("MCP server `{server}` did not answer {what} within {} s", after.as_secs_f64())]
    Timeout {
        server: String,
        what: &'static str,
        after: Duration,
    },
    /// The connection ended (the process exited, the endpoint went away).
    #[error("MCP server `{server}` stopped {when}")]
    Closed { server: String, when: &'static str },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server `{server}` answered an error: {message}")]
    Protocol { server: String, message: String },
    /// The caller gave up (the run was cancelled).
    #[error("the call to MCP server `{server}` was cancelled")]
    Cancelled { server: String },
    /// The bound on processes running at once is reached, none of them idle.
    #[error(
        "MCP server `{server}` cannot be started: {limit} MCP server processes are running on \
         this server already (its limit); try again when one is idle"
    )]
    LimitReached { server: String, limit: usize },
    /// The server's configuration cannot be used (a secret this server's key does not open).
    #[error("MCP server `{server}` is misconfigured: {message}")]
    Config { server: String, message: String },
}

impl McpError {
    /// A stable word for clients: `start`, `unreachable`, `unauthorized`, `handshake`,
    /// `timeout`, `closed`, `protocol`, `cancelled`, `limit`, `config`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::Unreachable { .. } => "unreachable",
            Self::Unauthorized { .. } => "unauthorized",
            Self::Handshake { .. } => "handshake",
            Self::Timeout { .. } => "timeout",
            Self::Closed { .. } => "closed",
            Self::Protocol { .. } => "protocol",
            Self::Cancelled { .. } => "cancelled",
            Self::LimitReached { .. } => "limit",
            Self::Config { .. } => "config",
        }
    }

    /// Whether the connection is unusable after this error (so the pool drops it).
    pub fn breaks_connection(&self) -> bool {
        matches!(self, Self::Closed { .. } | Self::Unreachable { .. })
    }
}

/// The words of an error and its sources, for messages that must say why.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}
