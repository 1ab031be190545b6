//! The message fence against a run's end written at the same moment by another instance
//! (PostgreSQL, several writers): a message whose run ends while it is being appended is
//! refused, never committed after the end; and a run's end with its answer, while a message is
//! being sent into the run, waits for it and is refused by it. Runs when
//! `ARS_TEST_DATABASE_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "conformance/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

use std::time::Duration;

use std::sync::Arc;

use ars_domain::{MessageRole, NewMessage, Run, RunOutcome, Thread, Usage};
use ars_store::{AnsweredRun, Store, StoreError};
use sqlx::{Connection, PgConnection};

/// A store in a schema of its own, a second connection in that schema (another instance), and
/// a running run on a thread; the schema's name, to drop it after.
async fn running_run(url: &str) -> (Arc<dyn Store>, PgConnection, String, Thread, Run) {
    let schema = format!("ars_fence_{}", uuid::Uuid::new_v4().simple());
    let mut other = PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut other)
        .await
        .unwrap();
    sqlx::raw_sql(&format!("SET search_path = {schema}"))
        .execute(&mut other)
        .await
        .unwrap();
    let separator = if url.contains('?') { '&' } else { '?' };
    let store = ars_store::connect(&format!(
        "{url}{separator}options=-c%20search_path%3D{schema}"
    ))
    .await
    .unwrap();
    let owner = fixtures::owner(&*store, "alice").await;
    let thread = fixtures::root_thread(&*store, &owner, "t").await;
    let run = store
        .create_run(&fixtures::new_run(&thread, "go"))
        .await
        .unwrap();
    store.mark_run_running(run.id).await.unwrap();
    (store, other, schema, thread, run)
}

#[tokio::test]
async fn a_message_appended_while_its_run_ends_elsewhere_is_refused() {
    let Some(url) = ars_store::test_support::pg_url() else {
        return;
    };
    let (store, mut other, schema, thread, run) = running_run(&url).await;

    // Another instance ends the run (a reap, say) in a transaction not yet committed.
    let mut ending = other.begin().await.unwrap();
    sqlx::query(
        "UPDATE runs SET status = 'interrupted', finished_at = now() WHERE id = $1 \
         AND status = 'running'",
    )
    .bind(run.id.to_string())
    .execute(&mut *ending)
    .await
    .unwrap();
    let message = NewMessage::text(
        thread.id.clone(),
        Some(run.id),
        MessageRole::Assistant,
        "late".into(),
    );
    let appending = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.append_message(&message).await })
    };
    // While the end is in flight the append waits for it, rather than reading the run as it
    // was before.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !appending.is_finished(),
        "the append passed the fence while the run was ending: {:?}",
        appending.await
    );
    ending.commit().await.unwrap();
    let result = appending.await.unwrap();
    assert!(
        matches!(result, Err(StoreError::RunEnded { run: r }) if r == run.id),
        "{result:?}"
    );
    assert!(store.messages(&thread.id).await.unwrap().is_empty());

    sqlx::raw_sql(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&mut other)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_runs_end_with_its_answer_waits_for_a_message_sent_into_the_run_and_is_refused_by_it() {
    let Some(url) = ars_store::test_support::pg_url() else {
        return;
    };
    let (store, mut other, schema, thread, run) = running_run(&url).await;
    let seen = store.messages(&thread.id).await.unwrap().len() as i64;

    // Another instance sends a message into the run (steering): the thread's next seq taken,
    // the message written, not yet committed.
    let mut sending = other.begin().await.unwrap();
    sqlx::query("UPDATE threads SET last_seq = last_seq + 1 WHERE id = $1")
        .bind(thread.id.as_str())
        .execute(&mut *sending)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO messages (id, thread_id, run_id, seq, role, content, steer, created_at) \
         SELECT $1, id, $2, last_seq, 'user', '也看看 notes.md', TRUE, now() FROM threads \
         WHERE id = $3",
    )
    .bind(ars_domain::MessageId::new().to_string())
    .bind(run.id.to_string())
    .bind(thread.id.as_str())
    .execute(&mut *sending)
    .await
    .unwrap();
    let answer = NewMessage::text(
        thread.id.clone(),
        Some(run.id),
        MessageRole::Assistant,
        "done".into(),
    );
    let ending = {
        let store = Arc::clone(&store);
        let run = run.id;
        tokio::spawn(async move {
            let success = RunOutcome::Success {
                output: "done".into(),
                usage: Usage::default(),
            };
            store
                .finish_run_with_answer(run, &success, &answer, seen)
                .await
        })
    };
    // The end waits for the thread, rather than reading the messages as they were before.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !ending.is_finished(),
        "the end passed while a message was being sent in: {:?}",
        ending.await
    );
    sending.commit().await.unwrap();
    let result = ending.await.unwrap();
    assert!(matches!(result, Ok(AnsweredRun::SentIn)), "{result:?}");
    // Nothing of the end was written: the run goes on, and the thread holds the sent message
    // alone after what the loop had seen.
    let stored = store.run(run.id).await.unwrap().unwrap();
    assert!(!stored.status.is_terminal(), "{stored:?}");
    let messages = store.messages(&thread.id).await.unwrap();
    assert_eq!(messages.len() as i64, seen + 1, "{messages:?}");
    assert!(messages.last().is_some_and(|m| m.steer));

    sqlx::raw_sql(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&mut other)
        .await
        .unwrap();
}
