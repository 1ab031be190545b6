//! The ARS HTTP API.
//!
//! [`app`] builds the whole router from an [`AppState`]; [`serve`] runs it on a listener until a
//! shutdown future resolves. Tests start the server exactly as the binary does.
//!
//! Routes live in `routes/`, one module per resource: agents, skills, auth, users, threads
//! (and each thread's workdir as files), runs, run events and thread events (SSE), model
//! providers and settings (admins), MCP servers, knowledge bases (their documents, search and
//! citations), and the catalog of models and tools. `metrics` serves `GET /metrics`
//! (Prometheus text, for scrapers; not in the OpenAPI document), on this listener behind a
//! token or on one of its own. Every other path belongs to the web UI (`ui`), served from the
//! same listener.
//!
//! **Boundary:** this is the only crate that knows axum, HTTP status codes, SSE and the JSON wire
//! shapes of requests and errors. Rules live in `ars-domain`; persistence in `ars-store`; runs
//! in `ars-runtime`, which this crate drives and which never imports it.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderName, Request};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use ars_domain::ContextDefaults;
use ars_domain::user::PasswordPolicy;
use ars_runtime::Runtime;
use ars_runtime::knowledge::KnowledgeHub;
use ars_runtime::mcp::McpHub;
use ars_runtime::skills::SkillLibrary;
use ars_store::Store;

pub mod accounts;
mod credentials;
mod error;
mod extract;
pub mod mcp_endpoint;
pub mod metrics;
mod openapi;
pub mod protocols;
mod routes;
mod throttle;
mod trace;
mod ui;
mod uploads;

pub use error::{ApiError, ErrorBody, ErrorDetail};
pub use extract::{ApiJson, Auth, KeyAuth};
pub use metrics::{MetricsAccess, MetricsEndpoint, MetricsToken, RenderMetrics, serve_metrics};
pub use throttle::{Clock, LoginThrottleConfig};
pub use ui::UiAssets;

/// The request body limit unless configured otherwise: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// The largest file uploaded into a workdir unless configured otherwise: 25 MiB.
pub const DEFAULT_FILE_UPLOAD_LIMIT: usize = 25 * 1024 * 1024;
/// Upload bytes held in memory at once, server-wide ([`ApiConfig::upload_memory`]).
pub const DEFAULT_UPLOAD_MEMORY: usize = 256 * 1024 * 1024;
/// How often an idle event stream sends a comment line unless configured otherwise, so
/// proxies do not close it.
pub const DEFAULT_SSE_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// What the API needs from server configuration.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// `BaseContext` and `SubAgentContext`: the layers under every agent's own context.
    pub defaults: ContextDefaults,
    /// The largest request body accepted, in bytes; larger bodies get a 413.
    pub body_limit: usize,
    /// The largest file `PUT /api/threads/{id}/files/content` accepts, in bytes (its own
    /// limit, since files are larger than any JSON body); larger uploads get a 413 and write
    /// nothing.
    pub file_upload_limit: usize,
    /// Bytes of uploads read whole (knowledge-base documents) held in memory at once across
    /// all requests; past it an upload is answered 503 with `Retry-After`.
    pub upload_memory: usize,
    /// How long a token from `POST /api/auth/login` stays valid.
    pub session_ttl: chrono::Duration,
    /// The web UI served at every path outside `/api`.
    pub ui: UiAssets,
    /// When repeated failed logins from one address or for one username are refused (429).
    pub login_throttle: LoginThrottleConfig,
    /// What a new password must satisfy wherever it is set.
    pub password_policy: PasswordPolicy,
    /// `GET /metrics` on this listener: how to render the metrics and who may read them;
    /// `None`: a 404 (no recorder installed).
    pub metrics: Option<MetricsEndpoint>,
    /// How often an idle event stream (run or thread events) sends a comment line.
    pub sse_keep_alive: std::time::Duration,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            defaults: ContextDefaults::default(),
            body_limit: DEFAULT_BODY_LIMIT,
            file_upload_limit: DEFAULT_FILE_UPLOAD_LIMIT,
            upload_memory: DEFAULT_UPLOAD_MEMORY,
            session_ttl: chrono::Duration::days(30),
            ui: UiAssets::web_dist(),
            login_throttle: LoginThrottleConfig::default(),
            password_policy: PasswordPolicy::default(),
            metrics: None,
            sse_keep_alive: DEFAULT_SSE_KEEP_ALIVE,
        }
    }
}

/// Shared state of every handler: a cheap `Clone` of a few `Arc`s.
#[derive(Clone)]
pub struct AppState {
    /// Users, tokens, agents, threads, messages and runs.
    pub store: Arc<dyn Store>,
    pub config: Arc<ApiConfig>,
    /// Starts, cancels and waits for runs; knows the tools, the models and the event bus.
    pub runtime: Runtime,
    /// The built-in, shared and personal skills, and the sandbox that holds the personal ones
    /// (the same library the runtime's Skills plug-in reads, so the API lists what runs see).
    pub skills: SkillLibrary,
    /// MCP connections and tool lists (the same hub the runtime's MCP plug-in uses), for the
    /// connection check.
    pub mcp: McpHub,
    /// Knowledge bases' ingestion and search indexes (the same hub the runtime's knowledge
    /// plug-in searches through).
    pub knowledge: KnowledgeHub,
    /// Failed-login counters, shared by every request of this server (not across instances:
    /// each instance throttles on its own).
    login_throttle: Arc<throttle::LoginThrottle>,
    /// Upload bytes held in memory at once, across all requests.
    pub(crate) uploads: uploads::UploadBudget,
    /// The API tokens read lately, so a request's token is not read once per request.
    credentials: Arc<credentials::Credentials>,
}

impl AppState {
    pub fn new(
        store: Arc<dyn Store>,
        config: ApiConfig,
        runtime: Runtime,
        skills: SkillLibrary,
        mcp: McpHub,
        knowledge: KnowledgeHub,
    ) -> Self {
        let login_throttle = Arc::new(throttle::LoginThrottle::new(config.login_throttle.clone()));
        let uploads = uploads::UploadBudget::new(config.upload_memory);
        let credentials = Arc::new(credentials::Credentials::default());
        credentials.follow(&runtime);
        Self {
            uploads,
            credentials,
            store,
            config: Arc::new(config),
            runtime,
            skills,
            mcp,
            knowledge,
            login_throttle,
        }
    }

    /// After a change to `user`'s account or tokens was written: this instance forgets the
    /// user's credentials before it answers, and every other instance is told to.
    pub(crate) async fn account_changed(&self, user: ars_domain::UserId) {
        self.credentials.forget_user(user);
        self.runtime.announce_account_change(user).await;
    }
}

/// `/api/mcp` (outside the OpenAPI document: it speaks MCP, not REST), behind the bearer-token
/// check. Its sessions end when the runtime closes, so open streams do not hold up a stop.
fn mcp_router(state: &AppState) -> Router<AppState> {
    let stop = tokio_util::sync::CancellationToken::new();
    if tokio::runtime::Handle::try_current().is_ok() {
        let closed = state.runtime.closed();
        let stop = stop.clone();
        tokio::spawn(async move {
            closed.await;
            stop.cancel();
        });
    }
    Router::new()
        .nest_service(
            mcp_endpoint::PATH,
            mcp_endpoint::service(state.clone(), stop),
        )
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            mcp_endpoint::authenticate,
        ))
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The OpenAPI 3.1 document of every endpoint, generated from the handlers.
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    routes::router().split().1.document()
}

/// The whole application: API routes, the web UI (with JSON 404s under `/api`), body limit,
/// request ids and tracing.
pub fn app(state: AppState) -> Router {
    let limit = state.config.body_limit;
    let ui = state.config.ui;
    let (routes, docs) = routes::router().split();
    // Written when first asked for: most servers never are, and writing it costs megabytes.
    let docs = Arc::new(docs);
    Router::new()
        .nest("/api", routes)
        .route(
            "/api/openapi.json",
            axum::routing::get(move |State(state): State<AppState>, auth: Option<Auth>| {
                let docs = Arc::clone(&docs);
                async move {
                    let mut doc = docs
                        .served(|doc| {
                            openapi::state_runtime_catalog(doc, &state.runtime.tool_names());
                            let min_chars = state.config.password_policy.min_chars;
                            openapi::state_password_minimum(doc, min_chars);
                        })
                        .clone();
                    // The providers in force when asked: an admin adds and removes them at
                    // run time, and agent writes naming any other are refused.
                    let snapshot = state.runtime.model_snapshot().await?;
                    let names: Vec<String> = snapshot
                        .registry
                        .list()
                        .into_iter()
                        .map(|p| p.name)
                        .collect();
                    openapi::state_model_providers(&mut doc, &names);
                    // For a signed-in caller, the MCP servers and knowledge bases their agents
                    // may name.
                    if let Some(auth) = auth {
                        let caller = auth.caller();
                        let filter = ars_store::McpServerFilter {
                            visible_to: (!caller.is_admin()).then_some(caller.id),
                        };
                        let slugs: Vec<String> = state
                            .store
                            .list_mcp_servers(filter)
                            .await?
                            .into_iter()
                            .map(|server| server.fields.slug)
                            .collect();
                        openapi::state_visible_slugs(&mut doc, "mcp_servers", &slugs);
                        let filter = ars_store::KnowledgeBaseFilter {
                            visible_to: (!caller.is_admin()).then_some(caller.id),
                        };
                        let slugs: Vec<String> = state
                            .store
                            .list_knowledge_bases(filter)
                            .await?
                            .into_iter()
                            .map(|kb| kb.fields.slug)
                            .collect();
                        openapi::state_visible_slugs(&mut doc, "knowledge_bases", &slugs);
                    }
                    Ok::<_, ApiError>(axum::Json(doc))
                }
            }),
        )
        .merge(protocols::router())
        .route_layer(axum::middleware::from_fn(trace::record_route))
        .merge(mcp_router(&state))
        .route("/metrics", axum::routing::get(metrics::scrape))
        .fallback(move |method, uri, headers| ui::fallback(ui, method, uri, headers))
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::Extension(extract::BodyLimit(limit)))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request<_>| {
                    let id = req
                        .headers()
                        .get(REQUEST_ID)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("-");
                    trace::request_span(req, id)
                })
                .on_response(trace::on_response),
        )
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
}

/// Serves [`app`] on `listener` until `shutdown` resolves, then drains in-flight requests.
/// Each connection's peer address is recorded (`ConnectInfo`) for login throttling.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        app(state).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
