//! What the store measures, through the `metrics` facade: how long each write takes, by
//! operation, and how many writes are queued for the writer.
//!
//! Both are taken on the write path (`write`), where every write of either store passes as its
//! own task: on SQLite that task waits in the one writer connection's FIFO queue, so the gauge
//! is that queue's depth (the write being written included); on PostgreSQL, the writes in
//! flight on the pool. Without an installed recorder both are no-ops.

use std::time::Duration;

use metrics::{Unit, describe_gauge, describe_histogram, gauge, histogram};

pub const WRITE_DURATION: &str = "ars_store_write_duration_seconds";
pub const WRITE_QUEUE_DEPTH: &str = "ars_store_write_queue_depth";

/// Gives the installed recorder each metric's help text and unit; the queue depth is exported
/// from zero on.
pub fn describe() {
    gauge!(WRITE_QUEUE_DEPTH).increment(0.0);
    describe_histogram!(
        WRITE_DURATION,
        Unit::Seconds,
        "One store write (one transaction), queueing for the writer included, by operation."
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
