//! How many queries an HTTP run costs the store: `POST /api/threads`, `POST …/runs` and
//! `GET /api/runs/{id}/wait`, every statement sqlx runs counted from its `sqlx::query` events.
//! A binary of its own: the counter is this process's one subscriber.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "../../ars-runtime/benches/support/queries.rs"]
mod queries;

use std::collections::BTreeMap;
use std::time::Instant;

use common::TestApp;
use queries::Queries;
use serde_json::json;

/// HTTP runs counted, one after the other.
const RUNS: u64 = 5;

/// The most queries one HTTP run may cost on SQLite, its token's read aside. Writes (3, each
/// one query): the thread, the run with its input, its answer with its end. Reads (6): the
/// thread's agent (may the caller start a thread with it?), the thread (is it the caller's?),
/// the run's agent with the providers' version, the subagents it may call, its skills, and the
/// run (the wait).
const MOST_QUERIES_PER_RUN: u64 = 9;

/// A run's read, by its first four words.
const RUN_READ: &str = "SELECT id, thread_id, agent_id,";

/// The token's read: a join of the tokens and their users.
const TOKEN_READ: &str = "FROM api_tokens t JOIN users u";

/// What the server does on its own time, whenever it happens to: a connection's settings as the
/// pool opens one and checkpoints (`PRAGMA`s), lease renewals, knowledge bases' ingestion and
/// sync. Not a run's.
fn upkeep(text: &str) -> bool {
    text.starts_with("PRAGMA")
        || text.contains("SET lease_expires_ms")
        || text.contains(" kb_")
        || text.contains("knowledge_bases")
}

/// One HTTP run: a thread, a run on it, a wait until it ends.
async fn run(app: &TestApp, token: &str) {
    let thread = app.thread(token, "echo").await;
    let run = app.start_run(token, &thread, "hi").await;
    let waited = app.wait(token, &run, 30).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
}

#[tokio::test]
async fn an_http_run_reads_its_token_at_most_once_a_second_and_costs_at_most_its_budget_of_queries()
{
    let queries = Queries::install();
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "echo", json!([{"text": "hello"}]))
        .await;
    // Warm: the first run prepares the workdir and loads what is cached.
    run(&app, &alice).await;

    queries.clear();
    let started = Instant::now();
    for _ in 0..RUNS {
        run(&app, &alice).await;
    }
    let elapsed = started.elapsed().as_secs();
    let texts = queries.snapshot();
    let mut made = BTreeMap::<String, u64>::new();
    for (text, n) in texts.iter().filter(|(text, _)| !upkeep(text)) {
        let words: Vec<_> = text.split(' ').take(4).collect();
        *made.entry(words.join(" ")).or_default() += *n;
    }
    println!("queries per {RUNS} HTTP runs in {elapsed} s: {made:#?}");
    let token_reads: u64 = texts
        .iter()
        .filter(|(text, _)| text.contains(TOKEN_READ))
        .map(|(_, n)| n)
        .sum();
    // Three requests a run: once per request would be fifteen reads.
    assert!(
        token_reads <= 1 + elapsed,
        "{token_reads} reads of the token in {elapsed} s over {} requests",
        3 * RUNS
    );
    // A run that ends between the API's read of it and the runtime's look at it is read once
    // more by its wait: a race with the run's end, not a cost of the path.
    let run_reads = made.get(RUN_READ).copied().unwrap_or_default();
    assert!(run_reads <= 2 * RUNS, "{run_reads} reads of the runs");
    let again = run_reads.saturating_sub(RUNS);
    let total: u64 = made.values().sum();
    assert!(
        total - token_reads - again <= MOST_QUERIES_PER_RUN * RUNS,
        "{total} queries ({token_reads} of the token, {again} runs read again) for {RUNS} \
         runs: {made:#?}"
    );
}
