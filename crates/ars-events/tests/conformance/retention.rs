//! What the bus forgets: finished runs after retention, and the oldest events past the bound.

use std::time::Duration;

use ars_events::EventError;

use crate::fixture::{
    Fixture, Options, collect, collect_results, ids, is_not_retained, new_run, publish_run,
    success, take,
};

pub async fn check_finished_run_expires_after_retention(fx: &Fixture) {
    // Real time, because Redis expires keys on its own clock.
    let retention = Duration::from_millis(300);
    let bus = fx
        .bus_with(Options {
            retention,
            ..Options::default()
        })
        .await;
    let (finished, active) = (new_run(), new_run());
    let published = publish_run(bus.as_ref(), &finished, 2, true).await;
    publish_run(bus.as_ref(), &active, 2, false).await;

    assert_eq!(
        collect(bus.subscribe(finished.run_id, 0).await.unwrap()).await,
        published
    );
    tokio::time::sleep(retention * 3).await;
    assert!(is_not_retained(&bus.subscribe(finished.run_id, 0).await));
    assert!(is_not_retained(&bus.subscribe(finished.run_id, 4).await));
    // Retention counts from the terminal event: a run still going is kept.
    let mut live = bus.subscribe(active.run_id, 0).await.unwrap();
    assert_eq!(ids(&take(&mut live, 3).await), [1, 2, 3]);
}

pub async fn check_oldest_events_are_dropped_over_the_bound(fx: &Fixture) {
    let bus = fx
        .bus_with(Options {
            max_events: 5,
            ..Options::default()
        })
        .await;
    let run = new_run();
    let published = publish_run(bus.as_ref(), &run, 9, false).await;
    assert_eq!(published.last().unwrap().id, 10);

    // Events 1..=5 are gone: resuming before 6 would leave a gap.
    assert!(is_not_retained(&bus.subscribe(run.run_id, 0).await));
    assert!(is_not_retained(&bus.subscribe(run.run_id, 4).await));
    let mut live = bus.subscribe(run.run_id, 5).await.unwrap();
    assert_eq!(take(&mut live, 5).await, published[5..]);

    let terminal = bus.publish(&run, success()).await.unwrap();
    assert_eq!(collect(live).await, std::slice::from_ref(&terminal));
    // The terminal event pushed out event 6.
    assert!(is_not_retained(&bus.subscribe(run.run_id, 5).await));
    let rest = collect(bus.subscribe(run.run_id, 6).await.unwrap()).await;
    assert_eq!(ids(&rest), [7, 8, 9, 10, 11]);
}

pub async fn check_subscriber_that_falls_behind_the_bound_gets_not_retained(fx: &Fixture) {
    let bus = fx
        .bus_with(Options {
            max_events: 5,
            ..Options::default()
        })
        .await;
    let run = new_run();
    publish_run(bus.as_ref(), &run, 0, false).await;
    let stream = bus.subscribe(run.run_id, 0).await.unwrap();
    // The subscriber reads nothing while 19 more events push the ones it needs out.
    publish_run(bus.as_ref(), &run, 18, true).await;

    // It may get whatever it had buffered, in order, but never skips: the stream ends with
    // `NotRetained` instead of jumping the gap.
    let mut items = collect_results(stream).await;
    let last = items.pop().expect("the stream yielded nothing");
    assert!(matches!(last, Err(EventError::NotRetained)), "{last:?}");
    let delivered: Vec<u64> = items.into_iter().map(|item| item.unwrap().id).collect();
    assert_eq!(delivered, (1..=delivered.len() as u64).collect::<Vec<_>>());
}
