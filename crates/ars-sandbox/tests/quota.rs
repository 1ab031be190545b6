//! The workspace quota: file-tool writes past it fail and lose nothing; a command cannot write
//! more than what remains plus the margin, one big file (its file size limit) or many (the
//! watcher stops it); and over the quota commands still run, so `rm` and truncation free
//! space, while nothing can grow.
//!
//! The commands run under bubblewrap (CI installs it), and once in host mode, where no
//! namespace ends with the command and the watcher's stop is the process group's kill.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ars_sandbox::{ExecOutcome, ExecRequest, Sandbox, SandboxError, ShellMode};
use common::{Fixture, fixture_with};
use tokio_util::sync::CancellationToken;

const MIB: u64 = 1024 * 1024;
/// The margin the README states: how far past the quota a command may take the workspace.
const MARGIN: u64 = MIB;

async fn quota(bytes: u64) -> Fixture {
    fixture_with(|config| config.limits.workspace_quota_bytes = bytes).await
}

async fn run(fx: &Fixture, command: &str) -> ExecOutcome {
    let request = ExecRequest {
        command: command.to_owned(),
        timeout: Duration::from_secs(60),
        allow_network: false,
    };
    fx.sandbox
        .execute(&fx.scope, request, CancellationToken::new())
        .await
        .expect("execute could not start the shell (is bubblewrap installed?)")
}

async fn used(fx: &Fixture) -> u64 {
    let usage = fx.sandbox.workspace_usage(fx.scope.user_id).await.unwrap();
    usage.used_bytes
}

fn file_size(fx: &Fixture, name: &str) -> u64 {
    std::fs::metadata(fx.workdir().join(name)).map_or(0, |m| m.len())
}

fn over_quota(err: &SandboxError) -> bool {
    matches!(err, SandboxError::QuotaExceeded { .. })
}

/// Whether a message names the way out: the Files view and `rm`.
fn names_the_way_out(text: &str) -> bool {
    text.contains("Files view") && text.contains("`rm`") && text.contains("delete conversations")
}

#[tokio::test]
async fn writes_past_the_workspace_quota_fail_and_lose_nothing() {
    let fx = quota(256 * 1024).await;
    let sb = &fx.sandbox;
    sb.write(&fx.scope, "small.txt", &"a".repeat(10_000))
        .await
        .unwrap();
    let err = sb
        .write(&fx.scope, "huge.txt", &"b".repeat(400_000))
        .await
        .unwrap_err();
    assert!(over_quota(&err), "{err:?}");
    assert!(names_the_way_out(&err.to_string()), "{err}");
    assert!(!fx.workdir().join("huge.txt").exists());
    // Replacing a file counts only what it adds; growing it past the quota is refused too.
    let err = sb
        .write(&fx.scope, "small.txt", &"c".repeat(400_000))
        .await
        .unwrap_err();
    assert!(over_quota(&err), "{err:?}");
    let err = sb
        .edit(&fx.scope, "small.txt", "a", &"d".repeat(400_000), false)
        .await;
    assert!(err.is_err(), "{err:?}");
    assert_eq!(
        std::fs::read_to_string(fx.workdir().join("small.txt")).unwrap(),
        "a".repeat(10_000)
    );
    // What fits still works, and no temp file was left behind.
    sb.write(&fx.scope, "ok.txt", &"e".repeat(50_000))
        .await
        .unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(fx.workdir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(".ars-tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let usage = sb.workspace_usage(fx.scope.user_id).await.unwrap();
    assert_eq!(usage.quota_bytes, 256 * 1024);
    assert!(usage.used_bytes >= 60_000, "{usage:?}");
}

#[tokio::test]
async fn a_single_dd_past_the_quota_is_stopped_near_it() {
    let fx = quota(20 * MIB).await;
    let out = run(&fx, "dd if=/dev/zero of=big bs=1M count=2000").await;
    let size = file_size(&fx, "big");
    let used = used(&fx).await;
    eprintln!("dd stopped at {size} bytes, {used} used, under a 20 MiB quota: {out:?}");
    assert!(size <= 20 * MIB + MARGIN, "{size} bytes written");
    assert!(size >= 19 * MIB, "stopped long before the quota: {size}");
    assert!(used <= 20 * MIB + MARGIN + 64 * 1024, "{used} used");
    assert_ne!(out.exit_code, Some(0), "{out:?}");
    assert!(out.stderr.contains("quota"), "{out:?}");
    assert!(names_the_way_out(&out.stderr), "{out:?}");
}

#[tokio::test]
async fn many_files_past_the_quota_are_stopped_by_the_watcher() {
    let fx = quota(20 * MIB).await;
    // Each file is far below the file size limit; only their sum passes the quota.
    let out = run(
        &fx,
        "for i in $(seq 500); do head -c 1M /dev/zero > f$i; done; echo finished",
    )
    .await;
    let used = used(&fx).await;
    eprintln!("many files stopped at {used} used, under a 20 MiB quota");
    assert!(out.quota_stopped, "{out:?}");
    assert!(!out.stdout.contains("finished"), "{out:?}");
    assert!(out.stderr.contains("the command was stopped"), "{out:?}");
    assert!(out.stderr.contains("20.0 MiB"), "{out:?}");
    assert!(names_the_way_out(&out.stderr), "{out:?}");
    assert!(used > 20 * MIB, "{used}");
    assert!(
        used <= 20 * MIB + 8 * MARGIN,
        "{used} used: stopped too late"
    );
}

#[tokio::test]
async fn the_watcher_stops_a_host_mode_command_by_its_process_group() {
    let fx = fixture_with(|config| {
        config.shell = ShellMode::Host;
        config.limits.workspace_quota_bytes = 20 * MIB;
    })
    .await;
    let out = run(
        &fx,
        "for i in $(seq 500); do head -c 1M /dev/zero > f$i; done; echo finished",
    )
    .await;
    assert!(
        out.quota_stopped && !out.stdout.contains("finished"),
        "{out:?}"
    );
    let used = used(&fx).await;
    assert!(
        used <= 20 * MIB + 8 * MARGIN,
        "{used} used: stopped too late"
    );
}

#[tokio::test]
async fn over_the_quota_rm_works_and_nothing_can_grow() {
    let fx = quota(4 * MIB).await;
    // 3.5 MiB, then 1 MiB more: each file fits what remains plus the margin when its
    // command starts, so nothing is stopped, and the workspace ends over its quota.
    let out = run(&fx, "head -c 3584K /dev/zero > a").await;
    assert!(out.exit_code == Some(0) && out.stderr.is_empty(), "{out:?}");
    let out = run(&fx, "head -c 1M /dev/zero > b; echo done").await;
    assert_eq!(out.stdout, "done\n", "{out:?}");
    assert!(out.stderr.contains("over its quota"), "{out:?}");
    assert!(names_the_way_out(&out.stderr), "{out:?}");
    let over = used(&fx).await;
    assert!(over > 4 * MIB, "{over}");

    // File tools that grow the workspace are refused, naming the way out.
    let err = fx.sandbox.write(&fx.scope, "c", "x").await.unwrap_err();
    assert!(
        over_quota(&err) && names_the_way_out(&err.to_string()),
        "{err}"
    );

    // A command still runs, reads, and is stopped as soon as it makes a file grow.
    let out = run(&fx, "ls; head -c 1M /dev/zero > grow").await;
    assert_eq!(out.stdout, "a\nb\n", "{out:?}");
    assert_eq!(out.exit_code, Some(128 + 25), "{out:?}");
    assert!(out.stderr.contains("no file can grow"), "{out:?}");
    assert!(names_the_way_out(&out.stderr), "{out:?}");
    assert_eq!(file_size(&fx, "grow"), 0);
    assert!(used(&fx).await <= over + 4096);

    // Truncating and removing work, and the usage drops at once.
    let out = run(&fx, ": > a && rm b grow && echo freed").await;
    assert_eq!(out.stdout, "freed\n", "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let after = used(&fx).await;
    assert!(after < 64 * 1024, "{after} used after rm");

    // Under the quota again, files grow and file tools write.
    let out = run(&fx, "head -c 1M /dev/zero > again && echo ok").await;
    assert_eq!(out.stdout, "ok\n", "{out:?}");
    fx.sandbox.write(&fx.scope, "c", "x").await.unwrap();
}

#[tokio::test]
async fn a_folder_a_command_locks_is_still_counted_and_removable() {
    use std::os::unix::fs::PermissionsExt;
    let fx = quota(64 * MIB).await;
    let out = run(
        &fx,
        "mkdir locked && head -c 2M /dev/zero > locked/f && chmod 000 locked && echo ok",
    )
    .await;
    assert_eq!(out.stdout, "ok\n", "{out:?}");
    // Measured through it: the owner's access is given back (a server that is not root could
    // not read it otherwise; root can, and the folder is unlocked all the same).
    let mode = std::fs::metadata(fx.workdir().join("locked"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o700, 0o700, "{mode:o}");
    assert!(used(&fx).await >= 2 * MIB);
    run(&fx, "chmod 000 locked").await;
    fx.sandbox.remove(&fx.scope, "locked", true).await.unwrap();
    assert!(!fx.workdir().join("locked").exists());
    assert!(used(&fx).await < MIB);
}
