//! [`SqliteStore`]: the embedded default, one SQLite file in WAL mode.
//!
//! WAL lets readers run beside the one writer; a 5 s busy timeout makes a second writer wait
//! instead of failing. Write transactions start with `BEGIN IMMEDIATE`, taking the write lock up
//! front: a deferred transaction that reads first and writes later can fail with `SQLITE_BUSY`
//! at once (no busy wait) when another writer committed in between.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, SqliteConnection, Transaction};

use crate::Result;
use crate::store_impl::impl_store;

/// The SQLite schema, embedded at compile time.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/sqlite");

/// How long a writer waits for another writer's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections in a file store's pool: several readers can run beside the one writer.
const MAX_CONNECTIONS: u32 = 8;

/// The SQLite implementation of [`crate::Store`].
#[derive(Clone, Debug)]
pub struct SqliteStore {
    /// Readers share it; writers queue on SQLite's write lock (see [`BUSY_TIMEOUT`]).
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating it and its parent directory if needed) the database at a `sqlite:` URL,
    /// e.g. `sqlite://data/ars.db` or `sqlite::memory:`, and migrates it.
    pub async fn connect(url: &str) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url)?;
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        if !in_memory {
            create_parent_dir(options.get_filename())?;
        }
        Self::connect_with(options, in_memory).await
    }

    /// Opens the database file at `path` (creating it if needed) and migrates it.
    pub async fn open(path: &Path) -> Result<Self> {
        create_parent_dir(path)?;
        Self::connect_with(SqliteConnectOptions::new().filename(path), false).await
    }

    async fn connect_with(options: SqliteConnectOptions, in_memory: bool) -> Result<Self> {
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let pool_options = if in_memory {
            // An in-memory database lives as long as its connections: keep exactly one open
            // for the pool's whole life, so nothing is lost and nothing contends for it.
            SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
        } else {
            SqlitePoolOptions::new().max_connections(MAX_CONNECTIONS)
        };
        let pool = pool_options.connect_with(options).await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool })
    }

    /// Starts a write transaction holding the write lock from its first statement.
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Nothing to do: a write transaction already holds the database's one write lock, so
    /// default changes never interleave.
    async fn lock_default_agent(_conn: &mut SqliteConnection) -> Result<()> {
        Ok(())
    }
}

/// Creates the directory the database file goes in, so a fresh data directory just works.
fn create_parent_dir(file: &Path) -> Result<()> {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|e| crate::StoreError::Database(e.into()))
        }
        _ => Ok(()),
    }
}

impl_store!(SqliteStore, Sqlite, "sqlite");
