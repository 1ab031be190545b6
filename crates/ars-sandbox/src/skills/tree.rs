//! Skill folders by directory handle: build one, move it into place, remove one.
//!
//! Every step names one component relative to an open directory and never follows a symlink
//! (`O_NOFOLLOW` for directories, `O_CREAT | O_EXCL` for files, `unlinkat` for removal, which
//! `files::remove` shares), so a
//! link planted by an agent — the personal skills live in its writable workspace — is at
//! worst refused or removed as a link, never written or deleted through.

use std::ffi::OsStr;
use std::io::{self, Write as _};

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, MetadataExt, OpenOptions};
use rustix::fs::{RenameFlags, renameat_with};

/// Bytes per `st_blocks` unit.
const BLOCK_BYTES: u64 = 512;

/// A fresh name for a temp folder: hidden, and short enough for any directory.
pub(super) fn temp_name() -> String {
    format!(".ars-tmp-{}", uuid::Uuid::new_v4().simple())
}

/// Whether `name` is one of [`temp_name`]'s.
pub(super) fn is_temp_name(name: &OsStr) -> bool {
    name.to_str().is_some_and(|n| n.starts_with(".ars-tmp-"))
}

/// Creates `tmp` in `parent` (it must not exist) and writes `files` into it.
pub(super) fn build(parent: &Dir, tmp: &str, files: &[(String, Vec<u8>)]) -> io::Result<()> {
    parent.create_dir(tmp)?;
    let root = parent.open_dir_nofollow(tmp)?;
    for (path, bytes) in files {
        let mut parts: Vec<&str> = path.split('/').collect();
        let Some(name) = parts.pop() else { continue };
        let mut current: Option<Dir> = None;
        for part in parts {
            let dir = current.as_ref().unwrap_or(&root);
            match dir.create_dir(part) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
            current = Some(dir.open_dir_nofollow(part)?);
        }
        let dir = current.as_ref().unwrap_or(&root);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        dir.open_with(name, &options)?.write_all(bytes)?;
    }
    Ok(())
}

/// Moves `from/tmp` to `to/name` in one step. With `replace`, whatever is at `to/name` (a
/// folder, a file or a symlink) is exchanged with it and now sits at `from/tmp`, for the
/// caller to [`remove`]; returns whether that happened. Without, an existing `to/name` fails
/// with `AlreadyExists`.
pub(super) fn swap_in(
    from: &Dir,
    tmp: &str,
    to: &Dir,
    name: &str,
    replace: bool,
) -> io::Result<bool> {
    if replace {
        match renameat_with(from, tmp, to, name, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(true),
            // Nothing there to exchange with: a plain move below.
            Err(rustix::io::Errno::NOENT) => {}
            Err(err) => return Err(err.into()),
        }
    }
    renameat_with(from, tmp, to, name, RenameFlags::NOREPLACE)?;
    Ok(false)
}

// Removes `name` from `parent`: a folder with everything below it, anything else (a symlink
// included) as the entry itself.
pub(super) use crate::files::remove::remove_entry as remove;

/// The space `parent/name` takes on disk (allocated blocks, as the quota counts), walked by
/// handle; a symlink counts as itself.
pub(super) fn disk_usage(parent: &Dir, name: &str) -> u64 {
    let Ok(meta) = parent.symlink_metadata(name) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.blocks() * BLOCK_BYTES;
    }
    parent
        .open_dir_nofollow(name)
        .map_or(meta.blocks() * BLOCK_BYTES, |dir| {
            crate::quota::disk_usage(&dir)
        })
}
