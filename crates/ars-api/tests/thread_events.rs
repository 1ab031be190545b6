//! `GET /api/threads/{id}/events`: a snapshot first, then every change of the thread's
//! subagent runs, runs and completion notices as whole entries; owner only; open while idle,
//! closed on shutdown; across instances over Redis.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::stream::LiveSse;
use common::{Setup, SseMessage, TestApp};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Long enough for any scripted run here.
const PROMPT: Duration = Duration::from_secs(15);

/// Creates a subagent with a scripted model (and optional tools) for `token`.
async fn scripted_sub(app: &TestApp, token: &str, slug: &str, script: Value, tools: &[&str]) {
    let mut context = json!({"model": {"provider": "scripted", "name": "demo", "script": script}});
    if !tools.is_empty() {
        context["tools"] = json!(tools);
    }
    app.agent(
        token,
        json!({"slug": slug, "name": format!("Sub {slug}"), "description": "helps",
               "backend_id": "SubAgentBackend", "config_json": {"context": context}}),
    )
    .await;
}

fn start_call(slug: &str, description: &str) -> Value {
    json!({"name": "subagent_start", "arguments": {"description": description, "subagent_slug": slug}})
}

fn task_call(slug: &str, description: &str) -> Value {
    json!({"name": "task", "arguments": {"description": description, "subagent_slug": slug}})
}

/// A user with a thread on a parent agent playing `script`: (token, thread id).
async fn parent_thread(app: &TestApp, user: &str, script: Value) -> (String, String) {
    let (_, token) = app.user(user).await;
    app.scripted_agent(&token, "parent", script).await;
    let thread = app.thread(&token, "parent").await;
    (token, thread)
}

async fn open(app: &TestApp, token: &str, thread: &str) -> LiveSse {
    LiveSse::open(app, &format!("/api/threads/{thread}/events"), Some(token))
        .await
        .unwrap_or_else(|(status, body)| panic!("{status}: {body}"))
}

/// The statuses of the `event` messages about run `run_id`, repeats folded.
fn statuses(messages: &[SseMessage], event: &str, run_id: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for m in messages.iter().filter(|m| m.event == event) {
        let id = m.data.get("run_id").or_else(|| m.data.get("id")).unwrap();
        if id == run_id {
            let status = m.data["status"].as_str().unwrap().to_string();
            if seen.last() != Some(&status) {
                seen.push(status);
            }
        }
    }
    seen
}

fn is_terminal(status: &Value) -> bool {
    !matches!(status.as_str(), Some("pending" | "running"))
}

/// A parent that starts `broken` in the background and answers at once; `broken` fails
/// after a moment, when the parent's run has ended.
async fn background_failure(app: &TestApp) -> (String, String) {
    let (token, thread) = parent_thread(
        app,
        "alice",
        json!([{"tool_calls": [start_call("broken", "dig   into\nthe logs")]}, {"text": "started"}]),
    )
    .await;
    scripted_sub(
        app,
        &token,
        "broken",
        json!([{"error": "the upstream API refused the key", "delay_ms": 400}]),
        &[],
    )
    .await;
    (token, thread)
}

#[tokio::test]
async fn the_first_message_is_a_snapshot_of_the_subagent_list_and_the_active_run() {
    let app = TestApp::spawn().await;
    let (token, thread) = parent_thread(
        &app,
        "alice",
        json!([{"tool_calls": [task_call("slow", "take a while")]}, {"text": "done"}]),
    )
    .await;
    scripted_sub(
        &app,
        &token,
        "slow",
        json!([{"text": "late", "delay_ms": 1500}]),
        &[],
    )
    .await;
    let run = app.start_run(&token, &thread, "go").await;
    // Until the child is running.
    let list = loop {
        let list = app
            .get(&format!("/api/threads/{thread}/subagents"), &token)
            .await;
        if list.body[0]["status"] == "running" {
            break list.body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    let mut stream = open(&app, &token, &thread).await;
    let first = stream.next(PROMPT).await;
    assert_eq!(first.event, "snapshot");
    assert_eq!(first.id, None, "nothing to resume: no event ids");
    assert_eq!(first.data["thread_id"], thread.as_str());
    assert_eq!(
        first.data["subagents"], list,
        "the same entries as the list"
    );
    let entry = &first.data["subagents"][0];
    for field in [
        "run_id",
        "subagent_slug",
        "description",
        "thread_id",
        "status",
        "parent_run_id",
        "parent_tool_call_id",
        "created_at",
        "started_at",
        "finished_at",
        "usage",
        "total_usage",
        "output",
        "error",
    ] {
        assert!(entry.get(field).is_some(), "{field} in {entry}");
    }
    assert_eq!(first.data["active_run"]["id"], run.as_str());
    assert_eq!(first.data["active_run"]["status"], "running");
    assert!(first.data["active_run"]["total_usage"].is_object());

    // And the child's end follows live.
    let rest = stream
        .until(PROMPT, |m| {
            m.event == "run" && is_terminal(&m.data["status"])
        })
        .await;
    let child = entry["run_id"].as_str().unwrap();
    assert_eq!(
        statuses(&rest, "subagent", child)
            .last()
            .map(String::as_str),
        Some("success")
    );
    assert_eq!(statuses(&rest, "run", &run), ["success"]);
}

#[tokio::test]
async fn a_background_childs_start_status_changes_and_end_arrive_as_subagent_entries_with_the_reason_it_failed()
 {
    let app = TestApp::spawn().await;
    let (token, thread) = background_failure(&app).await;
    let mut stream = open(&app, &token, &thread).await;
    let snapshot = stream.next(PROMPT).await;
    assert_eq!(
        (snapshot.event.as_str(), &snapshot.data["subagents"]),
        ("snapshot", &json!([]))
    );
    let run = app.start_run(&token, &thread, "go").await;
    let seen = stream
        .until(PROMPT, |m| {
            m.event == "subagent" && is_terminal(&m.data["status"])
        })
        .await;

    let child = seen.iter().find(|m| m.event == "subagent").unwrap().data["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(statuses(&seen, "subagent", &child), ["running", "error"]);
    assert_eq!(statuses(&seen, "run", &run), ["running", "success"]);
    let end = &seen.last().unwrap().data;
    assert!(
        end["error"]
            .as_str()
            .unwrap()
            .contains("the upstream API refused the key"),
        "{end}"
    );
    // The stable code beside the words, for the UI to translate.
    assert_eq!(end["error_code"], "model_error", "{end}");
    assert_eq!(end["subagent_slug"], "broken");
    assert_eq!(end["description"], "dig   into\nthe logs");
    assert_eq!(end["parent_run_id"], run.as_str());
    assert!(end["finished_at"].is_string());
    // Whole entries: the last one is what the list now says.
    let list = app
        .get(&format!("/api/threads/{thread}/subagents"), &token)
        .await;
    assert_eq!(&list.body[0], end);
}

#[tokio::test]
async fn a_completion_notice_arrives_live_with_the_child_in_structured_fields_and_no_ids_in_its_text()
 {
    let app = TestApp::spawn().await;
    let (token, thread) = background_failure(&app).await;
    let mut stream = open(&app, &token, &thread).await;
    stream.next(PROMPT).await;
    app.start_run(&token, &thread, "go").await;
    let seen = stream.until(PROMPT, |m| m.event == "notice").await;
    let notice = &seen.last().unwrap().data;

    let child = &notice["subagent"];
    assert_eq!(child["status"], "error");
    assert_eq!(child["subagent_slug"], "broken");
    let (child_run, child_thread) = (
        child["run_id"].as_str().unwrap(),
        child["thread_id"].as_str().unwrap(),
    );
    let message = &notice["message"];
    assert_eq!(message["role"], "system");
    assert_eq!(message["thread_id"], thread.as_str());
    assert_eq!(
        message["notice"],
        json!({"run_id": child_run, "thread_id": child_thread,
               "subagent_slug": "broken", "status": "error"})
    );
    let text = message["content"].as_str().unwrap();
    assert!(
        text.starts_with("Background subagent `broken` failed (task: “dig into the logs”): "),
        "{text}"
    );
    assert!(text.contains("the upstream API refused the key"), "{text}");
    assert!(
        !text.contains(child_run) && !text.contains(child_thread),
        "{text}"
    );
    // The message as the thread's history has it, id included.
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &token)
        .await;
    let stored = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system")
        .unwrap();
    assert_eq!(stored, message);
    // The child's end came first.
    assert_eq!(
        statuses(&seen, "subagent", child_run)
            .last()
            .map(String::as_str),
        Some("error")
    );
}

#[tokio::test]
async fn a_subagent_with_no_model_fails_with_its_reason_in_its_entry_its_run_its_last_event_and_the_parents_call()
 {
    // The built-in general-purpose subagent with no model configured anywhere.
    let app = TestApp::spawn().await;
    let (token, thread) = parent_thread(
        &app,
        "alice",
        json!([{"tool_calls": [start_call("general-purpose", "summarise the notes")]}, {"text": "ok"}]),
    )
    .await;
    let mut stream = open(&app, &token, &thread).await;
    stream.next(PROMPT).await;
    let run = app.start_run(&token, &thread, "go").await;
    let seen = stream
        .until(PROMPT, |m| {
            m.event == "run" && is_terminal(&m.data["status"])
        })
        .await;
    let reason = "no model configured for `general-purpose`";

    let entry = &seen
        .iter()
        .rfind(|m| m.event == "subagent")
        .expect("the child's entries")
        .data;
    assert_eq!(entry["status"], "error");
    assert!(
        entry["error"].as_str().unwrap().starts_with(reason),
        "{entry}"
    );
    let child = entry["run_id"].as_str().unwrap();
    let list = app
        .get(&format!("/api/threads/{thread}/subagents"), &token)
        .await;
    assert_eq!(&list.body[0], entry);
    let child_run = app.get(&format!("/api/runs/{child}"), &token).await;
    assert_eq!(child_run.body["status"], "error");
    assert_eq!(child_run.body["error"], entry["error"]);
    let (_, events) = app.events(&token, child, None).await;
    let last = events.last().unwrap();
    assert_eq!(
        (last.event.as_str(), &last.data["error"]),
        ("run_status", &entry["error"])
    );
    // The parent's call failed and says why, in words.
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &token)
        .await;
    let call = messages
        .body
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(call["is_error"], true, "{call}");
    let result: Value = serde_json::from_str(call["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["status"], "error");
    assert_eq!(result["error"], entry["error"]);
    assert_eq!(result["run_id"], child);
    let parent = app.get(&format!("/api/runs/{run}"), &token).await;
    assert_eq!(parent.body["status"], "success", "the parent carried on");
}

#[tokio::test]
async fn a_childs_tokens_arrive_while_it_runs_at_a_bounded_rate() {
    let app = TestApp::spawn().await;
    let turn = json!({"tool_calls": [{"name": "ls", "arguments": {}}], "delay_ms": 60,
                      "usage": {"prompt_tokens": 10, "completion_tokens": 1}});
    let mut script = vec![turn; 15];
    script.push(json!({"text": "done", "usage": {"prompt_tokens": 10, "completion_tokens": 1}}));
    let (token, thread) = parent_thread(
        &app,
        "alice",
        json!([{"tool_calls": [task_call("busy", "count")]}, {"text": "ok"}]),
    )
    .await;
    scripted_sub(&app, &token, "busy", json!(script), &["ls"]).await;
    let mut stream = open(&app, &token, &thread).await;
    stream.next(PROMPT).await;
    app.start_run(&token, &thread, "go").await;
    let seen = stream
        .until(PROMPT, |m| {
            m.event == "subagent" && is_terminal(&m.data["status"])
        })
        .await;
    let entries: Vec<&Value> = seen
        .iter()
        .filter(|m| m.event == "subagent")
        .map(|m| &m.data)
        .collect();
    let running: Vec<u64> = entries
        .iter()
        .filter(|e| e["status"] == "running")
        .map(|e| e["usage"]["prompt_tokens"].as_u64().unwrap())
        .collect();
    // 16 turns in about a second: tokens told as they grow, but not once per turn.
    assert!(running.iter().any(|&t| t > 0), "{running:?}");
    assert!(running.windows(2).all(|w| w[0] <= w[1]), "{running:?}");
    assert!(running.len() <= 6, "at most a few a second: {running:?}");
    let end = entries.last().unwrap();
    assert_eq!(end["usage"]["prompt_tokens"], 160);
    assert_eq!(end["total_usage"], end["usage"]);
}

#[tokio::test]
async fn a_run_started_on_the_thread_arrives_as_run_entries_until_its_end() {
    let app = TestApp::spawn().await;
    let (token, thread) = parent_thread(&app, "alice", json!([{"text": "hello"}])).await;
    let mut stream = open(&app, &token, &thread).await;
    stream.next(PROMPT).await;
    // Started from elsewhere (another tab): this one follows.
    let run = app.start_run(&token, &thread, "go").await;
    let seen = stream
        .until(PROMPT, |m| {
            m.event == "run" && is_terminal(&m.data["status"])
        })
        .await;
    assert_eq!(statuses(&seen, "run", &run), ["running", "success"]);
    let end = &seen.last().unwrap().data;
    let stored = app.get(&format!("/api/runs/{run}"), &token).await;
    assert_eq!(end, &stored.body, "the same shape as GET /api/runs/{{id}}");
    assert_eq!(end["output"], "hello");
}

#[tokio::test]
async fn a_reconnecting_client_gets_a_fresh_snapshot_with_what_it_missed() {
    let app = TestApp::spawn().await;
    let (token, thread) = parent_thread(
        &app,
        "alice",
        json!([{"tool_calls": [task_call("helper", "help")]}, {"text": "done"}]),
    )
    .await;
    scripted_sub(&app, &token, "helper", json!([{"text": "helped"}]), &[]).await;
    let mut stream = open(&app, &token, &thread).await;
    assert_eq!(stream.next(PROMPT).await.data["subagents"], json!([]));
    drop(stream);

    let run = app.start_run(&token, &thread, "go").await;
    app.wait(&token, &run, 10).await;
    let mut again = open(&app, &token, &thread).await;
    let snapshot = again.next(PROMPT).await;
    assert_eq!(snapshot.event, "snapshot");
    let list = app
        .get(&format!("/api/threads/{thread}/subagents"), &token)
        .await;
    assert_eq!(snapshot.data["subagents"], list.body);
    assert_eq!(snapshot.data["subagents"][0]["status"], "success");
    assert_eq!(snapshot.data["active_run"], Value::Null);
}

#[tokio::test]
async fn another_users_thread_is_not_found_and_no_or_a_bad_token_is_unauthorized() {
    let app = TestApp::spawn().await;
    let (_, thread) = parent_thread(&app, "alice", json!([{"text": "hi"}])).await;
    let (_, bob) = app.user("bob").await;
    let path = format!("/api/threads/{thread}/events");
    let (status, body) = LiveSse::open(&app, &path, Some(&bob)).await.err().unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, _) = LiveSse::open(&app, &path, Some(&app.admin))
        .await
        .err()
        .unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "admins included");
    let oversized = format!("/api/threads/{}/events", "a".repeat(4000));
    for missing in [
        "/api/threads/nope/events",
        "/api/threads/%00/events",
        &oversized,
    ] {
        let (status, _) = LiveSse::open(&app, missing, Some(&bob))
            .await
            .err()
            .unwrap();
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    }
    let (status, body) = LiveSse::open(&app, &path, None).await.err().unwrap();
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthorized"))
    );
    let (status, _) = LiveSse::open(&app, &path, Some("ars_not-a-token"))
        .await
        .err()
        .unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let r = app
        .call(reqwest::Method::POST, &path, Some(&bob), None)
        .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn an_idle_thread_stream_stays_open_with_keep_alives_and_ends_cleanly_on_shutdown() {
    let mut app = TestApp::spawn_with(ars_api::ApiConfig {
        sse_keep_alive: Duration::from_millis(100),
        ..ars_api::ApiConfig::default()
    })
    .await;
    let (token, thread) = parent_thread(&app, "alice", json!([{"text": "hi"}])).await;
    let mut stream = open(&app, &token, &thread).await;
    assert_eq!(stream.next(PROMPT).await.event, "snapshot");
    let idle = stream.during(Duration::from_millis(700)).await;
    assert!(idle.is_empty(), "{idle:?}");
    assert!(stream.comments >= 3, "keep-alives: {}", stream.comments);
    assert!(stream.ended.is_none(), "still open");

    let served = app.shut_down(Duration::from_secs(3)).await;
    assert!(
        matches!(served, Some(Ok(()))),
        "the server stopped without waiting out the stream: {served:?}"
    );
    assert!(stream.next_or_end(PROMPT).await.is_none());
    assert_eq!(stream.ended, Some(Ok(())), "a clean end, not a reset");
}

#[tokio::test]
async fn a_closed_stream_leaves_nothing_behind() {
    let app = TestApp::spawn().await;
    let (token, thread) = parent_thread(&app, "alice", json!([{"text": "hi"}])).await;
    let bus = app.bus.clone().unwrap();
    let mut stream = open(&app, &token, &thread).await;
    stream.next(PROMPT).await;
    assert_eq!(bus.followed_threads(), 1);
    drop(stream);
    for _ in 0..100 {
        if bus.followed_threads() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the thread is still followed after its stream closed");
}

#[tokio::test]
async fn on_redis_a_child_running_on_one_instance_updates_a_stream_opened_on_another() {
    let Ok(url) = std::env::var("ARS_TEST_REDIS_URL") else {
        return;
    };
    let redis = Some((url, format!("ars-test-{}", ars_domain::RunId::new())));
    let setup = || Setup {
        redis: redis.clone(),
        event_retention: Duration::from_secs(60),
        ..Setup::default()
    };
    let here = TestApp::spawn_setup(setup()).await;
    let there = TestApp::spawn_setup(Setup {
        store: Some(here.store.clone()),
        ..setup()
    })
    .await;
    let (token, thread) = background_failure(&here).await;
    let mut stream = open(&here, &token, &thread).await;
    assert_eq!(stream.next(PROMPT).await.event, "snapshot");

    // The run, and so its child, executes on the other instance.
    let run = there.start_run(&token, &thread, "go").await;
    let seen = stream.until(PROMPT, |m| m.event == "notice").await;
    let child = seen.iter().find(|m| m.event == "subagent").unwrap().data["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(statuses(&seen, "subagent", &child), ["running", "error"]);
    assert_eq!(statuses(&seen, "run", &run), ["running", "success"]);
    assert_eq!(
        seen.last().unwrap().data["subagent"]["run_id"],
        child.as_str()
    );
}
