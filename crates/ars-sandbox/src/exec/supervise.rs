//! Running a spawned command to its end: capped output capture, timeout, cancellation, and
//! killing the whole process group.
//!
//! The command is spawned as the leader of its own process group, so one `killpg` reaches
//! every process it started (`sleep 30 &` included). Under bubblewrap the group holds the
//! `bwrap` processes; killing them ends the sandbox's PID namespace, which the kernel then
//! empties. After a normal exit the group is killed too, so no background process outlives
//! the tool call.
//!
//! Neither mode lets a command outlive the server, even one killed with SIGKILL. Under
//! bubblewrap, `bwrap --die-with-parent` sets the parent-death signal (SIGKILL) on itself and
//! on the namespace's first process, so the server's death kills the whole sandbox. The
//! kernel sends that signal when the *thread* that spawned bwrap exits; commands are spawned
//! from the runtime's worker threads (never a blocking-pool thread, which exits when idle),
//! and those live as long as the server. In host mode the command runs under a tiny
//! supervisor whose standard input is a pipe the server holds (see `HOST_SUPERVISOR`): the
//! kernel closes it when the server dies, by any cause and whichever thread spawned the
//! command, and the supervisor then kills the command's cgroup and process group.

use std::future::pending;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::Planned;
use super::cgroup::CommandCgroup;
use crate::error::SandboxError;
use crate::sandbox::ExecOutcome;

/// How long output is still collected after the command ended or was killed. Bounded because
/// a process that escaped the group (host mode, `setsid`) may hold the pipes open.
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Spawns `command` in its own process group and supervises it. `quota_reached` stops it like
/// a timeout does, when the workspace's watcher says the workspace passed its quota.
pub(crate) async fn run(
    planned: Planned,
    timeout: Duration,
    cancel: CancellationToken,
    quota_reached: CancellationToken,
    max_output_bytes: usize,
) -> Result<ExecOutcome, SandboxError> {
    let Planned {
        mut command,
        stdin,
        cgroup,
        slirp4netns,
        lifeline,
        file_size_note,
    } = planned;
    command
        .stdin(if stdin.is_some() || lifeline {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|err| {
        SandboxError::ShellUnavailable(format!("could not start the shell: {err}"))
    })?;
    // Kills the group if this future is dropped mid-run (the caller gave up on the call).
    let mut group = ProcessGroup(child.id().and_then(|id| i32::try_from(id).ok()));

    // bwrap reads its arguments from standard input until end of file; the command then
    // inherits that pipe, already at its end, as its own standard input.
    // Host mode instead: the supervisor's lifeline, held (and never written) until
    // supervision ends; its end of file tells the supervisor to kill the command.
    let lifeline = if lifeline { child.stdin.take() } else { None };
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
        });
    }
    // With network, slirp4netns joins the namespace bwrap made; it lives as long as the
    // command (it is killed when this handle, and so its `Child`, is dropped).
    let network = match (slirp4netns, child.id()) {
        (Some(program), Some(pid)) => Some(tokio::spawn(super::network::attach(program, pid))),
        _ => None,
    };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut out = Capture::new(max_output_bytes);
    let mut err = Capture::new(max_output_bytes);
    let mut out_buf = [0u8; 8192];
    let mut err_buf = [0u8; 8192];

    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let ending = loop {
        tokio::select! {
            n = read_some(&mut stdout, &mut out_buf) => out.take(&mut stdout, &out_buf, n),
            n = read_some(&mut stderr, &mut err_buf) => err.take(&mut stderr, &err_buf, n),
            status = child.wait() => break Ending::Exited(status),
            () = &mut deadline => break Ending::TimedOut,
            () = cancel.cancelled() => break Ending::Cancelled,
            () = quota_reached.cancelled() => break Ending::QuotaReached,
        }
    };
    group.kill();
    let (timed_out, cancelled, quota_stopped) = (
        matches!(ending, Ending::TimedOut),
        matches!(ending, Ending::Cancelled),
        matches!(ending, Ending::QuotaReached),
    );
    let exit_code = match ending {
        Ending::Exited(Ok(status)) => status
            .code()
            .or_else(|| status.signal().map(|signal| 128 + signal)),
        Ending::Exited(Err(_)) => None,
        Ending::TimedOut | Ending::Cancelled | Ending::QuotaReached => {
            // Reap the killed child; its status says only "killed by us".
            let _ = child.wait().await;
            None
        }
    };

    let drain = tokio::time::sleep(DRAIN_GRACE);
    tokio::pin!(drain);
    while stdout.is_some() || stderr.is_some() {
        tokio::select! {
            n = read_some(&mut stdout, &mut out_buf) => out.take(&mut stdout, &out_buf, n),
            n = read_some(&mut stderr, &mut err_buf) => err.take(&mut stderr, &err_buf, n),
            () = &mut drain => break,
        }
    }
    group.disarm();
    drop(lifeline);
    if let Some(network) = network {
        network.abort();
        if let Ok(Some(mut slirp)) = network.await {
            let _ = slirp.kill().await;
        }
    }

    let truncated = out.truncated || err.truncated;
    let mut stderr = err.into_string();
    // Say which limit stopped the command, so the model does not guess at a bare signal.
    let note = if cgroup.as_ref().is_some_and(CommandCgroup::oom_killed) {
        Some("a process of this command went over the sandbox's memory limit and was killed")
    } else {
        match exit_code.map(|code| code - 128) {
            Some(SIGXCPU) => Some("the command went over the sandbox's CPU time limit"),
            Some(SIGXFSZ) => Some(
                file_size_note
                    .as_deref()
                    .unwrap_or("the command went over the sandbox's file size limit"),
            ),
            _ => None,
        }
    };
    if let Some(note) = note {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&format!("[{note}]\n"));
    }
    drop(cgroup);
    Ok(ExecOutcome {
        exit_code,
        truncated,
        stdout: out.into_string(),
        stderr,
        timed_out,
        cancelled,
        quota_stopped,
    })
}

/// The signals the kernel sends at the CPU time and file size rlimits.
const SIGXCPU: i32 = Signal::SIGXCPU as i32;
const SIGXFSZ: i32 = Signal::SIGXFSZ as i32;

/// Why supervision stopped waiting.
enum Ending {
    Exited(std::io::Result<std::process::ExitStatus>),
    TimedOut,
    Cancelled,
    QuotaReached,
}

/// Reads from a stream that may already be closed (`None`), in which case it never completes,
/// so a `select!` simply stops polling it. End of stream and read errors both read as 0.
async fn read_some<R: AsyncRead + Unpin>(reader: &mut Option<R>, buf: &mut [u8]) -> usize {
    match reader {
        Some(reader) => reader.read(buf).await.unwrap_or(0),
        None => pending().await,
    }
}

/// One output stream's captured bytes, up to a cap; the rest is read and discarded so the
/// command never blocks on a full pipe.
struct Capture {
    bytes: Vec<u8>,
    cap: usize,
    truncated: bool,
}

impl Capture {
    fn new(cap: usize) -> Self {
        Self {
            bytes: Vec::new(),
            cap,
            truncated: false,
        }
    }

    /// Records the result of one `read_some`: `n` bytes of `buf`, or end of stream at 0.
    fn take<R>(&mut self, stream: &mut Option<R>, buf: &[u8], n: usize) {
        if n == 0 {
            *stream = None;
            return;
        }
        let room = self.cap.saturating_sub(self.bytes.len());
        let keep = n.min(room);
        self.bytes.extend_from_slice(&buf[..keep]);
        self.truncated |= n > room;
    }

    fn into_string(self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// The command's process group, killed on demand and on drop until disarmed.
struct ProcessGroup(Option<i32>);

impl ProcessGroup {
    fn kill(&self) {
        if let Some(pgid) = self.0 {
            // ESRCH (group already gone) is the common, harmless case.
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }

    /// Stops killing once the group is known dead, so a recycled id is never signalled.
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
