//! `write` and `edit`: the two ways the model changes files.

use std::fs;

use super::{atomic_write, looks_binary};
use crate::error::SandboxError;
use crate::paths::{Access, Layout};
use crate::sandbox::{EditOutcome, WriteOutcome};
use crate::scope::Scope;

/// Largest file `edit` loads; bigger ones are for the shell (`sed`) or a rewrite.
const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

/// Creates or replaces a file (and its missing parent directories).
pub(crate) fn write(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    content: &str,
) -> Result<WriteOutcome, SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Write)?;
    let shown = resolved.virtual_path;
    let io_err = |err: std::io::Error| SandboxError::io(&shown, &err);
    if resolved.exists && fs::metadata(&resolved.host).map_err(io_err)?.is_dir() {
        return Err(SandboxError::IsDirectory { path: shown });
    }
    if let Some(parent) = resolved.host.parent() {
        fs::create_dir_all(parent).map_err(|err| SandboxError::Io {
            path: shown.clone(),
            message: format!("cannot create the parent directory: {err}"),
        })?;
    }
    atomic_write(&resolved.host, content.as_bytes()).map_err(io_err)?;
    Ok(WriteOutcome {
        path: shown,
        bytes_written: content.len() as u64,
        created: !resolved.exists,
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
    let shown = resolved.virtual_path;
    let io_err = |err: std::io::Error| SandboxError::io(&shown, &err);
    let meta = fs::metadata(&resolved.host).map_err(io_err)?;
    if meta.is_dir() {
        return Err(SandboxError::IsDirectory { path: shown });
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(SandboxError::InvalidEdit(format!(
            "`{shown}` is larger than {} MiB; change it with the shell instead",
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    let bytes = fs::read(&resolved.host).map_err(io_err)?;
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
    atomic_write(&resolved.host, updated.as_bytes()).map_err(io_err)?;
    Ok(EditOutcome {
        path: shown,
        replacements,
    })
}
