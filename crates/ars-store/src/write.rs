//! The write path every store write takes: spawned as a task of its own, timed and counted.
//!
//! Runs are cancelled by dropping their futures, and HTTP handlers are dropped when a client
//! goes away. A write dropped halfway could leave its transaction open on a pooled connection
//! until that connection is next used, holding SQLite's write lock meanwhile. So each write
//! method of the stores hands its body to [`detached`]: the caller may stop waiting, the write
//! still commits (or rolls back) at once. Reads run on the caller's task as they are.
//!
//! The stores are cheap `Clone` handles (pools and `Arc`s), so a write's body owns a clone of
//! its store and copies of its arguments, and outlives its caller.
//!
//! **Invariant:** every write of either store passes through [`detached`] exactly once, so
//! [`crate::metrics`] sees each write once, whole (queueing for the writer included).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Instant;

use crate::{Result, StoreError, metrics};

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
