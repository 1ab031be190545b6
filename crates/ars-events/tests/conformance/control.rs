//! The control channel: signals reach every listening instance, and only from when it listens.

use std::time::Duration;

use ars_domain::RunId;
use ars_events::{Signal, SignalStream};
use futures::StreamExt;

use crate::fixture::Fixture;

/// How long a check waits for a signal before calling it lost.
const PROMPT: Duration = Duration::from_secs(5);

async fn next(stream: &mut SignalStream) -> Signal {
    tokio::time::timeout(PROMPT, stream.next())
        .await
        .expect("no signal arrived")
        .expect("the signal stream ended")
}

pub async fn check_a_signal_reaches_every_listener_on_every_instance(fx: &Fixture) {
    let here = fx.control().await;
    let there = fx.control_peer(&here).await;
    let mut on_here = here.listen().await.unwrap();
    let mut on_there = there.listen().await.unwrap();

    let cancel = Signal::Cancel {
        run_id: RunId::new(),
    };
    let ended = Signal::Ended {
        run_id: RunId::new(),
    };
    here.send(cancel).await.unwrap();
    there.send(ended).await.unwrap();
    // The sender hears its own signals too, in the order they were sent from one instance.
    assert_eq!(next(&mut on_here).await, cancel);
    assert_eq!(next(&mut on_here).await, ended);
    assert_eq!(next(&mut on_there).await, cancel);
    assert_eq!(next(&mut on_there).await, ended);
}

pub async fn check_a_listener_gets_only_signals_sent_after_it_listens(fx: &Fixture) {
    let here = fx.control().await;
    let early = Signal::Cancel {
        run_id: RunId::new(),
    };
    here.send(early).await.unwrap();
    let mut late = here.listen().await.unwrap();
    let after = Signal::Ended {
        run_id: RunId::new(),
    };
    here.send(after).await.unwrap();
    assert_eq!(
        next(&mut late).await,
        after,
        "the earlier signal is not replayed"
    );
}
