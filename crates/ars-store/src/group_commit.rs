//! Group commit: how [`crate::SqliteStore`]'s one writer commits what is queued for it.
//!
//! SQLite has one write lock, so every write of a file store goes through one writer. Writes
//! are queued for the writer task; it takes whatever is waiting (up to [`MAX_BATCH`]) and:
//! - one write alone runs as it always did, on the writer connection, in its own transaction
//!   (`BEGIN IMMEDIATE` … `COMMIT`) or as one autocommitted statement;
//! - several run in one transaction that commits once for all of them. Each write's own
//!   transaction is a savepoint inside it, so a write that fails undoes only its own
//!   statements and answers its own error; the others commit.
//!
//! The commonest writes send their transaction's beginning and end (or their savepoint's) in
//! the one query of their statements ([`crate::sql_store::AtOnce`]): one round trip to the
//! connection's thread each, alone or in a batch.
//!
//! A caller is answered only after the transaction that holds its write has committed: a
//! write that was answered is as durable as a write committed alone. The fsync policy is the
//! store's (WAL, `synchronous = NORMAL`): a commit reaches the log before it is answered, so a
//! crash of the process loses no answered write; a power loss may lose the last commits before
//! the log's next sync (at each checkpoint). If the batch cannot commit, every write in it
//! answers an error, and none of it was written.
//!
//! Writes run on the writer task, not their callers': a caller that stops waiting leaves its
//! write to finish (see [`crate::write`]). A write that panics halfway leaves its batch
//! rolled back, each of its writes answering an error.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures::FutureExt;
use futures::future::BoxFuture;
use sqlx::{Sqlite, TransactionManager};
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::kept::Connections;
use crate::write::WriteConn;
use crate::{Result, StoreError, metrics};

/// The most writes one transaction commits.
pub(crate) const MAX_BATCH: usize = 64;

/// How many writes wait in the queue before a writer waits to queue its own.
const QUEUE: usize = 4096;

/// How SQLite starts a write transaction: the write lock from the first statement, so a
/// transaction that reads first never fails to upgrade when another process wrote between.
pub(crate) const BEGIN_IMMEDIATE: &str = "BEGIN IMMEDIATE";

/// Begins, commits and rolls back the batch's transaction on the connection the writer holds:
/// sqlx's own transaction type would have to own a pooled connection for the batch to outlive
/// the borrow, and give it back to the pool (a ping) after every batch.
type Manager = <Sqlite as sqlx::Database>::TransactionManager;

/// Tells a write's caller, once the transaction that holds its write has committed (`Ok`) or
/// could not (`Err`, with why).
type Tell = Box<dyn FnOnce(std::result::Result<(), &str>) + Send>;

/// A queued write: runs its body on the connection it is given (or learns why there is none)
/// and answers how to tell its caller.
type Job = Box<dyn FnOnce(Result<WriteConn<Sqlite>>) -> BoxFuture<'static, Tell> + Send>;

/// The queue to a store's writer task; cheap to clone. The task ends when every clone is gone.
#[derive(Clone, Debug)]
pub(crate) struct Writer {
    queue: mpsc::Sender<Job>,
    /// How many rounds the writer has made: each one write alone or one batch.
    rounds: Arc<AtomicU64>,
}

impl Writer {
    /// Starts the writer task on `connections`, a pool of one connection: kept between rounds
    /// when nothing else uses it (a database file's writer), else given back after each (a
    /// database in memory, whose one connection reads share); see [`crate::kept`].
    pub(crate) fn start(connections: Connections<Sqlite>) -> Self {
        let (queue, jobs) = mpsc::channel(QUEUE);
        let rounds = Arc::new(AtomicU64::new(0));
        tokio::spawn(write_loop(connections, jobs, Arc::clone(&rounds)));
        Self { queue, rounds }
    }

    /// How many rounds (a write alone, or a batch in one transaction) the writer has made.
    pub(crate) fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Queues the write `body` as `operation` and waits for its answer, given once the write
    /// has committed (or failed).
    pub(crate) async fn write<T, F>(
        &self,
        operation: &'static str,
        body: impl FnOnce(WriteConn<Sqlite>) -> F + Send + 'static,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let queued = metrics::QueuedWrite::enter();
        let started = Instant::now();
        let job: Job = Box::new(move |conn| {
            Box::pin(async move {
                let written = match conn {
                    Ok(conn) => body(conn).await,
                    Err(err) => Err(err),
                };
                Box::new(move |committed: std::result::Result<(), &str>| {
                    let written = match (written, committed) {
                        (Ok(value), Ok(())) => Ok(value),
                        (Ok(_), Err(why)) => Err(not_committed(why)),
                        (Err(err), _) => Err(err),
                    };
                    drop(queued);
                    metrics::write_took(operation, started.elapsed());
                    // The caller may have stopped waiting: the write stands all the same.
                    let _ = answer.send(written);
                }) as Tell
            })
        });
        self.queue.send(job).await.map_err(|_| stopped())?;
        answered.await.map_err(|_| stopped())?
    }
}

/// The error of a write whose batch did not commit.
fn not_committed(why: &str) -> StoreError {
    StoreError::Database(sqlx::Error::Io(std::io::Error::other(format!(
        "the transaction holding this write did not commit: {why}"
    ))))
}

/// The error of a write the writer could not answer (it panicked, or the writer is gone).
fn stopped() -> StoreError {
    StoreError::Invalid("a store write failed before it could answer".into())
}

async fn write_loop(
    connections: Connections<Sqlite>,
    mut jobs: mpsc::Receiver<Job>,
    rounds: Arc<AtomicU64>,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while jobs.recv_many(&mut batch, MAX_BATCH).await > 0 {
        rounds.fetch_add(1, Ordering::Relaxed);
        if batch.len() == 1 {
            if let Some(job) = batch.pop() {
                alone(&connections, job).await;
            }
        } else {
            together(&connections, batch.drain(..)).await;
        }
    }
}

/// One write on the writer connection, in its own transaction (or statement).
async fn alone(connections: &Connections<Sqlite>, job: Job) {
    let conn = connections
        .acquire()
        .await
        .map_err(StoreError::from)
        .map(|conn| WriteConn::Own {
            conn,
            begin: BEGIN_IMMEDIATE,
        });
    // A body that panics drops its caller's answer: the caller learns it failed.
    if let Ok(tell) = AssertUnwindSafe(job(conn)).catch_unwind().await {
        metrics::committed(1);
        tell(Ok(()));
    }
}

/// Several writes in one transaction, each in a savepoint of its own, committed once.
async fn together(connections: &Connections<Sqlite>, jobs: impl Iterator<Item = Job>) {
    let began = match connections.acquire().await {
        Ok(mut conn) => Manager::begin(&mut conn, Some(BEGIN_IMMEDIATE.into()))
            .await
            .map(|()| conn)
            .map_err(|e| e.to_string()),
        Err(err) => Err(err.to_string()),
    };
    let conn = match began {
        Ok(conn) => conn,
        Err(why) => {
            for job in jobs {
                let none = Err(not_committed(&why));
                if let Ok(tell) = AssertUnwindSafe(job(none)).catch_unwind().await {
                    tell(Ok(()));
                }
            }
            return;
        }
    };
    let shared = Arc::new(Mutex::new(conn));
    let mut tells = Vec::with_capacity(MAX_BATCH);
    let mut broken = false;
    for job in jobs {
        let conn = WriteConn::Batch(Arc::clone(&shared).lock_owned().await);
        match AssertUnwindSafe(job(Ok(conn))).catch_unwind().await {
            Ok(tell) => tells.push(tell),
            // What it wrote before it panicked cannot be told apart from the rest.
            Err(_) => broken = true,
        }
    }
    let committed = match Arc::try_unwrap(shared) {
        Ok(conn) => {
            let mut conn = conn.into_inner();
            let committed = if broken {
                Err("a write of its batch failed halfway".to_string())
            } else {
                Manager::commit(&mut conn).await.map_err(|e| e.to_string())
            };
            // A batch that did not commit is rolled back, so the connection leaves this round
            // outside any transaction, or is not kept: sqlx closes it if it does not answer,
            // and the next round takes one afresh.
            if committed.is_err() && Manager::rollback(&mut conn).await.is_err() {
                conn.discard();
            }
            committed
        }
        // Every body gives its connection back when it ends. One that kept it holds the
        // batch's transaction open, and the writer's one connection with it: the next round
        // waits for it (as long as the pool's acquire timeout) and fails if it never comes.
        Err(_) => Err("a write of its batch kept its connection".to_string()),
    };
    if committed.is_ok() {
        metrics::committed(tells.len());
    }
    for tell in tells {
        tell(committed.as_ref().map(|_| ()).map_err(String::as_str));
    }
}
