//! The web UI beside the API: files with their types and caching rules, client-side routes
//! answered with the index, JSON kept under `/api`, and a useful page when the UI was not built.
//!
//! The server is given a small fixture folder (`tests/fixtures/ui`) in place of `web/dist`, so
//! these tests mean the same whether or not the real UI was built.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestApp;
use reqwest::header::{
    ALLOW, CACHE_CONTROL, CONTENT_TYPE, ETAG, HeaderMap, IF_NONE_MATCH, X_CONTENT_TYPE_OPTIONS,
};
use reqwest::{Method, StatusCode};
use rust_embed::RustEmbed;
use serde_json::Value;

use ars_api::{ApiConfig, UiAssets};

#[derive(RustEmbed)]
#[folder = "tests/fixtures/ui/"]
struct FixtureUi;

#[derive(RustEmbed)]
#[folder = "tests/fixtures/no-ui-built/"]
#[allow_missing = true]
struct NoUi;

const FIXTURE_INDEX: &str = include_str!("fixtures/ui/index.html");

async fn spawn(ui: UiAssets) -> TestApp {
    TestApp::spawn_with(ApiConfig {
        ui,
        ..ApiConfig::default()
    })
    .await
}

/// A response with its body as text.
struct Page {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Page {
    fn header(&self, name: impl reqwest::header::AsHeaderName) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or_default()
    }

    /// Asserts a 200 HTML page that browsers revalidate on every load (`what` names the case).
    fn assert_revalidated_html(&self, what: &str) {
        assert_eq!(self.status, StatusCode::OK, "{what}");
        assert!(self.header(CONTENT_TYPE).starts_with("text/html"), "{what}");
        assert_eq!(self.header(CACHE_CONTROL), "no-cache", "{what}");
    }

    fn json(&self) -> Value {
        assert!(
            self.header(CONTENT_TYPE).starts_with("application/json"),
            "not JSON: {} {}",
            self.header(CONTENT_TYPE),
            self.body
        );
        serde_json::from_str(&self.body).unwrap()
    }
}

async fn request(app: &TestApp, method: Method, path: &str, headers: HeaderMap) -> Page {
    let res = app
        .client
        .request(method, format!("{}{path}", app.base))
        .headers(headers)
        .send()
        .await
        .unwrap();
    Page {
        status: res.status(),
        headers: res.headers().clone(),
        body: res.text().await.unwrap(),
    }
}

async fn get(app: &TestApp, path: &str) -> Page {
    request(app, Method::GET, path, HeaderMap::new()).await
}

#[tokio::test]
async fn the_index_is_served_at_the_root_and_always_revalidated() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    for path in ["/", "/index.html"] {
        let page = get(&app, path).await;
        page.assert_revalidated_html(path);
        assert_eq!(page.body, FIXTURE_INDEX, "{path}");
    }
}

#[tokio::test]
async fn client_side_routes_are_answered_with_the_index() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    for path in [
        "/chat",
        "/chat/0190f5c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d",
        "/agents",
        "/agents/new",
        "/login?next=%2Fagents",
        "/apis-are-not-api",
    ] {
        let page = get(&app, path).await;
        page.assert_revalidated_html(path);
        assert_eq!(page.body, FIXTURE_INDEX, "{path}");
    }
}

#[tokio::test]
async fn unknown_api_paths_stay_json_404s() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    let mut html = HeaderMap::new();
    html.insert("accept", "text/html".parse().unwrap());
    for path in [
        "/api",
        "/api/",
        "/api/nope",
        "/api/agent/x/nope",
        "/api/index.html",
    ] {
        let page = request(&app, Method::GET, path, html.clone()).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(page.json()["error"]["code"], "not_found", "{path}");
    }
    let page = request(&app, Method::POST, "/api/nope", HeaderMap::new()).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    assert_eq!(page.json()["error"]["code"], "not_found");
    assert_eq!(get(&app, "/api/health").await.json()["status"], "ok");
}

#[tokio::test]
async fn files_are_sent_with_their_content_types() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    for (path, expected) in [
        ("/assets/app-3f2a1b.js", "javascript"),
        ("/assets/app-3f2a1b.css", "text/css"),
        ("/favicon.svg", "image/svg+xml"),
    ] {
        let page = get(&app, path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(
            page.header(CONTENT_TYPE).contains(expected),
            "{path}: {}",
            page.header(CONTENT_TYPE)
        );
        assert_eq!(page.header(X_CONTENT_TYPE_OPTIONS), "nosniff", "{path}");
    }
    assert!(
        get(&app, "/assets/app-3f2a1b.js")
            .await
            .body
            .contains("fixture")
    );
}

#[tokio::test]
async fn hashed_assets_are_cached_for_good_and_other_files_revalidated() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    let asset = get(&app, "/assets/app-3f2a1b.js").await;
    assert_eq!(
        asset.header(CACHE_CONTROL),
        "public, max-age=31536000, immutable"
    );
    assert_eq!(
        get(&app, "/favicon.svg").await.header(CACHE_CONTROL),
        "no-cache"
    );

    // Revalidating the index costs no body while it is unchanged.
    let index = get(&app, "/").await;
    let etag = index.header(ETAG).to_string();
    assert!(etag.starts_with('"') && etag.len() > 2, "{etag:?}");
    let mut headers = HeaderMap::new();
    headers.insert(IF_NONE_MATCH, etag.parse().unwrap());
    let again = request(&app, Method::GET, "/", headers).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());
    assert_eq!(again.header(CACHE_CONTROL), "no-cache");

    let mut stale = HeaderMap::new();
    stale.insert(IF_NONE_MATCH, "\"stale\"".parse().unwrap());
    let page = request(&app, Method::GET, "/", stale).await;
    assert_eq!(
        (page.status, page.body.as_str()),
        (StatusCode::OK, FIXTURE_INDEX)
    );
}

#[tokio::test]
async fn a_missing_file_is_a_404_not_the_index() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    for path in [
        "/assets/app-0000.js",
        "/assets/logo",
        "/favicon.ico",
        "/chat/robots.txt",
    ] {
        let page = get(&app, path).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(page.json()["error"]["code"], "not_found", "{path}");
    }
}

/// Sends a request line exactly as written (no client-side path normalisation).
async fn raw_get(app: &TestApp, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = app.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

#[tokio::test]
async fn paths_cannot_escape_the_ui_folder() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    // `tests/ui.rs` (this file) is two levels above the fixture folder.
    for path in [
        "/../../ui.rs",
        "/assets/../../../ui.rs",
        "/%2e%2e/%2e%2e/ui.rs",
        "/..%2f..%2fui.rs",
    ] {
        let response = raw_get(&app, path).await;
        assert!(
            !response.contains("paths_cannot_escape_the_ui_folder"),
            "{path} leaked a file outside the UI folder"
        );
    }
}

#[tokio::test]
async fn other_methods_on_ui_paths_are_json_405s() {
    let app = spawn(UiAssets::from_embed::<FixtureUi>()).await;
    for (method, path) in [
        (Method::POST, "/"),
        (Method::POST, "/chat/abc"),
        (Method::PUT, "/agents/new"),
        (Method::DELETE, "/assets/app-3f2a1b.js"),
    ] {
        let page = request(&app, method.clone(), path, HeaderMap::new()).await;
        assert_eq!(
            page.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert_eq!(page.header(ALLOW), "GET, HEAD", "{method} {path}");
        assert_eq!(page.json()["error"]["code"], "method_not_allowed");
    }
    let head = request(&app, Method::HEAD, "/chat/abc", HeaderMap::new()).await;
    assert_eq!(head.status, StatusCode::OK);
    assert!(head.header(CONTENT_TYPE).starts_with("text/html"));
    assert!(head.body.is_empty());
}

#[tokio::test]
async fn without_a_built_ui_every_page_says_how_to_build_it() {
    let app = spawn(UiAssets::from_embed::<NoUi>()).await;
    for path in ["/", "/index.html", "/chat/abc", "/agents/new"] {
        let page = get(&app, path).await;
        page.assert_revalidated_html(path);
        assert!(page.body.contains("npm run build"), "{}", page.body);
        assert!(page.body.contains("scripts/serve.sh"), "{}", page.body);
    }
    assert_eq!(get(&app, "/api/health").await.json()["status"], "ok");
    assert_eq!(get(&app, "/api/nope").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_server_default_serves_an_html_root_whether_or_not_the_ui_was_built() {
    let app = TestApp::spawn().await;
    let page = get(&app, "/").await;
    page.assert_revalidated_html("/");
    assert!(page.body.to_lowercase().starts_with("<!doctype html>"));
}
