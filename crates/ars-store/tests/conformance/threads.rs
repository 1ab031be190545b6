//! Threads and their messages: create, list, rename, cascade delete, and the seq checkpoint.

use ars_domain::{
    MessageNotice, MessageRole, NewMessage, RunId, RunStatus, Thread, ThreadId, ToolCallRecord,
    UserId, time::now,
};
use ars_store::test_support::RawSql;
use ars_store::{Deleted, Store, StoreError};
use chrono::{DateTime, Duration, SubsecRound, Utc};
use futures::future::join_all;

use crate::fixtures::{child_thread, finished, new_child_run, new_run, owner, root_thread};

/// A fixed instant `secs` seconds into 2025, well before any `now()` of a test.
pub fn at(secs: i64) -> DateTime<Utc> {
    DateTime::<Utc>::from_timestamp(1_735_689_600 + secs, 0).unwrap()
}

/// `thread` created at `created` and last updated at `updated`.
fn dated(thread: Thread, created: DateTime<Utc>, updated: DateTime<Utc>) -> Thread {
    Thread {
        created_at: created,
        updated_at: updated,
        ..thread
    }
}

fn ids(threads: &[Thread]) -> Vec<ThreadId> {
    threads.iter().map(|t| t.id.clone()).collect()
}

async fn assert_invalid(store: &dyn Store, thread: &Thread) {
    let result = store.create_thread(thread).await;
    assert!(
        matches!(result, Err(StoreError::Invalid(_))),
        "{thread:?}: {result:?}"
    );
}

pub async fn check_thread_create_and_lookup(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let root = Thread::new_root(alice.user.id, alice.agent.id, "Plans".into());
    let stored = store.create_thread(&root).await.unwrap();
    assert_eq!(stored, root);
    assert_eq!(store.thread(&root.id).await.unwrap(), Some(root.clone()));
    assert_eq!(store.thread(&ThreadId::new()).await.unwrap(), None);

    let child = root.new_child(alice.subagent.id, &alice.subagent.slug, "Research".into());
    assert_eq!(store.create_thread(&child).await.unwrap(), child);
    assert_eq!(store.thread(&child.id).await.unwrap(), Some(child.clone()));
    assert!(child.id.as_str().starts_with(&format!("{}_sub_", root.id)));

    let again = Thread {
        title: "Same id".into(),
        ..root.clone()
    };
    let result = store.create_thread(&again).await;
    assert!(
        matches!(result, Err(StoreError::Conflict { field: "id" })),
        "{result:?}"
    );

    let fresh = || Thread::new_root(alice.user.id, alice.agent.id, "x".into());
    assert_invalid(
        store,
        &Thread {
            user_id: UserId::new(),
            ..fresh()
        },
    )
    .await;
    assert_invalid(
        store,
        &Thread {
            agent_id: ars_domain::AgentId::new(),
            ..fresh()
        },
    )
    .await;
    let orphan = Thread::new_root(alice.user.id, alice.agent.id, "gone".into());
    assert_invalid(
        store,
        &orphan.new_child(alice.subagent.id, "helper", "x".into()),
    )
    .await;
    // A child thread names its subagent and a top-level thread does not: `ThreadLineage`
    // holds both or neither, so no other thread can be written.

    assert_eq!(store.list_threads(alice.user.id).await.unwrap(), vec![root]);
}

pub async fn check_list_threads_top_level_by_recency(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let bob = owner(store, "bob").await;
    let mut mine = Vec::new();
    for (i, title) in [(0, "old"), (1, "middle"), (2, "new")] {
        let thread = Thread::new_root(alice.user.id, alice.agent.id, title.into());
        let thread = dated(thread, at(i * 10), at(i * 10 + 5));
        mine.push(store.create_thread(&thread).await.unwrap());
    }
    let [old, middle, new] = [&mine[0], &mine[1], &mine[2]];
    let bobs = root_thread(store, &bob, "bob's").await;
    // Child threads are reached through their parent, never listed.
    child_thread(store, &alice, old).await;

    let listed = store.list_threads(alice.user.id).await.unwrap();
    assert_eq!(listed, vec![new.clone(), middle.clone(), old.clone()]);
    assert_eq!(store.list_threads(bob.user.id).await.unwrap(), vec![bobs]);
    assert_eq!(store.list_threads(UserId::new()).await.unwrap(), vec![]);

    // Activity moves a thread to the top: a new message, then a rename.
    let message = NewMessage::text(old.id.clone(), None, MessageRole::User, "hi".into());
    store.append_message(&message).await.unwrap();
    let listed = store.list_threads(alice.user.id).await.unwrap();
    assert_eq!(
        ids(&listed),
        ids(&[old.clone(), new.clone(), middle.clone()])
    );
    store.rename_thread(&middle.id, "renamed").await.unwrap();
    let listed = store.list_threads(alice.user.id).await.unwrap();
    assert_eq!(
        ids(&listed),
        ids(&[middle.clone(), old.clone(), new.clone()])
    );
}

pub async fn check_thread_pages_walk_the_list_by_keyset(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let bob = owner(store, "bob").await;
    // Seven threads; two share an `updated_at`, so the id breaks the tie across a page's end.
    let mut mine = Vec::new();
    for i in 0..7 {
        let thread = Thread::new_root(alice.user.id, alice.agent.id, format!("t{i}"));
        let updated = if i == 4 { at(30) } else { at(i * 10) };
        mine.push(
            store
                .create_thread(&dated(thread, at(0), updated))
                .await
                .unwrap(),
        );
    }
    root_thread(store, &bob, "bob's").await;
    child_thread(store, &alice, &mine[6]).await;
    let all = store.list_threads(alice.user.id).await.unwrap();
    assert_eq!(all.len(), 7);

    let mut walked = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .thread_page(alice.user.id, 3, cursor.as_ref())
            .await
            .unwrap();
        assert!(page.len() <= 3);
        let Some(last) = page.last() else { break };
        cursor = Some(ars_store::ThreadCursor {
            updated_at: last.updated_at,
            id: Some(last.id.clone()),
        });
        walked.extend(page);
    }
    assert_eq!(ids(&walked), ids(&all), "the pages, in order, are the list");
    assert_eq!(
        store.thread_page(UserId::new(), 3, None).await.unwrap(),
        vec![]
    );
    let first = store.thread_page(alice.user.id, 1, None).await.unwrap();
    assert_eq!(ids(&first), ids(&all[..1]));
    // Without an id: the threads updated before that time, the two that share it left out.
    let before = ars_store::ThreadCursor {
        updated_at: at(30),
        id: None,
    };
    let older = store
        .thread_page(alice.user.id, 10, Some(&before))
        .await
        .unwrap();
    assert_eq!(
        older.iter().map(|t| t.updated_at).collect::<Vec<_>>(),
        vec![at(20), at(10), at(0)]
    );
}

pub async fn check_message_pages_read_a_thread_backwards(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "long").await;
    // Five turns: ten messages, seq 1-10.
    let mut inputs = Vec::new();
    for i in 1..=5 {
        let started = store
            .create_run_with_input(&new_run(&thread, &format!("q{i}")), None)
            .await
            .unwrap();
        inputs.push(started.input.id);
        let answer = NewMessage::text(
            thread.id.clone(),
            Some(started.run.id),
            MessageRole::Assistant,
            format!("a{i}"),
        );
        store.append_message(&answer).await.unwrap();
        finished(store, &started.run).await;
    }
    let seqs =
        |messages: &[ars_domain::Message]| messages.iter().map(|m| m.seq).collect::<Vec<_>>();
    let page = |limit, before, replaced| store.message_page(&thread.id, limit, before, replaced);
    assert_eq!(
        seqs(&page(4, None, false).await.unwrap()),
        vec![7, 8, 9, 10]
    );
    assert_eq!(
        seqs(&page(4, Some(7), false).await.unwrap()),
        vec![3, 4, 5, 6]
    );
    assert_eq!(seqs(&page(4, Some(3), false).await.unwrap()), vec![1, 2]);
    assert_eq!(page(4, Some(1), false).await.unwrap(), vec![]);
    assert_eq!(
        store
            .message_page(&ThreadId::new(), 4, None, false)
            .await
            .unwrap(),
        vec![]
    );

    // The last turn asked again: seq 9 and 10 are replaced, the new input is seq 11. They
    // are left out unless asked for.
    store
        .create_run_with_input(&new_run(&thread, "q5 again"), Some(inputs[4]))
        .await
        .unwrap();
    assert_eq!(
        seqs(&page(4, None, false).await.unwrap()),
        vec![6, 7, 8, 11]
    );
    assert_eq!(
        seqs(&page(4, None, true).await.unwrap()),
        vec![8, 9, 10, 11]
    );
    assert_eq!(
        page(100, None, true).await.unwrap(),
        store.all_messages(&thread.id).await.unwrap()
    );
    assert_eq!(
        page(100, None, false).await.unwrap(),
        store.messages(&thread.id).await.unwrap()
    );
}

pub async fn check_threads_by_ids_answers_those_that_exist(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let a = root_thread(store, &alice, "a").await;
    let b = root_thread(store, &alice, "b").await;
    let child = child_thread(store, &alice, &a).await;
    // An unknown id is left out; an id asked twice is answered once.
    let asked = [
        b.id.clone(),
        ThreadId::new(),
        child.id.clone(),
        b.id.clone(),
    ];
    let mut found = store.threads(&asked).await.unwrap();
    found.sort_by(|x, y| x.id.cmp(&y.id));
    let mut expected = vec![b, child];
    expected.sort_by(|x, y| x.id.cmp(&y.id));
    assert_eq!(found, expected);
    assert_eq!(store.threads(&[]).await.unwrap(), vec![]);
    // More ids than one statement binds.
    let many: Vec<ThreadId> = (0..1_200)
        .map(|_| ThreadId::new())
        .chain([a.id.clone()])
        .collect();
    assert_eq!(ids(&store.threads(&many).await.unwrap()), vec![a.id]);
}

pub async fn check_answered_calls_name_a_runs_results(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "calls").await;
    let run = store.create_run(&new_run(&thread, "hi")).await.unwrap();
    let text = |role, content: &str| {
        NewMessage::text(thread.id.clone(), Some(run.id), role, content.to_string())
    };
    let call = |id: &str| ToolCallRecord {
        id: id.into(),
        name: "shell".into(),
        arguments: "{}".into(),
        interrupted: false,
    };
    let asked = NewMessage {
        tool_calls: vec![call("c1"), call("c2")],
        ..text(MessageRole::Assistant, "")
    };
    store.append_message(&asked).await.unwrap();
    let answer = NewMessage {
        tool_call_id: Some("c1".into()),
        tool_name: Some("shell".into()),
        ..text(MessageRole::Tool, "ok")
    };
    store.append_message(&answer).await.unwrap();
    assert_eq!(
        store.answered_calls(run.id).await.unwrap(),
        vec!["c1".to_string()]
    );
    assert_eq!(
        store.answered_calls(RunId::new()).await.unwrap(),
        Vec::<String>::new()
    );
}

pub async fn check_child_threads(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let root = root_thread(store, &alice, "root").await;
    let other = root_thread(store, &alice, "other").await;
    let slug = alice.subagent.slug.as_str();
    let mut children = Vec::new();
    // Created newest first: the list orders by creation time, not by insertion or id.
    for i in [2, 1] {
        let child = root.new_child(alice.subagent.id, slug, format!("child {i}"));
        let child = dated(child, at(i), at(100));
        children.push(store.create_thread(&child).await.unwrap());
    }
    children.reverse();
    let grandchild = child_thread(store, &alice, &children[0]).await;
    child_thread(store, &alice, &other).await;

    assert_eq!(store.child_threads(&root.id).await.unwrap(), children);
    assert_eq!(
        store.child_threads(&children[0].id).await.unwrap(),
        vec![grandchild.clone()]
    );
    assert_eq!(store.child_threads(&children[1].id).await.unwrap(), vec![]);
    assert_eq!(store.child_threads(&ThreadId::new()).await.unwrap(), vec![]);
    let stored = store.thread(&grandchild.id).await.unwrap().unwrap();
    assert_eq!(stored.parent_thread_id(), Some(&children[0].id));
    assert_eq!(stored.runtime_scope_id, root.runtime_scope_id);
    assert_eq!(stored.workdir_path, root.workdir_path);
}

pub async fn check_rename_thread(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = Thread::new_root(alice.user.id, alice.agent.id, "Old title".into());
    let thread = store
        .create_thread(&dated(thread, at(0), at(0)))
        .await
        .unwrap();
    let renamed = store.rename_thread(&thread.id, "New title").await.unwrap();
    assert_eq!(renamed.title, "New title");
    assert!(renamed.updated_at > thread.updated_at);
    assert_eq!(
        renamed,
        Thread {
            title: "New title".into(),
            updated_at: renamed.updated_at,
            ..thread.clone()
        }
    );
    assert_eq!(store.thread(&thread.id).await.unwrap(), Some(renamed));
    let result = store.rename_thread(&ThreadId::new(), "x").await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

pub async fn check_delete_thread_cascades(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let root = root_thread(store, &alice, "root").await;
    let child = child_thread(store, &alice, &root).await;
    let grandchild = child_thread(store, &alice, &child).await;
    let kept = root_thread(store, &alice, "kept").await;

    let mut runs = Vec::new();
    let mut parent: Option<RunId> = None;
    for thread in [&root, &child, &grandchild, &kept] {
        let new = match parent {
            Some(parent) => new_child_run(thread, parent, "call"),
            None => new_run(thread, "go"),
        };
        let run = store.create_run(&new).await.unwrap();
        let message = NewMessage::text(
            thread.id.clone(),
            Some(run.id),
            MessageRole::User,
            "m".into(),
        );
        store.append_message(&message).await.unwrap();
        // Each run down the tree is started by the one above; `kept` gets a top-level run.
        parent = (thread.id != grandchild.id).then_some(run.id);
        runs.push(run);
    }

    assert_eq!(
        store.delete_thread(&root.id).await.unwrap(),
        Deleted::Deleted
    );
    for (thread, run) in [&root, &child, &grandchild].into_iter().zip(&runs) {
        assert_eq!(store.thread(&thread.id).await.unwrap(), None);
        assert_eq!(store.messages(&thread.id).await.unwrap(), vec![]);
        assert_eq!(store.thread_runs(&thread.id).await.unwrap(), vec![]);
        assert_eq!(store.child_threads(&thread.id).await.unwrap(), vec![]);
        assert_eq!(store.run(run.id).await.unwrap(), None);
    }
    let still = store.thread(&kept.id).await.unwrap().unwrap();
    assert_eq!(
        (still.id, still.title),
        (kept.id.clone(), kept.title.clone())
    );
    assert_eq!(store.messages(&kept.id).await.unwrap().len(), 1);
    assert_eq!(store.run(runs[3].id).await.unwrap(), Some(runs[3].clone()));
    assert_eq!(
        store.delete_thread(&root.id).await.unwrap(),
        Deleted::NotFound
    );
    assert_eq!(
        ids(&store.list_threads(alice.user.id).await.unwrap()),
        vec![kept.id]
    );
}

/// The stored `updated_at` of `thread` (appends move it).
async fn store_updated(store: &dyn Store, thread: &Thread) -> DateTime<Utc> {
    store.thread(&thread.id).await.unwrap().unwrap().updated_at
}

pub async fn check_deleting_an_agent_or_user_deletes_threads<S: Store + RawSql>(store: &S) {
    let alice = owner(store, "alice").await;
    let root = root_thread(store, &alice, "root").await;
    let child = child_thread(store, &alice, &root).await;
    let root_run = store.create_run(&new_run(&root, "go")).await.unwrap();
    let child_run = store
        .create_run(&new_child_run(&child, root_run.id, "call"))
        .await
        .unwrap();

    // The subagent's threads (and their runs) go with it; the parent thread stays.
    assert_eq!(
        store.delete_agent(alice.subagent.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(store.thread(&child.id).await.unwrap(), None);
    assert_eq!(store.run(child_run.id).await.unwrap(), None);
    assert_eq!(store.thread(&root.id).await.unwrap(), Some(root.clone()));
    assert_eq!(store.child_runs(root_run.id).await.unwrap(), vec![]);

    assert_eq!(
        store.delete_agent(alice.agent.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(store.thread(&root.id).await.unwrap(), None);
    assert_eq!(store.run(root_run.id).await.unwrap(), None);

    let bob = owner(store, "bob").await;
    let bobs = root_thread(store, &bob, "bob's").await;
    let bobs_run = store.create_run(&new_run(&bobs, "go")).await.unwrap();
    let sql = format!("DELETE FROM users WHERE id = '{}'", bob.user.id);
    assert_eq!(store.execute_raw(&sql).await.unwrap(), 1);
    assert_eq!(store.thread(&bobs.id).await.unwrap(), None);
    assert_eq!(store.run(bobs_run.id).await.unwrap(), None);
}

pub async fn check_messages_seq_and_round_trip(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let other = root_thread(store, &alice, "other").await;
    let run = store.create_run(&new_run(&thread, "hi")).await.unwrap();
    let text = |run, role, content: &str| {
        NewMessage::text(thread.id.clone(), run, role, content.to_string())
    };
    let calls = vec![
        ToolCallRecord {
            id: "call_1".into(),
            name: "shell".into(),
            arguments: r#"{"cmd": "ls -la"}"#.into(),
            interrupted: false,
        },
        ToolCallRecord {
            id: "call_2".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a \"b\".txt"}"#.into(),
            interrupted: false,
        },
    ];
    let written = [
        text(Some(run.id), MessageRole::User, "hi"),
        NewMessage {
            tool_calls: calls,
            ..text(Some(run.id), MessageRole::Assistant, "")
        },
        NewMessage {
            tool_call_id: Some("call_1".into()),
            tool_name: Some("shell".into()),
            is_error: true,
            ..text(
                Some(run.id),
                MessageRole::Tool,
                "exit status 1: no such file",
            )
        },
        text(None, MessageRole::System, "note: ünïcode ✓ and 'quotes'"),
        NewMessage {
            notice: Some(MessageNotice {
                run_id: run.id,
                thread_id: other.id.clone(),
                subagent_slug: Some("researcher".into()),
                status: RunStatus::Error,
            }),
            ..text(None, MessageRole::System, "a background subagent failed")
        },
    ];
    let mut appended = Vec::new();
    for message in &written {
        appended.push(store.append_message(message).await.unwrap());
    }
    for (i, (new, stored)) in written.iter().zip(&appended).enumerate() {
        assert_eq!(stored.seq, i as i64 + 1);
        assert_eq!(stored.thread_id, new.thread_id);
        assert_eq!(stored.run_id, new.run_id);
        assert_eq!(stored.role, new.role);
        assert_eq!(stored.content, new.content);
        assert_eq!(stored.tool_calls, new.tool_calls);
        assert_eq!(stored.tool_call_id, new.tool_call_id);
        assert_eq!(stored.tool_name, new.tool_name);
        assert_eq!(stored.is_error, new.is_error);
        assert_eq!(stored.notice, new.notice);
        assert!(stored.created_at >= run.created_at);
    }
    assert_eq!(store.messages(&thread.id).await.unwrap(), appended);
    let last = appended.last().unwrap();
    assert_eq!(store_updated(store, &thread).await, last.created_at);

    // Seqs are per thread.
    let first = NewMessage::text(other.id.clone(), None, MessageRole::User, "x".into());
    assert_eq!(store.append_message(&first).await.unwrap().seq, 1);

    let gone = NewMessage::text(ThreadId::new(), None, MessageRole::User, "x".into());
    let result = store.append_message(&gone).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
    let unknown_run = text(Some(RunId::new()), MessageRole::User, "x");
    let result = store.append_message(&unknown_run).await;
    assert!(
        matches!(result, Err(StoreError::RunEnded { .. })),
        "{result:?}"
    );
    // The fence: once the run has ended, nothing more is written for it; notices still are.
    let ended = store
        .finish_run(
            run.id,
            &crate::fixtures::outcome(ars_domain::RunStatus::Cancelled),
        )
        .await
        .unwrap()
        .into_run();
    let late = text(Some(ended.id), MessageRole::Assistant, "too late");
    let result = store.append_message(&late).await;
    assert!(
        matches!(result, Err(StoreError::RunEnded { run }) if run == ended.id),
        "{result:?}"
    );
    assert_eq!(
        store.messages(&thread.id).await.unwrap().len(),
        written.len()
    );
    assert_eq!(store_updated(store, &thread).await, last.created_at);
    assert_eq!(store.messages(&ThreadId::new()).await.unwrap(), vec![]);

    // A refused message takes no seq: the next one follows the last written, without a gap.
    let after = text(None, MessageRole::User, "after the refusals");
    let after = store.append_message(&after).await.unwrap();
    assert_eq!(after.seq, last.seq + 1);
}

pub async fn check_concurrent_appends(store: &dyn Store) {
    const APPENDS: usize = 40;
    let alice = owner(store, "alice").await;
    let busy = root_thread(store, &alice, "busy").await;
    let quiet = root_thread(store, &alice, "quiet").await;
    let messages: Vec<NewMessage> = (0..APPENDS)
        .map(|i| {
            // Every fourth append goes to the other thread, interleaved with the rest.
            let thread = if i % 4 == 3 { &quiet } else { &busy };
            NewMessage::text(thread.id.clone(), None, MessageRole::User, format!("m{i}"))
        })
        .collect();
    let results = join_all(messages.iter().map(|m| store.append_message(m))).await;
    let appended: Vec<_> = results.into_iter().map(Result::unwrap).collect();

    for (thread, expected) in [(&busy, APPENDS - APPENDS / 4), (&quiet, APPENDS / 4)] {
        let stored = store.messages(&thread.id).await.unwrap();
        let seqs: Vec<i64> = stored.iter().map(|m| m.seq).collect();
        assert_eq!(
            seqs,
            (1..=expected as i64).collect::<Vec<_>>(),
            "{}",
            thread.title
        );
        for message in &stored {
            assert!(appended.contains(message), "{message:?}");
        }
    }
}

pub async fn check_conversation_timestamps_round_trip(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    // A caller-supplied instant with nanoseconds comes back truncated to microseconds.
    let nanos = DateTime::<Utc>::from_timestamp(1_750_000_000, 123_456_789).unwrap();
    let thread = Thread::new_root(alice.user.id, alice.agent.id, "t".into());
    let stored = store
        .create_thread(&dated(thread, nanos, nanos + Duration::nanoseconds(200)))
        .await
        .unwrap();
    assert_eq!(stored.created_at, nanos.trunc_subsecs(6));
    assert_eq!(stored.updated_at, nanos.trunc_subsecs(6));
    assert_eq!(
        store.thread(&stored.id).await.unwrap(),
        Some(stored.clone())
    );

    let run = store.create_run(&new_run(&stored, "go")).await.unwrap();
    let started = store.mark_run_running(run.id).await.unwrap();
    let message = NewMessage::text(
        stored.id.clone(),
        Some(run.id),
        MessageRole::User,
        "m".into(),
    );
    let message = store.append_message(&message).await.unwrap();
    let finished = crate::fixtures::finished(store, &started).await;
    assert_eq!(
        store.messages(&stored.id).await.unwrap(),
        vec![message.clone()]
    );
    assert_eq!(store.run(run.id).await.unwrap(), Some(finished.clone()));

    let (started_at, finished_at) = (finished.started_at.unwrap(), finished.finished_at.unwrap());
    assert!(run.created_at <= started_at && started_at <= message.created_at);
    assert!(message.created_at <= finished_at && finished_at <= now());
    for instant in [run.created_at, started_at, finished_at, message.created_at] {
        assert_eq!(instant, instant.trunc_subsecs(6));
    }
}

pub async fn check_message_search_is_literal_and_only_the_users_top_level_history(
    store: &dyn ars_store::Store,
) {
    use ars_domain::{MessageRole, NewMessage};
    let alice = crate::fixtures::owner(store, "alice").await;
    let bob = crate::fixtures::owner(store, "bob").await;
    let thread = crate::fixtures::root_thread(store, &alice, "chat").await;
    let child = crate::fixtures::child_thread(store, &alice, &thread).await;
    let bobs = crate::fixtures::root_thread(store, &bob, "chat").await;
    let say = |thread: &ars_domain::Thread, role, text: &str| {
        NewMessage::text(thread.id.clone(), None, role, text.to_string())
    };
    for message in [
        say(&thread, MessageRole::User, "翻译产品手册 100% Done"),
        say(&thread, MessageRole::Assistant, "好的，产品手册 done_ok"),
        say(&thread, MessageRole::Tool, "产品手册 from a tool"),
        say(&child, MessageRole::Assistant, "产品手册 in a subagent"),
        say(&bobs, MessageRole::User, "产品手册 of bob"),
    ] {
        store.append_message(&message).await.unwrap();
    }
    let found = store
        .search_messages(alice.user.id, "产品手册", 10)
        .await
        .unwrap();
    assert_eq!(
        found.len(),
        2,
        "user and assistant messages of her top-level threads"
    );
    assert_eq!(found[0].role, MessageRole::Assistant, "newest first");
    assert_eq!(
        store
            .search_messages(alice.user.id, "100%", 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .search_messages(alice.user.id, "1_0", 10)
            .await
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        store
            .search_messages(alice.user.id, "DONE", 10)
            .await
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        store
            .search_messages(alice.user.id, "\\", 10)
            .await
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        store
            .search_messages(alice.user.id, "产品", 1)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        store
            .search_messages(bob.user.id, "产品手册", 10)
            .await
            .unwrap()
            .len(),
        1
    );
}
