//! What the protocol adapters keep beside a thread: metadata is its owner's to write, read
//! back as written (Chinese included) and gone with the thread; an empty thread is bound to
//! another agent, a thread with messages never is.

use ars_domain::{MessageRole, NewMessage};
use ars_store::{Store, Updated};
use serde_json::json;

use crate::fixtures::{owner, root_thread};

pub async fn check_thread_metadata_is_the_owners_and_goes_with_the_thread(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let bob = owner(store, "bob").await;
    let thread = root_thread(store, &alice, "chat").await;
    let other = root_thread(store, &alice, "other").await;
    assert_eq!(store.thread_metadata(&thread.id).await.unwrap(), None);
    let metadata = json!({"purpose": "研究", "n": 1});
    assert_eq!(
        store
            .set_thread_metadata(&thread.id, alice.user.id, &metadata)
            .await
            .unwrap(),
        Updated::Updated
    );
    // Bob cannot write Alice's thread's metadata; an unknown thread has none to write.
    assert_eq!(
        store
            .set_thread_metadata(&thread.id, bob.user.id, &json!({"mine": true}))
            .await
            .unwrap(),
        Updated::NotFound
    );
    let unknown = ars_domain::ThreadId::new();
    assert_eq!(
        store
            .set_thread_metadata(&unknown, alice.user.id, &metadata)
            .await
            .unwrap(),
        Updated::NotFound
    );
    assert_eq!(
        store.thread_metadata(&thread.id).await.unwrap(),
        Some(metadata.clone())
    );
    // Replaced whole.
    let replaced = json!({"purpose": "demo"});
    store
        .set_thread_metadata(&thread.id, alice.user.id, &replaced)
        .await
        .unwrap();
    let all = store.user_thread_metadata(alice.user.id).await.unwrap();
    assert_eq!(all, vec![(thread.id.clone(), replaced)]);
    assert!(
        store
            .user_thread_metadata(bob.user.id)
            .await
            .unwrap()
            .is_empty()
    );
    store.delete_thread(&thread.id).await.unwrap();
    assert_eq!(store.thread_metadata(&thread.id).await.unwrap(), None);
    assert!(
        store
            .user_thread_metadata(alice.user.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.thread(&other.id).await.unwrap().unwrap().agent_id,
        alice.agent.id
    );
}

pub async fn check_only_an_empty_thread_is_bound_to_another_agent(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    assert_eq!(
        store
            .bind_empty_thread(&thread.id, alice.subagent.id)
            .await
            .unwrap(),
        Updated::Updated
    );
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().agent_id,
        alice.subagent.id
    );
    store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            None,
            MessageRole::User,
            "hello".into(),
        ))
        .await
        .unwrap();
    assert_eq!(
        store
            .bind_empty_thread(&thread.id, alice.agent.id)
            .await
            .unwrap(),
        Updated::NotFound
    );
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().agent_id,
        alice.subagent.id
    );
    let unknown = ars_domain::ThreadId::new();
    assert_eq!(
        store
            .bind_empty_thread(&unknown, alice.agent.id)
            .await
            .unwrap(),
        Updated::NotFound
    );
}
