//! Flat costs as history grows: the real `ars serve` (this build's binary), measured over
//! loopback on an empty store, then again after 1,000,000 messages over 100,000 threads (with a
//! run each) and 10,000 agents were written beside what it holds. The user measured is an
//! ordinary user who owns a tenth of those threads (10,000, with 100,000 messages); the agents
//! belong to 100 other users.
//!
//! Measured, each as p50/p99 of N requests one at a time, before and after:
//! - `GET /api/threads?limit=50` (the first page of the user's threads);
//! - `GET /api/threads/{id}/messages?limit=50` (a thread's last page);
//! - create thread + start run + wait (a zero-latency scripted agent);
//! - `GET /api/agent` (the agents the user sees).
//!
//! On SQLite and, when `ARS_TEST_DATABASE_URL` is set, on PostgreSQL (a fresh schema).
//!
//! `cargo bench -p ars --bench history -- [N] [messages]` (defaults 300 and 1,000,000).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use ars_store::test_support::RawSql;
use common::cluster::Schema;
use common::{Server, login};

const PASSWORD: &str = "admin-password";
const USER_PASSWORD: &str = "a-user-password";

/// What is seeded: per 10 messages one thread (and its run); a tenth of the threads are the
/// measured user's; agents and their owners are fixed.
const AGENTS: u64 = 10_000;
const OWNERS: u64 = 100;

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(4)
        .build()
        .unwrap()
}

async fn send(req: reqwest::RequestBuilder) -> Value {
    let res = req.send().await.unwrap();
    let status = res.status();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status}: {body}");
    body
}

struct Ctx {
    client: reqwest::Client,
    base: String,
    token: String,
}

impl Ctx {
    async fn get(&self, path: &str) -> Value {
        send(
            self.client
                .get(format!("{}{path}", self.base))
                .bearer_auth(&self.token),
        )
        .await
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        send(
            self.client
                .post(format!("{}{path}", self.base))
                .bearer_auth(&self.token)
                .json(&body),
        )
        .await
    }

    /// Starts a run of `input` on `thread` and waits for it.
    async fn run(&self, thread: &str, input: &str) {
        let run = self
            .post(
                &format!("/api/threads/{thread}/runs"),
                json!({"input": input}),
            )
            .await;
        let run = run["run"]["id"].as_str().unwrap();
        let waited = self
            .get(&format!("/api/runs/{run}/wait?timeout_s=60"))
            .await;
        assert_eq!(waited["run"]["status"], "success", "{waited}");
    }

    async fn new_thread(&self) -> String {
        let thread = self
            .post("/api/threads", json!({"agent_id": "bench"}))
            .await;
        thread["id"].as_str().unwrap().to_string()
    }
}

/// p50 and p99, in ms, of `n` sequential calls of `job`.
async fn timed<F, Fut>(n: usize, mut job: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..10 {
        job().await;
    }
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        job().await;
        took.push(ms(t.elapsed()));
    }
    took.sort_by(f64::total_cmp);
    (pct(&took, 0.5), pct(&took, 0.99))
}

/// The four figures, in the order of the module docs.
async fn measure(ctx: &Ctx, long_thread: &str, n: usize) -> [(f64, f64); 4] {
    let list = timed(n, || async {
        let page = ctx.get("/api/threads?limit=50").await;
        assert_eq!(page.as_array().unwrap().len(), 50);
    })
    .await;
    let last_page = timed(n, || async {
        let page = ctx
            .get(&format!("/api/threads/{long_thread}/messages?limit=50"))
            .await;
        assert_eq!(page.as_array().unwrap().len(), 10);
    })
    .await;
    let run = timed(n, || async {
        let thread = ctx.new_thread().await;
        ctx.run(&thread, "hi").await;
    })
    .await;
    let agents = timed(n, || async {
        let agents = ctx.get("/api/agent").await;
        assert!(!agents.as_array().unwrap().is_empty());
    })
    .await;
    [list, last_page, run, agents]
}

/// The seeding statements: `messages` messages over `messages / 10` threads (a run each),
/// [`AGENTS`] agents of [`OWNERS`] users; a tenth of the threads belong to `alice` and her
/// agent `bench`, dated before anything the bench makes through the API.
fn seed_sql(postgres: bool, messages: u64) -> Vec<String> {
    let threads = messages / 10;
    // `n(i)` counts 1..=k; `ts(x)` is a time `x` seconds into 2025; `id(p, x)` a text id.
    let numbers = |k: u64| {
        if postgres {
            format!("generate_series(1, {k}) AS n(i)")
        } else {
            format!(
                "(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {k}) \
                 SELECT i FROM c) AS n"
            )
        }
    };
    let ts = |x: &str| {
        if postgres {
            format!("(TIMESTAMPTZ '2025-01-01 00:00:00+00' + ({x}) * INTERVAL '1 second')")
        } else {
            format!("strftime('%Y-%m-%dT%H:%M:%S+00:00', 1735689600 + ({x}), 'unixepoch')")
        }
    };
    let id = |prefix: &str, x: &str| {
        if postgres {
            format!("('{prefix}-' || lpad(({x})::text, 12, '0'))")
        } else {
            format!("printf('{prefix}-%012d', {x})")
        }
    };
    let json = |text: &str| {
        if postgres {
            format!("'{text}'::jsonb")
        } else {
            format!("'{text}'")
        }
    };
    let owner = |x: &str| {
        id(
            "00000000-0000-4000-8000",
            &format!("(({x}) % {OWNERS}) + 1"),
        )
    };
    let alice = "(SELECT id FROM users WHERE username = 'alice')";
    let bench = "(SELECT id FROM agents WHERE slug = 'bench')";
    let mine = |t: &str| format!("({t}) % 10 = 0");
    let thread_user = |t: &str| format!("CASE WHEN {} THEN {alice} ELSE {} END", mine(t), owner(t));
    let thread_agent = |t: &str| {
        format!(
            "CASE WHEN {} THEN {bench} ELSE {} END",
            mine(t),
            id(
                "00000000-0000-4000-9000",
                &format!("(({t}) % {AGENTS}) + 1")
            )
        )
    };
    vec![
        format!(
            "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) \
             SELECT {}, 'seed-user-' || i, 'x', 'user', {t0}, {t0} FROM {}",
            owner("i - 1"),
            numbers(OWNERS),
            t0 = ts("0"),
        ),
        format!(
            "INSERT INTO agents (id, slug, name, description, backend_id, is_subagent, \
             config_json, visibility, owner_id, created_at, updated_at) \
             SELECT {}, 'seed-agent-' || i, 'Seed agent ' || i, '', 'DefaultBackend', FALSE, \
             {}, 'private', {}, {t0}, {t0} FROM {}",
            id("00000000-0000-4000-9000", "i"),
            json(r#"{"context": {}}"#),
            owner("i - 1"),
            numbers(AGENTS),
            t0 = ts("0"),
        ),
        format!(
            "INSERT INTO threads (id, user_id, agent_id, title, runtime_scope_id, workdir_path, \
             created_at, updated_at) \
             SELECT {tid}, {}, {}, 'Seeded thread ' || i, {tid}, 'threads/' || {tid}, {t}, {t} \
             FROM {}",
            thread_user("i"),
            thread_agent("i"),
            numbers(threads),
            tid = id("seed-thread", "i"),
            t = ts("i * 10"),
        ),
        format!(
            "INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, output, \
             created_at, started_at, finished_at) \
             SELECT {}, {}, {}, {}, 'success', 'question', 'answer', {t}, {t}, {t} FROM {}",
            id("00000000-0000-4000-a000", "i"),
            id("seed-thread", "i"),
            thread_agent("i"),
            thread_user("i"),
            numbers(threads),
            t = ts("i * 10"),
        ),
        // Ten messages per thread: five questions and five answers, about 200 bytes each.
        format!(
            "INSERT INTO messages (id, thread_id, run_id, seq, role, content, created_at) \
             SELECT {}, {}, {}, ((i - 1) % 10) + 1, \
             CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END, \
             'Seeded message ' || i || ': ' || {}, {} FROM {}",
            id("00000000-0000-4000-b000", "i"),
            id("seed-thread", "((i - 1) / 10) + 1"),
            id("00000000-0000-4000-a000", "((i - 1) / 10) + 1"),
            if postgres {
                "repeat('lorem ipsum ', 16)"
            } else {
                "replace(hex(zeroblob(16)), '00', 'lorem ipsum ')"
            },
            ts("((i - 1) / 10 + 1) * 10"),
            numbers(messages),
        ),
        // Each thread's last seq, as the store keeps it, so appends continue after the seeds.
        "UPDATE threads SET last_seq = COALESCE((SELECT MAX(seq) FROM messages \
         WHERE messages.thread_id = threads.id), 0)"
            .to_string(),
    ]
}

async fn bench(name: &str, postgres: bool, n: usize, messages: u64) {
    println!("\n## {name}");
    let dir = tempfile::tempdir().unwrap();
    let schema = postgres.then(|| {
        let db = std::env::var("ARS_TEST_DATABASE_URL").unwrap();
        Schema::create(&db, &format!("ars_history_{}", std::process::id()))
    });
    let mut env = vec![("RUST_LOG", "warn,ars=info")];
    if let Some(schema) = &schema {
        env.push(("ARS_DATABASE_URL", schema.url.as_str()));
    }
    let server = Server::start_with(dir.path(), Some(PASSWORD), &env);
    let base = server.base.clone();
    let admin = login(&base, "admin", PASSWORD).await;
    let (status, reply) = common::post(
        &base,
        "/api/users",
        &admin,
        json!({"username": "alice", "password": USER_PASSWORD}),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    let token = login(&base, "alice", USER_PASSWORD).await;
    common::scripted_agent(&base, &token, "bench", json!([{"text": "ok"}])).await;
    let ctx = Ctx {
        client: client(),
        base: base.clone(),
        token,
    };
    // The thread whose last page is read: ten messages of five runs.
    let long_thread = ctx.new_thread().await;
    for i in 0..5 {
        ctx.run(&long_thread, &format!("question {i}")).await;
    }
    // Enough threads for a whole first page.
    for _ in 0..50 {
        ctx.new_thread().await;
    }

    let empty = measure(&ctx, &long_thread, n).await;

    let store: Box<dyn RawSql> = match &schema {
        Some(schema) => Box::new(ars_store::PgStore::connect(&schema.url).await.unwrap()),
        None => {
            let file = dir.path().join("data").join("ars.db");
            let url = format!("sqlite://{}", file.display());
            Box::new(ars_store::SqliteStore::connect(&url).await.unwrap())
        }
    };
    let seeding = Instant::now();
    for sql in seed_sql(postgres, messages) {
        store.execute_raw(&sql).await.unwrap();
    }
    if postgres {
        store.execute_raw("ANALYZE").await.unwrap();
    }
    drop(store);
    println!(
        "seeded {messages} messages, {} threads and runs, {AGENTS} agents in {:.1} s",
        messages / 10,
        seeding.elapsed().as_secs_f64()
    );

    let seeded = measure(&ctx, &long_thread, n).await;

    println!("| | empty store | {messages} messages | ratio |");
    println!("|---|---|---|---|");
    let rows = [
        "`GET /api/threads?limit=50`",
        "a thread's last page, `?limit=50`",
        "thread + run + wait",
        "`GET /api/agent`",
    ];
    for (row, ((e50, e99), (s50, s99))) in rows.iter().zip(empty.iter().zip(seeded.iter())) {
        println!(
            "| {row} | p50 {e50:.2} ms, p99 {e99:.2} ms | p50 {s50:.2} ms, p99 {s99:.2} ms | {:.2}× |",
            s50 / e50
        );
    }
    let _ = server.terminate();
    drop(schema);
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = numbers.first().copied().unwrap_or(300) as usize;
    let messages = numbers.get(1).copied().unwrap_or(1_000_000);
    bench("SQLite", false, n, messages).await;
    if std::env::var("ARS_TEST_DATABASE_URL").is_ok() {
        bench("PostgreSQL", true, n, messages).await;
    } else {
        println!("\n(PostgreSQL skipped: set ARS_TEST_DATABASE_URL)");
    }
}
