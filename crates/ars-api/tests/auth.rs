//! Login, tokens, users, and the OpenAPI document.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ADMIN_PASSWORD, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::json;

use ars_domain::user::PasswordPolicy;

#[tokio::test]
async fn login_gives_a_token_and_wrong_credentials_are_a_401() {
    let app = TestApp::spawn().await;
    let r = app
        .call(
            Method::POST,
            "/api/auth/login",
            None,
            Some(json!({"username": "admin", "password": ADMIN_PASSWORD})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body["token"].as_str().unwrap().starts_with("ars_"));
    assert_eq!(r.body["user"]["role"], "admin");
    assert!(r.body["user"].get("password_hash").is_none());

    for (user, password) in [("admin", "wrong-password"), ("nobody", ADMIN_PASSWORD)] {
        let r = app
            .call(
                Method::POST,
                "/api/auth/login",
                None,
                Some(json!({"username": user, "password": password})),
            )
            .await;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::UNAUTHORIZED, Some("unauthorized"))
        );
    }
    let r = app
        .call(
            Method::POST,
            "/api/auth/login",
            None,
            Some(json!({"username": "admin"})),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("password"))
    );
}

#[tokio::test]
async fn me_logout_and_revoked_tokens() {
    let app = TestApp::spawn().await;
    let token = app.login("admin", ADMIN_PASSWORD).await;
    assert_eq!(app.get("/api/me", &token).await.body["username"], "admin");
    assert_eq!(
        app.post("/api/auth/logout", &token, json!({})).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        app.get("/api/me", &token).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.get("/api/me", &app.admin).await.status,
        StatusCode::OK,
        "other tokens still work"
    );
}

#[tokio::test]
async fn an_account_change_written_past_this_instance_holds_within_a_second() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    assert_eq!(app.get("/api/me", &alice).await.status, StatusCode::OK);
    // Written straight to the store, as another process would without a word to this one
    // (the `ars user disable` command): this instance learns it by reading the token again.
    let id = ars_domain::UserId::parse(&alice_id).unwrap();
    let disable = ars_domain::AccountChange {
        role: None,
        disabled: Some(true),
    };
    app.store.update_user(id, disable).await.unwrap();
    let changed = std::time::Instant::now();
    loop {
        let reply = app.get("/api/me", &alice).await;
        if reply.status == StatusCode::FORBIDDEN {
            assert_eq!(reply.code(), Some("account_disabled"), "{:?}", reply.body);
            break;
        }
        assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
        assert!(
            changed.elapsed() < std::time::Duration::from_millis(1500),
            "still served {:?} after the change",
            changed.elapsed()
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    // Through the API a change holds at once: each request after it is answered by it.
    for (disabled, answer) in [(false, StatusCode::OK), (true, StatusCode::FORBIDDEN)] {
        let path = format!("/api/users/{alice_id}");
        let reply = app
            .patch(&path, &app.admin, json!({ "disabled": disabled }))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
        assert_eq!(app.get("/api/me", &alice).await.status, answer);
    }
}

#[tokio::test]
async fn api_tokens_can_be_created_listed_and_revoked() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let r = app
        .post(
            "/api/tokens",
            &alice,
            json!({"name": "ci", "expires_in_days": 7}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let secret = r.body["token"].as_str().unwrap().to_string();
    let id = r.body["info"]["id"].as_str().unwrap().to_string();
    assert_eq!(app.get("/api/me", &secret).await.body["username"], "alice");
    let names: Vec<_> = app
        .get("/api/tokens", &alice)
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(names.contains(&json!("ci")));

    // Someone else's token id is not found, and stays valid.
    let r = app.delete(&format!("/api/tokens/{id}"), &app.admin).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(app.get("/api/me", &secret).await.status, StatusCode::OK);
    assert_eq!(
        app.delete(&format!("/api/tokens/{id}"), &alice)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        app.get("/api/me", &secret).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.delete("/api/tokens/garbage", &alice).await.status,
        StatusCode::NOT_FOUND
    );

    let r = app
        .post(
            "/api/tokens",
            &alice,
            json!({"name": "x", "expires_in_days": 0}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("expires_in_days"))
    );
}

#[tokio::test]
async fn only_admins_create_users_and_usernames_are_unique() {
    let app = TestApp::spawn().await;
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "carol", "password": "password-1234"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["role"], "user");
    let carol = app.login("carol", "password-1234").await;
    let r = app
        .post(
            "/api/users",
            &carol,
            json!({"username": "dave", "password": "password-1234"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "carol", "password": "password-1234"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("username"))
    );
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "eve", "password": "short"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("password"))
    );
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "Bad Name", "password": "password-1234"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("username"))
    );
    let users = app.get("/api/users", &carol).await.body;
    assert_eq!(users.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn first_start_creates_admin_once() {
    let (store, _dir) = ars_store::test_support::sqlite_fresh().await;
    use ars_api::accounts::{AdminBootstrap, ensure_admin};
    let AdminBootstrap::CreatedWithPassword(password) =
        ensure_admin(&store, PasswordPolicy::default(), None)
            .await
            .unwrap()
    else {
        panic!("expected a generated password");
    };
    assert!(password.len() >= 16);
    assert_eq!(
        ensure_admin(&store, PasswordPolicy::default(), Some("other-password"))
            .await
            .unwrap(),
        AdminBootstrap::Existing
    );
    let (user, hash) = ars_store::AccountStore::user_credentials(&store, "admin")
        .await
        .unwrap()
        .unwrap();
    assert!(user.is_admin());
    assert!(ars_domain::credentials::verify_password(&password, &hash));
}

#[tokio::test]
async fn openapi_document_covers_every_endpoint_and_the_error_shape() {
    let app = TestApp::spawn().await;
    let r = app.call(Method::GET, "/api/openapi.json", None, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let doc = r.body;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/api/health", &["get"][..]),
        ("/api/auth/login", &["post"]),
        ("/api/auth/logout", &["post"]),
        ("/api/me", &["get"]),
        ("/api/tokens", &["get", "post"]),
        ("/api/tokens/{id}", &["delete"]),
        ("/api/users", &["get", "post"]),
        ("/api/agent", &["get", "post"]),
        ("/api/agent/{id}", &["get", "put", "patch", "delete"]),
        ("/api/agent/{id}/default", &["post"]),
        ("/api/agent/{id}/resolved-context", &["get"]),
    ] {
        for method in methods {
            assert!(
                paths.get(path).and_then(|p| p.get(*method)).is_some(),
                "{method} {path} missing"
            );
        }
    }
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
    assert!(doc["components"]["schemas"]["Agent"].is_object());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
    let post_agent = &paths["/api/agent"]["post"]["responses"];
    for status in ["201", "400", "401", "409", "413", "422"] {
        assert!(
            post_agent.get(status).is_some(),
            "POST /api/agent lacks {status}"
        );
    }
}

/// The routes and the document are written from one table, the document only when asked for:
/// each operation it states is one the server routes, and asking twice answers the same.
#[tokio::test]
async fn every_operation_the_document_states_is_routed() {
    let app = TestApp::spawn().await;
    let first = app.call(Method::GET, "/api/openapi.json", None, None).await;
    let again = app.call(Method::GET, "/api/openapi.json", None, None).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body, again.body);
    let paths = first.body["paths"].as_object().unwrap();
    assert!(paths.len() > 50, "{} paths", paths.len());
    let mut operations = 0;
    for (path, item) in paths {
        // A sample value for every path parameter, `{*rest}` ones too.
        let concrete: String = path
            .split('/')
            .map(|segment| {
                if segment.starts_with('{') {
                    "x1"
                } else {
                    segment
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        for method in ["get", "put", "post", "delete", "patch"] {
            if item.get(method).is_none() {
                continue;
            }
            operations += 1;
            let verb = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = app.call(verb, &concrete, None, None).await;
            assert_ne!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            assert_ne!(
                r.body["error"]["reason"], "no_such_endpoint",
                "{method} {path}: {}",
                r.body
            );
        }
    }
    assert!(operations > paths.len(), "{operations} operations");
}

#[tokio::test]
async fn me_shows_the_workspace_against_its_quota() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let r = app.get("/api/me", &alice).await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert_eq!(r.body["username"], "alice");
    assert_eq!(
        r.body["workspace"]["quota_bytes"],
        ars_sandbox::SandboxLimits::default().workspace_quota_bytes
    );
    assert!(r.body["workspace"]["used_bytes"].is_u64(), "{:?}", r.body);
}
