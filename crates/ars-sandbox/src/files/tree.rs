//! `tree`: a directory and what is below it, for the server's file browser.

use std::ffi::OsString;
use std::path::Path;

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, Metadata};

use super::entry_of;
use crate::error::SandboxError;
use crate::paths::{Access, Layout, Resolved};
use crate::sandbox::{DirEntry, ListOutcome, TreeLimits};
use crate::scope::Scope;

/// Lists `path` and below it, depth first, each directory's entries directories first and
/// then by name. The directory itself is resolved like `list`; below it every directory is
/// opened by handle with `O_NOFOLLOW`, so a symlink is listed and never descended into.
pub(crate) fn tree(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    limits: TreeLimits,
) -> Result<ListOutcome, SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Read)?;
    let io_err = |err: std::io::Error| resolved.err(&err);
    let base = resolved.root.open_dir(&resolved.rel).map_err(io_err)?;
    // The listed directory itself must be readable; what fails below it is left out.
    let first = sorted_entries(&base).map_err(io_err)?;
    let mut walk = TreeWalk {
        resolved: &resolved,
        limits,
        entries: Vec::new(),
        truncated: false,
    };
    walk.level(&base, first, Path::new(""), 1);
    Ok(ListOutcome {
        path: resolved.virtual_path.clone(),
        entries: walk.entries,
        truncated: walk.truncated,
    })
}

/// One walk's state: what it found and whether it left anything out.
struct TreeWalk<'a> {
    resolved: &'a Resolved,
    limits: TreeLimits,
    entries: Vec<DirEntry>,
    truncated: bool,
}

impl TreeWalk<'_> {
    /// Adds `children` (the entries of `dir`, at `prefix` below the listed directory, on
    /// level `depth`) and descends into the directories among them.
    fn level(
        &mut self,
        dir: &Dir,
        children: Vec<(OsString, Metadata)>,
        prefix: &Path,
        depth: usize,
    ) {
        for (name, meta) in children {
            if self.entries.len() >= self.limits.max_entries {
                self.truncated = true;
                return;
            }
            let relative = prefix.join(&name);
            self.entries.push(entry_of(
                self.resolved.child_virtual(&relative),
                &name,
                &meta,
            ));
            // Metadata taken without following: a symlink to a directory is not `is_dir`.
            if !meta.is_dir() {
                continue;
            }
            let Ok(sub) = dir.open_dir_nofollow(&name) else {
                continue; // Replaced or unreadable since it was listed.
            };
            let Ok(grandchildren) = sorted_entries(&sub) else {
                continue;
            };
            if depth >= self.limits.max_depth {
                self.truncated |= !grandchildren.is_empty();
                continue;
            }
            self.level(&sub, grandchildren, &relative, depth + 1);
        }
    }
}

/// The entries of `dir` with their metadata (not following symlinks), directories first,
/// then by name (byte order). Entries that vanish between readdir and stat are left out.
fn sorted_entries(dir: &Dir) -> std::io::Result<Vec<(OsString, Metadata)>> {
    let mut entries: Vec<(OsString, Metadata)> = dir
        .entries()?
        .filter_map(Result::ok)
        .filter_map(|entry| Some((entry.file_name(), entry.metadata().ok()?)))
        .collect();
    entries.sort_by(|a, b| (!a.1.is_dir(), &a.0).cmp(&(!b.1.is_dir(), &b.0)));
    Ok(entries)
}
