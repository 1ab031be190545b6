//! `list`: one directory's entries.

use super::entry_of;
use crate::error::SandboxError;
use crate::paths::{Access, Layout};
use crate::sandbox::ListOutcome;
use crate::scope::Scope;

/// Lists a directory, sorted by name, at most `max_entries` entries. Symlinks are reported,
/// not followed.
pub(crate) fn list(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    max_entries: usize,
) -> Result<ListOutcome, SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Read)?;
    let io_err = |err: std::io::Error| resolved.err(&err);
    let dir = resolved.root.open_dir(&resolved.rel).map_err(io_err)?;
    let mut entries = Vec::new();
    for entry in dir.entries().map_err(io_err)? {
        let entry = entry.map_err(io_err)?;
        // `DirEntry::metadata` is taken relative to the listed directory's handle and does
        // not follow symlinks, which is what a listing wants.
        let Ok(meta) = entry.metadata() else {
            continue; // Vanished between readdir and stat.
        };
        let name = entry.file_name();
        entries.push(entry_of(
            resolved.child_virtual(name.as_ref()),
            &name,
            &meta,
        ));
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let truncated = entries.len() > max_entries;
    entries.truncate(max_entries);
    Ok(ListOutcome {
        path: resolved.virtual_path.clone(),
        entries,
        truncated,
    })
}
