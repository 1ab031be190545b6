//! Ids, replay, resume and the closed run: the sequence a subscriber sees.

use ars_domain::{RunId, RunStatus};
use ars_events::{EventError, EventKind};

use crate::fixture::{
    Fixture, collect, delta, ids, is_not_retained, new_run, publish_run, running, success, take,
};

pub async fn check_ids_start_at_one_and_increase_by_one(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    let events = publish_run(bus.as_ref(), &run, 3, true).await;
    assert_eq!(ids(&events), [1, 2, 3, 4, 5]);
    for event in &events {
        assert_eq!(event.run, run);
    }
    assert_eq!(events[0].kind, running());
    assert_eq!(events[1].kind, delta(0));
    assert_eq!(events[4].kind, success());
}

pub async fn check_subscribe_from_zero_gets_everything_and_ends_after_terminal(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    let first = bus.publish(&run, running()).await.unwrap();

    // Subscribed while the run is live: the replayed event, then the live ones.
    let mut stream = bus.subscribe(run.run_id, 0).await.unwrap();
    assert_eq!(take(&mut stream, 1).await, std::slice::from_ref(&first));
    let mut published = vec![first];
    for n in 0..3 {
        published.push(bus.publish(&run, delta(n)).await.unwrap());
    }
    published.push(bus.publish(&run, success()).await.unwrap());

    let rest = collect(stream).await;
    assert_eq!(rest, published[1..]);
    assert!(rest.last().unwrap().kind.is_terminal());
}

pub async fn check_late_subscriber_gets_the_whole_finished_run(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    let published = publish_run(bus.as_ref(), &run, 10, true).await;

    let replayed = collect(bus.subscribe(run.run_id, 0).await.unwrap()).await;
    assert_eq!(replayed, published);
    // A second late subscriber sees the same.
    let again = collect(bus.subscribe(run.run_id, 0).await.unwrap()).await;
    assert_eq!(again, published);
}

pub async fn check_resume_from_the_middle_gets_exactly_the_rest(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    let published = publish_run(bus.as_ref(), &run, 8, false).await;

    // Resume while live (as after a dropped SSE connection with `Last-Event-ID: 4`).
    let mut live = bus.subscribe(run.run_id, 4).await.unwrap();
    assert_eq!(take(&mut live, 5).await, published[4..]);
    let terminal = bus.publish(&run, success()).await.unwrap();
    assert_eq!(collect(live).await, std::slice::from_ref(&terminal));

    // And after the end, from every position.
    let mut all = published;
    all.push(terminal);
    for after in 0..all.len() as u64 {
        let rest = collect(bus.subscribe(run.run_id, after).await.unwrap()).await;
        assert_eq!(rest, all[after as usize..], "resuming after {after}");
    }
}

pub async fn check_resume_at_the_terminal_event_ends_at_once(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    let published = publish_run(bus.as_ref(), &run, 2, true).await;
    let last = published.last().unwrap().id;

    assert!(
        collect(bus.subscribe(run.run_id, last).await.unwrap())
            .await
            .is_empty()
    );
    // An id past the end (a confused client) is no different: nothing more will come.
    for after in [last + 10, u64::MAX] {
        assert!(
            collect(bus.subscribe(run.run_id, after).await.unwrap())
                .await
                .is_empty()
        );
    }
}

pub async fn check_publish_after_terminal_is_closed(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = new_run();
    let published = publish_run(bus.as_ref(), &run, 1, false).await;
    let terminal = bus
        .publish(
            &run,
            EventKind::RunStatus {
                status: RunStatus::Error,
                error: Some("model failed".into()),
                error_code: None,
                output: None,
            },
        )
        .await
        .unwrap();

    for kind in [delta(9), success(), running()] {
        assert!(matches!(
            bus.publish(&run, kind).await,
            Err(EventError::Closed)
        ));
    }
    // The refused publishes left no trace.
    let mut all = published;
    all.push(terminal);
    assert_eq!(
        collect(bus.subscribe(run.run_id, 0).await.unwrap()).await,
        all
    );
}

pub async fn check_unknown_run_is_not_retained(fx: &Fixture) {
    let bus = fx.bus().await;
    assert!(is_not_retained(&bus.subscribe(RunId::new(), 0).await));
    assert!(is_not_retained(&bus.subscribe(RunId::new(), 7).await));
}

pub async fn check_runs_do_not_see_each_other(fx: &Fixture) {
    let bus = fx.bus().await;
    let (a, b) = (new_run(), new_run());
    let mut from_a = Vec::new();
    let mut from_b = Vec::new();
    for n in 0..5 {
        from_a.push(bus.publish(&a, delta(n)).await.unwrap());
        from_b.push(bus.publish(&b, delta(100 + n)).await.unwrap());
    }
    from_a.push(bus.publish(&a, success()).await.unwrap());
    from_b.push(bus.publish(&b, success()).await.unwrap());

    assert_eq!(ids(&from_b), [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        collect(bus.subscribe(a.run_id, 0).await.unwrap()).await,
        from_a
    );
    assert_eq!(
        collect(bus.subscribe(b.run_id, 0).await.unwrap()).await,
        from_b
    );
}
