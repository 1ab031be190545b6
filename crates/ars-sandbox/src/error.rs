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

    /// A write that must not replace anything found something at its path.
    #[error("`{path}` already exists")]
    Exists {
        /// The virtual path of what is there.
        path: String,
    },

    /// A directory to remove still holds entries and removing them was not asked for.
    #[error(
        "`{path}` is a directory that is not empty; remove it recursively to remove what it holds"
    )]
    DirectoryNotEmpty {
        /// The virtual path of the directory.
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

    /// The workspace holds (or a write would make it hold) more than its quota.
    #[error(
        "the workspace quota is exceeded: {} used of {}{}; {}",
        human(*used), human(*quota),
        if *needed > 0 { format!(", and this write needs {} more", human(*needed)) } else { String::new() },
        WAY_OUT
    )]
    QuotaExceeded {
        /// Bytes the workspace holds.
        used: u64,
        /// Bytes it may hold.
        quota: u64,
        /// Bytes the refused write would have added (0 when the workspace is already over).
        needed: u64,
    },

    /// A skill handed in by the server is malformed (its name, version or a file path), or a
    /// projection asked to keep a copy that is not projected.
    #[error("invalid skill `{name}`: {reason}")]
    InvalidSkill {
        /// The skill's name (possibly shortened for display).
        name: String,
        /// Which rule refused it.
        reason: String,
    },

    /// A personal skill of that name is already installed and replacing it was not asked for.
    #[error("the personal skill `{name}` already exists at `{path}`")]
    SkillExists {
        /// The skill's name.
        name: String,
        /// Its virtual folder, under `/home/gem/user-data/agents/skills`.
        path: String,
    },

    /// A file or directory tree is larger than the caller's limit.
    #[error("`{path}` is too large: {reason}")]
    TooLarge {
        /// The virtual path of the file or directory.
        path: String,
        /// Which limit it passes.
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
    ///
    /// A resolution that would leave the root (an absolute symlink, `..` past the root, a
    /// magic link) becomes [`SandboxError::OutsideScope`] with one message whatever the target
    /// was, so the answer never tells whether some host path exists.
    pub(crate) fn io(path: &str, err: &io::Error) -> Self {
        let path = path.to_owned();
        if is_escape(err) {
            return Self::OutsideScope {
                path,
                reason: OUTSIDE_REASON.to_owned(),
            };
        }
        if err.raw_os_error() == Some(nix::errno::Errno::ENAMETOOLONG as i32) {
            return Self::InvalidPath {
                path,
                reason: "it is too long once its symbolic links are resolved".to_owned(),
            };
        }
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

/// How a user over the quota gets out, said by every quota error and note.
pub(crate) const WAY_OUT: &str = "to free space, delete files or folders in the thread's Files \
    view, remove them with `rm` in a command (commands still run over the quota, but no file can \
    grow), or delete conversations you no longer need, which deletes their files";

/// The one reason given for every path that resolves to somewhere outside its root.
pub(crate) const OUTSIDE_REASON: &str = "it leads outside your workspace (through a symbolic link \
    or otherwise); only paths under /home/gem/user-data and /home/gem/skills are reachable, and \
    symbolic links are followed only while they stay inside them";

/// Whether `err` is a resolution that tried to leave its root.
///
/// `cap-std` reports those as `PermissionDenied` with a fixed message (`EXDEV` from `openat2`
/// under `RESOLVE_BENEATH`, or its own check in the fallback walk); `ELOOP` from
/// `RESOLVE_NO_MAGICLINKS` or from a symlink loop is folded in too, so a link to `/proc/…`
/// answers exactly like a link to `/etc`.
fn is_escape(err: &io::Error) -> bool {
    use nix::errno::Errno;
    let raw = err.raw_os_error();
    raw == Some(Errno::EXDEV as i32)
        || raw == Some(Errno::ELOOP as i32)
        || (err.kind() == io::ErrorKind::PermissionDenied
            && err.to_string() == "a path led outside of the filesystem")
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

/// `bytes` for people: `1.5 MiB`.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
