//! The SQL family: how [`crate::SqliteStore`] and [`crate::PgStore`] become a [`crate::Store`].
//!
//! sqlx's executor traits make a generic `impl<DB> AgentStore for SqlStore<DB>` a wall of
//! bounds, so each aggregate's implementation is a `macro_rules!` in its own module
//! (`agents/sql.rs`, `runs/sql.rs`, …) that [`impl_store!`] expands for each database, running
//! the same statements (`<aggregate>/queries.rs`). A store type only supplies:
//! - a `pool` field, for reads, and a `dispatch` method, how a write's body is given its
//!   connection ([`crate::write::WriteConn`]) and run (SQLite: queued for the one writer
//!   task, which commits in batches, see [`crate::group_commit`]; PostgreSQL: a pooled
//!   connection on a task of its own);
//! - `lock_default_agent`, `lock_users` and `lock_kb_changes`, how it serializes default-agent
//!   changes, account changes and appends to the knowledge base change log;
//! - `CLAIM_KB_DOCUMENT`, its variant of the claim query, and `USAGE_ROWS`, of the usage
//!   roll-up (the day of a timestamp); `dialect`, its text of a statement written for both
//!   ([`crate::shares::Dialects`]: a shared resource read with its shares, as JSON);
//! - `APPEND_MESSAGE_AT_ONCE`, `CREATE_RUN_WITH_INPUT_AT_ONCE` and
//!   `FINISH_RUN_WITH_ANSWER_AT_ONCE`: `Some` query that does the whole write in one round trip
//!   ([`AtOnce`]; SQLite: several statements in one query; PostgreSQL: one call of a function
//!   that runs the statements, migration 0022), or `None` for the statement-by-statement path
//!   (which the writes these do not cover still take: a message that tells a parent of its
//!   child's end, a run that wakes a parent or replaces messages);
//! - `Clone`, cheaply (pools and `Arc`s).
//!
//! **Invariant:** every write runs through `write` on the connection it is given (SQLite: the
//! one writer connection; PostgreSQL: the same pool as reads), never on `pool`: timed,
//! counted, and never on its caller's task (see [`crate::write`]). What a write reads, it
//! reads on that connection, so it sees the writes committed with it.
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
            /// Runs the write `body` as `operation` on the connection this store gives it
            /// ([`crate::write::WriteConn`]) and waits for it to commit: never on the caller's
            /// task, so a caller that stops waiting cannot leave it halfway.
            async fn write<T, F>(
                &self,
                operation: &'static str,
                body: impl FnOnce($crate::write::WriteConn<$db>) -> F + Send + 'static,
            ) -> $crate::Result<T>
            where
                T: Send + 'static,
                F: std::future::Future<Output = $crate::Result<T>> + Send + 'static,
            {
                self.writes.record(operation);
                self.dispatch(operation, body).await
            }

            /// Deletes, as write `operation`, the row that `sql` selects by its one bind, `id`
            /// (what goes with it goes by `ON DELETE CASCADE`, in the same statement).
            async fn delete_by_id(
                &self,
                operation: &'static str,
                sql: &'static str,
                id: String,
            ) -> $crate::Result<$crate::Deleted> {
                self.write(operation, move |mut conn| async move {
                    let done = sqlx::query(sql).bind(&id).execute(&mut *conn).await?;
                    Ok($crate::Deleted::from_rows(done.rows_affected()))
                })
                .await
            }

            /// Every row of `query`, one query of several statements: read whole, since sqlx
            /// stops a query asked for fewer rows at the first, and the statements after it
            /// would not run. Its text is an [`AtOnce`]($crate::sql_store::AtOnce)'s for
            /// `scope`: a statement that fails leaves the transaction or savepoint the text
            /// began open, and it is undone here, so the writer's connection leaves the write
            /// as it found it. (An undo that fails found nothing open: SQLite rolls some
            /// failures back itself — the batch's whole transaction, then, whose commit fails
            /// and answers every write of it an error.)
            async fn rows_at_once<'q>(
                conn: &mut <$db as sqlx::Database>::Connection,
                query: sqlx::query::Query<'q, $db, <$db as sqlx::Database>::Arguments<'q>>,
                scope: $crate::sql_store::Scope,
            ) -> $crate::Result<Vec<<$db as sqlx::Database>::Row>> {
                match query.fetch_all(&mut *conn).await {
                    Ok(rows) => Ok(rows),
                    // PostgreSQL's function refused the write: its statement, and so everything
                    // it wrote, is rolled back already.
                    Err(err) if $crate::sql_store::refused(&err) => Ok(Vec::new()),
                    Err(err) => {
                        let undone =
                            sqlx::Executor::execute(&mut *conn, sqlx::raw_sql(scope.undo()))
                                .await;
                        if let Err(undo) = undone {
                            tracing::debug!(%undo, "a failed write left nothing open");
                        }
                        Err(err.into())
                    }
                }
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
                let sql = sql.to_owned();
                self.write("execute_raw", move |mut conn| async move {
                    let done = sqlx::Executor::execute(&mut *conn, sql.as_str()).await?;
                    Ok(done.rows_affected())
                })
                .await
            }
        }
    };
}

pub(crate) use impl_store;

/// How many ids one `IN (…)` statement binds: far below SQLite's and PostgreSQL's
/// bind-parameter limits, so a longer list is read in chunks of this many.
pub(crate) const IN_LIST_CHUNK: usize = 500;

/// `$1, …, $n`: the placeholders of an `IN (…)` list of `n` (≥ 1) binds.
pub(crate) fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A query that takes binds, sqlx's `Query` or `QueryAs`: so one function binds the same
/// arguments to a statement whatever it answers.
pub(crate) trait Binds<'q, DB: sqlx::Database>: Sized {
    fn bind<T: 'q + sqlx::Encode<'q, DB> + sqlx::Type<DB>>(self, value: T) -> Self;
}

impl<'q, DB: sqlx::Database> Binds<'q, DB>
    for sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
{
    fn bind<T: 'q + sqlx::Encode<'q, DB> + sqlx::Type<DB>>(self, value: T) -> Self {
        sqlx::query::Query::bind(self, value)
    }
}

impl<'q, DB: sqlx::Database, O> Binds<'q, DB>
    for sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>
{
    fn bind<T: 'q + sqlx::Encode<'q, DB> + sqlx::Type<DB>>(self, value: T) -> Self {
        sqlx::query::QueryAs::bind(self, value)
    }
}

/// A write as one query of several statements, in its two texts, each a transaction of its
/// own, begun and ended in that one query — one round trip to SQLite's writer connection,
/// where beginning and ending were two more: for a write alone in the writer's queue, `BEGIN
/// IMMEDIATE; …; COMMIT`; for a write in a batch, its savepoint in the batch's transaction
/// (`SAVEPOINT ars_write; …; RELEASE ars_write`, which commits with the batch). See
/// [`crate::write::WriteConn::at_once`].
///
/// Every statement is conditioned so that a refused write (no row back) changes nothing: the
/// text ends its transaction whatever happened, and the caller reads why after. PostgreSQL's
/// text is one statement, a function's call, and so its own transaction: its function refuses
/// by raising [`REFUSED`], which rolls the statement back, and `rows_at_once` answers no row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtOnce {
    pub(crate) alone: &'static str,
    pub(crate) in_batch: &'static str,
}

impl AtOnce {
    /// A write whose one text is the same wherever it runs: PostgreSQL's, one statement that
    /// is its own transaction (every PostgreSQL write has its connection to itself).
    pub(crate) const fn one(text: &'static str) -> Self {
        Self {
            alone: text,
            in_batch: text,
        }
    }

    /// The text for a write in `scope`.
    pub(crate) fn text(self, scope: Scope) -> &'static str {
        match scope {
            Scope::Alone => self.alone,
            Scope::InBatch => self.in_batch,
        }
    }
}

/// The SQLSTATE with which PostgreSQL's writes at once refuse to write (migration 0022): the
/// statement fails, so nothing it wrote stays, and the store answers as for a write at once
/// that returned no row.
pub(crate) const REFUSED: &str = "ARS01";

/// Whether `err` is a write at once's refusal ([`REFUSED`]).
pub(crate) fn refused(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|db| db.code())
        .is_some_and(|code| code == REFUSED)
}

/// Where a write at once runs: alone on the writer's connection, or in a batch's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    Alone,
    InBatch,
}

impl Scope {
    /// What undoes an [`AtOnce`] text in this scope that failed partway.
    pub(crate) fn undo(self) -> &'static str {
        match self {
            Self::Alone => "ROLLBACK",
            Self::InBatch => "ROLLBACK TO ars_write; RELEASE ars_write",
        }
    }
}

/// The [`AtOnce`] of `$sql`, a text of literals (`concat!` of literals and macros).
macro_rules! at_once {
    ($sql:expr) => {
        $crate::sql_store::AtOnce {
            alone: concat!("BEGIN IMMEDIATE; ", $sql, "; COMMIT"),
            in_batch: concat!("SAVEPOINT ars_write; ", $sql, "; RELEASE ars_write"),
        }
    };
}
pub(crate) use at_once;
