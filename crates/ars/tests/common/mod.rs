//! The real `ars` binary as a child process on a temporary data dir, and a small HTTP client.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod cluster;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_ars");

/// A running `ars serve` and the lines it logged so far.
pub struct Server {
    pub child: Child,
    pub base: String,
    lines: mpsc::Receiver<String>,
    pub log: Vec<String>,
}

/// A server its test did not stop (it failed first) dies with it, instead of serving on after
/// the test binary has gone.
impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    pub fn start(data_dir: &Path, admin_password: Option<&str>) -> Server {
        Self::start_with(data_dir, admin_password, &[])
    }

    /// Like [`Server::start`], with extra environment variables (e.g. a shared database).
    pub fn start_with(
        data_dir: &Path,
        admin_password: Option<&str>,
        env: &[(&str, &str)],
    ) -> Server {
        Self::start_bin(Path::new(BIN), data_dir, admin_password, env)
    }

    /// Like [`Server::start_with`], running the `ars` binary at `bin` (a bench compares builds).
    pub fn start_bin(
        bin: &Path,
        data_dir: &Path,
        admin_password: Option<&str>,
        env: &[(&str, &str)],
    ) -> Server {
        let mut cmd = Command::new(bin);
        cmd.arg("serve")
            .current_dir(data_dir)
            .env("ARS_DATA_DIR", data_dir.join("data"))
            .env("ARS_BIND", "127.0.0.1:0")
            .env_remove("ARS_DATABASE_URL")
            .env_remove("ARS_REDIS_URL")
            .env_remove("ARS_ADMIN_PASSWORD")
            // A developer's collector is not the tests'; a test that wants traces says so.
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env("RUST_LOG", "info")
            .stderr(Stdio::piped())
            .stdout(Stdio::null());
        if let Some(p) = admin_password {
            cmd.env("ARS_ADMIN_PASSWORD", p);
        }
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            base: String::new(),
            lines,
            log: Vec::new(),
        };
        let line = server.wait_for("listening on http://");
        let at = line.find("http://").unwrap();
        server.base = line[at..].split_whitespace().next().unwrap().to_string();
        server
    }

    pub fn wait_for(&mut self, needle: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no `{needle}` in the log:\n{}", self.log.join("\n")));
            self.log.push(line.clone());
            if line.contains(needle) {
                return line;
            }
        }
    }

    /// Sends `signal` (a name `kill` knows: `STOP`, `CONT`, …) to the process.
    pub fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal} failed");
    }

    /// Every line logged so far, without waiting for more.
    pub fn log_so_far(&mut self) -> &[String] {
        while let Ok(line) = self.lines.try_recv() {
            self.log.push(line);
        }
        &self.log
    }

    /// SIGKILL: the process gets no chance to record anything.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn terminate(mut self) -> std::process::ExitStatus {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        for _ in 0..100 {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.child.kill().unwrap();
        panic!("server did not stop on SIGTERM");
    }
}

pub async fn call(
    method: reqwest::Method,
    url: String,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new().request(method, url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().await.unwrap();
    let status = res.status().as_u16();
    let bytes = res.bytes().await.unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Logs in and returns the bearer token.
pub async fn login(base: &str, username: &str, password: &str) -> String {
    let (status, body) = call(
        reqwest::Method::POST,
        format!("{base}/api/auth/login"),
        None,
        Some(serde_json::json!({"username": username, "password": password})),
    )
    .await;
    assert_eq!(status, 200, "login failed: {body}");
    body["token"].as_str().unwrap().to_string()
}

/// `GET` with a token, asserting 200.
pub async fn get(base: &str, path: &str, token: &str) -> Value {
    let (status, body) = call(
        reqwest::Method::GET,
        format!("{base}{path}"),
        Some(token),
        None,
    )
    .await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

/// `POST` with a token; answers status and body.
pub async fn post(base: &str, path: &str, token: &str, body: Value) -> (u16, Value) {
    call(
        reqwest::Method::POST,
        format!("{base}{path}"),
        Some(token),
        Some(body),
    )
    .await
}

/// Creates a normal agent with a scripted model, asserting 201.
pub async fn scripted_agent(base: &str, token: &str, slug: &str, script: Value) {
    let body = serde_json::json!({"slug": slug, "name": slug, "config_json": {"context": {
        "model": {"provider": "scripted", "name": "demo", "script": script}}}});
    let (status, reply) = post(base, "/api/agent", token, body).await;
    assert_eq!(status, 201, "{reply}");
}

/// Polls `check` every 50 ms for up to `secs` seconds.
pub async fn eventually<F, Fut>(secs: u64, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
