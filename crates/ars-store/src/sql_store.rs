//! The SQL family: how [`crate::SqliteStore`] and [`crate::PgStore`] become a [`crate::Store`].
//!
//! sqlx's executor traits make a generic `impl<DB> AgentStore for SqlStore<DB>` a wall of
//! bounds, so each aggregate's implementation is a `macro_rules!` in its own module
//! (`agents/sql.rs`, `runs/sql.rs`, …) that [`impl_store!`] expands for each database, running
//! the same statements (`<aggregate>/queries.rs`). A store type only supplies:
//! - a `pool` field, for reads, and a `writer` method, the pool every write uses;
//! - `begin_write`, how that database starts a write transaction on the writer;
//! - `lock_default_agent`, `lock_users` and `lock_kb_changes`, how it serializes default-agent
//!   changes, account changes and appends to the knowledge base change log;
//! - `CLAIM_KB_DOCUMENT`, its variant of the claim query, and `USAGE_ROWS`, of the usage
//!   roll-up (the day of a timestamp);
//! - `Clone`, cheaply (pools and `Arc`s): each write runs on a clone of its own.
//!
//! **Invariant:** every write runs on `writer()` (SQLite: its one writer connection, so writers
//! queue in-process; PostgreSQL: the same pool as reads), never on `pool`, and through
//! `write` (see [`crate::write`]): on a task of its own, timed and counted.
//! **Invariant:** every write is one transaction (or one statement), and agents, threads,
//! messages and runs are returned as read back inside it (a read or `RETURNING`), so callers see
//! exactly what was stored.

/// Implements every aggregate's trait (so `Store`), and with `test-utils` `RawSql`, for
/// `$store` over database `$db`; `kind()` answers `$kind`.
macro_rules! impl_store {
    ($store:ident, $db:ty, $kind:literal) => {
        impl $crate::StoreKind for $store {
            fn kind(&self) -> &'static str {
                $kind
            }

            fn writes(&self) -> std::collections::BTreeMap<&'static str, u64> {
                self.writes.snapshot()
            }
        }

        impl $store {
            /// Runs the write `body` as `operation` on a clone of this store, on a task of its
            /// own ([`crate::write::detached`]), and waits for it.
            async fn write<T, F>(
                &self,
                operation: &'static str,
                body: impl FnOnce(Self) -> F,
            ) -> $crate::Result<T>
            where
                T: Send + 'static,
                F: std::future::Future<Output = $crate::Result<T>> + Send + 'static,
            {
                self.writes.record(operation);
                $crate::write::detached(operation, body(self.clone())).await
            }

            /// Deletes, as write `operation`, the row that `sql` selects by its one bind, `id`
            /// (what goes with it goes by `ON DELETE CASCADE`, in the same statement).
            async fn delete_by_id(
                &self,
                operation: &'static str,
                sql: &'static str,
                id: String,
            ) -> $crate::Result<$crate::Deleted> {
                self.write(operation, move |this| async move {
                    let done = sqlx::query(sql).bind(&id).execute(this.writer()).await?;
                    Ok($crate::Deleted::from_rows(done.rows_affected()))
                })
                .await
            }
        }

        $crate::shares::impl_shares!($store, $db);
        $crate::accounts::sql::impl_account_store!($store, $db);
        $crate::agents::sql::impl_agent_store!($store, $db);
        $crate::skills::sql::impl_skill_store!($store, $db);
        $crate::mcp::sql::impl_mcp_store!($store, $db);
        $crate::knowledge::sql::impl_knowledge_store!($store, $db);
        $crate::providers::sql::impl_provider_store!($store, $db);
        $crate::conversations::sql::impl_conversation_store!($store, $db);
        $crate::runs::sql::impl_run_store!($store, $db);
        $crate::protocols::sql::impl_protocol_store!($store, $db);
        $crate::usage::sql::impl_usage_store!($store, $db);

        #[cfg(feature = "test-utils")]
        #[async_trait::async_trait]
        impl $crate::test_support::RawSql for $store {
            async fn execute_raw(&self, sql: &str) -> $crate::Result<u64> {
                let done = sqlx::raw_sql(sql).execute(self.writer()).await?;
                Ok(done.rows_affected())
            }
        }
    };
}

pub(crate) use impl_store;
