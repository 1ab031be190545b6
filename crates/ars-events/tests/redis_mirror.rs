//! The Redis bus reads a run once per instance, for every subscriber of the run there: a
//! thousand subscribers are one connection to Redis, not a thousand, and a run nobody follows
//! any more holds no reader. Runs when `ARS_TEST_REDIS_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use ars_domain::{RunId, RunStatus, ThreadId};
use ars_events::{EventBus, EventKind, RedisBus, RedisConfig, RunRef};
use futures::StreamExt;
use redis::AsyncCommands;

/// The tests here count Redis's clients: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Redis {
    url: String,
    prefix: String,
}

impl Redis {
    fn new() -> Option<Self> {
        Some(Self {
            url: std::env::var("ARS_TEST_REDIS_URL").ok()?,
            prefix: format!("ars-test-{}", RunId::new()),
        })
    }

    async fn bus(&self) -> RedisBus {
        RedisBus::connect(
            &self.url,
            RedisConfig {
                key_prefix: self.prefix.clone(),
                retention: Duration::from_secs(60),
                ..RedisConfig::default()
            },
        )
        .await
        .unwrap()
    }

    /// How many clients Redis has connected now.
    async fn clients(&self) -> usize {
        let mut conn = redis::Client::open(self.url.as_str())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let info: String = redis::cmd("INFO")
            .arg("clients")
            .query_async(&mut conn)
            .await
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("connected_clients:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap()
    }

    /// A bus, a run it has started, and how many clients Redis had connected then.
    async fn running(&self) -> (RedisBus, RunRef, usize) {
        let bus = self.bus().await;
        let run = RunRef::top_level(RunId::new(), ThreadId::new());
        bus.publish(&run, EventKind::status(RunStatus::Running))
            .await
            .unwrap();
        let clients = self.clients().await;
        (bus, run, clients)
    }

    async fn forget_keys(&self) {
        let mut conn = redis::Client::open(self.url.as_str())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let keys: Vec<String> = conn.keys(format!("{}:*", self.prefix)).await.unwrap();
        if !keys.is_empty() {
            let _: () = conn.del(keys).await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_subscribers_of_a_run_read_it_on_one_connection() {
    let Some(redis) = Redis::new() else { return };
    let _serial = SERIAL.lock().await;
    let (bus, run, before) = redis.running().await;
    let mut streams = Vec::new();
    for _ in 0..1_000 {
        streams.push(bus.subscribe(run.run_id, 0).await.unwrap());
    }
    // One reader's connection, and at most a stray one of some other client of this Redis.
    let during = redis.clients().await;
    assert!(
        during <= before + 2,
        "{before} clients before, {during} with the subscribers"
    );
    assert_eq!(bus.mirrored_runs(), 1);

    bus.publish(
        &run,
        EventKind::MessageDelta {
            text: "你好".into(),
        },
    )
    .await
    .unwrap();
    bus.publish(&run, EventKind::status(RunStatus::Success))
        .await
        .unwrap();
    for stream in &mut streams {
        let ids: Vec<u64> = stream.by_ref().map(|e| e.unwrap().id).collect().await;
        assert_eq!(ids, vec![1, 2, 3]);
    }
    redis.forget_keys().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_nobody_follows_any_more_holds_no_reader() {
    let Some(redis) = Redis::new() else { return };
    let _serial = SERIAL.lock().await;
    let (bus, run, before) = redis.running().await;
    let first = bus.subscribe(run.run_id, 0).await.unwrap();
    let second = bus.subscribe(run.run_id, 0).await.unwrap();
    assert_eq!(bus.mirrored_runs(), 1);
    drop(first);
    assert_eq!(bus.mirrored_runs(), 1, "one subscriber is left");
    drop(second);
    assert_eq!(bus.mirrored_runs(), 0);
    // The reader's connection closes with it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while redis.clients().await > before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the reader's connection stays open"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A new subscriber starts a new reader, and reads the run from the start.
    let mut again = bus.subscribe(run.run_id, 0).await.unwrap();
    assert_eq!(again.next().await.unwrap().unwrap().id, 1);
    redis.forget_keys().await;
}
