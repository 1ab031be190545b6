//! The write path every store write takes: timed, counted, and safe from its caller going away.
//!
//! Runs are cancelled by dropping their futures, and HTTP handlers are dropped when a client
//! goes away. A write dropped halfway could leave its transaction open on a pooled connection
//! until that connection is next used, holding SQLite's write lock meanwhile. So no write's
//! body runs on its caller's task: PostgreSQL writes are handed to [`detached`], a task of
//! their own; SQLite writes are queued for the store's one writer task (see `sqlite`), which
//! commits them in batches. Either way the caller may stop waiting and the write still commits
//! (or rolls back) at once. Reads run on the caller's task as they are.
//!
//! A write's body is given a [`WriteConn`]: the connection it writes on, and how it starts a
//! transaction there ([`WriteConn::begin`]). Bodies own copies of their arguments and outlive
//! their callers.
//!
//! **Invariant:** every write of either store passes through its store's `write` exactly once,
//! so [`crate::metrics`] sees each write once, whole (queueing for the writer included), and
//! [`WriteCounts`] counts it.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;
use std::time::Instant;

use sqlx::{Database, Transaction};
use tokio::sync::OwnedMutexGuard;

use crate::kept::Lent;
use crate::{Result, StoreError, metrics};

/// The connection a write's body writes on.
pub(crate) enum WriteConn<DB: Database> {
    /// A connection of its own: PostgreSQL's writes, and a SQLite write alone in the queue.
    /// A transaction on it starts with `begin` (`BEGIN IMMEDIATE` on SQLite: the write lock
    /// from the first statement).
    Own { conn: Lent<DB>, begin: &'static str },
    /// A share of the SQLite writer's batch transaction, in which the writes queued together
    /// commit together; a transaction on it is a savepoint, so a failing write undoes only
    /// its own statements.
    Batch(OwnedMutexGuard<Lent<DB>>),
}

impl<DB: Database> WriteConn<DB> {
    /// The connection, and whether the write has it to itself or shares a batch's
    /// transaction: what a write that begins and ends its own transaction (or savepoint) in
    /// one query needs ([`crate::sql_store::AtOnce`]).
    pub(crate) fn at_once(&mut self) -> (&mut DB::Connection, crate::sql_store::Scope) {
        match self {
            Self::Own { conn, .. } => (conn, crate::sql_store::Scope::Alone),
            Self::Batch(held) => (held, crate::sql_store::Scope::InBatch),
        }
    }

    /// Starts the body's transaction: a transaction of its own, or a savepoint in its batch's.
    pub(crate) async fn begin(&mut self) -> Result<Transaction<'_, DB>> {
        Ok(match self {
            Self::Own { conn, begin } => sqlx::Connection::begin_with(&mut **conn, *begin).await?,
            Self::Batch(held) => sqlx::Connection::begin(&mut ***held).await?,
        })
    }
}

impl<DB: Database> Deref for WriteConn<DB> {
    type Target = DB::Connection;

    fn deref(&self) -> &DB::Connection {
        match self {
            Self::Own { conn, .. } => conn,
            Self::Batch(held) => held,
        }
    }
}

impl<DB: Database> DerefMut for WriteConn<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        match self {
            Self::Own { conn, .. } => conn,
            Self::Batch(held) => held,
        }
    }
}

/// Runs `write` on its own task and waits for it. The task, not the caller, holds the write's
/// place in the queue gauge and times it, so both count the whole write even when the caller
/// stops waiting.
pub(crate) async fn detached<T, F>(operation: &'static str, write: F) -> Result<T>
where
    T: Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
{
    let task = tokio::spawn(async move {
        let _queued = metrics::QueuedWrite::enter();
        let started = Instant::now();
        let written = write.await;
        metrics::write_took(operation, started.elapsed());
        written
    });
    task.await
        .map_err(|e| StoreError::Invalid(format!("a store write task failed: {e}")))?
}

/// How many writes (each one transaction) a store has made, by operation: what a test counts
/// to hold a path to its number of commits.
#[derive(Debug, Default)]
pub struct WriteCounts(Mutex<BTreeMap<&'static str, u64>>);

impl WriteCounts {
    pub(crate) fn record(&self, operation: &'static str) {
        if let Ok(mut counts) = self.0.lock() {
            *counts.entry(operation).or_default() += 1;
        }
    }

    /// Every operation with its count so far.
    pub fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        self.0.lock().map(|c| c.clone()).unwrap_or_default()
    }
}
