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
