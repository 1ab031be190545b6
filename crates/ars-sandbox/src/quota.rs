//! The per-user workspace quota.
//!
//! Usage is measured by walking the workspace by handle and adding up the space its entries
//! take on disk (allocated blocks, as `du` counts), and kept per user in memory. File-tool
//! writes reserve their growth against it before they write, so two concurrent writes cannot
//! both squeeze past the limit; `execute` cannot be bounded up front, so the workspace is
//! measured again after every command, and an over-quota workspace refuses further writes and
//! commands until space is freed.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Mutex;

use ars_domain::UserId;
use cap_std::fs::{Dir, MetadataExt};

use crate::error::SandboxError;
use crate::files::walk::{Walk, walk};

/// Bytes per `st_blocks` unit.
const BLOCK_BYTES: u64 = 512;

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

    /// Refuses when the workspace is over its quota. A workspace last known to be over is
    /// measured again first, in case space was freed since.
    pub(crate) fn ensure_not_over(&self, user: UserId, root: &Dir) -> Result<(), SandboxError> {
        if self.limit == 0 {
            return Ok(());
        }
        let mut used = self.used(user, root);
        if used > self.limit {
            used = self.measure(user, root);
        }
        if used > self.limit {
            return Err(SandboxError::QuotaExceeded {
                used,
                quota: self.limit,
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

/// `bytes` for people: `1.5 MiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(2 * 1024 * 1024 * 1024), "2.0 GiB");
    }
}
