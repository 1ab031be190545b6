//! Long-lived processes in the sandbox: a program (an MCP server) that speaks on its standard
//! input and output for as long as its owner keeps it.
//!
//! Isolation is [`super::plan`]'s, as for a shell command; what differs is the plumbing. The
//! process's standard input is its own, so bwrap reads its options from descriptor
//! [`ARGS_FD`] (a pipe written once and closed), and in host mode that descriptor is the
//! supervisor's lifeline instead. Like a command, the process is the leader of its own process
//! group: [`ProcessHandle`] kills the group (and its cgroup's processes with it) when asked or
//! dropped, and `bwrap --die-with-parent` or the host supervisor kill it if the server dies.

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;

use command_fds::{CommandFdExt, FdMapping};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use super::cgroup::CommandCgroup;
use super::{ARGS_FD, Planned};
use crate::error::SandboxError;

/// A started process: its three standard streams and the handle that owns its life.
pub struct SandboxedProcess {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
    pub handle: ProcessHandle,
}

impl std::fmt::Debug for SandboxedProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxedProcess")
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

/// Owns a sandboxed process: waiting for it, killing it. Dropping it kills the process and
/// everything it started.
pub struct ProcessHandle {
    child: Child,
    /// The process group, `None` once the process is known to have ended.
    group: Option<i32>,
    /// Held for the process's life: the command's cgroup, the network's slirp4netns, and in
    /// host mode the supervisor's lifeline.
    cgroup: Option<CommandCgroup>,
    network: Option<JoinHandle<Option<Child>>>,
    lifeline: Option<std::io::PipeWriter>,
}

impl std::fmt::Debug for ProcessHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessHandle")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl ProcessHandle {
    /// The launcher's process id (bwrap's, or the host supervisor's), while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits until the process ends and answers its exit code (128 + signal for a signal);
    /// `None` if that cannot be known. Everything it left behind is killed then.
    pub async fn wait(&mut self) -> Option<i32> {
        let status = self.child.wait().await.ok();
        self.kill();
        self.group = None;
        status.and_then(|status| {
            status
                .code()
                .or_else(|| status.signal().map(|signal| 128 + signal))
        })
    }

    /// Kills the process and everything it started, at once (SIGKILL to the group).
    pub fn kill(&mut self) {
        if let Some(pgid) = self.group {
            // ESRCH (the group is gone already) is the common, harmless case.
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        let _ = self.child.start_kill();
        self.lifeline = None;
        if let Some(network) = self.network.take() {
            network.abort();
        }
    }

    /// Whether the process was over the memory limit of its cgroup when it was killed.
    pub fn oom_killed(&self) -> bool {
        self.cgroup.as_ref().is_some_and(CommandCgroup::oom_killed)
    }
}

impl Drop for ProcessHandle {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns a planned process with its standard streams piped.
pub(crate) fn spawn(planned: Planned) -> Result<SandboxedProcess, SandboxError> {
    let Planned {
        mut command,
        stdin: options,
        cgroup,
        slirp4netns,
        lifeline,
        file_size_note: _,
    } = planned;
    let unavailable =
        |err: std::io::Error| SandboxError::ShellUnavailable(format!("could not start: {err}"));
    // Descriptor ARGS_FD: bwrap's options, or the host supervisor's lifeline.
    let (reader, writer) = std::io::pipe().map_err(unavailable)?;
    command
        .fd_mappings(vec![FdMapping {
            parent_fd: reader.into(),
            child_fd: ARGS_FD,
        }])
        .map_err(|err| SandboxError::ShellUnavailable(format!("could not start: {err}")))?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(unavailable)?;
    // The read end lives in the command's mapping; bwrap sees the end of its options only
    // once every copy of the write end is closed, and the command held none.
    drop(command);
    let group = child.id().and_then(|id| i32::try_from(id).ok());
    let lifeline = if lifeline {
        Some(writer)
    } else {
        if let Some(bytes) = options {
            // A pipe holds 64 KiB; a long environment must not block the runtime's thread.
            let mut writer = writer;
            tokio::task::spawn_blocking(move || {
                let _ = writer.write_all(&bytes);
            });
        }
        None
    };
    let network = match (slirp4netns, child.id()) {
        (Some(program), Some(pid)) => Some(tokio::spawn(super::network::attach(program, pid))),
        _ => None,
    };
    let streams = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let handle = ProcessHandle {
        child,
        group,
        cgroup,
        network,
        lifeline,
    };
    match streams {
        (Some(stdin), Some(stdout), Some(stderr)) => Ok(SandboxedProcess {
            stdin,
            stdout,
            stderr,
            handle,
        }),
        _ => Err(SandboxError::ShellUnavailable(
            "could not start: the process's standard streams were not piped".into(),
        )),
    }
}
