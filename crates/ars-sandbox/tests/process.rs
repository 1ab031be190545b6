//! `Sandbox::spawn`: a long-lived process (an MCP server) isolated like `execute`'s commands,
//! speaking on its own standard input and output, with its environment out of its command
//! line, and killed with everything it started when its handle goes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use ars_sandbox::{ProcessRequest, Sandbox, SandboxConfig, SandboxedProcess, ShellMode};
use common::{Fixture, fixture, fixture_with};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn bash(script: &str) -> ProcessRequest {
    ProcessRequest {
        program: "bash".into(),
        args: vec!["-c".into(), script.into()],
        env: Vec::new(),
        cwd: None,
        allow_network: false,
    }
}

async fn spawn(fx: &Fixture, request: ProcessRequest) -> SandboxedProcess {
    fx.sandbox.spawn(&fx.scope, request).await.unwrap()
}

/// Sends `line` and reads one line back.
async fn ask(process: &mut SandboxedProcess, line: &str) -> String {
    process
        .stdin
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    let mut reply = String::new();
    let mut reader = BufReader::new(&mut process.stdout);
    tokio::time::timeout(Duration::from_secs(10), reader.read_line(&mut reply))
        .await
        .expect("the process answers")
        .unwrap();
    reply.trim_end().to_owned()
}

fn pids_with(marker: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<i32>().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then_some(pid)
        })
        .collect()
}

#[tokio::test]
async fn a_process_speaks_on_its_pipes_in_the_workdir_with_its_environment() {
    let fx = fixture().await;
    let mut request = bash("while read -r line; do echo \"$PWD|$GREETING|$line|$(id -u)\"; done");
    request.env = vec![("GREETING".into(), "hello".into())];
    let mut process = spawn(&fx, request).await;
    let reply = ask(&mut process, "ping").await;
    let workdir = fx.scope.virtual_workdir();
    assert!(
        reply.starts_with(&format!("{workdir}|hello|ping|")),
        "{reply}"
    );
    assert_eq!(
        ask(&mut process, "again").await.split('|').nth(2),
        Some("again")
    );
}

#[tokio::test]
async fn a_process_is_isolated_like_a_command() {
    let fx = fixture().await;
    std::fs::write(fx.workdir().join("mine.txt"), "in the workdir").unwrap();
    let mut process = spawn(
        &fx,
        bash("while read -r path; do if [ -e \"$path\" ]; then echo yes; else echo no; fi; done"),
    )
    .await;
    assert_eq!(ask(&mut process, "mine.txt").await, "yes");
    assert_eq!(ask(&mut process, "/etc/passwd").await, "no");
    let host_data = fx.data().display().to_string();
    assert_eq!(ask(&mut process, &host_data).await, "no");
}

#[tokio::test]
async fn environment_values_never_show_on_a_command_line() {
    let fx = fixture().await;
    let secret = "process-secret-7f3e91";
    let mut request = bash("echo started; exec sleep 30 # env-marker-55a1");
    request.env = vec![("API_TOKEN".into(), secret.into())];
    let mut process = spawn(&fx, request).await;
    let mut line = String::new();
    BufReader::new(&mut process.stdout)
        .read_line(&mut line)
        .await
        .unwrap();
    assert_eq!(line.trim(), "started");
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            assert!(
                !String::from_utf8_lossy(&cmdline).contains(secret),
                "the secret is on a command line"
            );
        }
    }
}

#[tokio::test]
async fn dropping_the_handle_kills_the_process_and_what_it_started() {
    let fx = fixture().await;
    let marker = "spawn-drop-marker-3c9d";
    let mut process = spawn(
        &fx,
        bash(&format!("sleep 300 & echo up; exec -a {marker} sleep 300")),
    )
    .await;
    let mut line = String::new();
    BufReader::new(&mut process.stdout)
        .read_line(&mut line)
        .await
        .unwrap();
    assert_eq!(line.trim(), "up");
    assert!(!pids_with(marker).is_empty());
    drop(process);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !pids_with(marker).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the process outlived its handle"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_handle_waits_for_the_exit_code() {
    let fx = fixture().await;
    let mut process = spawn(&fx, bash("exit 7")).await;
    let code = tokio::time::timeout(Duration::from_secs(10), process.handle.wait())
        .await
        .unwrap();
    assert_eq!(code, Some(7));
}

#[tokio::test]
async fn node_runs_its_webassembly_under_the_memory_limit() {
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no node on this machine");
        return;
    }
    let fx = fixture().await;
    // Node's fetch compiles WebAssembly, whose guard regions an address-space limit refuses
    // unless the sandbox tells Node not to reserve them.
    let script = "fetch('data:text/plain,ok').then(r => r.text()).then(t => console.log(t))";
    let mut process = spawn(
        &fx,
        ProcessRequest {
            program: "node".into(),
            args: vec!["-e".into(), script.into()],
            env: Vec::new(),
            cwd: None,
            allow_network: false,
        },
    )
    .await;
    let mut line = String::new();
    tokio::time::timeout(
        Duration::from_secs(20),
        BufReader::new(&mut process.stdout).read_line(&mut line),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(line.trim(), "ok");
}

#[tokio::test]
async fn a_working_directory_in_the_scope_is_resolved_and_one_outside_refused() {
    let fx = fixture().await;
    std::fs::create_dir_all(fx.workdir().join("sub")).unwrap();
    let mut request = bash("pwd; exec sleep 30");
    request.cwd = Some(format!("{}/sub", fx.scope.virtual_workdir()));
    let mut process = spawn(&fx, request).await;
    let mut line = String::new();
    BufReader::new(&mut process.stdout)
        .read_line(&mut line)
        .await
        .unwrap();
    assert_eq!(line.trim(), format!("{}/sub", fx.scope.virtual_workdir()));

    let mut escape = bash("pwd");
    escape.cwd = Some("/home/gem/user-data/../../../etc".into());
    assert!(fx.sandbox.spawn(&fx.scope, escape).await.is_err());
}

#[tokio::test]
async fn host_mode_processes_speak_on_their_pipes_and_die_with_their_handle() {
    let fx = fixture_with(|config: &mut SandboxConfig| config.shell = ShellMode::Host).await;
    let marker = "host-spawn-marker-8e21";
    let mut process = spawn(
        &fx,
        bash(&format!(
            "read -r line; echo \"got $line\"; exec -a {marker} sleep 300"
        )),
    )
    .await;
    assert_eq!(ask(&mut process, "it").await, "got it");
    drop(process);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !pids_with(marker).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the process outlived its handle"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
