//! The protocol adapters over real HTTP on loopback: the OpenAI-compatible API (`/v1`), the
//! LangGraph / Agent Protocol API (`/langgraph`) and A2A (`/a2a/{agent}`), each answering its
//! own wire shapes and errors over the same agents, threads, runs and permissions as `/api`.
//! The official client libraries drive them in `protocol_clients.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "protocols/openai.rs"]
mod openai;

#[path = "protocols/langgraph.rs"]
mod langgraph;

#[path = "protocols/a2a.rs"]
mod a2a;

/// Absurd bodies to every adapter: nesting far past the bound (refused before any parser
/// walks it), a body past the limit; the server answers each in the protocol's shape and
/// goes on serving.
#[tokio::test]
async fn absurd_bodies_are_refused_by_every_adapter_and_the_server_goes_on() {
    use reqwest::StatusCode;
    use serde_json::json;
    let app = common::TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.scripted_agent(&alice, "echo", json!([{"text": "ok"}]))
        .await;
    let deep = format!("{}{}", "[".repeat(400_000), "]".repeat(400_000)).into_bytes();
    let huge = format!("{{\"x\": \"{}\"}}", "y".repeat(2 * 1024 * 1024)).into_bytes();
    for path in [
        "/v1/chat/completions",
        "/v1/responses",
        "/langgraph/runs/wait",
        "/langgraph/threads",
        "/a2a/echo",
    ] {
        for (body, statuses) in [
            (deep.clone(), [StatusCode::BAD_REQUEST, StatusCode::OK]),
            (
                huge.clone(),
                [StatusCode::PAYLOAD_TOO_LARGE, StatusCode::PAYLOAD_TOO_LARGE],
            ),
        ] {
            let res = app
                .client
                .post(format!("{}{path}", app.base))
                .bearer_auth(&alice)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = res.status();
            assert!(statuses.contains(&status), "{path}: {status}");
            let text = res.text().await.unwrap();
            if path.starts_with("/a2a") && status == StatusCode::OK {
                let reply: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(reply["error"]["code"], -32700, "{text}");
            }
        }
    }
    let alive = app.get("/v1/models", &alice).await;
    assert_eq!(alive.status, StatusCode::OK);
}
