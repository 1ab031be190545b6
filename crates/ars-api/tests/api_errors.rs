//! Bad input gets a clear JSON error and loses nothing: malformed, wrong types, unknown
//! fields, oversized, unauthorised, conflicting.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TestApp, normal};
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn duplicate_slug_is_a_409_naming_slug_and_writes_nothing() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    app.agent(t, normal("taken")).await;
    let r = app
        .post("/api/agent", t, json!({"slug": "taken", "name": "Other"}))
        .await;
    assert_eq!(
        (r.status, r.code(), r.field()),
        (StatusCode::CONFLICT, Some("conflict"), Some("slug"))
    );
    let other = app.agent(t, normal("other")).await;
    let r = app
        .put(
            &format!("/api/agent/{}", other["id"].as_str().unwrap()),
            t,
            json!({"slug": "taken", "name": "x"}),
        )
        .await;
    assert_eq!((r.status, r.field()), (StatusCode::CONFLICT, Some("slug")));
    let r = app
        .post(
            "/api/agent",
            t,
            json!({"slug": "general-purpose", "name": "Fake"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        app.get("/api/agent/other", t).await.body["name"],
        "Agent other"
    );
}

#[tokio::test]
async fn malformed_json_is_a_400() {
    let app = TestApp::spawn().await;
    for body in [
        &b"{\"slug\": "[..],
        b"not json",
        b"{\"slug\":\"a\",\"name\":\"A\"} trailing",
    ] {
        let r = app
            .raw(
                Method::POST,
                "/api/agent",
                &app.admin,
                "application/json",
                body.to_vec(),
            )
            .await;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::BAD_REQUEST, Some("bad_request")),
            "{}",
            r.body
        );
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("malformed JSON")
        );
    }
}

#[tokio::test]
async fn wrong_types_are_a_422_naming_the_field() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let cases = [
        (json!({"slug": "a", "name": 5}), "name"),
        (
            json!({"slug": "a", "name": "A", "is_subagent": "yes"}),
            "is_subagent",
        ),
        (
            json!({"slug": "a", "name": "A", "config_json": {"context": {"tools": "ls"}}}),
            "config_json.context.tools",
        ),
        (
            json!({"slug": "a", "name": "A", "config_json": {"context": {"limits": {"max_steps": -1}}}}),
            "config_json.context.limits.max_steps",
        ),
        (json!({"name": "A"}), "slug"),
    ];
    for (body, field) in cases {
        let r = app.post("/api/agent", t, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{body}: {}",
            r.body
        );
    }
    let r = app.post("/api/agent", t, json!(["an", "array"])).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn unknown_fields_are_a_422_naming_them() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let cases = [
        (json!({"slug": "a", "name": "A", "colour": "red"}), "colour"),
        (
            json!({"slug": "a", "name": "A", "config_json": {"ctx": {}}}),
            "config_json.ctx",
        ),
        (
            json!({"slug": "a", "name": "A", "config_json": {"context": {"modle": {}}}}),
            "config_json.context.modle",
        ),
        (
            json!({"slug": "a", "name": "A", "config_json": {"context": {"limits": {"steps": 3}}}}),
            "config_json.context.limits.steps",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/api/agent", t, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{body}: {}",
            r.body
        );
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unknown field")
        );
    }
    let agent = app.agent(t, normal("p")).await;
    let r = app
        .patch(
            &format!("/api/agent/{}", agent["id"].as_str().unwrap()),
            t,
            json!({"colour": "red"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("colour"))
    );
    let r = app
        .post(
            "/api/users",
            t,
            json!({"username": "u", "password": "password1", "admin": true}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("admin"))
    );
}

#[tokio::test]
async fn oversized_bodies_are_a_413() {
    let config = ars_api::ApiConfig {
        body_limit: 64 * 1024,
        ..ars_api::ApiConfig::default()
    };
    let app = TestApp::spawn_with(config).await;
    let prompt = "x".repeat(100 * 1024);
    let body = json!({"slug": "big", "name": "Big", "config_json": {"context": {"system_prompt": prompt}}});
    let r = app.post("/api/agent", &app.admin, body).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    assert_eq!(
        app.get("/api/agent/big", &app.admin).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn non_json_content_type_is_a_415() {
    let app = TestApp::spawn().await;
    let r = app
        .raw(
            Method::POST,
            "/api/agent",
            &app.admin,
            "text/plain",
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn missing_or_invalid_tokens_are_a_401() {
    let app = TestApp::spawn().await;
    let r = app.call(Method::GET, "/api/agent", None, None).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    assert_eq!(r.headers["www-authenticate"], "Bearer");
    let r = app.get("/api/agent", "ars_not-a-real-token").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = app
        .client
        .get(format!("{}/api/agent", app.base))
        .header("authorization", "Basic YWRtaW46eA==")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = app
        .call(Method::POST, "/api/agent", None, Some(normal("x")))
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_json() {
    let app = TestApp::spawn().await;
    let r = app.get("/api/nope", &app.admin).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let r = app
        .call(Method::DELETE, "/api/agent", Some(&app.admin), None)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
    );
    let r = app
        .get(
            "/api/agent/00000000-0000-7000-8000-00000000ffff",
            &app.admin,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = app
        .get("/api/agent?include_subagents=maybe", &app.admin)
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = TestApp::spawn().await;
    let r = app.get("/api/me", &app.admin).await;
    assert!(!r.headers["x-request-id"].to_str().unwrap().is_empty());
    let r = app
        .client
        .get(format!("{}/api/health", app.base))
        .header("x-request-id", "trace-me")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "trace-me");
}

#[tokio::test]
async fn field_validation_names_the_field() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let cases = [
        (json!({"slug": "Bad Slug", "name": "A"}), "slug"),
        (json!({"slug": "ok", "name": "  "}), "name"),
        (
            json!({"slug": "ok", "name": "A", "config_json": {"context": {"model": {"provider": "", "name": "m"}}}}),
            "config_json.context.model.provider",
        ),
        (
            json!({"slug": "ok", "name": "A", "config_json": {"context": {"model": {"provider": "p", "name": "m", "temperature": 9.0}}}}),
            "config_json.context.model.temperature",
        ),
        (
            json!({"slug": "ok", "name": "A", "config_json": {"context": {"tools": ["ls", "ls"]}}}),
            "config_json.context.tools",
        ),
    ];
    for (body, field) in cases {
        let r = app.post("/api/agent", t, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{body}: {}",
            r.body
        );
    }
}

#[tokio::test]
async fn nested_objects_sent_as_arrays_are_refused_naming_the_field() {
    let app = TestApp::spawn().await;
    for (context, field) in [
        (json!({"limits": []}), "config_json.context.limits"),
        (
            json!({"limits": [null, null]}),
            "config_json.context.limits",
        ),
        (
            json!({"model": ["scripted", "x"]}),
            "config_json.context.model",
        ),
    ] {
        let mut body = normal("arrays");
        body["config_json"] = json!({"context": context});
        let r = app.post("/api/agent", &app.admin, body).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{:?}",
            r.body
        );
    }
    let mut body = normal("arrays");
    body["share_config"] = json!([]);
    let r = app.post("/api/agent", &app.admin, body).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("share_config"))
    );
    // Nothing was created.
    let r = app.get("/api/agent/arrays", &app.admin).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn whole_numbers_written_with_a_fraction_are_integers() {
    let app = TestApp::spawn().await;
    let r = app
        .post(
            "/api/tokens",
            &app.admin,
            json!({"name": "ci", "expires_in_days": 30.0}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{:?}", r.body);
    // A real fraction is still not an integer.
    let r = app
        .post(
            "/api/tokens",
            &app.admin,
            json!({"name": "ci", "expires_in_days": 30.5}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("expires_in_days"))
    );
}

/// `error.reason` and `error.params` of a reply.
fn reason(r: &common::Reply) -> (&str, &serde_json::Value) {
    (
        r.body["error"]["reason"].as_str().unwrap_or_default(),
        &r.body["error"]["params"],
    )
}

#[tokio::test]
async fn every_error_states_its_reason_with_the_values_a_client_words_it_with() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    // Who is asking.
    let r = app
        .call(
            Method::POST,
            "/api/auth/login",
            None,
            Some(json!({"username": "admin", "password": "wrong-password"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(reason(&r).0, "login_failed", "{}", r.body);
    let r = app.call(Method::GET, "/api/agent", None, None).await;
    assert_eq!(reason(&r).0, "credentials_missing", "{}", r.body);
    let r = app.get("/api/agent", "not-a-token").await;
    assert_eq!(reason(&r).0, "credentials_invalid", "{}", r.body);
    let (_, user) = app.user("someone").await;
    let r = app
        .post(
            "/api/users",
            &user,
            json!({"username": "x", "password": "y"}),
        )
        .await;
    assert_eq!(
        (r.status, reason(&r).0),
        (StatusCode::FORBIDDEN, "admin_only")
    );

    // Rules of a field: the limit and the field come along.
    let long = "x".repeat(300);
    let r = app
        .post("/api/agent", t, json!({"slug": "a", "name": long}))
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let (code, params) = reason(&r);
    assert_eq!(code, "length", "{}", r.body);
    assert_eq!(params["field"], "name");
    assert!(
        params["max"].as_u64().is_some_and(|max| max > 0),
        "{params}"
    );
    let r = app
        .post("/api/agent", t, json!({"slug": "Not A Slug", "name": "A"}))
        .await;
    assert_eq!(reason(&r).0, "bad_slug", "{}", r.body);
    let r = app
        .post(
            "/api/agent",
            t,
            json!({"slug": "tools", "name": "A",
                   "config_json": {"context": {"tools": ["no_such_tool"]}}}),
        )
        .await;
    let (code, params) = reason(&r);
    assert_eq!(
        (code, &params["name"], &params["field"]),
        (
            "unknown",
            &json!("no_such_tool"),
            &json!("config_json.context.tools")
        ),
        "{}",
        r.body
    );
    let r = app.post("/api/agent", t, json!({"name": "A"})).await;
    assert_eq!(reason(&r).0, "required", "{}", r.body);

    // What is asked for, named by its subject.
    let r = app.get("/api/agent/no-such-agent", t).await;
    let (code, params) = reason(&r);
    assert_eq!((code, &params["subject"]), ("not_found", &json!("agent")));
    let r = app.delete("/api/agent/general-purpose", t).await;
    let (code, params) = reason(&r);
    assert_eq!(
        (code, &params["subject"]),
        ("builtin_cannot_be_deleted", &json!("agent")),
        "{}",
        r.body
    );

    // Conflicts and the request itself.
    app.agent(t, normal("taken")).await;
    let r = app
        .post("/api/agent", t, json!({"slug": "taken", "name": "B"}))
        .await;
    let (code, params) = reason(&r);
    assert_eq!((code, &params["field"]), ("taken", &json!("slug")));
    let r = app
        .raw(
            Method::POST,
            "/api/agent",
            t,
            "application/json",
            vec![b' '; 2 * 1024 * 1024],
        )
        .await;
    let (code, params) = reason(&r);
    assert_eq!(code, "body_too_large", "{}", r.body);
    assert!(params["limit"].as_u64().is_some(), "{params}");
    let r = app
        .raw(
            Method::POST,
            "/api/agent",
            t,
            "application/json",
            b"{".to_vec(),
        )
        .await;
    assert_eq!(reason(&r).0, "malformed_request");
    let r = app.get("/api/no/such/endpoint", t).await;
    assert_eq!(reason(&r).0, "no_such_endpoint");
    // The English sentence stays beside the code, for API users.
    assert!(
        r.body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
}
