//! The PostgreSQL control channel (`LISTEN/NOTIFY`): the same promises as the in-process and
//! Redis channels of `ars-events` — a signal reaches every listener of every instance, and only
//! listeners that were listening when it was sent. Runs when `ARS_TEST_DATABASE_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use ars_domain::RunId;
use ars_events::{ControlChannel, Signal, SignalStream};
use ars_store::PgControl;
use ars_store::test_support::pg_url;
use futures::StreamExt;

const PROMPT: Duration = Duration::from_secs(5);

/// The next signal about one of `runs` (other tests on the same database notify too).
async fn next_of(stream: &mut SignalStream, runs: &[RunId]) -> Signal {
    tokio::time::timeout(PROMPT, async {
        loop {
            let signal = stream.next().await.expect("the signal stream ended");
            let (Signal::Cancel { run_id } | Signal::Ended { run_id }) = signal else {
                continue;
            };
            if runs.contains(&run_id) {
                return signal;
            }
        }
    })
    .await
    .expect("no signal arrived")
}

#[tokio::test]
async fn a_notify_reaches_every_listener_on_every_instance() {
    let Some(url) = pg_url() else { return };
    let here = PgControl::connect(&url).await.unwrap();
    let there = PgControl::connect(&url).await.unwrap();
    let mut on_here = here.listen().await.unwrap();
    let mut on_there = there.listen().await.unwrap();
    let runs = [RunId::new(), RunId::new()];
    let cancel = Signal::Cancel { run_id: runs[0] };
    let ended = Signal::Ended { run_id: runs[1] };
    here.send(cancel).await.unwrap();
    there.send(ended).await.unwrap();
    assert_eq!(next_of(&mut on_here, &runs).await, cancel);
    assert_eq!(next_of(&mut on_here, &runs).await, ended);
    assert_eq!(next_of(&mut on_there, &runs).await, cancel);
    assert_eq!(next_of(&mut on_there, &runs).await, ended);
}

#[tokio::test]
async fn a_listener_hears_only_notifies_sent_after_it_listens() {
    let Some(url) = pg_url() else { return };
    let here = PgControl::connect(&url).await.unwrap();
    let runs = [RunId::new(), RunId::new()];
    here.send(Signal::Cancel { run_id: runs[0] }).await.unwrap();
    let mut late = here.listen().await.unwrap();
    let after = Signal::Ended { run_id: runs[1] };
    here.send(after).await.unwrap();
    assert_eq!(next_of(&mut late, &runs).await, after);
}

#[tokio::test]
async fn one_channel_serves_several_listeners_and_still_sends() {
    let Some(url) = pg_url() else { return };
    let channel = PgControl::connect(&url).await.unwrap();
    let mut listeners = Vec::new();
    for _ in 0..4 {
        listeners.push(channel.listen().await.unwrap());
    }
    let runs = [RunId::new()];
    let signal = Signal::Cancel { run_id: runs[0] };
    tokio::time::timeout(PROMPT, channel.send(signal))
        .await
        .expect("a send waited behind the listeners")
        .unwrap();
    for listener in &mut listeners {
        assert_eq!(next_of(listener, &runs).await, signal);
    }
}
