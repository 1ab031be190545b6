//! PostgreSQL's commonest writes — a message's append, a run created with its input, a run's
//! end with its final answer — are one statement each: a call of the function that runs the
//! write's statements (migration 0022), where each was a transaction of five or six round trips
//! (`BEGIN`, three or four statements, `COMMIT`). Counted from sqlx's `sqlx::query` events; a
//! binary of its own, since the counter is this process's one subscriber. Runs when
//! `ARS_TEST_DATABASE_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "conformance/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

#[path = "../../ars-runtime/benches/support/queries.rs"]
mod queries;

use std::collections::BTreeMap;

use ars_domain::{MessageRole, NewMessage, RunOutcome, RunSpend, RunStatus, Usage};
use ars_store::test_support::{pg_fresh, pg_url};
use ars_store::{AnsweredRun, Store, StoreError};
use fixtures::{new_run, owner, root_thread};
use queries::Queries;

/// What a run's message spent: `tokens` in, half as many out.
fn spent(tokens: u64) -> RunSpend {
    RunSpend {
        usage: Usage {
            prompt_tokens: tokens,
            completion_tokens: tokens / 2,
        },
        model: Some("paid/m".into()),
    }
}

/// The queries counted since the last look, forgotten.
fn taken(queries: &Queries) -> BTreeMap<String, u64> {
    let seen = queries.snapshot();
    queries.clear();
    seen
}

/// `seen` is one statement, a call of `function`.
#[track_caller]
fn one_call(seen: &BTreeMap<String, u64>, function: &str) {
    let calls: Vec<_> = seen.iter().collect();
    assert!(
        matches!(calls.as_slice(), [(text, 1)] if text.starts_with(&format!("SELECT * FROM {function}("))),
        "not one call of {function}: {seen:#?}"
    );
}

#[tokio::test]
async fn each_common_write_is_one_statement_on_postgresql_and_a_refused_one_writes_nothing() {
    let Some(url) = pg_url() else { return };
    let queries = Queries::install();
    let pg = pg_fresh(&url).await;
    let store: &dyn Store = &pg;
    let owner = owner(store, "ada").await;
    let thread = root_thread(store, &owner, "一次往返").await;

    taken(&queries);
    let created = store
        .create_run_with_input(&new_run(&thread, "你好"), None)
        .await
        .unwrap();
    one_call(&taken(&queries), "ars_create_run_with_input");
    assert_eq!(created.run.status, RunStatus::Pending);
    assert_eq!(created.input.content, "你好");
    assert_eq!(created.input.run_id, Some(created.run.id));
    let run = created.run;

    // The run's assistant message `text`, which spent `tokens`.
    let said = |text: &str, tokens| NewMessage {
        spent: Some(spent(tokens)),
        ..NewMessage::text(
            thread.id.clone(),
            Some(run.id),
            MessageRole::Assistant,
            text.into(),
        )
    };
    let prompt_tokens = async |run| store.run(run).await.unwrap().unwrap().usage.prompt_tokens;
    let call = store.append_message(&said("看一下", 10)).await.unwrap();
    one_call(&taken(&queries), "ars_append_message");
    assert_eq!(call.seq, created.input.seq + 1);
    assert_eq!(prompt_tokens(run.id).await, 10);

    // A second run on the busy thread is refused, names the run that holds it, and writes
    // nothing: the thread's next message still takes the next seq.
    let busy = store
        .create_run_with_input(&new_run(&thread, "再来"), None)
        .await;
    assert!(
        matches!(busy, Err(StoreError::Busy { active }) if active == run.id),
        "{busy:?}"
    );
    taken(&queries);

    let answer = said("完成", 20);
    let success = RunOutcome::Success {
        output: "完成".into(),
        usage: spent(20).usage,
    };
    let ended = store
        .finish_run_with_answer(run.id, &success, &answer, call.seq)
        .await
        .unwrap();
    one_call(&taken(&queries), "ars_finish_run_with_answer");
    let AnsweredRun::Ended { run: ended, answer } = ended else {
        panic!("not ended: {ended:?}");
    };
    assert_eq!(ended.status, RunStatus::Success);
    assert_eq!(ended.output.as_deref(), Some("完成"));
    assert_eq!(answer.seq, call.seq + 1);

    // The run has ended: its message is refused, and nothing of it is written — neither the
    // message nor the thread's seq (the next message takes the next one) nor its usage.
    let late = store.append_message(&said("太晚了", 99)).await;
    assert!(
        matches!(late, Err(StoreError::RunEnded { run: ended }) if ended == run.id),
        "{late:?}"
    );
    assert_eq!(prompt_tokens(run.id).await, 20);
    let next = store
        .create_run_with_input(&new_run(&thread, "下一个"), None)
        .await
        .unwrap();
    assert_eq!(next.input.seq, answer.seq + 1);
    let messages = store.messages(&thread.id).await.unwrap();
    assert_eq!(
        messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (1..=next.input.seq).collect::<Vec<_>>()
    );
}
