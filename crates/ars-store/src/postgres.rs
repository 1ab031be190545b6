//! [`PgStore`]: the scaled store, one PostgreSQL database shared by several ARS instances.

use std::str::FromStr;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgConnection, Postgres};

use crate::Result;
use crate::kept::Connections;
use crate::sql_store::impl_store;
use crate::write::WriteConn;

/// The PostgreSQL schema, embedded at compile time.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/postgres");

/// Connections per instance unless configured; several instances share the server's
/// connection limit. Measured with the load bench (see docs/BENCHMARKS.md, "PostgreSQL pool
/// size"): more connections did not serve more runs on the 2-core machine.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// How long a pooled connection may sit idle before it is pinged as it is taken again. sqlx
/// pings every connection as it is given back to the pool (that stays); by default it pings it
/// again as it is taken, one more round trip in front of every query. A connection given back
/// less than this long ago was answering then, so it is used as it is; one idle longer (the
/// server or the network may have dropped it since) is pinged first and replaced if it does
/// not answer.
const PING_IDLE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// The advisory lock key that serializes default-agent changes (`ARS_DEFA` in ASCII).
const DEFAULT_AGENT_LOCK: i64 = 0x4152_535f_4445_4641;

/// The advisory lock key that serializes changes of roles and disabled flags (`ARS_USER`).
const USERS_LOCK: i64 = 0x4152_535f_5553_4552;

/// The advisory lock key that serializes appends to the knowledge base change log
/// (`ARS_KBCH`).
const KB_CHANGES_LOCK: i64 = 0x4152_535f_4b42_4348;

/// The PostgreSQL implementation of [`crate::Store`]: a cheap `Clone` handle (a pool).
#[derive(Clone, Debug)]
pub struct PgStore {
    /// Reads and writes alike, on connections kept between uses (see [`crate::kept`]).
    pool: Connections<Postgres>,
    /// The writes made through any clone of this store.
    writes: std::sync::Arc<crate::write::WriteCounts>,
}

impl PgStore {
    /// Connects to a `postgres://` (or `postgresql://`) URL and migrates the database.
    /// Migrations take an advisory lock, so instances starting together migrate once.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_sized(url, DEFAULT_MAX_CONNECTIONS).await
    }

    /// Like [`PgStore::connect`], keeping at most `max_connections` (at least 1) open.
    pub async fn connect_sized(url: &str, max_connections: u32) -> Result<Self> {
        Self::connect_with(PgConnectOptions::from_str(url)?, max_connections).await
    }

    /// Like [`PgStore::connect_sized`], with options already built (a test's own
    /// `search_path`).
    pub(crate) async fn connect_with(
        options: PgConnectOptions,
        max_connections: u32,
    ) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections.max(1))
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for >= PING_IDLE_AFTER {
                        sqlx::Connection::ping(conn).await?;
                    }
                    Ok(true)
                })
            })
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self {
            pool: Connections::keeping(pool, Some(PING_IDLE_AFTER)),
            writes: std::sync::Arc::default(),
        })
    }

    /// Runs the write `body` on a connection of the pool (the same as reads: PostgreSQL locks
    /// rows, not the database, and many writers run at once), on a task of its own (see
    /// [`crate::write::detached`]), and waits for it.
    async fn dispatch<T, F>(
        &self,
        operation: &'static str,
        body: impl FnOnce(WriteConn<Postgres>) -> F + Send + 'static,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        let pool = self.pool.clone();
        crate::write::detached(operation, async move {
            let conn = pool.acquire().await?;
            body(WriteConn::Own {
                conn,
                begin: "BEGIN",
            })
            .await
        })
        .await
    }

    /// Serializes default-agent changes across connections and instances until commit.
    ///
    /// Under READ COMMITTED, two transactions making different agents the default would each
    /// find no other default to clear, and the second would fail on the one-default index.
    /// With this lock the second waits, then its clearing statement sees the first's default.
    async fn lock_default_agent(conn: &mut PgConnection) -> Result<()> {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(DEFAULT_AGENT_LOCK)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Serializes account changes across connections and instances until commit: two admins
    /// demoting each other at once would otherwise each still see the other as an admin, and
    /// both succeed, leaving none.
    async fn lock_users(conn: &mut PgConnection) -> Result<()> {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(USERS_LOCK)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Serializes appends to the knowledge base change log until commit, so entries commit in
    /// `seq` order.
    ///
    /// A `BIGSERIAL` hands out numbers when rows are inserted, not when they commit: without
    /// this lock a reader could see entry 12 before entry 11 commits, move past 11 and never
    /// apply it. Writers take it just before their append, the last statement before commit.
    async fn lock_kb_changes(conn: &mut PgConnection) -> Result<()> {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(KB_CHANGES_LOCK)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// Concurrent claims skip documents another claim has locked.
    const CLAIM_KB_DOCUMENT: &'static str = crate::knowledge::queries::CLAIM_KB_DOCUMENT_POSTGRES;

    /// The UTC day of a `timestamptz`.
    const USAGE_ROWS: &'static str = crate::usage::queries::USAGE_ROWS_POSTGRES;

    /// PostgreSQL runs one statement per query with binds: each write at once is a call of a
    /// function that runs the statement-by-statement path's statements, in their order, in
    /// one statement (migration 0022).
    const APPEND_MESSAGE_AT_ONCE: Option<crate::sql_store::AtOnce> =
        Some(crate::conversations::queries::APPEND_MESSAGE_AT_ONCE_POSTGRES);

    /// As `APPEND_MESSAGE_AT_ONCE`.
    const CREATE_RUN_WITH_INPUT_AT_ONCE: Option<crate::runs::RunAtOnce> =
        Some(crate::runs::queries::CREATE_RUN_WITH_INPUT_AT_ONCE_POSTGRES);

    /// As `APPEND_MESSAGE_AT_ONCE`.
    const FINISH_RUN_WITH_ANSWER_AT_ONCE: Option<crate::sql_store::AtOnce> =
        Some(crate::runs::queries::FINISH_RUN_WITH_ANSWER_AT_ONCE_POSTGRES);

    /// PostgreSQL's text of a statement the two databases spell differently.
    fn dialect(statement: &crate::shares::Dialects) -> &'static str {
        statement.postgres
    }
}

impl_store!(PgStore, Postgres, "postgres");

#[cfg(test)]
mod tests {
    use sqlx::Connection;

    use crate::test_support::{pg_new_schema, pg_schema_options, pg_url};

    use super::*;

    #[tokio::test]
    async fn the_pool_keeps_at_most_the_connections_it_is_given_and_at_least_one() {
        let Some(url) = pg_url() else { return };
        let schema = pg_new_schema(&url).await;
        let sized = PgStore::connect_with(pg_schema_options(&url, &schema), 3)
            .await
            .unwrap();
        assert_eq!(sized.pool.pool().options().get_max_connections(), 3);
        let none = PgStore::connect_with(pg_schema_options(&url, &schema), 0)
            .await
            .unwrap();
        assert_eq!(none.pool.pool().options().get_max_connections(), 1);
    }

    #[tokio::test]
    async fn a_connection_the_server_dropped_while_idle_is_replaced_before_a_query_uses_it() {
        let Some(url) = pg_url() else { return };
        let schema = pg_new_schema(&url).await;
        let name = format!("ars-idle-{schema}");
        let store =
            PgStore::connect_with(pg_schema_options(&url, &schema).application_name(&name), 2)
                .await
                .unwrap();
        let one: (i32,) = sqlx::query_as("SELECT 1")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(one.0, 1);
        // The server ends every backend of the pool while the connections sit idle.
        let mut admin = sqlx::PgConnection::connect_with(&pg_schema_options(&url, &schema))
            .await
            .unwrap();
        let ended: Vec<(bool,)> = sqlx::query_as(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        )
        .bind(&name)
        .fetch_all(&mut admin)
        .await
        .unwrap();
        assert!(
            !ended.is_empty() && ended.iter().all(|(done,)| *done),
            "{ended:?}"
        );
        tokio::time::sleep(PING_IDLE_AFTER + std::time::Duration::from_millis(200)).await;
        for _ in 0..3 {
            let one: (i32,) = sqlx::query_as("SELECT 1")
                .fetch_one(&store.pool)
                .await
                .unwrap();
            assert_eq!(one.0, 1);
        }
    }
}
