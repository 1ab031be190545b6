//! Operator configuration of the local sandbox.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::layout::{HOME_DIR, SKILLS_ROOT, USER_DATA_ROOT};

/// How `execute` runs shell commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShellMode {
    /// Isolated under bubblewrap: only the scope is visible, at its virtual paths. The default,
    /// and the only mode that keeps SPEC §6's promises.
    #[default]
    Bubblewrap,
    /// An unconfined `bash` on the host, for development machines without `bwrap`. The
    /// environment is still cleared and the cwd is still the workdir, but nothing else is
    /// isolated, so the server must log this loudly at start-up.
    Host,
}

/// Everything the local sandbox needs from the server's configuration.
///
/// Build it with [`SandboxConfig::new`] and override fields; the defaults are the limits the
/// agent tools are tuned for.
#[derive(Clone, Debug, Deserialize)]
pub struct SandboxConfig {
    /// The server's data root. User workspaces live under `users/<user_id>/user-data`, each
    /// user's Skills projection under `users/<user_id>/skills`.
    pub data_dir: PathBuf,
    /// Isolated (default) or host shell.
    #[serde(default)]
    pub shell: ShellMode,
    /// Where `bwrap` lives. `None` searches `PATH` and the usual system locations at each
    /// `execute`, so installing bubblewrap does not need a restart.
    #[serde(default)]
    pub bwrap_path: Option<PathBuf>,
    /// Where `slirp4netns` lives (the way out of a command's own network namespace when its
    /// agent has network). `None` searches `PATH` and `/usr/bin`.
    #[serde(default)]
    pub slirp4netns_path: Option<PathBuf>,
    /// Extra host directories made visible read-only inside the isolated shell at the same
    /// path (for example a toolchain under `/opt`). Missing ones are skipped. They are mounted
    /// after the sandbox's own `/tmp` and `$HOME` tmpfs, so one below those is visible; one
    /// that would hide a mount of the sandbox's own or land inside the user's folders is
    /// refused ([`SandboxConfig::check`]).
    #[serde(default)]
    pub extra_ro_binds: Vec<PathBuf>,
    /// Cap on captured bytes per output stream of a command; the rest is discarded and the
    /// outcome says `truncated`.
    #[serde(default = "defaults::max_output_bytes")]
    pub max_output_bytes: usize,
    /// Cap on a command's timeout, whatever the caller asks for.
    #[serde(default = "defaults::max_timeout_secs")]
    pub max_timeout_secs: u64,
    /// Cap on the bytes one `read` returns, so a huge file cannot flood the model context.
    #[serde(default = "defaults::max_read_bytes")]
    pub max_read_bytes: usize,
    /// Cap on the entries `list` returns and the matches `glob` and `grep` return.
    #[serde(default = "defaults::max_results")]
    pub max_results: usize,
    /// What one `execute` may consume, and how much the workspace may hold.
    #[serde(default)]
    pub limits: SandboxLimits,
}

/// Resource limits of the sandbox (`[sandbox.limits]`).
///
/// Every command gets them as hard rlimits (it cannot raise them: the shell runs with every
/// capability dropped); where the server can create cgroups (v2, or the v1 `pids` and `memory`
/// hierarchies), the process and memory limits also hold for the command's whole process tree.
/// A value of 0 means "no limit" for that resource.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxLimits {
    /// Processes (and threads) one command may have at once.
    pub processes: u64,
    /// Bytes of memory: the address space of each process (`RLIMIT_AS`), and the whole
    /// command's memory where a cgroup holds it.
    pub memory_bytes: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Largest file a command may write (`RLIMIT_FSIZE`). The workspace quota lowers it for
    /// each command to what remains plus the quota's margin (0 over the quota).
    pub file_size_bytes: u64,
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_secs: u64,
    /// Size of the command's private `/tmp` (a tmpfs, so RAM): bytes.
    pub tmp_bytes: u64,
    /// Size of the command's private `$HOME` (`/home/gem`, a tmpfs): bytes.
    pub home_bytes: u64,
    /// Bytes one user's workspace (`/home/gem/user-data`) may hold, counted at any depth.
    /// File-tool writes that would go past it fail; a command is stopped once it takes the
    /// workspace 1 MiB past it (no file it writes can grow past what remains plus 1 MiB); over
    /// it, commands still run but cannot make any file grow, so `rm` frees space.
    pub workspace_quota_bytes: u64,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        Self {
            processes: 256,
            memory_bytes: 2048 * MIB,
            open_files: 1024,
            file_size_bytes: 1024 * MIB,
            cpu_secs: 600,
            tmp_bytes: 256 * MIB,
            home_bytes: 64 * MIB,
            workspace_quota_bytes: 2048 * MIB,
        }
    }
}

impl SandboxConfig {
    /// A configuration with default limits over `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            shell: ShellMode::default(),
            bwrap_path: None,
            slirp4netns_path: None,
            extra_ro_binds: Vec::new(),
            max_output_bytes: defaults::max_output_bytes(),
            max_timeout_secs: defaults::max_timeout_secs(),
            max_read_bytes: defaults::max_read_bytes(),
            max_results: defaults::max_results(),
            limits: SandboxLimits::default(),
        }
    }
}

impl SandboxConfig {
    /// Checks what the types cannot: every extra read-only bind is a place the sandbox can
    /// show (see [`check_extra_ro_bind`]). The server calls it when it loads its
    /// configuration, so a setting that would be silently shadowed or would break the
    /// isolation stops the start with a message instead.
    pub fn check(&self) -> Result<(), ConfigError> {
        for path in &self.extra_ro_binds {
            check_extra_ro_bind(path).map_err(|reason| ConfigError::ExtraRoBind {
                path: path.display().to_string(),
                reason,
            })?;
        }
        Ok(())
    }
}

/// A sandbox setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// An entry of `extra_ro_binds` names a place the sandbox cannot show it.
    #[error("sandbox.extra_ro_binds: `{path}` {reason}")]
    ExtraRoBind {
        /// The configured path.
        path: String,
        /// Why it is refused.
        reason: String,
    },
}

/// Where the sandbox mounts file systems of its own. An extra bind may sit below `/tmp` or
/// `$HOME` (it is mounted after their tmpfs), but not at one of these or at a folder that
/// holds one, which would hide it.
const OWN_MOUNTS: &[&str] = &[
    "/tmp",
    HOME_DIR,
    USER_DATA_ROOT,
    SKILLS_ROOT,
    "/proc",
    "/dev",
    "/etc/resolv.conf",
];

/// Where no extra bind may go: the user's own folders (bubblewrap would create the mount
/// point in the user's workspace, or fail on the read-only Skills) and the kernel's.
const SEALED: &[&str] = &[USER_DATA_ROOT, SKILLS_ROOT, "/proc", "/dev"];

/// Why `path` cannot be an extra read-only bind, if it cannot.
pub(crate) fn check_extra_ro_bind(path: &Path) -> Result<(), String> {
    if !path.is_absolute() {
        return Err("must be an absolute path".into());
    }
    if path
        .components()
        .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
    {
        return Err("must not contain `.` or `..`".into());
    }
    if let Some(own) = OWN_MOUNTS
        .iter()
        .find(|own| Path::new(own).starts_with(path))
    {
        return Err(format!(
            "would hide the sandbox's own {own}; bind a folder below it, or elsewhere"
        ));
    }
    if let Some(sealed) = SEALED.iter().find(|sealed| path.starts_with(sealed)) {
        return Err(format!(
            "is inside {sealed}, where the sandbox mounts nothing else; bind it elsewhere \
             (below /tmp, /home/gem or /opt, say)"
        ));
    }
    Ok(())
}

/// Default limits, as functions because serde's `default = "…"` needs a path to call.
mod defaults {
    pub(super) fn max_output_bytes() -> usize {
        64 * 1024
    }
    pub(super) fn max_timeout_secs() -> u64 {
        30 * 60
    }
    pub(super) fn max_read_bytes() -> usize {
        256 * 1024
    }
    pub(super) fn max_results() -> usize {
        500
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &str) -> Option<String> {
        let mut config = SandboxConfig::new("data");
        config.extra_ro_binds = vec![PathBuf::from(path)];
        config.check().err().map(|err| err.to_string())
    }

    #[test]
    fn extra_binds_below_tmp_and_home_are_allowed_but_not_over_the_sandboxs_own() {
        for ok in [
            "/opt/mcp",
            "/tmp/tools",
            "/home/gem/tools",
            "/usr/local",
            "/etc/ssl",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
        for (bad, says) in [
            ("/", "would hide"),
            ("/tmp", "would hide the sandbox's own /tmp"),
            ("/home", "would hide the sandbox's own /home/gem"),
            ("/home/gem", "would hide"),
            ("/etc", "would hide the sandbox's own /etc/resolv.conf"),
            ("/home/gem/user-data", "would hide"),
            ("/home/gem/user-data/x", "is inside /home/gem/user-data"),
            ("/home/gem/skills/x", "is inside /home/gem/skills"),
            ("/proc/sys", "is inside /proc"),
            ("opt/mcp", "absolute"),
            ("/opt/../tmp", "`..`"),
        ] {
            let err = refused(bad).unwrap_or_default();
            assert!(
                err.starts_with(&format!("sandbox.extra_ro_binds: `{bad}` ")) && err.contains(says),
                "{bad}: {err}"
            );
        }
    }
}
