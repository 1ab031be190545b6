//! Several real `ars serve` instances on one PostgreSQL schema and one Redis, as the scaled
//! deployment runs them: start, SIGKILL, SIGTERM, restart, SIGSTOP/SIGCONT any of them, and
//! read what they wrote through whichever instance is alive.
//!
//! Only when `ARS_TEST_DATABASE_URL` and `ARS_TEST_REDIS_URL` are set ([`Cluster::start`]
//! answers `None` otherwise, and the test returns early).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{Server, call, eventually, login};

pub const PASSWORD: &str = "admin-password";

/// Short, so that reaping a dead instance's runs takes a couple of seconds, not fifteen.
pub const LEASE_TTL_S: u64 = 2;

/// A PostgreSQL schema of its own (through `search_path` in the URL), dropped with the value.
pub struct Schema {
    admin_url: String,
    name: String,
    pub url: String,
}

impl Schema {
    pub fn create(admin_url: &str, name: &str) -> Schema {
        let psql = |sql: &str| {
            Command::new("psql")
                .args([admin_url, "-qc", sql])
                .env("PGOPTIONS", "--client-min-messages=warning")
                .status()
                .unwrap()
        };
        // A schema left over by an earlier, aborted run of the same test goes first.
        psql(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"));
        assert!(psql(&format!("CREATE SCHEMA {name}")).success());
        let separator = if admin_url.contains('?') { '&' } else { '?' };
        Schema {
            admin_url: admin_url.to_string(),
            name: name.to_string(),
            url: format!("{admin_url}{separator}options=-c%20search_path%3D{name}"),
        }
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .env("PGOPTIONS", "--client-min-messages=warning")
            .args([
                self.admin_url.as_str(),
                "-qc",
                &format!("DROP SCHEMA {} CASCADE", self.name),
            ])
            .status();
    }
}

/// N instances sharing one database schema and one Redis; each has its own data dir (sandbox).
/// Instances are addressed by index; a killed one stays `None` until restarted.
pub struct Cluster {
    servers: Vec<Option<Server>>,
    dirs: Vec<TempDir>,
    env: Vec<(String, String)>,
    schema: Schema,
    /// The admin's bearer token; valid on every instance (one database).
    pub token: String,
}

impl Cluster {
    /// Starts `n` instances, one after the other, on a fresh schema named after `name`, sharing
    /// Redis too.
    pub async fn start(name: &str, n: usize) -> Option<Cluster> {
        let redis = std::env::var("ARS_TEST_REDIS_URL").ok()?;
        Self::start_with_redis(name, n, Some(redis)).await
    }

    /// Like [`Cluster::start`], with no Redis: the instances share only PostgreSQL (and signal
    /// each other through `LISTEN/NOTIFY`).
    pub async fn start_on_postgres_only(name: &str, n: usize) -> Option<Cluster> {
        Self::start_with_redis(name, n, None).await
    }

    async fn start_with_redis(name: &str, n: usize, redis: Option<String>) -> Option<Cluster> {
        let db = std::env::var("ARS_TEST_DATABASE_URL").ok()?;
        let schema = Schema::create(&db, &format!("ars_{name}_{}", std::process::id()));
        let mut env = vec![
            ("ARS_DATABASE_URL".to_string(), schema.url.clone()),
            ("ARS_LEASE_TTL_S".to_string(), LEASE_TTL_S.to_string()),
            // These tests follow their children themselves: background results leave notes.
            (
                "ARS_DEFAULTS__BASE__SUBAGENT_RESULTS".to_string(),
                "note".to_string(),
            ),
        ];
        if let Some(redis) = redis {
            env.push(("ARS_REDIS_URL".to_string(), redis));
        }
        let mut cluster = Cluster {
            servers: Vec::new(),
            dirs: Vec::new(),
            env,
            schema,
            token: String::new(),
        };
        for _ in 0..n {
            cluster.add();
        }
        cluster.token = login(&cluster.base(0), "admin", PASSWORD).await;
        Some(cluster)
    }

    /// Starts one more instance; answers its index.
    pub fn add(&mut self) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let server = self.spawn(dir.path());
        self.dirs.push(dir);
        self.servers.push(Some(server));
        self.servers.len() - 1
    }

    fn spawn(&self, dir: &Path) -> Server {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Server::start_with(dir, Some(PASSWORD), &env)
    }

    fn server(&self, i: usize) -> &Server {
        self.servers[i]
            .as_ref()
            .unwrap_or_else(|| panic!("instance {i} is not running"))
    }

    pub fn base(&self, i: usize) -> String {
        self.server(i).base.clone()
    }

    /// SIGKILL: the instance records nothing, its leases simply stop being renewed.
    pub fn kill(&mut self, i: usize) {
        self.servers[i].take().unwrap().kill();
    }

    /// SIGTERM, asserting a clean exit: the instance interrupts its own runs on the way out.
    pub fn terminate(&mut self, i: usize) {
        let status = self.servers[i].take().unwrap().terminate();
        assert!(status.success(), "instance {i} exited with {status}");
    }

    /// Starts instance `i` again on its data dir (after a kill or a terminate).
    pub fn restart(&mut self, i: usize) {
        assert!(self.servers[i].is_none(), "instance {i} is still running");
        let server = self.spawn(self.dirs[i].path());
        self.servers[i] = Some(server);
    }

    /// SIGSTOP: the process is frozen (no heartbeat, no writes) but alive.
    pub fn freeze(&self, i: usize) {
        self.server(i).signal("STOP");
    }

    /// SIGCONT: the frozen process carries on where it stopped.
    pub fn thaw(&self, i: usize) {
        self.server(i).signal("CONT");
    }

    /// What instance `i` logged so far.
    pub fn log(&mut self, i: usize) -> String {
        self.servers[i]
            .as_mut()
            .map(|s| s.log_so_far().join("\n"))
            .unwrap_or_default()
    }

    pub async fn get(&self, i: usize, path: &str) -> Value {
        let (status, body) = call(
            reqwest::Method::GET,
            format!("{}{path}", self.base(i)),
            Some(&self.token),
            None,
        )
        .await;
        assert_eq!(status, 200, "GET {path} on instance {i}: {body}");
        body
    }

    pub async fn post(&self, i: usize, path: &str, body: Value) -> (u16, Value) {
        call(
            reqwest::Method::POST,
            format!("{}{path}", self.base(i)),
            Some(&self.token),
            Some(body),
        )
        .await
    }

    /// Creates a normal agent with a scripted model.
    pub async fn agent(&self, i: usize, slug: &str, script: Value) {
        super::scripted_agent(&self.base(i), &self.token, slug, script).await;
    }

    /// Creates a subagent with a scripted model.
    pub async fn subagent(&self, i: usize, slug: &str, script: Value) {
        let body = json!({"slug": slug, "name": slug, "description": "helps",
            "backend_id": "SubAgentBackend", "config_json": {"context": {
            "model": {"provider": "scripted", "name": "demo", "script": script}}}});
        let (status, reply) = self.post(i, "/api/agent", body).await;
        assert_eq!(status, 201, "{reply}");
    }

    /// Replaces an agent's script (a merge patch; arrays are replaced whole).
    pub async fn set_script(&self, i: usize, slug: &str, script: Value) {
        let body = json!({"config_json": {"context": {"model": {"script": script}}}});
        let (status, reply) = call(
            reqwest::Method::PATCH,
            format!("{}/api/agent/{slug}", self.base(i)),
            Some(&self.token),
            Some(body),
        )
        .await;
        assert_eq!(status, 200, "{reply}");
    }

    pub async fn thread(&self, i: usize, agent: &str) -> String {
        let (status, thread) = self
            .post(i, "/api/threads", json!({"agent_id": agent}))
            .await;
        assert_eq!(status, 201, "{thread}");
        thread["id"].as_str().unwrap().to_string()
    }

    /// Starts a run through instance `i`, which therefore executes it; answers its id.
    pub async fn start_run(&self, i: usize, thread: &str, input: &str) -> String {
        let (status, run) = self
            .post(
                i,
                &format!("/api/threads/{thread}/runs"),
                json!({"input": input}),
            )
            .await;
        assert_eq!(status, 202, "{run}");
        run["run"]["id"].as_str().unwrap().to_string()
    }

    pub async fn run(&self, i: usize, run: &str) -> Value {
        self.get(i, &format!("/api/runs/{run}")).await
    }

    /// The thread's messages in thread order.
    pub async fn messages(&self, i: usize, thread: &str) -> Vec<Value> {
        let messages = self
            .get(i, &format!("/api/threads/{thread}/messages"))
            .await;
        messages.as_array().unwrap().clone()
    }

    /// Waits until `run` has committed at least `n` messages to `thread` (it is then running).
    pub async fn until_messages(&self, i: usize, thread: &str, run: &str, n: usize) {
        eventually(30, &format!("{n} messages of run {run}"), || async {
            of_run(&self.messages(i, thread).await, run).len() >= n
        })
        .await;
    }

    /// Waits (up to `secs`) until `run` is terminal; answers it.
    pub async fn until_ended(&self, i: usize, run: &str, secs: u64) -> Value {
        eventually(secs, &format!("the end of run {run}"), || async {
            is_terminal(&self.run(i, run).await)
        })
        .await;
        self.run(i, run).await
    }
}

impl Drop for Cluster {
    /// Every instance dies before its schema is dropped (a frozen one too: SIGKILL ends it).
    fn drop(&mut self) {
        for server in self.servers.iter_mut().filter_map(Option::take) {
            server.kill();
        }
    }
}

pub fn is_terminal(run: &Value) -> bool {
    !matches!(
        run["status"].as_str(),
        Some("pending" | "running" | "waiting")
    )
}

/// The messages `run` wrote.
pub fn of_run<'a>(messages: &'a [Value], run: &str) -> Vec<&'a Value> {
    messages.iter().filter(|m| m["run_id"] == run).collect()
}

/// Asserts that the thread's messages come in blocks of one run each: once another run wrote,
/// no earlier run writes again.
pub fn assert_not_interleaved(messages: &[Value]) {
    let mut seen: Vec<&str> = Vec::new();
    for message in messages {
        let Some(run) = message["run_id"].as_str() else {
            continue;
        };
        if seen.last() != Some(&run) {
            assert!(
                !seen.contains(&run),
                "run {run} wrote again after run {} on the same thread: {messages:#?}",
                seen.last().unwrap()
            );
            seen.push(run);
        }
    }
}

/// A run that lasts `steps` tool steps (about 0.2 s each), each streaming text and calling
/// `ls`, then answers `done <input>`: many messages, so interleaving would show.
pub fn worker(steps: usize) -> Value {
    let mut turns: Vec<Value> = (0..steps)
        .map(|i| {
            json!({"text": format!("step {i} of the job on {{{{input}}}}"), "chunk_delay_ms": 30,
                "tool_calls": [{"name": "ls", "arguments": {}}]})
        })
        .collect();
    turns.push(json!({"text": "done {{input}}"}));
    Value::Array(turns)
}

/// Parses a timestamp of the API.
pub fn at(value: &Value) -> chrono::DateTime<chrono::Utc> {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a timestamp: {value}"))
        .parse()
        .unwrap()
}

/// How long ago `then` was, by this machine's clock (the servers share it).
pub fn since(then: chrono::DateTime<chrono::Utc>) -> Duration {
    (chrono::Utc::now() - then).to_std().unwrap_or_default()
}

/// A run's SSE stream, read event by event.
pub struct EventStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl EventStream {
    /// Opens `GET /api/runs/{run}/events` on `base`, resuming after `last_event_id` if given.
    pub async fn open(base: &str, token: &str, run: &str, last_event_id: Option<u64>) -> Self {
        let mut request = reqwest::Client::new()
            .get(format!("{base}/api/runs/{run}/events"))
            .bearer_auth(token);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200, "events of {run} on {base}");
        EventStream {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event (its id and data), or `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<(u64, Value)> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let frame = String::from_utf8(frame).unwrap();
                let field = |name: &str| {
                    frame
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(|v| v.trim().to_string())
                };
                // Keep-alive comments have neither.
                if let (Some(id), Some(data)) = (field("id:"), field("data:")) {
                    return Some((id.parse().unwrap(), serde_json::from_str(&data).unwrap()));
                }
                continue;
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.buffer.extend_from_slice(&bytes),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}

/// A thread's SSE stream (`GET /api/threads/{id}/events`), read message by message.
pub struct ThreadEvents {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl ThreadEvents {
    pub async fn open(base: &str, token: &str, thread: &str) -> Self {
        let response = reqwest::Client::new()
            .get(format!("{base}/api/threads/{thread}/events"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            200,
            "events of thread {thread} on {base}"
        );
        ThreadEvents {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next message (its `event:` and data), or `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let frame = String::from_utf8(frame).unwrap();
                let field = |name: &str| {
                    frame
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(|v| v.trim().to_string())
                };
                // Keep-alive comments have neither.
                if let (Some(event), Some(data)) = (field("event:"), field("data:")) {
                    return Some((event, serde_json::from_str(&data).unwrap()));
                }
                continue;
            }
            match self.response.chunk().await {
                Ok(Some(bytes)) => self.buffer.extend_from_slice(&bytes),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}
