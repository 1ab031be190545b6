//! `glob` and `grep`: finding files by name and by content.
//!
//! Both walk the tree by handle: each directory is opened relative to its parent's handle
//! without following symlinks, and each file is opened the same way, so a link swapped in
//! mid-walk is skipped rather than followed out. They skip `.git` directories and stop after a
//! bounded number of entries and levels so a huge or deep workspace cannot stall a tool call;
//! either bound reaching something says `truncated`.

use std::io::{BufRead, BufReader};
use std::ops::ControlFlow;

use cap_fs_ext::FollowSymlinks;
use cap_std::fs::Dir;
use globset::{GlobBuilder, GlobMatcher};
use regex::{Regex, RegexBuilder};

use super::walk::{Walk, walk};
use super::{looks_binary, next_line, read_options, shorten};
use crate::error::{SandboxError, display_path};
use crate::layout::MAX_PATH_BYTES;
use crate::paths::{Access, Layout, Resolved};
use crate::sandbox::{GlobOutcome, GrepMatch, GrepOutcome};
use crate::scope::Scope;

/// Most directory entries one walk visits before it reports `truncated`.
const MAX_WALK_ENTRIES: usize = 100_000;
/// Files larger than this are not searched by `grep`.
const MAX_GREP_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes of a line considered for matching; the rest of a very long line is skipped.
const MAX_GREP_LINE_BYTES: usize = 64 * 1024;
/// Bytes of a matching line returned to the model.
const MAX_MATCH_TEXT_BYTES: usize = 500;
/// Compiled-size limit for a model-supplied regex, against pathological patterns.
const MAX_REGEX_BYTES: usize = 1 << 20;

/// Finds files matching `pattern` below `base` (or below an absolute pattern's literal prefix).
pub(crate) fn glob(
    layout: &Layout,
    scope: &Scope,
    pattern: &str,
    base: Option<&str>,
    max_matches: usize,
) -> Result<GlobOutcome, SandboxError> {
    let invalid = |reason: &str| SandboxError::InvalidPattern {
        pattern: display_path(pattern),
        reason: reason.to_owned(),
    };
    if pattern.contains('\0') {
        return Err(invalid("it contains a NUL byte"));
    }
    if pattern.len() > MAX_PATH_BYTES {
        return Err(invalid("it is too long"));
    }
    let (base, relative) = split_pattern(pattern, base);
    if relative.is_empty() {
        return Err(invalid("it is empty"));
    }
    if relative.split('/').any(|part| part == "..") {
        return Err(invalid(
            "`..` is not allowed in a pattern; pass the directory as base instead",
        ));
    }
    let matcher = compile_glob(&relative).map_err(|reason| invalid(&reason))?;
    let root = layout.resolve(scope, &base, Access::Read)?;
    let base_dir = open_walk_root(&root)?;

    let mut matches = Vec::new();
    let mut truncated = false;
    let mut visited = 0;
    let walked = walk(&base_dir, Walk::SEARCH, &mut |entry| {
        visited += 1;
        if visited > MAX_WALK_ENTRIES {
            truncated = true;
            return ControlFlow::Break(());
        }
        if entry.file_type.is_dir() || !matcher.is_match(entry.path) {
            return ControlFlow::Continue(());
        }
        if matches.len() == max_matches {
            truncated = true;
            return ControlFlow::Break(());
        }
        matches.push(root.child_virtual(entry.path));
        ControlFlow::Continue(())
    });
    truncated |= walked.cut;
    matches.sort();
    Ok(GlobOutcome {
        base: root.virtual_path,
        matches,
        truncated,
    })
}

/// Searches files for lines matching the regex `pattern`.
pub(crate) fn grep(
    layout: &Layout,
    scope: &Scope,
    pattern: &str,
    path: Option<&str>,
    glob: Option<&str>,
    max_matches: usize,
) -> Result<GrepOutcome, SandboxError> {
    let regex = RegexBuilder::new(pattern)
        .size_limit(MAX_REGEX_BYTES)
        .build()
        .map_err(|err| SandboxError::InvalidPattern {
            pattern: display_path(pattern),
            reason: err.to_string(),
        })?;
    let filter = glob
        .map(|g| {
            compile_glob(g)
                .map(|matcher| (matcher, g.contains('/')))
                .map_err(|reason| SandboxError::InvalidPattern {
                    pattern: display_path(g),
                    reason,
                })
        })
        .transpose()?;
    let root = layout.resolve(scope, path.unwrap_or("."), Access::Read)?;
    let io_err = |err: std::io::Error| root.err(&err);

    let mut search = Search {
        regex,
        max_matches,
        outcome: GrepOutcome {
            matches: Vec::new(),
            files_searched: 0,
            truncated: false,
        },
    };
    // The start is opened once, following in-scope links; what it turned out to be decides
    // between searching one file and walking a directory.
    let start = root
        .root
        .open_with(&root.rel, &read_options(FollowSymlinks::Yes))
        .map_err(io_err)?;
    let meta = start.metadata().map_err(io_err)?;
    if meta.is_file() {
        search.file(start, &root.virtual_path);
        return Ok(search.outcome);
    }
    if !meta.is_dir() {
        return Err(SandboxError::Io {
            path: root.virtual_path,
            message: "not a regular file or directory".into(),
        });
    }
    let base_dir = Dir::from_std_file(start.into_std());
    let mut visited = 0;
    let walked = walk(&base_dir, Walk::SEARCH, &mut |entry| {
        let (dir, name, relative) = (entry.dir, entry.name, entry.path);
        visited += 1;
        if visited > MAX_WALK_ENTRIES {
            search.outcome.truncated = true;
        }
        if search.outcome.truncated {
            return ControlFlow::Break(());
        }
        if !entry.file_type.is_file() {
            return ControlFlow::Continue(());
        }
        if let Some((matcher, whole_path)) = &filter {
            let selected = if *whole_path {
                matcher.is_match(relative)
            } else {
                matcher.is_match(name)
            };
            if !selected {
                return ControlFlow::Continue(());
            }
        }
        // Not following: if the entry became a symlink since readdir, it is skipped.
        if let Ok(file) = dir.open_with(name, &read_options(FollowSymlinks::No)) {
            search.file(file, &root.child_virtual(relative));
        }
        ControlFlow::Continue(())
    });
    search.outcome.truncated |= walked.cut;
    Ok(search.outcome)
}

/// The state of one grep: the compiled regex and the matches so far.
struct Search {
    regex: Regex,
    max_matches: usize,
    outcome: GrepOutcome,
}

impl Search {
    /// Searches one file; unreadable, binary and oversized files are skipped silently, as
    /// grep -I does.
    fn file(&mut self, file: cap_std::fs::File, shown: &str) {
        if file
            .metadata()
            .map_or(true, |m| !m.is_file() || m.len() > MAX_GREP_FILE_BYTES)
        {
            return;
        }
        let mut reader = BufReader::new(file);
        match reader.fill_buf() {
            Ok(head) if !looks_binary(head) => {}
            _ => return,
        }
        self.outcome.files_searched += 1;
        let mut buf = Vec::new();
        let mut line = 0;
        while let Ok(Some(_)) = next_line(&mut reader, &mut buf, MAX_GREP_LINE_BYTES) {
            line += 1;
            let text = String::from_utf8_lossy(&buf);
            if !self.regex.is_match(&text) {
                continue;
            }
            if self.outcome.matches.len() == self.max_matches {
                self.outcome.truncated = true;
                return;
            }
            let mut text = text.into_owned();
            shorten(&mut text, MAX_MATCH_TEXT_BYTES);
            self.outcome.matches.push(GrepMatch {
                path: shown.to_owned(),
                line,
                text,
            });
        }
    }
}

/// Splits a pattern into the directory to walk and the part to match below it. An absolute
/// pattern's leading components without glob syntax become the base; a relative one is
/// matched below `base` (default: the workdir).
fn split_pattern(pattern: &str, base: Option<&str>) -> (String, String) {
    if !pattern.starts_with('/') {
        let relative = pattern.trim_start_matches("./").to_owned();
        return (base.unwrap_or(".").to_owned(), relative);
    }
    let has_meta = |part: &str| part.contains(['*', '?', '[', '{']);
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let literal = parts.iter().take_while(|p| !has_meta(p)).count();
    // A pattern without any glob syntax names one file: match its name in its directory.
    let split = if literal == parts.len() {
        literal.saturating_sub(1)
    } else {
        literal
    };
    (
        format!("/{}", parts[..split].join("/")),
        parts[split..].join("/"),
    )
}

fn compile_glob(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|err| err.kind().to_string())
}

/// Opens the directory a walk starts from, following in-scope links.
fn open_walk_root(root: &Resolved) -> Result<Dir, SandboxError> {
    root.root.open_dir(&root.rel).map_err(|err| root.err(&err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_pattern_finds_the_literal_base() {
        let split = |p: &str, b: Option<&str>| {
            let (base, rel) = split_pattern(p, b);
            (base, rel)
        };
        assert_eq!(split("**/*.rs", None), (".".into(), "**/*.rs".into()));
        assert_eq!(
            split("./src/*.rs", Some("x")),
            ("x".into(), "src/*.rs".into())
        );
        assert_eq!(
            split("/home/gem/skills/*/SKILL.md", None),
            ("/home/gem/skills".into(), "*/SKILL.md".into())
        );
        assert_eq!(
            split("/home/gem/user-data/a/b.txt", None),
            ("/home/gem/user-data/a".into(), "b.txt".into())
        );
    }
}
