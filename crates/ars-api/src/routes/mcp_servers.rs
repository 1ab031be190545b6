//! MCP servers (`/api/mcp-servers`): the servers agents name in `context.mcp_servers`, shared
//! like agents and skills.
//!
//! Two transports: `stdio` (a command the sandbox runs) and `streamable_http` (an endpoint).
//! Only admins create or change `stdio` servers, since they run a command on the server; any
//! user adds `streamable_http` servers for themselves and shares them.
//!
//! Environment and header values are plain or secret. Secret ones (and `Authorization`-like
//! headers, always) are write-only: sealed with the server key before they are stored, never
//! answered (a view says which names are set), never logged. In every write values *merge*: a
//! name with a value sets it, `null` removes it, a name not mentioned keeps what is stored (as
//! long as the transport keeps its type) — in a `PUT` as in a `PATCH`, since a client cannot
//! read secrets back to send them again.
//!
//! A non-admin's endpoint must lead somewhere the outbound policy allows (`reach`): an
//! address in private, loopback or other internal space is a 422 on `transport.url` unless an
//! admin allowed it in `[network] allow`. What a check of such a server found wrong says the
//! kind and the HTTP status, never what the server answered, to non-admins.
//!
//! A server the caller cannot see is a 404; one they see but may not change a 403.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::{
    Caller, McpServer, McpServerId, McpTransport, McpTransportKind, McpValue, SecretKey,
    ShareConfig, UserId,
};
use ars_store::McpServerFilter;

use super::patch::{Patch, PatchOver};
use super::sharing::{self, check_share_users};
use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody};

mod fields;
mod reach;

use fields::Changes;

/// One environment variable or header as a view shows it: a secret's value never.
#[derive(Debug, Serialize, ToSchema)]
pub struct ValueView {
    name: String,
    /// Whether the value is secret (it is set, and never shown).
    secret: bool,
    /// The value, for plain ones only.
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
}

/// How a server is reached, as a view shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TransportView {
    /// A command the sandbox runs, speaking MCP on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<ValueView>,
        /// A path in the sandbox; absent: the conversation's workdir.
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// Whether the process may reach the network.
        network: bool,
    },
    /// An MCP endpoint over Streamable HTTP.
    StreamableHttp {
        url: String,
        headers: Vec<ValueView>,
    },
}

/// An MCP server as its viewers see it. Never a secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpServerView {
    id: McpServerId,
    /// What agents write in `context.mcp_servers`; tools are named `mcp__<slug>__<tool>`.
    slug: String,
    name: String,
    description: String,
    transport: TransportView,
    /// The tools offered to agents; absent or `null`: every tool the server lists.
    enabled_tools: Option<Vec<String>>,
    share_config: ShareConfig,
    /// `null` once the owner's account is gone.
    owner_id: Option<UserId>,
    /// Whether the caller may change it (for `stdio` servers: admins only) and delete it.
    can_manage: bool,
    can_delete: bool,
    /// Why it may not work, in plain words (a secret this server's key cannot decrypt).
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A value in a write: a string is plain (except for `Authorization`-like headers, which are
/// always secret), `{"secret": "…"}` is secret. Read from JSON by `fields` (so a bad one is
/// named by its variable).
#[derive(Debug)]
pub(crate) enum ValueWrite {
    Plain(String),
    Secret(String),
}

/// How a server is reached, in a write. Values merge over the stored ones (see the module).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TransportWrite {
    /// Admins only. The command runs inside the sandbox of the run that uses it.
    Stdio {
        /// The program, e.g. `npx` or `/usr/bin/node`.
        command: String,
        #[serde(default)]
        args: Vec<String>,
        /// By variable name: a string sets a plain value, `{"secret": "…"}` a secret one,
        /// `null` removes it; at most 64. Absent or `null`: no change.
        #[serde(default)]
        #[schema(value_type = Option<Object>)]
        env: Option<BTreeMap<String, Option<serde_json::Value>>>,
        /// An absolute path in the sandbox; absent: the conversation's workdir.
        #[serde(default)]
        cwd: Option<String>,
        /// Whether the process may reach the network (default `false`).
        #[serde(default)]
        network: bool,
    },
    /// An endpoint over Streamable HTTP.
    StreamableHttp {
        /// `http://` or `https://`, e.g. `http://127.0.0.1:3001/mcp`; no credentials.
        #[schema(max_length = 2048, pattern = r"^https?://")]
        url: String,
        /// By header name: a string sets it (secret for `Authorization`, `Cookie`,
        /// `X-Api-Key`, …), `{"secret": "…"}` sets a secret one, `null` removes it; at most
        /// 64. The MCP client's own headers (`Accept`, `Content-Type`, `Mcp-Session-Id`, …)
        /// are refused. Absent or `null`: no change.
        #[serde(default)]
        #[schema(value_type = Option<Object>)]
        headers: Option<BTreeMap<String, Option<serde_json::Value>>>,
    },
}

impl TransportWrite {
    /// A write that changes nothing of `stored`.
    fn keeping(stored: &McpTransport) -> Self {
        match stored {
            McpTransport::Stdio(s) => Self::Stdio {
                command: s.command.clone(),
                args: s.args.clone(),
                env: None,
                cwd: s.cwd.clone(),
                network: s.network,
            },
            McpTransport::StreamableHttp(h) => Self::StreamableHttp {
                url: h.url.clone(),
                headers: None,
            },
        }
    }

    fn kind(&self) -> McpTransportKind {
        match self {
            Self::Stdio { .. } => McpTransportKind::Stdio,
            Self::StreamableHttp { .. } => McpTransportKind::StreamableHttp,
        }
    }
}

/// The body of `POST /api/mcp-servers` and `PUT /api/mcp-servers/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerWrite {
    /// 1-64 characters of `a-z`, `0-9` and `-`, starting and ending with a letter or digit;
    /// unique; it never changes once created.
    #[schema(pattern = r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")]
    pub(crate) slug: String,
    /// 1-128 characters.
    pub(crate) name: String,
    /// Shown to agents' users; at most 4000 characters.
    #[serde(default)]
    pub(crate) description: String,
    pub(crate) transport: TransportWrite,
    /// Tool names offered to agents; absent or `null`: all of the server's.
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub(crate) enabled_tools: Option<Vec<String>>,
    /// Absent: private to its owner.
    #[serde(default)]
    pub(crate) share_config: Option<ShareConfig>,
}

/// The body of `PATCH /api/mcp-servers/{id}`: absent fields keep their stored value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerPatch {
    /// Only the stored slug is accepted: slugs never change.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub(crate) slug: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub(crate) name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub(crate) description: Patch<String>,
    /// Replaces the transport; its values merge over the stored ones when the type stays.
    #[serde(default)]
    #[schema(value_type = Option<TransportWrite>)]
    pub(crate) transport: Patch<TransportWrite>,
    /// `null`: every tool of the server.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub(crate) enabled_tools: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<ShareConfig>)]
    pub(crate) share_config: Patch<ShareConfig>,
}

fn not_found() -> ApiError {
    ApiError::not_found(ars_domain::Subject::McpServer)
}

/// Whether `caller` may create or change a server reached by `kind`.
fn may_use_transport(caller: &Caller, kind: McpTransportKind) -> Result<(), ApiError> {
    if kind == McpTransportKind::Stdio && !caller.is_admin() {
        return Err(ApiError::Forbidden {
            message: "only admins add or change stdio MCP servers: they run a command on the \
                      server; add a streamable_http server instead"
                .into(),
            field: Some("transport.type".into()),
        });
    }
    Ok(())
}

fn may_manage(caller: &Caller, server: &McpServer) -> bool {
    caller.can_manage(server)
        && (server.fields.transport.kind() != McpTransportKind::Stdio || caller.is_admin())
}

fn value_views(values: &BTreeMap<String, McpValue>) -> Vec<ValueView> {
    values
        .iter()
        .map(|(name, value)| ValueView {
            name: name.clone(),
            secret: value.is_secret(),
            value: match value {
                McpValue::Plain(text) => Some(text.clone()),
                McpValue::Secret(_) => None,
            },
        })
        .collect()
}

/// The names of secrets sealed under another key than `key`'s.
fn unreadable(values: &BTreeMap<String, McpValue>, key: &SecretKey) -> Vec<String> {
    values
        .iter()
        .filter(|(_, value)| match value {
            McpValue::Secret(sealed) => sealed.key_id() != Some(key.id()),
            McpValue::Plain(_) => false,
        })
        .map(|(name, _)| name.clone())
        .collect()
}

fn view(server: McpServer, caller: &Caller, key: &SecretKey) -> McpServerView {
    let can_manage = may_manage(caller, &server);
    let can_delete = can_manage && caller.can_delete(&server);
    let (transport, stale) = match &server.fields.transport {
        McpTransport::Stdio(s) => (
            TransportView::Stdio {
                command: s.command.clone(),
                args: s.args.clone(),
                env: value_views(&s.env),
                cwd: s.cwd.clone(),
                network: s.network,
            },
            unreadable(&s.env, key),
        ),
        McpTransport::StreamableHttp(h) => (
            TransportView::StreamableHttp {
                url: h.url.clone(),
                headers: value_views(&h.headers),
            },
            unreadable(&h.headers, key),
        ),
    };
    let problem = (!stale.is_empty()).then(|| {
        format!(
            "these secrets were sealed with another server key and cannot be read: {}; set \
             them again",
            stale.join(", ")
        )
    });
    let fields = server.fields;
    McpServerView {
        id: server.id,
        slug: fields.slug,
        name: fields.name,
        description: fields.description,
        transport,
        enabled_tools: fields.enabled_tools,
        share_config: fields.share_config,
        owner_id: server.owner_id,
        can_manage,
        can_delete,
        problem,
        created_at: server.created_at,
        updated_at: server.updated_at,
    }
}

fn secret_key(state: &AppState) -> &SecretKey {
    state.runtime.model_source().key()
}

/// The server with this id that `caller` can see; anything else is a 404.
async fn visible(state: &AppState, caller: &Caller, id: &str) -> Result<McpServer, ApiError> {
    let id = McpServerId::parse(id).ok_or_else(not_found)?;
    sharing::visible(
        state.store.mcp_server(id).await?,
        caller,
        ars_domain::Subject::McpServer,
    )
}

/// The server `caller` may change: 404 when invisible, 403 when only visible.
async fn managed(state: &AppState, caller: &Caller, id: &str) -> Result<McpServer, ApiError> {
    let server = visible(state, caller, id).await?;
    let server = sharing::managed(
        server,
        caller,
        ars_domain::Subject::McpServer,
        "you can use this MCP server but not manage it",
    )?;
    may_use_transport(caller, server.fields.transport.kind())?;
    Ok(server)
}

/// Lists the MCP servers the caller can see (admins: all), by slug.
#[utoipa::path(get, path = "/mcp-servers", tag = "mcp", security(("bearer" = [])),
    responses(
        (status = 200, body = [McpServerView]),
        (status = 401, body = ErrorBody),
    ))]
pub async fn list_mcp_servers(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<McpServerView>>, ApiError> {
    let caller = auth.caller();
    let filter = McpServerFilter {
        visible_to: sharing::visible_to(&caller),
    };
    let key = secret_key(&state);
    let servers = state.store.list_mcp_servers(filter).await?;
    Ok(Json(
        servers
            .into_iter()
            .map(|server| view(server, &caller, key))
            .collect(),
    ))
}

/// One MCP server.
#[utoipa::path(get, path = "/mcp-servers/{id}", tag = "mcp", security(("bearer" = [])),
    params(("id" = String, Path, description = "The server's UUID")),
    responses(
        (status = 200, body = McpServerView),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get_mcp_server(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<McpServerView>, ApiError> {
    let caller = auth.caller();
    let server = visible(&state, &caller, &id).await?;
    Ok(Json(view(server, &caller, secret_key(&state))))
}

/// Adds an MCP server, owned by the caller. `stdio` servers: admins only.
#[utoipa::path(post, path = "/mcp-servers", tag = "mcp", security(("bearer" = [])),
    request_body = McpServerWrite,
    responses(
        (status = 201, body = McpServerView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "A stdio server, and the caller is not an admin"),
        (status = 409, body = ErrorBody, description = "The slug is taken, or a share names no user"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken, or a non-admin's `transport.url` leads to an address the outbound policy refuses; `field` names it"),
    ))]
pub async fn create_mcp_server(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<McpServerWrite>,
) -> Result<(StatusCode, Json<McpServerView>), ApiError> {
    let caller = auth.caller();
    may_use_transport(&caller, body.transport.kind())?;
    let id = McpServerId::new();
    let key = secret_key(&state);
    let fields = Changes::from_write(body).checked(key, id, None)?;
    reach::check(&state, &caller, &fields, None).await?;
    check_share_users(&state, &fields.share_config).await?;
    let server = state
        .store
        .create_mcp_server(id, &fields, Some(caller.id))
        .await?;
    tracing::info!(server = %server.id, slug = %server.fields.slug, user = %caller.id, "MCP server added");
    Ok((StatusCode::CREATED, Json(view(server, &caller, key))))
}

/// Replaces an MCP server's fields (the slug stays); values merge as the module says.
#[utoipa::path(put, path = "/mcp-servers/{id}", tag = "mcp", security(("bearer" = [])),
    params(("id" = String, Path, description = "The server's UUID")),
    request_body = McpServerWrite,
    responses(
        (status = 200, body = McpServerView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable, or stdio and not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Another slug than the stored one, or a share names no user"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken, or a non-admin's `transport.url` leads to an address the outbound policy refuses; `field` names it"),
    ))]
pub async fn put_mcp_server(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<McpServerWrite>,
) -> Result<Json<McpServerView>, ApiError> {
    let caller = auth.caller();
    let existing = managed(&state, &caller, &id).await?;
    may_use_transport(&caller, body.transport.kind())?;
    update(&state, &caller, existing, Changes::from_write(body)).await
}

/// Changes some of an MCP server's fields; absent ones keep their value.
#[utoipa::path(patch, path = "/mcp-servers/{id}", tag = "mcp", security(("bearer" = [])),
    params(("id" = String, Path, description = "The server's UUID")),
    request_body = McpServerPatch,
    responses(
        (status = 200, body = McpServerView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable, or stdio and not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Another slug than the stored one, or a share names no user"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken, or a non-admin's `transport.url` leads to an address the outbound policy refuses; `field` names it"),
    ))]
pub async fn patch_mcp_server(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<McpServerPatch>,
) -> Result<Json<McpServerView>, ApiError> {
    let caller = auth.caller();
    let existing = managed(&state, &caller, &id).await?;
    if let Patch::Set(transport) = &patch.transport {
        may_use_transport(&caller, transport.kind())?;
    }
    let changes = patch.over(&existing)?;
    update(&state, &caller, existing, changes).await
}

async fn update(
    state: &AppState,
    caller: &Caller,
    existing: McpServer,
    changes: Changes,
) -> Result<Json<McpServerView>, ApiError> {
    let key = secret_key(state);
    let fields = changes.checked(key, existing.id, Some(&existing))?;
    reach::check(state, caller, &fields, Some(&existing)).await?;
    check_share_users(state, &fields.share_config).await?;
    let server = state.store.update_mcp_server(existing.id, &fields).await?;
    tracing::info!(server = %server.id, slug = %server.fields.slug, user = %caller.id, "MCP server changed");
    Ok(Json(view(server, caller, key)))
}

/// Deletes an MCP server. Agents that name it drop it from their next run on.
#[utoipa::path(delete, path = "/mcp-servers/{id}", tag = "mcp", security(("bearer" = [])),
    params(("id" = String, Path, description = "The server's UUID")),
    responses(
        (status = 204),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not deletable"),
        (status = 404, body = ErrorBody),
    ))]
pub async fn delete_mcp_server(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let caller = auth.caller();
    let server = managed(&state, &caller, &id).await?;
    if !caller.can_delete(&server) {
        return Err(ApiError::cannot_delete(
            ars_domain::Subject::McpServer,
            "you can use this MCP server but not delete it",
        ));
    }
    if state.store.delete_mcp_server(server.id).await? == ars_store::Deleted::Deleted {
        tracing::info!(server = %server.id, slug = %server.fields.slug, user = %caller.id, "MCP server deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found())
    }
}

/// What the server said of itself.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpServerInfoView {
    name: String,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
}

/// A tool the server lists.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpToolView {
    /// The server's own name for it.
    name: String,
    /// What agents call it: `mcp__<slug>__<name>` (shortened when too long).
    agent_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    description: String,
    /// JSON Schema of its arguments.
    #[schema(value_type = Object)]
    input_schema: serde_json::Value,
    /// Whether agents are offered it (the server's `enabled_tools`).
    enabled: bool,
    /// Why agents are never offered it, whatever `enabled` says: its input schema cannot be
    /// checked safely (references that loop or point outside it, too deep, too big).
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

/// Why a check failed.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpCheckError {
    /// `start`, `unreachable`, `refused_address` (the outbound policy refuses the endpoint's
    /// address: nothing was sent), `unauthorized`, `http_status` (a 3xx included: redirects
    /// are not followed), `handshake`, `timeout`, `closed`, `protocol`, `cancelled`, `limit`
    /// or `config`.
    kind: String,
    /// In plain words, naming the server. For a non-admin on a server under the outbound
    /// policy, never the text the server answered.
    message: String,
    /// The HTTP status the endpoint answered, for `unauthorized` and `http_status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
}

/// The answer of a connection check: what the server is and offers, or why it could not be
/// reached. The check itself failing is `ok: false`, not an HTTP error.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpCheckView {
    ok: bool,
    /// The protocol version the server answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    server_info: Option<McpServerInfoView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
    tools: Vec<McpToolView>,
    /// From the start of the connection to the tool list.
    latency_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<McpCheckError>,
}

/// Connects to the server, initialises and lists its tools ("Test connection"). A `stdio`
/// server runs in the caller's sandbox, as it would for their runs, and is stopped
/// afterwards.
#[utoipa::path(post, path = "/mcp-servers/{id}/check", tag = "mcp", security(("bearer" = [])),
    params(("id" = String, Path, description = "The server's UUID")),
    responses(
        (status = 200, body = McpCheckView, description = "The check ran; `ok` says whether it worked"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn check_mcp_server(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<McpCheckView>, ApiError> {
    let caller = auth.caller();
    let server = visible(&state, &caller, &id).await?;
    let started = std::time::Instant::now();
    let answer = match state.mcp.check(&caller, &server).await {
        Ok(report) => {
            let enabled = server.fields.enabled_tools.as_ref();
            McpCheckView {
                ok: true,
                protocol_version: Some(report.summary.protocol_version),
                server_info: report.summary.server_info.map(|info| McpServerInfoView {
                    name: info.name,
                    version: info.version,
                    title: info.title,
                }),
                instructions: report.summary.instructions,
                tools: report
                    .tools
                    .into_iter()
                    .map(|tool| McpToolView {
                        agent_name: ars_mcp::names::tool_name(&server.fields.slug, &tool.name),
                        enabled: enabled.is_none_or(|list| list.contains(&tool.name)),
                        name: tool.name,
                        title: tool.title,
                        description: tool.description,
                        input_schema: tool.input_schema,
                        problem: tool.problem,
                    })
                    .collect(),
                latency_ms: report.latency_ms,
                error: None,
            }
        }
        Err(e) => {
            tracing::info!(server = %server.id, slug = %server.fields.slug, error = %e, "MCP server check failed");
            McpCheckView {
                ok: false,
                protocol_version: None,
                server_info: None,
                instructions: None,
                tools: Vec::new(),
                latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                error: Some(McpCheckError {
                    kind: e.kind().into(),
                    message: e.to_string(),
                    status: e.status(),
                }),
            }
        }
    };
    Ok(Json(answer))
}
