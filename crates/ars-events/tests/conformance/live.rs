//! Live delivery under concurrency, and several bus instances on one run.

use std::sync::Arc;

use ars_events::{EventStream, SharedEvent};
use futures::StreamExt;

use crate::fixture::{Fixture, Options, collect, delta, ids, new_run, running, success, take};

/// Events the racing publisher sends, the terminal one included.
const RACE_EVENTS: u64 = 1_000;

pub async fn check_subscriber_racing_a_publisher_gets_every_event_in_order(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    // The run must exist before anyone can subscribe to it.
    bus.publish(&run, running()).await.unwrap();

    let publisher = {
        let (bus, run) = (Arc::clone(&bus), run.clone());
        tokio::spawn(async move {
            for n in 2..RACE_EVENTS {
                bus.publish(&run, delta(n)).await.unwrap();
                if n % 50 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            bus.publish(&run, success()).await.unwrap();
        })
    };
    // Subscribers join at different moments of the publishing, from different positions.
    let mut subscribers = Vec::new();
    for after in [0, 0, 1] {
        let bus = Arc::clone(&bus);
        let run_id = run.run_id;
        subscribers.push(tokio::spawn(async move {
            let events = collect(bus.subscribe(run_id, after).await.unwrap()).await;
            (after, events)
        }));
        tokio::task::yield_now().await;
    }

    publisher.await.unwrap();
    for subscriber in subscribers {
        let (after, events) = subscriber.await.unwrap();
        assert_eq!(ids(&events), (after + 1..=RACE_EVENTS).collect::<Vec<_>>());
        assert!(events.last().unwrap().kind.is_terminal());
    }
}

pub async fn check_concurrent_publishers_get_dense_unique_ids(fx: &Fixture) {
    const PUBLISHERS: u64 = 4;
    const EACH: u64 = 100;
    let bus = fx.bus().await;
    let run = new_run();
    let tasks: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            let (bus, run) = (Arc::clone(&bus), run.clone());
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for n in 0..EACH {
                    ids.push(bus.publish(&run, delta(p * 1000 + n)).await.unwrap().id);
                }
                ids
            })
        })
        .collect();
    let mut all = Vec::new();
    for task in tasks {
        let ids = task.await.unwrap();
        // Each publisher's own events are numbered in the order it published them.
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        all.extend(ids);
    }
    all.sort_unstable();
    assert_eq!(all, (1..=PUBLISHERS * EACH).collect::<Vec<_>>());

    let terminal = bus.publish(&run, success()).await.unwrap();
    assert_eq!(terminal.id, PUBLISHERS * EACH + 1);
    let events = collect(bus.subscribe(run.run_id, 0).await.unwrap()).await;
    assert_eq!(ids(&events), (1..=terminal.id).collect::<Vec<_>>());
}

pub async fn check_two_instances_share_a_run(fx: &Fixture) {
    let bus = fx.bus().await;
    let peer = fx.peer(&bus, Options::default()).await;
    let run = new_run();

    let first = bus.publish(&run, running()).await.unwrap();
    let mut on_peer = peer.subscribe(run.run_id, 0).await.unwrap();
    assert_eq!(take(&mut on_peer, 1).await, [first]);

    // Both instances publish into one sequence, and each sees the other's events live.
    let mut on_bus = bus.subscribe(run.run_id, 1).await.unwrap();
    let from_bus = bus.publish(&run, delta(1)).await.unwrap();
    let from_peer = peer.publish(&run, delta(2)).await.unwrap();
    assert_eq!((from_bus.id, from_peer.id), (2, 3));
    assert_eq!(
        take(&mut on_peer, 2).await,
        [from_bus.clone(), from_peer.clone()]
    );
    assert_eq!(
        take(&mut on_bus, 2).await,
        [from_bus.clone(), from_peer.clone()]
    );

    let terminal = peer.publish(&run, success()).await.unwrap();
    assert!(matches!(
        bus.publish(&run, delta(3)).await,
        Err(ars_events::EventError::Closed)
    ));
    assert_eq!(collect(on_peer).await, std::slice::from_ref(&terminal));
    assert_eq!(collect(on_bus).await, [terminal]);
}

/// Subscribers of a run on one instance read one copy of each event (and one JSON text of it),
/// however many they are and whether they join before, during or after the run.
pub async fn check_subscribers_of_a_run_on_one_instance_share_each_event(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    bus.publish(&run, running()).await.unwrap();
    let mut early = bus.subscribe(run.run_id, 0).await.unwrap();
    let mut resumed = bus.subscribe(run.run_id, 1).await.unwrap();
    for n in 0..3 {
        bus.publish(&run, delta(n)).await.unwrap();
    }
    bus.publish(&run, success()).await.unwrap();
    // Read up to the terminal event and held: a stream not yet ended keeps its run's reading.
    let early_events = read_shared(&mut early, 5).await;
    let resumed_events = read_shared(&mut resumed, 4).await;
    let mut late = bus.subscribe(run.run_id, 0).await.unwrap();
    let late_events = read_shared(&mut late, 5).await;
    for (n, event) in early_events.iter().enumerate() {
        for other in [
            Some(&late_events[n]),
            n.checked_sub(1).map(|m| &resumed_events[m]),
        ]
        .into_iter()
        .flatten()
        {
            assert_eq!(other.id, event.id);
            assert!(std::ptr::eq(other.json().unwrap(), event.json().unwrap()));
        }
    }
}

/// A subscriber asking for events older than every other subscriber of the run gets them all.
pub async fn check_a_subscriber_from_before_the_others_gets_every_event(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    bus.publish(&run, running()).await.unwrap();
    for n in 0..4 {
        bus.publish(&run, delta(n)).await.unwrap();
    }
    let mut resumed = bus.subscribe(run.run_id, 3).await.unwrap();
    let mut whole = bus.subscribe(run.run_id, 0).await.unwrap();
    bus.publish(&run, success()).await.unwrap();
    assert_eq!(ids(&take(&mut resumed, 3).await), vec![4, 5, 6]);
    assert_eq!(ids(&take(&mut whole, 6).await), (1..=6).collect::<Vec<_>>());
    assert!(whole.next().await.is_none());
}

/// The next `n` events of `stream` as the bus handed them out.
async fn read_shared(stream: &mut EventStream, n: usize) -> Vec<SharedEvent> {
    let mut events = Vec::with_capacity(n);
    for _ in 0..n {
        let next = tokio::time::timeout(std::time::Duration::from_secs(10), stream.next())
            .await
            .expect("the stream hung")
            .expect("the stream ended early")
            .expect("the stream yielded an error");
        events.push(next);
    }
    events
}
