//! `write` and `edit`: the two ways the model changes files; `write_bytes`: the server's
//! uploads.

use std::io::Read as _;

use cap_fs_ext::FollowSymlinks;

use super::{atomic_create, atomic_write, entry_of, looks_binary, read_options, write_target};
use crate::error::SandboxError;
use crate::paths::{Access, Layout};
use crate::quota::Quotas;
use crate::sandbox::{EditOutcome, FileWritten, WriteMode, WriteOutcome};
use crate::scope::Scope;

/// Largest file `edit` loads; bigger ones are for the shell (`sed`) or a rewrite.
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// Creates or replaces a file (and its missing parent directories).
pub(crate) fn write(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    content: &str,
    quotas: &Quotas,
) -> Result<WriteOutcome, SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Write)?;
    let target = write_target(&resolved, true)?;
    let room = quotas.reserve(
        scope.user_id,
        &resolved.root,
        target.len,
        content.len() as u64,
    )?;
    atomic_write(&target.dir, &target.name, content.as_bytes())
        .map_err(|err| resolved.err(&err))?;
    room.commit();
    Ok(WriteOutcome {
        path: resolved.virtual_path,
        bytes_written: content.len() as u64,
        created: !target.exists,
    })
}

/// Creates or replaces a file with `bytes` (and its missing parent directories); with
/// [`WriteMode::CreateNew`] only where nothing is there yet.
pub(crate) fn write_bytes(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    bytes: &[u8],
    mode: WriteMode,
    quotas: &Quotas,
) -> Result<FileWritten, SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Write)?;
    let target = write_target(&resolved, true)?;
    let exists = || SandboxError::Exists {
        path: resolved.virtual_path.clone(),
    };
    if mode == WriteMode::CreateNew && target.exists {
        return Err(exists());
    }
    let room = quotas.reserve(
        scope.user_id,
        &resolved.root,
        target.len,
        bytes.len() as u64,
    )?;
    let written = match mode {
        WriteMode::Replace => atomic_write(&target.dir, &target.name, bytes),
        WriteMode::CreateNew => atomic_create(&target.dir, &target.name, bytes),
    };
    written.map_err(|err| {
        if err.kind() == std::io::ErrorKind::AlreadyExists {
            exists()
        } else {
            resolved.err(&err)
        }
    })?;
    room.commit();
    let meta = target
        .dir
        .symlink_metadata(&target.name)
        .map_err(|err| resolved.err(&err))?;
    let name = resolved.rel.file_name().unwrap_or(&target.name).to_owned();
    Ok(FileWritten {
        entry: entry_of(resolved.virtual_path.clone(), &name, &meta),
        created: !target.exists,
    })
}

/// Replaces exact text in a file: once (it must be unique) or everywhere.
pub(crate) fn edit(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    quotas: &Quotas,
) -> Result<EditOutcome, SandboxError> {
    if old.is_empty() {
        return Err(SandboxError::InvalidEdit(
            "the text to replace must not be empty; use write to create or overwrite a file".into(),
        ));
    }
    if old == new {
        return Err(SandboxError::InvalidEdit(
            "the old and new text are identical; nothing would change".into(),
        ));
    }
    let resolved = layout.resolve(scope, path, Access::Write)?;
    let shown = resolved.virtual_path.clone();
    let io_err = |err: std::io::Error| resolved.err(&err);
    let target = write_target(&resolved, false)?;
    if !target.exists {
        return Err(SandboxError::NotFound { path: shown });
    }
    // Read and replace in the same directory handle; the final name is not a link any more
    // (write_target resolved it), so one swapped in now is refused rather than followed.
    let file = target
        .dir
        .open_with(&target.name, &read_options(FollowSymlinks::No))
        .map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if !meta.is_file() {
        return Err(SandboxError::Io {
            path: shown,
            message: "not a regular file".into(),
        });
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(SandboxError::InvalidEdit(format!(
            "`{shown}` is larger than {} MiB; change it with the shell instead",
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if looks_binary(&bytes) {
        return Err(SandboxError::Binary { path: shown });
    }
    let text = String::from_utf8(bytes).map_err(|_| SandboxError::Binary {
        path: shown.clone(),
    })?;

    let count = text.matches(old).count();
    if count == 0 {
        return Err(SandboxError::EditNotFound { path: shown });
    }
    if count > 1 && !replace_all {
        return Err(SandboxError::EditNotUnique { path: shown, count });
    }
    let (updated, replacements) = if replace_all {
        (text.replace(old, new), count)
    } else {
        (text.replacen(old, new, 1), 1)
    };
    let room = quotas.reserve(
        scope.user_id,
        &resolved.root,
        meta.len(),
        updated.len() as u64,
    )?;
    atomic_write(&target.dir, &target.name, updated.as_bytes()).map_err(io_err)?;
    room.commit();
    Ok(EditOutcome {
        path: shown,
        replacements,
    })
}
