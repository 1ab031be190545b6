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

#[tokio::test]
async fn searching_finds_text_in_your_messages_and_answers_and_nobody_elses() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    for (token, slug) in [(&alice, "echo-a"), (&bob, "echo-b")] {
        app.scripted_agent(token, slug, json!([{"text": "答：{{input}}"}]))
            .await;
    }
    let agent = "echo-a";
    let thread = app.thread(&alice, agent).await;
    let run = app
        .start_run(&alice, &thread, "请把产品手册翻译成英文 (100% done_ok)")
        .await;
    app.wait(&alice, &run, 10).await;
    let other = app.thread(&alice, agent).await;
    let run = app
        .start_run(&alice, &other, "Quarterly REPORT draft")
        .await;
    app.wait(&alice, &run, 10).await;
    let bobs = app.thread(&bob, "echo-b").await;
    let run = app.start_run(&bob, &bobs, "产品手册 of bob").await;
    app.wait(&bob, &run, 10).await;

    let search = |token: &str, q: &str| {
        let path = format!("/api/threads/search?q={}", urlencode(q));
        let token = token.to_string();
        let app = &app;
        async move { app.get(&path, &token).await }
    };
    // Chinese text, in the user's message and in the agent's answer; newest first.
    let found = search(&alice, "产品手册").await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    let hits = found.body.as_array().unwrap();
    assert_eq!(hits.len(), 2, "{}", found.body);
    assert_eq!(hits[0]["role"], "assistant");
    assert_eq!(hits[1]["role"], "user");
    assert!(hits.iter().all(|h| h["thread_id"] == thread.as_str()));
    assert!(hits[0]["snippet"].as_str().unwrap().contains("产品手册"));
    assert!(hits[0]["thread_title"].is_string());
    // ASCII case is ignored; `%` and `_` are plain characters.
    assert_eq!(
        search(&alice, "quarterly report")
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        search(&alice, "100%").await.body.as_array().unwrap().len(),
        2
    );
    assert_eq!(
        search(&alice, "1_0").await.body.as_array().unwrap().len(),
        0
    );
    assert_eq!(
        search(&alice, "done_ok")
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Bob finds his own only.
    let bobs_hits = search(&bob, "产品手册").await.body;
    assert_eq!(bobs_hits.as_array().unwrap().len(), 2, "{bobs_hits}");
    assert!(
        bobs_hits
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["thread_id"] == bobs.as_str())
    );
    // A limit; bad queries refused.
    let one = app
        .get("/api/threads/search?q=%E4%BA%A7%E5%93%81&limit=1", &alice)
        .await;
    assert_eq!(one.body.as_array().unwrap().len(), 1);
    for (path, status) in [
        (
            "/api/threads/search?q=%20%20",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/api/threads/search?q=x&limit=0",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            "/api/threads/search?q=x&limit=101",
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        ("/api/threads/search", StatusCode::BAD_REQUEST),
        ("/api/threads/search?q=x&page=2", StatusCode::BAD_REQUEST),
    ] {
        let reply = app.get(path, &alice).await;
        assert_eq!(reply.status, status, "{path}: {}", reply.body);
    }
    let long = format!("/api/threads/search?q={}", "x".repeat(201));
    assert_eq!(
        app.get(&long, &alice).await.status,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    let anonymous = app
        .call(reqwest::Method::GET, "/api/threads/search?q=x", None, None)
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
}

/// `q` for a query string.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The ids of a list of threads or messages' `key` field.
fn field_of(list: &serde_json::Value, key: &str) -> Vec<serde_json::Value> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|item| item[key].clone())
        .collect()
}

#[tokio::test]
async fn threads_list_in_pages_after_the_last_threads_updated_at_and_id() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(&alice, normal("helper")).await;
    app.agent(&bob, normal("bobs")).await;
    for _ in 0..5 {
        app.thread(&alice, "helper").await;
    }
    app.thread(&bob, "bobs").await;
    let all = app.get("/api/threads", &alice).await.body;
    assert_eq!(all.as_array().unwrap().len(), 5);

    let mut walked = Vec::new();
    let mut path = "/api/threads?limit=2".to_string();
    loop {
        let page = app.get(&path, &alice).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let items = page.body.as_array().unwrap().clone();
        assert!(items.len() <= 2);
        let Some(last) = items.last() else { break };
        path = format!(
            "/api/threads?limit=2&before_updated_at={}&before_id={}",
            last["updated_at"].as_str().unwrap().replace('+', "%2B"),
            last["id"].as_str().unwrap()
        );
        walked.extend(items);
    }
    assert_eq!(
        field_of(&serde_json::Value::Array(walked), "id"),
        field_of(&all, "id"),
        "the pages, in order, are the whole list"
    );

    let ids = field_of(&all, "id");
    let stamp = |i: usize| all[i]["updated_at"].as_str().unwrap().replace('+', "%2B");
    let id = |i: usize| all[i]["id"].as_str().unwrap().to_string();
    let (app, alice) = (&app, &alice);
    let listed = |path: String| async move {
        let r = app.get(&path, alice).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
        field_of(&r.body, "id")
    };
    // A cursor without a limit is a page of 100; `before_id` alone is the page after that
    // thread as it stands now; `before_updated_at` alone, the threads updated before it.
    assert_eq!(
        listed(format!(
            "/api/threads?before_updated_at={}&before_id={}",
            stamp(0),
            id(0)
        ))
        .await,
        ids[1..]
    );
    assert_eq!(
        listed(format!("/api/threads?before_id={}", id(1))).await,
        ids[2..]
    );
    assert_eq!(
        listed(format!(
            "/api/threads?limit=1&before_updated_at={}",
            stamp(2)
        ))
        .await,
        ids[3..4]
    );
    assert_eq!(listed("/api/threads?limit=2".to_string()).await, ids[..2]);

    for (query, field) in [
        ("limit=0".to_string(), "limit"),
        ("limit=501".to_string(), "limit"),
        ("limit=5&before_id=a%2Fb".to_string(), "before_id"),
    ] {
        let r = app.get(&format!("/api/threads?{query}"), alice).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{query}: {}",
            r.body
        );
    }
    // Another user's thread, or none, is no cursor of yours.
    let bobs = app.get("/api/threads", &bob).await.body;
    for other in [bobs[0]["id"].as_str().unwrap(), "no-such-thread"] {
        let r = app
            .get(&format!("/api/threads?before_id={other}"), alice)
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{other}: {}", r.body);
    }
    for query in ["limit=two", "before_updated_at=yesterday&limit=2", "page=2"] {
        let r = app.get(&format!("/api/threads?{query}"), alice).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.body);
    }
}

#[tokio::test]
async fn a_threads_messages_page_back_from_its_end_and_a_call_answered_on_a_later_page_is_not_interrupted()
 {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "caller",
        json!([
            {"tool_calls": [{"name": "no_such_tool", "arguments": {}}]},
            {"text": "done"}
        ]),
    )
    .await;
    let thread = app.thread(&alice, "caller").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let waited = app.wait(&alice, &run, 30).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    let path = format!("/api/threads/{thread}/messages");
    let all = app.get(&path, &alice).await.body;
    assert_eq!(field_of(&all, "seq"), [1, 2, 3, 4].map(|s| json!(s)));

    let last = app.get(&format!("{path}?limit=2"), &alice).await.body;
    assert_eq!(
        field_of(&last, "seq"),
        [json!(3), json!(4)],
        "the end, in order"
    );
    // The call (seq 2) has its result on the page after (seq 3): not interrupted.
    let before = app
        .get(&format!("{path}?limit=2&before_seq=3"), &alice)
        .await
        .body;
    assert_eq!(field_of(&before, "seq"), [json!(1), json!(2)]);
    let call = &before[1]["tool_calls"][0];
    assert_eq!(call["name"], "no_such_tool", "{before}");
    assert!(call.get("interrupted").is_none(), "{call}");
    assert_eq!(
        app.get(&format!("{path}?before_seq=3"), &alice).await.body,
        before,
        "a page before a seq is 100 messages unless limit says"
    );
    assert_eq!(
        app.get(&format!("{path}?limit=2&before_seq=1"), &alice)
            .await
            .body,
        json!([])
    );

    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("before_seq=0", "before_seq"),
        ("before_seq=-5&limit=2", "before_seq"),
    ] {
        let r = app.get(&format!("{path}?{query}"), &alice).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{query}: {}",
            r.body
        );
        assert_eq!(r.body["error"]["reason"], "out_of_range", "{}", r.body);
    }
    for query in ["limit=many", "before_seq=1.5", "after_seq=2"] {
        let r = app.get(&format!("{path}?{query}"), &alice).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}: {}", r.body);
    }
    let (_, bob) = app.user("bob").await;
    let r = app.get(&format!("{path}?limit=2"), &bob).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn absurd_page_parameters_are_refused_or_read_as_the_range_allows() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.agent(&alice, normal("helper")).await;
    let thread = app.thread(&alice, "helper").await;
    let long_id = "a".repeat(10_000);
    // Unreadable (not a number, past 64 bits, not a time): 400. Out of the stated range: 422.
    let cases: Vec<(String, StatusCode)> = vec![
        (
            "/api/threads?limit=4294967296".into(),
            StatusCode::BAD_REQUEST,
        ),
        ("/api/threads?limit=-1".into(), StatusCode::BAD_REQUEST),
        ("/api/threads?limit=1e3".into(), StatusCode::BAD_REQUEST),
        (
            "/api/threads?limit=5&before_updated_at=%2B999999999-01-01T00:00:00Z".into(),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!(
                "/api/threads?limit=5&before_updated_at=2026-01-01T00:00:00Z&before_id={long_id}"
            ),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            format!("/api/threads/{thread}/messages?before_seq=99999999999999999999"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/api/threads/{thread}/messages?limit=18446744073709551616"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/api/threads/{thread}/messages?before_seq=-9223372036854775808"),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
    ];
    for (path, status) in cases {
        let r = app.get(&path, &alice).await;
        assert_eq!(
            r.status,
            status,
            "{}: {}",
            &path[..path.len().min(120)],
            r.body
        );
    }
    // The extremes the ranges allow read as pages: nothing before the first second of year 1,
    // everything before the last seq there can be.
    let r = app
        .get(
            "/api/threads?limit=500&before_updated_at=0001-01-01T00:00:00Z",
            &alice,
        )
        .await;
    assert_eq!((r.status, r.body.clone()), (StatusCode::OK, json!([])));
    let r = app
        .get(
            &format!("/api/threads/{thread}/messages?limit=1000&before_seq=9223372036854775807"),
            &alice,
        )
        .await;
    assert_eq!((r.status, r.body.clone()), (StatusCode::OK, json!([])));
    let r = app
        .get(
            "/api/threads?limit=500&before_updated_at=9999-12-31T23:59:59Z",
            &alice,
        )
        .await;
    assert_eq!(r.body.as_array().map(Vec::len), Some(1), "{}", r.body);
}
