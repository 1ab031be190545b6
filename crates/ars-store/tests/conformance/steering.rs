//! Messages sent into a run: a steer message round-trips its mark, is written only while its
//! run is active (the fence), and a loop reads what arrived after the last message it holds.

use ars_domain::{MessageRole, NewMessage, RunOutcome, RunSpend, RunStatus, Usage};
use ars_store::{AnsweredRun, Store, StoreError};

use crate::fixtures::{models_used, new_run, outcome, owner, root_thread};

pub async fn check_steer_messages_keep_their_mark_and_read_after_a_seq(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = store.create_run(&new_run(&thread, "go")).await.unwrap();
    let turn = store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            Some(run.id),
            MessageRole::Assistant,
            "working".into(),
        ))
        .await
        .unwrap();
    let steer = NewMessage {
        steer: true,
        ..NewMessage::text(
            thread.id.clone(),
            Some(run.id),
            MessageRole::User,
            "也看看 notes.md".into(),
        )
    };
    let sent = store.append_message(&steer).await.unwrap();
    assert!(sent.steer);
    assert!(!turn.steer);
    assert_eq!(sent.seq, turn.seq + 1);

    let after = store.messages_after(&thread.id, turn.seq).await.unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, sent.id);
    assert!(after[0].steer, "the mark reads back");
    assert!(
        store
            .messages_after(&thread.id, sent.seq)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.messages_after(&thread.id, 0).await.unwrap().len(), 2);
    let unknown = ars_domain::ThreadId::new();
    assert!(store.messages_after(&unknown, 0).await.unwrap().is_empty());

    // Once the run has ended, the fence keeps a steer message out.
    store
        .finish_run(run.id, &outcome(ars_domain::RunStatus::Success))
        .await
        .unwrap();
    let refused = store.append_message(&steer).await.unwrap_err();
    assert!(matches!(refused, StoreError::RunEnded { .. }), "{refused}");
    assert_eq!(store.messages(&thread.id).await.unwrap().len(), 2);
}

/// A run's final answer and its end are one commit, written only while nothing was sent into
/// the run after the seq its loop holds: so a message sent in before the end is always the
/// run's to answer (`SentIn`, nothing written), never left for the thread's next run.
pub async fn check_a_runs_answer_and_end_are_one_write_refused_while_a_message_was_sent_in(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let run = store
        .create_run_with_input(&new_run(&thread, "go"), None)
        .await
        .unwrap()
        .run;
    store.mark_run_running(run.id).await.unwrap();
    let text = |role, content: &str| {
        NewMessage::text(thread.id.clone(), Some(run.id), role, content.into())
    };
    // The loop holds everything up to its turn.
    let turn = store
        .append_message(&text(MessageRole::Assistant, "working"))
        .await
        .unwrap();
    // A note for the thread's next run is not sent into this one.
    store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            None,
            MessageRole::System,
            "note".into(),
        ))
        .await
        .unwrap();
    let answer = NewMessage {
        spent: Some(RunSpend {
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
            },
            model: Some("paid/m".into()),
        }),
        ..text(MessageRole::Assistant, "done")
    };
    let success = RunOutcome::Success {
        output: "done".into(),
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
        },
    };

    // A steer message after the loop's seq: nothing written, the run goes on.
    let sent = store
        .append_message(&NewMessage {
            steer: true,
            ..text(MessageRole::User, "还有一件事")
        })
        .await
        .unwrap();
    let messages = store.messages(&thread.id).await.unwrap();
    let touched = store.thread(&thread.id).await.unwrap().unwrap().updated_at;
    let refused = store
        .finish_run_with_answer(run.id, &success, &answer, turn.seq)
        .await
        .unwrap();
    assert_eq!(refused, AnsweredRun::SentIn);
    assert_eq!(store.messages(&thread.id).await.unwrap(), messages);
    let still = store.run(run.id).await.unwrap().unwrap();
    assert_eq!(still.status, RunStatus::Running);
    assert_eq!(still.usage, Usage::default());
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().updated_at,
        touched
    );

    // Once the loop holds the steer message (and the note), both are written, in one commit.
    let AnsweredRun::Ended {
        run: ended,
        answer: stored,
    } = store
        .finish_run_with_answer(run.id, &success, &answer, sent.seq)
        .await
        .unwrap()
    else {
        panic!("the run's end was not written");
    };
    assert_eq!(ended.status, RunStatus::Success);
    assert_eq!(ended.output.as_deref(), Some("done"));
    assert_eq!(ended.usage.total(), 15);
    assert_eq!(ended.finished_at, Some(stored.created_at));
    assert_eq!(
        (stored.seq, stored.content.as_str()),
        (sent.seq + 1, "done")
    );
    assert_eq!(stored.run_id, Some(run.id));
    assert_eq!(store.run(run.id).await.unwrap().unwrap(), ended);
    let after = store.messages(&thread.id).await.unwrap();
    assert_eq!(after.last(), Some(&*stored));
    assert_eq!(after.len(), messages.len() + 1);
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().updated_at,
        stored.created_at
    );
    // The model the answer names is recorded on the run with the end.
    assert_eq!(
        models_used(store, alice.user.id).await,
        [Some("paid/m".to_owned())]
    );

    // The first writer of the end wins: a second answer, or one after a cancel, writes nothing.
    let again = store
        .finish_run_with_answer(run.id, &success, &answer, stored.seq)
        .await
        .unwrap();
    assert_eq!(again, AnsweredRun::AlreadyEnded(ended));
    assert_eq!(store.messages(&thread.id).await.unwrap(), after);
    let other = root_thread(store, &alice, "other").await;
    let cancelled = store.create_run(&new_run(&other, "go")).await.unwrap();
    let cancelled = store
        .finish_run(cancelled.id, &outcome(RunStatus::Cancelled))
        .await
        .unwrap()
        .into_run();
    let late = NewMessage::text(
        other.id.clone(),
        Some(cancelled.id),
        MessageRole::Assistant,
        "late".into(),
    );
    let result = store
        .finish_run_with_answer(cancelled.id, &success, &late, 0)
        .await
        .unwrap();
    assert_eq!(result, AnsweredRun::AlreadyEnded(cancelled.clone()));
    assert!(store.messages(&other.id).await.unwrap().is_empty());

    // A run that does not exist is not found; an answer of another run is refused.
    let nobody = ars_domain::RunId::new();
    let lost = NewMessage {
        run_id: Some(nobody),
        ..answer.clone()
    };
    let result = store
        .finish_run_with_answer(nobody, &success, &lost, 0)
        .await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
    let result = store
        .finish_run_with_answer(cancelled.id, &success, &answer, 0)
        .await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    // An answer of the run on another thread: refused, and neither thread nor run is touched.
    let third = root_thread(store, &alice, "third").await;
    let active = store.create_run(&new_run(&third, "go")).await.unwrap();
    let elsewhere = NewMessage::text(
        other.id.clone(),
        Some(active.id),
        MessageRole::Assistant,
        "elsewhere".into(),
    );
    let other_touched = store.thread(&other.id).await.unwrap().unwrap().updated_at;
    let result = store
        .finish_run_with_answer(active.id, &success, &elsewhere, 0)
        .await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.run(active.id).await.unwrap().unwrap(), active);
    assert!(store.messages(&other.id).await.unwrap().is_empty());
    assert_eq!(
        store.thread(&other.id).await.unwrap().unwrap().updated_at,
        other_touched
    );
}
