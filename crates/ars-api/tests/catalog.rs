//! What the runtime offers, and agent writes checked against it: `GET /api/models`,
//! `GET /api/tools`, unknown tools/providers and bad scripts refused, the OpenAPI document.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TestApp, normal};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn models_lists_the_configured_providers_and_the_default_model() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let r = app.get("/api/models", &alice).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body,
        json!({
            "providers": [{"name": "scripted", "kind": "scripted", "source": "builtin", "models": ["scripted"]}],
            "default_model": null,
            "default_model_source": null,
        })
    );

    let mut config = ars_api::ApiConfig::default();
    config.defaults.base.model = Some(ars_models::parse_model_ref("scripted/demo").unwrap());
    let app = TestApp::spawn_with(config).await;
    let r = app.get("/api/models", &app.admin).await;
    assert_eq!(
        r.body["default_model"],
        json!({"provider": "scripted", "name": "demo"})
    );
    assert_eq!(r.body["default_model_source"], "config");
}

#[tokio::test]
async fn tools_lists_every_builtin_with_its_schema() {
    let app = TestApp::spawn().await;
    let r = app.get("/api/tools", &app.admin).await;
    assert_eq!(r.status, StatusCode::OK);
    let tools = r.body.as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    // Every built-in, `ask_user` included (offered only to agents that list it).
    let mut expected = ars_domain::context::BUILTIN_TOOLS.to_vec();
    expected.push("ask_user");
    expected.sort_unstable();
    assert_eq!(names, expected);
    for tool in tools {
        assert!(!tool["description"].as_str().unwrap().is_empty());
        assert_eq!(tool["parameters"]["type"], "object", "{tool}");
    }
}

#[tokio::test]
async fn agent_writes_refuse_unknown_tools_unknown_providers_and_bad_scripts() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let with_context = |context: serde_json::Value| {
        let mut body = normal("checked");
        body["config_json"] = json!({"context": context});
        body
    };
    let cases = [
        (
            json!({"tools": ["ls", "teleport"]}),
            "config_json.context.tools",
            "teleport",
        ),
        (
            json!({"model": {"provider": "openai", "name": "gpt-4o"}}),
            "config_json.context.model.provider",
            "openai",
        ),
        (
            json!({"model": {"provider": "scripted", "name": "demo", "script": []}}),
            "config_json.context.model.script",
            "script",
        ),
        (
            json!({"model": {"provider": "scripted", "name": "demo", "script": [{"txet": "typo"}]}}),
            "config_json.context.model.script",
            "txet",
        ),
        (
            json!({"model": {"provider": "scripted", "name": "demo", "script": "play"}}),
            "config_json.context.model.script",
            "script",
        ),
    ];
    for (context, field, mentions) in cases {
        let r = app
            .post("/api/agent", t, with_context(context.clone()))
            .await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{context}: {}",
            r.body
        );
        let message = r.body["error"]["message"].as_str().unwrap();
        assert!(message.contains(mentions), "{message}");
    }
    let r = app
        .post(
            "/api/agent",
            t,
            with_context(json!({"tools": ["teleport"]})),
        )
        .await;
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read_file"),
        "the message lists the available tools: {}",
        r.body
    );
    assert_eq!(
        app.get("/api/agent/checked", t).await.status,
        StatusCode::NOT_FOUND,
        "nothing written"
    );

    // The same rules on PUT and PATCH.
    app.agent(t, with_context(json!({"tools": ["ls"]}))).await;
    let r = app
        .put(
            "/api/agent/checked",
            t,
            with_context(json!({"tools": ["nope"]})),
        )
        .await;
    assert_eq!(r.field(), Some("config_json.context.tools"));
    let r = app
        .patch(
            "/api/agent/checked",
            t,
            json!({"config_json": {"context": {"model": {"provider": "nowhere", "name": "m"}}}}),
        )
        .await;
    assert_eq!(r.field(), Some("config_json.context.model.provider"));
    let r = app
        .patch(
            "/api/agent/checked",
            t,
            json!({"config_json": {"context": {"model": {"provider": "scripted", "name": "demo", "script": [{"delay_ms": "long"}]}}}}),
        )
        .await;
    assert_eq!(r.field(), Some("config_json.context.model.script"));
    assert_eq!(
        app.get("/api/agent/checked", t).await.body["config_json"]["context"],
        json!({"tools": ["ls"]})
    );

    // Valid ones pass.
    let r = app
        .patch(
            "/api/agent/checked",
            t,
            json!({"config_json": {"context": {"tools": ["read_file", "execute"], "model": {"provider": "scripted", "name": "demo", "script": [{"text": "hi"}]}}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn openapi_covers_threads_runs_events_and_the_catalog() {
    let doc = serde_json::to_value(ars_api::openapi_document()).unwrap();
    let paths = &doc["paths"];
    let expected = [
        ("/api/threads", &["get", "post"][..]),
        ("/api/threads/{id}", &["get", "patch", "delete"]),
        ("/api/threads/{id}/messages", &["get"]),
        ("/api/threads/{id}/subagents", &["get"]),
        ("/api/threads/{id}/runs", &["get", "post"]),
        ("/api/runs/{id}", &["get"]),
        ("/api/runs/{id}/wait", &["get"]),
        ("/api/runs/{id}/cancel", &["post"]),
        ("/api/runs/{id}/events", &["get"]),
        ("/api/models", &["get"]),
        ("/api/tools", &["get"]),
    ];
    for (path, methods) in expected {
        for method in methods {
            let op = &paths[path][method];
            assert!(op.is_object(), "{method} {path} missing");
            let responses = op["responses"].as_object().unwrap();
            assert!(
                responses.contains_key("401"),
                "{method} {path} documents 401"
            );
        }
    }
    let post_run = &paths["/api/threads/{id}/runs"]["post"]["responses"];
    for status in ["202", "404", "409", "422"] {
        assert!(
            post_run.get(status).is_some(),
            "POST runs documents {status}"
        );
    }
    let events = &paths["/api/runs/{id}/events"]["get"]["responses"];
    assert!(
        events["200"]["content"]["text/event-stream"].is_object(),
        "{events}"
    );
    assert!(events.get("410").is_some());
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "Thread",
        "Run",
        "Message",
        "RunAccepted",
        "WaitReply",
        "ModelCatalog",
        "ToolDescription",
    ] {
        assert!(schemas.get(schema).is_some(), "schema {schema}");
    }
    assert!(
        schemas["ErrorDetail"]["properties"]
            .get("active_run_id")
            .is_some(),
        "busy errors document active_run_id"
    );

    // The served document is the same one.
    let app = TestApp::spawn().await;
    let served = app
        .client
        .get(format!("{}/api/openapi.json", app.base))
        .send()
        .await
        .unwrap();
    let served: serde_json::Value = served.json().await.unwrap();
    assert_eq!(
        served["paths"]["/api/runs/{id}/events"],
        doc["paths"]["/api/runs/{id}/events"]
    );
    // What this server can run is stated in the write's schemas and their patch twins alike.
    let schemas = &served["components"]["schemas"];
    for model in ["ModelConfig", "ModelConfigPatch"] {
        assert_eq!(
            schemas[model]["properties"]["provider"]["enum"],
            serde_json::json!(["scripted"]),
            "{model}"
        );
    }
    for context in ["AgentContext", "AgentContextPatch"] {
        let tools = &schemas[context]["properties"]["tools"]["items"]["enum"];
        assert!(
            tools
                .as_array()
                .is_some_and(|t| t.contains(&"execute".into())),
            "{context}: {tools}"
        );
    }
}
