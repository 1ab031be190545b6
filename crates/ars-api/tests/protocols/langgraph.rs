//! `/langgraph`: assistants are the agents a caller can use (subagents included), threads
//! carry metadata, runs answer in LangGraph's shapes and streams; `x-api-key` or a bearer token
//! authenticates; errors are `{"detail"}`; nobody reaches another user's threads or runs.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::TestApp;

/// A request with `x-api-key`, as the LangGraph SDK sends it; the status and the JSON body.
async fn lg(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = app
        .client
        .request(method, format!("{}/langgraph{path}", app.base))
        .header("x-api-key", key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = tokio::time::timeout(Duration::from_secs(30), req.send())
        .await
        .expect("answers")
        .unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// `event` names and data of an SSE body.
fn sse(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_string());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            Some((event?, serde_json::from_str(&data).unwrap_or(Value::Null)))
        })
        .collect()
}

fn user_says(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

async fn echo(app: &TestApp, token: &str) {
    app.scripted_agent(
        token,
        "echo",
        json!([{"text": "heard {{input}} after {{user_turns}} user turns"}]),
    )
    .await;
}

#[tokio::test]
async fn assistants_are_the_callers_agents_subagents_included_and_others_are_not_found() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    echo(&app, &alice).await;
    let helper = app.agent(&alice, crate::common::subagent("helper")).await;
    let (status, found) = lg(
        &app,
        Method::POST,
        "/assistants/search",
        &alice,
        Some(json!({"limit": 100})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{found}");
    let graphs: Vec<&str> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["graph_id"].as_str().unwrap())
        .collect();
    assert!(
        graphs.contains(&"echo") && graphs.contains(&"helper"),
        "{graphs:?}"
    );
    let (_, one) = lg(
        &app,
        Method::POST,
        "/assistants/search",
        &alice,
        Some(json!({"graph_id": "helper"})),
    )
    .await;
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["assistant_id"], helper["id"]);
    for key in ["helper", helper["id"].as_str().unwrap()] {
        let (status, got) = lg(
            &app,
            Method::GET,
            &format!("/assistants/{key}"),
            &alice,
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(got["graph_id"], "helper");
    }
    // Bob: nothing of Alice's, in the LangGraph error shape.
    let (_, bobs) = lg(
        &app,
        Method::POST,
        "/assistants/search",
        &bob,
        Some(json!({})),
    )
    .await;
    assert!(!bobs.to_string().contains("helper"), "{bobs}");
    let (status, error) = lg(&app, Method::GET, "/assistants/echo", &bob, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        error["detail"].as_str().unwrap().contains("echo"),
        "{error}"
    );
    // No key, a wrong key; a bearer token works too.
    let (status, error) = lg(&app, Method::GET, "/assistants/echo", "", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{error}");
    assert!(error["detail"].is_string());
    let (status, _) = lg(&app, Method::GET, "/assistants/echo", "wrong", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let bearer = app.get("/langgraph/assistants/echo", &alice).await;
    assert_eq!(bearer.status, StatusCode::OK);
    let (status, _) = lg(&app, Method::GET, "/nothing/here", &alice, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn threads_keep_metadata_runs_answer_values_and_nobody_else_reaches_them() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    echo(&app, &alice).await;
    let (status, thread) = lg(
        &app,
        Method::POST,
        "/threads",
        &alice,
        Some(json!({"metadata": {"purpose": "test", "n": 1}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{thread}");
    let id = thread["thread_id"].as_str().unwrap().to_string();
    assert_eq!(thread["status"], "idle");
    assert_eq!(thread["metadata"]["purpose"], "test");
    let (_, patched) = lg(
        &app,
        Method::PATCH,
        &format!("/threads/{id}"),
        &alice,
        Some(json!({"metadata": {"n": null, "more": true}})),
    )
    .await;
    assert_eq!(
        patched["metadata"],
        json!({"purpose": "test", "more": true})
    );
    let (_, found) = lg(
        &app,
        Method::POST,
        "/threads/search",
        &alice,
        Some(json!({"metadata": {"purpose": "test"}})),
    )
    .await;
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");

    let (status, values) = lg(
        &app,
        Method::POST,
        &format!("/threads/{id}/runs/wait"),
        &alice,
        Some(json!({"assistant_id": "echo", "input": user_says("hello")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{values}");
    let messages = values["messages"].as_array().unwrap();
    assert_eq!(messages[0]["type"], "human");
    assert_eq!(messages.last().unwrap()["type"], "ai");
    assert_eq!(
        messages.last().unwrap()["content"],
        "heard hello after 1 user turns"
    );
    let (_, state) = lg(
        &app,
        Method::GET,
        &format!("/threads/{id}/state"),
        &alice,
        None,
    )
    .await;
    assert_eq!(
        state["values"]["messages"].as_array().unwrap().len(),
        2,
        "{state}"
    );
    assert_eq!(state["next"], json!([]));
    let (_, runs) = lg(
        &app,
        Method::GET,
        &format!("/threads/{id}/runs"),
        &alice,
        None,
    )
    .await;
    let run_id = runs[0]["run_id"].as_str().unwrap().to_string();
    assert_eq!(runs[0]["status"], "success");

    // Bob reaches none of it, and changes nothing.
    for (method, path, body) in [
        (Method::GET, format!("/threads/{id}"), None),
        (Method::GET, format!("/threads/{id}/state"), None),
        (
            Method::PATCH,
            format!("/threads/{id}"),
            Some(json!({"metadata": {"x": 1}})),
        ),
        (Method::DELETE, format!("/threads/{id}"), None),
        (Method::GET, format!("/threads/{id}/runs"), None),
        (Method::GET, format!("/threads/{id}/runs/{run_id}"), None),
        (
            Method::GET,
            format!("/threads/{id}/runs/{run_id}/join"),
            None,
        ),
        (
            Method::POST,
            format!("/threads/{id}/runs/{run_id}/cancel"),
            None,
        ),
        (
            Method::POST,
            format!("/threads/{id}/runs"),
            Some(json!({"assistant_id": "echo", "input": user_says("mine")})),
        ),
    ] {
        let (status, body) = lg(&app, method.clone(), &path, &bob, body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
        assert!(body["detail"].is_string(), "{body}");
    }
    let (_, bobs) = lg(&app, Method::POST, "/threads/search", &bob, Some(json!({}))).await;
    assert_eq!(bobs, json!([]));
    let (_, still) = lg(&app, Method::GET, &format!("/threads/{id}"), &alice, None).await;
    assert_eq!(still["metadata"], json!({"purpose": "test", "more": true}));

    // A chosen id: taken is a 409 unless `do_nothing`.
    let (status, _) = lg(
        &app,
        Method::POST,
        "/threads",
        &alice,
        Some(json!({"thread_id": id})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, same) = lg(
        &app,
        Method::POST,
        "/threads",
        &alice,
        Some(json!({"thread_id": id, "if_exists": "do_nothing"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same["thread_id"], id);
    let (status, _) = lg(
        &app,
        Method::POST,
        "/threads",
        &bob,
        Some(json!({"thread_id": id, "if_exists": "do_nothing"})),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "another's id is taken, never answered"
    );

    // Deleted: gone for its owner too.
    let (status, _) = lg(
        &app,
        Method::DELETE,
        &format!("/threads/{id}"),
        &alice,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = lg(&app, Method::GET, &format!("/threads/{id}"), &alice, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_run_and_thread_bodies_are_refused_and_store_nothing() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    echo(&app, &alice).await;
    let (_, thread) = lg(&app, Method::POST, "/threads", &alice, Some(json!({}))).await;
    let id = thread["thread_id"].as_str().unwrap();
    let runs = format!("/threads/{id}/runs");
    for body in [
        json!({"input": user_says("no assistant")}),
        json!({"assistant_id": "echo"}),
        json!({"assistant_id": "echo", "input": {"messages": []}}),
        json!({"assistant_id": "echo", "input": {"messages": [{"role": "assistant", "content": "hi"}]}}),
        json!({"assistant_id": "echo", "input": {"messages": [{"role": "wizard", "content": "hi"}]}}),
        json!({"assistant_id": "echo", "input": user_says("   ")}),
        json!({"assistant_id": "echo", "input": user_says("x"), "multitask_strategy": "sometimes"}),
        json!({"assistant_id": "echo", "input": user_says("x"), "stream_mode": "telepathy"}),
        json!({"assistant_id": "echo", "input": user_says("x"), "metadata": "not an object"}),
    ] {
        let path = if body.get("stream_mode").is_some() {
            format!("{runs}/stream")
        } else {
            runs.clone()
        };
        let (status, error) = lg(&app, Method::POST, &path, &alice, Some(body.clone())).await;
        assert!(
            status == StatusCode::UNPROCESSABLE_ENTITY,
            "{body} → {status} {error}"
        );
        assert!(error["detail"].is_string(), "{error}");
    }
    let (status, error) = lg(
        &app,
        Method::POST,
        &runs,
        &alice,
        Some(json!({"assistant_id": "nobody", "input": user_says("x")})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{error}");
    for body in [
        json!({"metadata": {"big": "x".repeat(20_000)}}),
        json!({"metadata": [1, 2]}),
        json!({"thread_id": "not-a-uuid"}),
        json!({"if_exists": "maybe"}),
    ] {
        let (status, error) = lg(&app, Method::POST, "/threads", &alice, Some(body.clone())).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body} → {error}");
    }
    let malformed = app
        .raw(
            Method::POST,
            &format!("/langgraph{runs}"),
            &alice,
            "application/json",
            b"{".to_vec(),
        )
        .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert!(malformed.body["detail"].is_string());
    // Nothing ran, nothing was stored.
    let (_, listed) = lg(&app, Method::GET, &runs, &alice, None).await;
    assert_eq!(listed, json!([]));
    let (_, threads) = lg(
        &app,
        Method::POST,
        "/threads/search",
        &alice,
        Some(json!({})),
    )
    .await;
    assert_eq!(threads.as_array().unwrap().len(), 1, "{threads}");
}

#[tokio::test]
async fn a_busy_thread_rejects_interrupts_or_enqueues_as_the_strategy_says() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "slow",
        json!([{"text": "slow answer to {{input}}", "delay_ms": 1500}]),
    )
    .await;
    let (_, thread) = lg(
        &app,
        Method::POST,
        "/threads",
        &alice,
        Some(json!({"graph_id": "slow"})),
    )
    .await;
    let id = thread["thread_id"].as_str().unwrap();
    let runs = format!("/threads/{id}/runs");
    let start = |strategy: Option<&str>, text: &str| {
        let mut body = json!({"assistant_id": "slow", "input": user_says(text)});
        if let Some(strategy) = strategy {
            body["multitask_strategy"] = json!(strategy);
        }
        body
    };
    let (status, first) = lg(&app, Method::POST, &runs, &alice, Some(start(None, "one"))).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert!(["pending", "running"].contains(&first["status"].as_str().unwrap()));
    let (_, busy) = lg(&app, Method::GET, &format!("/threads/{id}"), &alice, None).await;
    assert_eq!(busy["status"], "busy");
    let (status, error) = lg(
        &app,
        Method::POST,
        &runs,
        &alice,
        Some(start(Some("reject"), "two")),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
    let (status, second) = lg(
        &app,
        Method::POST,
        &runs,
        &alice,
        Some(start(Some("interrupt"), "three")),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let first_id = first["run_id"].as_str().unwrap();
    let (_, first_now) = lg(
        &app,
        Method::GET,
        &format!("{runs}/{first_id}"),
        &alice,
        None,
    )
    .await;
    assert_eq!(first_now["status"], "interrupted");
    // Enqueued: starts once the second has ended.
    let (status, third) = lg(
        &app,
        Method::POST,
        &runs,
        &alice,
        Some(start(Some("enqueue"), "four")),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{third}");
    let second_id = second["run_id"].as_str().unwrap();
    let (_, second_now) = lg(
        &app,
        Method::GET,
        &format!("{runs}/{second_id}"),
        &alice,
        None,
    )
    .await;
    assert_eq!(second_now["status"], "success");
    let third_id = third["run_id"].as_str().unwrap();
    let (_, joined) = lg(
        &app,
        Method::GET,
        &format!("{runs}/{third_id}/join"),
        &alice,
        None,
    )
    .await;
    assert_eq!(
        joined["messages"].as_array().unwrap().last().unwrap()["content"],
        "slow answer to four"
    );
    // Newest first.
    let (_, listed) = lg(&app, Method::GET, &runs, &alice, None).await;
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [third_id, second_id, first_id]);
    // Cancelling a run that ended answers it as it is.
    let (status, same) = lg(
        &app,
        Method::POST,
        &format!("{runs}/{third_id}/cancel?wait=1"),
        &alice,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same["status"], "success");
}

#[tokio::test]
async fn a_stream_sends_metadata_first_the_modes_asked_for_and_end_last() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    echo(&app, &alice).await;
    let res = app
        .client
        .post(format!("{}/langgraph/runs/stream", app.base))
        .header("x-api-key", &alice)
        .json(
            &json!({"assistant_id": "echo", "input": user_says("stream this"),
                      "stream_mode": ["values", "updates", "messages-tuple", "events"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let location = res.headers()["content-location"]
        .to_str()
        .unwrap()
        .to_string();
    let events = sse(&res.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.first(), Some(&"metadata"), "{names:?}");
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    let run_id = events[0].1["run_id"].as_str().unwrap();
    assert!(location.ends_with(&format!("/runs/{run_id}")), "{location}");
    assert_eq!(events.last().unwrap().1["status"], "success");
    for mode in ["values", "updates", "messages", "events"] {
        assert!(names.contains(&mode), "{mode} missing from {names:?}");
    }
    let streamed: String = events
        .iter()
        .filter(|(n, _)| n == "messages")
        .map(|(_, d)| d[0]["content"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, "heard stream this after 1 user turns");
    let tuple = &events.iter().find(|(n, _)| n == "messages").unwrap().1;
    assert_eq!(tuple[1]["langgraph_node"], "model");
    let update = &events.iter().find(|(n, _)| n == "updates").unwrap().1;
    assert_eq!(update["model"]["messages"][0]["type"], "ai");
    let last_values = &events.iter().rev().find(|(n, _)| n == "values").unwrap().1;
    assert_eq!(last_values["messages"][1]["content"], streamed);
}

#[tokio::test]
async fn a_run_waiting_for_a_person_is_interrupted_and_a_resume_command_decides_it() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.agent(&alice, json!({"slug": "careful", "name": "careful", "config_json": {"context": {
        "tools": ["write_file"],
        "approvals": {"write_file": "ask"},
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}]},
            {"text": "wrote it: {{last_tool_result}}"}]}}}})).await;
    let (_, thread) = lg(&app, Method::POST, "/threads", &alice, Some(json!({}))).await;
    let id = thread["thread_id"].as_str().unwrap();
    let (status, values) = lg(
        &app,
        Method::POST,
        &format!("/threads/{id}/runs/wait"),
        &alice,
        Some(json!({"assistant_id": "careful", "input": user_says("write")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{values}");
    let interrupt = &values["__interrupt__"][0];
    assert_eq!(interrupt["value"]["tool"], "write_file", "{values}");
    let (_, waiting) = lg(&app, Method::GET, &format!("/threads/{id}"), &alice, None).await;
    assert_eq!(waiting["status"], "interrupted");
    let (_, runs) = lg(
        &app,
        Method::GET,
        &format!("/threads/{id}/runs"),
        &alice,
        None,
    )
    .await;
    assert_eq!(runs[0]["status"], "interrupted");
    // Resuming a thread with nothing waiting is a 409; the waiting run is decided.
    let (status, values) = lg(
        &app,
        Method::POST,
        &format!("/threads/{id}/runs/wait"),
        &alice,
        Some(json!({"assistant_id": "careful", "command": {"resume": "approve"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{values}");
    let last = values["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"].as_str().unwrap().starts_with("wrote it"),
        "{values}"
    );
    assert!(values.get("__interrupt__").is_none());
    let (status, error) = lg(
        &app,
        Method::POST,
        &format!("/threads/{id}/runs"),
        &alice,
        Some(json!({"assistant_id": "careful", "command": {"resume": "approve"}})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{error}");
}

#[tokio::test]
async fn a_joined_stream_resumes_after_the_last_event_id_it_names() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(
        &alice,
        "words",
        json!([{"text": "one two three four", "chunk_delay_ms": 50}]),
    )
    .await;
    let (_, run) = lg(
        &app,
        Method::POST,
        "/runs",
        &alice,
        Some(json!({"assistant_id": "words", "input": user_says("go")})),
    )
    .await;
    let (thread, run_id) = (
        run["thread_id"].as_str().unwrap(),
        run["run_id"].as_str().unwrap(),
    );
    let path = format!(
        "{}/langgraph/threads/{thread}/runs/{run_id}/stream?stream_mode=events",
        app.base
    );
    let whole = app
        .client
        .get(&path)
        .header("x-api-key", &alice)
        .send()
        .await
        .unwrap();
    let whole = whole.text().await.unwrap();
    let ids: Vec<u64> = whole
        .split("\n\n")
        .filter_map(|b| b.lines().find_map(|l| l.strip_prefix("id: ")))
        .map(|id| id.parse().unwrap())
        .collect();
    assert!(ids.len() > 4, "{whole}");
    let resume_after = ids[2];
    let rest = app
        .client
        .get(&path)
        .header("x-api-key", &alice)
        .header("last-event-id", resume_after.to_string())
        .send()
        .await
        .unwrap();
    let rest = rest.text().await.unwrap();
    let rest_ids: Vec<u64> = rest
        .split("\n\n")
        .filter_map(|b| b.lines().find_map(|l| l.strip_prefix("id: ")))
        .map(|id| id.parse().unwrap())
        .collect();
    assert_eq!(rest_ids, ids[3..].to_vec(), "exactly the events after it");
    let events = sse(&rest);
    assert_eq!(events.first().unwrap().0, "metadata");
    assert_eq!(events.last().unwrap().0, "end");
    // A Last-Event-ID that is not an event id is refused before streaming.
    let bad = app
        .client
        .get(&path)
        .header("x-api-key", &alice)
        .header("last-event-id", "soon")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let unknown_mode = app
        .client
        .get(path.replace("events", "dreams"))
        .header("x-api-key", &alice)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_mode.status(), StatusCode::UNPROCESSABLE_ENTITY);
}
