//! `tree`: a directory and what is below it, for the server's file browser.
//!
//! The listing is the iterative walk of [`super::walk`], bounded by the caller's levels and
//! entry count, so an agent's 100,000-level tree is listed down to the bound and no further,
//! without recursion.

use std::ops::ControlFlow;

use super::entry_of;
use super::walk::{Walk, walk};
use crate::error::SandboxError;
use crate::paths::{Access, Layout};
use crate::sandbox::{ListOutcome, TreeLimits};
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
    base.entries().map_err(io_err)?;
    let mut entries = Vec::new();
    let mut truncated = false;
    let walked = walk(&base, Walk::tree(limits.max_depth.max(1)), &mut |entry| {
        if entries.len() >= limits.max_entries {
            truncated = true;
            return ControlFlow::Break(());
        }
        // Taken without following: a symlink to a directory is listed as a symlink. An entry
        // that vanished since the directory was read is left out.
        if let Ok(meta) = entry.dir.symlink_metadata(entry.name) {
            let virtual_path = resolved.child_virtual(entry.path);
            entries.push(entry_of(virtual_path, entry.name, &meta));
        }
        ControlFlow::Continue(())
    });
    Ok(ListOutcome {
        path: resolved.virtual_path.clone(),
        entries,
        truncated: truncated || walked.cut,
    })
}
