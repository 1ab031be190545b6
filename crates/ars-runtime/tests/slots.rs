//! Execution slots: a run that finds one free is created `running` in the commit that creates
//! it; a run that finds none is created `pending`, waits its turn, and is marked running when a
//! slot frees — its followers hear each status once, in order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use ars_domain::{Limits, Run, RunStatus};
use ars_events::EventKind;
use ars_runtime::RuntimeConfig;
use common::Harness;

/// The statuses `run`'s events told, in order.
async fn told_statuses(h: &Harness, run: &Run) -> Vec<RunStatus> {
    h.runtime
        .events()
        .subscribe(run.id, 0)
        .await
        .unwrap()
        .filter_map(|e| async move {
            match e.unwrap().kind {
                EventKind::RunStatus { status, .. } => Some(status),
                _ => None,
            }
        })
        .collect()
        .await
}

#[tokio::test]
async fn a_run_that_finds_a_slot_free_is_created_running_in_one_commit() {
    let h = common::harness().await;
    let thread = h
        .thread(
            json!([{"text": "done", "delay_ms": 200}]),
            &[],
            Limits::default(),
        )
        .await;
    let before = h.store.writes();
    let run = h.start(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Running, "{run:?}");
    assert!(run.started_at.is_some(), "started when created: {run:?}");
    let stored = h.store.run(run.id).await.unwrap().unwrap();
    assert_eq!(stored.status, RunStatus::Running);
    assert_eq!(stored.started_at, run.started_at);

    let ended = h.wait(&run).await;
    assert_eq!(ended.status, RunStatus::Success, "{ended:?}");
    assert_eq!(
        ended.started_at, run.started_at,
        "not started a second time"
    );
    let after = h.store.writes();
    assert_eq!(
        after.get("mark_run_running"),
        before.get("mark_run_running"),
        "no commit of its own to mark it running: {after:?}"
    );
    assert_eq!(
        told_statuses(&h, &run).await,
        [RunStatus::Running, RunStatus::Success]
    );
}

#[tokio::test]
async fn a_run_that_finds_no_slot_waits_pending_and_runs_once_one_frees() {
    let h = common::harness_config(RuntimeConfig {
        max_concurrent_runs: 1,
        ..RuntimeConfig::default()
    })
    .await;
    let slow = json!([{"text": "first", "delay_ms": 400}]);
    let first_thread = h.thread(slow, &[], Limits::default()).await;
    let second_thread = h
        .thread(json!([{"text": "second"}]), &[], Limits::default())
        .await;
    let first = h.start(&first_thread, "go").await;
    assert_eq!(first.status, RunStatus::Running);
    let second = h.start(&second_thread, "go").await;
    assert_eq!(second.status, RunStatus::Pending, "{second:?}");
    assert_eq!(second.started_at, None);

    // While the first holds the only slot, the second stays pending.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let waiting = h.store.run(second.id).await.unwrap().unwrap();
    assert_eq!(waiting.status, RunStatus::Pending, "{waiting:?}");

    let first = h.wait(&first).await;
    let second = h.wait(&second).await;
    assert_eq!(first.status, RunStatus::Success);
    assert_eq!(second.status, RunStatus::Success, "{second:?}");
    assert_eq!(second.output.as_deref(), Some("second"));
    // The slot frees when the first run's loop is over: after its model's 400 ms.
    let started = second.started_at.expect("started once a slot freed");
    let after = started - first.started_at.unwrap();
    assert!(
        after >= chrono::Duration::milliseconds(400),
        "started {after} after the first run, before it freed its slot"
    );
    assert_eq!(
        told_statuses(&h, &second).await,
        [RunStatus::Pending, RunStatus::Running, RunStatus::Success]
    );
}
