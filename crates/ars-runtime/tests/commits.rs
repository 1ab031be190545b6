//! How many commits a delegation costs: one parent turn that calls one synchronous `task`, then
//! answers — every store write counted (each is one transaction, one commit), on SQLite.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use ars_domain::RunStatus;
use common::delegation::counted_delegation;
use common::harness;

/// The writes made between `before` and `after`, by operation.
fn made(
    before: &BTreeMap<&'static str, u64>,
    after: &BTreeMap<&'static str, u64>,
) -> BTreeMap<&'static str, u64> {
    after
        .iter()
        .map(|(op, n)| (*op, n - before.get(op).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The most commits one delegated turn may cost: the parent's run (created running with its
/// input, its answer with the call, the call's result, its final answer with its end), the
/// child's thread and run (created together, running, with its input; its answer with its
/// end). Each model answer carries the run's usage in its own commit; a final answer is
/// written with its run's end.
const MOST_COMMITS_PER_DELEGATION: u64 = 6;

#[tokio::test]
async fn a_delegated_turn_costs_at_most_its_budget_of_commits() {
    let h = harness().await;
    let thread = counted_delegation(&h).await;
    // Warm: the first run prepares the workdir and loads what is cached.
    assert_eq!(h.finish(&thread, "first").await.status, RunStatus::Success);

    let before = h.store.writes();
    let run = h.finish(&thread, "again").await;
    assert_eq!(run.status, RunStatus::Success, "{:?}", run.error);
    let writes = made(&before, &h.store.writes());
    let total: u64 = writes.values().sum();
    println!("commits per delegation: {total} {writes:?}");
    assert!(
        total <= MOST_COMMITS_PER_DELEGATION,
        "{total} commits: {writes:?}"
    );
    // The usage of each run is recorded with its answers, the child's thread with its run, and
    // a run that finds a slot free is created running: none has a commit of its own.
    assert!(!writes.contains_key("set_run_usage"), "{writes:?}");
    assert!(!writes.contains_key("create_thread"), "{writes:?}");
    assert!(!writes.contains_key("mark_run_running"), "{writes:?}");
    assert_eq!(run.usage.total(), 24, "the parent's two turns");
}
