//! Connections kept between queries, so that giving one back costs nothing.
//!
//! sqlx 0.8 pings every connection given back to its pool before anyone may take it again
//! (`PoolConnection`'s drop): one more round trip to PostgreSQL, or to a SQLite connection's
//! thread, after every statement run on the pool — half the round trips of a read-heavy
//! request. Every connection the store uses goes through here: the SQLite writer's one
//! (kept for good), SQLite's readers, and PostgreSQL's for reads and writes alike.
//! [`Connections`] takes connections from the sqlx pool (which opens them, bounds
//! their number and, for PostgreSQL, pings one that sat idle before handing it out) and keeps
//! those given back in a list of its own instead of returning them. Holding one is a
//! [`Lent`]; dropping it puts the connection back on the list, unless it still has work queued
//! (a transaction dropped unfinished queues its `ROLLBACK`): that one goes back to sqlx, whose
//! ping sends the work and waits for it, and closes the connection if it does not answer.
//! A query that fails lets its connection go the same way, so a broken one is never kept.
//!
//! As many connections are lent at once as the pool may open (a semaphore of as many permits,
//! taken within the pool's acquire timeout), so taking one from the pool never waits on a
//! connection kept idle here.
//!
//! The pool's `max_lifetime` and `idle_timeout` hold for kept connections too (sqlx applies
//! them only to connections in its own pool): one held since it came from the pool longer than
//! the lifetime goes back to it when given back (sqlx closes it there), and kept ones idle
//! longer than the timeout are closed when a connection is next lent — the warmest is lent
//! first, so under a light load those below it are the ones that retire.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use sqlx::Either;
use sqlx::pool::PoolConnection;
use sqlx::{Connection, Database, Describe, Execute, Executor, Pool};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// A pool's connections, kept between queries. A cheap `Clone` handle.
pub(crate) struct Connections<DB: Database> {
    shared: Arc<Shared<DB>>,
}

impl<DB: Database> std::fmt::Debug for Connections<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("pool", &self.shared.pool)
            .field("idle", &lock(&self.shared.idle).len())
            .field("keep", &self.shared.keep)
            .finish()
    }
}

impl<DB: Database> Clone for Connections<DB> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<DB: Database> {
    /// Opens connections and bounds how many are open.
    pool: Pool<DB>,
    /// Connections given back, the last given back on top (the warmest is lent first).
    idle: Mutex<Vec<Idle<DB>>>,
    /// One permit per connection the pool may open: how many are lent at once.
    permits: Arc<Semaphore>,
    /// Whether connections are kept at all: not when the pool's one connection is shared
    /// with a writer that takes it from the pool (a SQLite database in memory).
    keep: bool,
    /// A connection idle this long is pinged before it is lent (the server or the network may
    /// have dropped it meanwhile); `None`: never (a local SQLite file cannot drop).
    ping_idle_after: Option<Duration>,
    /// The pool's: a connection held longer than this since it came from the pool is not kept.
    max_lifetime: Option<Duration>,
    /// The pool's: a kept connection idle this long is closed.
    idle_timeout: Option<Duration>,
}

struct Idle<DB: Database> {
    conn: PoolConnection<DB>,
    /// When it was given back.
    since: Instant,
    /// When it came from the pool.
    taken: Instant,
}

/// One connection, lent until dropped.
pub(crate) struct Lent<DB: Database> {
    conn: Option<PoolConnection<DB>>,
    /// When the connection came from the pool.
    taken: Instant,
    shared: Arc<Shared<DB>>,
    /// Released after the connection is back on the idle list (fields drop after `drop`).
    _permit: OwnedSemaphorePermit,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<DB: Database> Connections<DB> {
    /// Keeps `pool`'s connections between queries; `ping_idle_after`: see [`Shared`].
    pub(crate) fn keeping(pool: Pool<DB>, ping_idle_after: Option<Duration>) -> Self {
        Self::new(pool, true, ping_idle_after)
    }

    /// Gives every connection back to `pool` after each use, as the pool alone would.
    pub(crate) fn giving_back(pool: Pool<DB>) -> Self {
        Self::new(pool, false, None)
    }

    fn new(pool: Pool<DB>, keep: bool, ping_idle_after: Option<Duration>) -> Self {
        let options = pool.options();
        let permits = usize::try_from(options.get_max_connections()).unwrap_or(1);
        let (max_lifetime, idle_timeout) = (options.get_max_lifetime(), options.get_idle_timeout());
        Self {
            shared: Arc::new(Shared {
                pool,
                idle: Mutex::new(Vec::new()),
                permits: Arc::new(Semaphore::new(permits.max(1))),
                keep,
                ping_idle_after,
                max_lifetime,
                idle_timeout,
            }),
        }
    }

    /// The pool the connections come from (for tests).
    #[cfg(test)]
    pub(crate) fn pool(&self) -> &Pool<DB> {
        &self.shared.pool
    }

    /// A connection: the last one given back, else one from the pool. Waits at most the
    /// pool's acquire timeout for a turn.
    pub(crate) async fn acquire(&self) -> sqlx::Result<Lent<DB>> {
        let timeout = self.shared.pool.options().get_acquire_timeout();
        let permit =
            tokio::time::timeout(timeout, Arc::clone(&self.shared.permits).acquire_owned())
                .await
                .map_err(|_| sqlx::Error::PoolTimedOut)?
                .map_err(|_| sqlx::Error::PoolClosed)?;
        self.retire_idle();
        loop {
            let idle = lock(&self.shared.idle).pop();
            let Some(Idle {
                mut conn,
                since,
                taken,
            }) = idle
            else {
                let conn = self.shared.pool.acquire().await?;
                return Ok(self.lend(conn, Instant::now(), permit));
            };
            let stale = self
                .shared
                .ping_idle_after
                .is_some_and(|after| since.elapsed() >= after);
            // A connection that does not answer is dropped (sqlx closes it); the next is tried.
            if !stale || conn.ping().await.is_ok() {
                return Ok(self.lend(conn, taken, permit));
            }
        }
    }

    fn lend(
        &self,
        conn: PoolConnection<DB>,
        taken: Instant,
        permit: OwnedSemaphorePermit,
    ) -> Lent<DB> {
        Lent {
            conn: Some(conn),
            taken,
            shared: Arc::clone(&self.shared),
            _permit: permit,
        }
    }

    /// Closes the kept connections idle longer than the pool's idle timeout (the list's
    /// bottom: the first given back).
    fn retire_idle(&self) {
        let Some(timeout) = self.shared.idle_timeout else {
            return;
        };
        let retired: Vec<Idle<DB>> = {
            let mut idle = lock(&self.shared.idle);
            let stale = idle.partition_point(|i| i.since.elapsed() >= timeout);
            idle.drain(..stale).collect()
        };
        for Idle { conn, .. } in retired {
            tokio::spawn(async move {
                if let Err(err) = conn.close().await {
                    tracing::debug!(%err, "closing an idle connection failed");
                }
            });
        }
    }

    /// How many connections are kept idle now (for tests).
    #[cfg(test)]
    pub(crate) fn idle(&self) -> usize {
        lock(&self.shared.idle).len()
    }
}

impl<DB: Database> Lent<DB> {
    /// Lets the connection go back to sqlx's pool (pinged, closed if it does not answer)
    /// instead of keeping it: after a failure, which may have been the connection's.
    pub(crate) fn discard(mut self) {
        self.conn = None;
    }

    /// What a query on this connection gave, the connection kept only if it succeeded.
    fn settle<T>(self, result: sqlx::Result<T>) -> sqlx::Result<T> {
        if result.is_err() {
            self.discard();
        }
        result
    }
}

impl<DB: Database> Drop for Lent<DB> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        let expired = self
            .shared
            .max_lifetime
            .is_some_and(|lifetime| self.taken.elapsed() >= lifetime);
        if self.shared.keep && !conn.should_flush() && !expired {
            lock(&self.shared.idle).push(Idle {
                conn,
                since: Instant::now(),
                taken: self.taken,
            });
        }
        // Otherwise `conn` drops here, back to the pool (which closes one past its lifetime).
    }
}

impl<DB: Database> std::ops::Deref for Lent<DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &DB::Connection {
        // Set from lending until `drop` or `discard`, which both end the loan.
        self.conn.as_ref().map_or_else(|| unreachable!(), |c| &**c)
    }
}

impl<DB: Database> std::ops::DerefMut for Lent<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        self.conn
            .as_mut()
            .map_or_else(|| unreachable!(), |c| &mut **c)
    }
}

/// Queries run on `&Connections` as on `&Pool`: each on a connection of its own for its
/// duration. A statement's rows are read whole before they are handed on (every read of the
/// store collects them anyway), so the connection is given back as soon as it is done.
impl<'p, DB: Database> Executor<'p> for &'_ Connections<DB>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    type Database = DB;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, sqlx::Result<Either<DB::QueryResult, DB::Row>>>
    where
        E: 'q + Execute<'q, DB>,
    {
        let connections = self.clone();
        futures::stream::once(async move {
            let mut conn = connections.acquire().await?;
            let all: sqlx::Result<Vec<_>> = (&mut *conn).fetch_many(query).try_collect().await;
            let all = conn.settle(all)?;
            Ok::<_, sqlx::Error>(futures::stream::iter(all.into_iter().map(Ok)))
        })
        .try_flatten()
        .boxed()
    }

    fn fetch_optional<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, sqlx::Result<Option<DB::Row>>>
    where
        E: 'q + Execute<'q, DB>,
    {
        let connections = self.clone();
        Box::pin(async move {
            let mut conn = connections.acquire().await?;
            let result = (&mut *conn).fetch_optional(query).await;
            conn.settle(result)
        })
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [DB::TypeInfo],
    ) -> BoxFuture<'e, sqlx::Result<DB::Statement<'q>>> {
        let connections = self.clone();
        Box::pin(async move {
            let mut conn = connections.acquire().await?;
            let result = (&mut *conn).prepare_with(sql, parameters).await;
            conn.settle(result)
        })
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, sqlx::Result<Describe<DB>>> {
        let connections = self.clone();
        Box::pin(async move {
            let mut conn = connections.acquire().await?;
            let result = (&mut *conn).describe(sql).await;
            conn.settle(result)
        })
    }
}

#[cfg(test)]
mod tests {
    use sqlx::postgres::{PgPoolOptions, Postgres};
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

    use super::*;
    use crate::test_support::{pg_new_schema, pg_schema_options, pg_url};

    async fn pg(max: u32) -> Option<Connections<Postgres>> {
        pg_with(PgPoolOptions::new().max_connections(max)).await
    }

    async fn pg_with(options: PgPoolOptions) -> Option<Connections<Postgres>> {
        let url = pg_url()?;
        let schema = pg_new_schema(&url).await;
        let pool = options
            .acquire_timeout(Duration::from_millis(300))
            .connect_with(pg_schema_options(&url, &schema))
            .await
            .unwrap();
        Some(Connections::keeping(pool, Some(Duration::from_secs(1))))
    }

    async fn lent_backend(conn: &mut Lent<Postgres>) -> i32 {
        let (pid,): (i32,) = sqlx::query_as("SELECT pg_backend_pid()")
            .fetch_one(&mut **conn)
            .await
            .unwrap();
        pid
    }

    /// Whether the PostgreSQL backend `pid` is still connected.
    async fn connected(connections: &Connections<Postgres>, pid: i32) -> bool {
        let (found,): (bool,) =
            sqlx::query_as("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)")
                .bind(pid)
                .fetch_one(connections)
                .await
                .unwrap();
        found
    }

    async fn eventually_gone(connections: &Connections<Postgres>, pid: i32) {
        for _ in 0..100 {
            if !connected(connections, pid).await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("backend {pid} is still connected");
    }

    async fn backend(connections: &Connections<Postgres>) -> i32 {
        let (pid,): (i32,) = sqlx::query_as("SELECT pg_backend_pid()")
            .fetch_one(connections)
            .await
            .unwrap();
        pid
    }

    #[tokio::test]
    async fn a_connection_given_back_is_kept_out_of_the_pool_and_lent_again() {
        let dir = tempfile::tempdir().unwrap();
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(
                SqliteConnectOptions::new()
                    .filename(dir.path().join("kept.db"))
                    .create_if_missing(true),
            )
            .await
            .unwrap();
        let connections = Connections::keeping(pool, None);
        for _ in 0..3 {
            let (one,): (i64,) = sqlx::query_as("SELECT 1")
                .fetch_one(&connections)
                .await
                .unwrap();
            assert_eq!(one, 1);
            // Kept here, not given back to sqlx (which pings what it is given back).
            assert_eq!(connections.idle(), 1);
            assert_eq!(connections.pool().num_idle(), 0);
            assert_eq!(connections.pool().size(), 1);
        }

        let Some(connections) = pg(2).await else {
            return;
        };
        let first = backend(&connections).await;
        assert_eq!(
            backend(&connections).await,
            first,
            "the same backend, lent again"
        );
        assert_eq!(connections.idle(), 1);
        assert_eq!(connections.pool().num_idle(), 0);
    }

    #[tokio::test]
    async fn a_kept_connection_past_the_pools_max_lifetime_is_closed() {
        let options = PgPoolOptions::new()
            .max_connections(2)
            .max_lifetime(Duration::from_millis(300));
        let Some(connections) = pg_with(options).await else {
            return;
        };
        let first = backend(&connections).await;
        assert_eq!(
            backend(&connections).await,
            first,
            "kept within its lifetime"
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        // Lent once more (the lifetime counts from the pool, not from its last use), then
        // not kept: the next query has a new one and the old one is closed.
        backend(&connections).await;
        let next = backend(&connections).await;
        assert_ne!(next, first);
        eventually_gone(&connections, first).await;
    }

    #[tokio::test]
    async fn kept_connections_idle_past_the_pools_idle_timeout_are_closed() {
        let options = PgPoolOptions::new()
            .max_connections(3)
            .idle_timeout(Duration::from_millis(300));
        let Some(connections) = pg_with(options).await else {
            return;
        };
        // Two connections at once, both kept.
        let (mut a, mut b) = (
            connections.acquire().await.unwrap(),
            connections.acquire().await.unwrap(),
        );
        let (first, second) = (lent_backend(&mut a).await, lent_backend(&mut b).await);
        drop((a, b));
        assert_eq!(connections.idle(), 2);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let now = backend(&connections).await;
        assert!(now != first && now != second, "an idle one was lent again");
        assert_eq!(connections.idle(), 1, "only the new one is kept");
        eventually_gone(&connections, first).await;
        eventually_gone(&connections, second).await;
    }

    #[tokio::test]
    async fn giving_back_keeps_nothing() {
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect("sqlite::memory:")
            .await
            .unwrap();
        let connections = Connections::giving_back(pool);
        sqlx::query("SELECT 1").execute(&connections).await.unwrap();
        assert_eq!(connections.idle(), 0);
    }

    #[tokio::test]
    async fn a_query_that_fails_lets_its_connection_go() {
        let Some(connections) = pg(2).await else {
            return;
        };
        backend(&connections).await;
        assert!(
            sqlx::query("SELECT * FROM no_such_table")
                .execute(&connections)
                .await
                .is_err()
        );
        assert_eq!(connections.idle(), 0);
        // Still usable: sqlx pinged it and took it back.
        backend(&connections).await;
    }

    #[tokio::test]
    async fn a_connection_with_a_rollback_queued_goes_back_to_the_pool_and_holds_no_lock() {
        let Some(connections) = pg(2).await else {
            return;
        };
        sqlx::query("CREATE TABLE held (id INT PRIMARY KEY)")
            .execute(&connections)
            .await
            .unwrap();
        sqlx::query("INSERT INTO held VALUES (1)")
            .execute(&connections)
            .await
            .unwrap();
        {
            let mut conn = connections.acquire().await.unwrap();
            let mut tx = sqlx::Connection::begin(&mut *conn).await.unwrap();
            sqlx::query("SELECT id FROM held WHERE id = 1 FOR UPDATE")
                .execute(&mut *tx)
                .await
                .unwrap();
            // Dropped unfinished: its ROLLBACK is queued on the connection, not yet sent.
        }
        assert_eq!(
            connections.idle(),
            0,
            "a connection with work queued is not kept"
        );
        // sqlx's ping on its way back sends the ROLLBACK: the row is free again.
        let mut other = connections.acquire().await.unwrap();
        let mut tx = sqlx::Connection::begin(&mut *other).await.unwrap();
        sqlx::query("SET LOCAL lock_timeout = '2s'")
            .execute(&mut *tx)
            .await
            .unwrap();
        sqlx::query("SELECT id FROM held WHERE id = 1 FOR UPDATE")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    #[tokio::test]
    async fn no_more_connections_are_lent_at_once_than_the_pool_may_open() {
        let Some(connections) = pg(1).await else {
            return;
        };
        let held = connections.acquire().await.unwrap();
        assert!(matches!(
            connections.acquire().await,
            Err(sqlx::Error::PoolTimedOut)
        ));
        drop(held);
        connections.acquire().await.unwrap();
    }
}
