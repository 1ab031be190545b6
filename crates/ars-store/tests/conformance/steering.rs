//! Messages sent into a run: a steer message round-trips its mark, is written only while its
//! run is active (the fence), and a loop reads what arrived after the last message it holds.

use ars_domain::{MessageRole, NewMessage};
use ars_store::{Store, StoreError};

use crate::fixtures::{new_run, outcome, owner, root_thread};

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
