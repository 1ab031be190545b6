//! [`SqliteStore`]: the embedded default, one SQLite file in WAL mode.
//!
//! SQLite lets one writer at a time hold its write lock, and a writer that finds it taken sleeps
//! in SQLite's busy handler with growing back-off. So every write here goes through one
//! dedicated writer connection, driven by one writer task: writes queue for it in-process,
//! first come first served, and what is queued together commits together (group commit, see
//! `group_commit`). Reads use a separate pool of read-only connections, which WAL lets run
//! beside the writer (and which refuse any write that misses the writer).
//!
//! Durability: WAL with `synchronous = NORMAL`. A write is answered once its transaction has
//! committed to the log, so a crash of the process (kill -9) loses no answered write; the log
//! is synced to disk at checkpoints, so a power loss may lose the commits since the last one.
//!
//! Checkpoints, which copy the log back into the database file and sync both, run beside the
//! writer too (see `checkpoint`), not inside one unlucky commit.
//!
//! Every write counts as queued (`ars_store_write_queue_depth`, see `metrics`) from the moment
//! it is queued until it is answered.
//!
//! The 5 s busy timeout stays as a backstop for another process opening the same file. Write
//! transactions still start with `BEGIN IMMEDIATE`, taking the write lock up front: a deferred
//! transaction that reads first and writes later can fail with `SQLITE_BUSY` at once (no busy
//! wait) when another process committed in between.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, SqliteConnection};

use crate::Result;
use crate::checkpoint::{BACKSTOP_PAGES, Checkpointer};
use crate::group_commit::Writer;
use crate::kept::Connections;
use crate::sql_store::impl_store;
use crate::write::WriteConn;

/// The SQLite schema, embedded at compile time.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/sqlite");

/// How long a writer waits for another process's write lock before giving up. Writers of this
/// process never wait here: they queue for the one writer connection instead.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Read-only connections in a file store's reader pool, beside its one writer connection.
const MAX_READERS: u32 = 8;

/// The SQLite implementation of [`crate::Store`]: a cheap `Clone` handle (pools and an `Arc`).
#[derive(Clone, Debug)]
pub struct SqliteStore {
    /// Read-only connections for every read, kept between reads (see [`crate::kept`]); WAL
    /// lets them run beside the writer. For an in-memory database this is the same one
    /// connection as `writer`'s, given back to its pool after each read.
    pool: Connections<Sqlite>,
    /// The queue to the writer task, which writes on a pool of exactly one connection (and
    /// keeps it, for a file): writers wait in-process, in order, rather than in SQLite's busy
    /// handler.
    writer: Writer,
    /// Keeps the WAL checkpointer running while any clone of the store lives; `None` for an
    /// in-memory database.
    _checkpointer: Option<Arc<Checkpointer>>,
    /// The writes made through any clone of this store.
    writes: Arc<crate::write::WriteCounts>,
}

/// Brings the database up to the latest migration on the pool's one writing connection, with
/// foreign-key enforcement off and a `foreign_key_check` after: SQLite's documented way to
/// rebuild a table that other tables reference (a CHECK constraint cannot change in place),
/// which would otherwise fire their `ON DELETE` actions when the old table is dropped.
async fn migrate(pool: &SqlitePool) -> Result<()> {
    let mut conn = pool.acquire().await?;
    sqlx::query("PRAGMA foreign_keys = OFF")
        .execute(&mut *conn)
        .await?;
    let migrated = MIGRATOR.run(&mut *conn).await;
    let broken: std::result::Result<Vec<(String,)>, sqlx::Error> =
        sqlx::query_as("SELECT \"table\" FROM pragma_foreign_key_check")
            .fetch_all(&mut *conn)
            .await;
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut *conn)
        .await?;
    migrated?;
    let broken = broken?;
    if let Some((table,)) = broken.first() {
        return Err(crate::StoreError::Invalid(format!(
            "after migrating, {} row(s) of `{table}` refer to rows that are not there",
            broken.len()
        )));
    }
    Ok(())
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
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        // A local connection cannot drop like a network one: skip sqlx's ping before each
        // acquire, a round trip to the connection's thread on every write's path.
        let pool_options = SqlitePoolOptions::new().test_before_acquire(false);
        if in_memory {
            // An in-memory database lives as long as its connections: keep exactly one open
            // for the pool's whole life, so nothing is lost. Reads and writes share it, so
            // writes still queue in-process; there is no log to checkpoint.
            let pool = pool_options
                .max_connections(1)
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options.create_if_missing(true))
                .await?;
            migrate(&pool).await?;
            let connections = Connections::giving_back(pool);
            return Ok(Self {
                writer: Writer::start(connections.clone()),
                pool: connections,
                _checkpointer: None,
                writes: Arc::default(),
            });
        }
        let (checkpointer, checkpoint_task) = Checkpointer::new();
        // The writer opens (and creates) the file and switches it to WAL before any other
        // connection: a read-only one can do neither.
        let writer = pool_options
            .clone()
            .max_connections(1)
            .after_connect(checkpointer.commit_hook())
            .connect_with(
                options
                    .clone()
                    .create_if_missing(true)
                    .pragma("wal_autocheckpoint", BACKSTOP_PAGES.to_string()),
            )
            .await?;
        migrate(&writer).await?;
        checkpoint_task.start(&options).await?;
        let pool = pool_options
            .max_connections(MAX_READERS)
            .connect_with(options.read_only(true))
            .await?;
        Ok(Self {
            pool: Connections::keeping(pool, None),
            writer: Writer::start(Connections::keeping(writer, None)),
            _checkpointer: Some(Arc::new(checkpointer)),
            writes: Arc::default(),
        })
    }

    /// How many rounds the writer has made: each one write alone in its own transaction, or a
    /// batch of writes queued together and committed in one (group commit).
    pub fn writer_rounds(&self) -> u64 {
        self.writer.rounds()
    }

    /// Queues the write `body` for the writer task (see `group_commit`) and waits for it.
    async fn dispatch<T, F>(
        &self,
        operation: &'static str,
        body: impl FnOnce(WriteConn<Sqlite>) -> F + Send + 'static,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T>> + Send + 'static,
    {
        self.writer.write(operation, body).await
    }

    /// Nothing to do: a write transaction already holds the database's one write lock, so
    /// default changes never interleave.
    async fn lock_default_agent(_conn: &mut SqliteConnection) -> Result<()> {
        Ok(())
    }

    /// Nothing to do, for the same reason: account changes never interleave.
    async fn lock_users(_conn: &mut SqliteConnection) -> Result<()> {
        Ok(())
    }

    /// Nothing to do, for the same reason: appends to the change log commit in `seq` order.
    async fn lock_kb_changes(_conn: &mut SqliteConnection) -> Result<()> {
        Ok(())
    }

    /// Claims run one at a time on the one writer, so the claim needs no row locks.
    const CLAIM_KB_DOCUMENT: &'static str = crate::knowledge::queries::CLAIM_KB_DOCUMENT_SQLITE;

    /// RFC 3339 text: the day is its first ten characters.
    const USAGE_ROWS: &'static str = crate::usage::queries::USAGE_ROWS_SQLITE;

    /// Several statements in one query: one round trip to the writer's connection for the
    /// commonest write instead of five (`BEGIN IMMEDIATE`, three statements, `COMMIT`).
    const APPEND_MESSAGE_AT_ONCE: Option<crate::sql_store::AtOnce> =
        Some(crate::conversations::queries::APPEND_MESSAGE_AT_ONCE_SQLITE);

    /// The same for a run and its input (and its new thread): one round trip instead of six
    /// (or seven).
    const CREATE_RUN_WITH_INPUT_AT_ONCE: Option<crate::runs::RunAtOnce> =
        Some(crate::runs::queries::CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE);

    /// The same for a run's end with its answer: one round trip instead of two writes.
    const FINISH_RUN_WITH_ANSWER_AT_ONCE: Option<crate::sql_store::AtOnce> =
        Some(crate::runs::queries::FINISH_RUN_WITH_ANSWER_AT_ONCE_SQLITE);

    /// SQLite's text of a statement the two databases spell differently.
    fn dialect(statement: &crate::shares::Dialects) -> &'static str {
        statement.sqlite
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use ars_domain::Role;
    use sqlx::Row;

    use super::*;
    use crate::{AccountStore, NewUser, StoreError};

    async fn fresh() -> (SqliteStore, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("ars.db")).await.unwrap();
        (store, dir)
    }

    #[tokio::test]
    async fn only_the_writer_can_write() {
        let (store, _dir) = fresh().await;
        let stray = "CREATE TABLE stray (x)";
        assert!(sqlx::query(stray).execute(&store.pool).await.is_err());
        store
            .write("stray", move |mut conn| async move {
                sqlx::query(stray).execute(&mut *conn).await?;
                Ok(())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn commits_reach_the_database_file_without_the_writer_checkpointing() {
        let (store, dir) = fresh().await;
        let file = dir.path().join("ars.db");
        let before = std::fs::metadata(&file).unwrap().len();
        // About 400 KiB of rows: far below the writer's own checkpoint threshold, so only the
        // checkpointer can copy them into the database file.
        for i in 0..200 {
            let user = NewUser {
                username: format!("u{i}"),
                password_hash: "x".repeat(2000),
                role: Role::User,
            };
            store.create_user(user).await.unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::metadata(&file).unwrap().len() < before + 300_000 {
            assert!(Instant::now() < deadline, "no checkpoint reached the file");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn user(name: &str) -> NewUser {
        NewUser {
            username: name.into(),
            password_hash: "x".into(),
            role: Role::User,
        }
    }

    /// Keeps the writer busy for a moment, so the writes queued meanwhile go together.
    fn hold_the_writer(store: &SqliteStore) -> tokio::task::JoinHandle<()> {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .write("hold", |_conn| async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Ok(())
                })
                .await
                .unwrap();
        })
    }

    /// Queues a user's creation (`before`) and then the write `body` behind a held writer, so
    /// the two go in one batch; answers what each answered.
    async fn batched_with_before<F>(
        store: &SqliteStore,
        body: impl FnOnce(WriteConn<Sqlite>) -> F + Send + 'static,
    ) -> (Result<ars_domain::User>, Result<()>)
    where
        F: std::future::Future<Output = Result<()>> + Send + 'static,
    {
        let held = hold_the_writer(store);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let before = {
            let store = store.clone();
            tokio::spawn(async move { store.create_user(user("before")).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let written = {
            let store = store.clone();
            tokio::spawn(async move { store.write("batched", body).await })
        };
        held.await.unwrap();
        (before.await.unwrap(), written.await.unwrap())
    }

    #[tokio::test]
    async fn writes_queued_together_commit_in_one_transaction_and_each_answers_its_own() {
        let (store, _dir) = fresh().await;
        store.create_user(user("taken")).await.unwrap();
        let held = hold_the_writer(&store);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let rounds = store.writer.rounds();
        let mut writes = Vec::new();
        for i in 0..20 {
            let store = store.clone();
            writes.push(tokio::spawn(async move {
                store.create_user(user(&format!("u{i}"))).await
            }));
        }
        let again = {
            let store = store.clone();
            tokio::spawn(async move { store.create_user(user("taken")).await })
        };
        held.await.unwrap();
        for write in writes {
            write.await.unwrap().unwrap();
        }
        let refused = again.await.unwrap();
        assert!(
            matches!(refused, Err(StoreError::Conflict { field: "username" })),
            "the one failing write answers its own error: {refused:?}"
        );
        assert_eq!(
            store.writer.rounds() - rounds,
            1,
            "the 21 writes queued behind the held writer took one round"
        );
        for i in 0..20 {
            let name = format!("u{i}");
            assert!(
                store.user_credentials(&name).await.unwrap().is_some(),
                "{name}"
            );
        }
    }

    #[tokio::test]
    async fn a_batch_that_cannot_commit_answers_errors_and_the_writer_commits_the_next_writes() {
        let (store, _dir) = fresh().await;
        store
            .write("tables", |mut conn| async move {
                sqlx::query("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
                    .execute(&mut *conn)
                    .await?;
                sqlx::query(
                    "CREATE TABLE child (parent INTEGER REFERENCES parent (id) \
                     DEFERRABLE INITIALLY DEFERRED)",
                )
                .execute(&mut *conn)
                .await?;
                Ok(())
            })
            .await
            .unwrap();
        // A deferred foreign key is checked at COMMIT: the batch's commit fails, and SQLite
        // leaves its transaction open.
        let (before, orphan) = batched_with_before(&store, |mut conn| async move {
            sqlx::query("INSERT INTO child (parent) VALUES (42)")
                .execute(&mut *conn)
                .await?;
            Ok(())
        })
        .await;
        assert!(orphan.is_err());
        assert!(before.is_err(), "its batch did not commit");
        assert!(store.user_credentials("before").await.unwrap().is_none());
        // The next writes commit for real: the readers (other connections) see them.
        store.create_user(user("after")).await.unwrap();
        assert!(store.user_credentials("after").await.unwrap().is_some());
        let held = hold_the_writer(&store);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let together: Vec<_> = (0..3)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move { store.create_user(user(&format!("t{i}"))).await })
            })
            .collect();
        held.await.unwrap();
        for write in together {
            write.await.unwrap().unwrap();
        }
        assert!(store.user_credentials("t2").await.unwrap().is_some());
    }

    /// Writes that begin and end their savepoint in their one query, queued together: one that
    /// fails partway (its run's agent does not exist, after its new thread was written) and
    /// one refused (its run ended) undo only themselves; the others commit with the batch.
    #[tokio::test]
    async fn writes_at_once_in_a_batch_each_undo_only_themselves() {
        use ars_domain::{
            AgentConfig, AgentDraft, AgentId, Backend, MessageRole, NewMessage, NewRun, RunOutcome,
            ShareConfig, Thread, Usage,
        };

        use crate::{AgentStore, ConversationStore, RunStore};

        let (store, _dir) = fresh().await;
        let alice = store.create_user(user("alice")).await.unwrap();
        let draft = |slug: &str, backend| AgentDraft {
            slug: slug.into(),
            name: slug.into(),
            description: String::new(),
            backend,
            config: AgentConfig::default(),
            share_config: ShareConfig::default(),
            is_default: false,
        };
        let agent = store
            .create_agent(&draft("main", Backend::Default), Some(alice.id))
            .await
            .unwrap();
        let helper = store
            .create_agent(&draft("helper", Backend::SubAgent), Some(alice.id))
            .await
            .unwrap();
        let thread = store
            .create_thread(&Thread::new_root(alice.id, agent.id, "chat".into()))
            .await
            .unwrap();
        let ended_thread = store
            .create_thread(&Thread::new_root(alice.id, agent.id, "done".into()))
            .await
            .unwrap();
        let run_on = |thread: &Thread| NewRun {
            thread_id: thread.id.clone(),
            agent_id: thread.agent_id,
            user_id: thread.user_id,
            input: "go".into(),
            lineage: None,
            lease: None,
            woken_by: None,
            new_thread: None,
            running: true,
        };
        let ended = store.create_run(&run_on(&ended_thread)).await.unwrap();
        store
            .finish_run(
                ended.id,
                &RunOutcome::Cancelled {
                    usage: Usage::default(),
                },
            )
            .await
            .unwrap();
        let ended_at = store
            .thread(&ended_thread.id)
            .await
            .unwrap()
            .unwrap()
            .updated_at;
        let child = thread.new_child(helper.id, &helper.slug, "child".into());
        let orphan = NewRun {
            agent_id: AgentId::new(),
            new_thread: Some(child.clone()),
            ..run_on(&child)
        };

        let held = hold_the_writer(&store);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let rounds = store.writer.rounds();
        let spawn_create = |new: NewRun| {
            let store = store.clone();
            tokio::spawn(async move { store.create_run_with_input(&new, None).await })
        };
        let first = spawn_create(run_on(&thread));
        tokio::time::sleep(Duration::from_millis(20)).await;
        let failed = spawn_create(orphan);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let refused = {
            let store = store.clone();
            let late = NewMessage::text(
                ended_thread.id.clone(),
                Some(ended.id),
                MessageRole::Assistant,
                "late".into(),
            );
            tokio::spawn(async move { store.append_message(&late).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let answer = {
            let store = store.clone();
            let thread = thread.id.clone();
            tokio::spawn(async move {
                let note = NewMessage::text(thread, None, MessageRole::User, "and then".into());
                store.append_message(&note).await
            })
        };
        held.await.unwrap();

        let first = first.await.unwrap().unwrap();
        let failed = failed.await.unwrap();
        assert!(failed.is_err(), "{failed:?}");
        let refused = refused.await.unwrap();
        assert!(
            matches!(refused, Err(StoreError::RunEnded { run }) if run == ended.id),
            "{refused:?}"
        );
        answer.await.unwrap().unwrap();
        assert_eq!(
            store.writer.rounds() - rounds,
            1,
            "the four writes queued behind the held writer took one round"
        );
        // What the batch kept: the run and its input, then the note after them.
        assert_eq!(store.run(first.run.id).await.unwrap().unwrap().input, "go");
        let history: Vec<_> = store
            .messages(&thread.id)
            .await
            .unwrap()
            .into_iter()
            .map(|m| (m.seq, m.content))
            .collect();
        assert_eq!(history, [(1, "go".into()), (2, "and then".into())]);
        // What it undid: the failed write's thread, and the refused message's touch.
        assert!(store.thread(&child.id).await.unwrap().is_none());
        assert!(store.messages(&ended_thread.id).await.unwrap().is_empty());
        let touched = store.thread(&ended_thread.id).await.unwrap().unwrap();
        assert_eq!(touched.updated_at, ended_at);
        // The writer goes on, alone.
        store.create_user(user("after")).await.unwrap();
        assert!(store.user_credentials("after").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn a_write_that_panics_rolls_back_its_batch_and_the_writer_goes_on() {
        let (store, _dir) = fresh().await;
        let (before, panics) = batched_with_before(&store, |_conn| async {
            if true {
                panic!("a write that panics halfway");
            }
            Ok(())
        })
        .await;
        assert!(panics.is_err());
        assert!(
            before.is_err(),
            "its batch did not commit, so the write with it answers an error"
        );
        assert!(store.user_credentials("before").await.unwrap().is_none());
        store.create_user(user("after")).await.unwrap();
        assert!(store.user_credentials("after").await.unwrap().is_some());
    }

    /// The texts of every write of a run or a message, as the stores run them.
    fn run_and_message_writes() -> Vec<&'static str> {
        use crate::conversations::queries as conversations;
        use crate::runs::queries as runs;
        use crate::sql_store::Scope;

        let mut texts = vec![
            runs::INSERT_RUN,
            runs::MARK_RUN_RUNNING,
            runs::SET_RUN_USAGE,
            runs::RUN_IS_ACTIVE,
            runs::FINISH_RUN,
            runs::FINISH_RUN_ANSWERED,
            runs::WAIT_RUN,
            runs::RESUME_RUN,
            conversations::APPEND_MESSAGE,
        ];
        for scope in [Scope::Alone, Scope::InBatch] {
            texts.extend([
                runs::CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE
                    .on_thread
                    .text(scope),
                runs::CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE
                    .with_thread
                    .text(scope),
                runs::FINISH_RUN_WITH_ANSWER_AT_ONCE_SQLITE.text(scope),
                conversations::APPEND_MESSAGE_AT_ONCE_SQLITE.text(scope),
            ]);
        }
        texts
    }

    /// The P4 of each `OpenEphemeral` (a temporary B-tree) in `statement`'s program: a key
    /// (`k(1,B)`) for a temporary index, nothing for a table.
    async fn temporary_b_trees(store: &SqliteStore, statement: &str) -> Vec<Option<String>> {
        sqlx::query(&format!("EXPLAIN {statement}"))
            .fetch_all(&store.pool)
            .await
            .unwrap()
            .iter()
            .filter(|op| op.get::<String, _>("opcode") == "OpenEphemeral")
            .map(|op| op.get("p4"))
            .collect()
    }

    /// SQLite tests a value against a list of more than two constants (`status IN ('pending',
    /// 'running', 'waiting')`, in a CHECK, a partial index's predicate or a query) with a
    /// temporary index built each time the statement runs; a run's status update built four.
    /// What is left are temporary tables without a key: the rows `RETURNING` collects, and the
    /// rows of an `INSERT … SELECT`, materialised first.
    #[tokio::test]
    async fn writes_of_runs_and_messages_build_no_temporary_index_for_a_list_of_values() {
        let (store, _dir) = fresh().await;
        let mut explained = 0;
        for text in run_and_message_writes() {
            for statement in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                let temporary = temporary_b_trees(&store, statement).await;
                assert!(
                    temporary.iter().flatten().all(|p4| !p4.starts_with("k(")),
                    "{statement}: {temporary:?}"
                );
                let returning = usize::from(statement.contains(" RETURNING "));
                // SQLite fills the rows of an `INSERT … SELECT` into a temporary table first
                // when the statement reads the table it writes, or has a trigger (`RETURNING`
                // is one).
                let table = statement
                    .strip_prefix("INSERT INTO ")
                    .and_then(|rest| rest.split_whitespace().next());
                let materialised = usize::from(table.is_some_and(|table| {
                    statement.contains(") SELECT ")
                        && (returning == 1 || statement.contains(&format!("FROM {table} ")))
                }));
                assert_eq!(temporary.len(), returning + materialised, "{statement}");
                explained += 1;
            }
        }
        assert!(explained > 20, "{explained} statements explained");
    }

    /// The writes at once (a run with its input, a message, an answer with its run's end) build
    /// no temporary B-tree: they read their rows back by key instead of `RETURNING` them (which
    /// would collect them in a temporary table and turn each `INSERT … SELECT` into two), and a
    /// message takes its seq from its thread's row instead of reading `messages`, the table it
    /// writes (which would fill the `INSERT … SELECT` into a temporary table first).
    #[tokio::test]
    async fn writes_at_once_build_no_temporary_b_tree() {
        use crate::conversations::queries as conversations;
        use crate::runs::queries as runs;
        use crate::sql_store::Scope;

        let (store, _dir) = fresh().await;
        for text in [
            runs::CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE
                .on_thread
                .text(Scope::Alone),
            runs::CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE
                .with_thread
                .text(Scope::InBatch),
            runs::FINISH_RUN_WITH_ANSWER_AT_ONCE_SQLITE.text(Scope::Alone),
            conversations::APPEND_MESSAGE_AT_ONCE_SQLITE.text(Scope::InBatch),
        ] {
            for statement in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                let temporary = temporary_b_trees(&store, statement).await;
                assert_eq!(temporary, Vec::<Option<String>>::new(), "{statement}");
            }
        }
    }

    /// The bundled SQLite is built as `.cargo/config.toml` says (`LIBSQLITE3_FLAGS`): without
    /// memory statistics, which took a global mutex around every allocation and free, and
    /// without the shared page-cache group of `SQLITE_ENABLE_MEMORY_MANAGEMENT`, which took one
    /// around every page fetched and released.
    #[tokio::test]
    async fn the_bundled_sqlite_takes_no_global_mutex_per_allocation_or_page() {
        let (store, _dir) = fresh().await;
        let options: Vec<String> = sqlx::query_scalar("PRAGMA compile_options")
            .fetch_all(&store.pool)
            .await
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
        assert!(
            !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
            "{options:?}"
        );
    }
}
