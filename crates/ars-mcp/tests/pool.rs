//! The connection pool's rules, over in-memory MCP servers (rmcp's server side on a duplex
//! pipe): one connection per key however many ask at once, idle connections make room at the
//! process bound and busy ones do not, a dead connection is opened again, and failures back
//! off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ars_mcp::rmcp::model::{ServerCapabilities, ServerConfig};
use ars_mcp::rmcp::{ServerHandler, ServiceExt};
use ars_mcp::{Connection, McpError, Pool, PoolConfig, PoolKey};

#[derive(Clone)]
struct Tiny;

impl ServerHandler for Tiny {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// A connection to an in-memory server; `opened` counts the connections made.
async fn connect(opened: Arc<AtomicUsize>) -> Result<Connection, McpError> {
    opened.fetch_add(1, Ordering::SeqCst);
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        if let Ok(server) = Tiny.serve((read, write)).await {
            let _ = server.waiting().await;
        }
    });
    let (read, write) = tokio::io::split(client_end);
    Connection::over_streams("tiny", read, write, Duration::from_secs(5)).await
}

fn key(partition: &str) -> PoolKey {
    PoolKey {
        server: "s".into(),
        revision: "1".into(),
        partition: partition.into(),
    }
}

fn pool(max_processes: usize) -> Pool {
    Pool::new(PoolConfig {
        max_processes,
        idle_timeout: Duration::from_secs(600),
        backoff_initial: Duration::from_millis(100),
        backoff_max: Duration::from_secs(30),
    })
}

#[tokio::test]
async fn concurrent_first_users_share_one_connection() {
    let pool = pool(4);
    let opened = Arc::new(AtomicUsize::new(0));
    let gets = (0..8).map(|_| {
        let opened = Arc::clone(&opened);
        let pool = pool.clone();
        async move {
            pool.get(&key("a"), "tiny", true, || connect(opened))
                .await
                .unwrap()
        }
    });
    let connections = futures::future::join_all(gets).await;
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    assert!(connections.windows(2).all(|w| Arc::ptr_eq(&w[0], &w[1])));
    assert_eq!(pool.processes(), 1);
}

#[tokio::test]
async fn at_the_bound_the_idle_connection_makes_room_and_a_held_one_does_not() {
    let pool = pool(1);
    let opened = Arc::new(AtomicUsize::new(0));
    let a = pool
        .get(&key("a"), "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    // `a` is held (a call in flight): no room for `b`.
    let refused = pool
        .get(&key("b"), "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, McpError::LimitReached { limit: 1, .. }),
        "{refused}"
    );
    assert!(
        refused
            .to_string()
            .contains("1 MCP server processes are running")
    );
    // Let go of `a`: it is idle now and closed to make room.
    drop(a);
    let b = pool
        .get(&key("b"), "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 2);
    assert_eq!(pool.processes(), 1);
    // HTTP sessions do not count against the process bound.
    let http = pool
        .get(&key("user"), "tiny", false, || connect(Arc::clone(&opened)))
        .await;
    assert!(http.is_ok());
    drop(b);
}

#[tokio::test]
async fn a_discarded_connection_is_opened_again_on_next_use() {
    let pool = pool(2);
    let opened = Arc::new(AtomicUsize::new(0));
    let first = pool
        .get(&key("a"), "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    pool.discard(&key("a"), &first).await;
    drop(first);
    let second = pool
        .get(&key("a"), "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    assert_eq!(opened.load(Ordering::SeqCst), 2);
    assert_eq!(pool.processes(), 1, "the first one's place was given back");
    drop(second);
}

#[tokio::test]
async fn failures_back_off_and_a_long_back_off_fails_at_once_saying_when() {
    let pool = Pool::new(PoolConfig {
        max_processes: 2,
        idle_timeout: Duration::from_secs(600),
        backoff_initial: Duration::from_secs(4),
        backoff_max: Duration::from_secs(30),
    });
    let failing = || async {
        Err::<Connection, _>(McpError::Start {
            server: "tiny".into(),
            message: "no such program".into(),
        })
    };
    let first = pool
        .get(&key("a"), "tiny", true, failing)
        .await
        .unwrap_err();
    assert!(first.to_string().contains("no such program"));
    // Within the back-off, nothing is started: the caller learns why and when.
    let attempts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&attempts);
    let second = pool
        .get(&key("a"), "tiny", true, move || async move {
            counted.fetch_add(1, Ordering::SeqCst);
            Err::<Connection, _>(McpError::Start {
                server: "tiny".into(),
                message: "again".into(),
            })
        })
        .await
        .unwrap_err();
    assert_eq!(attempts.load(Ordering::SeqCst), 0);
    let text = second.to_string();
    assert!(
        text.contains("no such program") && text.contains("next attempt in"),
        "{text}"
    );
    // A failed start holds no place.
    assert_eq!(pool.processes(), 0);
}

#[tokio::test]
async fn a_short_back_off_is_waited_out() {
    let pool = pool(2);
    let failing = || async {
        Err::<Connection, _>(McpError::Start {
            server: "tiny".into(),
            message: "flaky".into(),
        })
    };
    assert!(pool.get(&key("a"), "tiny", true, failing).await.is_err());
    let opened = Arc::new(AtomicUsize::new(0));
    let started = tokio::time::Instant::now();
    let connection = pool
        .get(&key("a"), "tiny", true, || connect(Arc::clone(&opened)))
        .await;
    assert!(connection.is_ok());
    assert!(
        started.elapsed() >= Duration::from_millis(80),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn shutdown_closes_every_connection() {
    let pool = pool(4);
    let opened = Arc::new(AtomicUsize::new(0));
    for partition in ["a", "b", "c"] {
        pool.get(&key(partition), "tiny", true, || {
            connect(Arc::clone(&opened))
        })
        .await
        .unwrap();
    }
    assert_eq!(pool.processes(), 3);
    pool.shutdown().await;
    assert_eq!(pool.processes(), 0);
}

#[tokio::test]
async fn a_changed_servers_old_connection_is_retired_once_nobody_holds_it() {
    let pool = pool(4);
    let opened = Arc::new(AtomicUsize::new(0));
    let old = PoolKey {
        revision: "old".into(),
        ..key("a")
    };
    let held = pool
        .get(&old, "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    let new = key("a");
    pool.get(&new, "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    // Held (a call in flight): kept.
    pool.retire_revisions("s", "a", "1").await;
    assert_eq!(pool.processes(), 2);
    drop(held);
    pool.retire_revisions("s", "a", "1").await;
    assert_eq!(pool.processes(), 1);
    // Another partition's connection is not touched.
    pool.get(&key("b"), "tiny", true, || connect(Arc::clone(&opened)))
        .await
        .unwrap();
    pool.retire_revisions("s", "a", "1").await;
    assert_eq!(pool.processes(), 2);
}
