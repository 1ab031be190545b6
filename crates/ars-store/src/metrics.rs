//! What the store measures, through the `metrics` facade: how long each write takes, by
//! operation, how many writes are queued for the writer, and (SQLite) how many writes each
//! commit holds.
//!
//! The first two are taken on the write path (`write`), which every write of either store
//! passes: on SQLite a write counts from the moment it is queued for the writer task until it
//! is answered, so the gauge is that queue's depth (the writes being written included); on
//! PostgreSQL, the writes in flight on the pool. Without an installed recorder all are no-ops.

use std::time::Duration;

use metrics::{Unit, describe_gauge, describe_histogram, gauge, histogram};

pub const WRITE_DURATION: &str = "ars_store_write_duration_seconds";
pub const WRITE_QUEUE_DEPTH: &str = "ars_store_write_queue_depth";
pub const WRITES_PER_COMMIT: &str = "ars_store_writes_per_commit";

/// Gives the installed recorder each metric's help text and unit; the queue depth is exported
/// from zero on.
pub fn describe() {
    gauge!(WRITE_QUEUE_DEPTH).increment(0.0);
    describe_histogram!(
        WRITE_DURATION,
        Unit::Seconds,
        "One store write (one transaction), queueing for the writer included, by operation."
    );
    describe_histogram!(
        WRITES_PER_COMMIT,
        Unit::Count,
        "SQLite: how many writes one commit of the writer holds (group commit; 1 when a write \
         was alone in the queue)."
    );
    describe_gauge!(
        WRITE_QUEUE_DEPTH,
        "Store writes waiting for the writer or being written now (SQLite: the writer queue's \
         depth; PostgreSQL: writes in flight)."
    );
}

/// One write's place in [`WRITE_QUEUE_DEPTH`], given back on drop.
#[must_use = "the gauge goes back down when the guard is dropped"]
pub(crate) struct QueuedWrite(());

impl QueuedWrite {
    pub(crate) fn enter() -> Self {
        gauge!(WRITE_QUEUE_DEPTH).increment(1.0);
        Self(())
    }
}

impl Drop for QueuedWrite {
    fn drop(&mut self) {
        gauge!(WRITE_QUEUE_DEPTH).decrement(1.0);
    }
}

pub(crate) fn write_took(operation: &'static str, took: Duration) {
    histogram!(WRITE_DURATION, "operation" => operation).record(took.as_secs_f64());
}

/// One commit of the SQLite writer, holding `writes` writes.
pub(crate) fn committed(writes: usize) {
    histogram!(WRITES_PER_COMMIT).record(writes as f64);
}
