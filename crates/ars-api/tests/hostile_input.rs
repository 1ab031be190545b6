//! Hostile input never takes the server down: a million levels of nesting in every parser a
//! user or a peer can reach — an MCP server's tool schemas and results, tool arguments from
//! the model, request bodies, uploaded HTML, JSON and Word documents, SKILL.md frontmatter —
//! each gets a clear refusal, and the server answers the next request.
//!
//! The MCP server here is a small Streamable HTTP peer written for the test, so it can say
//! what no well-behaved server says.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode as AxumStatus, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use reqwest::multipart::{Form, Part};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use common::TestApp;

/// The tools the hostile server lists: two with schemas that used to crash or exhaust the
/// server when a call was checked, one ordinary, one whose result nests a million levels.
fn hostile_tools() -> Value {
    json!([
        {"name": "loop", "description": "refers to itself",
         "inputSchema": {"type": "object", "allOf": [{"$ref": "#"}]}},
        {"name": "mutual", "description": "a refers to b refers to a",
         "inputSchema": {"type": "object",
                         "properties": {"x": {"$ref": "#/$defs/a"}},
                         "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}},
        {"name": "fine", "description": "an ordinary tool",
         "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}},
                         "required": ["x"]}},
        {"name": "deep_result", "description": "answers a million levels of nesting",
         "inputSchema": {"type": "object"}}
    ])
}

/// One JSON-RPC answer for `request`, as the raw body text (a million-level result cannot be
/// built as a `Value`, only written).
fn answer(request: &Value) -> Option<String> {
    let id = request.get("id")?.clone();
    let method = request["method"].as_str().unwrap_or("");
    let result = match method {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1.0.0"}
        })
        .to_string(),
        "tools/list" => json!({"tools": hostile_tools()}).to_string(),
        "tools/call" => match request["params"]["name"].as_str() {
            Some("deep_result") => format!(
                r#"{{"content": [{{"type": "text", "text": "deep"}}], "structuredContent": {{"a": {}1{}}}}}"#,
                "[".repeat(1_000_000),
                "]".repeat(1_000_000)
            ),
            _ => json!({"content": [{"type": "text", "text": "called"}]}).to_string(),
        },
        _ => json!({}).to_string(),
    };
    Some(format!(
        r#"{{"jsonrpc": "2.0", "id": {id}, "result": {result}}}"#
    ))
}

async fn mcp(headers: HeaderMap, body: String) -> Response {
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return AxumStatus::BAD_REQUEST.into_response();
    };
    let deep_list = headers.get("x-deep-list").is_some();
    if deep_list && request["method"] == "tools/list" {
        // A tool list whose one schema nests a million levels.
        let text = format!(
            r#"{{"jsonrpc": "2.0", "id": {}, "result": {{"tools": [{{"name": "deep", "inputSchema": {{"type": "object", "properties": {{"a": {}{{}}{}}}}}}}]}}}}"#,
            request["id"],
            r#"{"items": "#.repeat(1_000_000),
            "}".repeat(1_000_000)
        );
        return ([(header::CONTENT_TYPE, "application/json")], text).into_response();
    }
    match answer(&request) {
        Some(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        // A notification.
        None => AxumStatus::ACCEPTED.into_response(),
    }
}

/// Starts the hostile MCP server on loopback; answers its URL.
async fn hostile_server() -> String {
    let app = Router::new().route(
        "/mcp",
        post(mcp)
            .get(|| async { AxumStatus::METHOD_NOT_ALLOWED })
            .delete(|| async { AxumStatus::OK }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}

async fn healthy(app: &TestApp) {
    let reply = app
        .client
        .get(format!("{}/api/health", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::OK);
}

#[tokio::test]
async fn an_mcp_tool_whose_schema_loops_is_left_out_when_listed_and_never_checked() {
    let app = TestApp::spawn().await;
    let admin = app.admin.clone();
    let url = hostile_server().await;
    let server = app
        .post(
            "/api/mcp-servers",
            &admin,
            json!({"slug": "hostile", "name": "Hostile",
                   "transport": {"type": "streamable_http", "url": url}}),
        )
        .await;
    assert_eq!(server.status, StatusCode::CREATED, "{}", server.body);
    let id = server.body["id"].as_str().unwrap();

    // The connection check lists every tool and says which are left out, and why.
    let checked = app
        .post(&format!("/api/mcp-servers/{id}/check"), &admin, json!({}))
        .await;
    assert_eq!(checked.status, StatusCode::OK, "{}", checked.body);
    let tools = checked.body["tools"].as_array().unwrap();
    let problem = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["problem"]
            .as_str()
            .map(str::to_owned)
    };
    let looping = problem("loop").unwrap();
    assert!(looping.contains("cannot be checked safely"), "{looping}");
    assert!(looping.contains("loop"), "{looping}");
    assert!(problem("mutual").unwrap().contains("loop"));
    assert_eq!(problem("fine"), None);

    // A run: the two are not offered (an error event names server and tool); calling one is
    // an unknown tool; the others work, and a result nested a million levels fails its call.
    app.agent(
        &admin,
        json!({"slug": "prober", "name": "prober", "config_json": {"context": {
        "mcp_servers": ["hostile"],
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"name": "mcp__hostile__loop", "arguments": {"a": 1}}]},
            {"tool_calls": [{"name": "mcp__hostile__mutual", "arguments": {"x": 1}}]},
            {"tool_calls": [{"name": "mcp__hostile__fine", "arguments": {"x": "a"}}]},
            {"tool_calls": [{"name": "mcp__hostile__deep_result", "arguments": {}}]},
            {"text": "done"}
        ]}}}}),
    )
    .await;
    let thread = app.thread(&admin, "prober").await;
    let run = app.start_run(&admin, &thread, "go").await;
    let waited = app.wait(&admin, &run, 60).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    let (_, events) = app.events(&admin, &run, None).await;
    let errors: Vec<String> = events
        .iter()
        .filter(|e| e.event == "error")
        .map(|e| e.data["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    for tool in ["loop", "mutual"] {
        assert!(
            errors.iter().any(|m| m.contains("MCP server `hostile`")
                && m.contains(&format!("tool `{tool}` is left out"))),
            "{errors:?}"
        );
    }
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &admin)
        .await;
    let results: Vec<String> = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0].contains("unknown tool"), "{results:?}");
    assert!(results[1].contains("unknown tool"), "{results:?}");
    assert_eq!(results[2], "called");
    assert!(!results[3].contains("deep"), "{results:?}");
    healthy(&app).await;
}

#[tokio::test]
async fn a_tool_list_nested_a_million_levels_fails_its_check_and_the_server_goes_on() {
    let app = TestApp::spawn().await;
    let admin = app.admin.clone();
    let url = hostile_server().await;
    let server = app
        .post(
            "/api/mcp-servers",
            &admin,
            json!({"slug": "deep", "name": "Deep",
                   "transport": {"type": "streamable_http", "url": url,
                                 "headers": {"x-deep-list": "1"}}}),
        )
        .await;
    assert_eq!(server.status, StatusCode::CREATED, "{}", server.body);
    let id = server.body["id"].as_str().unwrap();
    let checked = app
        .post(&format!("/api/mcp-servers/{id}/check"), &admin, json!({}))
        .await;
    assert_eq!(checked.status, StatusCode::OK, "{}", checked.body);
    assert_eq!(checked.body["ok"], false, "{}", checked.body);
    healthy(&app).await;
}

#[tokio::test]
async fn tool_arguments_nested_a_million_levels_are_refused_in_words() {
    let app = TestApp::spawn().await;
    let admin = app.admin.clone();
    let deep = "[".repeat(1_000_000);
    app.agent(
        &admin,
        json!({"slug": "deep-args", "name": "deep-args", "config_json": {"context": {
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"name": "ls", "arguments": deep}]},
            {"text": "done"}
        ]}}}}),
    )
    .await;
    let thread = app.thread(&admin, "deep-args").await;
    let run = app.start_run(&admin, &thread, "go").await;
    let waited = app.wait(&admin, &run, 60).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &admin)
        .await;
    let tool = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let content = tool["content"].as_str().unwrap();
    assert!(
        content.contains("nested deeper than 128 levels"),
        "{content}"
    );
    healthy(&app).await;
}

#[tokio::test]
async fn a_request_body_nested_a_million_levels_is_a_400_that_says_so() {
    let app = TestApp::spawn().await;
    let admin = app.admin.clone();
    for body in [
        "[".repeat(1_000_000),
        format!("{{\"a\":{}", "{\"a\":".repeat(150_000)),
    ] {
        let reply = app
            .raw(
                Method::POST,
                "/api/agent",
                &admin,
                "application/json",
                body.into_bytes(),
            )
            .await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("nested deeper than 128 levels"),
            "{message}"
        );
    }
    healthy(&app).await;
}

/// Uploads one file to a new knowledge base and waits for it to settle; answers the document.
async fn ingest_one(app: &TestApp, token: &str, slug: &str, name: &str, bytes: Vec<u8>) -> Value {
    let kb = app
        .post(
            "/api/knowledge-bases",
            token,
            json!({"slug": slug, "name": slug}),
        )
        .await;
    assert_eq!(kb.status, StatusCode::CREATED, "{}", kb.body);
    let kb = kb.body["id"].as_str().unwrap().to_owned();
    let form = Form::new().part("files", Part::bytes(bytes).file_name(name.to_owned()));
    let res = app
        .client
        .post(format!("{}/api/knowledge-bases/{kb}/documents", app.base))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let documents = app
            .get(&format!("/api/knowledge-bases/{kb}/documents"), token)
            .await;
        let document = documents.body.as_array().unwrap()[0].clone();
        if document["status"] == "ready" || document["status"] == "error" {
            return document;
        }
        assert!(tokio::time::Instant::now() < deadline, "{document}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn deeply_nested_documents_are_read_or_refused_and_the_server_goes_on() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;

    // The reproduction: 20,000 nested <div>s crashed the server at every start.
    let html = format!("<html><body>{}deep", "<div>".repeat(20_000));
    let document = ingest_one(&app, &alice, "html", "x.html", html.into_bytes()).await;
    assert_eq!(document["status"], "ready", "{document}");
    // A million: read as a stream, still nothing to overflow.
    let html = format!("<html><body>{}deeper", "<div>".repeat(1_000_000));
    let document = ingest_one(&app, &alice, "html-million", "y.html", html.into_bytes()).await;
    assert_eq!(document["status"], "ready", "{document}");

    let json = "[".repeat(1_000_000);
    let document = ingest_one(&app, &alice, "json", "x.json", json.into_bytes()).await;
    assert_eq!(document["status"], "error", "{document}");
    assert!(
        document["error"]
            .as_str()
            .unwrap()
            .contains("nested deeper than 128 levels"),
        "{document}"
    );

    let xml = format!(
        "<w:document xmlns:w=\"w\"><w:body>{}</w:body></w:document>",
        "<w:sdt>".repeat(1_000_000)
    );
    let docx = ars_knowledge::samples::docx_of(&xml);
    let document = ingest_one(&app, &alice, "docx", "x.docx", docx).await;
    assert_eq!(document["status"], "error", "{document}");
    assert!(
        document["error"]
            .as_str()
            .unwrap()
            .contains("nested deeper than 1000 levels"),
        "{document}"
    );
    healthy(&app).await;
}

#[tokio::test]
async fn skill_frontmatter_nested_past_the_parsers_bound_is_a_422() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    for nested in ["[".repeat(60_000), "[".repeat(1_000_000)] {
        let text = format!("---\nname: deep\ndescription: d\nx: {nested}\n---\nBody\n");
        let reply = app
            .raw(
                Method::POST,
                "/api/skills?target=shared",
                &alice,
                "text/markdown",
                text.into_bytes(),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            reply.body
        );
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("nested deeper than 128 levels")
                || message.contains("larger than 65536 bytes"),
            "{message}"
        );
    }
    healthy(&app).await;
}

#[tokio::test]
async fn uploads_past_the_servers_memory_bound_are_a_503_with_retry_after() {
    let app = TestApp::spawn_with(ars_api::ApiConfig {
        upload_memory: 1024 * 1024,
        ..ars_api::ApiConfig::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    let kb = app
        .post(
            "/api/knowledge-bases",
            &alice,
            json!({"slug": "big", "name": "Big"}),
        )
        .await;
    let kb = kb.body["id"].as_str().unwrap().to_owned();
    let upload = |bytes: Vec<u8>| {
        let form = Form::new().part("files", Part::bytes(bytes).file_name("big.txt"));
        app.client
            .post(format!("{}/api/knowledge-bases/{kb}/documents", app.base))
            .bearer_auth(&alice)
            .multipart(form)
            .send()
    };
    let refused = upload(vec![b'a'; 2 * 1024 * 1024]).await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "unavailable");
    // Nothing was stored, and the room was given back: a smaller upload goes through.
    let listed = app
        .get(&format!("/api/knowledge-bases/{kb}/documents"), &alice)
        .await;
    assert_eq!(listed.body, json!([]));
    let fits = upload(vec![b'a'; 512 * 1024]).await.unwrap();
    assert_eq!(fits.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_text_file_the_upload_limit_accepts_is_always_read() {
    // Past the old 5,000,000-character text limit, well within the 32 MiB upload limit.
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let line = "The quick brown fox jumps over the lazy dog near the riverbank.\n\n";
    let text = line.repeat(6_000_000 / line.len() + 1);
    assert!(text.len() > 5_000_000);
    let document = ingest_one(&app, &alice, "long", "long.txt", text.into_bytes()).await;
    assert_eq!(document["status"], "ready", "{document}");
}

#[tokio::test]
async fn names_with_bidirectional_controls_are_refused() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let spoof = "invoice\u{202E}fdp.exe";
    let agent = app
        .post(
            "/api/agent",
            &alice,
            json!({"slug": "spoof", "name": spoof}),
        )
        .await;
    assert_eq!(
        agent.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        agent.body
    );
    assert_eq!(agent.field(), Some("name"));
    let kb = app
        .post(
            "/api/knowledge-bases",
            &alice,
            json!({"slug": "spoof", "name": spoof}),
        )
        .await;
    assert_eq!(kb.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", kb.body);
    let kb = app
        .post(
            "/api/knowledge-bases",
            &alice,
            json!({"slug": "plain", "name": "Plain"}),
        )
        .await;
    let kb = kb.body["id"].as_str().unwrap().to_owned();
    let document = app
        .post(
            &format!("/api/knowledge-bases/{kb}/documents"),
            &alice,
            json!({"name": "report\u{2067}.txt", "text": "hello"}),
        )
        .await;
    assert_eq!(
        document.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        document.body
    );
    assert_eq!(document.field(), Some("name"));
    let mcp = app
        .post(
            "/api/mcp-servers",
            &alice,
            json!({"slug": "spoof", "name": spoof,
                   "transport": {"type": "streamable_http", "url": "https://mcp.example.com/mcp"}}),
        )
        .await;
    assert_eq!(mcp.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", mcp.body);
}
