//! Runs: one active run per thread, the status life cycle, usage, and run trees.

use ars_domain::{
    AgentId, Delivery, MessageRole, NewMessage, NewRun, Run, RunId, RunLineage, RunOutcome,
    RunStatus, ThreadId, Usage, UserId, time::now,
};
use ars_store::{FinishedRun, INTERRUPTED_ERROR, Store, StoreError};
use futures::future::join_all;

use crate::fixtures::{
    child_thread, finished, models_used, new_child_run, new_run, outcome, owner, root_thread,
};

/// The run that a `Busy` result names; panics on anything else.
fn busy_with(result: Result<Run, StoreError>) -> RunId {
    match result {
        Err(StoreError::Busy { active }) => active,
        other => panic!("expected Busy, got {other:?}"),
    }
}

fn usage(prompt_tokens: u64, completion_tokens: u64) -> Usage {
    Usage {
        prompt_tokens,
        completion_tokens,
    }
}

fn sorted(mut ids: Vec<RunId>) -> Vec<RunId> {
    ids.sort();
    ids
}

pub async fn check_create_run_and_busy(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let other = root_thread(store, &alice, "other").await;

    let first = store.create_run(&new_run(&thread, "hello")).await.unwrap();
    assert_eq!(first.status, RunStatus::Pending);
    assert_eq!(first.thread_id, thread.id);
    assert_eq!(
        (first.agent_id, first.user_id),
        (alice.agent.id, alice.user.id)
    );
    assert_eq!(first.input, "hello");
    assert_eq!(
        (first.output.as_deref(), first.error.as_deref()),
        (None, None)
    );
    assert_eq!(first.usage, Usage::default());
    assert_eq!(first.lineage, None);
    assert_eq!((first.started_at, first.finished_at), (None, None));
    assert!(first.created_at <= now());
    assert_eq!(store.run(first.id).await.unwrap(), Some(first.clone()));
    assert_eq!(
        store.active_run(&thread.id).await.unwrap(),
        Some(first.clone())
    );

    let second = store.create_run(&new_run(&thread, "again")).await;
    let message = match &second {
        Err(error) => error.to_string(),
        Ok(run) => panic!("a second active run {run:?}"),
    };
    assert!(message.contains(&first.id.to_string()), "{message}");
    assert_eq!(busy_with(second), first.id);
    // Running is active too.
    store.mark_run_running(first.id).await.unwrap();
    let third = store.create_run(&new_run(&thread, "again")).await;
    assert_eq!(busy_with(third), first.id);
    assert_eq!(store.thread_runs(&thread.id).await.unwrap().len(), 1);

    // Another thread is not blocked.
    let elsewhere = store.create_run(&new_run(&other, "hi")).await.unwrap();
    assert_eq!(store.active_run(&other.id).await.unwrap(), Some(elsewhere));

    let fresh = root_thread(store, &alice, "fresh").await;
    let invalid = [
        NewRun {
            thread_id: ThreadId::new(),
            ..new_run(&fresh, "x")
        },
        NewRun {
            agent_id: AgentId::new(),
            ..new_run(&fresh, "x")
        },
        NewRun {
            user_id: UserId::new(),
            ..new_run(&fresh, "x")
        },
        new_child_run(&fresh, RunId::new(), "call"),
    ];
    for new in invalid {
        let result = store.create_run(&new).await;
        assert!(
            matches!(result, Err(StoreError::Invalid(_))),
            "{new:?}: {result:?}"
        );
    }
    assert_eq!(store.active_run(&fresh.id).await.unwrap(), None);
    assert_eq!(store.run(RunId::new()).await.unwrap(), None);
    assert_eq!(store.active_run(&ThreadId::new()).await.unwrap(), None);
}

pub async fn check_new_run_after_finish(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let first = store.create_run(&new_run(&thread, "one")).await.unwrap();
    let first = finished(store, &first).await;
    assert_eq!(store.active_run(&thread.id).await.unwrap(), None);

    let second = store.create_run(&new_run(&thread, "two")).await.unwrap();
    assert_eq!(
        store.active_run(&thread.id).await.unwrap(),
        Some(second.clone())
    );
    let cancelled = outcome(RunStatus::Cancelled);
    let second = store
        .finish_run(second.id, &cancelled)
        .await
        .unwrap()
        .into_run();
    let third = store.create_run(&new_run(&thread, "three")).await.unwrap();
    assert_eq!(
        store.thread_runs(&thread.id).await.unwrap(),
        vec![first, second, third]
    );
}

pub async fn check_concurrent_create_run_has_one_winner(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "contested").await;
    let attempts: Vec<NewRun> = (0..12)
        .map(|i| new_run(&thread, &format!("r{i}")))
        .collect();
    let results = join_all(attempts.iter().map(|new| store.create_run(new))).await;

    let (won, lost): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    assert_eq!(won.len(), 1, "{won:?}");
    let winner = won.into_iter().next().unwrap().unwrap();
    for result in lost {
        assert_eq!(busy_with(result), winner.id);
    }
    assert_eq!(store.thread_runs(&thread.id).await.unwrap(), vec![winner]);
}

pub async fn check_mark_run_running(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = store.create_run(&new_run(&thread, "go")).await.unwrap();
    let started = store.mark_run_running(run.id).await.unwrap();
    assert_eq!(started.status, RunStatus::Running);
    let started_at = started.started_at.unwrap();
    assert!(started_at >= run.created_at);
    let expected = Run {
        status: RunStatus::Running,
        started_at: Some(started_at),
        ..run.clone()
    };
    assert_eq!(started, expected);
    assert_eq!(store.run(run.id).await.unwrap(), Some(started.clone()));

    // Only a pending run starts: a running or finished one comes back as it is.
    assert_eq!(store.mark_run_running(run.id).await.unwrap(), started);
    let done = finished(store, &started).await;
    assert_eq!(store.mark_run_running(run.id).await.unwrap(), done);
    let never_started = store.create_run(&new_run(&thread, "x")).await.unwrap();
    let never_started = finished(store, &never_started).await;
    assert_eq!(never_started.started_at, None);
    assert_eq!(
        store.mark_run_running(never_started.id).await.unwrap(),
        never_started
    );

    let result = store.mark_run_running(RunId::new()).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

pub async fn check_a_run_created_running_is_started_as_it_is_created_and_holds_its_thread(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let running = NewRun {
        running: true,
        ..new_run(&thread, "go")
    };
    let created = store.create_run_with_input(&running, None).await.unwrap();
    let run = created.run;
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.started_at, Some(run.created_at));
    assert_eq!(created.input.content, "go");
    assert_eq!(store.run(run.id).await.unwrap(), Some(run.clone()));
    // Active like any other: a second run is refused, running or not, and nothing is written.
    for second in [running.clone(), new_run(&thread, "again")] {
        let refused = store.create_run_with_input(&second, None).await;
        assert!(
            matches!(refused, Err(StoreError::Busy { active }) if active == run.id),
            "{refused:?}"
        );
    }
    assert_eq!(
        store.thread_runs(&thread.id).await.unwrap(),
        std::slice::from_ref(&run)
    );
    assert_eq!(store.messages(&thread.id).await.unwrap().len(), 1);
    // Marking it running changes nothing: it started once, when it was created.
    assert_eq!(store.mark_run_running(run.id).await.unwrap(), run);
    let done = finished(store, &run).await;
    assert_eq!(done.started_at, run.started_at);
    // The thread is free again; a plain new run is pending, not started.
    let next = store.create_run(&new_run(&thread, "next")).await.unwrap();
    assert_eq!((next.status, next.started_at), (RunStatus::Pending, None));
}

pub async fn check_run_usage(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = store.create_run(&new_run(&thread, "go")).await.unwrap();
    store.mark_run_running(run.id).await.unwrap();
    let stored_usage = async |id| store.run(id).await.unwrap().unwrap().usage;

    store
        .set_run_usage(run.id, usage(10, 5), None)
        .await
        .unwrap();
    assert_eq!(stored_usage(run.id).await, usage(10, 5));
    let big = usage(1 << 40, (1 << 40) + 1);
    store.set_run_usage(run.id, big, None).await.unwrap();
    assert_eq!(stored_usage(run.id).await, big);

    // Too large for the column: refused, nothing changes.
    let result = store.set_run_usage(run.id, usage(u64::MAX, 0), None).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(stored_usage(run.id).await, big);

    let outcome = RunOutcome::Success {
        output: String::new(),
        usage: usage(40, 20),
    };
    let done = store.finish_run(run.id, &outcome).await.unwrap().into_run();
    assert_eq!(done.usage, usage(40, 20));
    // A late live update does not overwrite the final usage.
    store
        .set_run_usage(run.id, usage(99, 99), None)
        .await
        .unwrap();
    assert_eq!(stored_usage(run.id).await, usage(40, 20));

    let result = store.set_run_usage(RunId::new(), usage(1, 1), None).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

pub async fn check_finish_run_first_writer_wins(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = store.create_run(&new_run(&thread, "go")).await.unwrap();
    let started = store.mark_run_running(run.id).await.unwrap();
    let success = RunOutcome::Success {
        output: "the answer".into(),
        usage: Usage {
            prompt_tokens: 7,
            completion_tokens: 3,
        },
    };
    let done = match store.finish_run(run.id, &success).await.unwrap() {
        FinishedRun::Ended(run) => run,
        other => panic!("the first finish must write the end: {other:?}"),
    };
    let finished_at = done.finished_at.unwrap();
    assert!(finished_at >= started.started_at.unwrap());
    let expected = Run {
        status: RunStatus::Success,
        output: Some("the answer".into()),
        usage: success.usage(),
        finished_at: Some(finished_at),
        ..started.clone()
    };
    assert_eq!(done, expected);

    let cancel = RunOutcome::Interrupted {
        reason: "cut off".into(),
        usage: Usage::default(),
    };
    assert_eq!(
        store.finish_run(run.id, &cancel).await.unwrap(),
        FinishedRun::AlreadyEnded(done.clone())
    );
    assert_eq!(store.run(run.id).await.unwrap(), Some(done));

    // A cancel racing a success: exactly one outcome is recorded, and both callers see it.
    let raced = store.create_run(&new_run(&thread, "race")).await.unwrap();
    store.mark_run_running(raced.id).await.unwrap();
    let (a, b) = tokio::join!(
        store.finish_run(raced.id, &success),
        store.finish_run(raced.id, &cancel)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let wrote = |f: &FinishedRun| matches!(f, FinishedRun::Ended(_));
    assert!(wrote(&a) != wrote(&b), "exactly one writer: {a:?} {b:?}");
    let (a, b) = (a.into_run(), b.into_run());
    assert_eq!(a, b);
    assert!(
        matches!(a.status, RunStatus::Success | RunStatus::Interrupted),
        "{a:?}"
    );
    let error = (a.status == RunStatus::Interrupted).then(|| "cut off".to_string());
    assert_eq!(a.error, error);
    assert_eq!(store.run(raced.id).await.unwrap(), Some(a));

    let result = store.finish_run(RunId::new(), &success).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

pub async fn check_interrupt_active_runs(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let threads = [
        root_thread(store, &alice, "pending").await,
        root_thread(store, &alice, "running").await,
        root_thread(store, &alice, "done").await,
    ];
    let pending = store.create_run(&new_run(&threads[0], "a")).await.unwrap();
    let running = store.create_run(&new_run(&threads[1], "b")).await.unwrap();
    let running = store.mark_run_running(running.id).await.unwrap();
    let done = store.create_run(&new_run(&threads[2], "c")).await.unwrap();
    let done = finished(store, &done).await;
    let message = NewMessage::text(
        threads[1].id.clone(),
        Some(running.id),
        MessageRole::User,
        "b".into(),
    );
    let message = store.append_message(&message).await.unwrap();

    let interrupted = store.interrupt_active_runs().await.unwrap();
    assert_eq!(sorted(interrupted), sorted(vec![pending.id, running.id]));
    for run in [&pending, &running] {
        let after = store.run(run.id).await.unwrap().unwrap();
        let finished_at = after.finished_at.unwrap();
        assert!(finished_at >= run.created_at);
        let expected = Run {
            status: RunStatus::Interrupted,
            error: Some(INTERRUPTED_ERROR.to_string()),
            finished_at: Some(finished_at),
            ..run.clone()
        };
        assert_eq!(after, expected);
    }
    assert_eq!(store.run(done.id).await.unwrap(), Some(done));
    // Committed messages survive, and the threads take new runs.
    assert_eq!(store.messages(&threads[1].id).await.unwrap(), vec![message]);
    assert_eq!(store.interrupt_active_runs().await.unwrap(), vec![]);
    for thread in &threads {
        assert_eq!(store.active_run(&thread.id).await.unwrap(), None);
        store.create_run(&new_run(thread, "again")).await.unwrap();
    }
}

pub async fn check_child_and_subagent_runs(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let root = root_thread(store, &alice, "root").await;
    let first = child_thread(store, &alice, &root).await;
    let second = child_thread(store, &alice, &root).await;
    let grandchild = child_thread(store, &alice, &first).await;

    let parent = store.create_run(&new_run(&root, "delegate")).await.unwrap();
    let run_a = store
        .create_run(&new_child_run(&first, parent.id, "call_a"))
        .await
        .unwrap();
    assert_eq!(
        run_a.lineage,
        Some(RunLineage {
            parent_run_id: parent.id,
            parent_tool_call_id: Some("call_a".into()),
            delivery: Some(Delivery::Wait),
        })
    );
    let mut background = new_child_run(&second, parent.id, "call_b");
    if let Some(lineage) = background.lineage.as_mut() {
        lineage.delivery = Some(Delivery::Background);
    }
    let run_b = store.create_run(&background).await.unwrap();
    assert_eq!(run_b.delivery(), Some(Delivery::Background));
    assert_eq!(parent.delivery(), None);
    let nested = store
        .create_run(&new_child_run(&grandchild, run_a.id, "call_n"))
        .await
        .unwrap();

    assert_eq!(
        store.child_runs(parent.id).await.unwrap(),
        vec![run_a.clone(), run_b.clone()]
    );
    assert_eq!(
        store.child_runs(run_a.id).await.unwrap(),
        vec![nested.clone()]
    );
    assert_eq!(store.child_runs(nested.id).await.unwrap(), vec![]);
    assert_eq!(
        store.subagent_runs(&root.id).await.unwrap(),
        vec![run_a.clone(), run_b.clone()]
    );
    assert_eq!(store.subagent_runs(&first.id).await.unwrap(), vec![nested]);
    assert_eq!(store.subagent_runs(&grandchild.id).await.unwrap(), vec![]);

    // Continuing a child thread adds a run there, after the earlier ones.
    let run_a = finished(store, &run_a).await;
    let again = store
        .create_run(&new_child_run(&first, parent.id, "call_c"))
        .await
        .unwrap();
    assert_eq!(
        store.subagent_runs(&root.id).await.unwrap(),
        vec![run_a.clone(), run_b.clone(), again.clone()]
    );
    assert_eq!(
        store.child_runs(parent.id).await.unwrap(),
        vec![run_a, run_b, again]
    );
}

pub async fn check_leases_renew_for_their_owner_and_only_expired_ones_are_reaped(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let leased = |owner: &str, expires_ms| {
        Some(ars_domain::Lease {
            owner: owner.into(),
            expires_ms,
        })
    };
    let mut runs = Vec::new();
    for (name, lease) in [
        ("live", leased("a", 2_000)),
        ("crashed", leased("b", 500)),
        ("other", leased("a", 2_000)),
        ("legacy", None),
    ] {
        let thread = root_thread(store, &alice, name).await;
        let run = store
            .create_run(&NewRun {
                lease,
                ..new_run(&thread, name)
            })
            .await
            .unwrap();
        runs.push(run);
    }
    let (live, crashed, other, legacy) = (&runs[0], &runs[1], &runs[2], &runs[3]);
    let done = finished(store, other).await;

    // The owner's heartbeat renews its active runs only; an ended one is not among them.
    assert_eq!(store.renew_leases("a", 5_000).await.unwrap(), vec![live.id]);
    assert_eq!(store.renew_leases("nobody", 5_000).await.unwrap(), vec![]);

    // At 1 s: the crashed instance's lease (500 ms) ran out, the live one (5 s) did not.
    let reaped = store.reap_expired_runs(1_000).await.unwrap();
    assert_eq!(sorted(reaped), sorted(vec![crashed.id, legacy.id]));
    let status = |id| async move { store.run(id).await.unwrap().unwrap().status };
    assert_eq!(status(live.id).await, RunStatus::Pending);
    assert_eq!(status(crashed.id).await, RunStatus::Interrupted);
    assert_eq!(status(done.id).await, RunStatus::Success);
    assert_eq!(
        store
            .run(crashed.id)
            .await
            .unwrap()
            .unwrap()
            .error
            .as_deref(),
        Some(INTERRUPTED_ERROR)
    );
    // Reaping again finds nothing new; past the live lease, it goes too.
    assert_eq!(store.reap_expired_runs(1_000).await.unwrap(), vec![]);
    assert_eq!(store.reap_expired_runs(6_000).await.unwrap(), vec![live.id]);
    assert_eq!(store.renew_leases("a", 9_000).await.unwrap(), vec![]);
}

pub async fn check_usage_rolls_runs_up_by_day_agent_user_and_model(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let bob = owner(store, "bob").await;
    let spend = async |owner: &crate::fixtures::Owner, model: Option<&str>, tokens: Usage| {
        let thread = root_thread(store, owner, "chat").await;
        let run = store.create_run(&new_run(&thread, "go")).await.unwrap();
        store.mark_run_running(run.id).await.unwrap();
        store.set_run_usage(run.id, tokens, model).await.unwrap();
        // A later call without a model keeps the one recorded.
        store.set_run_usage(run.id, tokens, None).await.unwrap();
        store
            .finish_run(
                run.id,
                &RunOutcome::Success {
                    output: "done".into(),
                    usage: tokens,
                },
            )
            .await
            .unwrap();
    };
    spend(&alice, Some("paid/m"), usage(10, 1)).await;
    spend(&alice, Some("paid/m"), usage(20, 2)).await;
    spend(&alice, Some("free/x"), usage(5, 5)).await;
    spend(&alice, None, usage(0, 0)).await;
    spend(&bob, Some("paid/m"), usage(100, 100)).await;

    let today = now().date_naive().format("%Y-%m-%d").to_string();
    let span = |user| ars_store::UsageFilter {
        user,
        from: now() - chrono::Duration::days(1),
        to: now() + chrono::Duration::days(1),
    };
    let mut rows = store.usage_rows(&span(Some(alice.user.id))).await.unwrap();
    rows.sort_by(|a, b| a.model.cmp(&b.model));
    let seen: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.day.as_str(),
                r.model.as_deref(),
                r.runs,
                r.prompt_tokens,
                r.completion_tokens,
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (today.as_str(), None, 1, 0, 0),
            (today.as_str(), Some("free/x"), 1, 5, 5),
            (today.as_str(), Some("paid/m"), 2, 30, 3),
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r.user_id == alice.user.id && r.agent_id == alice.agent.id)
    );
    let everyone = store.usage_rows(&span(None)).await.unwrap();
    assert_eq!(everyone.iter().map(|r| r.runs).sum::<u64>(), 5);
    // Outside the span: nothing.
    let past = ars_store::UsageFilter {
        user: None,
        from: now() - chrono::Duration::days(10),
        to: now() - chrono::Duration::days(9),
    };
    assert!(store.usage_rows(&past).await.unwrap().is_empty());
}

pub async fn check_a_new_thread_is_created_with_its_run_or_not_at_all(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let parent = root_thread(store, &alice, "chat").await;
    let child = parent.new_child(alice.subagent.id, &alice.subagent.slug, "child".into());
    let with_thread = |input: &str, agent: AgentId| NewRun {
        agent_id: agent,
        new_thread: Some(child.clone()),
        running: false,
        ..new_run(&child, input)
    };
    // A run that cannot be created (an unknown agent) leaves no thread behind.
    let refused = store
        .create_run_with_input(&with_thread("go", AgentId::new()), None)
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(store.thread(&child.id).await.unwrap().is_none());
    // Created together: the thread, the run and its input message — on a writer the failed
    // write above left outside any transaction (it failed partway, after its thread).
    let created = store
        .create_run_with_input(&with_thread("go", alice.subagent.id), None)
        .await
        .unwrap();
    let stored = store.thread(&child.id).await.unwrap().unwrap();
    assert_eq!(stored.parent_thread_id(), Some(&parent.id));
    // Stored as given, but for `updated_at`: the run's start touches it.
    assert_eq!(
        stored,
        ars_domain::Thread {
            updated_at: created.run.created_at,
            ..child.clone()
        }
    );
    assert_eq!(created.run.thread_id, child.id);
    let messages = store.messages(&child.id).await.unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].content, "go");
}

pub async fn check_a_message_carries_its_runs_spend_and_a_refused_one_writes_nothing(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = store.create_run(&new_run(&thread, "go")).await.unwrap();
    store.mark_run_running(run.id).await.unwrap();
    let answer = |content: &str, spent: Option<(Usage, Option<&str>)>| NewMessage {
        spent: spent.map(|(usage, model)| ars_domain::RunSpend {
            usage,
            model: model.map(str::to_owned),
        }),
        ..NewMessage::text(
            thread.id.clone(),
            Some(run.id),
            MessageRole::Assistant,
            content.into(),
        )
    };
    let stored_usage = async || store.run(run.id).await.unwrap().unwrap().usage;
    let updated_at = async || store.thread(&thread.id).await.unwrap().unwrap().updated_at;

    // The message and its run's spend, together; a later one without a model keeps the model.
    let first = store
        .append_message(&answer("one", Some((usage(10, 5), Some("paid/m")))))
        .await
        .unwrap();
    assert_eq!((first.seq, first.content.as_str()), (1, "one"));
    assert_eq!(stored_usage().await, usage(10, 5));
    assert_eq!(updated_at().await, first.created_at);
    let second = store
        .append_message(&answer("two", Some((usage(30, 9), None))))
        .await
        .unwrap();
    assert_eq!(second.seq, 2);
    assert_eq!(stored_usage().await, usage(30, 9));
    // A message without a spend leaves the run's as it is.
    store.append_message(&answer("three", None)).await.unwrap();
    assert_eq!(stored_usage().await, usage(30, 9));

    // A spend the column cannot hold: refused, and neither the message nor the spend is written.
    let messages = store.messages(&thread.id).await.unwrap();
    let result = store
        .append_message(&answer("huge", Some((usage(u64::MAX, 0), None))))
        .await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.messages(&thread.id).await.unwrap(), messages);
    assert_eq!(stored_usage().await, usage(30, 9));

    // Once the run has ended, a message with a spend is refused whole: the final usage, the
    // history and the thread's `updated_at` stay as the end left them.
    let done = store
        .finish_run(
            run.id,
            &RunOutcome::Success {
                output: "three".into(),
                usage: usage(40, 20),
            },
        )
        .await
        .unwrap()
        .into_run();
    let touched = updated_at().await;
    let result = store
        .append_message(&answer("late", Some((usage(99, 99), Some("other/x")))))
        .await;
    assert!(
        matches!(result, Err(StoreError::RunEnded { run }) if run == done.id),
        "{result:?}"
    );
    assert_eq!(stored_usage().await, usage(40, 20));
    assert_eq!(store.messages(&thread.id).await.unwrap(), messages);
    assert_eq!(updated_at().await, touched);

    // The model recorded is the first message's.
    assert_eq!(
        models_used(store, alice.user.id).await,
        [Some("paid/m".to_owned())]
    );

    // A message of no run carries no spend anywhere; a thread that is gone is not found.
    let note = NewMessage {
        spent: Some(ars_domain::RunSpend {
            usage: usage(1, 1),
            model: None,
        }),
        ..NewMessage::text(thread.id.clone(), None, MessageRole::System, "note".into())
    };
    assert_eq!(store.append_message(&note).await.unwrap().seq, 4);
    assert_eq!(stored_usage().await, usage(40, 20));
    let gone = NewMessage {
        thread_id: ThreadId::new(),
        ..answer("nowhere", Some((usage(1, 1), None)))
    };
    let result = store.append_message(&gone).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}
