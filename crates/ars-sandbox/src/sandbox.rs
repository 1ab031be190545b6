//! The `Sandbox` seam: what the agents' built-in file and shell tools can do, and what they get
//! back.
//!
//! **Invariant:** every path in a request is a virtual path (absolute under `/home/gem/…` or
//! relative to the workdir) and every path in an outcome or error is a virtual path too; host
//! paths never cross this boundary.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use ars_domain::UserId;
use async_trait::async_trait;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::error::SandboxError;
use crate::scope::Scope;

/// The sandbox behind the agents' file and shell tools.
///
/// Object-safe so the runtime can hold an `Arc<dyn Sandbox>` and a remote implementation (a
/// container per `runtime_scope_id`) can replace the local one without touching the tools.
#[async_trait]
pub trait Sandbox: Send + Sync {
    /// Creates the scope's directories (workspace, personal Skills, workdir). Idempotent; the
    /// runtime calls it before a run's first tool call.
    async fn prepare(&self, scope: &Scope) -> Result<(), SandboxError>;

    /// Lists a directory (not recursive), sorted by name.
    async fn list(&self, scope: &Scope, path: &str) -> Result<ListOutcome, SandboxError>;

    /// Reads a text file as numbered lines, starting at 1-based `offset_line` (0 means 1), at
    /// most `limit_lines` lines (default [`DEFAULT_READ_LINES`]) and at most the configured byte
    /// cap. Binary files are refused.
    async fn read(
        &self,
        scope: &Scope,
        path: &str,
        offset_line: usize,
        limit_lines: Option<usize>,
    ) -> Result<ReadOutcome, SandboxError>;

    /// Creates or replaces a file, creating missing parent directories. The new content
    /// appears atomically (temp file + rename), so a concurrent reader never sees half of it.
    async fn write(
        &self,
        scope: &Scope,
        path: &str,
        content: &str,
    ) -> Result<WriteOutcome, SandboxError>;

    /// Replaces the exact text `old` with `new`. Fails if `old` is absent, or occurs more than
    /// once and `replace_all` is false, so the model never edits the wrong spot.
    async fn edit(
        &self,
        scope: &Scope,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<EditOutcome, SandboxError>;

    /// Finds files whose path matches a glob (`*` stays within a directory, `**` crosses
    /// them). A relative pattern is matched below `base` (default: the workdir); an absolute
    /// one below its literal leading directories.
    async fn glob(
        &self,
        scope: &Scope,
        pattern: &str,
        base: Option<&str>,
    ) -> Result<GlobOutcome, SandboxError>;

    /// Searches file contents with a regular expression, below `path` (a directory or one
    /// file; default: the workdir), optionally only in files matching `glob`. Returns at most
    /// the configured number of matches.
    async fn grep(
        &self,
        scope: &Scope,
        pattern: &str,
        path: Option<&str>,
        glob: Option<&str>,
    ) -> Result<GrepOutcome, SandboxError>;

    /// Runs `bash -c <command>` in the workdir, isolated to the scope. A non-zero exit, a
    /// timeout or a cancellation is an outcome, not an error; errors mean the command could
    /// not be started at all.
    async fn execute(
        &self,
        scope: &Scope,
        request: ExecRequest,
        cancel: CancellationToken,
    ) -> Result<ExecOutcome, SandboxError>;

    /// Starts a long-lived program in the scope that speaks on its standard input and output
    /// (an MCP server), isolated exactly like [`Sandbox::execute`]'s commands: the scope's
    /// folders at their virtual paths, the same limits, no network unless allowed, and an
    /// environment of the sandbox's own plus `request.env` only. The process lives until its
    /// [`ProcessHandle`] kills it or is dropped, and never outlives the server.
    async fn spawn(
        &self,
        scope: &Scope,
        request: ProcessRequest,
    ) -> Result<crate::SandboxedProcess, SandboxError>;

    /// What the user's workspace holds and may hold.
    async fn workspace_usage(&self, user: UserId) -> Result<WorkspaceUsage, SandboxError>;

    /// Name → version of the skills the user's projection at `/home/gem/skills` holds now
    /// (empty for a user never projected). Every scope of the user — a parent agent and its
    /// subagents alike — sees this one projection, and no other user's.
    async fn projected_skills(
        &self,
        user: UserId,
    ) -> Result<BTreeMap<String, String>, SandboxError>;

    /// Makes the user's projection hold exactly `skills` (the built-in skills and the shared
    /// skills visible to the user): each skill with files is written to a fresh folder and
    /// swapped in whole, so a reader sees the old or the new copy, never half; a skill with
    /// `files: None` keeps the copy projected (an [`SandboxError::InvalidSkill`] when that
    /// name is not projected at that version); everything else is removed. Names, versions
    /// and file paths are validated (see [`ProjectedSkill`]) and anything else refused before
    /// anything changes. Concurrent projections of one user are serialised.
    async fn project_skills(
        &self,
        user: UserId,
        skills: Vec<ProjectedSkill>,
    ) -> Result<(), SandboxError>;

    /// Writes the personal skill folder `/home/gem/user-data/agents/skills/<name>/` with
    /// `files`, atomically (built in a temp folder beside it, then renamed into place). With
    /// `replace` an existing folder is swapped out and removed; without it an existing one is
    /// [`SandboxError::SkillExists`]. The bytes are charged to the workspace quota before
    /// anything is written ([`SandboxError::QuotaExceeded`] leaves nothing behind). A symlink
    /// planted on the way (`agents`, `agents/skills`) refuses the call; one planted at the
    /// skill's own name is replaced as a link, never written through.
    async fn install_personal_skill(
        &self,
        user: UserId,
        name: &str,
        files: Vec<(String, Vec<u8>)>,
        replace: bool,
    ) -> Result<(), SandboxError>;

    /// Removes the personal skill folder `name` and everything in it, without following
    /// symlinks (one named like the skill is removed as a link). Returns whether there was
    /// one.
    async fn remove_personal_skill(&self, user: UserId, name: &str) -> Result<bool, SandboxError>;

    /// The raw bytes of the file at a virtual path (workspace or Skills), resolved and checked
    /// as [`Sandbox::read`] does; a file over `max_bytes` is [`SandboxError::TooLarge`].
    async fn read_bytes(
        &self,
        scope: &Scope,
        path: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, SandboxError>;

    /// Every regular file below the virtual directory `dir`, as (path relative to `dir`,
    /// `/`-separated; bytes), sorted by path. Below `dir` nothing is followed: symlinks and
    /// special files are skipped. More than `max_files` files, or more than `max_bytes` bytes
    /// in all, is [`SandboxError::TooLarge`].
    async fn read_tree(
        &self,
        scope: &Scope,
        dir: &str,
        max_files: usize,
        max_bytes: u64,
    ) -> Result<Vec<(String, Vec<u8>)>, SandboxError>;

    /// A directory and what is below it, for a file browser: depth first, each directory's
    /// entries directories first, then by name, down to `limits.max_depth` levels (1: only
    /// the directory's own entries) and at most `limits.max_entries` entries. The directory
    /// itself is resolved like [`Sandbox::list`]; below it nothing is followed (a symlink is
    /// reported as one and never descended into). `truncated` says that the count or the depth
    /// left something out.
    async fn tree(
        &self,
        scope: &Scope,
        path: &str,
        limits: TreeLimits,
    ) -> Result<ListOutcome, SandboxError>;

    /// Opens a regular file for reading, resolved and checked (on the open file) as
    /// [`Sandbox::read`] does, and answers it with its entry (the size it had when opened).
    /// For the server's downloads, which stream the file instead of loading it.
    async fn open_file(&self, scope: &Scope, path: &str) -> Result<OpenFile, SandboxError>;

    /// Creates or replaces a file with raw bytes, creating missing parent directories, as
    /// [`Sandbox::write`] does for text: charged to the workspace quota before anything is
    /// written, and appearing atomically. With [`WriteMode::CreateNew`] an existing file is
    /// [`SandboxError::Exists`] and is left as it was, even when it appears concurrently.
    async fn write_bytes(
        &self,
        scope: &Scope,
        path: &str,
        bytes: Vec<u8>,
        mode: WriteMode,
    ) -> Result<FileWritten, SandboxError>;

    /// Removes a file, a symlink (as the link itself, never its target) or a directory: an
    /// empty one, or with `recursive` everything in it, never following a symlink below it.
    /// The virtual roots, the workdir and the directories holding it are refused
    /// ([`SandboxError::InvalidPath`]), also when a symlink on the way leads to one of them; a
    /// non-empty directory without `recursive` is [`SandboxError::DirectoryNotEmpty`].
    async fn remove(
        &self,
        scope: &Scope,
        path: &str,
        recursive: bool,
    ) -> Result<RemoveOutcome, SandboxError>;

    /// Removes the scope's workdir with everything in it, for a deleted conversation (whose
    /// files no view reaches any more), and measures the workspace again. Nothing is
    /// followed: a symlink planted on the way refuses the removal, one below the workdir is
    /// removed as a link. Returns whether there was a workdir to remove.
    async fn remove_workdir(&self, scope: &Scope) -> Result<bool, SandboxError>;
}

/// How far [`Sandbox::tree`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeLimits {
    /// Levels listed: 1 is the directory's own entries, 2 also theirs, and so on.
    pub max_depth: usize,
    /// Entries returned at most, over all levels.
    pub max_entries: usize,
}

/// How [`Sandbox::write_bytes`] treats a file already there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Replace it (the default of every write).
    Replace,
    /// Refuse with [`SandboxError::Exists`]: never clobber.
    CreateNew,
}

/// Result of [`Sandbox::write_bytes`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileWritten {
    /// The file as written.
    pub entry: DirEntry,
    /// True when the file did not exist before.
    pub created: bool,
}

/// Result of [`Sandbox::remove`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoveOutcome {
    /// The removed entry's virtual path.
    pub path: String,
    /// What it was (a symlink is removed as one).
    pub kind: EntryKind,
}

/// A file opened by [`Sandbox::open_file`].
pub struct OpenFile {
    /// The file (kind [`EntryKind::File`]; `size` as opened).
    pub entry: DirEntry,
    /// Its bytes. Read no more than `entry.size` of them to send what was measured, even if
    /// the file grows meanwhile.
    pub reader: Box<dyn tokio::io::AsyncRead + Send + Unpin>,
}

impl std::fmt::Debug for OpenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenFile")
            .field("entry", &self.entry)
            .finish_non_exhaustive()
    }
}

/// One skill a projection should hold (see [`Sandbox::project_skills`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectedSkill {
    /// The folder name under `/home/gem/skills`: 1–64 of `[a-z0-9-]`, no leading, trailing
    /// or doubled `-`.
    pub name: String,
    /// What [`Sandbox::projected_skills`] reports for it: 1–128 printable ASCII characters,
    /// no spaces.
    pub version: String,
    /// The folder's files as (relative `/`-separated path, bytes); `None` keeps the copy
    /// already projected at this version.
    pub files: Option<Vec<(String, Vec<u8>)>>,
}

/// A workspace's size against its quota.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WorkspaceUsage {
    /// Bytes the workspace holds (on disk, as `du` counts), as last measured.
    pub used_bytes: u64,
    /// Bytes it may hold; 0 means no quota.
    pub quota_bytes: u64,
}

/// How many lines `read` returns when the caller sets no limit.
pub const DEFAULT_READ_LINES: usize = 2000;

/// What kind of directory entry this is. Symlinks are reported as such, never followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (its target is not resolved by `list`).
    Symlink,
    /// Anything else (socket, fifo, device).
    Other,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DirEntry {
    /// The entry's file name.
    pub name: String,
    /// The entry's virtual path.
    pub path: String,
    /// File, directory, symlink or other.
    pub kind: EntryKind,
    /// Size in bytes (of the link itself for symlinks).
    pub size: u64,
    /// When its content last changed, where the file system tells. Not part of the tools'
    /// output (which the model reads); the server shows it.
    #[serde(skip)]
    pub modified: Option<SystemTime>,
}

/// Result of [`Sandbox::list`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ListOutcome {
    /// The listed directory's virtual path.
    pub path: String,
    /// Entries sorted by name.
    pub entries: Vec<DirEntry>,
    /// True when the directory had more entries than the configured cap.
    pub truncated: bool,
}

/// Result of [`Sandbox::read`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReadOutcome {
    /// The file's virtual path.
    pub path: String,
    /// The selected lines, each as `<line number>\t<text>\n` (cat -n style).
    pub content: String,
    /// The 1-based number of the first returned line.
    pub first_line: usize,
    /// How many lines `content` holds.
    pub lines_returned: usize,
    /// How many lines the whole file has, so the model knows what is left.
    pub total_lines: usize,
    /// True when the byte cap stopped the slice early or a very long line was shortened.
    pub truncated: bool,
}

/// Result of [`Sandbox::write`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WriteOutcome {
    /// The written file's virtual path.
    pub path: String,
    /// Bytes written.
    pub bytes_written: u64,
    /// True when the file did not exist before.
    pub created: bool,
}

/// Result of [`Sandbox::edit`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EditOutcome {
    /// The edited file's virtual path.
    pub path: String,
    /// How many occurrences were replaced.
    pub replacements: usize,
}

/// Result of [`Sandbox::glob`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GlobOutcome {
    /// The virtual directory the pattern was matched below.
    pub base: String,
    /// Virtual paths of the matching files, sorted.
    pub matches: Vec<String>,
    /// True when more files matched than the configured cap (or the walk was cut short).
    pub truncated: bool,
}

/// One line matched by [`Sandbox::grep`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrepMatch {
    /// The file's virtual path.
    pub path: String,
    /// The 1-based line number.
    pub line: usize,
    /// The line's text (shortened if very long).
    pub text: String,
}

/// Result of [`Sandbox::grep`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GrepOutcome {
    /// Matches in path order, then line order.
    pub matches: Vec<GrepMatch>,
    /// How many files were searched.
    pub files_searched: usize,
    /// True when the match cap stopped the search early.
    pub truncated: bool,
}

impl GrepOutcome {
    /// The matches as `path:line:text` lines, the format models know from grep.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for m in &self.matches {
            // Writing to a String cannot fail.
            let _ = writeln!(out, "{}:{}:{}", m.path, m.line, m.text);
        }
        out
    }
}

/// A program to start in the sandbox with [`Sandbox::spawn`].
#[derive(Clone, PartialEq, Eq)]
pub struct ProcessRequest {
    /// The program, looked up on the sandbox's `PATH` (e.g. `node`, `npx`, `/usr/bin/python3`).
    pub program: String,
    pub args: Vec<String>,
    /// Environment variables over the sandbox's own (`PATH`, `HOME`, `LANG`). Values may be
    /// secrets: they reach the process's environment and nothing else (not its command line,
    /// not a log).
    pub env: Vec<(String, String)>,
    /// The working directory, a virtual path; `None`: the scope's workdir.
    pub cwd: Option<String>,
    /// Whether the process may reach the network.
    pub allow_network: bool,
}

impl std::fmt::Debug for ProcessRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.env.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ProcessRequest")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &names)
            .field("cwd", &self.cwd)
            .field("allow_network", &self.allow_network)
            .finish()
    }
}

/// A shell command to run in the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecRequest {
    /// Passed to `bash -c` verbatim.
    pub command: String,
    /// Wall-clock limit; capped by the configuration. The whole process group is killed when
    /// it runs out.
    pub timeout: Duration,
    /// Whether the command may use the network (the agent's config decides).
    pub allow_network: bool,
}

/// What a command did. Expected endings (non-zero exit, timeout, cancel) are reported here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExecOutcome {
    /// The exit code; `128 + n` when killed by signal `n`; `None` when we killed it (timeout
    /// or cancellation).
    pub exit_code: Option<i32>,
    /// Captured standard output (lossy UTF-8), at most the configured cap.
    pub stdout: String,
    /// Captured standard error (lossy UTF-8), at most the configured cap.
    pub stderr: String,
    /// True when either stream was cut at the cap.
    pub truncated: bool,
    /// True when the timeout killed the command.
    pub timed_out: bool,
    /// True when the cancellation token killed the command.
    pub cancelled: bool,
    /// True when the sandbox stopped the command because the workspace passed its quota
    /// (plus the stated margin); `stderr` then ends with a note naming the quota, the usage
    /// and how to free space.
    pub quota_stopped: bool,
}
