//! What a skill's name, version and file paths may look like.

use std::collections::HashSet;

use crate::error::{SandboxError, display_path};
use crate::layout::MAX_COMPONENT_BYTES;

/// Longest skill name.
const MAX_NAME_BYTES: usize = 64;
/// Longest version string.
const MAX_VERSION_BYTES: usize = 128;
/// Most files one skill folder may hold.
const MAX_FILES: usize = 1000;
/// Longest file path within a skill folder.
const MAX_FILE_PATH_BYTES: usize = 1024;

fn refuse(name: &str, reason: impl Into<String>) -> SandboxError {
    SandboxError::InvalidSkill {
        name: display_path(name),
        reason: reason.into(),
    }
}

/// A name is 1–64 of `[a-z0-9-]`, with no leading, trailing or doubled `-`; so it is always
/// one plain path component, never `.`, `..` or hidden.
pub(crate) fn name(name: &str) -> Result<(), SandboxError> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(refuse(
            name,
            format!("a skill name has 1 to {MAX_NAME_BYTES} characters"),
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(refuse(
            name,
            "a skill name may contain only a-z, 0-9 and '-'",
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(refuse(
            name,
            "a skill name may not start or end with '-' or contain '--'",
        ));
    }
    Ok(())
}

/// A version is 1–128 printable ASCII characters without spaces (it is one manifest field).
pub(crate) fn version(skill: &str, version: &str) -> Result<(), SandboxError> {
    if version.is_empty()
        || version.len() > MAX_VERSION_BYTES
        || !version.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(refuse(
            skill,
            format!("a version has 1 to {MAX_VERSION_BYTES} printable ASCII characters, no spaces"),
        ));
    }
    Ok(())
}

/// Every path is relative and `/`-separated, with no empty, `.` or `..` component, no control
/// character, within the length limits; no path twice, and none both a file and a directory.
pub(crate) fn files(skill: &str, files: &[(String, Vec<u8>)]) -> Result<(), SandboxError> {
    if files.len() > MAX_FILES {
        return Err(refuse(
            skill,
            format!("a skill holds at most {MAX_FILES} files"),
        ));
    }
    let mut seen = HashSet::new();
    let mut dirs = HashSet::new();
    for (path, _) in files {
        file_path(skill, path)?;
        if !seen.insert(path.as_str()) {
            return Err(refuse(
                skill,
                format!("the file `{}` is given twice", display_path(path)),
            ));
        }
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            dirs.insert(&path[..end]);
            end += 1;
        }
    }
    if let Some(both) = seen.iter().find(|path| dirs.contains(*path)) {
        return Err(refuse(
            skill,
            format!("`{}` is both a file and a directory", display_path(both)),
        ));
    }
    Ok(())
}

fn file_path(skill: &str, path: &str) -> Result<(), SandboxError> {
    let bad = |why: &str| {
        refuse(
            skill,
            format!("the file path `{}` {why}", display_path(path)),
        )
    };
    if path.is_empty() || path.len() > MAX_FILE_PATH_BYTES {
        return Err(bad(&format!("must have 1 to {MAX_FILE_PATH_BYTES} bytes")));
    }
    if path.starts_with('/') {
        return Err(bad("must be relative"));
    }
    if path.chars().any(char::is_control) {
        return Err(bad("contains a NUL or control character"));
    }
    for component in path.split('/') {
        if component.is_empty() || component == "." || component == ".." {
            return Err(bad("has an empty, `.` or `..` component"));
        }
        if component.len() > MAX_COMPONENT_BYTES {
            return Err(bad(&format!(
                "has a component longer than {MAX_COMPONENT_BYTES} bytes"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lowercase_words_joined_by_single_dashes() {
        for good in ["a", "pdf", "web-search", "x1-2", &"a".repeat(64)] {
            assert!(name(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "a.b",
            "..",
            ".",
            "a/b",
            "a b",
            "é",
            &"a".repeat(65),
        ] {
            assert!(name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn versions_are_one_printable_word() {
        assert!(version("s", "1.2.0+abc").is_ok());
        for bad in ["", "1 2", "1\n2", &"1".repeat(129)] {
            assert!(version("s", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn file_paths_stay_inside_the_folder() {
        let of = |paths: &[&str]| -> Vec<(String, Vec<u8>)> {
            paths
                .iter()
                .map(|p| ((*p).to_owned(), Vec::new()))
                .collect()
        };
        assert!(files("s", &of(&["SKILL.md", "scripts/run.sh", "a/b/c.txt"])).is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "./a",
            "a//b",
            "a/",
            "a\0b",
            "a\nb",
            &"a".repeat(256),
            &"ab/".repeat(400),
        ] {
            assert!(files("s", &of(&[bad])).is_err(), "{bad:?}");
        }
        assert!(files("s", &of(&["a", "a"])).is_err());
        assert!(files("s", &of(&["a", "a/b"])).is_err());
        assert!(files("s", &of(&["a/b/c", "a/b"])).is_err());
    }
}
