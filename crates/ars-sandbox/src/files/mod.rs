//! Blocking implementations of the file tools over the local data dir.
//!
//! Each function resolves its paths through [`crate::paths::Layout::resolve`] first and then
//! acts only through the directory handle that returns (never through a host path);
//! [`crate::LocalSandbox`] runs them on the blocking pool.

mod bytes;
mod list;
mod read;
pub(crate) mod remove;
mod search;
mod tree;
mod unlock;
pub(crate) mod walk;
mod write;

use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, Write as _};
use std::path::PathBuf;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, OpenOptions};
use rustix::fs::{RenameFlags, renameat_with};

use crate::error::SandboxError;
use crate::paths::Resolved;
use crate::sandbox::{DirEntry, EntryKind};

pub(crate) use bytes::{open_file, read_bytes, read_tree};
pub(crate) use list::list;
pub(crate) use read::read;
pub(crate) use remove::{remove, remove_workdir};
pub(crate) use search::{glob, grep};
pub(crate) use tree::tree;
pub(crate) use write::{edit, write, write_bytes};

/// How much of a file's start is inspected to decide whether it is binary.
const SNIFF_BYTES: usize = 8192;

/// A file is treated as binary when its first bytes contain a NUL, as git and grep do.
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    head[..head.len().min(SNIFF_BYTES)].contains(&0)
}

/// Reads the next line into `buf` without its line ending, keeping at most `cap` bytes of it
/// and skipping the rest, so a gigantic single-line file cannot exhaust memory.
///
/// Returns `None` at end of file, otherwise whether the line was cut.
pub(crate) fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    let mut seen_any = false;
    let mut cut = false;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            break;
        }
        seen_any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        let take = chunk.len().min(room);
        buf.extend_from_slice(&chunk[..take]);
        cut |= chunk.len() > room;
        reader.consume(used);
        if done {
            break;
        }
    }
    if !seen_any {
        return Ok(None);
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(cut))
}

/// What `meta` (taken without following a symlink) says an entry is.
pub(crate) fn kind_of(meta: &Metadata) -> EntryKind {
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        EntryKind::Symlink
    } else if file_type.is_dir() {
        EntryKind::Directory
    } else if file_type.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

/// The entry `name` at the virtual path `path`, as `meta` describes it.
pub(crate) fn entry_of(path: String, name: &OsStr, meta: &Metadata) -> DirEntry {
    DirEntry {
        path,
        name: name.to_string_lossy().into_owned(),
        kind: kind_of(meta),
        size: meta.len(),
        modified: meta
            .modified()
            .ok()
            .map(cap_std::time::SystemTime::into_std),
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary; returns whether it cut.
pub(crate) fn shorten(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(" … [line truncated]");
    true
}

/// Options for opening a file to read it: never blocks on a FIFO or device that someone
/// planted, and follows a final symlink only when `follow` says so (it stays confined to the
/// handle either way).
pub(crate) fn read_options(follow: FollowSymlinks) -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).nonblock(true).follow(follow);
    options
}

/// Where a write to `resolved` lands, opened by handle: the parent directory and the final
/// name, and whether something is there already.
pub(crate) struct WriteTarget {
    /// The parent directory, opened through the root's handle.
    pub(crate) dir: Dir,
    /// The final component, to be created or replaced inside `dir`.
    pub(crate) name: OsString,
    /// Whether `name` existed in `dir` when it was looked up.
    pub(crate) exists: bool,
    /// The size of what was there (0 when nothing was).
    pub(crate) len: u64,
}

/// Opens the directory a write to `resolved` goes into, creating missing parents when asked.
///
/// Symlinks on the way that stay inside the root are resolved first (so writing to a link
/// updates its target, and the link stays), then every step is taken through the root's
/// handle. A link swapped in between can only redirect the write within the root.
pub(crate) fn write_target(
    resolved: &Resolved,
    create_parents: bool,
) -> Result<WriteTarget, SandboxError> {
    let shown = &resolved.virtual_path;
    let target = match resolved.root.canonicalize(&resolved.rel) {
        Ok(canonical) => canonical,
        Err(err) if err.kind() == io::ErrorKind::NotFound => resolved.rel.clone(),
        Err(err) => return Err(resolved.err(&err)),
    };
    let (Some(name), parent) = (target.file_name(), target.parent()) else {
        return Err(SandboxError::IsDirectory {
            path: shown.clone(),
        });
    };
    let parent = match parent {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    if create_parents {
        resolved.root.create_dir_all(&parent).map_err(|err| {
            match SandboxError::io(shown, &err) {
                outside @ SandboxError::OutsideScope { .. } => outside,
                // A file where a parent directory should be.
                SandboxError::NotDirectory { .. } => SandboxError::NotDirectory {
                    path: shown.clone(),
                },
                _ if err.kind() == io::ErrorKind::AlreadyExists => SandboxError::NotDirectory {
                    path: shown.clone(),
                },
                _ => SandboxError::Io {
                    path: shown.clone(),
                    message: format!("cannot create the parent directory: {err}"),
                },
            }
        })?;
    }
    let dir = resolved
        .root
        .open_dir(&parent)
        .map_err(|err| resolved.err(&err))?;
    let (exists, len) = match dir.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => {
            return Err(SandboxError::IsDirectory {
                path: shown.clone(),
            });
        }
        Ok(meta) => (true, meta.len()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => (false, 0),
        Err(err) => return Err(resolved.err(&err)),
    };
    Ok(WriteTarget {
        dir,
        name: name.to_owned(),
        exists,
        len,
    })
}

/// Replaces `name` in `dir` with `bytes` atomically: a temp file created in `dir` through its
/// handle, then renamed over `name` within the same handle, so the temp file never appears
/// anywhere else and a concurrent reader never sees half of the content. Keeps the old file's
/// permissions.
pub(crate) fn atomic_write(dir: &Dir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    atomic_put(dir, name, bytes, false)
}

/// Creates `name` in `dir` with `bytes` as [`atomic_write`] does, but only where nothing is
/// there: the temp file is moved into place with `RENAME_NOREPLACE`, so a file that appeared
/// since anyone looked is left alone (`AlreadyExists`).
pub(crate) fn atomic_create(dir: &Dir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    atomic_put(dir, name, bytes, true)
}

fn atomic_put(dir: &Dir, name: &OsStr, bytes: &[u8], no_replace: bool) -> io::Result<()> {
    // A fixed short name: the target's own name may already be at the 255-byte limit.
    let tmp = format!(".ars-tmp-{}", uuid::Uuid::new_v4().simple());
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = dir.open_with(&tmp, &options)?;
        file.write_all(bytes)?;
        if let Ok(meta) = dir.symlink_metadata(name)
            && meta.is_file()
        {
            file.set_permissions(meta.permissions())?;
        }
        drop(file);
        if no_replace {
            renameat_with(dir, tmp.as_str(), dir, name, RenameFlags::NOREPLACE).map_err(Into::into)
        } else {
            dir.rename(&tmp, dir, name)
        }
    })();
    if result.is_err() {
        // Best effort: the temp file is ours and useless now.
        let _ = dir.remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], cap: usize) -> Vec<(String, bool)> {
        let mut reader = io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while let Some(cut) = next_line(&mut reader, &mut buf, cap).unwrap() {
            out.push((String::from_utf8(buf.clone()).unwrap(), cut));
        }
        out
    }

    #[test]
    fn next_line_splits_caps_and_strips_line_endings() {
        assert_eq!(lines(b"", 10), vec![]);
        assert_eq!(
            lines(b"ab\r\ncd\n\nlast", 10),
            vec![
                ("ab".into(), false),
                ("cd".into(), false),
                ("".into(), false),
                ("last".into(), false)
            ]
        );
        assert_eq!(
            lines(b"0123456789abc\nx\n", 5),
            vec![("01234".into(), true), ("x".into(), false)]
        );
    }

    #[test]
    fn binary_means_a_nul_in_the_first_bytes() {
        assert!(looks_binary(b"ab\0c"));
        assert!(!looks_binary("héllo\n".as_bytes()));
    }
}
