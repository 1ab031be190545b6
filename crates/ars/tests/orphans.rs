//! `execute` commands never outlive their server: a command still running when `ars serve` is
//! killed with SIGKILL dies with it, background processes included, in both sandbox modes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{Server, eventually, login, post, scripted_agent};
use serde_json::json;

const PASSWORD: &str = "admin-password";

/// The file, in the command's workdir, where a host-mode command records its processes' pids.
/// (Under bubblewrap `$!` is a pid of the sandbox's namespace, so there the sleeps are found by
/// their command line instead; see [`sleeps`].)
const PIDS_FILE: &str = "ars-pids";

/// Starts the server, a run whose agent executes `command`, and waits until `ready` says the
/// command is up; then kills the server with SIGKILL and answers the server's log and pid.
async fn kill_the_server_while(
    dir: &Path,
    env: &[(&str, &str)],
    command: &str,
    ready: impl Fn() -> bool,
) -> (Vec<String>, u32) {
    let server = Server::start_with(dir, Some(PASSWORD), env);
    let base = server.base.clone();
    let token = login(&base, "admin", PASSWORD).await;
    let script = json!([
        {"tool_calls": [{"name": "execute", "arguments": {"command": command, "timeout_s": 600}}]},
        {"text": "done"}
    ]);
    scripted_agent(&base, &token, "sleeper", script).await;
    let (status, thread) = post(
        &base,
        "/api/threads",
        &token,
        json!({"agent_id": "sleeper"}),
    )
    .await;
    assert_eq!(status, 201, "{thread}");
    let thread = thread["id"].as_str().unwrap();
    let (status, run) = post(
        &base,
        &format!("/api/threads/{thread}/runs"),
        &token,
        json!({"input": "go"}),
    )
    .await;
    assert_eq!(status, 202, "{run}");
    eventually(30, "the command's processes", || async { ready() }).await;
    let (log, pid) = (server.log.clone(), server.child.id());
    server.kill();
    (log, pid)
}

/// The pids a command wrote to [`PIDS_FILE`] anywhere under the data dir, once it holds
/// `count` of them.
fn recorded_pids(dir: &Path, count: usize) -> Option<Vec<u32>> {
    let file = find(&dir.join("data"), PIDS_FILE)?;
    let pids: Vec<u32> = std::fs::read_to_string(file)
        .ok()?
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    (pids.len() >= count).then_some(pids)
}

fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if entry.file_name() == name {
            return Some(path);
        }
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && let Some(found) = find(&path, name)
        {
            return Some(found);
        }
    }
    None
}

/// Host pids of the `sleep <secs>` processes.
fn sleeps(secs: &str) -> Vec<u32> {
    let wanted = format!("sleep\0{secs}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| cmdline == wanted.as_bytes())
        })
        .collect()
}

/// Whether `pid` is gone (or a zombie, which runs nothing and waits for its reaper).
fn is_gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// A `sleep` duration no other process on the machine uses, to find this test's sleeps.
fn unique_sleep() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("3{:08}", nanos % 100_000_000)
}

#[tokio::test]
async fn a_host_mode_command_does_not_outlive_a_killed_server() {
    let dir = tempfile::tempdir().unwrap();
    let sleep = unique_sleep();
    // A background sleep, a `setsid` one (which leaves the process group), and the shell
    // itself in the foreground.
    let command = format!(
        "sleep {sleep} & echo $! >> {PIDS_FILE}; setsid sleep {sleep} & echo $! >> {PIDS_FILE}; \
         echo $$ >> {PIDS_FILE}; sleep {sleep}"
    );
    let data = dir.path().to_owned();
    // Whether the command runs in cgroups of its own (as on any root server with cgroups),
    // read from its shell's `/proc/<pid>/cgroup` while it runs.
    let in_cgroups = std::sync::OnceLock::new();
    let (_, server_pid) =
        kill_the_server_while(dir.path(), &[("ARS_SANDBOX", "host")], &command, || {
            let Some(pids) = recorded_pids(&data, 3) else {
                return false;
            };
            let cgroups = std::fs::read_to_string(format!("/proc/{}/cgroup", pids[2]));
            let _ = in_cgroups.set(cgroups.is_ok_and(|c| c.contains("/ars-sandbox/cmd-")));
            sleeps(&sleep).len() >= 3
        })
        .await;
    let pids = recorded_pids(dir.path(), 3).unwrap();
    // Without cgroups a `setsid` process escapes the process group, which is all the
    // supervisor can kill then; with them it is caught too.
    let in_cgroups = in_cgroups.get().copied().unwrap_or(false);
    let must_die: Vec<u32> = if in_cgroups {
        pids
    } else {
        vec![pids[0], pids[2]]
    };
    eventually(
        5,
        "the command's processes to die with the server",
        || async { must_die.iter().all(|pid| is_gone(*pid)) },
    )
    .await;
    if in_cgroups {
        // The killed server could not remove its command's cgroup; the next start does.
        let server = Server::start_with(dir.path(), Some(PASSWORD), &[("ARS_SANDBOX", "host")]);
        let reaped = format!("server_pid={server_pid}");
        assert!(
            server
                .log
                .iter()
                .any(|l| l.contains("reaped a command cgroup") && l.contains(&reaped)),
            "the dead server's cgroup is reaped at start:\n{}",
            server.log.join("\n")
        );
        server.kill();
    }
    for pid in sleeps(&sleep) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
}

#[tokio::test]
async fn a_sandboxed_command_does_not_outlive_a_killed_server() {
    let dir = tempfile::tempdir().unwrap();
    let sleep = unique_sleep();
    let command = format!("sleep {sleep} & setsid sleep {sleep} & sleep {sleep}");
    kill_the_server_while(
        dir.path(),
        &[("ARS_SANDBOX", "bubblewrap")],
        &command,
        || sleeps(&sleep).len() >= 3,
    )
    .await;
    eventually(
        5,
        "the sandbox's processes to die with the server",
        || async { sleeps(&sleep).into_iter().all(is_gone) },
    )
    .await;
}
