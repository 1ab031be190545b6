//! Blocking implementations of the file tools over the local data dir.
//!
//! Each function resolves its paths through [`crate::paths::Layout::resolve`] first and works
//! only on the host path that returns; [`crate::LocalSandbox`] runs them on the blocking pool.

mod list;
mod read;
mod search;
mod write;

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, Write as _};
use std::path::Path;

pub(crate) use list::list;
pub(crate) use read::read;
pub(crate) use search::{glob, grep};
pub(crate) use write::{edit, write};

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

/// Replaces `target` with `bytes` atomically: write a temp file in the same directory, then
/// rename it over the target. Keeps the target's permissions when it already exists.
///
/// `target` must be a resolved (canonical) host path, so the rename never replaces a symlink.
pub(crate) fn atomic_write(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = target
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent directory"))?;
    // A fixed short name: the target's own name may already be at the 255-byte limit.
    let tmp = dir.join(format!(".ars-tmp-{}", uuid::Uuid::new_v4().simple()));
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        if let Ok(meta) = fs::metadata(target) {
            file.set_permissions(meta.permissions())?;
        }
        drop(file);
        fs::rename(&tmp, target)
    })();
    if result.is_err() {
        // Best effort: the temp file is ours and useless now.
        let _ = fs::remove_file(&tmp);
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
