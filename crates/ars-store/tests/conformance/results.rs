//! Background results: a background child's end is told to its parent thread once — by a
//! message (`NewMessage::tells`), a wake run (`NewRun::woken_by`) or the bare mark — and ends
//! nobody told are found, as are the wakes of a thread.

use ars_domain::{Delivery, MessageNotice, MessageRole, NewMessage, NewRun, RunLineage, RunStatus};
use ars_store::{Store, StoreError};

use crate::fixtures::{child_thread, new_run, outcome, owner, root_thread};

pub async fn check_a_background_childs_end_is_told_once_by_a_message_a_wake_or_the_mark(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let parent_thread = root_thread(store, &alice, "chat").await;
    let parent = store
        .create_run(&new_run(&parent_thread, "go"))
        .await
        .unwrap();
    store
        .finish_run(parent.id, &outcome(RunStatus::Success))
        .await
        .unwrap();
    let child = |call: &'static str| {
        let parent_thread = parent_thread.clone();
        let alice = &alice;
        async move {
            let thread = child_thread(store, alice, &parent_thread).await;
            let run = store
                .create_run(&NewRun {
                    lineage: Some(RunLineage {
                        parent_run_id: parent.id,
                        parent_tool_call_id: Some(call.into()),
                        delivery: Some(Delivery::Background),
                    }),
                    ..new_run(&thread, "job")
                })
                .await
                .unwrap();
            (thread, run)
        }
    };
    let (a_thread, a) = child("a").await;
    let (_, b) = child("b").await;
    let (_, c) = child("c").await;
    // Not told while running.
    assert!(!store.tell_parent(a.id).await.unwrap());
    let later = ars_domain::time::now() + chrono::TimeDelta::hours(1);
    assert!(store.untold_children(later).await.unwrap().is_empty());
    for run in [a.id, b.id, c.id] {
        store
            .finish_run(run, &outcome(RunStatus::Success))
            .await
            .unwrap();
    }
    let mut untold = store.untold_children(later).await.unwrap();
    untold.sort();
    let mut all = vec![a.id, b.id, c.id];
    all.sort();
    assert_eq!(untold, all);
    let earlier = ars_domain::time::now() - chrono::TimeDelta::hours(1);
    assert!(store.untold_children(earlier).await.unwrap().is_empty());

    // `a` by a note: once; a second note is refused and nothing is written.
    let notice = |run: &ars_domain::Run, thread: &ars_domain::Thread| MessageNotice {
        run_id: run.id,
        thread_id: thread.id.clone(),
        subagent_slug: Some("helper".into()),
        status: RunStatus::Success,
    };
    let note = NewMessage {
        notice: Some(notice(&a, &a_thread)),
        tells: Some(a.id),
        spent: None,
        ..NewMessage::text(
            parent_thread.id.clone(),
            None,
            MessageRole::System,
            "helper finished".into(),
        )
    };
    store.append_message(&note).await.unwrap();
    let twice = store.append_message(&note).await.unwrap_err();
    assert!(
        matches!(twice, StoreError::Conflict { field: "tells" }),
        "{twice}"
    );
    assert_eq!(store.messages(&parent_thread.id).await.unwrap().len(), 1);

    // `b` by a wake: its input is the notice, as a system message; a second wake is refused.
    let wake = NewRun {
        woken_by: Some(notice(&b, &a_thread)),
        new_thread: None,
        running: false,
        ..new_run(&parent_thread, "helper finished: 42")
    };
    let woken = store.create_run_with_input(&wake, None).await.unwrap();
    assert_eq!(woken.input.role, MessageRole::System);
    assert_eq!(woken.input.notice.as_ref().unwrap().run_id, b.id);
    assert_eq!(woken.input.run_id, Some(woken.run.id));
    store
        .finish_run(woken.run.id, &outcome(RunStatus::Success))
        .await
        .unwrap();
    let again = store.create_run_with_input(&wake, None).await.unwrap_err();
    assert!(
        matches!(again, StoreError::Conflict { field: "woken_by" }),
        "{again}"
    );
    assert_eq!(store.thread_runs(&parent_thread.id).await.unwrap().len(), 2);
    assert_eq!(
        store.wakes_since(&parent_thread.id, earlier).await.unwrap(),
        1
    );
    assert_eq!(
        store.wakes_since(&parent_thread.id, later).await.unwrap(),
        0
    );

    // `c` by the bare mark, once.
    assert!(store.tell_parent(c.id).await.unwrap());
    assert!(!store.tell_parent(c.id).await.unwrap());
    assert!(store.untold_children(later).await.unwrap().is_empty());
    // A run that is not a background child has no parent to tell.
    assert!(!store.tell_parent(parent.id).await.unwrap());
}
