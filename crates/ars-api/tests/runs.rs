//! Runs over HTTP with scripted models: start → wait → persisted history; one active run per
//! thread; waiting with a timeout; cancelling; owner-only access; input checks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// One tool-call turn writing `a.txt`, then a final answer quoting the tool's result.
fn write_then_answer() -> Value {
    json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}]},
        {"text": "done {{last_tool_result}}"}
    ])
}

/// A single turn that keeps the run busy for `ms` before answering.
fn slow(ms: u64) -> Value {
    json!([{"text": "finally", "delay_ms": ms}])
}

#[tokio::test]
async fn run_end_to_end_answers_202_then_succeeds_with_output_usage_and_persisted_messages() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "writer", write_then_answer())
        .await;
    let thread = app.thread(&alice, "writer").await;

    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": "write a file"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let run = &r.body["run"];
    // A slot was free: the run is created running, started as it was created.
    assert_eq!(run["status"], "running");
    assert_eq!(run["started_at"], run["created_at"]);
    assert_eq!(run["thread_id"], thread.as_str());
    assert_eq!(run["user_id"], alice_id.as_str());
    assert_eq!(run["input"], "write a file");
    let run_id = run["id"].as_str().unwrap();

    let done = app.wait(&alice, run_id, 30).await;
    assert_eq!(done["wait_timed_out"], false);
    let run = &done["run"];
    assert_eq!(run["status"], "success", "{run}");
    let output = run["output"].as_str().unwrap();
    assert!(output.starts_with("done "), "{output}");
    assert!(run["usage"]["prompt_tokens"].as_u64().unwrap() > 0, "{run}");
    assert!(
        run["usage"]["completion_tokens"].as_u64().unwrap() > 0,
        "{run}"
    );
    assert!(run["finished_at"].is_string());
    let mut detail = app.get(&format!("/api/runs/{run_id}"), &alice).await.body;
    assert_eq!(
        detail["total_usage"], run["usage"],
        "no subagents: the total is the run's own"
    );
    detail.as_object_mut().unwrap().remove("total_usage");
    assert_eq!(detail, *run);

    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &alice)
        .await
        .body;
    let roles: Vec<_> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant"],
        "{messages}"
    );
    let seqs: Vec<_> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    assert_eq!(messages[0]["content"], "write a file");
    let call = &messages[1]["tool_calls"][0];
    assert_eq!(call["name"], "write_file");
    assert_eq!(
        serde_json::from_str::<Value>(call["arguments"].as_str().unwrap()).unwrap(),
        json!({"path": "a.txt", "content": "hi"})
    );
    assert_eq!(messages[2]["tool_name"], "write_file");
    assert_eq!(messages[2]["tool_call_id"], call["id"]);
    assert_eq!(messages[3]["content"], output);
    assert!(
        messages
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["run_id"] == run_id)
    );

    let runs = app
        .get(&format!("/api/threads/{thread}/runs"), &alice)
        .await;
    assert_eq!(runs.body.as_array().unwrap().len(), 1);
    // The thread takes the next run once this one is done.
    let second = app.start_run(&alice, &thread, "again").await;
    assert_eq!(
        app.wait(&alice, &second, 30).await["run"]["status"],
        "success"
    );
}

#[tokio::test]
async fn a_second_run_on_a_busy_thread_is_a_409_naming_the_active_run() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "slow", slow(10_000)).await;
    let thread = app.thread(&alice, "slow").await;
    let first = app.start_run(&alice, &thread, "one").await;

    let r = app
        .post(
            &format!("/api/threads/{thread}/runs"),
            &alice,
            json!({"input": "two"}),
        )
        .await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::CONFLICT, Some("busy")),
        "{}",
        r.body
    );
    assert_eq!(r.body["error"]["active_run_id"], first.as_str());
    let r = app.delete(&format!("/api/threads/{thread}"), &alice).await;
    assert_eq!((r.status, r.code()), (StatusCode::CONFLICT, Some("busy")));
    assert_eq!(r.body["error"]["active_run_id"], first.as_str());

    let runs = app
        .get(&format!("/api/threads/{thread}/runs"), &alice)
        .await
        .body;
    assert_eq!(
        runs.as_array().unwrap().len(),
        1,
        "nothing was queued: {runs}"
    );
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &alice)
        .await
        .body;
    assert_eq!(
        messages.as_array().unwrap().len(),
        1,
        "only the first input: {messages}"
    );

    app.post(&format!("/api/runs/{first}/cancel"), &alice, json!({}))
        .await;
    assert_eq!(
        app.delete(&format!("/api/threads/{thread}"), &alice)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    // Other errors never carry the field.
    let r = app.get(&format!("/api/threads/{thread}"), &alice).await;
    assert!(r.body["error"].get("active_run_id").is_none(), "{}", r.body);
}

#[tokio::test]
async fn wait_with_a_timeout_answers_the_snapshot_with_wait_timed_out() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "slow", slow(10_000)).await;
    let thread = app.thread(&alice, "slow").await;
    let run = app.start_run(&alice, &thread, "take your time").await;

    let started = Instant::now();
    let r = app.wait(&alice, &run, 1).await;
    let waited = started.elapsed();
    assert_eq!(r["wait_timed_out"], true, "{r}");
    assert!(
        ["pending", "running"].contains(&r["run"]["status"].as_str().unwrap()),
        "{r}"
    );
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );

    let r = app
        .get(&format!("/api/runs/{run}/wait?timeout_s=0"), &alice)
        .await;
    assert_eq!(
        (r.status, r.body["wait_timed_out"].as_bool()),
        (StatusCode::OK, Some(true))
    );
    let r = app
        .get(&format!("/api/runs/{run}/wait?timeout_s=601"), &alice)
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("timeout_s"))
    );
    for query in ["timeout_s=soon", "timeout_s=-1", "timeout=5"] {
        let r = app
            .get(&format!("/api/runs/{run}/wait?{query}"), &alice)
            .await;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::BAD_REQUEST, Some("bad_request")),
            "{query}"
        );
    }
    app.post(&format!("/api/runs/{run}/cancel"), &alice, json!({}))
        .await;
}

#[tokio::test]
async fn cancelling_a_running_run_ends_it_cancelled_within_a_second() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "chatty",
        json!([{"text": "word ".repeat(200), "chunk_delay_ms": 50}]),
    )
    .await;
    let thread = app.thread(&alice, "chatty").await;
    let run = app.start_run(&alice, &thread, "talk").await;
    // Let it get going.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let started = Instant::now();
    let r = app
        .post(&format!("/api/runs/{run}/cancel"), &alice, json!({}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        (r.status, r.body["status"].as_str()),
        (StatusCode::OK, Some("cancelled")),
        "{}",
        r.body
    );
    assert!(r.body["finished_at"].is_string());
    let done = app.wait(&alice, &run, 1).await;
    assert_eq!(
        (
            done["run"]["status"].as_str(),
            done["wait_timed_out"].as_bool()
        ),
        (Some("cancelled"), Some(false))
    );

    // Cancelling again answers the same run; the thread is free for a new one.
    let again = app
        .post(&format!("/api/runs/{run}/cancel"), &alice, json!({}))
        .await;
    assert_eq!(again.body["status"], "cancelled");
    let next = app.start_run(&alice, &thread, "again").await;
    app.post(&format!("/api/runs/{next}/cancel"), &alice, json!({}))
        .await;
}

#[tokio::test]
async fn another_users_run_is_a_404() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.scripted_agent(&alice, "slow", slow(10_000)).await;
    let thread = app.thread(&alice, "slow").await;
    let run = app.start_run(&alice, &thread, "mine").await;

    for token in [&bob, &app.admin] {
        for path in [
            format!("/api/runs/{run}"),
            format!("/api/runs/{run}/wait?timeout_s=0"),
            format!("/api/runs/{run}/events"),
        ] {
            let r = app.get(&path, token).await;
            assert_eq!(
                (r.status, r.code()),
                (StatusCode::NOT_FOUND, Some("not_found")),
                "{path}"
            );
        }
        let r = app
            .post(&format!("/api/runs/{run}/cancel"), token, json!({}))
            .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
    }
    let r = app.get(&format!("/api/runs/{run}"), &alice).await;
    assert!(
        !r.body["status"].as_str().unwrap().contains("cancelled"),
        "bob's cancel did nothing"
    );
    for bad in ["not-a-uuid", "00000000-0000-0000-0000-000000000000"] {
        assert_eq!(
            app.get(&format!("/api/runs/{bad}"), &alice).await.status,
            StatusCode::NOT_FOUND
        );
    }
    app.post(&format!("/api/runs/{run}/cancel"), &alice, json!({}))
        .await;
}

#[tokio::test]
async fn run_inputs_are_checked_and_bad_ones_start_nothing() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "echo", json!([{"text": "ok"}]))
        .await;
    let thread = app.thread(&alice, "echo").await;
    let path = format!("/api/threads/{thread}/runs");

    let cases = [
        (json!({"input": ""}), Some("input")),
        (json!({"input": " \n "}), Some("input")),
        (json!({"input": "x".repeat(100_001)}), Some("input")),
        (json!({"input": 42}), Some("input")),
        (json!({}), Some("input")),
        (json!({"input": "hi", "model": "gpt"}), Some("model")),
    ];
    for (body, field) in cases {
        let r = app.post(&path, &alice, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, field),
            "{}",
            r.body
        );
    }
    let r = app
        .raw(
            Method::POST,
            &path,
            &alice,
            "application/json",
            b"{\"input\": ".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = app
        .raw(Method::POST, &path, &alice, "text/plain", b"hi".to_vec())
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let huge = serde_json::to_vec(&json!({"input": "x".repeat(2 * 1024 * 1024)})).unwrap();
    let r = app
        .raw(Method::POST, &path, &alice, "application/json", huge)
        .await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    let r = app
        .call(Method::POST, &path, None, Some(json!({"input": "hi"})))
        .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    for path in [
        "/api/runs/x",
        "/api/runs/x/wait",
        "/api/runs/x/events",
        "/api/models",
        "/api/tools",
    ] {
        assert_eq!(
            app.call(Method::GET, path, None, None).await.status,
            StatusCode::UNAUTHORIZED,
            "{path}"
        );
    }
    assert_eq!(
        app.get(&path, &alice).await.body,
        json!([]),
        "no run was started"
    );

    // The largest input is accepted.
    let run = app.start_run(&alice, &thread, &"é".repeat(100_000)).await;
    assert_eq!(app.wait(&alice, &run, 30).await["run"]["status"], "success");
}

#[tokio::test]
async fn an_agent_with_an_active_run_cannot_be_deleted_until_it_ends() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let agent = app.scripted_agent(&alice, "slow", slow(1500)).await;
    let thread = app.thread(&alice, "slow").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let path = format!("/api/agent/{}", agent["id"].as_str().unwrap());

    let r = app.delete(&path, &alice).await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(r.body["error"]["active_run_id"], run.as_str());
    // Nothing went: the thread and the run are still there, and the run ends normally.
    assert_eq!(
        app.get(&format!("/api/threads/{thread}"), &alice)
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(app.wait(&alice, &run, 10).await["run"]["status"], "success");

    assert_eq!(
        app.delete(&path, &alice).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        app.get(&format!("/api/threads/{thread}"), &alice)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_tool_call_cut_off_with_its_run_is_served_as_interrupted_and_a_live_one_is_not() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "stuck",
        json!([{"tool_calls": [{"name": "execute", "arguments": {"command": "sleep 30"}}]},
               {"text": "never"}]),
    )
    .await;
    let thread = app.thread(&alice, "stuck").await;
    let run = app.start_run(&alice, &thread, "go").await;
    let messages = format!("/api/threads/{thread}/messages");
    let call = |body: &Value| {
        body.as_array()
            .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
            .map(|m| m["tool_calls"][0].clone())
    };
    let mut live = None;
    for _ in 0..100 {
        live = call(&app.get(&messages, &alice).await.body);
        if live.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let live = live.expect("the tool call is committed while it runs");
    assert!(live.get("interrupted").is_none(), "a running call: {live}");

    app.post(&format!("/api/runs/{run}/cancel"), &alice, json!({}))
        .await;
    let after = call(&app.get(&messages, &alice).await.body).unwrap();
    assert_eq!(after["interrupted"], true, "{after}");
    assert_eq!(after["name"], "execute");
}
