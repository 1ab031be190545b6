//! The per-user workspace quota.
//!
//! Usage is measured by walking the workspace by handle and adding up the space its entries
//! take on disk (allocated blocks, as `du` counts), at any depth, and kept per user in memory.
//! File-tool writes reserve their growth against it before they write, so two concurrent
//! writes cannot both squeeze past the limit. A command gets a [`Budget`] when it starts: no
//! file it writes may grow past what remains plus [`MARGIN`] (`RLIMIT_FSIZE`), and a
//! [`watch::Watcher`] stops it once the workspace measures past the quota plus [`MARGIN`]; the
//! workspace is measured again after every command. Over the quota, file-tool writes that
//! grow the workspace are refused, and commands still run, but cannot make any file grow, so
//! `rm` and truncation free space: a user is never locked out of their own workspace.

pub(crate) mod notes;
pub(crate) mod watch;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Mutex;

use ars_domain::UserId;
use cap_std::fs::{Dir, MetadataExt};

use crate::error::SandboxError;
pub(crate) use crate::error::human;
use crate::files::walk::{Walk, walk};

/// Bytes per `st_blocks` unit.
const BLOCK_BYTES: u64 = 512;

/// How far past the quota a command may take the workspace before it is stopped, and how much
/// more than what remains one file it writes may hold. Room for the blocks a file system adds
/// around the data (indirect blocks, directories) and for the watcher's measuring interval.
pub(crate) const MARGIN: u64 = 1024 * 1024;

/// What one command may add to the workspace, fixed when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// What the workspace held when the command started.
    pub(crate) used: u64,
    /// The quota; 0 means none.
    pub(crate) quota: u64,
}

impl Budget {
    /// Whether there is a quota at all.
    pub(crate) fn limited(&self) -> bool {
        self.quota > 0
    }

    /// Whether the workspace is over its quota.
    pub(crate) fn over(&self) -> bool {
        self.limited() && self.used > self.quota
    }

    /// The largest file the command may write: what remains under the quota plus [`MARGIN`],
    /// or nothing at all over the quota (truncating and deleting still work). `None` without
    /// a quota.
    pub(crate) fn file_size(&self) -> Option<u64> {
        if !self.limited() {
            None
        } else if self.over() {
            Some(0)
        } else {
            Some(self.quota - self.used + MARGIN)
        }
    }

    /// The usage past which the command is stopped: the quota plus [`MARGIN`], or, over the
    /// quota already, what the workspace held plus [`MARGIN`].
    pub(crate) fn ceiling(&self) -> u64 {
        self.used.max(self.quota) + MARGIN
    }
}

/// The quota of every workspace, and what each one was last known to hold.
#[derive(Debug)]
pub(crate) struct Quotas {
    /// Bytes one workspace may hold; 0 means no quota.
    limit: u64,
    /// Last known usage per user. A std `Mutex`: only blocking code takes it, never across
    /// an `.await`.
    usage: Mutex<HashMap<UserId, u64>>,
}

impl Quotas {
    pub(crate) fn new(limit: u64) -> Self {
        Self {
            limit,
            usage: Mutex::new(HashMap::new()),
        }
    }

    /// The configured quota in bytes (0: none).
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Measures what the workspace `root` holds now and remembers it.
    pub(crate) fn measure(&self, user: UserId, root: &Dir) -> u64 {
        let used = disk_usage(root);
        self.lock().insert(user, used);
        used
    }

    /// What the workspace holds, as last known (measured now if it never was).
    pub(crate) fn used(&self, user: UserId, root: &Dir) -> u64 {
        let known = self.lock().get(&user).copied();
        known.unwrap_or_else(|| self.measure(user, root))
    }

    /// Reserves room for a write that replaces `old_len` bytes with `new_len`. A write that
    /// does not grow the workspace always fits, so an over-quota user can still shrink files.
    pub(crate) fn reserve(
        &self,
        user: UserId,
        root: &Dir,
        old_len: u64,
        new_len: u64,
    ) -> Result<Reservation<'_>, SandboxError> {
        let used = self.used(user, root);
        let growth = new_len.saturating_sub(old_len);
        let mut usage = self.lock();
        let current = usage.get(&user).copied().unwrap_or(used);
        if self.limit > 0 && growth > 0 && current + growth > self.limit {
            return Err(SandboxError::QuotaExceeded {
                used: current,
                quota: self.limit,
                needed: growth,
            });
        }
        usage.insert(user, current + growth);
        Ok(Reservation {
            quotas: self,
            user,
            growth,
            old_len,
            new_len,
            done: false,
        })
    }

    /// What a command starting now may add to the workspace. A workspace last known to be
    /// over its quota is measured again first, in case space was freed since.
    pub(crate) fn budget(&self, user: UserId, root: &Dir) -> Budget {
        let mut used = self.used(user, root);
        if self.limit > 0 && used > self.limit {
            used = self.measure(user, root);
        }
        Budget {
            used,
            quota: self.limit,
        }
    }

    /// Refuses when the workspace is over its quota (measured again first, as for
    /// [`Quotas::budget`]).
    pub(crate) fn ensure_not_over(&self, user: UserId, root: &Dir) -> Result<(), SandboxError> {
        let budget = self.budget(user, root);
        if budget.over() {
            return Err(SandboxError::QuotaExceeded {
                used: budget.used,
                quota: budget.quota,
                needed: 0,
            });
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<UserId, u64>> {
        // A poisoned map only means a panic elsewhere; the numbers in it are still usable.
        self.usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Room reserved for one write: kept when the write succeeded ([`Reservation::commit`]),
/// given back when it is dropped without.
pub(crate) struct Reservation<'a> {
    quotas: &'a Quotas,
    user: UserId,
    growth: u64,
    old_len: u64,
    new_len: u64,
    done: bool,
}

impl Reservation<'_> {
    /// The write happened: a shrinking write also lowers the known usage.
    pub(crate) fn commit(mut self) {
        self.done = true;
        let shrink = self.old_len.saturating_sub(self.new_len);
        if shrink > 0 {
            let mut usage = self.quotas.lock();
            if let Some(used) = usage.get_mut(&self.user) {
                *used = used.saturating_sub(shrink);
            }
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.done && self.growth > 0 {
            let mut usage = self.quotas.lock();
            if let Some(used) = usage.get_mut(&self.user) {
                *used = used.saturating_sub(self.growth);
            }
        }
    }
}

/// The space `dir` and everything below it take on disk: allocated blocks, as `du` counts
/// them, at any depth (a symlink counts as itself). Entries a running command removes or
/// moves mid-walk may be missed; the next measurement sees them.
pub(crate) fn disk_usage(dir: &Dir) -> u64 {
    let mut used = dir.dir_metadata().map_or(0, |m| m.blocks() * BLOCK_BYTES);
    walk(dir, Walk::ALL, &mut |entry| {
        if let Ok(meta) = entry.dir.symlink_metadata(entry.name) {
            used += meta.blocks() * BLOCK_BYTES;
        }
        ControlFlow::Continue(())
    });
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_bounds_files_by_what_remains_and_nothing_over_the_quota() {
        let none = Budget { used: 5, quota: 0 };
        assert_eq!(none.file_size(), None);
        let some = Budget {
            used: 30,
            quota: 100,
        };
        assert_eq!(some.file_size(), Some(70 + MARGIN));
        assert_eq!(some.ceiling(), 100 + MARGIN);
        let full = Budget {
            used: 100,
            quota: 100,
        };
        assert_eq!(full.file_size(), Some(MARGIN));
        let over = Budget {
            used: 150,
            quota: 100,
        };
        assert!(over.over());
        assert_eq!(over.file_size(), Some(0));
        assert_eq!(over.ceiling(), 150 + MARGIN);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(2 * 1024 * 1024 * 1024), "2.0 GiB");
    }
}
