//! The WAL checkpointer of a SQLite file store: checkpoints run beside the writer, not in it.
//!
//! In WAL mode a commit appends pages to the `-wal` file; a checkpoint copies them back into the
//! database file and syncs both. By default SQLite runs that checkpoint inside the commit that
//! takes the log past 1000 pages, so every few dozen writes one waits for two fsyncs while every
//! writer queued behind it waits too. Here the writer connection only counts its commits, and
//! every [`COMMITS_PER_CHECKPOINT`]th wakes a task that, on a connection of its own, runs a
//! passive checkpoint (which takes no write lock) while the writer carries on.
//!
//! SQLite's own autocheckpoint stays on, at a higher threshold ([`BACKSTOP_PAGES`]), for when the
//! task cannot keep up or is gone (the runtime that started it has shut down).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sqlx::pool::PoolConnectionMetadata;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection, SqliteConnection};
use tokio::sync::{Notify, oneshot};

use crate::Result;

/// The log size, in pages, at which the writer checkpoints in its own commit: the backstop,
/// well above what the checkpointer lets the log grow to while it keeps up (about 40 MiB with
/// 4 KiB pages).
pub(crate) const BACKSTOP_PAGES: u32 = 10_000;

/// How many commits the writer makes between checkpoints. Each checkpoint syncs the log and the
/// database file, and those syncs also stall the writer's own appends to the log, so batching
/// matters: at a few pages a commit this checkpoints about as often as SQLite's default
/// (1000 pages), only not in a commit.
const COMMITS_PER_CHECKPOINT: u32 = 100;

/// The checkpointer's handle: the commit signal the writer connection raises, and the task's
/// life. The task ends when the handle (shared by every clone of the store) is dropped.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    /// Raised by the writer connection's commit hook; a signal raised while a checkpoint runs
    /// is kept (one at most), so the task catches up as soon as it is done.
    commits: Arc<Notify>,
    /// Dropping the sender ends the task (it never sends).
    _stop: oneshot::Sender<()>,
}

/// The checkpointer's task, before it starts (see [`CheckpointTask::start`]).
pub(crate) struct CheckpointTask {
    commits: Arc<Notify>,
    stopped: oneshot::Receiver<()>,
}

/// A pool connection hook's future (`sqlx::pool::PoolOptions::after_connect`).
type HookFuture<'c> = Pin<Box<dyn Future<Output = Result<(), sqlx::Error>> + Send + 'c>>;

impl Checkpointer {
    /// A checkpointer and its task, not yet started: the writer pool needs
    /// [`Checkpointer::commit_hook`] before the database is migrated, the task a database to
    /// open. Commits signalled before it starts are caught up by its first checkpoint.
    pub(crate) fn new() -> (Self, CheckpointTask) {
        let commits = Arc::new(Notify::new());
        let (stop, stopped) = oneshot::channel();
        let task = CheckpointTask {
            commits: Arc::clone(&commits),
            stopped,
        };
        (
            Self {
                commits,
                _stop: stop,
            },
            task,
        )
    }

    /// The `after_connect` hook for the writer pool: makes each commit on the connection wake
    /// the checkpointer.
    pub(crate) fn commit_hook(
        &self,
    ) -> impl for<'c> Fn(&'c mut SqliteConnection, PoolConnectionMetadata) -> HookFuture<'c>
    + Send
    + Sync
    + 'static {
        let commits = Arc::clone(&self.commits);
        move |conn, _| {
            let commits = Arc::clone(&commits);
            Box::pin(async move {
                // The hook runs on the connection's thread inside the commit, so it only
                // signals: the commit goes ahead (`true`) and the checkpoint happens elsewhere.
                let mut since_signal = 0;
                conn.lock_handle().await?.set_commit_hook(move || {
                    since_signal += 1;
                    if since_signal >= COMMITS_PER_CHECKPOINT {
                        since_signal = 0;
                        commits.notify_one();
                    }
                    true
                });
                Ok(())
            })
        }
    }
}

impl CheckpointTask {
    /// Opens the checkpointer's own connection to the database `options` names and spawns the
    /// task on the current runtime.
    pub(crate) async fn start(self, options: &SqliteConnectOptions) -> Result<()> {
        let conn = options.connect().await?;
        tokio::spawn(run(conn, self.commits, self.stopped));
        Ok(())
    }
}

/// Checkpoints after commits until the store is dropped.
async fn run(mut conn: SqliteConnection, commits: Arc<Notify>, mut stopped: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            () = commits.notified() => {}
        }
        // Passive: copies what no reader still needs, never waits for a lock, never blocks the
        // writer. A failure loses no write, and the next commit tries again.
        if let Err(error) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut conn)
            .await
        {
            tracing::warn!(%error, "SQLite WAL checkpoint failed");
        }
    }
    if let Err(error) = conn.close().await {
        tracing::debug!(%error, "closing the SQLite checkpoint connection failed");
    }
}
