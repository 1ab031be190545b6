//! `read_bytes`, `read_tree` and `open_file`: raw file contents for the server (downloading
//! and listing skill folders, the workdir's file browser), not for the model.

use std::io::Read as _;
use std::ops::ControlFlow;

use cap_fs_ext::FollowSymlinks;

use super::walk::{Walk, walk};
use super::{entry_of, read_options};
use crate::error::SandboxError;
use crate::paths::{Access, Layout};
use crate::sandbox::DirEntry;
use crate::scope::Scope;

/// The regular file at `path`, opened and checked exactly as `read` does, with its entry as
/// the open file's `fstat` describes it.
pub(crate) fn open_file(
    layout: &Layout,
    scope: &Scope,
    path: &str,
) -> Result<(std::fs::File, DirEntry), SandboxError> {
    let (file, meta, resolved) = super::read::open_regular(layout, scope, path)?;
    let name = resolved.rel.file_name().unwrap_or_default().to_owned();
    let entry = entry_of(resolved.virtual_path, &name, &meta);
    Ok((file.into_std(), entry))
}

/// The bytes of the file at `path`, resolved and checked (on the open file) exactly as `read`
/// does; a file over `max_bytes` is [`SandboxError::TooLarge`].
pub(crate) fn read_bytes(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    max_bytes: u64,
) -> Result<Vec<u8>, SandboxError> {
    let (file, meta, resolved) = super::read::open_regular(layout, scope, path)?;
    let io_err = |err: std::io::Error| resolved.err(&err);
    let shown = resolved.virtual_path.clone();
    let too_large = || SandboxError::TooLarge {
        path: shown.clone(),
        reason: format!("it is larger than the limit of {max_bytes} bytes"),
    };
    if meta.len() > max_bytes {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    // The file may grow after the fstat; never read past the limit.
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Every regular file below the directory `dir`, as (path relative to it, `/`-separated;
/// bytes), sorted by path. The directory itself is resolved like `list` (symlinks inside the
/// root followed); below it the walk goes by handle with `O_NOFOLLOW` and skips symlinks and
/// special files. More than `max_files` files or `max_bytes` bytes in all is
/// [`SandboxError::TooLarge`].
pub(crate) fn read_tree(
    layout: &Layout,
    scope: &Scope,
    dir: &str,
    max_files: usize,
    max_bytes: u64,
) -> Result<Vec<(String, Vec<u8>)>, SandboxError> {
    let resolved = layout.resolve(scope, dir, Access::Read)?;
    let base = resolved
        .root
        .open_dir(&resolved.rel)
        .map_err(|err| resolved.err(&err))?;
    let shown = &resolved.virtual_path;
    let mut files = Vec::new();
    let mut total: u64 = 0;
    let mut failed = None;
    walk(&base, Walk::ALL, &mut |entry| {
        let (dir, relative) = (entry.dir, entry.path);
        if !entry.file_type.is_file() {
            return ControlFlow::Continue(());
        }
        let virtual_path = resolved.child_virtual(relative);
        match read_one(dir, relative, &virtual_path, max_bytes - total) {
            Ok(None) => ControlFlow::Continue(()),
            Ok(Some(_)) if files.len() == max_files => {
                failed = Some(SandboxError::TooLarge {
                    path: shown.clone(),
                    reason: format!("it holds more than {max_files} files"),
                });
                ControlFlow::Break(())
            }
            Ok(Some((path, bytes))) => {
                total += bytes.len() as u64;
                files.push((path, bytes));
                ControlFlow::Continue(())
            }
            Err(err) => {
                failed = Some(match err {
                    SandboxError::TooLarge { .. } => SandboxError::TooLarge {
                        path: shown.clone(),
                        reason: format!("its files hold more than {max_bytes} bytes"),
                    },
                    other => other,
                });
                ControlFlow::Break(())
            }
        }
    });
    if let Some(err) = failed {
        return Err(err);
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// Reads one file the walk found in `dir`, within `room` bytes; `None` when it is no longer a
/// regular file (replaced since the walk listed it).
fn read_one(
    dir: &cap_std::fs::Dir,
    relative: &std::path::Path,
    shown: &str,
    room: u64,
) -> Result<Option<(String, Vec<u8>)>, SandboxError> {
    let Some(name) = relative.file_name() else {
        return Ok(None);
    };
    let Some(path) = relative.to_str() else {
        return Err(SandboxError::Io {
            path: shown.to_owned(),
            message: "the file name is not valid UTF-8".into(),
        });
    };
    let file = match dir.open_with(name, &read_options(FollowSymlinks::No)) {
        Ok(file) => file,
        // Gone, or a symlink swapped in since the listing (ELOOP): skipped like any symlink.
        Err(err)
            if err.kind() == std::io::ErrorKind::NotFound
                || err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
        {
            return Ok(None);
        }
        Err(err) => return Err(SandboxError::io(shown, &err)),
    };
    let meta = file
        .metadata()
        .map_err(|err| SandboxError::io(shown, &err))?;
    if !meta.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(room.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| SandboxError::io(shown, &err))?;
    if bytes.len() as u64 > room {
        return Err(SandboxError::TooLarge {
            path: shown.to_owned(),
            reason: String::new(),
        });
    }
    Ok(Some((path.to_owned(), bytes)))
}
