//! A write whose caller stops waiting still completes, and never leaves the database locked for
//! the next writer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ars_domain::{MessageRole, NewMessage, Role, Thread};
use ars_store::{NewUser, Store};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_writes_complete_and_never_block_the_next_writer() {
    let (sqlite, _dir) = ars_store::test_support::sqlite_fresh().await;
    let store: Arc<dyn Store> = Arc::new(sqlite);
    let user = store
        .create_user(NewUser {
            username: "u".into(),
            password_hash: "x".into(),
            role: Role::User,
        })
        .await
        .unwrap();
    let agent = store
        .agent_by_slug("general-purpose")
        .await
        .unwrap()
        .unwrap();
    let thread = store
        .create_thread(&Thread::new_root(user.id, agent.id, "t".into()))
        .await
        .unwrap();
    let message =
        |i: usize| NewMessage::text(thread.id.clone(), None, MessageRole::User, format!("m{i}"));
    for i in 0..40 {
        // Give up on the write after a few microseconds: somewhere inside its transaction.
        let _ = tokio::time::timeout(
            Duration::from_micros(20 * (i as u64 % 7)),
            store.append_message(&message(i)),
        )
        .await;
        let started = Instant::now();
        store
            .rename_thread(&thread.id, &format!("t{i}"))
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "the next writer waited {:?}",
            started.elapsed()
        );
    }
    // Every abandoned append still committed, in order and without gaps.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let messages = store.messages(&thread.id).await.unwrap();
    assert_eq!(messages.len(), 40);
    assert!(
        messages
            .iter()
            .enumerate()
            .all(|(i, m)| m.seq == i as i64 + 1)
    );
}
