//! `until_terminal`: how a waiter on another instance learns that a run ended.

use std::time::Duration;

use ars_domain::RunId;

use crate::fixture::{Fixture, is_not_retained, new_run, publish_run, success};

/// Longest a resolved `until_terminal` may take here.
const PROMPT: Duration = Duration::from_secs(5);

pub async fn check_until_terminal_resolves_when_the_terminal_event_is_published(fx: &Fixture) {
    let bus = fx.bus().await;
    let peer = fx.peer(&bus, Default::default()).await;
    let run = new_run();
    publish_run(bus.as_ref(), &run, 3, false).await;

    let waiter = tokio::spawn({
        let peer = peer.clone();
        async move { peer.until_terminal(run.run_id).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished(), "resolved before the run ended");
    bus.publish(&run, success()).await.unwrap();
    let ended = tokio::time::timeout(PROMPT, waiter)
        .await
        .expect("until_terminal did not resolve after the terminal event")
        .unwrap();
    assert!(ended.is_ok(), "{ended:?}");
}

pub async fn check_until_terminal_of_a_finished_run_resolves_at_once(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    publish_run(bus.as_ref(), &run, 2, true).await;
    let ended = tokio::time::timeout(PROMPT, bus.until_terminal(run.run_id))
        .await
        .expect("a finished run's until_terminal hung");
    assert!(ended.is_ok(), "{ended:?}");
}

pub async fn check_until_terminal_of_an_unknown_run_is_not_retained(fx: &Fixture) {
    let bus = fx.bus().await;
    let ended = tokio::time::timeout(PROMPT, bus.until_terminal(RunId::new()))
        .await
        .expect("an unknown run's until_terminal hung");
    assert!(is_not_retained(&ended), "{ended:?}");
}

pub async fn check_an_end_published_elsewhere_reaches_a_known_open_run_only(fx: &Fixture) {
    let bus = fx.bus().await;
    let peer = fx.peer(&bus, Default::default()).await;
    // Known and open: its followers get the end, in sequence.
    let open = new_run();
    publish_run(bus.as_ref(), &open, 2, false).await;
    let end = peer.publish_end(&open, success()).await.unwrap();
    assert_eq!(end.map(|e| e.id), Some(4));
    assert!(bus.until_terminal(open.run_id).await.is_ok());
    // Already closed: nothing more.
    let closed = new_run();
    publish_run(bus.as_ref(), &closed, 1, true).await;
    assert_eq!(peer.publish_end(&closed, success()).await.unwrap(), None);
    // Unknown: stays unknown.
    let unknown = new_run();
    assert_eq!(peer.publish_end(&unknown, success()).await.unwrap(), None);
    assert!(is_not_retained(
        &bus.subscribe(unknown.run_id, 0).await.map(|_| ())
    ));
}
