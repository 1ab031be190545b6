//! The outbound policy over HTTP: a plain user's MCP server URL may not lead to loopback,
//! private or other internal addresses — in any form, through a name, or by a redirect — while
//! an admin's may; `[network] allow` makes exceptions; and what a plain user's check or call
//! answers never carries what such a server said.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "mcp_outbound/fakes.rs"]
mod fakes;

use std::net::IpAddr;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};

use ars_domain::OutboundPolicy;
use ars_mcp::Outbound;
use ars_mcp::outbound::MappedResolver;
use ars_runtime::mcp::McpConfig;
use common::{Setup, TestApp};
use fakes::MARKER;

/// A public address (never connected to: only saved).
const PUBLIC: &str = "93.184.215.14";

/// An app whose outbound policy allows `allow`, with a resolver the test maps names in.
async fn spawn(allow: &[String]) -> (TestApp, Arc<MappedResolver>) {
    let resolver = Arc::new(MappedResolver::default());
    let mcp = McpConfig {
        outbound: Outbound::new(OutboundPolicy::new(allow).unwrap(), resolver.clone()),
        ..McpConfig::default()
    };
    let app = TestApp::spawn_setup(Setup {
        mcp,
        ..Setup::default()
    })
    .await;
    (app, resolver)
}

fn port_of(app: &TestApp) -> u16 {
    app.base.rsplit(':').next().unwrap().parse().unwrap()
}

fn server(slug: &str, url: &str, token: Option<&str>) -> Value {
    let mut transport = json!({"type": "streamable_http", "url": url});
    if let Some(token) = token {
        transport["headers"] = json!({"Authorization": format!("Bearer {token}")});
    }
    json!({"slug": slug, "name": slug, "transport": transport})
}

async fn check(app: &TestApp, token: &str, view: &Value) -> Value {
    let id = view["id"].as_str().unwrap();
    let reply = app
        .post(&format!("/api/mcp-servers/{id}/check"), token, json!({}))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

async fn add(app: &TestApp, token: &str, body: Value) -> Value {
    let reply = app.post("/api/mcp-servers", token, body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body
}

#[tokio::test]
async fn every_internal_address_form_is_refused_for_a_plain_user_and_allowed_for_an_admin() {
    let (app, resolver) = spawn(&[]).await;
    resolver.set("rebind.test", &["127.0.0.1".parse().unwrap()]);
    let (_, alice) = app.user("alice").await;
    let ars = port_of(&app);
    // These lead to this very server; the rest to addresses around it.
    let loopback = [
        format!("http://127.0.0.1:{ars}/api/mcp"),
        format!("http://localhost:{ars}/api/mcp"),
        format!("http://0.0.0.0:{ars}/api/mcp"),
        format!("http://2130706433:{ars}/api/mcp"),
        format!("http://0x7f.1:{ars}/api/mcp"),
        format!("http://127.1:{ars}/api/mcp"),
        format!("http://[::ffff:127.0.0.1]:{ars}/api/mcp"),
        format!("http://rebind.test:{ars}/api/mcp"),
        format!("http://[::1]:{ars}/api/mcp"),
    ];
    let around = [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/mcp",
        "http://172.16.0.1/mcp",
        "http://192.168.1.1/mcp",
        "http://100.64.0.1/mcp",
        "http://[fd00::1]/mcp",
        "http://[fe80::1]/mcp",
        "http://224.0.0.1/mcp",
        "http://[::ffff:10.0.0.1]/mcp",
    ];
    let urls: Vec<String> = loopback
        .iter()
        .cloned()
        .chain(around.iter().map(|url| url.to_string()))
        .collect();
    for (i, url) in urls.iter().enumerate() {
        let reply = app
            .post(
                "/api/mcp-servers",
                &alice,
                server(&format!("s{i}"), url, None),
            )
            .await;
        assert_eq!(
            (reply.status, reply.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("transport.url")),
            "{url}: {}",
            reply.body
        );
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("[network] allow") && message.contains("non-admin"),
            "{url}: {message}"
        );
    }
    assert_eq!(app.get("/api/mcp-servers", &alice).await.body, json!([]));
    // A name is refused without telling what it resolved to; an address is named.
    resolver.set("db.test", &["10.9.8.7".parse().unwrap()]);
    let reply = app
        .post(
            "/api/mcp-servers",
            &alice,
            server("db", "http://db.test/mcp", None),
        )
        .await;
    let message = reply.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`db.test` resolves to a private address"),
        "{message}"
    );
    assert!(!message.contains("10.9.8.7"), "{message}");
    // Nor may she change a public server's URL to one of them.
    let public = add(
        &app,
        &alice,
        server("public", &format!("https://{PUBLIC}/mcp"), None),
    )
    .await;
    let path = format!("/api/mcp-servers/{}", public["id"].as_str().unwrap());
    for (method, body) in [
        (
            "patch",
            json!({"transport": {"type": "streamable_http", "url": loopback[0]}}),
        ),
        ("put", server("public", &loopback[3], None)),
    ] {
        let reply = if method == "patch" {
            app.patch(&path, &alice, body).await
        } else {
            app.put(&path, &alice, body).await
        };
        assert_eq!(
            (reply.status, reply.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("transport.url")),
            "{method}: {}",
            reply.body
        );
    }
    // A change of anything else keeps working.
    let renamed = app.patch(&path, &alice, json!({"name": "Public"})).await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);

    // The admin's servers may go anywhere: every form is saved, and the ones that lead here
    // connect (this server's own MCP endpoint, with the admin's token).
    let admin = app.admin.clone();
    for (i, url) in urls.iter().enumerate() {
        let view = add(&app, &admin, server(&format!("a{i}"), url, Some(&admin))).await;
        if i < loopback.len() {
            let report = check(&app, &admin, &view).await;
            assert_ne!(
                report["error"]["kind"], "refused_address",
                "{url}: {report}"
            );
            // This server listens on IPv4 only, and the made-up name is the test resolver's,
            // which only the policy's checks ask.
            if !url.contains("[::") && !url.contains("rebind.test") {
                assert_eq!(report["ok"], true, "{url}: {report}");
            }
        }
    }
}

#[tokio::test]
async fn a_name_is_judged_again_at_every_connection_and_a_stored_address_too() {
    let (app, resolver) = spawn(&[]).await;
    let public: IpAddr = PUBLIC.parse().unwrap();
    resolver.set("rebind.test", &[public]);
    let (alice_id, alice) = app.user("alice").await;
    let ars = port_of(&app);
    let view = add(
        &app,
        &alice,
        server(
            "rebinding",
            &format!("http://rebind.test:{ars}/api/mcp"),
            Some(&alice),
        ),
    )
    .await;
    // The name now answers loopback: the connection is refused before anything is sent.
    resolver.set("rebind.test", &["127.0.0.1".parse().unwrap()]);
    let report = check(&app, &alice, &view).await;
    assert_eq!(report["ok"], false);
    assert_eq!(report["error"]["kind"], "refused_address", "{report}");
    let message = report["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`rebind.test` resolves to a loopback address"),
        "{message}"
    );

    // A URL that reached the store some other way (an older version, a restore) is refused
    // when connecting, in its numeric form too.
    let fields = ars_domain::McpServerFields {
        slug: "stored".into(),
        name: "Stored".into(),
        description: String::new(),
        transport: ars_domain::McpTransport::StreamableHttp(
            ars_domain::mcp_server::HttpTransport {
                url: format!("http://2130706433:{ars}/api/mcp"),
                headers: Default::default(),
            },
        ),
        enabled_tools: None,
        share_config: Default::default(),
    };
    let owner = ars_domain::UserId::parse(&alice_id).unwrap();
    let stored = app
        .store
        .create_mcp_server(ars_domain::McpServerId::new(), &fields, Some(owner))
        .await
        .unwrap();
    let view = json!({"id": stored.id.to_string()});
    let report = check(&app, &alice, &view).await;
    assert_eq!(report["error"]["kind"], "refused_address", "{report}");
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the address 127.0.0.1 is a loopback address"),
        "{report}"
    );
    // In a run the server is named unavailable, and no tool of it is offered.
    app.agent(
        &alice,
        json!({"slug": "user-of-stored", "name": "U", "config_json": {"context": {
            "mcp_servers": ["stored"],
            "model": {"provider": "scripted", "name": "demo", "script": [{"text": "done"}]}}}}),
    )
    .await;
    let thread = app.thread(&alice, "user-of-stored").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let (_, events) = app.events(&alice, &run, None).await;
    let errors: Vec<String> = events
        .iter()
        .filter(|event| event.event == "error")
        .map(|event| event.data.to_string())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("may not be reached")),
        "{errors:?}"
    );
}

#[tokio::test]
async fn a_redirect_to_loopback_is_reported_and_not_followed() {
    let target = fakes::sink().await;
    let pages = fakes::pages(target.url("/mcp")).await;
    let (app, _) = spawn(&[format!("127.0.0.1:{}", pages.port)]).await;
    let (_, alice) = app.user("alice").await;
    // The target itself is not allowed...
    let reply = app
        .post(
            "/api/mcp-servers",
            &alice,
            server("direct", &target.url("/mcp"), None),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    // ...and a redirect to it from an allowed address does not reach it.
    let view = add(&app, &alice, server("moved", &pages.url("/redirect"), None)).await;
    let report = check(&app, &alice, &view).await;
    assert_eq!(report["ok"], false);
    assert_eq!(report["error"]["kind"], "http_status", "{report}");
    assert_eq!(report["error"]["status"], 307, "{report}");
    let message = report["error"]["message"].as_str().unwrap();
    assert!(message.contains("redirect"), "{message}");
    assert!(!report.to_string().contains(MARKER), "{report}");
    assert!(pages.hits() >= 1);
    assert_eq!(target.hits(), 0, "the redirect was followed");
}

#[tokio::test]
async fn exceptions_admit_one_port_or_a_whole_network() {
    // A working MCP server (its tool list answers) and another port beside it.
    let mcp = fakes::failing_mcp().await;
    let elsewhere = fakes::sink().await;
    let (app, _) = spawn(&[format!("127.0.0.1:{}", mcp.port)]).await;
    let (_, alice) = app.user("alice").await;
    let view = add(&app, &alice, server("allowed", &mcp.url("/mcp"), None)).await;
    let report = check(&app, &alice, &view).await;
    assert_eq!(report["ok"], true, "{report}");
    assert_eq!(report["tools"].as_array().unwrap().len(), 2, "{report}");
    // The same address written as its IPv4-mapped form is the same exception.
    let mapped = format!("http://[::ffff:127.0.0.1]:{}/mcp", mcp.port);
    add(&app, &alice, server("mapped", &mapped, None)).await;
    let reply = app
        .post(
            "/api/mcp-servers",
            &alice,
            server("beside", &elsewhere.url("/mcp"), None),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );

    // A network: every port of every address in it, and nothing outside it.
    let (app, _) = spawn(&["127.0.0.0/8".to_string()]).await;
    let (_, alice) = app.user("alice").await;
    let view = add(&app, &alice, server("sink", &elsewhere.url("/mcp"), None)).await;
    let report = check(&app, &alice, &view).await;
    assert_ne!(report["error"]["kind"], "refused_address", "{report}");
    assert!(elsewhere.hits() >= 1, "the sink was reached");
    add(
        &app,
        &alice,
        server("other", "http://127.8.9.10:1/mcp", None),
    )
    .await;
    let reply = app
        .post(
            "/api/mcp-servers",
            &alice,
            server("private", "http://10.0.0.1/mcp", None),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn checks_and_calls_never_tell_a_plain_user_what_the_server_said() {
    let pages = fakes::pages(String::from("http://127.0.0.1:9/")).await;
    let failing = fakes::failing_mcp().await;
    let (app, _) = spawn(&[
        format!("127.0.0.1:{}", pages.port),
        format!("127.0.0.1:{}", failing.port),
    ])
    .await;
    let (_, alice) = app.user("alice").await;
    let mut answers = String::new();
    for (path, kind, status) in [
        ("/notfound", "http_status", Some(404_u64)),
        ("/unauthorized", "unauthorized", Some(401)),
        ("/jsonrpc", "handshake", None),
    ] {
        let view = add(&app, &alice, server(&path[1..], &pages.url(path), None)).await;
        let report = check(&app, &alice, &view).await;
        assert_eq!(report["ok"], false, "{report}");
        assert_eq!(report["error"]["kind"], kind, "{path}: {report}");
        assert_eq!(report["error"]["status"].as_u64(), status, "{report}");
        answers.push_str(&report.to_string());
        // An admin checking the same server reads what it said.
        if path == "/notfound" {
            let report = check(&app, &app.admin, &view).await;
            assert!(report.to_string().contains(MARKER), "{report}");
        }
    }

    // Calls: `boom` is answered HTTP 400, `fail` a JSON-RPC error, both with the marker.
    add(&app, &alice, server("failing", &failing.url("/mcp"), None)).await;
    app.agent(
        &alice,
        json!({"slug": "caller", "name": "Caller", "config_json": {"context": {
            "mcp_servers": ["failing"],
            "model": {"provider": "scripted", "name": "demo", "script": [
                {"tool_calls": [{"name": "mcp__failing__boom", "arguments": {}}]},
                {"tool_calls": [{"name": "mcp__failing__fail", "arguments": {}}]},
                {"text": "done"}]}}}}),
    )
    .await;
    let thread = app.thread(&alice, "caller").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let (_, events) = app.events(&alice, &run, None).await;
    for event in &events {
        answers.push_str(&event.data.to_string());
    }
    let waited = app.wait(&alice, &run, 30).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &alice)
        .await
        .body;
    let tools: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(tools.len(), 2, "{messages}");
    assert!(tools[0].contains("HTTP 400"), "{}", tools[0]);
    assert!(tools[1].contains("JSON-RPC error"), "{}", tools[1]);
    answers.push_str(&messages.to_string());
    assert!(
        !answers.contains(MARKER),
        "a plain user read the server's words: {answers}"
    );
}

#[tokio::test]
async fn a_name_is_judged_again_at_every_request_of_an_open_connection() {
    let failing = fakes::failing_mcp().await;
    let (app, resolver) = spawn(&[format!("127.0.0.1:{}", failing.port)]).await;
    resolver.set("tools.test", &["127.0.0.1".parse().unwrap()]);
    let (_, alice) = app.user("alice").await;
    let url = format!("http://tools.test:{}/mcp", failing.port);
    add(&app, &alice, server("tools", &url, None)).await;
    app.agent(
        &alice,
        json!({"slug": "caller", "name": "Caller", "config_json": {"context": {
            "mcp_servers": ["tools"],
            "model": {"provider": "scripted", "name": "demo", "script": [
                {"tool_calls": [{"name": "mcp__tools__fail", "arguments": {}}]},
                {"text": "done"}]}}}}),
    )
    .await;
    let tool_message = |messages: &Value| {
        messages
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].to_string())
            .unwrap_or_default()
    };
    // The first run connects: the server is reached and its call fails as it does.
    let thread = app.thread(&alice, "caller").await;
    let run = app.start_run(&alice, &thread, "go").await;
    app.wait(&alice, &run, 30).await;
    let path = format!("/api/threads/{thread}/messages");
    let first = tool_message(&app.get(&path, &alice).await.body);
    assert!(first.contains("JSON-RPC error"), "{first}");
    let reached = failing.hits();

    // The name now answers a private address: the open connection's next request is refused
    // before it is sent.
    resolver.set("tools.test", &["10.0.0.1".parse().unwrap()]);
    let thread = app.thread(&alice, "caller").await;
    let run = app.start_run(&alice, &thread, "go").await;
    app.wait(&alice, &run, 30).await;
    let path = format!("/api/threads/{thread}/messages");
    let second = tool_message(&app.get(&path, &alice).await.body);
    assert!(
        second.contains("may not be reached") && second.contains("`tools.test` resolves to"),
        "{second}"
    );
    assert_eq!(failing.hits(), reached, "nothing more reached the server");
}

#[tokio::test]
async fn an_admins_server_is_exempt_only_while_admins_alone_can_change_it() {
    let mcp = fakes::failing_mcp().await;
    let (app, _) = spawn(&[]).await;
    let (alice_id, alice) = app.user("alice").await;
    let admin = app.admin.clone();
    let mut body = server("admins", &mcp.url("/mcp"), None);
    body["share_config"] = json!({"visibility": "users", "user_ids": [alice_id]});
    let view = add(&app, &admin, body).await;
    let path = format!("/api/mcp-servers/{}", view["id"].as_str().unwrap());
    // Shared for use: it reaches loopback, for alice too.
    for token in [&admin, &alice] {
        let report = check(&app, token, &view).await;
        assert_eq!(report["ok"], true, "{report}");
    }
    // Once alice may manage it (and so change its URL), it is judged like hers.
    let reply = app
        .patch(
            &path,
            &admin,
            json!({"share_config": {"visibility": "users", "user_ids": [alice_id], "manager_ids": [alice_id]}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    for token in [&admin, &alice] {
        let report = check(&app, token, &view).await;
        assert_eq!(report["error"]["kind"], "refused_address", "{report}");
    }
    // And her own change of its URL is refused at once.
    let reply = app
        .patch(
            &path,
            &alice,
            json!({"transport": {"type": "streamable_http", "url": format!("http://127.0.0.1:{}/x", mcp.port)}}),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let reply = app
        .patch(
            &path,
            &admin,
            json!({"share_config": {"visibility": "public"}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let report = check(&app, &alice, &view).await;
    assert_eq!(report["ok"], true, "{report}");
}
