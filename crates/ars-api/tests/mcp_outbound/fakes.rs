//! Endpoints for the outbound tests, each on its own loopback port: error pages and a
//! redirect whose text holds [`MARKER`], a sink that counts what reaches it, and a small MCP
//! server whose tool calls fail over HTTP (`boom`) or as a JSON-RPC error (`fail`), with the
//! marker in what it answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, post};
use serde_json::{Value, json};

use ars_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use ars_mcp::rmcp::service::RequestContext;
use ars_mcp::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use ars_mcp::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use ars_mcp::rmcp::{ErrorData, RoleServer, ServerHandler};

/// What no answer to a plain user may carry.
pub const MARKER: &str = "peer-body-marker-3c9f01";

/// A fake's port and the requests it received.
pub struct Fake {
    pub port: u16,
    pub hits: Arc<AtomicUsize>,
}

impl Fake {
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn serve(router: Router<Arc<AtomicUsize>>) -> Fake {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let router = router
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&hits),
            count,
        ))
        .with_state(Arc::clone(&hits));
    tokio::spawn(async move { axum::serve(listener, router).await });
    Fake { port, hits }
}

async fn count(State(hits): State<Arc<AtomicUsize>>, request: Request, next: Next) -> Response {
    hits.fetch_add(1, Ordering::SeqCst);
    next.run(request).await
}

/// `/notfound` (404), `/unauthorized` (401, no challenge), `/jsonrpc` (400 with a JSON-RPC
/// error answering the request's id) and `/redirect` (307 to `redirect_to`).
pub async fn pages(redirect_to: String) -> Fake {
    let text =
        |status: StatusCode| move || async move { (status, format!("{MARKER} at the door")) };
    let router = Router::new()
        .route("/notfound", any(text(StatusCode::NOT_FOUND)))
        .route("/unauthorized", any(text(StatusCode::UNAUTHORIZED)))
        .route(
            "/jsonrpc",
            post(|body: axum::Json<Value>| async move {
                let error = json!({"jsonrpc": "2.0", "id": body["id"],
                                   "error": {"code": -32000, "message": format!("{MARKER} says no")}});
                (StatusCode::BAD_REQUEST, axum::Json(error))
            }),
        )
        .route(
            "/redirect",
            any(move || {
                let to = redirect_to.clone();
                async move {
                    Response::builder()
                        .status(StatusCode::TEMPORARY_REDIRECT)
                        .header(header::LOCATION, to)
                        .body(Body::from(format!("{MARKER} moved")))
                        .unwrap()
                }
            }),
        );
    serve(router).await
}

/// Answers 200 to anything and counts it.
pub async fn sink() -> Fake {
    serve(Router::new().fallback(any(|| async { "reached" }))).await
}

#[derive(Clone)]
struct Failing;

fn tool(name: &str) -> Tool {
    let schema: JsonObject = match json!({"type": "object"}) {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(
        name.to_owned(),
        format!("{name} always fails"),
        Arc::new(schema),
    )
}

impl ServerHandler for Failing {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("boom"),
            tool("fail"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Err(ErrorData::internal_error(
            format!("{MARKER}: {} failed", request.name),
            None,
        ))
    }
}

/// A call of `boom` answered HTTP 400 with the marker, before the MCP server sees it.
async fn refuse_boom(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    if String::from_utf8_lossy(&bytes).contains("\"boom\"") {
        return (StatusCode::BAD_REQUEST, format!("{MARKER}: no boom here")).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// An MCP server at `/mcp` with tools `boom` and `fail`, whose every call fails.
pub async fn failing_mcp() -> Fake {
    let service = StreamableHttpService::new(
        || Ok(Failing),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().disable_allowed_hosts(),
    );
    let router = Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::from_fn(refuse_boom));
    serve(router).await
}
