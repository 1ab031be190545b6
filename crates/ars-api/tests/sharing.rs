//! The sharing matrix: owner, admin, manager, listed user, stranger × private/users/public ×
//! read/update/delete, and the 404-not-403 rule for what a caller cannot see.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TestApp, normal};
use reqwest::StatusCode;
use serde_json::json;

#[derive(Clone, Copy, Debug)]
enum Who {
    Owner,
    Admin,
    Manager,
    Listed,
    Stranger,
}

/// Expected (read, update, delete) statuses for `who` on an agent of `visibility`.
fn expected(who: Who, visibility: &str) -> (StatusCode, StatusCode, StatusCode) {
    use StatusCode as S;
    let manages = (S::OK, S::OK, S::NO_CONTENT);
    let reads_only = (S::OK, S::FORBIDDEN, S::FORBIDDEN);
    let hidden = (S::NOT_FOUND, S::NOT_FOUND, S::NOT_FOUND);
    match (who, visibility) {
        (Who::Owner | Who::Admin | Who::Manager, _) => manages,
        (Who::Listed, "users" | "public") => reads_only,
        (Who::Stranger, "public") => reads_only,
        _ => hidden,
    }
}

#[tokio::test]
async fn sharing_matrix_for_read_update_and_delete() {
    let app = TestApp::spawn().await;
    let (_, owner) = app.user("owner").await;
    let (manager_id, manager) = app.user("manager").await;
    let (listed_id, listed) = app.user("listed").await;
    let (_, stranger) = app.user("stranger").await;
    let token = |who: Who| match who {
        Who::Owner => owner.clone(),
        Who::Admin => app.admin.clone(),
        Who::Manager => manager.clone(),
        Who::Listed => listed.clone(),
        Who::Stranger => stranger.clone(),
    };

    for visibility in ["private", "users", "public"] {
        for who in [
            Who::Owner,
            Who::Admin,
            Who::Manager,
            Who::Listed,
            Who::Stranger,
        ] {
            let slug = format!("{visibility}-{who:?}").to_lowercase();
            let mut body = normal(&slug);
            body["share_config"] = json!({"visibility": visibility, "user_ids": [listed_id], "manager_ids": [manager_id]});
            let agent = app.agent(&owner, body).await;
            let path = format!("/api/agent/{}", agent["id"].as_str().unwrap());
            let (read, update, delete) = expected(who, visibility);
            let t = token(who);

            let r = app.get(&path, &t).await;
            assert_eq!(
                r.status, read,
                "{who:?} reading a {visibility} agent: {}",
                r.body
            );
            let listed_slugs = app.slugs(&t, "").await;
            assert_eq!(
                listed_slugs.contains(&slug),
                read == StatusCode::OK,
                "{who:?} listing a {visibility} agent"
            );
            let r = app
                .patch(&path, &t, json!({"description": "changed"}))
                .await;
            assert_eq!(
                r.status, update,
                "{who:?} updating a {visibility} agent: {}",
                r.body
            );
            let r = app.delete(&path, &t).await;
            assert_eq!(
                r.status, delete,
                "{who:?} deleting a {visibility} agent: {}",
                r.body
            );
            let still_there = app.get(&path, &app.admin).await.status == StatusCode::OK;
            assert_eq!(still_there, delete != StatusCode::NO_CONTENT);
        }
    }
}

#[tokio::test]
async fn share_config_refuses_unknown_keys_unknown_users_and_bad_visibility() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let mut body = normal("s");
    body["share_config"] = json!({"visibility": "users", "readers": []});
    let r = app.post("/api/agent", t, body).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), Some("share_config.readers"));

    let mut body = normal("s");
    body["share_config"] =
        json!({"visibility": "users", "user_ids": ["00000000-0000-7000-8000-00000000abcd"]});
    let r = app.post("/api/agent", t, body).await;
    // Well-formed, but no such user is stored: a conflict, not a schema violation.
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("share_config.user_ids"))
    );

    let mut body = normal("s");
    body["share_config"] = json!({"manager_ids": ["not-a-uuid"]});
    let r = app.post("/api/agent", t, body).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.field(), Some("share_config.manager_ids[0]"));

    let mut body = normal("s");
    body["share_config"] = json!({"visibility": "everyone"});
    let r = app.post("/api/agent", t, body).await;
    assert_eq!(
        (r.status, r.field()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("share_config.visibility")
        )
    );
    assert_eq!(
        app.get("/api/agent/s", t).await.status,
        StatusCode::NOT_FOUND,
        "nothing was written"
    );
}

#[tokio::test]
async fn another_users_private_subagent_is_invisible() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(&alice, common::subagent("secret")).await;
    assert!(
        !app.slugs(&bob, "?include_subagents=true")
            .await
            .contains(&"secret".to_string())
    );
    assert_eq!(
        app.get("/api/agent/secret", &bob).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get("/api/agent/secret/resolved-context", &bob)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}
