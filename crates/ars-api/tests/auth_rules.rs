//! Auth hardening over real HTTP: login throttling, password rules, what non-admins see of
//! users and model providers, and the `Authorization` scheme.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use common::{ADMIN_PASSWORD, Reply, Setup, TestApp, USER_PASSWORD};
use reqwest::{Method, StatusCode};
use serde_json::json;

use ars_api::{ApiConfig, Clock, LoginThrottleConfig};
use ars_models::{ModelsConfig, ProviderConfig};

/// A server whose login throttle allows `free` failures, backs off from 1 s up to 8 s, and
/// reads a clock the test moves.
async fn throttled(free: u32) -> (TestApp, Clock) {
    let clock = Clock::manual();
    let app = TestApp::spawn_with(ApiConfig {
        login_throttle: LoginThrottleConfig {
            free_failures: free,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(8),
            max_entries: 100,
            clock: clock.clone(),
        },
        ..ApiConfig::default()
    })
    .await;
    (app, clock)
}

/// A login from a given loopback address (all of 127.0.0.0/8 reaches the server).
async fn login_from(app: &TestApp, from: Ipv4Addr, username: &str, password: &str) -> Reply {
    let client = reqwest::Client::builder()
        .local_address(IpAddr::V4(from))
        .build()
        .unwrap();
    let res = client
        .post(format!("{}/api/auth/login", app.base))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.json().await.unwrap_or(serde_json::Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

const HOME: Ipv4Addr = Ipv4Addr::LOCALHOST;

fn retry_after(reply: &Reply) -> Option<u64> {
    reply
        .headers
        .get("retry-after")?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

#[tokio::test]
async fn login_is_throttled_after_repeated_failures_then_recovers() {
    let (app, clock) = throttled(3).await;
    for _ in 0..3 {
        let r = login_from(&app, HOME, "admin", "wrong-password").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
    // Locked out: even the right password is refused, without being checked.
    let r = login_from(&app, HOME, "admin", ADMIN_PASSWORD).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::TOO_MANY_REQUESTS, Some("too_many_requests"))
    );
    assert_eq!(retry_after(&r), Some(1));

    // Each further failure doubles the wait.
    clock.advance(Duration::from_secs(1));
    let r = login_from(&app, HOME, "admin", "wrong-password").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = login_from(&app, HOME, "admin", ADMIN_PASSWORD).await;
    assert_eq!(
        (r.status, retry_after(&r)),
        (StatusCode::TOO_MANY_REQUESTS, Some(2))
    );
    clock.advance(Duration::from_millis(1500));
    let r = login_from(&app, HOME, "admin", ADMIN_PASSWORD).await;
    assert_eq!(
        (r.status, retry_after(&r)),
        (StatusCode::TOO_MANY_REQUESTS, Some(1)),
        "Retry-After rounds up"
    );

    // After the back-off the right password works, and the next login is not held up.
    clock.advance(Duration::from_millis(500));
    let r = login_from(&app, HOME, "admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = login_from(&app, HOME, "admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn login_failures_count_per_username_across_addresses() {
    let (app, clock) = throttled(2).await;
    for last in [2, 3] {
        let r = login_from(&app, Ipv4Addr::new(127, 0, 0, last), "admin", "nope-nope").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
    let r = login_from(&app, Ipv4Addr::new(127, 0, 0, 4), "admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
    // Another account from the same addresses is not affected.
    app.user("alice").await;
    let r = login_from(&app, Ipv4Addr::new(127, 0, 0, 4), "alice", USER_PASSWORD).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    clock.advance(Duration::from_secs(1));
    let r = login_from(&app, Ipv4Addr::new(127, 0, 0, 4), "admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

#[tokio::test]
async fn login_failures_count_per_client_address_across_usernames() {
    let (app, _clock) = throttled(3).await;
    let sprayer = Ipv4Addr::new(127, 0, 0, 9);
    for name in ["alice", "bob", "nobody"] {
        let r = login_from(&app, sprayer, name, "password-guess").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
    let r = login_from(&app, sprayer, "admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(retry_after(&r).is_some());
    let r = login_from(&app, HOME, "admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, StatusCode::OK, "other addresses log in as usual");
}

#[tokio::test]
async fn new_password_shorter_than_minimum_is_rejected() {
    let app = TestApp::spawn().await;
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "carol", "password": "elevenchars"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("password"))
    );
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("12-1024"),
        "{}",
        r.body
    );
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "carol", "password": "twelve-chars"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);

    // The minimum is configurable (the test admin's password has 14 characters).
    let mut config = ApiConfig::default();
    config.password_policy.min_chars = 14;
    let app = TestApp::spawn_with(config).await;
    let r = app
        .post(
            "/api/users",
            &app.admin,
            json!({"username": "dave", "password": "thirteen-char"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("password"))
    );
}

#[tokio::test]
async fn served_openapi_states_the_configured_password_minimum() {
    let mut config = ApiConfig::default();
    config.password_policy.min_chars = 14;
    let app = TestApp::spawn_with(config).await;
    let doc = app
        .call(Method::GET, "/api/openapi.json", None, None)
        .await
        .body;
    let password = &doc["components"]["schemas"]["CreateUserRequest"]["properties"]["password"];
    assert_eq!(password["minLength"], 14, "{password}");
    assert_eq!(password["maxLength"], 1024);
}

#[tokio::test]
async fn non_admin_user_list_shows_only_id_and_username() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    let r = app.get("/api/users", &alice).await;
    assert_eq!(r.status, StatusCode::OK);
    for entry in r.body.as_array().unwrap() {
        let mut keys: Vec<&str> = entry
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, ["id", "username"], "{entry}");
    }
    assert!(
        r.body
            .as_array()
            .unwrap()
            .contains(&json!({"id": alice_id, "username": "alice"}))
    );

    let r = app.get("/api/users", &app.admin).await;
    let admin = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "admin")
        .unwrap();
    assert_eq!(admin["role"], "admin", "admins keep the full view");
    assert!(admin["created_at"].is_string());
}

#[tokio::test]
async fn non_admin_model_catalog_hides_provider_base_urls() {
    let app = TestApp::spawn_setup(Setup {
        models: ModelsConfig {
            providers: vec![ProviderConfig::openai_compatible(
                "local",
                "http://10.1.2.3:11434/v1",
            )],
            ..ModelsConfig::default()
        },
        ..Setup::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    let local = |body: &serde_json::Value| {
        body["providers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "local")
            .cloned()
            .unwrap()
    };
    let r = app.get("/api/models", &alice).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(local(&r.body).get("base_url").is_none(), "{}", r.body);
    assert!(!r.body.to_string().contains("10.1.2.3"));
    let r = app.get("/api/models", &app.admin).await;
    assert_eq!(local(&r.body)["base_url"], "http://10.1.2.3:11434/v1");
}

#[tokio::test]
async fn bearer_scheme_is_case_insensitive() {
    let app = TestApp::spawn().await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let r = app
            .client
            .get(format!("{}/api/me", app.base))
            .header("authorization", format!("{scheme} {}", app.admin))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{scheme}");
    }
    let r = app
        .client
        .get(format!("{}/api/me", app.base))
        .header("authorization", format!("Basic {}", app.admin))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = app.call(Method::GET, "/api/me", None, None).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}
