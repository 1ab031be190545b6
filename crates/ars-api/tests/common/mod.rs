//! A real server on a loopback port with a fresh SQLite store, and a small HTTP client.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use ars_api::{ApiConfig, AppState, accounts};
use ars_domain::Role;
use ars_store::Store;

pub const ADMIN_PASSWORD: &str = "admin-password";

pub struct TestApp {
    pub base: String,
    pub store: Arc<dyn Store>,
    pub client: reqwest::Client,
    /// The admin's bearer token.
    pub admin: String,
    _dir: tempfile::TempDir,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// A response: status, headers and the JSON body (`Null` when empty).
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The `field` of an error body, for asserting which field a 4xx names.
    pub fn field(&self) -> Option<&str> {
        self.body["error"]["field"].as_str()
    }

    pub fn code(&self) -> Option<&str> {
        self.body["error"]["code"].as_str()
    }
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(ApiConfig::default()).await
    }

    pub async fn spawn_with(config: ApiConfig) -> Self {
        let (store, dir) = ars_store::test_support::sqlite_fresh().await;
        let store: Arc<dyn Store> = Arc::new(store);
        accounts::ensure_admin(&*store, Some(ADMIN_PASSWORD))
            .await
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let state = AppState::new(Arc::clone(&store), config);
        tokio::spawn(ars_api::serve(listener, state, async {
            let _ = rx.await;
        }));
        let mut app = TestApp {
            base,
            store,
            client: reqwest::Client::new(),
            admin: String::new(),
            _dir: dir,
            _shutdown: tx,
        };
        app.admin = app.login("admin", ADMIN_PASSWORD).await;
        app
    }

    pub async fn login(&self, username: &str, password: &str) -> String {
        let reply = self
            .call(
                Method::POST,
                "/api/auth/login",
                None,
                Some(json!({"username": username, "password": password})),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "login failed: {}", reply.body);
        reply.body["token"].as_str().unwrap().to_string()
    }

    /// Creates a user with role `user` directly in the store and returns (id, token).
    pub async fn user(&self, username: &str) -> (String, String) {
        let user = accounts::create_user(&*self.store, username, "password123", Role::User)
            .await
            .unwrap();
        let (token, _) = accounts::create_token(&*self.store, &user, "test", None)
            .await
            .unwrap();
        (user.id.to_string(), token)
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        Self::reply(req.send().await.unwrap()).await
    }

    /// Sends raw bytes with a content type, for malformed and oversized bodies.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        token: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Reply {
        let req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body);
        Self::reply(req.send().await.unwrap()).await
    }

    async fn reply(res: reqwest::Response) -> Reply {
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| panic!("non-JSON body: {}", String::from_utf8_lossy(&bytes)))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str, token: &str) -> Reply {
        self.call(Method::GET, path, Some(token), None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::POST, path, Some(token), Some(body)).await
    }

    pub async fn put(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::PUT, path, Some(token), Some(body)).await
    }

    pub async fn patch(&self, path: &str, token: &str, body: Value) -> Reply {
        self.call(Method::PATCH, path, Some(token), Some(body))
            .await
    }

    pub async fn delete(&self, path: &str, token: &str) -> Reply {
        self.call(Method::DELETE, path, Some(token), None).await
    }

    /// Creates an agent and returns its JSON, asserting 201.
    pub async fn agent(&self, token: &str, body: Value) -> Value {
        let reply = self.post("/api/agent", token, body).await;
        assert_eq!(
            reply.status,
            StatusCode::CREATED,
            "create failed: {}",
            reply.body
        );
        reply.body
    }

    /// Slugs of `GET /api/agent{query}` for `token`.
    pub async fn slugs(&self, token: &str, query: &str) -> Vec<String> {
        let reply = self.get(&format!("/api/agent{query}"), token).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        reply
            .body
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["slug"].as_str().unwrap().to_string())
            .collect()
    }
}

/// A minimal valid normal agent.
pub fn normal(slug: &str) -> Value {
    json!({"slug": slug, "name": format!("Agent {slug}")})
}

/// A minimal valid subagent (is_subagent derived).
pub fn subagent(slug: &str) -> Value {
    json!({"slug": slug, "name": format!("Sub {slug}"), "description": "helps", "backend_id": "SubAgentBackend"})
}
