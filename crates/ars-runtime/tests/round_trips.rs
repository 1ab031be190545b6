//! How many queries — round trips to a SQLite connection's worker thread — a delegation costs:
//! the same parent turn as `commits.rs`, every statement sqlx runs counted from its
//! `sqlx::query` events. A binary of its own: the counter is this process's one subscriber.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "../benches/support/queries.rs"]
mod queries;

use std::collections::BTreeMap;

use ars_domain::RunStatus;
use common::delegation::counted_delegation;
use common::harness;
use queries::Queries;

/// The most queries one delegated turn may cost on SQLite. Writes (6, each one query of
/// several statements): the parent's run with its input, its answer with the call, the call's
/// result, its final answer with its end; the child's thread with its run and input, its
/// answer with its end. Reads (4): each run's agent with the providers' version (one
/// statement), the subagents the parent may call, and the parent's history (this is its
/// thread's second run; a first run begins from its input). The parent's child ended here, so
/// what it spent is known when the parent ends: not read back.
const MOST_QUERIES_PER_DELEGATION: u64 = 10;

#[tokio::test]
async fn a_delegated_turn_costs_at_most_its_budget_of_round_trips() {
    let queries = Queries::install();
    let h = harness().await;
    let thread = counted_delegation(&h).await;
    // Warm: the first run prepares the workdir and loads what is cached.
    assert_eq!(h.finish(&thread, "first").await.status, RunStatus::Success);

    queries.clear();
    let run = h.finish(&thread, "again").await;
    assert_eq!(run.status, RunStatus::Success, "{:?}", run.error);
    // By their first four words: enough to tell one statement from another. A connection's
    // settings as the pool opens one, and checkpoints, are `PRAGMA`s: the pool's upkeep, made
    // whenever it happens to need them, not the turn's.
    let texts: BTreeMap<String, u64> = queries
        .snapshot()
        .into_iter()
        .filter(|(text, _)| !text.starts_with("PRAGMA"))
        .collect();
    let mut made = BTreeMap::<String, u64>::new();
    for (text, n) in &texts {
        let words: Vec<_> = text.split(' ').take(4).collect();
        *made.entry(words.join(" ")).or_default() += *n;
    }
    let total: u64 = made.values().sum();
    println!("queries per delegation: {total} {made:#?}");
    assert!(
        total <= MOST_QUERIES_PER_DELEGATION,
        "{total} queries: {made:#?}"
    );
    // A run reads the providers' version with its agent, never on its own.
    assert!(
        !texts
            .keys()
            .any(|text| text.starts_with("SELECT version FROM model_settings")),
        "the providers' version read on its own: {made:#?}"
    );
    // Messages and runs are written by queries of several statements, never statement by
    // statement — a run's end too, with its final answer: no run ends on its own here. Each
    // such write begins and ends its transaction in that one query — `BEGIN IMMEDIATE` …
    // `COMMIT` alone in the writer's queue (as one thing at a time here is), its savepoint
    // should it share a batch: beginning and ending are no round trips of their own.
    let writes: Vec<&String> = texts
        .keys()
        .filter(|text| {
            text.contains("INSERT INTO messages")
                || text.contains("INSERT INTO runs")
                || text.contains("UPDATE runs")
        })
        .collect();
    assert!(!writes.is_empty(), "{made:#?}");
    for text in writes {
        let alone = text.starts_with("BEGIN IMMEDIATE;") && text.ends_with("; COMMIT");
        let in_batch =
            text.starts_with("SAVEPOINT ars_write;") && text.ends_with("; RELEASE ars_write");
        assert!(
            alone || in_batch,
            "a write not in its own one query: {text}"
        );
    }
}
