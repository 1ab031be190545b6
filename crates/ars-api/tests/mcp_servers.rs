//! `/api/mcp-servers` over HTTP: who may add which transport, write-only secrets (never
//! answered, never logged, sealed at rest), merging of values, the sharing matrix, and a clear
//! answer for every kind of bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::TestApp;
use reqwest::StatusCode;
use serde_json::{Value, json};

use ars_domain::mcp_server::header_context;
use ars_domain::{McpServerId, McpTransport, McpValue};

const BEARER: &str = "Bearer mcp-test-secret-7d2f41";
const EXTRA: &str = "mcp-extra-secret-c09a3b";
const ENV_SECRET: &str = "mcp-env-secret-55e1aa";

fn http_server(slug: &str) -> Value {
    json!({
        "slug": slug,
        "name": "Everything",
        "description": "The reference server's tools",
        "transport": {
            "type": "streamable_http",
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": BEARER, "X-Team": "blue", "X-Extra": {"secret": EXTRA}}
        }
    })
}

fn stdio_server(slug: &str) -> Value {
    json!({
        "slug": slug,
        "name": "Files",
        "transport": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/gem/user-data"],
            "env": {"LOG_LEVEL": "debug", "API_TOKEN": {"secret": ENV_SECRET}}
        }
    })
}

/// The stored server behind a view.
async fn stored(app: &TestApp, view: &Value) -> ars_domain::McpServer {
    let id = McpServerId::parse(view["id"].as_str().unwrap()).unwrap();
    app.store.mcp_server(id).await.unwrap().unwrap()
}

fn assert_no_secret(text: &str) {
    for secret in [BEARER, "mcp-test-secret-7d2f41", EXTRA, ENV_SECRET] {
        assert!(!text.contains(secret), "a secret leaked: {text}");
    }
}

#[tokio::test]
async fn any_user_adds_an_http_server_whose_secrets_are_write_only_and_sealed_at_rest() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    let r = app
        .post("/api/mcp-servers", &alice, http_server("everything"))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_no_secret(&r.body.to_string());
    assert_eq!(r.body["slug"], "everything");
    assert_eq!(r.body["owner_id"], alice_id.as_str());
    assert_eq!(r.body["can_manage"], true);
    assert_eq!(r.body["share_config"]["visibility"], "private");
    assert_eq!(r.body["transport"]["type"], "streamable_http");
    assert_eq!(
        r.body["transport"]["headers"],
        json!([
            {"name": "authorization", "secret": true},
            {"name": "x-extra", "secret": true},
            {"name": "x-team", "secret": false, "value": "blue"},
        ]),
        "Authorization is always secret; names are lower case"
    );
    let got = app
        .get(
            &format!("/api/mcp-servers/{}", r.body["id"].as_str().unwrap()),
            &alice,
        )
        .await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body, r.body);
    let listed = app.get("/api/mcp-servers", &alice).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert_no_secret(&listed.body.to_string());

    // At rest: sealed for this server and header, readable with the server key only.
    let server = stored(&app, &r.body).await;
    let McpTransport::StreamableHttp(http) = &server.fields.transport else {
        panic!("{server:?}");
    };
    let McpValue::Secret(sealed) = &http.headers["authorization"] else {
        panic!("not sealed: {http:?}");
    };
    assert!(!sealed.as_str().contains("mcp-test-secret"));
    let context = header_context(server.id, "authorization");
    assert_eq!(
        app.secret_key.open(&context, sealed).unwrap().as_str(),
        BEARER
    );
    assert!(
        app.secret_key
            .open("mcp_server/other/header/authorization", sealed)
            .is_err()
    );
}

#[tokio::test]
async fn a_non_admin_cannot_create_or_change_a_stdio_server() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    let r = app
        .post("/api/mcp-servers", &alice, stdio_server("files"))
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(r.field(), Some("transport.type"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("admins")
    );
    assert_eq!(
        app.get("/api/mcp-servers", &app.admin).await.body,
        json!([])
    );

    // An admin's stdio server, shared with alice as a manager: she uses it, but cannot change
    // what it runs — nor anything else of it — or delete it.
    let mut body = stdio_server("files");
    body["share_config"] =
        json!({"visibility": "users", "user_ids": [alice_id], "manager_ids": [alice_id]});
    let r = app.post("/api/mcp-servers", &app.admin, body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_no_secret(&r.body.to_string());
    assert_eq!(
        r.body["transport"]["env"],
        json!([
            {"name": "API_TOKEN", "secret": true},
            {"name": "LOG_LEVEL", "secret": false, "value": "debug"},
        ])
    );
    let path = format!("/api/mcp-servers/{}", r.body["id"].as_str().unwrap());
    let seen = app.get(&path, &alice).await;
    assert_eq!(seen.status, StatusCode::OK);
    assert_eq!(
        (
            seen.body["can_manage"].clone(),
            seen.body["can_delete"].clone()
        ),
        (json!(false), json!(false))
    );
    let patch = app.patch(&path, &alice, json!({"name": "Mine now"})).await;
    assert_eq!(patch.status, StatusCode::FORBIDDEN, "{}", patch.body);
    let put = app.put(&path, &alice, stdio_server("files")).await;
    assert_eq!(put.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.delete(&path, &alice).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(app.get(&path, &alice).await.body["name"], "Files");

    // Nor may she turn her own HTTP server into a stdio one.
    let own = app
        .post("/api/mcp-servers", &alice, http_server("remote"))
        .await;
    let own_path = format!("/api/mcp-servers/{}", own.body["id"].as_str().unwrap());
    let r = app.put(&own_path, &alice, stdio_server("remote")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = app
        .patch(
            &own_path,
            &alice,
            json!({"transport": {"type": "stdio", "command": "sh"}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(
        app.get(&own_path, &alice).await.body["transport"]["type"],
        "streamable_http"
    );
}

#[tokio::test]
async fn bad_input_is_a_422_naming_the_field_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let with = |patch: Value| {
        let mut body = stdio_server("files");
        for (key, value) in patch.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    let transport = |t: Value| json!({"transport": t});
    let cases = [
        (
            transport(json!({"type": "sse", "url": "http://x/mcp"})),
            "transport.type",
        ),
        (
            transport(json!({"type": "stdio", "command": "  "})),
            "transport.command",
        ),
        (transport(json!({"type": "stdio"})), "transport.command"),
        (
            transport(json!({"type": "stdio", "command": "node", "cwd": "relative/dir"})),
            "transport.cwd",
        ),
        (
            transport(json!({"type": "stdio", "command": "node", "env": {"1BAD": "x"}})),
            "transport.env.1BAD",
        ),
        (
            transport(
                json!({"type": "stdio", "command": "node", "env": {"OK": {"secret": "x", "more": 1}}}),
            ),
            "transport.env.OK",
        ),
        (
            transport(json!({"type": "stdio", "command": "node", "env": {"N": 3}})),
            "transport.env.N",
        ),
        (
            transport(json!({"type": "stdio", "command": "node", "surprise": true})),
            "transport.surprise",
        ),
        (
            transport(json!({"type": "streamable_http", "url": "ftp://host/mcp"})),
            "transport.url",
        ),
        (
            transport(json!({"type": "streamable_http", "url": "http://user:pw@host/mcp"})),
            "transport.url",
        ),
        (
            transport(
                json!({"type": "streamable_http", "url": "http://h/mcp", "headers": {"bad header": "x"}}),
            ),
            "transport.headers.bad header",
        ),
        (
            transport(
                json!({"type": "streamable_http", "url": "http://h/mcp", "headers": {"Mcp-Session-Id": "x"}}),
            ),
            "transport.headers.Mcp-Session-Id",
        ),
        (
            transport(
                json!({"type": "streamable_http", "url": "http://h/mcp", "headers": {"X-A": "a", "x-a": "b"}}),
            ),
            "transport.headers.x-a",
        ),
        (
            transport(
                json!({"type": "streamable_http", "url": "http://h/mcp", "headers": {"X-A": "line\nbreak"}}),
            ),
            "transport.headers.X-A",
        ),
        (json!({"slug": "Bad_Slug"}), "slug"),
        (json!({"slug": "-x"}), "slug"),
        (json!({"name": ""}), "name"),
        (
            json!({"enabled_tools": ["echo", "echo"]}),
            "enabled_tools[1]",
        ),
        (json!({"enabled_tools": "echo"}), "enabled_tools"),
        (json!({"unknown": 1}), ""),
    ];
    let mut wrong = Vec::new();
    for (patch, field) in cases {
        let body = with(patch.clone());
        let r = app.post("/api/mcp-servers", &app.admin, body).await;
        let named = field.is_empty() || r.field() == Some(field);
        let worded = r.body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty());
        if r.status != StatusCode::UNPROCESSABLE_ENTITY || !named || !worded {
            wrong.push(format!("{patch} → {} {}", r.status, r.body));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Malformed, not JSON, unauthenticated, too large.
    let r = app
        .raw(
            reqwest::Method::POST,
            "/api/mcp-servers",
            &app.admin,
            "application/json",
            b"{nope".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = app
        .raw(
            reqwest::Method::POST,
            "/api/mcp-servers",
            &app.admin,
            "text/plain",
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let r = app
        .call(
            reqwest::Method::POST,
            "/api/mcp-servers",
            None,
            Some(http_server("anon")),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let mut huge = stdio_server("huge");
    huge["description"] = json!("x".repeat(3 << 20));
    let r = app.post("/api/mcp-servers", &app.admin, huge).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        app.get("/api/mcp-servers", &app.admin).await.body,
        json!([])
    );

    // A taken slug is a conflict; an unknown share user too. A changed slug is refused.
    let first = app
        .post("/api/mcp-servers", &app.admin, stdio_server("files"))
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    let r = app
        .post("/api/mcp-servers", &app.admin, http_server("files"))
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("slug")),
        "{}",
        r.body
    );
    let mut ghost = http_server("ghost");
    ghost["share_config"] =
        json!({"visibility": "users", "user_ids": [McpServerId::new().to_string()]});
    let r = app.post("/api/mcp-servers", &app.admin, ghost).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("share_config.user_ids"))
    );
    let path = format!("/api/mcp-servers/{}", first.body["id"].as_str().unwrap());
    let r = app.put(&path, &app.admin, stdio_server("renamed")).await;
    assert_eq!((r.status, r.field()), (StatusCode::CONFLICT, Some("slug")));
    let r = app
        .patch(&path, &app.admin, json!({"slug": "renamed"}))
        .await;
    assert_eq!((r.status, r.field()), (StatusCode::CONFLICT, Some("slug")));
    for missing in [
        "/api/mcp-servers/not-a-uuid",
        &format!("/api/mcp-servers/{}", McpServerId::new()),
    ] {
        assert_eq!(
            app.get(missing, &app.admin).await.status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            app.delete(missing, &app.admin).await.status,
            StatusCode::NOT_FOUND
        );
    }
    let listed = app.get("/api/mcp-servers", &app.admin).await.body;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["slug"], "files");
}

#[tokio::test]
async fn values_merge_absent_keeps_null_removes_and_a_new_transport_type_starts_afresh() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let r = app
        .post("/api/mcp-servers", &alice, http_server("remote"))
        .await;
    let path = format!("/api/mcp-servers/{}", r.body["id"].as_str().unwrap());
    let names = |view: &Value| -> Vec<String> {
        view["transport"]["headers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap().to_string())
            .collect()
    };

    // A PUT that does not mention the secrets keeps them; `null` removes; a value replaces.
    let put = json!({"slug": "remote", "name": "Remote", "transport": {
        "type": "streamable_http", "url": "https://mcp.example.com/mcp",
        "headers": {"X-Team": null, "X-Region": "eu"}}});
    let r = app.put(&path, &alice, put).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(names(&r.body), ["authorization", "x-extra", "x-region"]);
    assert_eq!(r.body["description"], "", "a PUT replaces the plain fields");
    let server = stored(&app, &r.body).await;
    let McpTransport::StreamableHttp(http) = &server.fields.transport else {
        panic!()
    };
    let McpValue::Secret(sealed) = &http.headers["authorization"] else {
        panic!()
    };
    let context = header_context(server.id, "authorization");
    assert_eq!(
        app.secret_key.open(&context, sealed).unwrap().as_str(),
        BEARER
    );

    // A PATCH of the name keeps the whole transport; a new bearer replaces the old.
    let r = app.patch(&path, &alice, json!({"name": "Renamed"})).await;
    assert_eq!(
        (r.body["name"].as_str(), names(&r.body).len()),
        (Some("Renamed"), 3)
    );
    let r = app
        .patch(&path, &alice, json!({"transport": {"type": "streamable_http", "url": "https://mcp.example.com/mcp",
            "headers": {"authorization": "Bearer rotated", "X-Extra": null}}, "enabled_tools": ["echo"]}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(names(&r.body), ["authorization", "x-region"]);
    assert_eq!(r.body["enabled_tools"], json!(["echo"]));
    let server = stored(&app, &r.body).await;
    let McpTransport::StreamableHttp(http) = &server.fields.transport else {
        panic!()
    };
    let McpValue::Secret(sealed) = &http.headers["authorization"] else {
        panic!()
    };
    assert_eq!(
        app.secret_key.open(&context, sealed).unwrap().as_str(),
        "Bearer rotated"
    );
    let r = app
        .patch(&path, &alice, json!({"enabled_tools": null}))
        .await;
    assert_eq!(r.body["enabled_tools"], Value::Null);

    // An admin turning it into a stdio server starts with no variables at all.
    let (_, _) = (r, ());
    let r = app
        .patch(
            &path,
            &app.admin,
            json!({"transport": {"type": "stdio", "command": "node", "args": ["server.js"]}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["transport"]["env"], json!([]));
    assert_eq!(r.body["can_manage"], true);
}

#[tokio::test]
async fn mcp_server_sharing_matrix() {
    let app = TestApp::spawn().await;
    let (_, owner) = app.user("owner").await;
    let (listed_id, listed) = app.user("listed").await;
    let (manager_id, manager) = app.user("manager").await;
    let (_, stranger) = app.user("stranger").await;
    for visibility in ["private", "users", "public"] {
        let mut body = http_server(visibility);
        body["share_config"] =
            json!({"visibility": visibility, "user_ids": [listed_id], "manager_ids": [manager_id]});
        let r = app.post("/api/mcp-servers", &owner, body).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    }
    let ids: std::collections::BTreeMap<String, String> = app
        .get("/api/mcp-servers", &owner)
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["slug"].as_str().unwrap().to_string(),
                s["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // (who, visibility, sees, manages)
    let who = [
        ("owner", &owner),
        ("admin", &app.admin),
        ("manager", &manager),
        ("listed", &listed),
        ("stranger", &stranger),
    ];
    let cells = [
        ("owner", "private", true, true),
        ("owner", "users", true, true),
        ("owner", "public", true, true),
        ("admin", "private", true, true),
        ("admin", "users", true, true),
        ("admin", "public", true, true),
        ("manager", "private", true, true),
        ("manager", "users", true, true),
        ("manager", "public", true, true),
        ("listed", "private", false, false),
        ("listed", "users", true, false),
        ("listed", "public", true, false),
        ("stranger", "private", false, false),
        ("stranger", "users", false, false),
        ("stranger", "public", true, false),
    ];
    for (name, visibility, sees, manages) in cells {
        let token = who.iter().find(|(n, _)| *n == name).unwrap().1;
        let path = format!("/api/mcp-servers/{}", ids[visibility]);
        let got = app.get(&path, token).await;
        let listed_slugs: Vec<String> = app
            .get("/api/mcp-servers", token)
            .await
            .body
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["slug"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            listed_slugs.contains(&visibility.to_string()),
            sees,
            "{name} × {visibility}: list"
        );
        if !sees {
            assert_eq!(got.status, StatusCode::NOT_FOUND, "{name} × {visibility}");
            let r = app.patch(&path, token, json!({"name": "x"})).await;
            assert_eq!(
                r.status,
                StatusCode::NOT_FOUND,
                "{name} × {visibility}: patch"
            );
            assert_eq!(app.delete(&path, token).await.status, StatusCode::NOT_FOUND);
            continue;
        }
        assert_eq!(got.status, StatusCode::OK, "{name} × {visibility}");
        assert_eq!(got.body["can_manage"], manages, "{name} × {visibility}");
        assert_no_secret(&got.body.to_string());
        let r = app
            .patch(&path, token, json!({"description": format!("by {name}")}))
            .await;
        let expected = if manages {
            StatusCode::OK
        } else {
            StatusCode::FORBIDDEN
        };
        assert_eq!(
            r.status, expected,
            "{name} × {visibility}: patch {}",
            r.body
        );
        if !manages {
            assert_eq!(app.delete(&path, token).await.status, StatusCode::FORBIDDEN);
        }
    }
    // Whoever manages it deletes it; then it is gone for everyone.
    let path = format!("/api/mcp-servers/{}", ids["users"]);
    assert_eq!(
        app.delete(&path, &manager).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(app.get(&path, &owner).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn mcp_server_secrets_never_appear_in_answers_or_logs() {
    let logs = common::logs::captured_logs();
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let mut answers = String::new();
    let r = app
        .post("/api/mcp-servers", &app.admin, stdio_server("files"))
        .await;
    answers.push_str(&r.body.to_string());
    let path = format!("/api/mcp-servers/{}", r.body["id"].as_str().unwrap());
    let r = app.put(&path, &app.admin, stdio_server("files")).await;
    answers.push_str(&r.body.to_string());
    let r = app
        .post("/api/mcp-servers", &alice, http_server("remote"))
        .await;
    answers.push_str(&r.body.to_string());
    // A bad write echoes nothing of the values it carried.
    let mut bad = http_server("bad");
    bad["transport"]["headers"]["X-Extra"] = json!({"secret": EXTRA, "oops": true});
    let r = app.post("/api/mcp-servers", &alice, bad).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    answers.push_str(&r.body.to_string());
    answers.push_str(
        &app.get("/api/mcp-servers", &app.admin)
            .await
            .body
            .to_string(),
    );
    assert_no_secret(&answers);
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(logs.contains("MCP server added"), "the logs were captured");
    assert_no_secret(&logs);
    assert!(!logs.contains(ENV_SECRET));
}

#[tokio::test]
async fn the_served_openapi_names_the_mcp_servers_a_callers_agents_may_name() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    let mut public = http_server("public-one");
    public["share_config"] = json!({"visibility": "public"});
    assert_eq!(
        app.post("/api/mcp-servers", &alice, public).await.status,
        StatusCode::CREATED
    );
    let private = http_server("alices-own");
    assert_eq!(
        app.post("/api/mcp-servers", &alice, private).await.status,
        StatusCode::CREATED
    );
    let schema = |doc: &Value| {
        doc["components"]["schemas"]["AgentContext"]["properties"]["mcp_servers"].clone()
    };

    let doc = app.get("/api/openapi.json", &alice).await.body;
    assert_eq!(
        schema(&doc)["items"]["enum"],
        json!(["alices-own", "public-one"])
    );
    // The agent patch's twin states the same.
    assert_eq!(
        doc["components"]["schemas"]["AgentContextPatch"]["properties"]["mcp_servers"]["items"]["enum"],
        json!(["alices-own", "public-one"])
    );
    let doc = app.get("/api/openapi.json", &bob).await.body;
    assert_eq!(schema(&doc)["items"]["enum"], json!(["public-one"]));
    // Without a token (or with a bad one) the document is served as it is.
    for token in ["", "ars_not-a-token"] {
        let doc = app.get("/api/openapi.json", token).await.body;
        assert!(schema(&doc)["items"]["enum"].is_null(), "{}", schema(&doc));
    }
    // Nobody's servers: only an empty list fits.
    let fresh = TestApp::spawn().await;
    let (_, carol) = fresh.user("carol").await;
    let doc = fresh.get("/api/openapi.json", &carol).await.body;
    assert_eq!(schema(&doc)["maxItems"], 0, "{}", schema(&doc));
}
