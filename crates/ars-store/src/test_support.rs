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
    let schema = format!("ars_test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(url)
        .await
        .expect("connect to the test PostgreSQL server");
    sqlx::raw_sql(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .expect("create the test schema");
    admin.close().await.expect("close the setup connection");

    let options = PgConnectOptions::from_str(url)
        .expect("parse ARS_TEST_DATABASE_URL")
        .options([("search_path", schema.as_str())]);
    PgStore::connect_with(options)
        .await
        .expect("open a fresh PostgreSQL store")
}
