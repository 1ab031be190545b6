//! Administration over HTTP: reading and changing accounts (admins only), disabling them (their
//! tokens refused at once), password resets and changes, and token expiry and use. Each test
//! runs on SQLite, and on PostgreSQL when `ARS_TEST_DATABASE_URL` is set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ars_api::accounts;
use common::{ADMIN_PASSWORD, Setup, TestApp, USER_PASSWORD};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Runs each test once per store, each time on a fresh server.
macro_rules! on_every_store {
    ($($test:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(super::TestApp::spawn_setup(super::Setup::default()).await).await;
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test]
                async fn $test() {
                    let Some(url) = super::common::pg_url() else {
                        return;
                    };
                    let setup = super::Setup {
                        postgres: Some(url),
                        ..super::Setup::default()
                    };
                    super::$test(super::TestApp::spawn_setup(setup).await).await;
                }
            )*
        }
    };
}

on_every_store!(
    only_admins_read_whole_accounts_and_change_them,
    admins_cannot_demote_or_disable_themselves,
    admins_demoting_each_other_at_once_leave_an_admin,
    a_disabled_users_tokens_stop_working_at_once_and_login_is_refused,
    an_admins_password_reset_revokes_the_users_sessions,
    changing_ones_own_password_keeps_only_this_session,
    expired_tokens_are_refused_and_the_list_shows_expiry_and_use,
    account_changes_refuse_malformed_bodies,
);

const NEW_PASSWORD: &str = "a-brand-new-password";

async fn login_status(app: &TestApp, username: &str, password: &str) -> (StatusCode, Value) {
    let reply = app
        .call(
            Method::POST,
            "/api/auth/login",
            None,
            Some(json!({"username": username, "password": password})),
        )
        .await;
    (reply.status, reply.body)
}

async fn only_admins_read_whole_accounts_and_change_them(app: TestApp) {
    let (bob_id, bob) = app.user("bob").await;
    let (carol_id, _) = app.user("carol").await;

    // A user sees their own account whole, others by id and username only.
    let own = app.get(&format!("/api/users/{bob_id}"), &bob).await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.body);
    assert_eq!(own.body["role"], "user");
    assert_eq!(own.body["disabled"], false);
    let other = app.get(&format!("/api/users/{carol_id}"), &bob).await;
    assert_eq!(other.body["username"], "carol");
    assert!(other.body.get("role").is_none() && other.body.get("disabled").is_none());
    let listed = app.get("/api/users", &bob).await.body;
    assert!(listed[0].get("disabled").is_none());
    // Admins see everything, disabled included.
    let full = app.get(&format!("/api/users/{carol_id}"), &app.admin).await;
    assert_eq!(full.body["disabled"], false);
    let listed = app.get("/api/users", &app.admin).await.body;
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["disabled"] == false)
    );
    for id in ["not-a-uuid", "00000000-0000-7000-8000-00000000dead"] {
        let missing = app.get(&format!("/api/users/{id}"), &app.admin).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND, "{id}");
    }

    // Only admins change accounts; a non-admin learns nothing about which ids exist.
    let targets = [
        carol_id.clone(),
        "00000000-0000-7000-8000-00000000dead".into(),
    ];
    for target in &targets {
        let patch = app
            .patch(
                &format!("/api/users/{target}"),
                &bob,
                json!({"role": "admin"}),
            )
            .await;
        assert_eq!(patch.status, StatusCode::FORBIDDEN, "{}", patch.body);
        let reset = app
            .post(
                &format!("/api/users/{target}/password"),
                &bob,
                json!({"new_password": NEW_PASSWORD}),
            )
            .await;
        assert_eq!(reset.status, StatusCode::FORBIDDEN, "{}", reset.body);
    }
    let created = app
        .post(
            "/api/users",
            &bob,
            json!({"username": "mallory", "password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(created.status, StatusCode::FORBIDDEN);
    assert_eq!(
        app.get(&format!("/api/users/{carol_id}"), &app.admin)
            .await
            .body["role"],
        "user"
    );

    // An admin promotes, and the change shows.
    let promoted = app
        .patch(
            &format!("/api/users/{carol_id}"),
            &app.admin,
            json!({"role": "admin"}),
        )
        .await;
    assert_eq!(promoted.status, StatusCode::OK, "{}", promoted.body);
    assert_eq!(promoted.body["role"], "admin");
    assert_eq!(promoted.body["disabled"], false);
    let nothing = app
        .patch(&format!("/api/users/{carol_id}"), &app.admin, json!({}))
        .await;
    assert_eq!(nothing.status, StatusCode::OK);
    assert_eq!(nothing.body["role"], "admin");
    let unknown = app
        .patch(
            "/api/users/00000000-0000-7000-8000-00000000dead",
            &app.admin,
            json!({"disabled": true}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let reset_unknown = app
        .post(
            "/api/users/nope/password",
            &app.admin,
            json!({"new_password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(reset_unknown.status, StatusCode::NOT_FOUND);
}

async fn admins_cannot_demote_or_disable_themselves(app: TestApp) {
    let me = app.get("/api/me", &app.admin).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Another admin exists, so it is the rule about oneself that refuses, not the last admin.
    let (ops_id, _) = app.user("ops").await;
    app.patch(
        &format!("/api/users/{ops_id}"),
        &app.admin,
        json!({"role": "admin"}),
    )
    .await;
    for (body, field) in [
        (json!({"role": "user"}), "role"),
        (json!({"disabled": true}), "disabled"),
        (json!({"role": "user", "disabled": true}), "role"),
    ] {
        let reply = app
            .patch(&format!("/api/users/{me}"), &app.admin, body.clone())
            .await;
        assert_eq!(reply.status, StatusCode::CONFLICT, "{body}: {}", reply.body);
        assert_eq!(reply.code(), Some("conflict"));
        assert_eq!(reply.field(), Some(field), "{body}");
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("another admin"), "{message}");
    }
    let still = app.get("/api/me", &app.admin).await;
    assert_eq!(still.body["role"], "admin");
    assert_eq!(still.body["disabled"], false);
    // What changes nothing is fine.
    let same = app
        .patch(
            &format!("/api/users/{me}"),
            &app.admin,
            json!({"role": "admin", "disabled": false}),
        )
        .await;
    assert_eq!(same.status, StatusCode::OK, "{}", same.body);
}

async fn admins_demoting_each_other_at_once_leave_an_admin(app: TestApp) {
    let me = app.get("/api/me", &app.admin).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (ops_id, ops) = app.user("ops").await;
    app.patch(
        &format!("/api/users/{ops_id}"),
        &app.admin,
        json!({"role": "admin"}),
    )
    .await;
    let demote = json!({"role": "user"});
    let (ops_path, my_path) = (format!("/api/users/{ops_id}"), format!("/api/users/{me}"));
    let (a, b) = tokio::join!(
        app.patch(&ops_path, &app.admin, demote.clone()),
        app.patch(&my_path, &ops, demote.clone()),
    );
    let statuses = [a.status, b.status];
    assert!(
        statuses.contains(&StatusCode::OK)
            && statuses
                .iter()
                .any(|s| matches!(*s, StatusCode::CONFLICT | StatusCode::FORBIDDEN)),
        "{statuses:?}: {} / {}",
        a.body,
        b.body
    );
    let users = app.get("/api/users", &app.admin).await.body;
    let active_admins = users
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|u| u["role"] == "admin" && u["disabled"] == false)
                .count()
        })
        .unwrap_or_default();
    // Read by whichever admin is left.
    let left = if active_admins == 0 {
        let users = app.get("/api/users", &ops).await.body;
        users
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["role"] == "admin" && u["disabled"] == false)
            .count()
    } else {
        active_admins
    };
    assert_eq!(left, 1);
}

async fn a_disabled_users_tokens_stop_working_at_once_and_login_is_refused(app: TestApp) {
    let (bob_id, bob) = app.user("bob").await;
    let (session_status, session) = login_status(&app, "bob", USER_PASSWORD).await;
    assert_eq!(session_status, StatusCode::OK);
    let session = session["token"].as_str().unwrap().to_owned();
    assert_eq!(app.get("/api/me", &bob).await.status, StatusCode::OK);

    let disabled = app
        .patch(
            &format!("/api/users/{bob_id}"),
            &app.admin,
            json!({"disabled": true}),
        )
        .await;
    assert_eq!(disabled.status, StatusCode::OK, "{}", disabled.body);
    assert_eq!(disabled.body["disabled"], true);

    // The very next request with either token is refused, saying why.
    for token in [&bob, &session] {
        for path in ["/api/me", "/api/threads", "/api/tokens"] {
            let reply = app.get(path, token).await;
            assert_eq!(
                reply.status,
                StatusCode::FORBIDDEN,
                "{path}: {}",
                reply.body
            );
            assert_eq!(reply.code(), Some("account_disabled"));
        }
    }
    let (status, body) = login_status(&app, "bob", USER_PASSWORD).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "account_disabled");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disabled")
    );
    // A wrong password learns nothing about the account.
    let (status, _) = login_status(&app, "bob", "not-the-password").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let listed = app.get("/api/users", &app.admin).await.body;
    let bob_entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "bob")
        .unwrap()
        .clone();
    assert_eq!(bob_entry["disabled"], true);

    // Enabling the account again restores its tokens (they were refused, not revoked).
    let enabled = app
        .patch(
            &format!("/api/users/{bob_id}"),
            &app.admin,
            json!({"disabled": false}),
        )
        .await;
    assert_eq!(enabled.body["disabled"], false);
    assert_eq!(app.get("/api/me", &bob).await.status, StatusCode::OK);
    assert_eq!(app.get("/api/me", &session).await.status, StatusCode::OK);
    assert_eq!(
        login_status(&app, "bob", USER_PASSWORD).await.0,
        StatusCode::OK
    );
}

async fn an_admins_password_reset_revokes_the_users_sessions(app: TestApp) {
    let (bob_id, bob) = app.user("bob").await;
    let session = app.login("bob", USER_PASSWORD).await;
    let reset = format!("/api/users/{bob_id}/password");

    let short = app
        .post(&reset, &app.admin, json!({"new_password": "short"}))
        .await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(short.field(), Some("new_password"));
    assert_eq!(app.get("/api/me", &bob).await.status, StatusCode::OK);

    let done = app
        .post(&reset, &app.admin, json!({"new_password": NEW_PASSWORD}))
        .await;
    assert_eq!(done.status, StatusCode::NO_CONTENT, "{}", done.body);
    for token in [&bob, &session] {
        assert_eq!(
            app.get("/api/me", token).await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        login_status(&app, "bob", USER_PASSWORD).await.0,
        StatusCode::UNAUTHORIZED
    );
    app.login("bob", NEW_PASSWORD).await;
    // The admin's own session is untouched.
    assert_eq!(app.get("/api/me", &app.admin).await.status, StatusCode::OK);

    // An admin resetting their own password keeps the session that did it, and only it.
    let me = app.get("/api/me", &app.admin).await.body["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other_session = app.login("admin", ADMIN_PASSWORD).await;
    let own = app
        .post(
            &format!("/api/users/{me}/password"),
            &app.admin,
            json!({"new_password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(own.status, StatusCode::NO_CONTENT);
    assert_eq!(app.get("/api/me", &app.admin).await.status, StatusCode::OK);
    assert_eq!(
        app.get("/api/me", &other_session).await.status,
        StatusCode::UNAUTHORIZED
    );
}

async fn changing_ones_own_password_keeps_only_this_session(app: TestApp) {
    let (_, bob) = app.user("bob").await;
    let session = app.login("bob", USER_PASSWORD).await;
    let change = |current: &str, new: &str| {
        app.put(
            "/api/me/password",
            &session,
            json!({"current_password": current, "new_password": new}),
        )
    };

    // The new password's rules come first, whatever the current one.
    let short = change("wrong", "short").await;
    assert_eq!(
        short.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        short.body
    );
    assert_eq!(short.field(), Some("new_password"));
    let wrong = change("not-my-password", NEW_PASSWORD).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN, "{}", wrong.body);
    assert_eq!(wrong.field(), Some("current_password"));
    assert_eq!(app.get("/api/me", &bob).await.status, StatusCode::OK);

    let done = change(USER_PASSWORD, NEW_PASSWORD).await;
    assert_eq!(done.status, StatusCode::NO_CONTENT, "{}", done.body);
    assert_eq!(app.get("/api/me", &session).await.status, StatusCode::OK);
    assert_eq!(
        app.get("/api/me", &bob).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        login_status(&app, "bob", USER_PASSWORD).await.0,
        StatusCode::UNAUTHORIZED
    );
    app.login("bob", NEW_PASSWORD).await;

    // Guessing the current password is throttled like logging in.
    let mut statuses = Vec::new();
    for _ in 0..7 {
        statuses.push(
            change("guess-guess-guess", "another-new-password")
                .await
                .status,
        );
    }
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    let missing = app
        .put(
            "/api/me/password",
            &session,
            json!({"new_password": NEW_PASSWORD}),
        )
        .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(missing.field(), Some("current_password"));
    let anonymous = app
        .call(
            Method::PUT,
            "/api/me/password",
            None,
            Some(json!({"current_password": NEW_PASSWORD, "new_password": NEW_PASSWORD})),
        )
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

async fn expired_tokens_are_refused_and_the_list_shows_expiry_and_use(app: TestApp) {
    let (bob_id, bob) = app.user("bob").await;
    let user = app
        .store
        .user(ars_domain::UserId::parse(&bob_id).unwrap())
        .await
        .unwrap()
        .unwrap();
    let past = ars_domain::time::now() - chrono::Duration::seconds(1);
    let (expired, _) = accounts::create_token(&*app.store, &user, "old", Some(past))
        .await
        .unwrap();
    let reply = app.get("/api/me", &expired).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply.code(), Some("unauthorized"));

    let created = app
        .post(
            "/api/tokens",
            &bob,
            json!({"name": "ci", "expires_in_days": 1}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let secret = created.body["token"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("ars_"));
    let expires: chrono::DateTime<chrono::Utc> = created.body["info"]["expires_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let in_a_day = ars_domain::time::now() + chrono::Duration::days(1);
    assert!((in_a_day - expires).num_seconds().abs() < 60, "{expires}");
    assert!(created.body["info"]["last_used_at"].is_null());

    assert_eq!(app.get("/api/me", &secret).await.status, StatusCode::OK);
    let listed = app.get("/api/tokens", &bob).await.body;
    let ci = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ci")
        .unwrap()
        .clone();
    // The list shows metadata only: never the secret again.
    assert!(ci.get("token").is_none() && !ci.to_string().contains(&secret));
    assert!(ci["created_at"].is_string() && ci["expires_at"].is_string());
    assert!(ci["last_used_at"].is_string(), "{ci}");
    let old = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "old")
        .unwrap()
        .clone();
    assert!(
        old["last_used_at"].is_null(),
        "an expired token was never used"
    );

    for days in [0, 3651] {
        let reply = app
            .post(
                "/api/tokens",
                &bob,
                json!({"name": "x", "expires_in_days": days}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{days}");
        assert_eq!(reply.field(), Some("expires_in_days"));
    }
}

async fn account_changes_refuse_malformed_bodies(app: TestApp) {
    let (bob_id, _) = app.user("bob").await;
    let path = format!("/api/users/{bob_id}");
    for (body, field) in [
        (json!({"role": "root"}), Some("role")),
        (json!({"disabled": "yes"}), Some("disabled")),
        (json!({"bogus": 1}), Some("bogus")),
        (json!([]), None),
    ] {
        let reply = app.patch(&path, &app.admin, body.clone()).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(reply.field(), field, "{body}");
    }
    let malformed = app
        .raw(
            Method::PATCH,
            &path,
            &app.admin,
            "application/json",
            b"{".to_vec(),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    let not_json = app
        .raw(
            Method::PATCH,
            &path,
            &app.admin,
            "text/plain",
            b"{}".to_vec(),
        )
        .await;
    assert_eq!(not_json.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let huge = app
        .raw(
            Method::POST,
            &format!("{path}/password"),
            &app.admin,
            "application/json",
            format!("{{\"new_password\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)).into_bytes(),
        )
        .await;
    assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE);
    let long = app
        .post(
            &format!("{path}/password"),
            &app.admin,
            json!({"new_password": "x".repeat(1025)}),
        )
        .await;
    assert_eq!(long.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(long.field(), Some("new_password"));
    // Nothing of it changed the account.
    let bob = app.get(&path, &app.admin).await.body;
    assert_eq!(
        (bob["role"].clone(), bob["disabled"].clone()),
        (json!("user"), json!(false))
    );
}
