//! What an MCP tool costs: starting `server-everything` in the sandbox (spawn, handshake, tool
//! list), one `echo` call over its stdio pipes, the same over Streamable HTTP, and taking a
//! pooled connection.
//!
//! `ARS_TEST_MCP_PEERS=$(bash scripts/mcp-peers.sh) cargo bench -p ars-mcp --bench mcp -- [CALLS]`
//! (default 500 calls; needs bubblewrap and Node.js).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ars_domain::UserId;
use ars_mcp::{Connection, Pool, PoolConfig, PoolKey};
use ars_sandbox::{LocalSandbox, ProcessRequest, Sandbox, SandboxConfig, Scope};
use tokio_util::sync::CancellationToken;

const TIMEOUT: Duration = Duration::from_secs(30);

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(label: &str, mut times: Vec<Duration>) {
    times.sort();
    println!(
        "{label:<44} n {:>5}  p50 {:>9.3?}  p99 {:>9.3?}  max {:>9.3?}",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[times.len() - 1]
    );
}

fn echo_args() -> serde_json::Map<String, serde_json::Value> {
    let mut args = serde_json::Map::new();
    args.insert("message".into(), "hello".into());
    args
}

async fn calls(connection: &Connection, n: usize) -> Vec<Duration> {
    let cancel = CancellationToken::new();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let result = connection
            .call("echo", echo_args(), TIMEOUT, &cancel)
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true));
        times.push(t.elapsed());
    }
    times
}

#[tokio::main]
async fn main() {
    let Some(peers) = std::env::var_os("ARS_TEST_MCP_PEERS").map(PathBuf::from) else {
        eprintln!("set ARS_TEST_MCP_PEERS (bash scripts/mcp-peers.sh prints it)");
        return;
    };
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(500);
    let everything = peers
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let mut config = SandboxConfig::new(dir.path().to_path_buf());
    config.extra_ro_binds = vec![peers.clone()];
    let sandbox = Arc::new(LocalSandbox::new(config));
    let scope = Scope::new(UserId::new(), "bench", "threads/bench").unwrap();
    sandbox.prepare(&scope).await.unwrap();
    let request = ProcessRequest {
        program: "node".into(),
        args: vec![everything.clone(), "stdio".into()],
        env: Vec::new(),
        cwd: None,
        allow_network: false,
    };

    // Cold starts: spawn in the sandbox, handshake, list the tools.
    let mut starts = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let process = sandbox.spawn(&scope, request.clone()).await.unwrap();
        let connection = Connection::over_process("everything", process, TIMEOUT)
            .await
            .unwrap();
        connection.list_tools(TIMEOUT).await.unwrap();
        starts.push(t.elapsed());
        connection.close().await;
    }
    report("stdio start + handshake + tools/list", starts);

    let process = sandbox.spawn(&scope, request.clone()).await.unwrap();
    let stdio = Connection::over_process("everything", process, TIMEOUT)
        .await
        .unwrap();
    calls(&stdio, 20).await; // warm up
    report("stdio echo call (sandboxed)", calls(&stdio, n).await);

    // Streamable HTTP, the server on loopback.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new("node")
        .arg(&everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    ars_mcp::install_tls_provider();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = Connection::over_http(
        "everything-http",
        &url,
        &[],
        TIMEOUT,
        &ars_mcp::Reach::Anywhere,
        ars_mcp::PeerText::Shown,
    )
    .await
    .unwrap();
    calls(&http, 20).await;
    report(
        "Streamable HTTP echo call (loopback)",
        calls(&http, n).await,
    );

    // A pooled connection, taken again and again.
    let pool = Pool::new(PoolConfig::default());
    let key = PoolKey {
        server: "s".into(),
        revision: "1".into(),
        partition: "p".into(),
    };
    let first = pool
        .get(&key, "everything", true, || async {
            let process = sandbox.spawn(&scope, request.clone()).await.unwrap();
            Connection::over_process("everything", process, TIMEOUT).await
        })
        .await
        .unwrap();
    drop(first);
    let mut takes = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let connection = pool
            .get(&key, "everything", true, || async { unreachable!() })
            .await
            .unwrap();
        takes.push(t.elapsed());
        drop(connection);
    }
    report("pool.get of an open connection", takes);
    pool.shutdown().await;
    let _ = server.kill().await;
}
