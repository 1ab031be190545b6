//! `/api/mcp`: ARS's agents as MCP tools, driven by the official Rust SDK's client (`rmcp`)
//! over Streamable HTTP — listing, calling (a new thread, then going on with it), progress,
//! cancellation, two instances behind a round-robin proxy — and refused without a valid
//! bearer token.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ars_mcp::rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam,
};
use ars_mcp::rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use ars_mcp::rmcp::transport::StreamableHttpClientTransport;
use ars_mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use ars_mcp::rmcp::{ClientHandler, ServiceExt};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::TestApp;

/// Records the progress notifications it hears.
#[derive(Clone, Default)]
struct Listener {
    progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(message) = params.message {
            self.progress.lock().unwrap().push(message);
        }
    }
}

async fn connect(app: &TestApp, token: &str) -> (RunningService<RoleClient, Listener>, Listener) {
    ars_mcp::install_tls_provider();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/api/mcp", app.base))
        .auth_header(token.to_owned());
    let transport = StreamableHttpClientTransport::from_config(config);
    let listener = Listener::default();
    let client = listener.clone().serve(transport).await.expect("connects");
    (client, listener)
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn text_of(result: &ars_mcp::rmcp::model::CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect()
}

#[tokio::test]
async fn an_mcp_client_lists_the_users_agents_as_tools_and_calls_one() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(
        &alice,
        json!({"slug": "writer", "name": "Writer", "description": "Writes notes into files.",
               "config_json": {"context": {"model": {"provider": "scripted", "name": "demo", "script": [
                   {"tool_calls": [{"name": "write_file", "arguments": {"path": "note.md", "content": "{{input}}"}}]},
                   {"text": "Noted: {{input}} (turn {{user_turns}})"}]}}}}),
    )
    .await;
    app.agent(&alice, common::subagent("alice-helper")).await;
    app.agent(&bob, common::normal("bobs-own")).await;

    let (client, listener) = connect(&app, &alice).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "ars");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"writer"), "{names:?}");
    assert!(
        !names.contains(&"alice-helper"),
        "subagents are not tools: {names:?}"
    );
    assert!(
        !names.contains(&"bobs-own"),
        "another user's agent: {names:?}"
    );
    let writer = tools.iter().find(|t| t.name == "writer").unwrap();
    assert_eq!(
        writer.description.as_deref(),
        Some("Writes notes into files.")
    );
    assert_eq!(writer.input_schema["required"], json!(["input"]));

    let result = client
        .call_tool(
            CallToolRequestParams::new("writer").with_arguments(args(json!({"input": "buy milk"}))),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let texts = text_of(&result);
    assert_eq!(texts[0], "Noted: buy milk (turn 1)");
    let structured = result.structured_content.clone().unwrap();
    let thread = structured["thread_id"].as_str().unwrap().to_owned();
    assert_eq!(structured["status"], "success");
    assert_eq!(texts[1], format!("[thread_id: {thread}]"));
    // The run's progress reached the client.
    let progress = listener.progress.lock().unwrap().clone();
    assert!(
        progress.iter().any(|line| line == "calling write_file"),
        "{progress:?}"
    );
    // The thread is alice's, with the file the agent wrote.
    let file = app
        .client
        .get(format!(
            "{}/api/threads/{thread}/files/content?path=note.md",
            app.base
        ))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(file.text().await.unwrap(), "buy milk");

    // Going on with the same conversation.
    let result = client
        .call_tool(
            CallToolRequestParams::new("writer")
                .with_arguments(args(json!({"input": "and eggs", "thread_id": thread}))),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&result)[0], "Noted: and eggs (turn 2)");
    assert_eq!(
        result.structured_content.unwrap()["thread_id"],
        thread.as_str()
    );

    // What cannot run is a tool error the client's model reads, not a broken session.
    for (name, arguments, phrase) in [
        ("bobs-own", json!({"input": "hi"}), "no agent `bobs-own`"),
        ("writer", json!({}), "`input` must be a non-empty string"),
        (
            "writer",
            json!({"input": "x", "color": 1}),
            "unknown argument `color`",
        ),
        (
            "writer",
            json!({"input": "x", "thread_id": "nope"}),
            "no thread `nope`",
        ),
    ] {
        let result = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(args(arguments)))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(true), "{name}");
        assert!(
            text_of(&result)[0].contains(phrase),
            "{:?}",
            text_of(&result)
        );
    }
    // Bob cannot go on with alice's thread.
    let (bobs, _) = connect(&app, &bob).await;
    app.agent(
        &bob,
        json!({"slug": "bob-writer", "name": "W", "config_json": {"context": {"model":
            {"provider": "scripted", "name": "demo", "script": [{"text": "hi"}]}}}}),
    )
    .await;
    let result = bobs
        .call_tool(
            CallToolRequestParams::new("bob-writer")
                .with_arguments(args(json!({"input": "x", "thread_id": thread}))),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
}

#[tokio::test]
async fn a_client_cancelling_the_call_cancels_the_run() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.agent(
        &alice,
        json!({"slug": "slow", "name": "Slow", "config_json": {"context": {"model":
            {"provider": "scripted", "name": "demo", "script": [
                {"text": "too late", "delay_ms": 10000}]}}}}),
    )
    .await;
    let (client, _) = connect(&app, &alice).await;
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(
                CallToolRequestParams::new("slow").with_arguments(args(json!({"input": "wait"}))),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    // Wait for the run to start.
    let deadline = Instant::now() + Duration::from_secs(10);
    let thread = loop {
        let threads = app.get("/api/threads", &alice).await.body;
        if let Some(thread) = threads.as_array().unwrap().first() {
            break thread["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "no run started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let run = loop {
        let runs = app
            .get(&format!("/api/threads/{thread}/runs"), &alice)
            .await
            .body;
        if let Some(run) = runs.as_array().unwrap().first() {
            break run["id"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "no run started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let cancelled_at = Instant::now();
    handle
        .cancel(Some("the user changed their mind".into()))
        .await
        .unwrap();
    let waited = app.wait(&alice, &run, 10).await;
    assert_eq!(waited["run"]["status"], "cancelled", "{waited}");
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_endpoint_needs_a_valid_bearer_token() {
    let app = TestApp::spawn().await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}});
    for token in [None, Some("ars_not-a-token")] {
        let mut request = app
            .client
            .post(format!("{}/api/mcp", app.base))
            .header("accept", "application/json, text/event-stream")
            .json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthorized");
    }
    // With one, the handshake answers.
    let response = app
        .client
        .post(format!("{}/api/mcp", app.base))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(&app.admin)
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().contains_key("mcp-session-id"));
}

/// A round-robin HTTP proxy over `backends`: each request goes whole to the next one, its
/// answer streamed back (so an SSE answer stays open as long as the backend's).
async fn round_robin(backends: Vec<String>) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let next = Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::new();
    let proxy = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let backend = backends[next.fetch_add(1, Ordering::SeqCst) % backends.len()].clone();
        let client = client.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
            let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
            let mut forwarded = client
                .request(parts.method, format!("{backend}{path}"))
                .body(body);
            for (name, value) in &parts.headers {
                if name != reqwest::header::HOST && name != reqwest::header::CONTENT_LENGTH {
                    forwarded = forwarded.header(name, value);
                }
            }
            let answer = forwarded.send().await.unwrap();
            let mut response = axum::http::Response::builder().status(answer.status());
            for (name, value) in answer.headers() {
                response = response.header(name, value);
            }
            response
                .body(axum::body::Body::from_stream(answer.bytes_stream()))
                .unwrap()
        }
    });
    tokio::spawn(async move { axum::serve(listener, proxy).await });
    format!("http://{address}")
}

#[tokio::test]
async fn any_instance_serves_a_session_and_cancels_a_call_running_on_another() {
    let a = TestApp::spawn().await;
    let b = TestApp::spawn_setup(common::Setup {
        store: Some(Arc::clone(&a.store)),
        secret_key: Some(a.secret_key.clone()),
        ..common::Setup::default()
    })
    .await;
    let (_, alice) = a.user("alice").await;
    a.agent(
        &alice,
        json!({"slug": "echo", "name": "Echo", "config_json": {"context": {"model":
            {"provider": "scripted", "name": "demo", "script": [{"text": "You said: {{input}}"}]}}}}),
    )
    .await;
    a.agent(
        &alice,
        json!({"slug": "slow", "name": "Slow", "config_json": {"context": {"model":
            {"provider": "scripted", "name": "demo", "script": [
                {"text": "too late", "delay_ms": 10000}]}}}}),
    )
    .await;
    let proxy = round_robin(vec![a.base.clone(), b.base.clone()]).await;
    ars_mcp::install_tls_provider();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{proxy}/api/mcp"))
        .auth_header(alice.clone());
    let client = Listener::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("connects through either instance");
    // Requests alternate between the instances; every one of them knows the session.
    for round in 0..4 {
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"), "round {round}");
        let input = format!("round {round}");
        let result = client
            .call_tool(
                CallToolRequestParams::new("echo").with_arguments(args(json!({"input": input}))),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&result)[0], format!("You said: round {round}"));
    }

    // A call runs on one instance; the client's cancellation may reach the other.
    let handle = client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(
                CallToolRequestParams::new("slow").with_arguments(args(json!({"input": "wait"}))),
            )),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let run = loop {
        let threads = a.get("/api/threads", &alice).await.body;
        let slow = threads
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["title"] == "wait")
            .map(|t| t["id"].as_str().unwrap().to_owned());
        if let Some(thread) = slow {
            let runs = a
                .get(&format!("/api/threads/{thread}/runs"), &alice)
                .await
                .body;
            if let Some(run) = runs.as_array().unwrap().first() {
                break run["id"].as_str().unwrap().to_owned();
            }
        }
        assert!(Instant::now() < deadline, "the slow run never started");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = a.get(&format!("/api/runs/{run}"), &alice).await.body["status"].clone();
        if status == "cancelled" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the run was not cancelled: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One raw request to `/api/mcp`: status, `Mcp-Session-Id` answered, body text.
async fn raw_mcp(
    app: &TestApp,
    token: &str,
    method: reqwest::Method,
    session: Option<&str>,
    version: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Option<String>, String) {
    let mut request = app
        .client
        .request(method, format!("{}/api/mcp", app.base))
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(token);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    if let Some(version) = version {
        request = request.header("mcp-protocol-version", version);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    // A GET stream stays open: a moment of it is enough.
    let text = tokio::time::timeout(Duration::from_millis(500), response.text())
        .await
        .map(|text| text.unwrap_or_default())
        .unwrap_or_default();
    (status, session, text)
}

/// The JSON of the first non-empty `data:` line of an SSE answer (a priming event has none).
fn first_data(text: &str) -> Value {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find(|data| !data.trim().is_empty())
        .map(|data| serde_json::from_str(data.trim()).unwrap())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_session_belongs_to_the_user_who_opened_it() {
    use reqwest::Method;
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(&alice, common::normal("alices-agent")).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}}});
    let (status, session, text) =
        raw_mcp(&app, &alice, Method::POST, None, None, Some(initialize)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let session = session.expect("a session id");
    let version = first_data(&text)["result"]["protocolVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = raw_mcp(
        &app,
        &alice,
        Method::POST,
        Some(&session),
        Some(&version),
        Some(initialized),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});

    // Bob, and even an admin, presenting alice's session: 404, whatever the method.
    for token in [&bob, &app.admin] {
        for (method, body) in [
            (Method::POST, Some(list.clone())),
            (Method::GET, None),
            (Method::DELETE, None),
        ] {
            let (status, _, text) = raw_mcp(
                &app,
                token,
                method.clone(),
                Some(&session),
                Some(&version),
                body,
            )
            .await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method}: {text}");
            assert!(!text.contains("alices-agent"), "{text}");
        }
    }
    // Alice's session is untouched: it lists her agents, and she alone ends it.
    let (status, _, text) = raw_mcp(
        &app,
        &alice,
        Method::POST,
        Some(&session),
        Some(&version),
        Some(list.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let tools = first_data(&text)["result"]["tools"].clone();
    assert!(tools.to_string().contains("alices-agent"), "{text}");
    let (status, _, _) = raw_mcp(
        &app,
        &alice,
        Method::DELETE,
        Some(&session),
        Some(&version),
        None,
    )
    .await;
    assert!(status.is_success(), "{status}");
    let (status, _, _) = raw_mcp(
        &app,
        &alice,
        Method::POST,
        Some(&session),
        Some(&version),
        Some(list),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a deleted session is gone");
    // A session nobody opened is nobody's.
    let (status, _, _) = raw_mcp(&app, &alice, Method::GET, Some("made-up"), None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
