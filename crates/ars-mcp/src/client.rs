//! One connection to an MCP server, through `rmcp`: over a process's pipes (a sandboxed
//! process, or an operator's command) or over Streamable HTTP.
//!
//! A connection answers what the server is ([`Connection::summary`]), lists its tools, calls
//! them and reads resources, each within a time limit; a call given up (cancelled, timed out)
//! sends `notifications/cancelled` (rmcp does so when the request's future is dropped). A
//! process's stderr goes to the server log, rate-limited, never to a caller.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ars_sandbox::{ProcessHandle, SandboxedProcess};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResult,
};
use rmcp::service::{
    ClientInitializeError, NotificationContext, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use crate::error::{HttpFailure, McpError, chain, http_failure};
use crate::http::{ClientError, HttpClient};
use crate::outbound::{Blocked, PeerText, Reach};
use crate::schema::ArgsSchema;
use crate::stderr;

/// What ARS tells servers about itself.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("ars", env!("CARGO_PKG_VERSION")).with_title("ARS"),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Hears what a server says on its own: a changed tool list.
#[derive(Clone)]
struct Notices {
    server: Arc<str>,
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for Notices {
    fn get_info(&self) -> ClientConfig {
        client_config()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP server's tool list changed");
        self.tools_changed.store(true, Ordering::Release);
    }
}

/// The most tools read from one server.
pub const MAX_TOOLS: usize = 1_000;
/// The most pages of `tools/list` read from one server.
pub const MAX_TOOL_PAGES: usize = 100;

/// A tool as the server lists it.
#[derive(Clone, Debug, Serialize)]
pub struct ServerTool {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    /// JSON Schema of the arguments object (`{"type": "object"}` when the server declares
    /// none).
    pub input_schema: serde_json::Value,
    /// Why ARS does not offer the tool: its input schema cannot be checked safely.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The compiled schema its arguments are checked against (none with a `problem`).
    #[serde(skip)]
    pub schema: Option<Arc<ArgsSchema>>,
}

impl ServerTool {
    /// A listed tool, its input schema checked and compiled once.
    fn new(server: &str, tool: rmcp::model::Tool) -> Self {
        let name = tool.name.into_owned();
        // Models want an object schema; a server that declares none takes any object.
        let input_schema = if tool.input_schema.is_empty() {
            serde_json::json!({"type": "object"})
        } else {
            serde_json::Value::Object((*tool.input_schema).clone())
        };
        let (schema, problem) = match ArgsSchema::new(server, &name, &input_schema) {
            Ok(schema) => (Some(Arc::new(schema)), None),
            Err(refused) => (
                None,
                Some(format!(
                    "its input schema cannot be checked safely: {refused}"
                )),
            ),
        };
        Self {
            name,
            title: tool.title,
            description: tool.description.map(|d| d.into_owned()).unwrap_or_default(),
            input_schema,
            problem,
            schema,
        }
    }
}

/// What a server says it is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerSummary {
    /// The protocol version the server answered.
    pub protocol_version: String,
    /// `name`, `version` and, when given, `title`.
    pub server_info: Option<ServerInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// The server's own name and version.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// An open, initialised MCP session.
pub struct Connection {
    server: Arc<str>,
    service: RunningService<RoleClient, Notices>,
    tools_changed: Arc<AtomicBool>,
    /// A process connection's process, killed when the connection goes.
    process: Option<std::sync::Mutex<ProcessHandle>>,
    /// `true` for a process (counted against the pool's bound).
    is_process: bool,
    /// Whether errors may quote what the server answered.
    peer_text: PeerText,
    opened: Instant,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .field("is_process", &self.is_process)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Speaks MCP with a sandboxed process over its standard input and output; its stderr
    /// goes to the log. The process is killed when the connection is dropped, and when the
    /// handshake fails.
    pub async fn over_process(
        server: &str,
        process: SandboxedProcess,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let SandboxedProcess {
            stdin,
            stdout,
            stderr,
            handle,
        } = process;
        stderr::forward(server, stderr);
        let mut connection = Self::over_streams(server, stdout, stdin, timeout).await?;
        connection.process = Some(std::sync::Mutex::new(handle));
        connection.is_process = true;
        Ok(connection)
    }

    /// Speaks MCP over a pair of streams (a process's stdout and stdin).
    pub async fn over_streams<R, W>(
        server: &str,
        read: R,
        write: W,
        timeout: Duration,
    ) -> Result<Self, McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let notices = Notices {
            server: server.into(),
            tools_changed: Arc::default(),
        };
        let started = tokio::time::timeout(timeout, notices.clone().serve((read, write))).await;
        Self::opened(server, notices, started, timeout, true, PeerText::Shown)
    }

    /// Speaks MCP with an endpoint over Streamable HTTP, sending `headers` (lower-case names)
    /// with every request. `reach` says where the connection may go (a refused address is
    /// [`McpError::Refused`], with nothing sent); `peer_text` whether its errors may quote
    /// what the server answered.
    pub async fn over_http(
        server: &str,
        url: &str,
        headers: &[(String, String)],
        timeout: Duration,
        reach: &Reach,
        peer_text: PeerText,
    ) -> Result<Self, McpError> {
        install_tls_provider();
        let mut custom = HashMap::new();
        for (name, value) in headers {
            let name =
                http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| McpError::Config {
                    server: server.into(),
                    message: format!("header name `{name}` is not valid"),
                })?;
            let mut value = http::HeaderValue::from_str(value).map_err(|_| McpError::Config {
                server: server.into(),
                message: format!("the value of header `{name}` is not valid"),
            })?;
            value.set_sensitive(true);
            custom.insert(name, value);
        }
        let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
        let client = HttpClient::new(url, reach).map_err(|e| match e {
            ClientError::Blocked(blocked) => refused(server, &blocked),
            ClientError::Build(e) => McpError::Unreachable {
                server: server.into(),
                message: format!("cannot build an HTTP client: {e}"),
            },
        })?;
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let notices = Notices {
            server: server.into(),
            tools_changed: Arc::default(),
        };
        let started = tokio::time::timeout(timeout, notices.clone().serve(transport)).await;
        let mut connection = Self::opened(server, notices, started, timeout, false, peer_text)?;
        connection.is_process = false;
        Ok(connection)
    }

    fn opened(
        server: &str,
        notices: Notices,
        started: Result<
            Result<RunningService<RoleClient, Notices>, ClientInitializeError>,
            tokio::time::error::Elapsed,
        >,
        timeout: Duration,
        via_streams: bool,
        peer_text: PeerText,
    ) -> Result<Self, McpError> {
        let service = match started {
            Err(_) => {
                return Err(McpError::Timeout {
                    server: server.into(),
                    what: "the MCP handshake",
                    after: timeout,
                });
            }
            Ok(Err(error)) => return Err(init_error(server, &error, via_streams, peer_text)),
            Ok(Ok(service)) => service,
        };
        Ok(Self {
            server: server.into(),
            tools_changed: notices.tools_changed,
            service,
            process: None,
            is_process: via_streams,
            peer_text,
            opened: Instant::now(),
        })
    }

    /// The server's slug (or the name it was opened under).
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Whether this connection runs a process (so counts against the pool's bound).
    pub fn is_process(&self) -> bool {
        self.is_process
    }

    /// How long it has been open.
    pub fn age(&self) -> Duration {
        self.opened.elapsed()
    }

    /// Whether the session is over (the process exited, the endpoint went away).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.is_transport_closed()
    }

    /// Whether the server said its tool list changed since the last call of this.
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }

    /// What the server said of itself in the handshake.
    pub fn summary(&self) -> ServerSummary {
        let info = self.service.peer_info();
        ServerSummary {
            protocol_version: info
                .as_ref()
                .map(|info| info.protocol_version.as_str().to_owned())
                .unwrap_or_default(),
            server_info: info.as_ref().and_then(|info| {
                info.server_info.as_ref().map(|server| ServerInfo {
                    name: server.name.clone(),
                    version: server.version.clone(),
                    title: server.title.clone(),
                })
            }),
            instructions: info.as_ref().and_then(|info| info.instructions.clone()),
        }
    }

    /// Every tool the server lists (all pages, at most [`MAX_TOOLS`] tools in at most
    /// [`MAX_TOOL_PAGES`] pages), each with its input schema checked: a tool whose schema
    /// cannot be checked safely comes with its [`ServerTool::problem`].
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<ServerTool>, McpError> {
        let tools = self
            .within(timeout, "tools/list", None, self.list_pages())
            .await??;
        let server = self.server.as_ref();
        Ok(tools
            .into_iter()
            .map(|tool| ServerTool::new(server, tool))
            .collect())
    }

    /// The pages of `tools/list`, bounded: a server that pages without end is refused.
    async fn list_pages(&self) -> Result<Result<Vec<rmcp::model::Tool>, McpError>, ServiceError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page = self.service.list_tools(Some(params)).await?;
            tools.extend(page.tools);
            if tools.len() > MAX_TOOLS {
                return Ok(Err(self.too_many(format!("more than {MAX_TOOLS} tools"))));
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(Ok(tools)),
            }
        }
        Ok(Err(self.too_many(format!(
            "more than {MAX_TOOL_PAGES} pages of tools"
        ))))
    }

    fn too_many(&self, what: String) -> McpError {
        McpError::Protocol {
            server: self.server.to_string(),
            message: format!("it lists {what}, more than ARS reads"),
        }
    }

    /// Calls a tool. A result with `isError` is a result (the caller reads it); an `Err` is a
    /// call that did not complete. Cancelling `cancel` gives up and tells the server so.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.within(
            timeout,
            "the call",
            Some(cancel),
            self.service.call_tool(params),
        )
        .await
    }

    /// Reads a resource (a `resource_link` a tool answered).
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<ReadResourceResult, McpError> {
        let params = ReadResourceRequestParams::new(uri);
        self.within(
            timeout,
            "resources/read",
            Some(cancel),
            self.service.read_resource(params),
        )
        .await
    }

    /// Ends the session and the process, if any.
    pub async fn close(mut self) {
        let _ = self
            .service
            .close_with_timeout(Duration::from_secs(2))
            .await;
        if let Some(process) = self.process.take() {
            let mut handle = process.into_inner().unwrap_or_else(|e| e.into_inner());
            handle.kill();
        }
    }

    /// Runs a request within `timeout`, giving up (which cancels it at the server) when the
    /// time runs out or `cancel` fires.
    async fn within<T>(
        &self,
        timeout: Duration,
        what: &'static str,
        cancel: Option<&CancellationToken>,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let server = &*self.server;
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(McpError::Cancelled { server: server.into() }),
            answer = tokio::time::timeout(timeout, request) => match answer {
                Err(_) => Err(McpError::Timeout { server: server.into(), what, after: timeout }),
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => Err(service_error(server, &error, what, self.peer_text)),
            },
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            let mut handle = process.into_inner().unwrap_or_else(|e| e.into_inner());
            handle.kill();
        }
    }
}

/// rmcp's HTTP client (reqwest 0.13 with rustls) needs a crypto provider installed before
/// its first client is built; ring is the one compiled in. Idempotent.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn init_error(
    server: &str,
    error: &ClientInitializeError,
    via_streams: bool,
    peer_text: PeerText,
) -> McpError {
    // The transport's error is a field of `TransportError`, not its source: look there.
    if !via_streams
        && let ClientInitializeError::TransportError { error: cause, .. } = error
        && let Some(failure) = http_failure(cause)
    {
        return from_http(server, failure, peer_text);
    }
    if error.is_authorization_required() {
        return McpError::Unauthorized {
            server: server.into(),
            status: 401,
        };
    }
    let message = tidy(&chain(error));
    match error {
        ClientInitializeError::ConnectionClosed(_) if via_streams => McpError::Start {
            server: server.into(),
            message: "the process exited before completing the MCP handshake (its stderr is in \
                      the server log)"
                .into(),
        },
        ClientInitializeError::TransportError { error: cause, .. } if !via_streams => {
            // Only the client's own words say why the endpoint was not reached: rmcp's may
            // quote the server (a body it could not read as JSON-RPC), and are judged by
            // their look only where the server's text may be shown.
            if let Some(why) = crate::error::unreachable(cause) {
                McpError::Unreachable {
                    server: server.into(),
                    message: tidy(&why),
                }
            } else if peer_text == PeerText::Shown && looks_unreachable(&message) {
                McpError::Unreachable {
                    server: server.into(),
                    message,
                }
            } else {
                handshake(server, message, peer_text)
            }
        }
        ClientInitializeError::TransportError { .. }
        | ClientInitializeError::ConnectionClosed(_) => McpError::Start {
            server: server.into(),
            message: "the process stopped during the MCP handshake (its stderr is in the \
                          server log)"
                .into(),
        },
        ClientInitializeError::JsonRpcError(data) => McpError::Handshake {
            server: server.into(),
            message: match peer_text {
                PeerText::Shown => format!("JSON-RPC error {}: {}", data.code.0, data.message),
                PeerText::Withheld => format!("JSON-RPC error {}", data.code.0),
            },
        },
        _ => handshake(server, message, peer_text),
    }
}

/// A failed handshake: rmcp's words may quote the server (an answer that was not one), so
/// they are kept only where the server's text may be shown.
fn handshake(server: &str, message: String, peer_text: PeerText) -> McpError {
    McpError::Handshake {
        server: server.into(),
        message: match peer_text {
            PeerText::Shown => message,
            PeerText::Withheld => {
                tracing::info!(server, error = %message, "MCP handshake failed (not shown to the user)");
                "its answer was not an MCP handshake".into()
            }
        },
    }
}

fn refused(server: &str, blocked: &Blocked) -> McpError {
    McpError::Refused {
        server: server.into(),
        message: blocked.to_string(),
    }
}

/// An HTTP failure as the error a caller reads.
fn from_http(server: &str, failure: HttpFailure, peer_text: PeerText) -> McpError {
    match failure {
        HttpFailure::Blocked(blocked) => refused(server, &blocked),
        HttpFailure::Status { status, .. } if status == 401 || status == 403 => {
            McpError::Unauthorized {
                server: server.into(),
                status,
            }
        }
        HttpFailure::Status { status, text } => {
            if text.is_some() && peer_text == PeerText::Withheld {
                tracing::info!(server, status, said = ?text, "MCP server answered an HTTP error (its text not shown to the user)");
            }
            McpError::HttpStatus {
                server: server.into(),
                status,
                detail: text.filter(|_| peer_text == PeerText::Shown),
            }
        }
    }
}

fn looks_unreachable(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    [
        "connect",
        "dns",
        "resolve",
        "refused",
        "tls",
        "certificate",
        "timed out",
        "unreachable",
        "error sending request",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// rmcp's transport errors name the transport's Rust type (`Send message error Transport
/// [rmcp::transport::…<…>] error: …`); people need only what follows.
fn tidy(message: &str) -> String {
    let mut text = message.to_owned();
    while let Some(start) = text.find("Transport [") {
        let Some(end) = text[start..].find("] error: ") else {
            break;
        };
        text.replace_range(start..start + end + "] error: ".len(), "");
    }
    text.replace("Send message error ", "")
        .replace("Client error: ", "")
}

fn service_error(
    server: &str,
    error: &ServiceError,
    what: &'static str,
    peer_text: PeerText,
) -> McpError {
    if let ServiceError::TransportSend(_) = error
        && let Some(failure) = http_failure(error)
    {
        return from_http(server, failure, peer_text);
    }
    match error {
        ServiceError::McpError(data) => McpError::Protocol {
            server: server.into(),
            message: match peer_text {
                PeerText::Shown => data.message.to_string(),
                PeerText::Withheld => {
                    tracing::info!(server, code = data.code.0, said = %data.message, "MCP server answered a JSON-RPC error (its text not shown to the user)");
                    format!("JSON-RPC error {} (its text is not shown)", data.code.0)
                }
            },
        },
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => McpError::Closed {
            server: server.into(),
            when: match what {
                "the call" => "during the call",
                _ => "while being asked",
            },
        },
        ServiceError::Cancelled { .. } => McpError::Cancelled {
            server: server.into(),
        },
        ServiceError::Timeout { timeout } => McpError::Timeout {
            server: server.into(),
            what,
            after: *timeout,
        },
        other => McpError::Protocol {
            server: server.into(),
            message: match peer_text {
                PeerText::Shown => tidy(&chain(other)),
                PeerText::Withheld => "an answer that is not valid MCP".into(),
            },
        },
    }
}
