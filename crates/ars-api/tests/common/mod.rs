//! A real server on a loopback port with a fresh SQLite store, and a small HTTP client.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod logs;
pub mod openai;
pub mod stream;

use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use ars_api::{ApiConfig, AppState, accounts};
use ars_domain::user::PasswordPolicy;
use ars_domain::{Role, SecretKey};
use ars_events::{EventBus, InProcessBus, InProcessConfig, RedisBus, RedisConfig};
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::knowledge::tools::KnowledgePlugin;
use ars_runtime::knowledge::{KnowledgeConfig, KnowledgeHub};
use ars_runtime::mcp::{McpConfig, McpHub, McpPlugin};
use ars_runtime::skills::{SkillLibrary, SkillsPlugin};
use ars_runtime::{Runtime, RuntimeConfig, RuntimeParts, SubagentMiddlewareFactory, builtin_tools};
use ars_sandbox::{LocalSandbox, Sandbox, SandboxConfig, SandboxLimits};
use ars_store::{KnowledgeStore, SkillStore, Store};

pub const ADMIN_PASSWORD: &str = "admin-password";

/// The password of every user [`TestApp::user`] creates.
pub const USER_PASSWORD: &str = "password-1234";

/// What a test may tune besides the API configuration.
pub struct Setup {
    pub api: ApiConfig,
    /// How long a finished run's events stay available to subscribers.
    pub event_retention: Duration,
    /// Estimated bytes finished runs' events may hold before the oldest-finished are evicted.
    pub event_memory_budget: Option<usize>,
    /// Model providers besides the built-in `scripted` one.
    pub models: ModelsConfig,
    /// What one `execute` may consume.
    pub sandbox_limits: SandboxLimits,
    /// The PostgreSQL server to store in (a fresh schema of it), instead of a fresh SQLite
    /// file: see [`pg_url`].
    pub postgres: Option<String>,
    /// Another app's store, to run a second instance beside it; `None`: a fresh one.
    pub store: Option<Arc<dyn Store>>,
    /// Run events and thread events over Redis (URL, key prefix) instead of in process.
    pub redis: Option<(String, String)>,
    /// The server key for stored secrets; default: a fresh one.
    pub secret_key: Option<SecretKey>,
    /// MCP timeouts and bounds.
    pub mcp: McpConfig,
    /// Host folders shown read-only in the sandbox (where the MCP test peers are installed).
    pub extra_ro_binds: Vec<std::path::PathBuf>,
    /// Knowledge bases' limits and ingestion; `None`: defaults, indexes in the test's temp
    /// dir, the change log read every 200 ms.
    pub knowledge: Option<KnowledgeConfig>,
}

/// The PostgreSQL server tests may also run against (`ARS_TEST_DATABASE_URL`); `None` skips
/// them.
pub fn pg_url() -> Option<String> {
    ars_store::test_support::pg_url()
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            api: ApiConfig::default(),
            event_retention: InProcessConfig::default().retention,
            event_memory_budget: InProcessConfig::default().memory_budget,
            models: ModelsConfig::default(),
            sandbox_limits: SandboxLimits::default(),
            postgres: None,
            store: None,
            redis: None,
            secret_key: None,
            mcp: McpConfig::default(),
            extra_ro_binds: Vec::new(),
            knowledge: None,
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub store: Arc<dyn Store>,
    pub runtime: Runtime,
    /// The key this server seals stored secrets with.
    pub secret_key: SecretKey,
    pub client: reqwest::Client,
    /// The admin's bearer token.
    pub admin: String,
    /// The local sandbox's data dir: `users/<id>/user-data` is a user's workspace.
    pub sandbox_dir: std::path::PathBuf,
    /// The in-process event bus, when the app has one (not on Redis).
    pub bus: Option<InProcessBus>,
    /// The MCP connections the runtime and the API share.
    pub mcp: McpHub,
    /// Knowledge bases' ingestion and indexes.
    pub knowledge: KnowledgeHub,
    _dir: tempfile::TempDir,
    /// Stops the server (also when dropped).
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
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
        Self::spawn_setup(Setup {
            api: config,
            ..Setup::default()
        })
        .await
    }

    /// A server with a real runtime: fresh SQLite store, in-process event bus, the model
    /// providers of `setup.models` besides the built-in `scripted` one, the bubblewrap sandbox
    /// in the test's temp dir, and every built-in tool.
    ///
    /// The server's `[defaults.base]` leave background results as notes (`subagent_results =
    /// "note"`): these tests follow their children themselves. Wakes are tested with agents
    /// that ask for them.
    pub async fn spawn_setup(mut setup: Setup) -> Self {
        setup.api.defaults.base.subagent_results = Some(ars_domain::SubagentResults::Note);
        let (store, dir): (Arc<dyn Store>, _) = match (setup.store, &setup.postgres) {
            (Some(store), _) => (store, tempfile::tempdir().unwrap()),
            (None, None) => {
                let (store, dir) = ars_store::test_support::sqlite_fresh().await;
                let store: Arc<dyn Store> = Arc::new(store);
                (store, dir)
            }
            (None, Some(url)) => (
                Arc::new(ars_store::test_support::pg_fresh(url).await),
                tempfile::tempdir().unwrap(),
            ),
        };
        let secret_key = setup.secret_key.unwrap_or_else(SecretKey::generate);
        accounts::ensure_admin(&*store, setup.api.password_policy, Some(ADMIN_PASSWORD))
            .await
            .unwrap();
        let (events, bus): (Arc<dyn EventBus>, _) = match &setup.redis {
            Some((url, prefix)) => {
                let config = RedisConfig {
                    retention: setup.event_retention,
                    key_prefix: prefix.clone(),
                    ..RedisConfig::default()
                };
                (
                    Arc::new(RedisBus::connect(url, config).await.unwrap()),
                    None,
                )
            }
            None => {
                let bus = InProcessBus::new(InProcessConfig {
                    retention: setup.event_retention,
                    memory_budget: setup.event_memory_budget,
                    ..InProcessConfig::default()
                });
                (Arc::new(bus.clone()), Some(bus))
            }
        };
        let models = ModelRegistry::new(&setup.models, |_| None).unwrap();
        let sandbox_dir = dir.path().join("sandbox");
        let mut sandbox = SandboxConfig::new(&sandbox_dir);
        sandbox.limits = setup.sandbox_limits.clone();
        sandbox.extra_ro_binds = setup.extra_ro_binds.clone();
        let sandbox: Arc<dyn Sandbox> = Arc::new(LocalSandbox::new(sandbox));
        let skills = SkillLibrary::new(
            Arc::clone(&store) as Arc<dyn SkillStore>,
            Arc::clone(&sandbox),
        );
        let mcp = McpHub::new(
            Arc::clone(&store),
            Arc::clone(&sandbox),
            secret_key.clone(),
            setup.mcp.clone(),
        );
        let mut knowledge_config = setup
            .knowledge
            .clone()
            .unwrap_or_else(|| KnowledgeConfig::new(dir.path().join("knowledge")));
        if setup.knowledge.is_none() {
            knowledge_config.sync_every = Duration::from_millis(200);
        }
        let knowledge = KnowledgeHub::new(
            Arc::clone(&store) as Arc<dyn KnowledgeStore>,
            Arc::clone(&events),
            knowledge_config,
        );
        let runtime = Runtime::new(RuntimeParts {
            store: Arc::clone(&store),
            events,
            models: Arc::new(models),
            secret_key: secret_key.clone(),
            sandbox,
            tools: builtin_tools(),
            config: RuntimeConfig {
                defaults: setup.api.defaults.clone(),
                ..RuntimeConfig::default()
            },
            plugins: vec![
                Arc::new(SubagentMiddlewareFactory::new()),
                Arc::new(SkillsPlugin::new(skills.clone())),
                Arc::new(McpPlugin::new(mcp.clone())),
                Arc::new(KnowledgePlugin::new(knowledge.clone())),
            ],
            control: Arc::new(ars_events::LocalChannel::new()),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let state = AppState::new(
            Arc::clone(&store),
            setup.api,
            runtime.clone(),
            skills,
            mcp.clone(),
            knowledge.clone(),
        );
        knowledge.start(runtime.model_source().clone());
        let server = tokio::spawn(ars_api::serve(listener, state, async {
            let _ = rx.await;
        }));
        let mut app = TestApp {
            base,
            store,
            runtime,
            secret_key,
            client: reqwest::Client::new(),
            admin: String::new(),
            sandbox_dir,
            bus,
            mcp,
            knowledge,
            _dir: dir,
            shutdown: Some(tx),
            server: Some(server),
        };
        app.admin = app.login("admin", ADMIN_PASSWORD).await;
        app
    }

    /// Stops the server as `ars serve` stops: no new connections, runs stopped (streams that
    /// never end by themselves end then), open connections drained. Answers how serving ended,
    /// or `None` when it did not end within `drain`.
    pub async fn shut_down(&mut self, drain: Duration) -> Option<std::io::Result<()>> {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        self.runtime.shutdown(Duration::from_secs(5)).await;
        let server = self.server.take()?;
        match tokio::time::timeout(drain, server).await {
            Ok(joined) => Some(joined.unwrap()),
            Err(_) => None,
        }
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
        let user = accounts::create_user(
            &*self.store,
            PasswordPolicy::default(),
            username,
            USER_PASSWORD,
            Role::User,
        )
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

/// One SSE message as received: `event:`, `id:` and `data:` (parsed as JSON).
#[derive(Debug, Clone)]
pub struct SseMessage {
    pub event: String,
    pub id: Option<u64>,
    pub data: Value,
}

/// Splits an SSE body into messages; comment lines (keep-alives) are skipped.
pub fn parse_sse(body: &str) -> Vec<SseMessage> {
    let mut messages = Vec::new();
    for block in body.split("\n\n") {
        let (mut event, mut id, mut data) = (String::from("message"), None, String::new());
        let mut seen = false;
        for line in block.lines() {
            if line.starts_with(':') || line.is_empty() {
                continue;
            }
            let (key, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            seen = true;
            match key {
                "event" => event = value.to_string(),
                "id" => id = Some(value.parse().unwrap()),
                "data" => {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value);
                }
                other => panic!("unexpected SSE field {other:?}"),
            }
        }
        if seen {
            messages.push(SseMessage {
                event,
                id,
                data: serde_json::from_str(&data).unwrap(),
            });
        }
    }
    messages
}

impl TestApp {
    /// Creates a normal agent with a scripted model playing `script`; returns its JSON.
    pub async fn scripted_agent(&self, token: &str, slug: &str, script: Value) -> Value {
        self.agent(
            token,
            json!({"slug": slug, "name": format!("Scripted {slug}"), "config_json": {"context": {
                "model": {"provider": "scripted", "name": "demo", "script": script}}}}),
        )
        .await
    }

    /// Creates a thread with `agent` (id or slug) and returns its id, asserting 201.
    pub async fn thread(&self, token: &str, agent: &str) -> String {
        let reply = self
            .post("/api/threads", token, json!({"agent_id": agent}))
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        reply.body["id"].as_str().unwrap().to_string()
    }

    /// Starts a run and returns its id, asserting 202.
    pub async fn start_run(&self, token: &str, thread: &str, input: &str) -> String {
        let reply = self
            .post(
                &format!("/api/threads/{thread}/runs"),
                token,
                json!({"input": input}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
        reply.body["run"]["id"].as_str().unwrap().to_string()
    }

    /// Waits up to `timeout_s` for a run; returns the `{run, wait_timed_out}` body.
    pub async fn wait(&self, token: &str, run: &str, timeout_s: u64) -> Value {
        let reply = self
            .get(
                &format!("/api/runs/{run}/wait?timeout_s={timeout_s}"),
                token,
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        reply.body
    }

    /// Reads a run's whole SSE stream (it ends after the terminal event), optionally resuming
    /// after `last_event_id`. Answers the status and the messages.
    pub async fn events(
        &self,
        token: &str,
        run: &str,
        last_event_id: Option<u64>,
    ) -> (StatusCode, Vec<SseMessage>) {
        let mut req = self
            .client
            .get(format!("{}/api/runs/{run}/events", self.base))
            .bearer_auth(token);
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let res = tokio::time::timeout(Duration::from_secs(30), req.send())
            .await
            .expect("the event stream answers")
            .unwrap();
        let status = res.status();
        if status != StatusCode::OK {
            return (status, Vec::new());
        }
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        let body = tokio::time::timeout(Duration::from_secs(30), res.text())
            .await
            .expect("the event stream ends after the terminal event")
            .unwrap();
        (status, parse_sse(&body))
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
