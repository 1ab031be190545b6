//! Walking a directory tree by handle.
//!
//! Each directory is opened relative to its parent's handle without following symlinks
//! (`O_NOFOLLOW`), so a link swapped in mid-walk is skipped, never followed out of the tree.

use std::ffi::OsStr;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, FileType};

/// What a walk leaves out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Everything: for measuring.
    All,
    /// `.git` directories: for searching.
    SkipGit,
}

/// Deepest directory nesting a walk descends into; deeper trees are not searched.
const MAX_WALK_DEPTH: usize = 256;

/// Walks below `base` depth-first, siblings in name order, calling `visit` with the directory
/// handle an entry is in, the entry's path relative to `base` and its type (never following a
/// symlink). Directories are descended into by handle (`O_NOFOLLOW`).
pub(crate) fn walk(
    base: &Dir,
    mode: Walk,
    visit: &mut dyn FnMut(&Dir, &Path, FileType) -> ControlFlow<()>,
) {
    let _ = walk_dir(base, &PathBuf::new(), 0, mode, visit);
}

fn walk_dir(
    dir: &Dir,
    prefix: &Path,
    depth: usize,
    mode: Walk,
    visit: &mut dyn FnMut(&Dir, &Path, FileType) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let Ok(read) = dir.entries() else {
        return ControlFlow::Continue(());
    };
    let mut entries: Vec<_> = read
        .filter_map(Result::ok)
        .filter_map(|entry| {
            // The type from readdir when the file system gives it, else an lstat by handle.
            let file_type = entry
                .file_type()
                .ok()
                .filter(|t| t.is_dir() || t.is_file() || t.is_symlink())
                .or_else(|| entry.metadata().ok().map(|m| m.file_type()))?;
            Some((entry.file_name(), file_type))
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, file_type) in entries {
        let relative = prefix.join(&name);
        visit(dir, &relative, file_type)?;
        if file_type.is_dir()
            && !(mode == Walk::SkipGit && name == OsStr::new(".git"))
            && depth < MAX_WALK_DEPTH
            && let Ok(sub) = dir.open_dir_nofollow(&name)
        {
            walk_dir(&sub, &relative, depth + 1, mode, visit)?;
        }
    }
    ControlFlow::Continue(())
}
