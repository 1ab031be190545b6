//! MCP server processes over a run's life: the process bound and idle timeout, secrets that never
//! leave, an HTTP server that restarts, a changed server started again, one that cannot start,
//! and one deleted after the agent was saved.

use super::*;

#[tokio::test]
async fn at_the_process_bound_an_idle_process_makes_room_and_a_busy_one_refuses_clearly() {
    let peers = peers_or_skip!();
    let mut mcp = McpConfig::default();
    mcp.pool.max_processes = 1;
    let app = app(&peers, mcp).await;
    let admin = app.admin.clone();
    add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    mcp_agent(
        &app,
        &admin,
        "echoer",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "one"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    // Two conversations, one after the other: the first one's idle process makes room.
    let (first, _) = run_once(&app, &admin, "echoer", "go").await;
    let (second, _) = run_once(&app, &admin, "echoer", "go").await;
    assert_eq!(first["output"], "Echo: one");
    assert_eq!(second["output"], "Echo: one");
    assert_eq!(app.mcp.pool().processes(), 1);

    // A conversation whose process is busy keeps it; another one is told why it cannot start.
    mcp_agent(
        &app,
        &admin,
        "busy",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__trigger-long-running-operation",
                             "arguments": {"duration": 4, "steps": 2}}]},
            {"text": "done"}
        ]),
    )
    .await;
    let busy_thread = app.thread(&admin, "busy").await;
    let busy = app.start_run(&admin, &busy_thread, "go").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tools = app
            .get(&format!("/api/threads/{busy_thread}/messages"), &admin)
            .await
            .body;
        let calling = tools
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant" && !m["tool_calls"].is_null());
        if calling {
            break;
        }
        assert!(Instant::now() < deadline, "the busy call never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (refused, thread) = run_once(&app, &admin, "echoer", "go").await;
    assert_eq!(refused["status"], "success", "{refused}");
    let tools = tool_messages(&app, &admin, &thread).await;
    assert_eq!(tools[0]["is_error"], true);
    let message = tools[0]["content"].as_str().unwrap();
    assert!(
        message.contains("1 MCP server processes are running"),
        "{message}"
    );
    let waited = app.wait(&admin, &busy, 30).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
}

#[tokio::test]
async fn an_idle_process_is_stopped_after_the_idle_timeout() {
    let peers = peers_or_skip!();
    let mut mcp = McpConfig::default();
    mcp.pool.idle_timeout = Duration::from_secs(1);
    let app = app(&peers, mcp).await;
    let admin = app.admin.clone();
    let server = with_marker(everything_stdio(&peers, "everything"), "idle-marker");
    add_server(&app, &admin, server).await;
    mcp_agent(
        &app,
        &admin,
        "echoer",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "once"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let (run, _) = run_once(&app, &admin, "echoer", "go").await;
    assert_eq!(run["output"], "Echo: once");
    assert_eq!(processes_running("idle-marker").len(), 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_running("idle-marker").is_empty() || app.mcp.pool().processes() > 0 {
        assert!(
            Instant::now() < deadline,
            "the idle process was never stopped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_subagent_uses_its_own_mcp_servers_not_its_parents() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    app.agent(
        &admin,
        json!({"slug": "plain", "name": "Plain", "description": "no MCP",
               "backend_id": "SubAgentBackend",
               "config_json": {"context": {"mcp_servers": [],
                   "model": {"provider": "scripted", "name": "demo", "script": [
                       {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "x"}}]},
                       {"text": "{{last_tool_result}}"}]}}}}),
    )
    .await;
    app.agent(
        &admin,
        json!({"slug": "parent", "name": "Parent", "config_json": {"context": {
            "mcp_servers": ["everything"], "subagents": ["plain"],
            "model": {"provider": "scripted", "name": "demo", "script": [
                {"tool_calls": [{"name": "task", "arguments": {"description": "try it", "subagent_slug": "plain"}}]},
                {"text": "{{last_tool_result}}"}]}}}}),
    )
    .await;
    let (run, _) = run_once(&app, &admin, "parent", "go").await;
    let output = run["output"].as_str().unwrap();
    assert!(
        output.contains("mcp__everything__echo") && !output.contains("Echo: x"),
        "the child has no such tool: {output}"
    );
}

#[tokio::test]
async fn mcp_secrets_never_reach_answers_events_messages_or_logs() {
    let peers = peers_or_skip!();
    let logs = common::logs::captured_logs();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    let env_secret = "mcp-run-env-secret-4b1c9e";
    let header_secret = "mcp-run-header-secret-8d2a77";
    let mut stdio = everything_stdio(&peers, "everything");
    stdio["transport"]["env"]["API_TOKEN"] = json!({"secret": env_secret});
    add_server(&app, &admin, stdio).await;
    let peer = http_peer(&peers).await;
    let http = add_server(
        &app,
        &admin,
        json!({"slug": "remote", "name": "Remote",
               "transport": {"type": "streamable_http", "url": peer.url,
                             "headers": {"Authorization": format!("Bearer {header_secret}")}}}),
    )
    .await;
    mcp_agent(
        &app,
        &admin,
        "both",
        &["everything", "remote"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "a"}},
                            {"name": "mcp__remote__echo", "arguments": {"message": "b"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let thread = app.thread(&admin, "both").await;
    let run = app.start_run(&admin, &thread, "go").await;
    let (_, events) = app.events(&admin, &run, None).await;
    let waited = app.wait(&admin, &run, 60).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    let check = check(&app, &admin, &http).await;
    assert_eq!(check["ok"], true);
    let mut seen = String::new();
    for event in &events {
        seen.push_str(&event.data.to_string());
    }
    for path in [
        format!("/api/threads/{thread}/messages"),
        format!("/api/runs/{run}"),
        "/api/mcp-servers".to_owned(),
    ] {
        seen.push_str(&app.get(&path, &admin).await.body.to_string());
    }
    seen.push_str(&check.to_string());
    seen.push_str(&String::from_utf8_lossy(&logs.lock().unwrap()));
    assert!(
        seen.contains("Echo: a") && seen.contains("Echo: b"),
        "the calls ran"
    );
    for secret in [env_secret, header_secret] {
        assert!(!seen.contains(secret), "{secret} leaked");
    }
}

#[tokio::test]
async fn an_http_server_that_restarts_is_connected_again() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let (_, alice) = app.user("alice").await;
    let peer = http_peer(&peers).await;
    let port: u16 = peer
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    add_server(
        &app,
        &alice,
        json!({"slug": "remote", "name": "Remote",
               "transport": {"type": "streamable_http", "url": peer.url}}),
    )
    .await;
    mcp_agent(
        &app,
        &alice,
        "caller",
        &["remote"],
        json!([
            {"tool_calls": [{"name": "mcp__remote__echo", "arguments": {"message": "{{input}}"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let (run, _) = run_once(&app, &alice, "caller", "before").await;
    assert_eq!(run["output"], "Echo: before", "{run}");
    // The server goes away and comes back (its sessions forgotten).
    drop(peer);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _peer = http_peer_on(&peers, port).await;
    // (It answers the old session's requests with an id-less 400, not a 404.)
    let started = Instant::now();
    let (run, _) = run_once(&app, &alice, "caller", "after").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(run["output"], "Echo: after", "{run}");
}

#[tokio::test]
async fn changing_a_server_starts_it_again_with_the_new_settings_and_stops_the_old_process() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    let server = with_marker(
        everything_stdio(&peers, "everything"),
        "revision-marker-one",
    );
    let server = add_server(&app, &admin, server).await;
    mcp_agent(
        &app,
        &admin,
        "echoer",
        &["everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "{{input}}"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let thread = app.thread(&admin, "echoer").await;
    let run = app.start_run(&admin, &thread, "first").await;
    assert_eq!(
        app.wait(&admin, &run, 60).await["run"]["output"],
        "Echo: first"
    );
    assert_eq!(processes_running("revision-marker-one").len(), 1);

    let id = server["id"].as_str().unwrap();
    let reply = app
        .patch(
            &format!("/api/mcp-servers/{id}"),
            &admin,
            json!({"transport": {"type": "stdio", "command": "node",
                   "args": [package_js(&peers, "server-everything"), "stdio", "revision-marker-two"]}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let run = app.start_run(&admin, &thread, "second").await;
    assert_eq!(
        app.wait(&admin, &run, 60).await["run"]["output"],
        "Echo: second"
    );
    assert_eq!(processes_running("revision-marker-two").len(), 1);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_running("revision-marker-one").is_empty() {
        assert!(Instant::now() < deadline, "the old process still runs");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(app.mcp.pool().processes(), 1);
}

#[tokio::test]
async fn a_server_that_cannot_start_is_named_and_the_run_goes_on_with_the_other_tools() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    add_server(
        &app,
        &admin,
        json!({"slug": "broken", "name": "Broken",
               "transport": {"type": "stdio", "command": "no-such-program-anywhere"}}),
    )
    .await;
    mcp_agent(
        &app,
        &admin,
        "mixed",
        &["broken", "everything"],
        json!([
            {"tool_calls": [{"name": "mcp__everything__echo", "arguments": {"message": "still works"}}]},
            {"text": "{{last_tool_result}}"}
        ]),
    )
    .await;
    let thread = app.thread(&admin, "mixed").await;
    let run = app.start_run(&admin, &thread, "go").await;
    let (_, events) = app.events(&admin, &run, None).await;
    let waited = app.wait(&admin, &run, 60).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    assert_eq!(waited["run"]["output"], "Echo: still works");
    let errors: Vec<String> = events
        .iter()
        .filter(|e| e.event == "error")
        .map(|e| e.data["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        errors
            .iter()
            .any(|m| m.contains("`broken`") && m.contains("could not be started")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn a_server_deleted_after_the_agent_was_saved_is_dropped_from_its_runs() {
    let peers = peers_or_skip!();
    let app = app(&peers, McpConfig::default()).await;
    let admin = app.admin.clone();
    let server = add_server(&app, &admin, everything_stdio(&peers, "everything")).await;
    mcp_agent(
        &app,
        &admin,
        "orphaned",
        &["everything"],
        json!([{"text": "fine without it"}]),
    )
    .await;
    let id = server["id"].as_str().unwrap();
    let reply = app.delete(&format!("/api/mcp-servers/{id}"), &admin).await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    let (run, _) = run_once(&app, &admin, "orphaned", "go").await;
    assert_eq!(run["status"], "success", "{run}");
    assert_eq!(run["output"], "fine without it");
    assert_eq!(app.mcp.pool().processes(), 0, "nothing was started for it");
    // The agent stays editable with the slug it kept.
    let reply = app
        .patch(
            "/api/agent/orphaned",
            &admin,
            json!({"description": "edited"}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}
