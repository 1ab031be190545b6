//! Fresh, isolated databases for tests (feature `test-utils`).
//!
//! Every call gives a new database: a SQLite file in its own temporary directory, or a new
//! PostgreSQL schema selected through `search_path`, so tests running in parallel never see
//! each other's rows. PostgreSQL suites run only when `ARS_TEST_DATABASE_URL` is set; callers
//! skip them quietly otherwise (never `#[ignore]`).

// Test helpers fail loudly: a test cannot proceed without its database, and the panic message
// says which step broke.
#![allow(clippy::expect_used)]

use std::str::FromStr;

use async_trait::async_trait;
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};

use crate::{PgStore, Result, SqliteStore};

/// The environment variable naming the PostgreSQL server test suites run against.
pub const PG_URL_VAR: &str = "ARS_TEST_DATABASE_URL";

/// Raw SQL against a store, bypassing every check the `Store` methods make: lets tests show
/// that the schema itself rejects what the domain forbids.
#[async_trait]
pub trait RawSql {
    /// Runs `sql` (one or more statements) and returns the rows affected.
    async fn execute_raw(&self, sql: &str) -> Result<u64>;
}

/// A migrated SQLite store in a new temporary directory; keep the directory alive as long as
/// the store.
pub async fn sqlite_fresh() -> (SqliteStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let store = SqliteStore::open(&dir.path().join("ars.db"))
        .await
        .expect("open a fresh SQLite store");
    (store, dir)
}

/// The PostgreSQL server to test against, from `ARS_TEST_DATABASE_URL`; `None` skips.
pub fn pg_url() -> Option<String> {
    std::env::var(PG_URL_VAR).ok().filter(|url| !url.is_empty())
}

/// A migrated PostgreSQL store in a new schema `ars_test_<uuid>` of the database at `url`.
///
/// The schemas are left behind (dropping them would need an async drop); they are small and
/// their names say what they are.
pub async fn pg_fresh(url: &str) -> PgStore {
    let schema = pg_new_schema(url).await;
    pg_open_schema(url, &schema).await
}

/// Creates a new, empty schema `ars_test_<uuid>` in the database at `url` and answers its name,
/// for tests that put something in it before the store opens it (an older schema version).
pub async fn pg_new_schema(url: &str) -> String {
    let schema = format!("ars_test_{}", uuid::Uuid::new_v4().simple());
    pg_admin(
        url,
        &format!("CREATE SCHEMA {schema}"),
        "create the test schema",
    )
    .await;
    schema
}

/// Connection options for `url` that work inside `schema` (its `search_path`), so tables,
/// including sqlx's `_sqlx_migrations`, are created and found there.
pub fn pg_schema_options(url: &str, schema: &str) -> PgConnectOptions {
    PgConnectOptions::from_str(url)
        .expect("parse ARS_TEST_DATABASE_URL")
        .options([("search_path", schema)])
}

/// Opens the store in `schema` as `PgStore::connect` would, migrating it to the current
/// version from whatever version it holds.
pub async fn pg_open_schema(url: &str, schema: &str) -> PgStore {
    PgStore::connect_with(
        pg_schema_options(url, schema),
        crate::postgres::DEFAULT_MAX_CONNECTIONS,
    )
    .await
    .expect("open the PostgreSQL store in the test schema")
}

/// Drops `schema` and everything in it.
pub async fn pg_drop_schema(url: &str, schema: &str) {
    let sql = format!("DROP SCHEMA {schema} CASCADE");
    pg_admin(url, &sql, "drop the test schema").await;
}

/// Runs one statement on a connection of its own, outside any test schema.
async fn pg_admin(url: &str, sql: &str, what: &str) {
    let mut admin = PgConnection::connect(url)
        .await
        .expect("connect to the test PostgreSQL server");
    sqlx::raw_sql(sql).execute(&mut admin).await.expect(what);
    admin.close().await.expect("close the setup connection");
}
