//! A run created with its input, and replacing part of a thread's history (regenerate,
//! edit-and-resend): one transaction that either writes the run, the input and the replacement
//! whole, or nothing.

use ars_domain::{Message, MessageId, MessageRole, NewMessage, RunId, RunStatus, Thread};
use ars_store::{RunWithInput, Store, StoreError, Unreplaceable};
use futures::future::join_all;

use crate::fixtures::{finished, new_run, owner, root_thread};

/// One finished turn on `thread`: the user's `input` (through `create_run_with_input`) and an
/// assistant answer. Answers both messages.
async fn turn(store: &dyn Store, thread: &Thread, input: &str) -> (Message, Message) {
    let started = store
        .create_run_with_input(&new_run(thread, input), None)
        .await
        .unwrap();
    let answer = store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            Some(started.run.id),
            MessageRole::Assistant,
            format!("answer to {input}"),
        ))
        .await
        .unwrap();
    finished(store, &started.run).await;
    (started.input, answer)
}

fn contents(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.content.as_str()).collect()
}

/// The reason of a `NotReplaceable`; panics on anything else.
fn refusal(result: Result<RunWithInput, StoreError>) -> Unreplaceable {
    match result {
        Err(StoreError::NotReplaceable { reason, .. }) => reason,
        other => panic!("expected NotReplaceable, got {other:?}"),
    }
}

pub async fn check_create_run_with_input_writes_the_run_and_its_user_message(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let notice = store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            None,
            MessageRole::System,
            "notice".into(),
        ))
        .await
        .unwrap();

    let started = store
        .create_run_with_input(&new_run(&thread, "hello"), None)
        .await
        .unwrap();
    assert_eq!(started.run.status, RunStatus::Pending);
    assert_eq!(started.run.input, "hello");
    assert_eq!(started.replaced, 0);
    let input = &started.input;
    assert_eq!(
        (input.seq, input.role, input.content.as_str(), input.run_id),
        (2, MessageRole::User, "hello", Some(started.run.id))
    );
    assert_eq!(input.replaced_by_run_id, None);
    assert_eq!(
        store.messages(&thread.id).await.unwrap(),
        vec![notice, input.clone()]
    );
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().updated_at,
        input.created_at
    );
    assert_eq!(
        store.active_run(&thread.id).await.unwrap(),
        Some(started.run.clone())
    );

    // Busy: the second start writes neither a run nor a message.
    let second = store
        .create_run_with_input(&new_run(&thread, "again"), None)
        .await;
    assert!(
        matches!(second, Err(StoreError::Busy { active }) if active == started.run.id),
        "{second:?}"
    );
    assert_eq!(store.messages(&thread.id).await.unwrap().len(), 2);
    assert_eq!(store.thread_runs(&thread.id).await.unwrap().len(), 1);
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().updated_at,
        input.created_at
    );

    // An unknown thread is invalid, and nothing is written anywhere.
    let mut gone = new_run(&thread, "x");
    gone.thread_id = ars_domain::ThreadId::new();
    let result = store.create_run_with_input(&gone, None).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    // So is an unknown agent, refused by the database inside the transaction.
    let other = root_thread(store, &alice, "other").await;
    let mut no_agent = new_run(&other, "x");
    no_agent.agent_id = ars_domain::AgentId::new();
    let result = store.create_run_with_input(&no_agent, None).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.messages(&other.id).await.unwrap(), vec![]);
    assert_eq!(store.thread_runs(&other.id).await.unwrap(), vec![]);
}

pub async fn check_replace_from_takes_the_message_and_everything_after_it_out_of_the_history(
    store: &dyn Store,
) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let (first, first_answer) = turn(store, &thread, "one").await;
    let (second, second_answer) = turn(store, &thread, "two").await;
    let notice = store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            None,
            MessageRole::System,
            "a background notice".into(),
        ))
        .await
        .unwrap();

    // Regenerate the last answer: the last user message and what follows it leave.
    let regenerated = store
        .create_run_with_input(&new_run(&thread, "two"), Some(second.id))
        .await
        .unwrap();
    assert_eq!(
        regenerated.replaced, 3,
        "the input, its answer and the notice"
    );
    assert_eq!(
        regenerated.input.seq, 6,
        "seqs go on after the replaced ones"
    );
    let history = store.messages(&thread.id).await.unwrap();
    assert_eq!(contents(&history), ["one", "answer to one", "two"]);
    assert_eq!(history[..2], [first.clone(), first_answer.clone()]);
    assert_eq!(history[2], regenerated.input);

    let everything = store.all_messages(&thread.id).await.unwrap();
    let seqs: Vec<i64> = everything.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6], "every row keeps its seq");
    let replaced_by: Vec<Option<RunId>> = everything.iter().map(|m| m.replaced_by_run_id).collect();
    let by = Some(regenerated.run.id);
    assert_eq!(replaced_by, [None, None, by, by, by, None]);
    for (stored, before) in everything[2..5]
        .iter()
        .zip([&second, &second_answer, &notice])
    {
        assert_eq!(
            Message {
                replaced_by_run_id: None,
                steer: false,
                ..stored.clone()
            },
            *before,
            "a replaced message is otherwise unchanged"
        );
    }
    // The replaced run is still a run of the thread.
    assert_eq!(store.thread_runs(&thread.id).await.unwrap().len(), 3);

    // Edit an earlier message: everything from it on leaves, earlier replacements keep their
    // run.
    finished(store, &regenerated.run).await;
    let edited = store
        .create_run_with_input(&new_run(&thread, "uno"), Some(first.id))
        .await
        .unwrap();
    assert_eq!(
        edited.replaced, 3,
        "one, its answer, and the regenerated two"
    );
    let history = store.messages(&thread.id).await.unwrap();
    assert_eq!(history, vec![edited.input.clone()]);
    let replaced_by: Vec<Option<RunId>> = store
        .all_messages(&thread.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.replaced_by_run_id)
        .collect();
    let (new, old) = (Some(edited.run.id), by);
    assert_eq!(replaced_by, [new, new, old, old, old, new, None]);
    assert_eq!(
        store
            .all_messages(&ars_domain::ThreadId::new())
            .await
            .unwrap(),
        vec![]
    );
}

pub async fn check_replace_while_busy_is_busy_and_replaces_nothing(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let (first, _) = turn(store, &thread, "one").await;
    let active = store
        .create_run_with_input(&new_run(&thread, "two"), None)
        .await
        .unwrap();
    let before = store.all_messages(&thread.id).await.unwrap();

    let result = store
        .create_run_with_input(&new_run(&thread, "one again"), Some(first.id))
        .await;
    assert!(
        matches!(result, Err(StoreError::Busy { active: a }) if a == active.run.id),
        "{result:?}"
    );
    // Busy comes first, even for a replace_from that would be refused.
    let result = store
        .create_run_with_input(&new_run(&thread, "x"), Some(MessageId::new()))
        .await;
    assert!(matches!(result, Err(StoreError::Busy { .. })), "{result:?}");
    assert_eq!(store.all_messages(&thread.id).await.unwrap(), before);
    assert_eq!(store.thread_runs(&thread.id).await.unwrap().len(), 2);
}

pub async fn check_unreplaceable_messages_are_refused_and_nothing_is_written(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let elsewhere = root_thread(store, &alice, "elsewhere").await;
    let (first, _) = turn(store, &thread, "one").await;
    let (foreign, _) = turn(store, &elsewhere, "theirs").await;
    let edit = store
        .create_run_with_input(&new_run(&thread, "one, edited"), Some(first.id))
        .await
        .unwrap();
    finished(store, &edit.run).await;
    let (_, answer) = turn(store, &thread, "two").await;
    let notice = store
        .append_message(&NewMessage::text(
            thread.id.clone(),
            None,
            MessageRole::System,
            "notice".into(),
        ))
        .await
        .unwrap();
    let messages = store.all_messages(&thread.id).await.unwrap();
    let runs = store.thread_runs(&thread.id).await.unwrap();
    let updated = store.thread(&thread.id).await.unwrap().unwrap().updated_at;

    let cases = [
        (MessageId::new(), Unreplaceable::NotInThread),
        (foreign.id, Unreplaceable::NotInThread),
        (answer.id, Unreplaceable::NotUserMessage),
        (notice.id, Unreplaceable::NotUserMessage),
        (first.id, Unreplaceable::AlreadyReplaced),
    ];
    for (id, reason) in cases {
        let result = store
            .create_run_with_input(&new_run(&thread, "x"), Some(id))
            .await;
        assert_eq!(refusal(result), reason, "{id}");
    }

    // No refusal wrote anything: no run, no message, no replacement, not even the touch.
    assert_eq!(store.all_messages(&thread.id).await.unwrap(), messages);
    assert_eq!(store.thread_runs(&thread.id).await.unwrap(), runs);
    assert_eq!(store.active_run(&thread.id).await.unwrap(), None);
    assert_eq!(
        store.thread(&thread.id).await.unwrap().unwrap().updated_at,
        updated
    );
}

pub async fn check_concurrent_replacements_have_one_winner(store: &dyn Store) {
    const STARTS: usize = 8;
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "chat").await;
    let (first, _) = turn(store, &thread, "one").await;
    let news: Vec<_> = (0..STARTS)
        .map(|i| new_run(&thread, &format!("edit {i}")))
        .collect();
    let results = join_all(
        news.iter()
            .map(|new| store.create_run_with_input(new, Some(first.id))),
    )
    .await;
    let mut winners = Vec::new();
    for result in results {
        match result {
            Ok(started) => winners.push(started),
            Err(StoreError::Busy { .. }) => {}
            Err(other) => panic!("expected a winner or Busy, got {other:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one start wins");
    let winner = &winners[0];
    assert_eq!(
        store.messages(&thread.id).await.unwrap(),
        vec![winner.input.clone()]
    );
    assert_eq!(store.thread_runs(&thread.id).await.unwrap().len(), 2);
    assert_eq!(store.all_messages(&thread.id).await.unwrap().len(), 3);
}
