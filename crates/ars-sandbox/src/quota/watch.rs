//! The watcher that stops a running command once the workspace passes its quota.
//!
//! `RLIMIT_FSIZE` bounds each file a command writes, not how many it writes; this watcher
//! bounds the sum. It runs on a thread of its own for as long as the command runs, so a busy
//! async runtime cannot delay it, and measures the workspace (a walk, as the quota counts)
//! every [`TICK`] — or, for a workspace so large that one walk takes a while, every
//! [`DUTY`] times the last walk's duration, so watching costs at most a twentieth of a core.
//! Between walks it asks the file system how much space it has in use (`fstatvfs`, one system
//! call): when the last measurement plus what the file system gained since passes the
//! ceiling, it walks at once (walks still spaced by their own duration). Only a walk's
//! measurement stops the command, so another user's writes on the same disk can hurry a walk
//! but never stop a command; their deletions can hide a command's growth from the file
//! system's count, which the regular walks catch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use cap_std::fs::Dir;
use tokio_util::sync::CancellationToken;

use super::{Budget, disk_usage};

/// How often the watcher looks: at the file system's usage always, at the workspace when its
/// walks are quick.
const TICK: Duration = Duration::from_millis(10);

/// Walks are at least this many times their own duration apart, unless the file system's
/// usage calls for one.
const DUTY: u32 = 20;

/// Watches one command's workspace while it runs; stops watching when finished or dropped.
pub(crate) struct Watcher {
    /// Cancelled when the workspace measured past the ceiling: the command is to be stopped.
    reached: CancellationToken,
    /// Tells the watching thread to end.
    done: Arc<AtomicBool>,
    /// The watching thread, which answers the usage that passed the ceiling, if one did.
    thread: Option<thread::JoinHandle<Option<u64>>>,
}

impl Watcher {
    /// Starts watching the workspace `root` for a command with `budget` (which should have a
    /// quota). Without a thread to watch on, the command is not watched (and the usage is
    /// still measured after it); the failure is logged.
    pub(crate) fn start(root: Arc<Dir>, budget: Budget) -> Self {
        let reached = CancellationToken::new();
        let done = Arc::new(AtomicBool::new(false));
        let thread = thread::Builder::new()
            .name("ars-quota-watch".into())
            .spawn({
                let (reached, done) = (reached.clone(), Arc::clone(&done));
                move || watch(&root, budget, &reached, &done)
            })
            .map_err(|err| tracing::warn!(%err, "cannot watch a command's workspace quota"))
            .ok();
        Self {
            reached,
            done,
            thread,
        }
    }

    /// Cancelled when the command must be stopped.
    pub(crate) fn reached(&self) -> CancellationToken {
        self.reached.clone()
    }

    /// Stops watching; the usage that passed the ceiling, if one did. Does not wait for a
    /// walk in progress: a watcher that has not stopped the command by now never will.
    pub(crate) fn finish(mut self) -> Option<u64> {
        self.done.store(true, Ordering::Relaxed);
        let thread = self.thread.take()?;
        if self.reached.is_cancelled() {
            // It stopped the command and has returned (or is returning) its measurement.
            return thread.join().ok().flatten();
        }
        None
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

/// The watching thread: returns the usage that passed the ceiling, if one did before `done`.
fn watch(
    root: &Dir,
    budget: Budget,
    reached: &CancellationToken,
    done: &AtomicBool,
) -> Option<u64> {
    let ceiling = budget.ceiling();
    // The last measurement, and the file system's usage just before it was taken.
    let mut measured = budget.used;
    let mut fs_then = fs_used(root);
    let mut cost = Duration::ZERO;
    let mut last = Instant::now();
    loop {
        thread::sleep(TICK);
        if done.load(Ordering::Relaxed) {
            return None;
        }
        let since = last.elapsed();
        let estimate = match (fs_then, fs_used(root)) {
            (Some(then), Some(now)) => measured.saturating_add(now.saturating_sub(then)),
            // No word from the file system: the regular walks alone watch.
            _ => measured,
        };
        let due = since >= TICK.max(cost * DUTY) || (estimate > ceiling && since >= cost);
        if !due {
            continue;
        }
        let before = fs_used(root);
        let started = Instant::now();
        let now = disk_usage(root);
        cost = started.elapsed();
        last = Instant::now();
        if now > ceiling {
            reached.cancel();
            return Some(now);
        }
        (measured, fs_then) = (now, before);
    }
}

/// Bytes in use on the file system that holds `dir`.
fn fs_used(dir: &Dir) -> Option<u64> {
    let stat = rustix::fs::fstatvfs(dir).ok()?;
    let blocks = stat.f_blocks.checked_sub(stat.f_bfree)?;
    blocks.checked_mul(stat.f_frsize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quota::MARGIN;
    use cap_std::ambient_authority;

    fn workspace() -> (tempfile::TempDir, Arc<Dir>) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        (tmp, Arc::new(dir))
    }

    #[tokio::test]
    async fn files_past_the_ceiling_stop_the_command_and_others_do_not() {
        let (_tmp, root) = workspace();
        let budget = Budget {
            used: disk_usage(&root),
            quota: 4 * MARGIN,
        };
        let watcher = Watcher::start(Arc::clone(&root), budget);
        let reached = watcher.reached();
        // Within the quota: nothing happens, however many times it looks.
        root.write("a", vec![1u8; 2 * MARGIN as usize]).unwrap();
        tokio::time::sleep(TICK * 20).await;
        assert!(!reached.is_cancelled());
        // Many files, each small, together past the quota and the margin.
        for i in 0..8 {
            root.write(format!("b{i}"), vec![1u8; MARGIN as usize])
                .unwrap();
        }
        tokio::time::timeout(Duration::from_secs(5), reached.cancelled())
            .await
            .unwrap();
        let stopped_at = watcher.finish().unwrap();
        assert!(stopped_at > budget.ceiling(), "{stopped_at}");
    }

    #[test]
    fn a_finished_watcher_ends_its_thread_and_reports_nothing() {
        let (_tmp, root) = workspace();
        let budget = Budget {
            used: 0,
            quota: MARGIN,
        };
        let watcher = Watcher::start(root, budget);
        let done = Arc::clone(&watcher.done);
        assert_eq!(watcher.finish(), None);
        assert!(done.load(Ordering::Relaxed));
    }
}
