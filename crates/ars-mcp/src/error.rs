//! What goes wrong talking to an MCP server, in words that name the server.

use std::time::Duration;

use rmcp::transport::streamable_http_client::StreamableHttpError;

use crate::outbound::Blocked;

/// Why a connection, a listing or a call failed. The message names the server and is what a
/// model or a person reads; it never carries a secret (header values and environment values
/// are not part of any message) nor the server's stderr, and, when the connection withholds
/// the server's text ([`crate::PeerText::Withheld`]), nothing the server answered beyond the
/// kind of failure and its HTTP status or JSON-RPC error code.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The process could not be started (the sandbox refused, or the program is missing).
    #[error("MCP server `{server}` could not be started: {message}")]
    Start { server: String, message: String },
    /// The endpoint could not be reached (refused, DNS, TLS).
    #[error("MCP server `{server}` is unreachable: {message}")]
    Unreachable { server: String, message: String },
    /// The outbound policy refuses the endpoint's address: nothing was sent.
    #[error("MCP server `{server}` may not be reached: {message}")]
    Refused { server: String, message: String },
    /// The endpoint answered 401/403.
    #[error("MCP server `{server}` refused the credentials (HTTP {status}): check its headers")]
    Unauthorized { server: String, status: u16 },
    /// The endpoint answered another HTTP status than a success (a 3xx included: redirects
    /// are not followed). `detail` is what it said, when the connection may show it.
    #[error("MCP server `{server}` answered HTTP {status}{}{}",
        if (300..400).contains(status) { " (a redirect, which is not followed: give the server the URL it leads to)" } else { "" },
        detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    HttpStatus {
        server: String,
        status: u16,
        detail: Option<String>,
    },
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
    /// A stable word for clients: `start`, `unreachable`, `refused_address`, `unauthorized`,
    /// `http_status`, `handshake`, `timeout`, `closed`, `protocol`, `cancelled`, `limit`,
    /// `config`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::Unreachable { .. } => "unreachable",
            Self::Refused { .. } => "refused_address",
            Self::Unauthorized { .. } => "unauthorized",
            Self::HttpStatus { .. } => "http_status",
            Self::Handshake { .. } => "handshake",
            Self::Timeout { .. } => "timeout",
            Self::Closed { .. } => "closed",
            Self::Protocol { .. } => "protocol",
            Self::Cancelled { .. } => "cancelled",
            Self::LimitReached { .. } => "limit",
            Self::Config { .. } => "config",
        }
    }

    /// The HTTP status the endpoint answered, when that is what failed.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Unauthorized { status, .. } | Self::HttpStatus { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the connection is unusable after this error (so the pool drops it).
    pub fn breaks_connection(&self) -> bool {
        matches!(
            self,
            Self::Closed { .. } | Self::Unreachable { .. } | Self::Refused { .. }
        )
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

/// What an HTTP transport failure was, read from the error's typed causes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HttpFailure {
    /// The outbound policy refused the request: nothing was sent.
    Blocked(Blocked),
    /// The endpoint answered this status; `text` is what it said, if anything.
    Status { status: u16, text: Option<String> },
}

type HttpError = StreamableHttpError<reqwest013::Error>;

/// Finds, among `error`'s causes, a refusal of the outbound policy or an HTTP status.
pub(crate) fn http_failure(error: &(dyn std::error::Error + 'static)) -> Option<HttpFailure> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(found) = current
            .downcast_ref::<HttpError>()
            .and_then(from_transport)
            .or_else(|| blocked_in(current).map(HttpFailure::Blocked))
        {
            return Some(found);
        }
        cause = current.source();
    }
    None
}

fn from_transport(error: &HttpError) -> Option<HttpFailure> {
    match error {
        StreamableHttpError::HttpStatus(status) => Some(HttpFailure::Status {
            status: status.status,
            text: None,
        }),
        StreamableHttpError::AuthRequired(_) => Some(HttpFailure::Status {
            status: 401,
            text: None,
        }),
        StreamableHttpError::InsufficientScope(_) => Some(HttpFailure::Status {
            status: 403,
            text: None,
        }),
        // rmcp words a failed POST as `HTTP <status> <reason>: <body>`.
        StreamableHttpError::UnexpectedServerResponse(text) => {
            let rest = text.strip_prefix("HTTP ")?;
            let status = rest.get(..3)?.parse::<u16>().ok()?;
            let said = rest
                .split_once(": ")
                .map(|(_, body)| body.trim())
                .filter(|body| !body.is_empty())
                .map(str::to_owned);
            Some(HttpFailure::Status { status, text: said })
        }
        StreamableHttpError::Io(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<Blocked>())
            .cloned()
            .map(HttpFailure::Blocked),
        StreamableHttpError::Client(client) => {
            let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(client);
            while let Some(current) = cause {
                if let Some(blocked) = blocked_in(current) {
                    return Some(HttpFailure::Blocked(blocked));
                }
                cause = current.source();
            }
            client.status().map(|status| HttpFailure::Status {
                status: status.as_u16(),
                text: None,
            })
        }
        _ => None,
    }
}

/// The HTTP client's own failure to reach the endpoint (connecting, DNS, TLS, a timeout), if
/// that is what `error` is: its words are the client's, never the server's.
pub(crate) fn unreachable(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(error);
    while let Some(current) = cause {
        if let Some(StreamableHttpError::Client(client)) = current.downcast_ref::<HttpError>() {
            return (client.is_connect() || client.is_timeout() || client.is_request())
                .then(|| chain(client));
        }
        cause = current.source();
    }
    None
}

fn blocked_in(error: &(dyn std::error::Error + 'static)) -> Option<Blocked> {
    error.downcast_ref::<Blocked>().cloned()
}
