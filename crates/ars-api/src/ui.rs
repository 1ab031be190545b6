//! The web UI: the built single-page app (`web/dist`) served at `/`, beside the API at `/api`.
//!
//! Release builds embed `web/dist` in the binary at compile time (one file is all a deployment
//! needs); debug builds read the folder at run time, so a rebuilt UI shows up without a cargo
//! build. Without a built UI the root answers a short page saying how to build it.
//!
//! Any other `GET` is answered with `index.html`, so client-side routes such as
//! `/chat/<thread>` survive a reload; only paths that name a missing file (under `assets/`, or
//! ending in an extension such as `favicon.ico`) are 404s. Paths under `/api` never reach this
//! module's pages: they stay JSON, 404s included. Files under `assets/` carry a content hash in their names and are cached
//! for good; everything else (`index.html` first of all) is revalidated on every load.
//!
//! **Boundary:** the UI is opaque bytes here; its build lives in `web/`.

use std::fmt;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rust_embed::{EmbeddedFile, RustEmbed};

use crate::ApiError;

/// The UI build, `web/dist` at the workspace root (absent until `npm run build` in `web/`).
#[derive(RustEmbed)]
#[folder = "../../web/dist/"]
#[allow_missing = true]
struct WebDist;

/// Where the UI's files come from: any `rust_embed` folder. The server uses [`Self::web_dist`];
/// tests pass a small folder of their own, so they do not depend on a built UI.
#[derive(Clone, Copy)]
pub struct UiAssets {
    get: fn(&str) -> Option<EmbeddedFile>,
}

impl UiAssets {
    /// The built UI of this workspace, `web/dist`.
    pub fn web_dist() -> Self {
        Self::from_embed::<WebDist>()
    }

    /// The files of the `rust_embed` folder `E`.
    pub fn from_embed<E: RustEmbed>() -> Self {
        Self { get: E::get }
    }
}

impl Default for UiAssets {
    fn default() -> Self {
        Self::web_dist()
    }
}

impl fmt::Debug for UiAssets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UiAssets")
    }
}

const INDEX: &str = "index.html";

/// Hashed build outputs: their names change whenever their content does.
const ASSETS_DIR: &str = "assets/";

const IMMUTABLE: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");
const REVALIDATE: HeaderValue = HeaderValue::from_static("no-cache");

/// Shown at every UI path when `web/dist` was not built before the server.
const NOT_BUILT: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>ARS</title></head>
<body>
<h1>ARS is running; its web UI was not built</h1>
<p>The API answers under <a href="/api/health">/api</a>. To serve the UI too, build it
(<code>npm ci &amp;&amp; npm run build</code> in <code>web/</code>) and restart the server;
a release binary must be rebuilt after that. <code>bash scripts/serve.sh</code> does it all.</p>
</body>
</html>
"#;

/// The answer to every request no API route matched.
pub(crate) async fn fallback(
    assets: UiAssets,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let path = uri.path();
    if path == "/api" || path.starts_with("/api/") {
        return ApiError::NotFound("no such endpoint".into())
            .because(ars_domain::ErrorReason::NoSuchEndpoint)
            .into_response();
    }
    if method != Method::GET && method != Method::HEAD {
        let mut response = ApiError::MethodNotAllowed.into_response();
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let name = match path.trim_start_matches('/') {
        "" => INDEX,
        name => name,
    };
    if let Some(file) = (assets.get)(name) {
        return file_response(name, file, &headers);
    }
    if name != INDEX && names_a_file(name) {
        return ApiError::not_found(ars_domain::Subject::File).into_response();
    }
    match (assets.get)(INDEX) {
        Some(index) => file_response(INDEX, index, &headers),
        None => not_built(),
    }
}

/// Whether a missing `name` was meant as a file rather than a page of the app: client routes
/// never end in an extension, and nothing under `assets/` is a route.
fn names_a_file(name: &str) -> bool {
    name.starts_with(ASSETS_DIR)
        || name
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains('.'))
}

/// One file with its content type, an ETag from its hash, and its caching rule; a 304 when
/// the client already holds this version.
fn file_response(name: &str, file: EmbeddedFile, request: &HeaderMap) -> Response {
    let etag = etag(&file.metadata.sha256_hash());
    let cache = if name.starts_with(ASSETS_DIR) {
        IMMUTABLE
    } else {
        REVALIDATE
    };
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .is_some_and(|sent| sent.as_bytes() == etag.as_bytes());
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = Body::from(file.data).into_response();
        if let Ok(mime) = HeaderValue::from_str(file.metadata.mimetype()) {
            response.headers_mut().insert(header::CONTENT_TYPE, mime);
        }
        response
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, cache);
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, etag);
    }
    response
}

/// A strong ETag: the first 16 bytes of the file's SHA-256, in hex.
fn etag(hash: &[u8; 32]) -> String {
    let hex: String = hash[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

fn not_built() -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, REVALIDATE),
        ],
        NOT_BUILT,
    )
        .into_response()
}
