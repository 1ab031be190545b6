//! MCP servers as a plug-in (SPEC §2): every agent, every subagent too, runs with the MCP
//! servers its own resolved `context.mcp_servers` names.
//!
//! For each run, [`McpPlugin`] looks up each named server (one the user cannot see, or that
//! is gone, is dropped with a log line), gets its tools — from the cache, or by listing them,
//! which opens the server's connection — and offers each as `mcp__<server>__<tool>` with the
//! server's description and input schema. A server that cannot be reached is named in the
//! prompt and in an `error` event; the run goes on with the other tools.
//!
//! [`McpHub`] holds what the plug-in and the API share: the connection [`Pool`] (a stdio
//! server's process per root runtime scope, so a parent and its subagents share it; an HTTP
//! session per user), the tool lists cached per server revision, and the server key that opens
//! the servers' secrets. The API's connection check goes through it too.
//!
//! An HTTP server's connection goes anywhere only when everyone who may change its URL — its
//! owner and its managers — is an enabled admin; otherwise it is under the outbound policy
//! ([`ars_mcp::outbound`], `[network] allow`), judged where each connection is made, and its
//! errors quote what the server answered only to admins.
//!
//! A plug-in: the server assembly registers it; the runtime core does not import this module.

mod tools;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use zeroize::Zeroizing;

use ars_domain::{
    Caller, McpServer, McpTransport, McpValue, SecretKey, Shared, UserId,
    mcp_server::{env_context, header_context},
};
use ars_events::EventKind;
use ars_mcp::{
    CheckReport, Connection, McpError, Outbound, PeerText, Pool, PoolConfig, PoolKey, Reach,
    ServerTool,
};
use ars_sandbox::{ProcessRequest, Sandbox, Scope};
use ars_store::Store;

use crate::middleware::Middleware;
use crate::plugin::{MiddlewareFactory, RunSetup};
use crate::tool::Tool;

pub use tools::McpTool;

/// How MCP servers are used (`[mcp]` in the server's configuration).
#[derive(Clone, Debug)]
pub struct McpConfig {
    /// One tool call at most.
    pub call_timeout: Duration,
    /// Starting a server and completing the handshake, or listing its tools.
    pub connect_timeout: Duration,
    /// The longest text a call answers the model; the rest is cut with a note.
    pub max_result_chars: usize,
    pub pool: PoolConfig,
    /// The outbound policy (`[network] allow`) and its resolver: where the HTTP servers of
    /// non-admins may be reached, checked when one is saved and at every connection.
    pub outbound: Outbound,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            max_result_chars: 64 * 1024,
            pool: PoolConfig::default(),
            outbound: Outbound::default(),
        }
    }
}

/// The workdir (relative to the user's workspace) a connection check runs a stdio server in.
pub const CHECK_WORKDIR: &str = ".ars/mcp-check";

/// A server's id and revision (`updated_at`).
type ToolsKey = (String, String);

/// MCP connections, tool lists and secrets, shared by the plug-in and the API. A cheap
/// `Clone` handle.
#[derive(Clone)]
pub struct McpHub {
    inner: Arc<HubInner>,
}

struct HubInner {
    store: Arc<dyn Store>,
    sandbox: Arc<dyn Sandbox>,
    key: SecretKey,
    pool: Pool,
    config: McpConfig,
    /// Tool lists by (server id, revision); dropped when a server says its list changed.
    tools: Mutex<HashMap<ToolsKey, Arc<Vec<ServerTool>>>>,
}

impl McpHub {
    pub fn new(
        store: Arc<dyn Store>,
        sandbox: Arc<dyn Sandbox>,
        key: SecretKey,
        config: McpConfig,
    ) -> Self {
        let pool = Pool::new(config.pool.clone());
        Self {
            inner: Arc::new(HubInner {
                store,
                sandbox,
                key,
                pool,
                config,
                tools: Mutex::default(),
            }),
        }
    }

    pub fn config(&self) -> &McpConfig {
        &self.inner.config
    }

    /// The outbound policy non-admins' server URLs are judged by.
    pub fn outbound(&self) -> &Outbound {
        &self.inner.config.outbound
    }

    /// The shared connections.
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// Closes every connection and stops every server process (server shutdown).
    pub async fn shutdown(&self) {
        self.inner.pool.shutdown().await;
    }

    /// Connects to `server` afresh (never a pooled connection), initialises and lists its
    /// tools. A stdio server runs as it would for `caller`'s runs, in a workdir of its own
    /// ([`CHECK_WORKDIR`]); the process is stopped afterwards.
    pub async fn check(
        &self,
        caller: &Caller,
        server: &McpServer,
    ) -> Result<CheckReport, McpError> {
        let started = Instant::now();
        let scope =
            Scope::new(caller.id, "mcp-check", CHECK_WORKDIR).map_err(|e| McpError::Start {
                server: server.fields.slug.clone(),
                message: e.to_string(),
            })?;
        let connection = self.connect(server, &scope).await?;
        let report = ars_mcp::check(&connection, started, self.inner.config.connect_timeout).await;
        connection.close().await;
        report
    }

    /// Opens a connection to `server` for `scope` (a stdio server's process runs in it).
    async fn connect(&self, server: &McpServer, scope: &Scope) -> Result<Connection, McpError> {
        let slug = server.fields.slug.as_str();
        let timeout = self.inner.config.connect_timeout;
        match &server.fields.transport {
            McpTransport::Stdio(stdio) => {
                let mut env = Vec::with_capacity(stdio.env.len());
                for (name, value) in &stdio.env {
                    let value = self.open(slug, value, &env_context(server.id, name), name)?;
                    env.push((name.clone(), value.to_string()));
                }
                let request = ProcessRequest {
                    program: stdio.command.clone(),
                    args: stdio.args.clone(),
                    env,
                    cwd: stdio.cwd.clone(),
                    allow_network: stdio.network,
                };
                let process = self
                    .inner
                    .sandbox
                    .spawn(scope, request)
                    .await
                    .map_err(|e| McpError::Start {
                        server: slug.into(),
                        message: e.to_string(),
                    })?;
                Connection::over_process(slug, process, timeout).await
            }
            McpTransport::StreamableHttp(http) => {
                let mut headers = Vec::with_capacity(http.headers.len());
                for (name, value) in &http.headers {
                    let value = self.open(slug, value, &header_context(server.id, name), name)?;
                    headers.push((name.clone(), value.to_string()));
                }
                let (reach, peer_text) = self.http_reach(server, scope.user_id).await;
                Connection::over_http(slug, &http.url, &headers, timeout, &reach, peer_text).await
            }
        }
    }

    /// Where a connection to `server` may go, and whether `viewer` may read what it answers.
    /// Anywhere only when every user who may change the server's URL — its owner and its
    /// managers — is an enabled admin (read now, so a demotion counts from the next
    /// connection). What the server answers is shown to admins, and to everyone on a server
    /// only admins can change.
    async fn http_reach(&self, server: &McpServer, viewer: UserId) -> (Reach, PeerText) {
        let writers: Vec<UserId> = server
            .owner_id()
            .into_iter()
            .chain(server.share_config().manager_ids.iter().copied())
            .collect();
        // A server whose owner is gone has no admin vouching for its URL.
        let mut admins_only = server.owner_id().is_some();
        for id in writers {
            if !self.is_enabled_admin(id).await {
                admins_only = false;
                break;
            }
        }
        if admins_only {
            return (Reach::Anywhere, PeerText::Shown);
        }
        let peer_text = if self.is_enabled_admin(viewer).await {
            PeerText::Shown
        } else {
            PeerText::Withheld
        };
        (
            Reach::Checked(self.inner.config.outbound.clone()),
            peer_text,
        )
    }

    /// Whether `id` is an enabled admin; a store that cannot say counts as no.
    async fn is_enabled_admin(&self, id: UserId) -> bool {
        match self.inner.store.user(id).await {
            Ok(user) => user.is_some_and(|user| user.is_admin() && !user.disabled),
            Err(e) => {
                tracing::warn!(user = %id, error = %e, "cannot read a user's role; treated as no admin");
                false
            }
        }
    }

    /// A value in clear: plain as it is, secret opened with the server key.
    fn open(
        &self,
        slug: &str,
        value: &McpValue,
        context: &str,
        name: &str,
    ) -> Result<Zeroizing<String>, McpError> {
        match value {
            McpValue::Plain(text) => Ok(Zeroizing::new(text.clone())),
            McpValue::Secret(sealed) => self.inner.key.open(context, sealed).map_err(|_| {
                McpError::Config {
                    server: slug.into(),
                    message: format!(
                        "the secret `{name}` cannot be decrypted with this server's key; set it \
                         again"
                    ),
                }
            }),
        }
    }

    /// The pooled connection to `server` for `scope`.
    pub(crate) async fn connection(
        &self,
        server: &McpServer,
        scope: &Scope,
    ) -> Result<(PoolKey, Arc<Connection>), McpError> {
        let is_process = matches!(server.fields.transport, McpTransport::Stdio(_));
        let key = PoolKey {
            server: server.id.to_string(),
            revision: server.updated_at.to_rfc3339(),
            partition: if is_process {
                format!("scope:{}", scope.runtime_scope_id)
            } else {
                format!("user:{}", scope.user_id)
            },
        };
        let fresh = AtomicBool::new(false);
        let connection = self
            .inner
            .pool
            .get(&key, &server.fields.slug, is_process, || {
                fresh.store(true, Ordering::Relaxed);
                self.connect(server, scope)
            })
            .await?;
        if fresh.load(Ordering::Relaxed) {
            // A changed server's old process is of no use any more.
            self.inner
                .pool
                .retire_revisions(&key.server, &key.partition, &key.revision)
                .await;
        }
        if connection.take_tools_changed() {
            // Listed again in the background: this call goes on, the next run sees the list.
            let hub = self.clone();
            let server = server.clone();
            let connection = Arc::clone(&connection);
            tokio::spawn(async move {
                match connection
                    .list_tools(hub.inner.config.connect_timeout)
                    .await
                {
                    Ok(tools) => {
                        hub.remember_tools(&server, tools);
                    }
                    Err(e) => {
                        tracing::warn!(server = %server.fields.slug, error = %e, "cannot list the MCP server's changed tools");
                        hub.forget_tools(&server);
                    }
                }
            });
        }
        Ok((key, connection))
    }

    /// The tools `server` lists: cached for its revision, else listed (opening its
    /// connection for `scope`).
    pub(crate) async fn tools(
        &self,
        server: &McpServer,
        scope: &Scope,
    ) -> Result<Arc<Vec<ServerTool>>, McpError> {
        let cache_key = (server.id.to_string(), server.updated_at.to_rfc3339());
        let cached = self
            .inner
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&cache_key)
            .cloned();
        if let Some(tools) = cached {
            return Ok(tools);
        }
        let (key, connection) = self.connection(server, scope).await?;
        let listed = connection
            .list_tools(self.inner.config.connect_timeout)
            .await;
        match listed {
            Ok(tools) => {
                // A change announced while listing is in this list already.
                connection.take_tools_changed();
                Ok(self.remember_tools(server, tools))
            }
            Err(e) => {
                if e.breaks_connection() || connection.is_closed() {
                    self.inner.pool.discard(&key, &connection).await;
                }
                Err(e)
            }
        }
    }

    /// Caches `server`'s tool list for its revision (older revisions' lists go).
    fn remember_tools(&self, server: &McpServer, tools: Vec<ServerTool>) -> Arc<Vec<ServerTool>> {
        let tools = Arc::new(tools);
        let id = server.id.to_string();
        let mut cache = self
            .inner
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cache.retain(|(cached, _), _| *cached != id);
        cache.insert((id, server.updated_at.to_rfc3339()), Arc::clone(&tools));
        tools
    }

    /// Drops `server`'s cached tool list (its changed list could not be read).
    pub(crate) fn forget_tools(&self, server: &McpServer) {
        let id = server.id.to_string();
        self.inner
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(server, _), _| *server != id);
    }
}

/// Offers the tools of the MCP servers a run's context names.
pub struct McpPlugin {
    hub: McpHub,
}

impl McpPlugin {
    pub fn new(hub: McpHub) -> Self {
        Self { hub }
    }
}

#[async_trait]
impl MiddlewareFactory for McpPlugin {
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>> {
        let configured = &setup.context.mcp_servers;
        if configured.is_empty() {
            return None;
        }
        let store = &self.hub.inner.store;
        let mut servers = Vec::new();
        let mut seen = BTreeSet::new();
        for slug in configured {
            if !seen.insert(slug.as_str()) {
                continue;
            }
            match store.mcp_server_by_slug(slug).await {
                Ok(Some(server)) if setup.caller.can_view(&server) => servers.push(server),
                Ok(_) => tracing::warn!(
                    run_id = %setup.run.id,
                    agent = %setup.agent.slug,
                    server = %slug,
                    "an MCP server the agent names is gone or not visible to the user; dropped"
                ),
                Err(e) => {
                    let message = format!("cannot read MCP server `{slug}`: {e}");
                    tracing::warn!(run_id = %setup.run.id, "{message}");
                    setup.events.emit(EventKind::Error { message }).await;
                }
            }
        }
        if servers.is_empty() {
            return None;
        }
        let listed = futures::future::join_all(
            servers
                .iter()
                .map(|server| self.hub.tools(server, setup.scope)),
        )
        .await;
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut prompt = String::from(
            "\n\n## MCP servers\nTools named `mcp__<server>__<tool>` come from these MCP \
             servers:\n",
        );
        for (server, listed) in servers.into_iter().zip(listed) {
            let fields = &server.fields;
            let description = if fields.description.is_empty() {
                String::new()
            } else {
                format!(": {}", fields.description)
            };
            match listed {
                Ok(list) => {
                    let server = Arc::new(server);
                    let mut offered = 0usize;
                    let mut left_out = 0usize;
                    let enabled = list.iter().filter(|tool| {
                        server
                            .fields
                            .enabled_tools
                            .as_ref()
                            .is_none_or(|enabled| enabled.contains(&tool.name))
                    });
                    for tool in enabled {
                        match McpTool::new(self.hub.clone(), Arc::clone(&server), tool) {
                            Some(tool) => {
                                offered += 1;
                                tools.push(Arc::new(tool));
                            }
                            None => {
                                left_out += 1;
                                let message = format!(
                                    "MCP server `{}`: tool `{}` is left out: {}",
                                    server.fields.slug,
                                    tool.name,
                                    tool.problem.as_deref().unwrap_or("it cannot be offered")
                                );
                                tracing::warn!(run_id = %setup.run.id, "{message}");
                                setup.events.emit(EventKind::Error { message }).await;
                            }
                        }
                    }
                    let left_out = if left_out > 0 {
                        format!(" ({left_out} left out: their input schemas cannot be checked)")
                    } else {
                        String::new()
                    };
                    prompt.push_str(&format!(
                        "- `{}` ({}){description} — {offered} tool(s){left_out}\n",
                        server.fields.slug, server.fields.name,
                    ));
                }
                Err(e) => {
                    prompt.push_str(&format!(
                        "- `{}` ({}){description} — unavailable in this run: {e}\n",
                        fields.slug, fields.name
                    ));
                    let message = e.to_string();
                    tracing::warn!(run_id = %setup.run.id, "{message}");
                    setup.events.emit(EventKind::Error { message }).await;
                }
            }
        }
        Some(Arc::new(McpMiddleware { tools, prompt }))
    }
}

struct McpMiddleware {
    tools: Vec<Arc<dyn Tool>>,
    prompt: String,
}

impl Middleware for McpMiddleware {
    fn system_prompt(&self, prompt: &mut String) {
        prompt.push_str(&self.prompt);
    }

    fn tools(&self, tools: &mut Vec<Arc<dyn Tool>>) {
        tools.extend(self.tools.iter().cloned());
    }
}
