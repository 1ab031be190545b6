//! `read`: a line-numbered slice of a text file.

use std::io::{BufRead, BufReader};

use cap_fs_ext::FollowSymlinks;

use super::{looks_binary, next_line, read_options, shorten};
use crate::error::SandboxError;
use crate::paths::{Access, Layout, Resolved};
use crate::sandbox::{DEFAULT_READ_LINES, ReadOutcome};
use crate::scope::Scope;

/// Longest line shown in full; longer ones are cut so one minified file cannot flood the
/// context.
const MAX_LINE_BYTES: usize = 2000;

/// Returns lines `offset_line..offset_line + limit` (1-based) of a text file, numbered, within
/// `max_bytes`, and counts all lines so the model knows how much is left.
pub(crate) fn read(
    layout: &Layout,
    scope: &Scope,
    path: &str,
    offset_line: usize,
    limit_lines: Option<usize>,
    max_bytes: usize,
) -> Result<ReadOutcome, SandboxError> {
    let (file, _, resolved) = open_regular(layout, scope, path)?;
    let io_err = |err: std::io::Error| resolved.err(&err);
    let shown = resolved.virtual_path.clone();
    let mut reader = BufReader::new(file);
    if looks_binary(reader.fill_buf().map_err(io_err)?) {
        return Err(SandboxError::Binary { path: shown });
    }

    let first = offset_line.max(1);
    let limit = limit_lines.unwrap_or(DEFAULT_READ_LINES);
    let mut content = String::new();
    let mut returned = 0;
    let mut total = 0;
    let mut truncated = false;
    let mut full = false;
    let mut buf = Vec::new();
    while let Some(cut) = next_line(&mut reader, &mut buf, MAX_LINE_BYTES).map_err(io_err)? {
        total += 1;
        if total < first || returned >= limit || full {
            continue;
        }
        let mut text = String::from_utf8_lossy(&buf).into_owned();
        if cut {
            shorten(&mut text, MAX_LINE_BYTES);
            truncated = true;
        }
        let entry = format!("{total:>6}\t{text}\n");
        if content.len() + entry.len() > max_bytes {
            full = true;
            truncated = true;
            continue;
        }
        content.push_str(&entry);
        returned += 1;
    }
    Ok(ReadOutcome {
        path: shown,
        content,
        first_line: first,
        lines_returned: returned,
        total_lines: total,
        truncated,
    })
}

/// Opens the regular file at `path` through its root's handle and checks its type on the open
/// file itself, so what is checked is what is read. Answers the file, its metadata and its
/// resolution (for the virtual path and error mapping of later reads).
pub(crate) fn open_regular(
    layout: &Layout,
    scope: &Scope,
    path: &str,
) -> Result<(cap_std::fs::File, cap_std::fs::Metadata, Resolved), SandboxError> {
    let resolved = layout.resolve(scope, path, Access::Read)?;
    let io_err = |err: std::io::Error| resolved.err(&err);
    let file = resolved
        .root
        .open_with(&resolved.rel, &read_options(FollowSymlinks::Yes))
        .map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    let shown = resolved.virtual_path.clone();
    if meta.is_dir() {
        return Err(SandboxError::IsDirectory { path: shown });
    }
    if !meta.is_file() {
        return Err(SandboxError::Io {
            path: shown,
            message: "not a regular file".into(),
        });
    }
    Ok((file, meta, resolved))
}
