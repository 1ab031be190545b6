//! MCP servers in runs, against real servers nobody here wrote: the reference
//! `@modelcontextprotocol/server-everything` over stdio (in the sandbox) and over Streamable
//! HTTP, and `@modelcontextprotocol/server-filesystem` over stdio on the conversation's
//! workdir. `scripts/mcp-peers.sh` installs them into a cache folder and the test command sets
//! `ARS_TEST_MCP_PEERS` to it; without it these tests say so and pass.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use ars_runtime::mcp::McpConfig;
use common::{Setup, TestApp};

/// Where the peers are installed, if they are.
fn peers() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("ARS_TEST_MCP_PEERS")?);
    if dir.join("node_modules").is_dir() {
        Some(dir)
    } else {
        eprintln!("ARS_TEST_MCP_PEERS has no node_modules: run scripts/mcp-peers.sh");
        None
    }
}

macro_rules! peers_or_skip {
    () => {
        match peers() {
            Some(dir) => dir,
            None => {
                eprintln!("skipped: ARS_TEST_MCP_PEERS is not set (scripts/test.sh sets it)");
                return;
            }
        }
    };
}

fn package_js(peers: &Path, package: &str) -> String {
    peers
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .display()
        .to_string()
}

/// An app whose sandbox shows the peers' folder (read-only, at its own path), and which lets
/// users' servers reach loopback, where the HTTP peers listen (as an operator running MCP
/// servers on the same host allows them with `[network] allow`).
async fn app(peers: &Path, mut mcp: McpConfig) -> TestApp {
    mcp.outbound = ars_mcp::Outbound::new(
        ars_domain::OutboundPolicy::new(&["127.0.0.0/8"]).unwrap(),
        std::sync::Arc::new(ars_mcp::outbound::SystemResolver),
    );
    TestApp::spawn_setup(Setup {
        mcp,
        extra_ro_binds: vec![peers.to_path_buf()],
        ..Setup::default()
    })
    .await
}

/// `server-everything` over stdio, as `slug`.
fn everything_stdio(peers: &Path, slug: &str) -> Value {
    json!({
        "slug": slug,
        "name": "Everything",
        "description": "The reference server's test tools",
        "transport": {
            "type": "stdio",
            "command": "node",
            "args": [package_js(peers, "server-everything"), "stdio"],
            "env": {"GZIP_ALLOWED_DOMAINS": "allowed.example"}
        }
    })
}

/// `server` with one more argument, which tells its process from any other on the machine.
fn with_marker(mut server: Value, marker: &str) -> Value {
    server["transport"]["args"]
        .as_array_mut()
        .unwrap()
        .push(json!(marker));
    server
}

async fn add_server(app: &TestApp, token: &str, body: Value) -> Value {
    let reply = app.post("/api/mcp-servers", token, body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body
}

async fn check(app: &TestApp, token: &str, server: &Value) -> Value {
    let id = server["id"].as_str().unwrap();
    let reply = app
        .post(&format!("/api/mcp-servers/{id}/check"), token, json!({}))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

/// A scripted agent with these MCP servers (and the built-in tools).
async fn mcp_agent(app: &TestApp, token: &str, slug: &str, servers: &[&str], script: Value) {
    app.agent(
        token,
        json!({"slug": slug, "name": slug, "config_json": {"context": {
            "mcp_servers": servers,
            "model": {"provider": "scripted", "name": "demo", "script": script}}}}),
    )
    .await;
}

/// Runs `agent` once with `input` on a new thread; answers the ended run and the thread.
async fn run_once(app: &TestApp, token: &str, agent: &str, input: &str) -> (Value, String) {
    let thread = app.thread(token, agent).await;
    let run = app.start_run(token, &thread, input).await;
    let waited = app.wait(token, &run, 120).await;
    assert_eq!(waited["wait_timed_out"], false, "{waited}");
    (waited["run"].clone(), thread)
}

/// The thread's tool messages, in order.
async fn tool_messages(app: &TestApp, token: &str, thread: &str) -> Vec<Value> {
    let reply = app
        .get(&format!("/api/threads/{thread}/messages"), token)
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    reply
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

/// Host processes whose command line holds `needle` (the sandbox's pid namespace is the
/// host's child, so the host sees them).
fn processes_running(needle: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // Node itself, not the bash that `exec`s it (gone by then) nor bwrap.
        if cmdline.starts_with("node ") && cmdline.contains(needle) {
            pids.push(pid);
        }
    }
    pids
}

/// `server-everything` over Streamable HTTP on a free loopback port, killed on drop.
struct HttpPeer {
    _child: tokio::process::Child,
    url: String,
}

async fn http_peer(peers: &Path) -> HttpPeer {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    http_peer_on(peers, port).await
}

async fn http_peer_on(peers: &Path, port: u16) -> HttpPeer {
    let child = tokio::process::Command::new("node")
        .arg(package_js(peers, "server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "server-everything never listened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    HttpPeer {
        _child: child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

#[tokio::test]
async fn check_lists_the_tools_with_their_schemas_over_stdio_and_streamable_http() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();

    let stdio = add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    let report = check(&app, &admin, &stdio).await;
    assert_eq!(report["ok"], true, "{report}");
    assert!(!report["protocol_version"].as_str().unwrap().is_empty());
    assert!(report["server_info"]["name"].as_str().is_some(), "{report}");
    let tools = report["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "echo").expect("echo");
    assert_eq!(echo["agent_name"], "mcp__everything__echo");
    assert_eq!(echo["enabled"], true);
    assert_eq!(echo["input_schema"]["type"], "object");
    assert!(
        echo["input_schema"]["properties"]["message"].is_object(),
        "{echo}"
    );
    assert!(tools.iter().any(|t| t["name"] == "get-tiny-image"));
    // The check's process is stopped afterwards.
    assert_eq!(app.mcp.pool().processes(), 0);

    // The same server over Streamable HTTP, added by a user (no admin needed).
    let peer = http_peer(&peers).await;
    let (_, alice) = app.user("alice").await;
    let http = add_server(
        &app,
        &alice,
        json!({"slug": "everything-http", "name": "Everything over HTTP",
               "transport": {"type": "streamable_http", "url": peer.url,
                             "headers": {"Authorization": "Bearer not-checked"}}}),
    )
    .await;
    let report = check(&app, &alice, &http).await;
    assert_eq!(report["ok"], true, "{report}");
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"get-sum"),
        "{names:?}"
    );

    // What fails says why, as an answer rather than an HTTP error.
    let missing = add_server(
        &app,
        &admin,
        json!({"slug": "missing", "name": "Missing",
               "transport": {"type": "stdio", "command": "no-such-program-here"}}),
    )
    .await;
    let report = check(&app, &admin, &missing).await;
    assert_eq!(report["ok"], false);
    assert_eq!(report["error"]["kind"], "start", "{report}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`missing`")
    );

    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let nowhere = add_server(
        &app,
        &alice,
        json!({"slug": "nowhere", "name": "Nowhere",
               "transport": {"type": "streamable_http",
                             "url": format!("http://127.0.0.1:{closed_port}/mcp")}}),
    )
    .await;
    let report = check(&app, &alice, &nowhere).await;
    assert_eq!(report["ok"], false);
    assert_eq!(report["error"]["kind"], "unreachable", "{report}");

    // Someone who cannot see a server cannot check it.
    let (_, bob) = app.user("bob").await;
    let id = http["id"].as_str().unwrap();
    let reply = app
        .post(&format!("/api/mcp-servers/{id}/check"), &bob, json!({}))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn tool_results_text_images_resources_and_errors_reach_the_model() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    let data = "data:text/plain;base64,SGVsbG8sIE1DUCE="; // "Hello, MCP!"
    mcp_agent(
        &app,
        &admin,
        "tester",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "hi there"}}]},
            {"tool_calls": [{"name": "mcp__everything__get-sum", "arguments": {"a": 2, "b": 40}}]},
            {"tool_calls": [{"name": "mcp__everything__get-tiny-image", "arguments": {}}]},
            {"tool_calls": [{"name": "mcp__everything__gzip-file-as-resource",
                             "arguments": {"name": "hello.txt.gz", "data": data, "outputType": "resource"}}]},
            {"tool_calls": [{"name": "mcp__everything__gzip-file-as-resource",
                             "arguments": {"name": "x.gz", "data": "https://blocked.example/x", "outputType": "resource"}}]},
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": 42}}]},
            {"tool_calls": [{"name": "mcp__everything__get-resource-links", "arguments": {"count": 2}}]},
            {"text": "done"}
        ]),
    )
    .await;
    let (run, thread) = run_once(&app, &admin, "tester", "go").await;
    assert_eq!(run["status"], "success", "{run}");
    let tools = tool_messages(&app, &admin, &thread).await;
    assert_eq!(tools.len(), 7, "{tools:?}");

    // Text.
    assert_eq!(tools[0]["tool_name"], "mcp__everything__echo");
    assert_eq!(tools[0]["content"], "Echo: hi there");
    assert!(
        tools[1]["content"].as_str().unwrap().contains("42"),
        "{}",
        tools[1]
    );

    // An image: saved in the workdir, named by its virtual path.
    let image = tools[2]["content"].as_str().unwrap();
    assert_eq!(tools[2]["is_error"].as_bool(), None, "{}", tools[2]);
    let prefix = format!("/home/gem/user-data/threads/{thread}/");
    let saved = image
        .split("saved to ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no saved file named in {image}"));
    assert!(
        saved.starts_with(&prefix) && saved.ends_with(".png"),
        "{saved}"
    );
    let relative = saved.strip_prefix(&prefix).unwrap();
    let file = app
        .client
        .get(format!(
            "{}/api/threads/{thread}/files/content?path={relative}",
            app.base
        ))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), StatusCode::OK);
    let bytes = file.bytes().await.unwrap();
    assert_eq!(&bytes[..4], b"\x89PNG", "a PNG was saved");

    // An embedded resource, saved as a file too.
    let resource = tools[3]["content"].as_str().unwrap();
    assert!(
        resource.contains("resource") && resource.contains("saved to /home/gem/user-data/threads/"),
        "{resource}"
    );

    // `isError: true` is a tool error, not a success.
    assert_eq!(tools[4]["is_error"], true, "{}", tools[4]);
    assert!(
        tools[4]["content"].as_str().unwrap().contains("allowed"),
        "{}",
        tools[4]
    );

    // Arguments that do not fit the server's schema never reach it: the model reads why.
    assert_eq!(tools[5]["is_error"], true);
    let why = tools[5]["content"].as_str().unwrap();
    assert!(
        why.contains("invalid arguments") && why.contains("/message"),
        "{why}"
    );
}

#[tokio::test]
async fn a_slow_tool_hits_the_call_timeout_and_the_run_goes_on() {
    let peers = peers_or_skip!();
    let mcp = McpConfig {
        call_timeout: Duration::from_secs(2),
        ..McpConfig::default()
    };
    let app = app(&peers, mcp).await;
    let admin = app.admin.clone();
    add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    mcp_agent(
        &app,
        &admin,
        "slow",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__trigger-long-running-operation",
                             "arguments": {"duration": 30, "steps": 3}}]},
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "still here"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let started = Instant::now();
    let (run, thread) = run_once(&app, &admin, "slow", "go").await;
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(run["output"], "Echo: still here");
    let tools = tool_messages(&app, &admin, &thread).await;
    assert_eq!(tools[0]["is_error"], true);
    let message = tools[0]["content"].as_str().unwrap();
    assert!(
        message.contains("`everything`") && message.contains("within 2 s"),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_that_exits_mid_call_fails_that_call_and_is_started_again() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    // A marker in the arguments tells this test's server process from any other.
    let server = with_marker(
        everything_stdio(&peers, "everything"),
        "exit-mid-call-marker",
    );
    add_server(&app, &admin, server).await;
    mcp_agent(
        &app,
        &admin,
        "victim",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__trigger-long-running-operation",
                             "arguments": {"duration": 30, "steps": 30}}]},
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "after the restart"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let thread = app.thread(&admin, "victim").await;
    let run = app.start_run(&admin, &thread, "go").await;
    // Wait for the call to be in flight, then kill the server process.
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        if let Some(pid) = processes_running("exit-mid-call-marker").first() {
            break *pid;
        }
        assert!(Instant::now() < deadline, "the server never started");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let waited = app.wait(&admin, &run, 60).await;
    let run = &waited["run"];
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(run["output"], "Echo: after the restart");
    let tools = tool_messages(&app, &admin, &thread).await;
    assert_eq!(tools[0]["is_error"], true);
    let message = tools[0]["content"].as_str().unwrap();
    assert!(message.contains("`everything` stopped"), "{message}");
    let running = processes_running("exit-mid-call-marker");
    assert_eq!(running.len(), 1, "one new process: {running:?}");
    assert_ne!(running[0], pid);
}

#[tokio::test]
async fn cancelling_a_run_during_a_call_cancels_the_call_and_keeps_the_server() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    let server = with_marker(everything_stdio(&peers, "everything"), "cancel-marker");
    add_server(&app, &admin, server).await;
    mcp_agent(
        &app,
        &admin,
        "long",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__trigger-long-running-operation",
                             "arguments": {"duration": 60, "steps": 60}}]},
            {"text": "never"}
        ]),
    )
    .await;
    let thread = app.thread(&admin, "long").await;
    let run = app.start_run(&admin, &thread, "go").await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        if let Some(pid) = processes_running("cancel-marker").first() {
            break *pid;
        }
        assert!(Instant::now() < deadline, "the server never started");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cancelled_at = Instant::now();
    let reply = app
        .post(&format!("/api/runs/{run}/cancel"), &admin, json!({}))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let waited = app.wait(&admin, &run, 30).await;
    assert_eq!(waited["run"]["status"], "cancelled", "{waited}");
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));

    // The server process lives on: only the call was given up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(app.mcp.pool().processes(), 1);
    assert_eq!(processes_running("cancel-marker"), vec![pid]);
}

#[tokio::test]
async fn a_parent_and_its_subagent_share_one_server_process() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    let server = with_marker(
        everything_stdio(&peers, "everything"),
        "shared-process-marker",
    );
    add_server(&app, &admin, server).await;
    app.agent(
        &admin,
        json!({"slug": "helper", "name": "Helper", "description": "echoes",
               "backend_id": "SubAgentBackend",
               "config_json": {"context": {"mcp_servers": ["everything"],
                   "model": {"provider": "scripted", "name": "demo", "script": [
                       {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "from the child"}}]},
                       {"text": "{{last_tool_result}}"}]}}}}),
    )
    .await;
    mcp_agent(
        &app,
        &admin,
        "parent",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "from the parent"}}]},
            {"tool_calls": [{"name": "task", "arguments": {"description": "echo something", "subagent_slug": "helper"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let reply = app
        .patch(
            "/api/agent/parent",
            &admin,
            json!({"config_json": {"context": {"subagents": ["helper"]}}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let (run, thread) = run_once(&app, &admin, "parent", "go").await;
    assert_eq!(run["status"], "success", "{run}");
    assert!(
        run["output"]
            .as_str()
            .unwrap()
            .contains("Echo: from the child"),
        "{run}"
    );
    let tools = tool_messages(&app, &admin, &thread).await;
    assert_eq!(tools[0]["content"], "Echo: from the parent");
    assert_eq!(app.mcp.pool().processes(), 1);
    assert_eq!(processes_running("shared-process-marker").len(), 1);
}

#[tokio::test]
async fn the_filesystem_server_and_the_agents_own_file_tools_see_the_same_workdir() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    // Its allowed directory is its working directory: the conversation's workdir.
    add_server(
        &app,
        &admin,
        json!({"slug": "fs", "name": "Files",
               "transport": {"type": "stdio", "command": "node",
                             "args": [package_js(&peers, "server-filesystem"), "."]}}),
    )
    .await;
    mcp_agent(
        &app,
        &admin,
        "files",
        &["fs"],
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "from-agent.txt", "content": "written by write_file"}}]},
            {"tool_calls": [{"name": "mcp__fs__read_text_file", "arguments": {"path": "{{last_tool_result.path}}"}}]},
            {"tool_calls": [{"name": "mcp__fs__write_file", "arguments": {"path": "{{input}}", "content": "written through MCP"}}]},
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "from-mcp.txt"}}]},
            {"tool_calls": [{"name": "mcp__fs__read_text_file", "arguments": {"path": "/home/gem/user-data/../../../etc/hostname"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let thread = app.thread(&admin, "files").await;
    let target = format!("/home/gem/user-data/threads/{thread}/from-mcp.txt");
    let run = app.start_run(&admin, &thread, &target).await;
    let waited = app.wait(&admin, &run, 120).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    let tools = tool_messages(&app, &admin, &thread).await;
    assert_eq!(tools[1]["content"], "written by write_file", "{}", tools[1]);
    assert!(
        tools[3]["content"]
            .as_str()
            .unwrap()
            .contains("written through MCP"),
        "{}",
        tools[3]
    );
    // The server refuses what is outside its directory (and the sandbox would not show it).
    assert_eq!(tools[4]["is_error"], true, "{}", tools[4]);
}

#[tokio::test]
async fn an_agent_names_only_servers_its_user_can_see() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    let (_, alice) = app.user("alice").await;
    let agent = |servers: Value| json!({"slug": "a", "name": "A", "config_json": {"context": {"mcp_servers": servers}}});
    // Private to the admin: alice cannot name it; nobody can name one that does not exist.
    let reply = app
        .post("/api/agent", &alice, agent(json!(["everything"])))
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.field(), Some("config_json.context.mcp_servers[0]"));
    let reply = app.post("/api/agent", &admin, agent(json!(["nope"]))).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.field(), Some("config_json.context.mcp_servers[0]"));
    let reply = app
        .post("/api/agent", &admin, agent(json!(["everything"])))
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);

    // Shared with alice, she can.
    let servers = app.get("/api/mcp-servers", &admin).await.body;
    let id = servers[0]["id"].as_str().unwrap();
    let reply = app
        .patch(
            &format!("/api/mcp-servers/{id}"),
            &admin,
            json!({"share_config": {"visibility": "public"}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let reply = app
        .post(
            "/api/agent",
            &alice,
            json!({"slug": "b", "name": "B",
        "config_json": {"context": {"mcp_servers": ["everything"]}}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

// After the helpers and macros above, which it uses.
#[path = "mcp_runtime/processes.rs"]
mod processes;
