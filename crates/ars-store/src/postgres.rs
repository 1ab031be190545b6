//! [`PgStore`]: the scaled store, one PostgreSQL database shared by several ARS instances.

use std::str::FromStr;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{Postgres, Transaction};

use crate::Result;
use crate::store_impl::impl_store;

/// The PostgreSQL schema, embedded at compile time.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/postgres");

/// Connections per instance; several instances share the server's connection limit.
const MAX_CONNECTIONS: u32 = 10;

/// The PostgreSQL implementation of [`crate::Store`].
#[derive(Clone, Debug)]
pub struct PgStore {
    pool: PgPool,
}

impl PgStore {
    /// Connects to a `postgres://` (or `postgresql://`) URL and migrates the database.
    /// Migrations take an advisory lock, so instances starting together migrate once.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with(PgConnectOptions::from_str(url)?).await
    }

    /// Like [`PgStore::connect`], with options already built (a test's own `search_path`).
    pub(crate) async fn connect_with(options: PgConnectOptions) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .connect_with(options)
            .await?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool })
    }

    /// Starts a write transaction (PostgreSQL locks rows as statements touch them).
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>> {
        Ok(self.pool.begin().await?)
    }
}

impl_store!(PgStore, Postgres, "postgres");
