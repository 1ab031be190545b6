//! Waiting runs: a run stopped until people decide holds its thread, keeps no lease, is never
//! reaped or interrupted, resumes once — and only on exactly what it waited on — and ends like
//! any active run.

use ars_domain::{Lease, PendingItem, PendingRequest, Run, RunStatus, Usage, Waiting};
use ars_store::{FinishedRun, Store, StoreError};
use serde_json::json;

use crate::fixtures::{child_thread, new_child_run, new_run, outcome, owner, root_thread};

fn waiting_on(run: &Run, calls: &[&str], until_ms: Option<i64>) -> Waiting {
    Waiting {
        items: calls
            .iter()
            .map(|id| PendingItem {
                call_id: (*id).into(),
                request: PendingRequest::Approval {
                    tool: "execute".into(),
                    arguments: json!({"command": "rm -rf build"}),
                },
                run_id: run.id,
                thread_id: run.thread_id.clone(),
                agent_slug: "helper".into(),
            })
            .collect(),
        schemas: [(calls[0].to_string(), json!({"type": "object"}))].into(),
        until_ms,
        timeout_s: until_ms.map(|_| 60),
    }
}

fn lease(owner: &str) -> Lease {
    Lease {
        owner: owner.into(),
        expires_ms: 10_000,
    }
}

/// A run that is running on instance `a`.
async fn running(store: &dyn Store, thread: &ars_domain::Thread) -> Run {
    let run = store
        .create_run(&ars_domain::NewRun {
            lease: Some(lease("a")),
            ..new_run(thread, "go")
        })
        .await
        .unwrap();
    store.mark_run_running(run.id).await.unwrap()
}

pub async fn check_a_waiting_run_holds_its_thread_keeps_no_lease_and_is_never_reaped(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = running(store, &thread).await;
    let usage = Usage {
        prompt_tokens: 7,
        completion_tokens: 3,
    };
    let waiting = waiting_on(&run, &["c1", "c2"], None);
    let waited = store.wait_run(run.id, &waiting, usage).await.unwrap();
    assert_eq!(waited.status, RunStatus::Waiting);
    assert_eq!(waited.usage, usage);
    assert_eq!(waited.pending, waiting.items, "served with the run");
    assert_eq!(waited.finished_at, None);
    let stored = store.run_waiting(run.id).await.unwrap().unwrap();
    assert_eq!(stored.waiting, waiting, "schemas and deadline kept");

    // It holds its thread: a second run is refused naming it.
    match store.create_run(&new_run(&thread, "again")).await {
        Err(StoreError::Busy { active }) => assert_eq!(active, run.id),
        other => panic!("expected Busy, got {other:?}"),
    }
    assert_eq!(
        store.active_run(&thread.id).await.unwrap().unwrap().id,
        run.id
    );
    // No lease: nothing renews it, and neither the reaper nor a restart's recovery ends it.
    assert_eq!(store.renew_leases("a", 50_000).await.unwrap(), vec![]);
    assert_eq!(store.reap_expired_runs(i64::MAX).await.unwrap(), vec![]);
    assert_eq!(store.interrupt_active_runs().await.unwrap(), vec![]);
    assert_eq!(
        store.run(run.id).await.unwrap().unwrap().status,
        RunStatus::Waiting
    );
    // Only a running run starts waiting: a second wait changes nothing.
    let again = store
        .wait_run(run.id, &waiting_on(&run, &["zz"], None), usage)
        .await
        .unwrap();
    assert_eq!(again.pending, waiting.items);
    // Its end is written like any active run's, and what it waited on goes with it.
    let ended = store
        .finish_run(run.id, &outcome(RunStatus::Cancelled))
        .await
        .unwrap();
    assert!(matches!(ended, FinishedRun::Ended(ref r) if r.status == RunStatus::Cancelled));
    assert!(ended.run().pending.is_empty());
    assert_eq!(store.run_waiting(run.id).await.unwrap(), None);
}

pub async fn check_a_waiting_run_resumes_once_and_only_on_what_it_waited_on(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = running(store, &thread).await;
    store
        .wait_run(run.id, &waiting_on(&run, &["c1"], None), Usage::default())
        .await
        .unwrap();
    let stored = store.run_waiting(run.id).await.unwrap().unwrap();

    // Checked against something else: not taken.
    assert_eq!(
        store
            .resume_run(run.id, &lease("b"), "{\"items\":[]}")
            .await
            .unwrap(),
        None
    );
    // Two deciders at once: exactly one takes it, under its own lease.
    let (b, c) = (lease("b"), lease("c"));
    let (first, second) = futures::join!(
        store.resume_run(run.id, &b, &stored.stored),
        store.resume_run(run.id, &c, &stored.stored),
    );
    let taken: Vec<Run> = [first.unwrap(), second.unwrap()]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(taken.len(), 1, "one decider wins");
    assert_eq!(taken[0].status, RunStatus::Pending);
    assert!(taken[0].pending.is_empty());
    assert_eq!(store.run_waiting(run.id).await.unwrap(), None);
    // The winner's lease is the one renewed.
    let mut renewed = store.renew_leases("b", 20_000).await.unwrap();
    renewed.extend(store.renew_leases("c", 20_000).await.unwrap());
    assert_eq!(renewed, vec![run.id]);
    // It runs again, keeping when it first started, and may wait again, on something new.
    let again = store.mark_run_running(run.id).await.unwrap();
    assert_eq!(again.status, RunStatus::Running);
    assert_eq!(again.started_at, run.started_at);
    let next = waiting_on(&run, &["c2"], None);
    store
        .wait_run(run.id, &next, Usage::default())
        .await
        .unwrap();
    assert_eq!(
        store
            .resume_run(run.id, &lease("b"), &stored.stored)
            .await
            .unwrap(),
        None,
        "decisions checked against the first wait do not take the second"
    );
    // A decision never resurrects an ended run.
    let now = store.run_waiting(run.id).await.unwrap().unwrap();
    store
        .finish_run(run.id, &outcome(RunStatus::Cancelled))
        .await
        .unwrap();
    assert_eq!(
        store
            .resume_run(run.id, &lease("b"), &now.stored)
            .await
            .unwrap(),
        None
    );
}

pub async fn check_expired_waits_and_the_waiting_runs_under_a_thread(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let root = root_thread(store, &alice, "root").await;
    let parent = running(store, &root).await;
    let child = child_thread(store, &alice, &root).await;
    let child_run = store
        .create_run(&new_child_run(&child, parent.id, "call-1"))
        .await
        .unwrap();
    let child_run = store.mark_run_running(child_run.id).await.unwrap();
    let elsewhere = root_thread(store, &alice, "elsewhere").await;
    let other = running(store, &elsewhere).await;

    store
        .wait_run(
            child_run.id,
            &waiting_on(&child_run, &["c1"], Some(1_000)),
            Usage::default(),
        )
        .await
        .unwrap();
    store
        .wait_run(
            other.id,
            &waiting_on(&other, &["c9"], Some(5_000)),
            Usage::default(),
        )
        .await
        .unwrap();
    // The root's own run is running: under the root, only the child's waits.
    let under: Vec<_> = store
        .waiting_runs_under(&root.id)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(under, vec![child_run.id]);
    assert_eq!(
        store.waiting_runs_under(&child.id).await.unwrap()[0].id,
        child_run.id,
        "a child thread answers its own"
    );
    // Deadlines: none passed at 1 s, the child's at 2 s, both at 6 s.
    assert_eq!(store.expired_waits(1_000).await.unwrap(), vec![]);
    assert_eq!(
        store.expired_waits(2_000).await.unwrap(),
        vec![child_run.id]
    );
    let mut both = store.expired_waits(6_000).await.unwrap();
    both.sort();
    let mut expected = vec![child_run.id, other.id];
    expected.sort();
    assert_eq!(both, expected);
}
