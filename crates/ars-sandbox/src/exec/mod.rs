//! `execute`: running a shell command for the agent.
//!
//! [`plan`] turns a scope and request into a ready-to-spawn command — isolated under bubblewrap
//! by default, or an unconfined host shell when the operator chose [`ShellMode::Host`] — and
//! [`supervise::run`] runs it to its end.

mod bwrap;
mod cgroup;
mod supervise;

use std::env;
use std::path::{Path, PathBuf};

use tokio::process::Command;

pub use cgroup::CgroupKind;
pub(crate) use cgroup::Cgroups;
pub(crate) use supervise::run;

use crate::config::{SandboxConfig, ShellMode};
use crate::error::SandboxError;
use crate::paths::{Access, Layout, Root};
use crate::scope::Scope;
use bwrap::{SHELL_LANG, SHELL_PATH, ScopeMounts, bwrap_args, shell_argv};
use cgroup::{CommandCgroup, ENTER_SCRIPT};

/// Where `bwrap` is looked for after `PATH` (which a service manager may have trimmed).
const BWRAP_FALLBACKS: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

/// What an operator must do when bubblewrap is missing; part of the error the model and the
/// logs see.
const INSTALL_HINT: &str = "bubblewrap (`bwrap`) is not installed on the server; an operator \
    can install it with `apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install \
    bubblewrap` (Fedora), or explicitly opt into the unconfined host shell (shell = \"host\")";

/// A command ready to spawn: the process, the bytes for its standard input (bwrap's argument
/// list), and the cgroup it enters first, if any.
pub(crate) struct Planned {
    pub(crate) command: Command,
    pub(crate) stdin: Option<Vec<u8>>,
    pub(crate) cgroup: Option<CommandCgroup>,
}

/// Builds the command for `command` in `scope`. Blocking: it checks the workdir and creates
/// the command's cgroup.
///
/// The scope's directories must exist (see [`crate::Sandbox::prepare`]).
pub(crate) fn plan(
    config: &SandboxConfig,
    layout: &Layout,
    scope: &Scope,
    command: &str,
    allow_network: bool,
    cgroups: Option<&Cgroups>,
) -> Result<Planned, SandboxError> {
    // The workdir must be a directory inside the workspace (prepare made it); checked by
    // handle. The shell itself only ever sees it at its virtual path.
    let workdir = layout.resolve(scope, &scope.virtual_workdir(), Access::Write)?;
    workdir
        .root
        .open_dir(&workdir.rel)
        .map_err(|err| workdir.err(&err))?;
    let limits = &config.limits;
    let cgroup = cgroups.and_then(|cgroups| match cgroups.create(limits) {
        Ok(group) => Some(group),
        Err(err) => {
            tracing::warn!(%err, "cannot create the command's cgroup; rlimits only");
            None
        }
    });
    // With a cgroup, a tiny `sh` enters it and then `exec`s the real program.
    let mut cmd = match &cgroup {
        Some(group) => {
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c")
                .arg(ENTER_SCRIPT)
                .arg("ars-cgroup")
                .args(group.procs_files())
                .arg("--");
            cmd
        }
        None => Command::new(match config.shell {
            ShellMode::Bubblewrap => find_bwrap(config)?,
            ShellMode::Host => PathBuf::from("/bin/bash"),
        }),
    };
    let is_wrapped = cgroup.is_some();
    // Neither bwrap nor the wrapper needs an environment; clearing it keeps the server's
    // secrets out of even the sandbox's launcher.
    cmd.env_clear();
    let stdin = match config.shell {
        ShellMode::Bubblewrap => {
            let bwrap = find_bwrap(config)?;
            let mounts = ScopeMounts {
                user_data: layout.canonical_root(scope.user_id, Root::UserData)?,
                skills: layout.canonical_root(scope.user_id, Root::Skills)?,
                virtual_workdir: workdir.virtual_path,
            };
            if is_wrapped {
                cmd.arg(bwrap);
            }
            // The argument list goes through standard input, not argv, so the host paths of
            // the bind mounts never show in the sandbox's `/proc/1/cmdline`.
            cmd.args(["--args", "0"]);
            let options = bwrap_args(&mounts, allow_network, &config.extra_ro_binds, limits);
            cmd.arg("--").args(shell_argv(command, limits));
            let mut bytes = Vec::new();
            for option in options {
                bytes.extend_from_slice(option.as_encoded_bytes());
                bytes.push(0);
            }
            Some(bytes)
        }
        ShellMode::Host => {
            // The host shell is unconfined by definition; it gets host paths.
            let home = layout.canonical_root(scope.user_id, Root::UserData)?;
            let cwd = home.join(&workdir.rel);
            let argv = shell_argv(command, limits);
            let skip = usize::from(!is_wrapped);
            cmd.args(&argv[skip..])
                .env("PATH", SHELL_PATH)
                .env("HOME", home)
                .env("LANG", SHELL_LANG)
                .current_dir(cwd);
            None
        }
    };
    Ok(Planned {
        command: cmd,
        stdin,
        cgroup,
    })
}

/// Locates `bwrap`: the configured path, else `PATH`, else the usual system locations.
pub(crate) fn find_bwrap(config: &SandboxConfig) -> Result<PathBuf, SandboxError> {
    if let Some(path) = &config.bwrap_path {
        return if path.is_file() {
            Ok(path.clone())
        } else {
            Err(SandboxError::ShellUnavailable(format!(
                "{INSTALL_HINT} (the configured bwrap_path does not exist)"
            )))
        };
    }
    let from_path: Vec<PathBuf> = env::var_os("PATH")
        .map(|paths| {
            env::split_paths(&paths)
                .map(|dir| dir.join("bwrap"))
                .collect()
        })
        .unwrap_or_default();
    from_path
        .into_iter()
        .chain(BWRAP_FALLBACKS.iter().map(PathBuf::from))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| SandboxError::ShellUnavailable(INSTALL_HINT.to_owned()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
