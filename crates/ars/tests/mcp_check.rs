//! `ars mcp check`, the operator's connection test, against MCP peers nobody here wrote: the
//! official conformance suite's client scenarios (`initialize`, `tools_call`), which start an
//! MCP server of their own and judge the client that `ars mcp check` is; and the reference
//! `server-everything` over stdio. `scripts/mcp-peers.sh` installs them and the test command
//! sets `ARS_TEST_MCP_PEERS`; without it these tests say so and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn peers() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("ARS_TEST_MCP_PEERS")?);
    dir.join("node_modules").is_dir().then_some(dir)
}

fn package(peers: &std::path::Path, name: &str) -> PathBuf {
    peers.join("node_modules/@modelcontextprotocol").join(name)
}

/// Runs a client scenario of the conformance suite with `ars mcp check <flags>` as the
/// client (the suite appends its server's URL); answers whether it passed and what it said.
fn scenario(peers: &std::path::Path, scenario: &str, flags: &str) -> (bool, String) {
    let client = format!("{} mcp check {flags}", env!("CARGO_BIN_EXE_ars"));
    let output = Command::new("node")
        .arg(package(peers, "conformance").join("dist/index.js"))
        .args(["client", "--command", &client, "--scenario", scenario])
        .current_dir(peers)
        .output()
        .expect("node runs the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (
        output.status.success() && text.contains("OVERALL: PASSED"),
        text,
    )
}

#[test]
fn the_conformance_suites_initialize_scenario_passes() {
    let Some(peers) = peers() else {
        eprintln!("skipped: ARS_TEST_MCP_PEERS is not set (scripts/test.sh sets it)");
        return;
    };
    let (passed, text) = scenario(&peers, "initialize", "");
    assert!(passed, "{text}");
    assert!(text.contains("mcp-client-initialization"), "{text}");
}

#[test]
fn the_conformance_suites_tools_call_scenario_passes() {
    let Some(peers) = peers() else {
        eprintln!("skipped: ARS_TEST_MCP_PEERS is not set (scripts/test.sh sets it)");
        return;
    };
    let (passed, text) = scenario(
        &peers,
        "tools_call",
        r#"--call add_numbers --arguments '{"a": 2, "b": 3}'"#,
    );
    assert!(passed, "{text}");
    assert!(text.contains("tool-add-numbers"), "{text}");
    // Without the call, the scenario's check fails: the suite does judge.
    let (passed, text) = scenario(&peers, "tools_call", "");
    assert!(!passed, "{text}");
}

#[test]
fn check_prints_a_stdio_servers_tools_and_a_calls_result_as_json() {
    let Some(peers) = peers() else {
        eprintln!("skipped: ARS_TEST_MCP_PEERS is not set (scripts/test.sh sets it)");
        return;
    };
    let everything = package(&peers, "server-everything").join("dist/index.js");
    let output = Command::new(env!("CARGO_BIN_EXE_ars"))
        .args([
            "mcp",
            "check",
            "--call",
            "echo",
            "--arguments",
            r#"{"message": "你好"}"#,
            "--",
        ])
        .arg("node")
        .arg(&everything)
        .arg("stdio")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["server_info"]["name"], "mcp-servers/everything");
    let tools = report["tools"].as_array().unwrap();
    assert!(
        tools.iter().any(|t| t["name"] == "echo"
            && t["input_schema"]["properties"]["message"]["type"] == "string")
    );
    assert_eq!(report["call"]["text"], "Echo: 你好");

    // A command that is no MCP server: exit status 1 and a reason.
    let output = Command::new(env!("CARGO_BIN_EXE_ars"))
        .args(["mcp", "check", "--timeout-s", "5", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["error"]["kind"], "start", "{report}");
}
