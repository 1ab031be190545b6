//! The ARS sandbox: where the agents' built-in file and shell tools act (SPEC §6).
//!
//! - [`Sandbox`] is the seam: `prepare`, `list`, `read`, `write`, `edit`, `glob`, `grep` and
//!   `execute`, all addressed in *virtual* paths within a [`Scope`]; `read_bytes` and
//!   `read_tree` for the server, and for its file browser `tree`, `open_file`, `write_bytes`
//!   and `remove`; and the Skills on disk: each user's read-only projection at
//!   `/home/gem/skills` (`project_skills`, `projected_skills`) and the personal skill folders
//!   in the workspace (`install_personal_skill`, `remove_personal_skill`).
//! - [`LocalSandbox`] is the embedded implementation over the server's data dir, with the shell
//!   isolated by bubblewrap.
//! - `layout` names the virtual layout (a leaf module); `paths` holds the one function that
//!   turns a virtual path into a directory handle of its root plus a relative rest; every
//!   file operation goes through it and acts only through that handle (`openat2` with
//!   `RESOLVE_BENEATH`, via `cap-std`), so a symlink swapped in by a running shell command
//!   cannot lead an operation out. `skills` writes skill folders by handle, never following a
//!   symlink.
//!
//! **Invariant:** nothing leaves a scope. `..`, foreign absolute paths, symlinks pointing out,
//! NUL bytes and over-long paths are refused; `/home/gem/skills` is read-only and holds only
//! the calling user's projection; the shell sees only the scope's directories, no network
//! unless allowed, and an environment with none of the server's secrets.
//!
//! **Boundary:** this crate knows nothing of agents, runs or HTTP; it takes a scope and a
//! request and returns an outcome.

mod config;
mod error;
mod exec;
mod files;
mod layout;
mod local;
mod paths;
mod quota;
mod sandbox;
mod scope;
mod skills;

pub use config::{ConfigError, SandboxConfig, SandboxLimits, ShellMode};
pub use error::SandboxError;
pub use exec::{CgroupKind, ProcessHandle, SandboxedProcess};
pub use layout::{
    HOME_DIR, MAX_COMPONENT_BYTES, MAX_PATH_BYTES, PERSONAL_SKILLS_DIR, SKILLS_ROOT, USER_DATA_ROOT,
};
pub use local::LocalSandbox;
pub use sandbox::{
    DEFAULT_READ_LINES, DirEntry, EditOutcome, EntryKind, ExecOutcome, ExecRequest, FileWritten,
    GlobOutcome, GrepMatch, GrepOutcome, ListOutcome, OpenFile, ProcessRequest, ProjectedSkill,
    ReadOutcome, RemoveOutcome, Sandbox, TreeLimits, WorkspaceUsage, WriteMode, WriteOutcome,
};
pub use scope::Scope;
