//! What the protocol adapters cost: the same create + run + wait of a one-turn, zero-latency
//! scripted agent through `/api` (create a thread, start a run, wait for it), through
//! `/v1/chat/completions` (one request) and through `/langgraph/runs/wait` (one request), over
//! real HTTP on loopback against a durable SQLite store. First one at a time (latency), then
//! from 32 clients at once (throughput).
//!
//! `cargo bench -p ars-api --bench protocols -- [N]` (default N = 300 per surface and phase).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::TestApp;

const CLIENTS: usize = 32;

#[derive(Clone, Copy)]
enum Surface {
    Api,
    OpenAi,
    LangGraph,
}

impl Surface {
    fn name(self) -> &'static str {
        match self {
            Surface::Api => "/api (thread + run + wait)",
            Surface::OpenAi => "/v1/chat/completions",
            Surface::LangGraph => "/langgraph/runs/wait",
        }
    }
}

async fn post(client: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    let res = client
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    res.json().await.unwrap()
}

/// One create + run + wait through `surface`; checks the answer.
async fn once(client: &reqwest::Client, base: &str, token: &str, surface: Surface) {
    match surface {
        Surface::Api => {
            let thread = post(
                client,
                format!("{base}/api/threads"),
                token,
                json!({"agent_id": "bench"}),
            )
            .await;
            let thread = thread["id"].as_str().unwrap();
            let run = post(
                client,
                format!("{base}/api/threads/{thread}/runs"),
                token,
                json!({"input": "hi"}),
            )
            .await;
            let run = run["run"]["id"].as_str().unwrap();
            let res = client
                .get(format!("{base}/api/runs/{run}/wait?timeout_s=30"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap();
            let waited: Value = res.json().await.unwrap();
            assert_eq!(waited["run"]["status"], "success");
        }
        Surface::OpenAi => {
            let done = post(
                client,
                format!("{base}/v1/chat/completions"),
                token,
                json!({"model": "bench", "messages": [{"role": "user", "content": "hi"}]}),
            )
            .await;
            assert_eq!(done["choices"][0]["message"]["content"], "ok");
        }
        Surface::LangGraph => {
            let values = post(client, format!("{base}/langgraph/runs/wait"), token,
                json!({"assistant_id": "bench", "input": {"messages": [{"role": "user", "content": "hi"}]}})).await;
            assert_eq!(values["messages"][1]["content"], "ok");
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

#[tokio::main]
async fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    let app = TestApp::spawn().await;
    let (_, token) = app.user("bench").await;
    app.scripted_agent(&token, "bench", json!([{"text": "ok"}]))
        .await;
    let client = reqwest::Client::new();
    println!("| surface | sequential median | p99 | {CLIENTS} clients, runs/s |");
    println!("|---|---|---|---|");
    for surface in [Surface::Api, Surface::OpenAi, Surface::LangGraph] {
        // Warm up connections and caches.
        for _ in 0..10 {
            once(&client, &app.base, &token, surface).await;
        }
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            once(&client, &app.base, &token, surface).await;
            times.push(start.elapsed());
        }
        times.sort();
        let start = Instant::now();
        let per_client = n.div_ceil(CLIENTS);
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let (client, base, token) = (client.clone(), app.base.clone(), token.clone());
                tokio::spawn(async move {
                    for _ in 0..per_client {
                        once(&client, &base, &token, surface).await;
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        let rate = (per_client * CLIENTS) as f64 / start.elapsed().as_secs_f64();
        println!(
            "| {} | {:.2} ms | {:.2} ms | {rate:.0} |",
            surface.name(),
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.99).as_secs_f64() * 1e3,
        );
    }
}
