//! `/a2a/{agent}`: the card and the JSON-RPC endpoint only for callers who can use the agent;
//! every malformed request is the JSON-RPC error the specification names, with HTTP 200; a
//! task waiting for a person is `TASK_STATE_INPUT_REQUIRED` and a message naming it answers it.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::common::TestApp;

async fn rpc_raw(app: &TestApp, agent: &str, token: &str, body: Vec<u8>) -> (StatusCode, Value) {
    let res = tokio::time::timeout(
        Duration::from_secs(30),
        app.client
            .post(format!("{}/a2a/{agent}", app.base))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body)
            .send(),
    )
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

async fn rpc(app: &TestApp, agent: &str, token: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": "1", "method": method, "params": params});
    let (status, reply) = rpc_raw(app, agent, token, body.to_string().into_bytes()).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["id"], "1", "{reply}");
    reply
}

fn said(text: &str) -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}})
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {reply}"))
}

#[tokio::test]
async fn the_card_names_the_endpoint_streaming_bearer_and_the_agents_capabilities_for_its_users_only()
 {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    app.agent(
        &alice,
        json!({"slug": "writer", "name": "写作助手", "description": "writes",
        "config_json": {"context": {"tools": ["write_file", "read_file"]}}}),
    )
    .await;
    let path = "/a2a/writer/.well-known/agent-card.json";
    let card = app.get(path, &alice).await;
    assert_eq!(card.status, StatusCode::OK, "{}", card.body);
    let card = card.body;
    assert_eq!(card["name"], "写作助手");
    assert_eq!(card["capabilities"]["streaming"], true);
    let interface = &card["supportedInterfaces"][0];
    assert_eq!(interface["url"], format!("{}/a2a/writer", app.base));
    assert_eq!(interface["protocolBinding"], "JSONRPC");
    assert_eq!(interface["protocolVersion"], "1.0");
    assert_eq!(
        card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["chat", "tool:write_file", "tool:read_file"]);
    // Bob, nobody, a wrong token: no card, no endpoint.
    assert_eq!(app.get(path, &bob).await.status, StatusCode::NOT_FOUND);
    let anonymous = app
        .client
        .get(format!("{}{path}", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        app.get(path, "wrong").await.status,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = rpc_raw(
        &app,
        "writer",
        &bob,
        json!({"jsonrpc": "2.0", "id": 1,
        "method": "SendMessage", "params": said("hi")})
        .to_string()
        .into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        app.get("/a2a/nobody/.well-known/agent-card.json", &alice)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn malformed_requests_are_the_json_rpc_errors_the_specification_names() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "echo", json!([{"text": "heard {{input}}"}]))
        .await;
    let (status, reply) = rpc_raw(&app, "echo", &alice, b"{not json".to_vec()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(error_code(&reply), -32700);
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let (_, reply) = rpc_raw(&app, "echo", &alice, deep.into_bytes()).await;
    assert_eq!(
        error_code(&reply),
        -32700,
        "nesting is bounded before parsing"
    );
    for body in [
        json!({"id": 1, "method": "GetTask"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "GetTask"}),
        json!([1, 2]),
    ] {
        let (_, reply) = rpc_raw(&app, "echo", &alice, body.to_string().into_bytes()).await;
        assert_eq!(error_code(&reply), -32600, "{body} → {reply}");
    }
    let cases = [
        ("Teleport", json!({}), -32601),
        ("GetTask", json!({}), -32602),
        ("GetTask", json!({"id": 7}), -32602),
        ("GetTask", json!({"id": "no-such-task"}), -32001),
        (
            "CancelTask",
            json!({"id": "01a23d36-0000-7000-8000-000000000000"}),
            -32001,
        ),
        ("SendMessage", json!({}), -32602),
        (
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "parts": []}}),
            -32602,
        ),
        (
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "parts": [{"text": "  "}]}}),
            -32602,
        ),
        (
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "parts": [{"url": "http://127.0.0.1/x"}]}}),
            -32005,
        ),
        (
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}], "contextId": "../etc"}}),
            -32602,
        ),
        ("CreateTaskPushNotificationConfig", json!({}), -32003),
        ("GetExtendedAgentCard", json!({}), -32007),
    ];
    for (method, params, code) in cases {
        let reply = rpc(&app, "echo", &alice, method, params.clone()).await;
        assert_eq!(error_code(&reply), code, "{method} {params} → {reply}");
    }
    // A finished task cannot be cancelled or subscribed to.
    let done = rpc(&app, "echo", &alice, "SendMessage", said("hello")).await;
    let task = &done["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "heard hello");
    let id = task["id"].as_str().unwrap();
    assert_eq!(
        error_code(&rpc(&app, "echo", &alice, "CancelTask", json!({"id": id})).await),
        -32002
    );
    assert_eq!(
        error_code(&rpc(&app, "echo", &alice, "SubscribeToTask", json!({"id": id})).await),
        -32004
    );
    // historyLength keeps the last messages.
    let got = rpc(
        &app,
        "echo",
        &alice,
        "GetTask",
        json!({"id": id, "historyLength": 1}),
    )
    .await;
    assert_eq!(got["result"]["history"].as_array().unwrap().len(), 1);
    assert_eq!(got["result"]["history"][0]["role"], "ROLE_AGENT");
    // An unsupported protocol version.
    let res = app
        .client
        .post(format!("{}/a2a/echo", app.base))
        .bearer_auth(&alice)
        .header("a2a-version", "0.2")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask",
            "params": {"id": id}}))
        .send()
        .await
        .unwrap();
    let reply: Value = res.json().await.unwrap();
    assert_eq!(error_code(&reply), -32009);
}

#[tokio::test]
async fn a_task_waiting_for_a_person_asks_for_input_and_a_message_naming_it_answers() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.agent(&alice, json!({"slug": "careful", "name": "careful", "config_json": {"context": {
        "tools": ["write_file"],
        "approvals": {"write_file": "ask"},
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}]},
            {"text": "done: {{last_tool_result}}"}]}}}})).await;
    let asked = rpc(&app, "careful", &alice, "SendMessage", said("write it")).await;
    let task = &asked["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked}"
    );
    assert!(
        task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("write_file")
    );
    let id = task["id"].as_str().unwrap();
    let context = task["contextId"].as_str().unwrap();
    let answered = rpc(
        &app,
        "careful",
        &alice,
        "SendMessage",
        json!({"message": {
        "messageId": "m2", "role": "ROLE_USER", "taskId": id, "contextId": context,
        "parts": [{"text": "approve"}]}}),
    )
    .await;
    let task = &answered["result"]["task"];
    assert_eq!(task["id"], id);
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert!(
        task["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("done:")
    );
    // A task that no longer waits is not answered again.
    let again = rpc(
        &app,
        "careful",
        &alice,
        "SendMessage",
        json!({"message": {
        "messageId": "m3", "role": "ROLE_USER", "taskId": id, "parts": [{"text": "approve"}]}}),
    )
    .await;
    assert_eq!(error_code(&again), -32004);
}

#[tokio::test]
async fn a_streamed_task_sends_the_task_then_updates_and_closes_after_the_last_status() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "echo", json!([{"text": "one two three"}]))
        .await;
    let res = app.client.post(format!("{}/a2a/echo", app.base)).bearer_auth(&alice)
        .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage", "params": said("go")}))
        .send().await.unwrap();
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let body = tokio::time::timeout(Duration::from_secs(30), res.text())
        .await
        .expect("closes")
        .unwrap();
    let results: Vec<Value> = body
        .split("\n\n")
        .filter_map(|b| b.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .inspect(|r| assert_eq!(r["id"], 9))
        .map(|r| r["result"].clone())
        .collect();
    // A slot was free: the task is working from the start, and says so once.
    assert_eq!(
        results[0]["task"]["status"]["state"], "TASK_STATE_WORKING",
        "{body}"
    );
    assert!(
        results
            .iter()
            .all(|r| r["statusUpdate"]["status"]["state"] != "TASK_STATE_WORKING"),
        "{body}"
    );
    let text: String = results
        .iter()
        .filter_map(|r| r["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "one two three");
    let chunks: Vec<&Value> = results
        .iter()
        .filter(|r| r["artifactUpdate"].is_object())
        .collect();
    assert_eq!(chunks[0]["artifactUpdate"]["append"], false);
    assert!(
        chunks[1..]
            .iter()
            .all(|c| c["artifactUpdate"]["append"] == true)
    );
    assert_eq!(chunks.last().unwrap()["artifactUpdate"]["lastChunk"], true);
    let last = results.last().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        last["statusUpdate"]["status"]["message"]["parts"][0]["text"],
        "one two three"
    );
}
