//! Knowledge events: a follower of a knowledge base gets every event published after it
//! follows, from any instance, in order; nothing from before; nothing of other knowledge bases;
//! and is told when it fell behind, then goes on.

use std::time::Duration;

use ars_domain::{KbDocumentId, KnowledgeBaseId};
use ars_events::{EventError, KnowledgeEvent, KnowledgeEventStream, TOPIC_BACKLOG};
use futures::StreamExt;

use crate::fixture::Fixture;

/// How long a check waits for an event before calling it lost.
const PROMPT: Duration = Duration::from_secs(5);

fn document() -> KnowledgeEvent {
    KnowledgeEvent::Document {
        id: KbDocumentId::new(),
    }
}

async fn next(stream: &mut KnowledgeEventStream) -> Result<KnowledgeEvent, EventError> {
    tokio::time::timeout(PROMPT, stream.next())
        .await
        .expect("no knowledge event arrived")
        .expect("the knowledge event stream ended")
}

/// Nothing more arrives within a short while.
async fn quiet(stream: &mut KnowledgeEventStream) {
    let more = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(more.is_err(), "unexpected item: {more:?}");
}

pub async fn check_a_knowledge_follower_gets_what_is_published_after_it_follows_in_order(
    fx: &Fixture,
) {
    let bus = fx.bus().await;
    let kb = KnowledgeBaseId::new();
    bus.publish_knowledge(kb, &document()).await.unwrap();
    let mut stream = bus.follow_knowledge(kb).await.unwrap();
    let events = [document(), document(), KnowledgeEvent::Deleted];
    for event in &events {
        bus.publish_knowledge(kb, event).await.unwrap();
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

pub async fn check_knowledge_events_reach_followers_on_every_instance(fx: &Fixture) {
    let here = fx.bus().await;
    let there = fx.peer(&here, Default::default()).await;
    let kb = KnowledgeBaseId::new();
    let mut on_here = here.follow_knowledge(kb).await.unwrap();
    let mut on_there = there.follow_knowledge(kb).await.unwrap();
    let (first, second) = (document(), document());
    there.publish_knowledge(kb, &first).await.unwrap();
    here.publish_knowledge(kb, &second).await.unwrap();
    for stream in [&mut on_here, &mut on_there] {
        let mut got = vec![next(stream).await.unwrap(), next(stream).await.unwrap()];
        // Two publishers: each one's events in order, whichever reached the bus first.
        if got[0] != first {
            got.reverse();
        }
        assert_eq!(got, [first.clone(), second.clone()]);
    }
}

pub async fn check_knowledge_bases_do_not_see_each_other(fx: &Fixture) {
    let bus = fx.bus().await;
    let (mine, other) = (KnowledgeBaseId::new(), KnowledgeBaseId::new());
    let mut stream = bus.follow_knowledge(mine).await.unwrap();
    bus.publish_knowledge(other, &KnowledgeEvent::Deleted)
        .await
        .unwrap();
    let event = document();
    bus.publish_knowledge(mine, &event).await.unwrap();
    assert_eq!(next(&mut stream).await.unwrap(), event);
    quiet(&mut stream).await;
}

pub async fn check_a_knowledge_follower_that_falls_behind_is_told_and_goes_on(fx: &Fixture) {
    let bus = fx.bus().await;
    let kb = KnowledgeBaseId::new();
    let mut stream = bus.follow_knowledge(kb).await.unwrap();
    let published = TOPIC_BACKLOG + 10;
    for _ in 0..published {
        bus.publish_knowledge(kb, &document()).await.unwrap();
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
    let last = document();
    bus.publish_knowledge(kb, &last).await.unwrap();
    while !matches!(next(&mut stream).await, Ok(event) if event == last) {}
}
