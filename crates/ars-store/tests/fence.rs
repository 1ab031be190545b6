//! The message fence against a run's end written at the same moment by another instance
//! (PostgreSQL, several writers): a message whose run ends while it is being appended is
//! refused, never committed after the end. Runs when `ARS_TEST_DATABASE_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "conformance/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

use std::time::Duration;

use ars_domain::{MessageRole, NewMessage};
use ars_store::StoreError;
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn a_message_appended_while_its_run_ends_elsewhere_is_refused() {
    let Some(url) = ars_store::test_support::pg_url() else {
        return;
    };
    let schema = format!("ars_fence_{}", uuid::Uuid::new_v4().simple());
    let mut other = PgConnection::connect(&url).await.unwrap();
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
        let store = std::sync::Arc::clone(&store);
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
