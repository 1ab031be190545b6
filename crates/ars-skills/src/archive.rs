//! Reading a skill upload: a zip (or `.skill`, the same format) archive, a lone SKILL.md, or
//! files read from a folder, into one validated [`SkillBundle`].
//!
//! Uploads are hostile until proven otherwise. Every path is checked before anything is
//! read; sizes are measured on the bytes actually decompressed, through a reader capped just
//! past the limit, so a zip bomb stops at the limit instead of filling memory; declared sizes
//! are never trusted. Archives inside the archive (`.zip`, `.tar`, `.gz`, `.skill`) are
//! never unpacked: they are kept as plain files like any other.
//!
//! Two layouts are accepted: SKILL.md at the archive's root, or everything inside one top
//! folder named after the skill. Entries under `__MACOSX/` (the resource forks macOS's
//! Finder adds to the zips it makes) are skipped.

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Write};

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};

use crate::error::SkillError;
use crate::format::{SkillManifest, parse_skill_md};

/// The name of the file that makes a folder a skill.
pub const SKILL_MD: &str = "SKILL.md";
/// The file-type bits of a unix mode, and the value that marks a symbolic link.
const S_IFMT: u32 = 0o170_000;
const S_IFLNK: u32 = 0o120_000;
/// The folder macOS adds to the zips it makes; it holds no part of the skill.
const MACOS_METADATA: &str = "__MACOSX/";

/// A validated skill: its manifest and all its files.
#[derive(Clone, Debug, PartialEq)]
pub struct SkillBundle {
    /// The parsed SKILL.md.
    pub manifest: SkillManifest,
    /// Every file by its path relative to the skill folder, with `/` separators
    /// (`SKILL.md`, `scripts/x.py`, …); SKILL.md included. Contents are raw bytes: only
    /// SKILL.md has to be text.
    pub files: BTreeMap<String, Vec<u8>>,
}

/// How much an upload may hold once decompressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadLimits {
    /// The most files (directory entries not counted).
    pub max_files: usize,
    /// The most bytes of all files together.
    pub max_total_bytes: u64,
    /// The most bytes of any one file.
    pub max_file_bytes: u64,
}

impl Default for UploadLimits {
    /// 200 files, 20 MiB in total, 10 MiB per file: room for scripts, references and a few
    /// assets, while one upload stays a small, bounded amount of memory.
    fn default() -> Self {
        Self {
            max_files: 200,
            max_total_bytes: 20 * 1024 * 1024,
            max_file_bytes: 10 * 1024 * 1024,
        }
    }
}

impl SkillBundle {
    /// The skill's name (from its SKILL.md).
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// A content hash: lowercase hex SHA-256 over every file in path order, each as its
    /// path's length, the path, its content's length and the content (lengths as 8-byte
    /// little-endian), so two bundles have the same version exactly when their files match.
    pub fn version(&self) -> String {
        let mut hasher = Sha256::new();
        for (path, bytes) in &self.files {
            hasher.update((path.len() as u64).to_le_bytes());
            hasher.update(path.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// The total size of the files, in bytes.
    pub fn size_bytes(&self) -> u64 {
        self.files.values().map(|bytes| bytes.len() as u64).sum()
    }

    /// Packs the files into a zip, under one top folder named after the skill. Timestamps
    /// are fixed (1980-01-01) and entries sorted, so the same bundle gives the same bytes.
    pub fn to_zip(&self) -> Result<Vec<u8>, SkillError> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .last_modified_time(DateTime::DEFAULT)
            .unix_permissions(0o644);
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        let write_error = |err: zip::result::ZipError| SkillError::Zip(err.to_string());
        for (path, bytes) in &self.files {
            writer
                .start_file(format!("{}/{path}", self.name()), options)
                .map_err(write_error)?;
            writer
                .write_all(bytes)
                .map_err(|err| SkillError::Zip(err.to_string()))?;
        }
        Ok(writer.finish().map_err(write_error)?.into_inner())
    }
}

/// Reads a zip (or `.skill`) upload.
///
/// SKILL.md must sit at the archive's root, or everything inside one top folder whose name
/// equals the skill's. Refused: unsafe paths (see [`check_path`]), symbolic links, encrypted
/// entries, duplicate paths, more than `limits.max_files` files, a file or the sum of files
/// over the byte limits (measured while decompressing), no SKILL.md, a SKILL.md that is not
/// UTF-8 or not valid.
pub fn read_zip(bytes: &[u8], limits: &UploadLimits) -> Result<SkillBundle, SkillError> {
    let mut archive =
        ZipArchive::new(Cursor::new(bytes)).map_err(|err| SkillError::Zip(err.to_string()))?;
    if archive.has_duplicate_names() {
        return Err(SkillError::DuplicateEntries);
    }

    // First pass, metadata only: refuse what is unsafe before decompressing anything.
    let mut entries: Vec<(usize, String)> = Vec::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index_data(index)
            .map_err(|err| SkillError::Zip(err.to_string()))?;
        let name = entry
            .name()
            .map_err(|err| SkillError::Zip(err.to_string()))?
            .into_owned();
        if name.starts_with(MACOS_METADATA) {
            continue;
        }
        let is_dir = entry.is_dir();
        check_path(if is_dir {
            name.trim_end_matches('/')
        } else {
            &name
        })?;
        let is_link = entry.is_symlink()
            || entry
                .unix_mode()
                .is_some_and(|mode| mode & S_IFMT == S_IFLNK);
        if is_link {
            return Err(SkillError::Symlink {
                path: escape(&name),
            });
        }
        if entry.encrypted() {
            return Err(SkillError::Encrypted {
                path: escape(&name),
            });
        }
        if is_dir {
            continue;
        }
        entries.push((index, name));
        if entries.len() > limits.max_files {
            return Err(SkillError::TooManyFiles {
                limit: limits.max_files,
            });
        }
    }
    let folder = top_folder(&entries)?;
    let prefix = folder.as_ref().map(|folder| format!("{folder}/"));

    // Second pass: decompress through capped readers.
    let mut files = BTreeMap::new();
    let mut total: u64 = 0;
    for (index, name) in entries {
        let path = match &prefix {
            Some(prefix) => name.strip_prefix(prefix.as_str()).unwrap_or(&name),
            None => &name,
        }
        .to_owned();
        let remaining = limits.max_total_bytes.saturating_sub(total);
        let cap = limits.max_file_bytes.min(remaining);
        let mut data = Vec::new();
        let file = archive
            .by_index(index)
            .map_err(|err| SkillError::Zip(format!("entry `{name}`: {err}")))?;
        file.take(cap.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(|err| SkillError::Zip(format!("entry `{name}`: {err}")))?;
        let size = data.len() as u64;
        if size > limits.max_file_bytes {
            return Err(SkillError::FileTooLarge {
                path,
                limit: limits.max_file_bytes,
            });
        }
        if size > remaining {
            return Err(SkillError::TotalTooLarge {
                limit: limits.max_total_bytes,
            });
        }
        total += size;
        if files.insert(path.clone(), data).is_some() {
            return Err(SkillError::DuplicatePath { path });
        }
    }
    bundle_from_files(files, folder.as_deref())
}

/// Reads a single uploaded SKILL.md as a skill with no other files.
pub fn read_skill_md(bytes: &[u8]) -> Result<SkillBundle, SkillError> {
    bundle_from_files(
        BTreeMap::from([(SKILL_MD.to_owned(), bytes.to_vec())]),
        None,
    )
}

/// Builds a bundle from files already in memory (a skill read from a folder): checks every
/// path, parses SKILL.md, and, when `folder` is given, that the skill's name equals it.
pub fn bundle_from_files(
    files: BTreeMap<String, Vec<u8>>,
    folder: Option<&str>,
) -> Result<SkillBundle, SkillError> {
    for path in files.keys() {
        check_path(path)?;
        // A path that is also the folder of another file cannot be written to a disk.
        let mut ancestor = path.as_str();
        while let Some((parent, _)) = ancestor.rsplit_once('/') {
            if files.contains_key(parent) {
                return Err(SkillError::UnsafePath {
                    path: escape(parent),
                    reason: "is both a file and a folder",
                });
            }
            ancestor = parent;
        }
    }
    let skill_md = files.get(SKILL_MD).ok_or(SkillError::MissingSkillMd)?;
    let text = std::str::from_utf8(skill_md).map_err(|_| SkillError::SkillMdNotUtf8)?;
    let manifest = parse_skill_md(text)?;
    if let Some(folder) = folder
        && folder != manifest.name
    {
        return Err(SkillError::FolderMismatch {
            name: manifest.name,
            folder: escape(folder),
        });
    }
    Ok(SkillBundle { manifest, files })
}

/// The longest path in a skill, in bytes.
pub const MAX_PATH_BYTES: usize = 1_024;
/// The most folders a path in a skill may be nested in.
pub const MAX_PATH_DEPTH: usize = 32;
/// The longest file or folder name in a skill, in bytes (what file systems take).
const MAX_NAME_BYTES: usize = 255;

/// Checks that a relative path stays inside the skill folder and reads the same on every
/// system: not empty or absolute, no `\`, no drive letter, no control characters (NUL
/// included), no empty, `.` or `..` component, and within [`MAX_PATH_BYTES`] bytes and
/// [`MAX_PATH_DEPTH`] folders (a tree of files is written to disk and walked later).
pub fn check_path(path: &str) -> Result<(), SkillError> {
    let refuse = |reason| {
        Err(SkillError::UnsafePath {
            path: escape(path),
            reason,
        })
    };
    if path.is_empty() {
        return refuse("has an empty name");
    }
    if path.len() > MAX_PATH_BYTES {
        return refuse("is longer than 1024 bytes");
    }
    if path.split('/').count() > MAX_PATH_DEPTH + 1 {
        return refuse("is nested deeper than 32 folders");
    }
    if path.split('/').any(|name| name.len() > MAX_NAME_BYTES) {
        return refuse("has a name longer than 255 bytes");
    }
    if path.chars().any(char::is_control) {
        return refuse("contains a control character");
    }
    if path.contains('\\') {
        return refuse("contains a backslash (use `/` between folders)");
    }
    if path.starts_with('/') {
        return refuse("is an absolute path");
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return refuse("starts with a drive letter");
    }
    for component in path.split('/') {
        match component {
            "" => return refuse("has an empty folder name (`//` or a trailing `/`)"),
            "." => return refuse("has a `.` component"),
            ".." => return refuse("has a `..` component, which could escape the skill folder"),
            _ => {}
        }
    }
    Ok(())
}

/// Finds the layout: `None` when SKILL.md is at the root, else the one top folder holding
/// every file.
fn top_folder(entries: &[(usize, String)]) -> Result<Option<String>, SkillError> {
    if entries.iter().any(|(_, name)| name == SKILL_MD) {
        return Ok(None);
    }
    let Some((_, first)) = entries.first() else {
        return Err(SkillError::MissingSkillMd);
    };
    let Some((folder, _)) = first.split_once('/') else {
        return Err(SkillError::MissingSkillMd);
    };
    let prefix = format!("{folder}/");
    if let Some((_, outside)) = entries
        .iter()
        .find(|(_, name)| !name.starts_with(prefix.as_str()))
    {
        return Err(SkillError::MixedLayout {
            path: escape(outside),
            folder: folder.to_owned(),
        });
    }
    Ok(Some(folder.to_owned()))
}

/// A path fit for an error message: control characters escaped, cut short.
fn escape(path: &str) -> String {
    crate::format::shorten(&path.escape_debug().to_string())
}

#[cfg(test)]
mod tests;
