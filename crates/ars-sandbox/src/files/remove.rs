//! `remove`: deleting a file, a symlink or a directory by handle.
//!
//! The directory the entry is in is resolved through the root's handle (symlinks on the way
//! followed while they stay inside the root); the entry itself is then only ever named
//! relative to that directory and never followed: a symlink is unlinked as a link, a directory
//! is emptied by opening each level with `O_NOFOLLOW`, so a link swapped in cannot lead the
//! removal anywhere else. The emptying is the iterative walk of [`super::walk`], so a tree of
//! any depth is removed without recursion and with a bounded number of open descriptors.

use std::ffi::OsStr;
use std::io;
use std::ops::ControlFlow;
use std::path::{Component, Path};

use cap_fs_ext::DirExt;
use cap_std::fs::Dir;

use super::kind_of;
use super::unlock::unlock_for_removal;
use super::walk::{Entry, Visitor, Walk, open_dir, walk_with};
use crate::error::{SandboxError, display_path};
use crate::paths::{Access, Layout, Root};
use crate::quota::Quotas;
use crate::sandbox::RemoveOutcome;
use crate::scope::Scope;

/// Removes the file, symlink or directory at `path` (a directory only when empty, unless
/// `recursive`). The roots, the workdir and its ancestors are refused, lexically and again
/// once the symlinks on the way are resolved.
pub(crate) fn remove(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    recursive: bool,
    quotas: &Quotas,
) -> Result<RemoveOutcome, SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Write)?;
    let workdir: Vec<&str> = scope.workdir_components().collect();
    let refuse = || SandboxError::InvalidPath {
        path: display_path(path),
        reason: format!(
            "it is the workdir {} or a folder that holds it; only what is inside the workdir \
             can be removed",
            scope.virtual_workdir()
        ),
    };
    if holds(&resolved.rel, &workdir) {
        return Err(refuse());
    }
    let (Some(name), Some(parent)) = (resolved.rel.file_name(), resolved.rel.parent()) else {
        return Err(refuse());
    };
    let parent = match resolved.root.canonicalize(non_empty(parent)) {
        Ok(parent) => parent,
        Err(err) => return Err(resolved.err(&err)),
    };
    // `up/x`, with `up` a link to the workdir's parent, names the workdir after all.
    if holds(&parent.join(name), &workdir) {
        return Err(refuse());
    }
    let dir = resolved
        .root
        .open_dir(non_empty(&parent))
        .map_err(|err| resolved.err(&err))?;
    let meta = dir
        .symlink_metadata(name)
        .map_err(|err| resolved.err(&err))?;
    let removed = if !meta.is_dir() {
        dir.remove_file(name)
    } else if recursive {
        remove_entry(&dir, name)
    } else {
        dir.remove_dir(name)
    };
    // Measured whatever happened: part of a tree may be gone even when the rest failed.
    quotas.measure(scope.user_id, &resolved.root);
    removed.map_err(|err| {
        if err.raw_os_error() == Some(rustix::io::Errno::NOTEMPTY.raw_os_error()) {
            SandboxError::DirectoryNotEmpty {
                path: resolved.virtual_path.clone(),
            }
        } else {
            resolved.err(&err)
        }
    })?;
    Ok(RemoveOutcome {
        path: resolved.virtual_path.clone(),
        kind: kind_of(&meta),
    })
}

/// Removes the scope's workdir with everything in it, for a deleted conversation: the
/// folders on the way are opened level by level with `O_NOFOLLOW` (a symlink planted at one
/// refuses the removal), and the workdir itself is removed by name, never followed. Returns
/// whether there was one; the workspace is measured again.
pub(crate) fn remove_workdir(
    layout: &Layout,
    scope: &Scope,
    quotas: &Quotas,
) -> Result<bool, SandboxError> {
    scope.validate()?;
    let shown = scope.virtual_workdir();
    let root = match layout.open_root(scope.user_id, Root::UserData) {
        Ok(root) => root,
        // A workspace never prepared holds no workdir.
        Err(_) if !layout.user_data(scope.user_id).exists() => return Ok(false),
        Err(err) => return Err(err),
    };
    let parts: Vec<&str> = scope.workdir_components().collect();
    let Some((name, parents)) = parts.split_last() else {
        return Ok(false);
    };
    let gone = |err: &io::Error| err.kind() == io::ErrorKind::NotFound;
    let mut dir: Option<Dir> = None;
    for part in parents {
        match dir.as_ref().unwrap_or(&root).open_dir_nofollow(part) {
            Ok(next) => dir = Some(next),
            Err(err) if gone(&err) => return Ok(false),
            Err(err) => return Err(SandboxError::io(&shown, &err)),
        }
    }
    let removed = remove_entry(dir.as_ref().unwrap_or(&root), OsStr::new(name));
    quotas.measure(scope.user_id, &root);
    match removed {
        Ok(()) => Ok(true),
        Err(err) if gone(&err) => Ok(false),
        Err(err) => Err(SandboxError::io(&shown, &err)),
    }
}

/// Whether `path` (below the workspace root) is the workdir or one of its ancestors.
fn holds(path: &Path, workdir: &[&str]) -> bool {
    let parts: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    parts.len() <= workdir.len() && parts.iter().zip(workdir).all(|(a, b)| *a == OsStr::new(b))
}

/// `.` for an empty relative path, which `cap-std` does not take.
fn non_empty(path: &Path) -> &Path {
    if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    }
}

/// Removes `name` from `parent`: a directory with everything below it, anything else (a
/// symlink included) as the entry itself.
pub(crate) fn remove_entry(parent: &Dir, name: &OsStr) -> io::Result<()> {
    let meta = parent.symlink_metadata(name)?;
    if !meta.is_dir() {
        return parent.remove_file(name);
    }
    // A folder swapped for a symlink since the lstat fails here instead of being followed.
    let dir = open_dir(parent, name, true)?;
    let mut removal = Removal(None);
    walk_with(&dir, Walk::ALL, &mut removal);
    if let Some(err) = removal.0 {
        return Err(err);
    }
    drop(dir);
    writable(parent, |dir| dir.remove_dir(name))
}

/// Runs `change` on `dir`, and once more after giving the owner write access to `dir` when a
/// command had taken it away (see [`super::unlock`]).
fn writable(dir: &Dir, change: impl Fn(&Dir) -> io::Result<()>) -> io::Result<()> {
    match change(dir) {
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            unlock_for_removal(dir)?;
            change(dir)
        }
        done => done,
    }
}

/// Empties a directory during a walk: files (and symlinks, as links) when they are visited,
/// directories once the walk has been through them. Stops at the first failure and keeps it.
struct Removal(Option<io::Error>);

impl Removal {
    fn done(&mut self, result: io::Result<()>) -> ControlFlow<()> {
        match result {
            Ok(()) => ControlFlow::Continue(()),
            // Removed by someone else meanwhile: the goal is reached all the same.
            Err(err) if err.kind() == io::ErrorKind::NotFound => ControlFlow::Continue(()),
            Err(err) => {
                self.0 = Some(err);
                ControlFlow::Break(())
            }
        }
    }
}

impl Visitor for Removal {
    fn visit(&mut self, entry: Entry<'_>) -> ControlFlow<()> {
        if entry.file_type.is_dir() {
            return ControlFlow::Continue(()); // Removed on leaving it, once empty.
        }
        self.done(writable(entry.dir, |dir| dir.remove_file(entry.name)))
    }

    fn leave(&mut self, parent: &Dir, name: &OsStr) -> ControlFlow<()> {
        self.done(writable(parent, |dir| dir.remove_dir(name)))
    }

    fn failed(&mut self, _path: &Path, err: &io::Error) -> ControlFlow<()> {
        // The same error, which `io::Error` cannot clone: its OS code when it has one, so
        // that a symlink swapped in (`ELOOP`) still reads as one.
        self.0 = Some(match err.raw_os_error() {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::new(err.kind(), err.to_string()),
        });
        ControlFlow::Break(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workdir_and_its_ancestors_are_held() {
        let workdir = ["threads", "t1"];
        for path in ["", ".", "threads", "threads/t1", "threads/./t1"] {
            assert!(holds(Path::new(path), &workdir), "{path:?}");
        }
        for path in ["threads/t1/a", "threads/t2", "other", "agents/skills"] {
            assert!(!holds(Path::new(path), &workdir), "{path:?}");
        }
    }

    #[test]
    fn an_empty_relative_path_is_the_directory_itself() {
        assert_eq!(non_empty(Path::new("")), Path::new("."));
        assert_eq!(non_empty(Path::new("a")), Path::new("a"));
    }
}
