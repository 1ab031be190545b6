//! The sandbox's one error type.
//!
//! Every message is written for the model that called the tool: it names the *virtual* path it
//! was given (never a host path), says what went wrong and, where there is one, what to do
//! instead. Expected outcomes of a command (non-zero exit, timeout, cancellation) are not errors;
//! they are fields of [`crate::ExecOutcome`].

use std::io;

/// Why a sandbox operation was refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The scope handed in by the runtime is malformed (a bug in the caller, not the model).
    #[error("invalid sandbox scope: {0}")]
    InvalidScope(String),

    /// The path is malformed: NUL byte, too long, empty component and the like.
    #[error("invalid path `{path}`: {reason}")]
    InvalidPath {
        /// The path as the caller gave it (possibly shortened for display).
        path: String,
        /// What is wrong with it.
        reason: String,
    },

    /// The path would leave the caller's scope (`..`, a foreign absolute path, a symlink out).
    #[error("access denied for `{path}`: {reason}")]
    OutsideScope {
        /// The path as the caller gave it (possibly shortened for display).
        path: String,
        /// Which rule refused it and which paths are allowed instead.
        reason: String,
    },

    /// A write was attempted under a read-only root.
    #[error("`{path}` is read-only: {reason}")]
    ReadOnly {
        /// The virtual path of the refused write.
        path: String,
        /// Why the location is read-only and where writes may go instead.
        reason: String,
    },

    /// The file or directory does not exist.
    #[error("`{path}` does not exist")]
    NotFound {
        /// The virtual path that was looked up.
        path: String,
    },

    /// A file operation was aimed at a directory.
    #[error("`{path}` is a directory, not a file; use list or glob to see its contents")]
    IsDirectory {
        /// The virtual path of the directory.
        path: String,
    },

    /// A directory operation was aimed at something that is not a directory.
    #[error("`{path}` is not a directory")]
    NotDirectory {
        /// The virtual path that is not a directory.
        path: String,
    },

    /// Text operations refuse binary content instead of returning garbage.
    #[error("`{path}` looks like a binary file; only text files can be read or edited")]
    Binary {
        /// The virtual path of the binary file.
        path: String,
    },

    /// `edit` found no occurrence of the text to replace.
    #[error(
        "the text to replace was not found in `{path}`; read the file and copy the exact text, \
         including whitespace and indentation"
    )]
    EditNotFound {
        /// The virtual path of the edited file.
        path: String,
    },

    /// `edit` found the text more than once and was not asked to replace every occurrence.
    #[error(
        "the text to replace occurs {count} times in `{path}`; include more surrounding context \
         to make it unique, or set replace_all to replace every occurrence"
    )]
    EditNotUnique {
        /// The virtual path of the edited file.
        path: String,
        /// How many occurrences were found.
        count: usize,
    },

    /// The edit request itself makes no sense (empty or unchanged text).
    #[error("invalid edit: {0}")]
    InvalidEdit(String),

    /// A glob or regular expression did not compile or is not allowed.
    #[error("invalid pattern `{pattern}`: {reason}")]
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// The compiler's complaint or the rule that refused it.
        reason: String,
    },

    /// The isolated shell cannot run on this server (for example `bwrap` is not installed).
    #[error("the sandbox shell is unavailable: {0}")]
    ShellUnavailable(String),

    /// Any other I/O failure, reported against the virtual path.
    #[error("I/O error on `{path}`: {message}")]
    Io {
        /// The virtual path involved.
        path: String,
        /// The operating system's message (which never contains a host path).
        message: String,
    },
}

impl SandboxError {
    /// Maps an I/O error on `path` (a virtual path) to the most specific variant.
    ///
    /// `std::io::Error` messages for file-system calls carry no path, so nothing of the host
    /// layout leaks through `message`.
    pub(crate) fn io(path: &str, err: &io::Error) -> Self {
        let path = path.to_owned();
        match err.kind() {
            io::ErrorKind::NotFound => Self::NotFound { path },
            io::ErrorKind::IsADirectory => Self::IsDirectory { path },
            io::ErrorKind::NotADirectory => Self::NotDirectory { path },
            _ => Self::Io {
                path,
                message: err.to_string(),
            },
        }
    }
}

/// Shortens a caller-supplied path for use in an error message, so a 100 KiB "path" does not
/// come back as a 100 KiB error.
pub(crate) fn display_path(path: &str) -> String {
    const MAX: usize = 200;
    if path.len() <= MAX {
        return path.replace('\0', "\\0");
    }
    let mut end = MAX;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… ({} bytes)",
        path[..end].replace('\0', "\\0"),
        path.len()
    )
}
