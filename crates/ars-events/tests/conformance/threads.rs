//! Thread events: a follower gets every event published after it follows, from any instance,
//! in order, whole; nothing from before; nothing of other threads; and is told when it fell
//! behind, then goes on.

use std::time::Duration;

use ars_domain::{
    AgentId, Delivery, Message, MessageId, MessageNotice, MessageRole, Run, RunId, RunLineage,
    RunStatus, ThreadId, Usage, UserId,
};
use ars_events::{EventError, THREAD_BACKLOG, ThreadEvent, ThreadEventStream};
use futures::StreamExt;

use crate::fixture::Fixture;

/// How long a check waits for an event before calling it lost.
const PROMPT: Duration = Duration::from_secs(5);

/// A child run as a subagent event carries it, every optional field set.
fn child_run(status: RunStatus, prompt_tokens: u64) -> Run {
    let now: chrono::DateTime<chrono::Utc> = "2025-01-02T03:04:05.678Z".parse().unwrap();
    Run {
        id: RunId::parse("0190a0b0-0000-7000-8000-000000000001").unwrap(),
        thread_id: ThreadId::parse("0190a0b0-0000-7000-8000-0000000000aa_sub_helper_0a1b2c3d")
            .unwrap(),
        agent_id: AgentId::parse("0190a0b0-0000-7000-8000-000000000003").unwrap(),
        user_id: UserId::parse("0190a0b0-0000-7000-8000-000000000004").unwrap(),
        status,
        input: "Summarise the notes — ünïcode ✓".into(),
        output: Some("partial".into()),
        error: Some("no model configured".into()),
        error_code: None,
        usage: Usage {
            prompt_tokens,
            completion_tokens: 3,
        },
        lineage: Some(RunLineage {
            parent_run_id: RunId::parse("0190a0b0-0000-7000-8000-000000000002").unwrap(),
            parent_tool_call_id: Some("call_1".into()),
            delivery: Some(Delivery::Background),
        }),
        created_at: now,
        started_at: Some(now),
        finished_at: Some(now),
        pending: Vec::new(),
    }
}

fn subagent(prompt_tokens: u64) -> ThreadEvent {
    ThreadEvent::Subagent {
        run: child_run(RunStatus::Running, prompt_tokens),
        subagent_slug: Some("helper".into()),
    }
}

fn notice(thread: &ThreadId) -> ThreadEvent {
    let run = child_run(RunStatus::Error, 1);
    ThreadEvent::Notice {
        message: Box::new(Message {
            id: MessageId::new(),
            thread_id: thread.clone(),
            run_id: None,
            seq: 7,
            role: MessageRole::System,
            content: "Background subagent `helper` failed".into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            notice: Some(MessageNotice {
                run_id: run.id,
                thread_id: run.thread_id.clone(),
                subagent_slug: Some("helper".into()),
                status: run.status,
            }),
            replaced_by_run_id: None,
            steer: false,
            created_at: ars_domain::time::now(),
        }),
        run,
        subagent_slug: Some("helper".into()),
    }
}

async fn next(stream: &mut ThreadEventStream) -> Result<ThreadEvent, EventError> {
    tokio::time::timeout(PROMPT, stream.next())
        .await
        .expect("no thread event arrived")
        .expect("the thread event stream ended")
}

/// Nothing more arrives within a short while.
async fn quiet(stream: &mut ThreadEventStream) {
    let more = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(more.is_err(), "unexpected item: {more:?}");
}

pub async fn check_a_follower_gets_what_is_published_after_it_follows_in_order_and_whole(
    fx: &Fixture,
) {
    let bus = fx.bus().await;
    let thread = ThreadId::new();
    bus.publish_thread(&thread, &subagent(0)).await.unwrap();
    let mut stream = bus.follow_thread(&thread).await.unwrap();
    let events = [
        subagent(1),
        ThreadEvent::Run {
            run: child_run(RunStatus::Success, 2),
            total_usage: Usage {
                prompt_tokens: 9,
                completion_tokens: 9,
            },
        },
        notice(&thread),
    ];
    for event in &events {
        bus.publish_thread(&thread, event).await.unwrap();
    }
    for event in &events {
        assert_eq!(
            &next(&mut stream).await.unwrap(),
            event,
            "nothing from before"
        );
    }
    quiet(&mut stream).await;
}

pub async fn check_thread_events_reach_followers_on_every_instance(fx: &Fixture) {
    let here = fx.bus().await;
    let there = fx.peer(&here, Default::default()).await;
    let thread = ThreadId::new();
    let mut on_here = here.follow_thread(&thread).await.unwrap();
    let mut on_there = there.follow_thread(&thread).await.unwrap();
    there.publish_thread(&thread, &subagent(1)).await.unwrap();
    here.publish_thread(&thread, &subagent(2)).await.unwrap();
    for stream in [&mut on_here, &mut on_there] {
        let first = next(stream).await.unwrap();
        let second = next(stream).await.unwrap();
        // Two publishers: each one's events in order, whichever reached the bus first.
        let mut tokens: Vec<u64> = [first, second]
            .iter()
            .map(|e| e.run().usage.prompt_tokens)
            .collect();
        tokens.sort_unstable();
        assert_eq!(tokens, [1, 2]);
    }
}

pub async fn check_threads_do_not_see_each_other(fx: &Fixture) {
    let bus = fx.bus().await;
    let (mine, other) = (ThreadId::new(), ThreadId::new());
    let mut stream = bus.follow_thread(&mine).await.unwrap();
    bus.publish_thread(&other, &subagent(1)).await.unwrap();
    bus.publish_thread(&mine, &subagent(2)).await.unwrap();
    assert_eq!(next(&mut stream).await.unwrap(), subagent(2));
    quiet(&mut stream).await;
}

pub async fn check_a_follower_that_falls_behind_is_told_and_goes_on(fx: &Fixture) {
    let bus = fx.bus().await;
    let thread = ThreadId::new();
    let mut stream = bus.follow_thread(&thread).await.unwrap();
    let published = THREAD_BACKLOG as u64 + 10;
    for n in 0..published {
        bus.publish_thread(&thread, &subagent(n)).await.unwrap();
    }
    // Let every message reach the follower's side before it reads.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut delivered = 0;
    loop {
        match next(&mut stream).await {
            Ok(_) => delivered += 1,
            Err(EventError::NotRetained) => break,
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    assert!(delivered < published, "it missed some: {delivered}");
    // It goes on: what is published next reaches it (after what it still had queued, and
    // maybe after being told again that it is still behind).
    let last = subagent(u64::MAX);
    bus.publish_thread(&thread, &last).await.unwrap();
    while !matches!(next(&mut stream).await, Ok(event) if event == last) {}
}
