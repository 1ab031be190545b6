//! `execute`: running a shell command for the agent.
//!
//! [`plan`] turns a scope and request into a ready-to-spawn command — isolated under bubblewrap
//! by default, or an unconfined host shell when the operator chose [`ShellMode::Host`] — and
//! [`supervise::run`] runs it to its end.

mod bwrap;
mod cgroup;
mod network;
mod process;
mod supervise;

use std::env;
use std::path::{Path, PathBuf};

use tokio::process::Command;

pub use cgroup::CgroupKind;
pub(crate) use cgroup::Cgroups;
pub(crate) use process::spawn;
pub use process::{ProcessHandle, SandboxedProcess};
pub(crate) use supervise::run;

use crate::config::{SandboxConfig, ShellMode};
use crate::error::SandboxError;
use crate::paths::{Access, Layout, Root};
use crate::sandbox::ProcessRequest;
use crate::scope::Scope;
use bwrap::{
    NODE_OPTIONS_UNDER_LIMIT, SANDBOX_RESOLV_CONF, SHELL_LANG, SHELL_PATH, ScopeMounts, bwrap_args,
    process_argv, shell_argv,
};
use cgroup::{CommandCgroup, ENTER_SCRIPT};

/// The host shell's supervisor, a tiny `sh` that ties the command to the server's life. It
/// enters each `cgroup.procs` given before `--` (as [`ENTER_SCRIPT`] does), starts the command
/// (`"$@"`) in the background and waits for it, exiting with its status. A watcher beside it
/// reads its standard input — a pipe whose write end only the server holds, open for as long
/// as it supervises the command — and at end of file, which the kernel delivers when the
/// server dies however it dies, kills every process in the command's cgroups (which hold
/// even a `setsid` escapee) and then its whole process group. The watcher finds its own pid in
/// `/proc/self/stat` so it kills itself last. (cgroup paths are split on spaces; the server's
/// cgroup paths have none.)
const HOST_SUPERVISOR: &str = r#"ars_procs=
while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; ars_procs="$ars_procs $1"; shift; done
shift
exec 3<&0 </dev/null
{
  read -r ars_me _ < /proc/self/stat
  while read -r _ <&3; do :; done
  for ars_round in 1 2 3 4 5 6 7 8 9 10; do
    for ars_p in $ars_procs; do
      while read -r ars_pid; do [ "$ars_pid" = "$ars_me" ] || kill -9 "$ars_pid"; done < "$ars_p"
    done
  done 2>/dev/null
  kill -9 0
} &
"$@" 3<&- &
wait $!"#;

/// [`HOST_SUPERVISOR`] for a long-lived process that speaks on its standard input and output:
/// the lifeline is descriptor 3 instead of standard input, which the process keeps (an
/// asynchronous command's standard input would otherwise be `/dev/null`).
const HOST_PROCESS_SUPERVISOR: &str = r#"ars_procs=
while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; ars_procs="$ars_procs $1"; shift; done
shift
exec 4<&0
{
  read -r ars_me _ < /proc/self/stat
  while read -r _ <&3; do :; done
  for ars_round in 1 2 3 4 5 6 7 8 9 10; do
    for ars_p in $ars_procs; do
      while read -r ars_pid; do [ "$ars_pid" = "$ars_me" ] || kill -9 "$ars_pid"; done < "$ars_p"
    done
  done 2>/dev/null
  kill -9 0
} 4<&- &
"$@" <&4 3<&- 4<&- &
wait $!"#;

/// Where `bwrap` is looked for after `PATH` (which a service manager may have trimmed).
const BWRAP_FALLBACKS: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

/// What an operator must do when bubblewrap is missing; part of the error the model and the
/// logs see.
const INSTALL_HINT: &str = "bubblewrap (`bwrap`) is not installed on the server; an operator \
    can install it with `apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install \
    bubblewrap` (Fedora), or explicitly opt into the unconfined host shell (shell = \"host\")";

/// What runs in the sandbox.
#[derive(Clone, Debug)]
pub(crate) enum Job {
    /// `bash -c <command>` in the workdir, run to its end; its standard input is at its end.
    Shell {
        command: String,
        /// What the workspace quota leaves one file the command writes (0: no file may
        /// grow); `None` without a quota.
        quota_file_size: Option<u64>,
    },
    /// A long-lived program that speaks on its standard input and output (an MCP server).
    Process(ProcessRequest),
}

/// A command ready to spawn: the process, bwrap's argument list (on standard input for a
/// shell command, on descriptor [`ARGS_FD`] for a process), and the cgroup it enters first,
/// if any.
pub(crate) struct Planned {
    pub(crate) command: Command,
    pub(crate) stdin: Option<Vec<u8>>,
    pub(crate) cgroup: Option<CommandCgroup>,
    /// With network: the slirp4netns program that gives the command's namespace a way out.
    pub(crate) slirp4netns: Option<PathBuf>,
    /// Host mode: standard input (a process: descriptor [`ARGS_FD`]) is the supervisor's
    /// lifeline ([`HOST_SUPERVISOR`]), a pipe the server holds open, writing nothing, until the
    /// command has ended.
    pub(crate) lifeline: bool,
    /// What the result says when the command dies of the file size limit (`SIGXFSZ`); the
    /// caller sets it when that limit is the workspace quota's rather than the configured one.
    pub(crate) file_size_note: Option<String>,
}

/// The descriptor a process's bwrap reads its options from (its standard input is the
/// process's own), and in host mode the supervisor's lifeline.
pub(crate) const ARGS_FD: i32 = 3;

/// What an operator must do when slirp4netns is missing and an agent with network runs a
/// command.
const SLIRP_HINT: &str = "slirp4netns is not installed on the server: a command with network \
    runs in its own network namespace and needs it for a way out (`apt-get install \
    slirp4netns`)";

/// Builds the command for `command` in `scope`. Blocking: it checks the workdir and creates
/// the command's cgroup.
///
/// The scope's directories must exist (see [`crate::Sandbox::prepare`]).
pub(crate) fn plan(
    config: &SandboxConfig,
    layout: &Layout,
    scope: &Scope,
    job: &Job,
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
    // A process's own working directory, when it names one in the scope, is checked the
    // same way; any other path is the sandbox's own (`/tmp`), which bwrap enters itself.
    let process_cwd = match job {
        Job::Process(ProcessRequest { cwd: Some(cwd), .. }) if in_scope(cwd) => {
            let dir = layout.resolve(scope, cwd, Access::Read)?;
            dir.root.open_dir(&dir.rel).map_err(|err| dir.err(&err))?;
            Some(dir)
        }
        _ => None,
    };
    // Looked up once, before anything is created for the command.
    let program = match config.shell {
        ShellMode::Bubblewrap => find_bwrap(config)?,
        ShellMode::Host => PathBuf::from("/bin/bash"),
    };
    let slirp4netns = (allow_network && config.shell == ShellMode::Bubblewrap)
        .then(|| find_slirp4netns(config))
        .transpose()?;
    let limits = &config.limits;
    let cgroup = cgroups.and_then(|cgroups| match cgroups.create(limits) {
        Ok(group) => Some(group),
        Err(err) => {
            tracing::warn!(%err, "cannot create the command's cgroup; rlimits only");
            None
        }
    });
    // With a cgroup, a tiny `sh` enters it and then `exec`s the real program; in host mode a
    // tiny `sh` always supervises the command, entering its cgroup first if there is one.
    let is_host = config.shell == ShellMode::Host;
    let mut cmd = match &cgroup {
        _ if is_host => {
            let supervisor = match job {
                Job::Shell { .. } => HOST_SUPERVISOR,
                Job::Process(_) => HOST_PROCESS_SUPERVISOR,
            };
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c").arg(supervisor).arg("ars-supervisor");
            if let Some(group) = &cgroup {
                cmd.args(group.procs_files());
            }
            cmd.arg("--");
            cmd
        }
        Some(group) => {
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c")
                .arg(ENTER_SCRIPT)
                .arg("ars-cgroup")
                .args(group.procs_files())
                .arg("--");
            cmd
        }
        None => Command::new(&program),
    };
    let is_wrapped = cgroup.is_some() || is_host;
    // Neither bwrap nor the wrapper needs an environment; clearing it keeps the server's
    // secrets out of even the sandbox's launcher.
    cmd.env_clear();
    let stdin = match config.shell {
        ShellMode::Bubblewrap => {
            let resolv_conf = if slirp4netns.is_some() {
                Some(layout.resolv_conf(SANDBOX_RESOLV_CONF).map_err(|err| {
                    SandboxError::ShellUnavailable(format!(
                        "cannot write the sandbox's resolver configuration: {err}"
                    ))
                })?)
            } else {
                None
            };
            let mounts = ScopeMounts {
                user_data: layout.canonical_root(scope.user_id, Root::UserData)?,
                skills: layout.canonical_root(scope.user_id, Root::Skills)?,
                virtual_workdir: workdir.virtual_path,
                resolv_conf,
            };
            if is_wrapped {
                cmd.arg(&program);
            }
            // The options go through a pipe, not argv, so the host paths of the bind mounts
            // (and a process's environment) never show in the sandbox's `/proc/1/cmdline`.
            let mut options = bwrap_args(&mounts, &config.extra_ro_binds, limits);
            match job {
                Job::Shell {
                    command,
                    quota_file_size,
                } => {
                    cmd.args(["--args", "0", "--"]).args(shell_argv(
                        command,
                        limits,
                        allow_network,
                        *quota_file_size,
                    ));
                }
                Job::Process(request) => {
                    for (name, value) in &request.env {
                        options.extend(["--setenv".into(), name.into(), value.into()]);
                    }
                    if let Some(cwd) = &request.cwd {
                        options.extend(["--chdir".into(), cwd.into()]);
                    }
                    cmd.args(["--args", &ARGS_FD.to_string(), "--"])
                        .args(process_argv(request, limits, allow_network));
                }
            }
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
            let mut cwd = home.join(&workdir.rel);
            // The host shell has the host's network, allowed or not: nothing is isolated.
            if limits.memory_bytes > 0 {
                cmd.env("NODE_OPTIONS", NODE_OPTIONS_UNDER_LIMIT);
            }
            let argv = match job {
                Job::Shell {
                    command,
                    quota_file_size,
                } => shell_argv(command, limits, false, *quota_file_size).to_vec(),
                Job::Process(request) => {
                    if let Some(dir) = &process_cwd {
                        cwd = layout
                            .canonical_root(scope.user_id, root_of(&dir.virtual_path))?
                            .join(&dir.rel);
                    } else if let Some(other) = &request.cwd {
                        return Err(SandboxError::InvalidPath {
                            path: other.clone(),
                            reason: "a host-mode process can only start in the workspace or \
                                     the Skills folder"
                                .into(),
                        });
                    }
                    cmd.envs(request.env.iter().map(|(n, v)| (n, v)));
                    process_argv(request, limits, false)
                }
            };
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
        slirp4netns,
        lifeline: is_host,
        file_size_note: None,
    })
}

/// Whether a virtual path is in the scope's own folders (and so resolved by handle).
fn in_scope(path: &str) -> bool {
    [crate::layout::USER_DATA_ROOT, crate::layout::SKILLS_ROOT]
        .iter()
        .any(|root| path == *root || path.starts_with(&format!("{root}/")))
}

/// The root a resolved virtual path lies in.
fn root_of(virtual_path: &str) -> Root {
    if virtual_path.starts_with(crate::layout::SKILLS_ROOT) {
        Root::Skills
    } else {
        Root::UserData
    }
}

/// Locates `bwrap`: the configured path, else `PATH`, else the usual system locations.
pub(crate) fn find_bwrap(config: &SandboxConfig) -> Result<PathBuf, SandboxError> {
    find_program(
        "bwrap",
        config.bwrap_path.as_deref(),
        BWRAP_FALLBACKS,
        INSTALL_HINT,
    )
}

/// Locates `slirp4netns`, which a command with network needs, the same way.
fn find_slirp4netns(config: &SandboxConfig) -> Result<PathBuf, SandboxError> {
    find_program(
        "slirp4netns",
        config.slirp4netns_path.as_deref(),
        &["/usr/bin/slirp4netns"],
        SLIRP_HINT,
    )
}

/// A program's path: `configured` if set (it must exist), else the first executable `name`
/// on `PATH`, else in `fallbacks`. Looked up at each call, so installing it needs no restart.
fn find_program(
    name: &str,
    configured: Option<&Path>,
    fallbacks: &[&str],
    hint: &str,
) -> Result<PathBuf, SandboxError> {
    if let Some(path) = configured {
        return if is_executable(path) {
            Ok(path.to_owned())
        } else {
            Err(SandboxError::ShellUnavailable(format!(
                "{hint} (the configured {name} path does not exist)"
            )))
        };
    }
    let from_path: Vec<PathBuf> = env::var_os("PATH")
        .map(|paths| env::split_paths(&paths).map(|dir| dir.join(name)).collect())
        .unwrap_or_default();
    from_path
        .into_iter()
        .chain(fallbacks.iter().map(PathBuf::from))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| SandboxError::ShellUnavailable(hint.to_owned()))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
