//! `execute`: the isolated shell sees only its scope, cannot reach the network or the server's
//! secrets, and dies completely on timeout or cancellation.
//!
//! These tests need bubblewrap and fail (never skip) without it: CI installs it with
//! `apt-get install bubblewrap`.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use ars_sandbox::{ExecOutcome, ExecRequest, LocalSandbox, Sandbox, SandboxConfig, SandboxError};
use ars_sandbox::{ShellMode, USER_DATA_ROOT};
use common::{Fixture, fixture, fixture_with};
use tokio_util::sync::CancellationToken;

fn request(command: &str) -> ExecRequest {
    ExecRequest {
        command: command.to_owned(),
        timeout: Duration::from_secs(10),
        allow_network: false,
    }
}

async fn run(fx: &Fixture, command: &str) -> ExecOutcome {
    run_with(fx, request(command)).await
}

async fn run_with(fx: &Fixture, request: ExecRequest) -> ExecOutcome {
    fx.sandbox
        .execute(&fx.scope, request, CancellationToken::new())
        .await
        .expect("execute could not start the shell (is bubblewrap installed?)")
}

/// Command lines of host processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push(cmdline);
            }
        }
    }
    found
}

/// Polls until `done` holds or `within` passes; returns whether it held.
async fn eventually(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < within {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

/// A `sleep` duration unique to one test, so its processes can be found in `/proc`.
fn unique_sleep() -> String {
    format!(
        "29.{:012}",
        uuid::Uuid::new_v4().as_u128() % 1_000_000_000_000
    )
}

#[test]
fn bubblewrap_is_installed_for_this_suite() {
    let sandbox = LocalSandbox::new(SandboxConfig::new("/nonexistent"));
    let bwrap = sandbox.check_shell();
    assert!(
        matches!(bwrap, Ok(Some(_))),
        "bubblewrap is required for the sandbox tests: apt-get install bubblewrap ({bwrap:?})"
    );
}

#[tokio::test]
async fn shell_runs_in_the_workdir_and_read_sees_what_it_writes() {
    let fx = fixture().await;
    fs::create_dir_all(fx.skills().join("pdf")).unwrap();
    fs::write(fx.skills().join("pdf/SKILL.md"), "# PDF\n").unwrap();
    let out = run(
        &fx,
        "pwd; echo made > made.txt; echo top > ../../top.txt; cat /home/gem/skills/pdf/SKILL.md",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        format!("{}\n# PDF\n", fx.scope.virtual_workdir())
    );
    assert_eq!(fx.read_text(&fx.scope, "made.txt").await.unwrap(), "made\n");
    let top = fx.read_text(&fx.scope, "/home/gem/user-data/top.txt").await;
    assert_eq!(top.unwrap(), "top\n");
}

#[tokio::test]
async fn shell_reports_exit_codes_and_signals() {
    let fx = fixture().await;
    assert_eq!(run(&fx, "exit 3").await.exit_code, Some(3));
    assert_eq!(run(&fx, "kill -9 $$").await.exit_code, Some(128 + 9));
    let err = run(&fx, "echo oops >&2; false").await;
    assert_eq!((err.exit_code, err.stderr.as_str()), (Some(1), "oops\n"));
}

#[tokio::test]
async fn shell_cannot_read_etc_passwd() {
    let fx = fixture().await;
    assert!(
        Path::new("/etc/passwd").exists(),
        "the host must have the file for this test"
    );
    let out = run(&fx, "cat /etc/passwd; echo rc=$?; ls /etc").await;
    assert!(out.stdout.contains("rc=1"), "{out:?}");
    assert!(!out.stdout.contains("root:"), "{out:?}");
    assert!(
        !out.stdout.lines().any(|l| l == "passwd" || l == "shadow"),
        "{out:?}"
    );
}

#[tokio::test]
async fn shell_cannot_see_another_users_data() {
    let fx = fixture().await;
    let other = fx.other_user_with_a_diary().await;
    let host_file = fx.user_data(other.user_id).join("diary.txt");
    assert!(host_file.exists());
    let command = format!(
        "test -e '{}' && echo visible || echo absent; test -e '{}' && echo visible || echo absent; \
         cat /home/gem/user-data/diary.txt",
        host_file.display(),
        fx.data().display()
    );
    let out = run(&fx, &command).await;
    assert_eq!(out.stdout, "absent\nabsent\n", "{out:?}");
    assert!(!out.stderr.contains("private"));
}

#[tokio::test]
async fn shell_cannot_write_outside_the_workspace() {
    let fx = fixture().await;
    let out = run(
        &fx,
        "for f in /usr/ars-escape /home/gem/skills/x /etc/x /ars-escape; do \
           echo x > $f 2>/dev/null; echo \"$f $?\"; done; \
         echo fine > /home/gem/user-data/inside.txt; echo \"inside $?\"",
    )
    .await;
    assert_eq!(
        out.stdout, "/usr/ars-escape 1\n/home/gem/skills/x 1\n/etc/x 1\n/ars-escape 1\ninside 0\n",
        "{out:?}"
    );
    assert!(!Path::new("/usr/ars-escape").exists());
    assert!(!Path::new("/ars-escape").exists());
    assert_eq!(fs::read_dir(fx.skills()).unwrap().count(), 0);
    assert!(fx.user_data(fx.scope.user_id).join("inside.txt").exists());
}

#[tokio::test]
async fn an_extra_bind_below_tmp_shows_over_the_private_tmp_read_only() {
    // The sandbox's `/tmp` is a tmpfs of its own; a host folder bound below it is mounted
    // after it, so it shows (read-only) and the rest of `/tmp` stays private and writable.
    let tools = tempfile::tempdir_in("/tmp").unwrap();
    fs::write(tools.path().join("tool.sh"), "echo from the host\n").unwrap();
    let dir = tools.path().to_owned();
    let fx = fixture_with(|config| config.extra_ro_binds = vec![dir.clone()]).await;
    let dir = dir.display();
    let out = run(
        &fx,
        &format!(
            "bash {dir}/tool.sh; (echo x > {dir}/new) 2>/dev/null || echo read-only; \
             echo mine > /tmp/mine && cat /tmp/mine"
        ),
    )
    .await;
    assert_eq!(out.stdout, "from the host\nread-only\nmine\n", "{out:?}");
    assert!(!tools.path().join("new").exists());
}

#[tokio::test]
async fn shell_has_no_network_unless_allowed() {
    let fx = fixture().await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // The listener is reachable from outside the sandbox...
    std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let probe = format!(
        "(echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo refused"
    );
    // ...but not from inside it: the shell has only its own loopback.
    let denied = run(&fx, &format!("{probe}; cat /proc/net/dev")).await;
    assert!(denied.stdout.starts_with("refused\n"), "{denied:?}");
    assert!(!denied.stdout.contains("tap0"), "{denied:?}");
}

/// The address this host uses to reach beyond itself, if it has one (no packet is sent).
fn host_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback()).then_some(ip)
}

#[tokio::test]
async fn with_network_the_hosts_loopback_stays_unreachable() {
    let fx = fixture().await;
    // What the server, a model server or a database on the host's loopback look like.
    let local = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let local_port = local.local_addr().unwrap().port();
    let probe = |host: &str, port: u16| {
        format!(
            "(echo hi > /dev/tcp/{host}/{port}) 2>/dev/null && echo {host}=connected \
             || echo {host}=refused; "
        )
    };
    let mut command = probe("127.0.0.1", local_port);
    // slirp4netns's gateway, which would otherwise be the host's loopback.
    command.push_str(&probe("10.0.2.2", local_port));
    command.push_str("grep -c '^tap0' /proc/net/route; ");
    // A service listening on every address of the host is reached like any other host
    // on the network: the command does have a way out.
    let public = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let public_port = public.local_addr().unwrap().port();
    let address = host_address();
    if let Some(ip) = address {
        command.push_str(&probe(&ip.to_string(), public_port));
    }
    let out = run_with(
        &fx,
        ExecRequest {
            allow_network: true,
            ..request(&command)
        },
    )
    .await;
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "127.0.0.1=refused", "{out:?}");
    assert_eq!(lines[1], "10.0.2.2=refused", "{out:?}");
    assert_ne!(lines[2], "0", "no route out of the namespace: {out:?}");
    if let Some(ip) = address {
        assert_eq!(lines[3], format!("{ip}=connected"), "{out:?}");
    }
    let resolv = run_with(
        &fx,
        ExecRequest {
            allow_network: true,
            ..request("cat /etc/resolv.conf")
        },
    )
    .await;
    assert_eq!(resolv.stdout, "nameserver 10.0.2.3\n", "{resolv:?}");
}

/// Set in the child test process that [`shell_sees_no_server_secrets`] launches.
const PROBE_MARKER: &str = "ARS_SANDBOX_SECRET_PROBE";

#[test]
fn shell_sees_no_server_secrets() {
    // Setting environment variables in this process needs `unsafe` (forbidden here), so the
    // probe runs in a child copy of this test binary started with the secrets set.
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "secret_probe_in_child_process", "--nocapture"])
        .env(PROBE_MARKER, "1")
        .env("ARS_SECRET_TEST", "s3cr3t-test-value")
        .env("OPENAI_API_KEY", "sk-test-must-not-leak")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "probe failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "probe did not run:\n{stdout}");
}

/// Only does something when launched by [`shell_sees_no_server_secrets`].
#[tokio::test]
async fn secret_probe_in_child_process() {
    if std::env::var_os(PROBE_MARKER).is_none() {
        return;
    }
    assert_eq!(
        std::env::var("OPENAI_API_KEY").unwrap(),
        "sk-test-must-not-leak"
    );
    for (shell, command) in [
        (
            ShellMode::Bubblewrap,
            "env; tr '\\0' '\\n' < /proc/self/environ; tr '\\0' '\\n' < /proc/1/environ",
        ),
        (ShellMode::Host, "env; tr '\\0' '\\n' < /proc/self/environ"),
    ] {
        let fx = fixture_with(|config| config.shell = shell).await;
        let out = run(&fx, command).await;
        assert_eq!(out.exit_code, Some(0), "{shell:?}: {out:?}");
        for secret in [
            "s3cr3t-test-value",
            "sk-test-must-not-leak",
            "OPENAI_API_KEY",
            "ARS_SECRET",
        ] {
            assert!(
                !out.stdout.contains(secret),
                "{shell:?} leaks {secret}: {}",
                out.stdout
            );
        }
        for line in out.stdout.lines().filter(|l| !l.is_empty()) {
            let name = line.split('=').next().unwrap_or_default();
            // NODE_OPTIONS: the sandbox's own (see `node_runs_its_webassembly_under_the_memory_limit`).
            let expected = [
                "PATH",
                "HOME",
                "LANG",
                "NODE_OPTIONS",
                "PWD",
                "SHLVL",
                "_",
                "OLDPWD",
            ];
            assert!(
                expected.contains(&name),
                "{shell:?}: unexpected variable {line}"
            );
        }
    }
}

/// Runs `sleep M & sleep M` and stops it with `stop` once both sleeps are visible; checks the
/// call returns within `limit` and no `sleep M` survives a second later.
async fn assert_group_dies(
    fx: &Fixture,
    timeout: Duration,
    stop: impl FnOnce(&CancellationToken),
    limit: Duration,
) -> ExecOutcome {
    let marker = unique_sleep();
    let cancel = CancellationToken::new();
    let call = {
        let (sandbox, scope, cancel) = (fx.sandbox.clone(), fx.scope.clone(), cancel.clone());
        let request = ExecRequest {
            timeout,
            ..request(&format!("sleep {marker} & sleep {marker}"))
        };
        tokio::spawn(async move { sandbox.execute(&scope, request, cancel).await })
    };
    // Both sleeps themselves, not just the shell or bwrap whose arguments name them too.
    let sleep = format!("sleep {marker} ");
    let sleeps = || {
        processes_with(&marker)
            .iter()
            .filter(|c| **c == sleep)
            .count()
    };
    let started = eventually(Duration::from_secs(5), || sleeps() == 2).await;
    assert!(started, "the sleeps never started");
    let stopped_at = Instant::now();
    stop(&cancel);
    let out = call.await.unwrap().unwrap();
    assert!(
        stopped_at.elapsed() < limit,
        "took {:?}",
        stopped_at.elapsed()
    );
    let gone = eventually(Duration::from_secs(1), || {
        processes_with(&marker).is_empty()
    })
    .await;
    assert!(gone, "survivors: {:?}", processes_with(&marker));
    out
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let fx = fixture().await;
    let out = assert_group_dies(&fx, Duration::from_secs(1), |_| {}, Duration::from_secs(2)).await;
    assert!(out.timed_out && !out.cancelled, "{out:?}");
    assert_eq!(out.exit_code, None);
}

#[tokio::test]
async fn cancellation_kills_the_whole_process_group() {
    let fx = fixture().await;
    let cancel = |token: &CancellationToken| token.cancel();
    let out = assert_group_dies(&fx, Duration::from_secs(30), cancel, Duration::from_secs(1)).await;
    assert!(out.cancelled && !out.timed_out, "{out:?}");
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group_in_host_mode() {
    let fx = fixture_with(|config| config.shell = ShellMode::Host).await;
    let out = assert_group_dies(&fx, Duration::from_secs(1), |_| {}, Duration::from_secs(2)).await;
    assert!(out.timed_out, "{out:?}");
}

#[tokio::test]
async fn output_is_capped_per_stream() {
    let fx = fixture_with(|config| config.max_output_bytes = 1000).await;
    let out = run(&fx, "head -c 200000 /dev/zero | tr '\\0' a; echo done >&2").await;
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout, "a".repeat(1000));
    assert_eq!(out.stderr, "done\n");
    assert!(out.truncated);
    assert!(!run(&fx, "echo short").await.truncated);
}

#[tokio::test]
async fn missing_bwrap_is_a_clear_error() {
    let fx = fixture_with(|config| config.bwrap_path = Some("/nonexistent/bwrap".into())).await;
    let err = fx
        .sandbox
        .execute(&fx.scope, request("true"), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::ShellUnavailable(_)), "{err:?}");
    assert!(
        err.to_string().contains("apt-get install bubblewrap"),
        "{err}"
    );
}

#[tokio::test]
async fn host_mode_runs_in_the_host_workdir() {
    let fx = fixture_with(|config| config.shell = ShellMode::Host).await;
    let out = run(&fx, "pwd; echo made > made.txt").await;
    let workdir = fx.workdir().canonicalize().unwrap();
    assert_eq!(out.stdout, format!("{}\n", workdir.display()));
    assert!(!out.stdout.contains(USER_DATA_ROOT));
    assert_eq!(fx.read_text(&fx.scope, "made.txt").await.unwrap(), "made\n");
}
