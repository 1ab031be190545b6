//! The load bench: the real `ars serve` (this build's binary) as a child process, driven over
//! loopback by keep-alive HTTP/1.1 and HTTP/2 (prior knowledge) clients, so the client is not
//! what is measured. On the embedded defaults (SQLite, in-process events) and, when
//! `ARS_TEST_DATABASE_URL` and `ARS_TEST_REDIS_URL` are set, on PostgreSQL + Redis.
//!
//! Measured, per backend:
//! - cold start: process spawn → the first answer (`/api/health`), and → a login's token;
//! - idle RSS, after start and a login, after a burst of logins, and after the load;
//! - `GET /api/agent` requests/s from 32 clients (HTTP/1.1 and HTTP/2);
//! - create thread + start run + wait, one at a time (p50/p99, and the server's context switches
//!   and CPU time per run) and from N clients (runs/s);
//! - one run streamed to S SSE subscribers: publish (the event's `at`) → receive, p50/p99/max,
//!   how many of the expected events arrived, and the CPU time the server and the readers (this
//!   process) spent per delta delivered.
//!
//! `cargo bench -p ars --bench load -- [sequential runs] [clients] [concurrent runs]
//! [subscribers]` (defaults 300, 32, 2000, 1000). Release build: `cargo bench` builds the
//! binary in the bench profile. `ARS_BENCH_BIN=<path>` runs another build's `ars` instead;
//! `ARS_BENCH_SSE_WORDS=N` streams N deltas instead of 20 (to profile the server streaming).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../../ars-runtime/benches/support/work.rs"]
mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde_json::{Value, json};

use common::cluster::Schema;
use common::{Server, login};

const PASSWORD: &str = "admin-password";

struct Args {
    sequential: usize,
    clients: usize,
    concurrent: usize,
    subscribers: usize,
}

fn args() -> Args {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let at = |i: usize, default: usize| numbers.get(i).copied().unwrap_or(default);
    Args {
        sequential: at(0, 300),
        clients: at(1, 32),
        concurrent: at(2, 2000),
        subscribers: at(3, 1000),
    }
}

/// The p-th percentile of sorted `values`.
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The resident set of process `pid`, in MiB.
fn rss_mib(pid: u32) -> f64 {
    support::status_mib(&pid.to_string(), "VmRSS:")
}

fn http1() -> reqwest::Client {
    reqwest::Client::builder()
        .http1_only()
        .pool_max_idle_per_host(256)
        .tcp_nodelay(true)
        .build()
        .unwrap()
}

fn http2() -> reqwest::Client {
    reqwest::Client::builder()
        .http2_prior_knowledge()
        .tcp_nodelay(true)
        .build()
        .unwrap()
}

async fn send(client: &reqwest::Client, req: reqwest::RequestBuilder) -> Value {
    let _ = client;
    let res = req.send().await.unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status}: {body}");
    body
}

/// One create thread + start run + wait of the zero-latency agent `bench`.
async fn one_run(client: &reqwest::Client, base: &str, token: &str) {
    let thread = send(
        client,
        client
            .post(format!("{base}/api/threads"))
            .bearer_auth(token)
            .json(&json!({"agent_id": "bench"})),
    )
    .await;
    let thread = thread["id"].as_str().unwrap();
    let run = send(
        client,
        client
            .post(format!("{base}/api/threads/{thread}/runs"))
            .bearer_auth(token)
            .json(&json!({"input": "hi"})),
    )
    .await;
    let run = run["run"]["id"].as_str().unwrap();
    let waited = send(
        client,
        client
            .get(format!("{base}/api/runs/{run}/wait?timeout_s=60"))
            .bearer_auth(token),
    )
    .await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
}

/// Runs `total` jobs from `clients` workers; answers each job's latency and the wall time.
async fn from_clients<F, Fut>(clients: usize, total: usize, job: F) -> (Vec<f64>, Duration)
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let job = Arc::new(job);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (job, next) = (Arc::clone(&job), Arc::clone(&next));
            tokio::spawn(async move {
                let mut took = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    let t = Instant::now();
                    job().await;
                    took.push(ms(t.elapsed()));
                }
                took
            })
        })
        .collect();
    let mut all = Vec::with_capacity(total);
    for w in workers {
        all.extend(w.await.unwrap());
    }
    all.sort_by(f64::total_cmp);
    (all, started.elapsed())
}

/// What the SSE readers read of an event.
#[derive(serde::Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    at: Option<&'a str>,
    status: Option<&'a str>,
}

/// One run streamed to `subscribers` SSE readers (HTTP/1.1, one connection each).
async fn fan_out(base: &str, token: &str, subscribers: usize) -> (Vec<f64>, usize, usize) {
    // `ARS_BENCH_SSE_WORDS` streams a longer run (one delta per word, 25 ms apart), to profile
    // the server while it streams.
    let words: usize = std::env::var("ARS_BENCH_SSE_WORDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20);
    let text = (0..words)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = json!([{"text": text, "delay_ms": 3000, "chunk_delay_ms": 25}]);
    let client = http1();
    let _ = client
        .post(format!("{base}/api/agent"))
        .bearer_auth(token)
        .json(
            &json!({"slug": "fanout", "name": "fanout", "config_json": {"context": {
            "model": {"provider": "scripted", "name": "demo", "script": script}}}}),
        )
        .send()
        .await
        .unwrap();
    let thread = send(
        &client,
        client
            .post(format!("{base}/api/threads"))
            .bearer_auth(token)
            .json(&json!({"agent_id": "fanout"})),
    )
    .await;
    let thread = thread["id"].as_str().unwrap().to_string();
    let run = send(
        &client,
        client
            .post(format!("{base}/api/threads/{thread}/runs"))
            .bearer_auth(token)
            .json(&json!({"input": "go"})),
    )
    .await;
    let run = run["run"]["id"].as_str().unwrap().to_string();
    let readers: Vec<_> = (0..subscribers)
        .map(|_| {
            let url = format!("{base}/api/runs/{run}/events");
            let token = token.to_string();
            tokio::spawn(async move {
                // One connection per subscriber, as browsers hold them.
                let client = http1();
                let res = client.get(url).bearer_auth(&token).send().await.unwrap();
                let mut events = eventsource_stream::Eventsource::eventsource(res.bytes_stream());
                let mut delays = Vec::new();
                let mut deltas = 0usize;
                while let Some(Ok(event)) = events.next().await {
                    let received = Utc::now();
                    // Only the fields the bench reads, borrowed: the client reads a thousand
                    // streams on the server's two cores, and must not be what is measured.
                    let Ok(body) = serde_json::from_str::<Probe>(&event.data) else {
                        continue;
                    };
                    if body.kind == "message_delta" {
                        deltas += 1;
                        if let Some(at) = body.at.and_then(|a| a.parse::<DateTime<Utc>>().ok()) {
                            delays.push(
                                (received - at).num_microseconds().unwrap_or(0) as f64 / 1000.0,
                            );
                        }
                    }
                    if body.kind == "run_status"
                        && matches!(body.status, Some("success" | "error" | "cancelled"))
                    {
                        break;
                    }
                }
                (delays, deltas)
            })
        })
        .collect();
    let mut delays = Vec::new();
    let mut delivered = 0;
    for r in readers {
        let (d, n) = r.await.unwrap();
        delays.extend(d);
        delivered += n;
    }
    delays.sort_by(f64::total_cmp);
    (delays, delivered, subscribers * words)
}

struct Started {
    server: Server,
    _dir: tempfile::TempDir,
    _schema: Option<Schema>,
    spawn_to_health: Duration,
    spawn_to_token: Duration,
}

fn health_ok(base: &str) -> bool {
    // A blocking probe: the runtime is not needed for it, and it must not wait on a pool.
    let addr = base.trim_start_matches("http://");
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    use std::io::{Read, Write};
    let request = format!("GET /api/health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

/// A login of the burst: a throttled one waits as told and tries again (at most 10 times).
async fn burst_login(base: &str) {
    for _ in 0..10 {
        let (status, body) = common::call(
            reqwest::Method::POST,
            format!("{base}/api/auth/login"),
            None,
            Some(json!({"username": "admin", "password": PASSWORD})),
        )
        .await;
        match status {
            200 => return,
            429 => {
                let wait = body["error"]["params"]["retry_after_s"]
                    .as_u64()
                    .unwrap_or(1);
                tokio::time::sleep(Duration::from_secs(wait)).await;
            }
            _ => panic!("login failed: {body}"),
        }
    }
    panic!("login throttled ten times");
}

async fn start(postgres: bool) -> Started {
    let dir = tempfile::tempdir().unwrap();
    let (schema, env) = if postgres {
        let db = std::env::var("ARS_TEST_DATABASE_URL").unwrap();
        let redis = std::env::var("ARS_TEST_REDIS_URL").unwrap();
        let schema = Schema::create(&db, &format!("ars_load_{}", std::process::id()));
        let env = vec![
            ("ARS_DATABASE_URL".to_string(), schema.url.clone()),
            ("ARS_REDIS_URL".to_string(), redis),
        ];
        (Some(schema), env)
    } else {
        (None, Vec::new())
    };
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.push(("RUST_LOG", "warn,ars=info"));
    // A login pending its hash counts as a failure until it succeeds: let the burst of
    // logins below through the throttle (8 at once from one address).
    env.push(("ARS_LOGIN_FREE_FAILURES", "100"));
    let spawned = Instant::now();
    // `ARS_BENCH_BIN` runs another build's binary, to compare two builds in one sitting.
    let bin = std::env::var("ARS_BENCH_BIN").unwrap_or_else(|_| common::BIN.to_string());
    let server = Server::start_bin(Path::new(&bin), dir.path(), Some(PASSWORD), &env);
    while !health_ok(&server.base) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let spawn_to_health = spawned.elapsed();
    let _token = login(&server.base, "admin", PASSWORD).await;
    let spawn_to_token = spawned.elapsed();
    Started {
        server,
        _dir: dir,
        _schema: schema,
        spawn_to_health,
        spawn_to_token,
    }
}

async fn bench(name: &str, postgres: bool, args: &Args) {
    println!("\n## {name}");
    let started = start(postgres).await;
    let base = started.server.base.clone();
    let pid = started.server.child.id();
    println!(
        "cold start: spawn → first answer {:.0} ms, → a login's token {:.0} ms",
        ms(started.spawn_to_health),
        ms(started.spawn_to_token)
    );
    let token = login(&base, "admin", PASSWORD).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Most of an idle server is the binary's pages it touched; how many of them a fault maps
    // depends on how the page cache holds the file (a binary just copied or built reads
    // bigger than once it was read back), so the anonymous part is told apart.
    println!(
        "idle RSS: {:.1} MiB (anonymous {:.1} MiB, file-backed {:.1} MiB)",
        rss_mib(pid),
        support::status_mib(&pid.to_string(), "RssAnon:"),
        support::status_mib(&pid.to_string(), "RssFile:")
    );
    // A burst of logins: each password hash holds its memory cost (19 MiB) while it runs.
    for _ in 0..6 {
        futures::future::join_all((0..8).map(|_| burst_login(&base))).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    println!("RSS after 48 logins, 8 at a time: {:.1} MiB", rss_mib(pid));

    common::scripted_agent(&base, &token, "bench", json!([{"text": "ok"}])).await;

    // GET /api/agent from 32 clients, HTTP/1.1 then HTTP/2.
    for (label, client) in [("HTTP/1.1", http1()), ("HTTP/2", http2())] {
        let client = Arc::new(client);
        let (base, token) = (Arc::new(base.clone()), Arc::new(token.clone()));
        let total = 20_000;
        let (took, wall) = from_clients(32, total, move || {
            let (client, base, token) =
                (Arc::clone(&client), Arc::clone(&base), Arc::clone(&token));
            async move {
                let res = client
                    .get(format!("{base}/api/agent"))
                    .bearer_auth(token.as_str())
                    .send()
                    .await
                    .unwrap();
                assert!(res.status().is_success());
                let _ = res.bytes().await.unwrap();
            }
        })
        .await;
        println!(
            "GET /api/agent, 32 clients, {label}: {:.0} requests/s (p50 {:.2} ms, p99 {:.2} ms, n = {total})",
            total as f64 / wall.as_secs_f64(),
            pct(&took, 0.5),
            pct(&took, 0.99)
        );
    }

    // Create thread + run + wait, one at a time.
    let client = http1();
    for _ in 0..20 {
        one_run(&client, &base, &token).await;
    }
    let mut took = Vec::new();
    let (switches, cpu) = support::work(&pid.to_string());
    for _ in 0..args.sequential {
        let t = Instant::now();
        one_run(&client, &base, &token).await;
        took.push(ms(t.elapsed()));
    }
    let (switches_after, cpu_after) = support::work(&pid.to_string());
    took.sort_by(f64::total_cmp);
    let runs = args.sequential.max(1) as f64;
    println!(
        "thread + run + wait, sequential: p50 {:.2} ms, p99 {:.2} ms (n = {}); the server, per \
         run: {:.0} context switches, {:.2} ms of CPU",
        pct(&took, 0.5),
        pct(&took, 0.99),
        args.sequential,
        switches_after.saturating_sub(switches) as f64 / runs,
        cpu_after.saturating_sub(cpu).as_secs_f64() * 1e3 / runs
    );

    // The same from N clients.
    for (label, client) in [("HTTP/1.1", http1()), ("HTTP/2", http2())] {
        let client = Arc::new(client);
        let (b, t) = (Arc::new(base.clone()), Arc::new(token.clone()));
        let (took, wall) = from_clients(args.clients, args.concurrent, move || {
            let (client, b, t) = (Arc::clone(&client), Arc::clone(&b), Arc::clone(&t));
            async move { one_run(&client, &b, &t).await }
        })
        .await;
        println!(
            "thread + run + wait, {} clients, {label}: {:.0} runs/s (p50 {:.2} ms, p99 {:.2} ms, n = {})",
            args.clients,
            args.concurrent as f64 / wall.as_secs_f64(),
            pct(&took, 0.5),
            pct(&took, 0.99),
            args.concurrent
        );
    }

    // SSE fan-out, with what it cost the server and the readers (this process) per delivery.
    let (server_before, client_before) = (support::work(&pid.to_string()), support::work("self"));
    let (delays, delivered, expected) = fan_out(&base, &token, args.subscribers).await;
    let (server_after, client_after) = (support::work(&pid.to_string()), support::work("self"));
    let per_delivery = |before: (u64, Duration), after: (u64, Duration)| {
        after.1.saturating_sub(before.1).as_secs_f64() * 1e6 / delivered.max(1) as f64
    };
    println!(
        "one run to {} SSE subscribers: {delivered}/{expected} deltas delivered, publish → receive \
         p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; CPU per delta delivered: the server {:.1} µs, \
         the readers {:.1} µs",
        args.subscribers,
        pct(&delays, 0.5),
        pct(&delays, 0.99),
        delays.last().copied().unwrap_or(f64::NAN),
        per_delivery(server_before, server_after),
        per_delivery(client_before, client_after),
    );
    println!("RSS after the load: {:.1} MiB", rss_mib(pid));
    let _ = started.server.terminate();
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = args();
    bench("SQLite, in-process events", false, &args).await;
    if std::env::var("ARS_TEST_DATABASE_URL").is_ok() && std::env::var("ARS_TEST_REDIS_URL").is_ok()
    {
        bench("PostgreSQL + Redis", true, &args).await;
    } else {
        println!(
            "\n(PostgreSQL + Redis skipped: set ARS_TEST_DATABASE_URL and ARS_TEST_REDIS_URL)"
        );
    }
}
