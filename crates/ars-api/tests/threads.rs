//! Threads: create, list, read, rename, delete; owner-only access; agent checks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TestApp, normal, subagent};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn thread_crud_lists_newest_first_and_renames_and_deletes() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let agent = app.agent(&alice, normal("helper")).await;

    let r = app
        .post(
            "/api/threads",
            &alice,
            json!({"agent_id": agent["id"], "title": "  First  "}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["title"], "First");
    assert_eq!(r.body["agent_id"], agent["id"]);
    assert_eq!(r.body["parent_thread_id"], serde_json::Value::Null);
    let first = r.body["id"].as_str().unwrap().to_string();

    // By slug, without a title.
    let r = app
        .post("/api/threads", &alice, json!({"agent_id": "helper"}))
        .await;
    assert_eq!(r.status, StatusCode::CREATED);
    assert_eq!(r.body["title"], "New thread");
    let second = r.body["id"].as_str().unwrap().to_string();

    let list = app.get("/api/threads", &alice).await;
    let ids: Vec<_> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![second.as_str(), first.as_str()], "newest first");

    let r = app
        .patch(
            &format!("/api/threads/{first}"),
            &alice,
            json!({"title": "Renamed"}),
        )
        .await;
    assert_eq!(
        (r.status, r.body["title"].as_str()),
        (StatusCode::OK, Some("Renamed"))
    );
    assert_eq!(
        app.get(&format!("/api/threads/{first}"), &alice).await.body["title"],
        "Renamed"
    );
    let r = app
        .get(&format!("/api/threads/{first}/messages"), &alice)
        .await;
    assert_eq!((r.status, r.body.clone()), (StatusCode::OK, json!([])));

    let r = app.delete(&format!("/api/threads/{first}"), &alice).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("/api/threads/{first}"), &alice)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.delete(&format!("/api/threads/{first}"), &alice)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn another_users_thread_is_a_404_even_for_admins() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    let mut agent = normal("shared");
    agent["share_config"] = json!({"visibility": "public"});
    app.agent(&alice, agent).await;
    let thread = app.thread(&alice, "shared").await;

    for token in [&bob, &app.admin] {
        let path = format!("/api/threads/{thread}");
        assert_eq!(app.get(&path, token).await.status, StatusCode::NOT_FOUND);
        assert_eq!(
            app.get(&format!("{path}/messages"), token).await.status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            app.get(&format!("{path}/runs"), token).await.status,
            StatusCode::NOT_FOUND
        );
        let r = app.patch(&path, token, json!({"title": "mine now"})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        let r = app
            .post(&format!("{path}/runs"), token, json!({"input": "hi"}))
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        assert_eq!(app.delete(&path, token).await.status, StatusCode::NOT_FOUND);
        let list = app.get("/api/threads", token).await;
        assert_eq!(
            list.body,
            json!([]),
            "only the caller's own threads are listed"
        );
    }
    assert_eq!(
        app.get(&format!("/api/threads/{thread}"), &alice)
            .await
            .status,
        StatusCode::OK
    );
    // Malformed ids are just as absent.
    for bad in ["..", "a%20b", &"x".repeat(600)] {
        assert_eq!(
            app.get(&format!("/api/threads/{bad}"), &alice).await.status,
            StatusCode::NOT_FOUND
        );
    }
}

#[tokio::test]
async fn threads_need_a_visible_normal_agent() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(&bob, normal("bobs-private")).await;
    app.agent(&alice, subagent("researcher")).await;

    let cases = [
        json!({"agent_id": "bobs-private"}),
        json!({"agent_id": "no-such-agent"}),
        json!({"agent_id": "researcher"}),
        json!({"agent_id": "general-purpose"}),
    ];
    for body in cases {
        let r = app.post("/api/threads", &alice, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::CONFLICT, Some("agent_id")),
            "{body}: {}",
            r.body
        );
    }
    let hidden = app
        .post("/api/threads", &alice, json!({"agent_id": "bobs-private"}))
        .await;
    let missing = app
        .post("/api/threads", &alice, json!({"agent_id": "no-such-agent"}))
        .await;
    assert_eq!(
        hidden.body["error"]["message"]
            .as_str()
            .unwrap()
            .replace("bobs-private", "X"),
        missing.body["error"]["message"]
            .as_str()
            .unwrap()
            .replace("no-such-agent", "X"),
        "an invisible agent reads exactly like a missing one"
    );
    assert_eq!(
        app.get("/api/threads", &alice).await.body,
        json!([]),
        "nothing was written"
    );
}

#[tokio::test]
async fn thread_inputs_are_checked() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.agent(&alice, normal("helper")).await;
    let thread = app.thread(&alice, "helper").await;
    let path = format!("/api/threads/{thread}");

    let cases = [
        (json!({"agent_id": "helper", "title": " "}), "title"),
        (
            json!({"agent_id": "helper", "title": "t".repeat(201)}),
            "title",
        ),
        (json!({"agent_id": "helper", "colour": "red"}), "colour"),
        (json!({"agent_id": 5}), "agent_id"),
        (json!({}), "agent_id"),
    ];
    for (body, field) in cases {
        let r = app.post("/api/threads", &alice, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{body}: {}",
            r.body
        );
    }
    for (body, field) in [
        (json!({"title": ""}), "title"),
        (json!({"title": "x", "pinned": true}), "pinned"),
    ] {
        let r = app.patch(&path, &alice, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{body}: {}",
            r.body
        );
    }
    let r = app
        .raw(
            reqwest::Method::POST,
            "/api/threads",
            &alice,
            "application/json",
            b"{\"agent_id\":".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = app
        .raw(
            reqwest::Method::POST,
            "/api/threads",
            &alice,
            "text/plain",
            b"hello".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let r = app
        .call(reqwest::Method::GET, "/api/threads", None, None)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let r = app
        .call(
            reqwest::Method::POST,
            "/api/threads",
            Some("ars_not-a-token"),
            Some(json!({"agent_id": "helper"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}
