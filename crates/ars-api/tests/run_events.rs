//! `GET /api/runs/{id}/events`: the SSE wire shape, replay and live delivery, `Last-Event-ID`
//! resume without gaps or duplicates, and 410 once the events have expired or were evicted
//! over the bus's memory budget.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Setup, SseMessage, TestApp, parse_sse};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn write_then_answer() -> Value {
    json!([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.md", "content": "hi"}}]},
        {"text": "all done now", "chunk_delay_ms": 5}
    ])
}

fn ids(messages: &[SseMessage]) -> Vec<u64> {
    messages.iter().map(|m| m.id.unwrap()).collect()
}

/// Starts a run of `script` for a new user and returns (app, token, run id).
async fn run_of(app: &TestApp, script: Value) -> (String, String) {
    let (_, token) = app.user("alice").await;
    app.scripted_agent(&token, "agent", script).await;
    let thread = app.thread(&token, "agent").await;
    let run = app.start_run(&token, &thread, "go").await;
    (token, run)
}

#[tokio::test]
async fn sse_streams_the_whole_run_in_order_and_ends_after_the_terminal_run_status() {
    let app = TestApp::spawn().await;
    let (token, run) = run_of(&app, write_then_answer()).await;
    let (status, events) = app.events(&token, &run, None).await;
    assert_eq!(status, StatusCode::OK);

    assert_eq!(
        ids(&events),
        (1..=events.len() as u64).collect::<Vec<_>>(),
        "ids are 1, 2, 3, …"
    );
    for event in &events {
        assert_eq!(
            event.data["type"],
            event.event.as_str(),
            "event: is the type tag"
        );
        assert_eq!(event.data["id"], event.id.unwrap(), "id: is the event id");
        assert_eq!(event.data["run_id"], run.as_str());
    }
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(names.first(), Some(&"run_status"));
    // Created with a free slot: it starts running, and says so once.
    assert_eq!(events[0].data["status"], "running");
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event == "run_status" && e.data["status"] == "running")
            .count(),
        1
    );
    for expected in [
        "tool_call_started",
        "tool_call_finished",
        "message_delta",
        "message_completed",
        "usage",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let started = events
        .iter()
        .find(|e| e.event == "tool_call_started")
        .unwrap();
    assert_eq!(started.data["name"], "write_file");
    let last = events.last().unwrap();
    assert_eq!(
        (last.event.as_str(), last.data["status"].as_str()),
        ("run_status", Some("success"))
    );
    assert_eq!(last.data["output"], "all done now");
    let text: String = events
        .iter()
        .filter(|e| e.event == "message_delta")
        .map(|e| e.data["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "all done now");
}

#[tokio::test]
async fn sse_delivers_live_events_before_the_run_ends() {
    let app = TestApp::spawn().await;
    let (token, run) = run_of(&app, json!([{"text": "slow words here", "delay_ms": 1500}])).await;
    let mut res = app
        .client
        .get(format!("{}/api/runs/{run}/events", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let first = tokio::time::timeout(Duration::from_secs(1), res.chunk())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let first = parse_sse(&String::from_utf8_lossy(&first));
    assert_eq!(
        first[0].event, "run_status",
        "the first event arrives while the run waits"
    );
    let run_now = app.get(&format!("/api/runs/{run}"), &token).await.body;
    assert!(!run_now["finished_at"].is_string(), "{run_now}");
    let mut rest = String::new();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(10), res.chunk())
        .await
        .unwrap()
        .unwrap()
    {
        rest.push_str(&String::from_utf8_lossy(&chunk));
    }
    let rest = parse_sse(&rest);
    assert_eq!(rest.last().unwrap().data["status"], "success");
}

#[tokio::test]
async fn sse_resumes_after_last_event_id_without_gap_or_duplicate() {
    let app = TestApp::spawn().await;
    let (token, run) = run_of(&app, write_then_answer()).await;
    let (_, all) = app.events(&token, &run, None).await;
    assert!(all.len() > 6, "{all:?}");

    for cut in [1, all.len() as u64 / 2, all.len() as u64 - 1] {
        let (status, tail) = app.events(&token, &run, Some(cut)).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            ids(&tail),
            ((cut + 1)..=all.len() as u64).collect::<Vec<_>>(),
            "after {cut}"
        );
        let expected: Vec<&Value> = all[cut as usize..].iter().map(|m| &m.data).collect();
        let got: Vec<&Value> = tail.iter().map(|m| &m.data).collect();
        assert_eq!(got, expected);
    }
    // `?after=` does the same for clients that cannot set headers.
    let r = app
        .client
        .get(format!("{}/api/runs/{run}/events?after=3", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(ids(&parse_sse(&r.text().await.unwrap()))[0], 4);
    // At or past the terminal event: an empty stream that ends at once.
    let (status, none) = app.events(&token, &run, Some(all.len() as u64)).await;
    assert_eq!((status, none.len()), (StatusCode::OK, 0));
}

#[tokio::test]
async fn sse_late_subscriber_after_the_run_finished_gets_everything() {
    let app = TestApp::spawn().await;
    let (token, run) = run_of(&app, write_then_answer()).await;
    assert_eq!(app.wait(&token, &run, 30).await["run"]["status"], "success");
    let (_, late) = app.events(&token, &run, None).await;
    assert_eq!(ids(&late), (1..=late.len() as u64).collect::<Vec<_>>());
    assert_eq!(late[0].data["status"], "running");
    assert_eq!(late.last().unwrap().data["status"], "success");
    let (_, again) = app.events(&token, &run, None).await;
    assert_eq!(late.len(), again.len(), "replay is repeatable");
}

#[tokio::test]
async fn sse_is_a_410_once_the_events_expired() {
    let app = TestApp::spawn_setup(Setup {
        event_retention: Duration::from_millis(100),
        ..Setup::default()
    })
    .await;
    let (token, run) = run_of(&app, json!([{"text": "quick"}])).await;
    assert_eq!(app.wait(&token, &run, 30).await["run"]["status"], "success");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = app.get(&format!("/api/runs/{run}/events"), &token).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::GONE, Some("gone")),
        "{}",
        r.body
    );
    // The run and its messages are still there to read instead.
    assert_eq!(
        app.get(&format!("/api/runs/{run}"), &token).await.body["status"],
        "success"
    );
}

#[tokio::test]
async fn sse_is_a_410_once_the_run_was_evicted_over_the_memory_budget_but_a_live_reader_finishes() {
    // One byte: every run is evicted the moment it finishes, long before its retention.
    let app = TestApp::spawn_setup(Setup {
        event_memory_budget: Some(1),
        ..Setup::default()
    })
    .await;
    let (token, run) = run_of(&app, json!([{"text": "slow words here", "delay_ms": 500}])).await;
    let mut live = app
        .client
        .get(format!("{}/api/runs/{run}/events", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        live.status(),
        StatusCode::OK,
        "an active run is never evicted"
    );
    let mut text = String::new();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(10), live.chunk())
        .await
        .unwrap()
        .unwrap()
    {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let read = parse_sse(&text);
    assert_eq!(ids(&read), (1..=read.len() as u64).collect::<Vec<_>>());
    assert_eq!(read.last().unwrap().data["status"], "success");

    let r = app.get(&format!("/api/runs/{run}/events"), &token).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::GONE, Some("gone")),
        "{}",
        r.body
    );
    assert_eq!(
        app.get(&format!("/api/runs/{run}"), &token).await.body["status"],
        "success"
    );
}

#[tokio::test]
async fn sse_refuses_an_unreadable_last_event_id() {
    let app = TestApp::spawn().await;
    let (token, run) = run_of(&app, json!([{"text": "quick"}])).await;
    let r = app
        .client
        .get(format!("{}/api/runs/{run}/events", app.base))
        .bearer_auth(&token)
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "bad_request");
    for query in ["after=-1", "after=x", "since=3"] {
        let r = app
            .get(&format!("/api/runs/{run}/events?{query}"), &token)
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}");
    }
}
