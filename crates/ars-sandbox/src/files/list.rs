//! `list`: one directory's entries.

use crate::error::SandboxError;
use crate::paths::{Access, Layout};
use crate::sandbox::{DirEntry, EntryKind, ListOutcome};
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
        let file_type = meta.file_type();
        let kind = if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Directory
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        let name = entry.file_name();
        entries.push(DirEntry {
            path: resolved.child_virtual(name.as_ref()),
            name: name.to_string_lossy().into_owned(),
            kind,
            size: meta.len(),
        });
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
