//! What one `execute` may consume: processes, memory, open files, file size, CPU time and the
//! private `/tmp`; and what the sandbox shell may learn about the host from `/proc`.
//!
//! These tests need bubblewrap (CI installs it). The process limit also needs what enforces
//! it for the server's user: rlimits for an ordinary user, a cgroup when the server runs as
//! root (the kernel does not apply `RLIMIT_NPROC` to root).

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use ars_sandbox::{ExecOutcome, ExecRequest, Sandbox, SandboxLimits};
use common::{Fixture, fixture, fixture_with};
use tokio_util::sync::CancellationToken;

const MIB: u64 = 1024 * 1024;

async fn limited(tweak: impl FnOnce(&mut SandboxLimits)) -> Fixture {
    fixture_with(|config| tweak(&mut config.limits)).await
}

async fn run(fx: &Fixture, command: &str) -> ExecOutcome {
    execute(fx, command, Duration::from_secs(20))
        .await
        .expect("execute could not start the shell (is bubblewrap installed?)")
}

async fn execute(
    fx: &Fixture,
    command: &str,
    timeout: Duration,
) -> Result<ExecOutcome, ars_sandbox::SandboxError> {
    let request = ExecRequest {
        command: command.to_owned(),
        timeout,
        allow_network: false,
    };
    fx.sandbox
        .execute(&fx.scope, request, CancellationToken::new())
        .await
}

#[tokio::test]
async fn process_count_is_limited() {
    let fx = limited(|l| l.processes = 40).await;
    // 200 background sleeps, then count the processes the sandbox's PID namespace holds.
    let out = run(
        &fx,
        // Counted with builtins only: once the sleeps fill the limit, nothing else can start.
        // The subshell gives up when fork fails; its sleeps stay until the command ends.
        "(for ((i = 0; i < 200; i++)); do sleep 5 & done) 2>/dev/null; \
         n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done; echo $n",
    )
    .await;
    let count: u32 = out
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert!(count <= 40, "{count} processes ran under a limit of 40");
    assert!(count >= 10, "the loop did not run: {out:?}");
}

#[tokio::test]
async fn a_fork_bomb_is_contained_and_ends() {
    let fx = limited(|l| l.processes = 64).await;
    let started = Instant::now();
    let bomb = "bomb() { bomb | bomb & }; bomb; sleep 1; echo survived";
    let out = execute(&fx, bomb, Duration::from_secs(3)).await.unwrap();
    // The limit holds the bomb; the timeout (or the command's end) kills the whole tree.
    assert!(started.elapsed() < Duration::from_secs(10), "{out:?}");
    let after = run(&fx, "echo alive").await;
    assert_eq!(after.stdout, "alive\n", "{after:?}");
}

#[tokio::test]
async fn memory_is_limited() {
    let fx = limited(|l| l.memory_bytes = 256 * MIB).await;
    let out = run(
        &fx,
        "python3 -c 'b = bytearray(512 * 1024 * 1024); print(len(b))'",
    )
    .await;
    assert_ne!(
        out.exit_code,
        Some(0),
        "512 MiB under a 256 MiB limit: {out:?}"
    );
    assert!(!out.stdout.contains("536870912"), "{out:?}");
    // Below the limit, the same program works.
    let ok = run(
        &fx,
        "python3 -c 'b = bytearray(64 * 1024 * 1024); print(len(b))'",
    )
    .await;
    assert_eq!(ok.stdout, "67108864\n", "{ok:?}");
}

#[tokio::test]
async fn file_size_is_limited() {
    let fx = limited(|l| l.file_size_bytes = MIB).await;
    let out = run(
        &fx,
        "head -c 3M /dev/zero > big.bin; echo rc=$?; stat -c %s big.bin",
    )
    .await;
    assert!(!out.stdout.contains("rc=0"), "{out:?}");
    let size: u64 = out
        .stdout
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .unwrap_or_else(|| panic!("{out:?}"));
    assert!(size <= MIB, "{size} bytes written under a 1 MiB limit");
}

#[tokio::test]
async fn tmp_is_a_size_limited_tmpfs() {
    let fx = limited(|l| l.tmp_bytes = 2 * MIB).await;
    let out = run(
        &fx,
        "stat -f -c %T /tmp; head -c 4M /dev/zero > /tmp/fill; echo rc=$?",
    )
    .await;
    assert!(out.stdout.starts_with("tmpfs\n"), "{out:?}");
    assert!(
        !out.stdout.contains("rc=0"),
        "4 MiB fit a 2 MiB /tmp: {out:?}"
    );
    assert!(out.stderr.contains("No space left"), "{out:?}");
}

#[tokio::test]
async fn open_files_are_limited_and_no_limit_can_be_raised() {
    let fx = limited(|l| l.open_files = 64).await;
    let out = run(
        &fx,
        "ulimit -Hn; ulimit -Sn; ulimit -n 4096 2>/dev/null && echo raised; \
         ulimit -u 100000 2>/dev/null && echo raised-u; true",
    )
    .await;
    assert_eq!(out.stdout, "64\n64\n", "{out:?}");
}

#[tokio::test]
async fn cpu_time_is_limited() {
    let fx = limited(|l| l.cpu_secs = 1).await;
    let started = Instant::now();
    let out = run(&fx, "while :; do :; done").await;
    // SIGXCPU (24) after one CPU second, long before the 20 s timeout.
    assert!(!out.timed_out, "{out:?}");
    assert_eq!(out.exit_code, Some(128 + 24), "{out:?}");
    assert!(out.stderr.contains("CPU time limit"), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn default_limits_apply_without_configuration() {
    let fx = fixture().await;
    let defaults = SandboxLimits::default();
    let out = run(
        &fx,
        "ulimit -Hu; ulimit -Hv; ulimit -Hn; df -k /tmp | tail -1",
    )
    .await;
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], defaults.processes.to_string(), "{out:?}");
    assert_eq!(
        lines[1],
        (defaults.memory_bytes / 1024).to_string(),
        "{out:?}"
    );
    assert_eq!(lines[2], defaults.open_files.to_string(), "{out:?}");
    assert!(
        lines[3].contains(&(defaults.tmp_bytes / 1024).to_string()),
        "{out:?}"
    );
}

#[tokio::test]
async fn proc_shows_no_host_paths_in_the_command_lines() {
    let fx = fixture().await;
    let data = fx.data().to_string_lossy().into_owned();
    let user = fx.scope.user_id.to_string();
    let out = run(
        &fx,
        "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done; cat /proc/self/environ",
    )
    .await;
    assert!(out.stdout.contains("bwrap"), "{out:?}");
    assert!(
        !out.stdout.contains(&data),
        "a command line shows the data dir: {out:?}"
    );
    assert!(
        !out.stdout.contains(&user),
        "a command line shows the user id: {out:?}"
    );
}
