//! OpenTelemetry traces from the real binary: `ars serve` with `OTEL_EXPORTER_OTLP_ENDPOINT`
//! set exports its spans over OTLP/HTTP (protobuf) to a small receiver in this test, which
//! decodes the wire format; without an endpoint it sends nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;

use common::{Server, get, login, post, scripted_agent};

const PASSWORD: &str = "admin-password";

/// An OTLP/HTTP trace receiver on loopback, on a runtime of its own so it answers while the
/// test blocks on the server's exit. Keeps every request it was sent.
struct Receiver {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<(String, Bytes)>>>,
}

impl Receiver {
    fn start(port: u16) -> std::io::Result<Receiver> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&requests);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: Bytes| {
                    let kept = Arc::clone(&kept);
                    async move {
                        kept.lock().unwrap().push((uri.path().to_string(), body));
                        (
                            [("content-type", "application/x-protobuf")],
                            ExportTraceServiceResponse::default().encode_to_vec(),
                        )
                    }
                });
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        Ok(Receiver { addr, requests })
    }

    /// Every span received, with the service name of its resource.
    fn spans(&self) -> Vec<(String, Span)> {
        let mut spans = Vec::new();
        for (path, body) in self.requests.lock().unwrap().iter() {
            assert_eq!(path, "/v1/traces");
            let request = ExportTraceServiceRequest::decode(body.as_ref()).unwrap();
            for resource_spans in request.resource_spans {
                let resource = resource_spans.resource.unwrap_or_default();
                let service = text(&resource.attributes, "service.name").unwrap_or_default();
                for scope in resource_spans.scope_spans {
                    for span in scope.spans {
                        spans.push((service.clone(), span));
                    }
                }
            }
        }
        spans
    }
}

fn value<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a AnyValue> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    match value(attributes, key)? {
        AnyValue::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match value(attributes, key)? {
        AnyValue::IntValue(i) => Some(*i),
        _ => None,
    }
}

fn flag(attributes: &[KeyValue], key: &str) -> Option<bool> {
    match value(attributes, key)? {
        AnyValue::BoolValue(b) => Some(*b),
        _ => None,
    }
}

/// The one span named `name` whose attribute `key` is `wanted`.
fn the<'a>(spans: &'a [Span], name: &str, key: &str, wanted: &str) -> &'a Span {
    let found: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == name && text(&s.attributes, key).as_deref() == Some(wanted))
        .collect();
    assert_eq!(found.len(), 1, "one `{name}` span with {key} = {wanted}");
    found[0]
}

/// A parent whose first turn calls two built-in tools (one fails), a subagent it waits for
/// (`task`) and one in the background (`subagent_start`), then awaits the background one.
async fn run_a_parent_with_subagents(base: &str, token: &str) -> (String, String) {
    let helper = json!({"slug": "helper", "name": "Helper", "description": "helps",
        "backend_id": "SubAgentBackend", "config_json": {"context": {"model": {
            "provider": "scripted", "name": "demo",
            "script": [{"text": "helped with {{input}}",
                        "usage": {"prompt_tokens": 7, "completion_tokens": 3}}]}}}});
    let (status, reply) = post(base, "/api/agent", token, helper).await;
    assert_eq!(status, 201, "{reply}");
    scripted_agent(base, token, "boss", json!([
        {"tool_calls": [
            {"name": "ls", "arguments": {"path": "."}, "id": "call_ls"},
            {"name": "read_file", "arguments": {"path": "missing.txt"}, "id": "call_read"},
            {"name": "task", "arguments": {"description": "sync job", "subagent_slug": "helper"},
             "id": "call_task"},
            {"name": "subagent_start",
             "arguments": {"description": "background job", "subagent_slug": "helper"},
             "id": "call_start"}
        ]},
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{tool_result.3.run_id}}"}}]},
        {"text": "all done"}
    ]))
    .await;
    let (_, thread) = post(base, "/api/threads", token, json!({"agent_id": "boss"})).await;
    let thread = thread["id"].as_str().unwrap().to_string();
    let (status, run) = post(
        base,
        &format!("/api/threads/{thread}/runs"),
        token,
        json!({"input": "go"}),
    )
    .await;
    assert_eq!(status, 202, "{run}");
    let run = run["run"]["id"].as_str().unwrap().to_string();
    let waited = get(base, &format!("/api/runs/{run}/wait?timeout_s=60"), token).await;
    assert_eq!(waited["run"]["status"], "success", "{waited}");
    (thread, run)
}

#[tokio::test]
async fn runs_model_calls_and_tool_calls_are_exported_as_spans_of_the_service_ars() {
    let receiver = Receiver::start(0).unwrap();
    let endpoint = format!("http://{}", receiver.addr);
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        Some(PASSWORD),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())],
    );
    assert!(
        server
            .log
            .iter()
            .any(|l| l.contains("exporting traces over OTLP/HTTP")),
        "{}",
        server.log.join("\n")
    );
    let token = login(&server.base, "admin", PASSWORD).await;
    let (thread, run) = run_a_parent_with_subagents(&server.base, &token).await;
    // The last spans are exported on the way out.
    assert!(server.terminate().success());

    let received = receiver.spans();
    assert!(!received.is_empty(), "no span arrived");
    assert!(received.iter().all(|(service, _)| service == "ars"));
    let spans: Vec<Span> = received.into_iter().map(|(_, span)| span).collect();

    let root = the(&spans, "run", "run_id", &run);
    assert_eq!(
        text(&root.attributes, "thread_id").as_deref(),
        Some(thread.as_str())
    );
    assert_eq!(
        text(&root.attributes, "agent_slug").as_deref(),
        Some("boss")
    );
    assert_eq!(text(&root.attributes, "status").as_deref(), Some("success"));
    assert_eq!(text(&root.attributes, "parent_run_id"), None);
    // A run outlives the request that started it: a trace of its own, linked to the request.
    assert!(root.parent_span_id.is_empty());
    let start = the(&spans, "POST", "route", "/api/threads/{id}/runs");
    assert_eq!(int(&start.attributes, "status"), Some(202));
    assert!(text(&start.attributes, "request_id").is_some_and(|id| !id.is_empty()));
    assert!(
        root.links
            .iter()
            .any(|l| l.span_id == start.span_id && l.trace_id == start.trace_id),
        "the run links to the request that started it"
    );

    let model_calls: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "model_call" && s.parent_span_id == root.span_id)
        .collect();
    assert_eq!(model_calls.len(), 3, "three model steps");
    for call in &model_calls {
        assert_eq!(call.trace_id, root.trace_id);
        assert_eq!(
            text(&call.attributes, "provider").as_deref(),
            Some("scripted")
        );
        assert_eq!(text(&call.attributes, "model").as_deref(), Some("demo"));
        assert_eq!(int(&call.attributes, "attempt"), Some(1));
        assert!(int(&call.attributes, "tokens_in").is_some_and(|n| n > 0));
        assert!(int(&call.attributes, "tokens_out").is_some());
    }

    let tool_call = |id: &str| {
        let call = the(&spans, "tool_call", "call_id", id);
        assert_eq!(call.parent_span_id, root.span_id, "{id} belongs to the run");
        call
    };
    let ls = tool_call("call_ls");
    assert_eq!(text(&ls.attributes, "tool").as_deref(), Some("ls"));
    assert_eq!(flag(&ls.attributes, "is_error"), Some(false));
    let read = tool_call("call_read");
    assert_eq!(text(&read.attributes, "tool").as_deref(), Some("read_file"));
    assert_eq!(flag(&read.attributes, "is_error"), Some(true));
    // An error status (code 2) with the message the model read.
    let status = read.status.clone().unwrap_or_default();
    assert_eq!(status.code, 2);
    assert!(!status.message.is_empty());
    assert_eq!(
        text(&tool_call("call_task").attributes, "tool").as_deref(),
        Some("task")
    );
}

#[tokio::test]
async fn a_child_run_s_span_belongs_to_the_parent_s_task_call() {
    let receiver = Receiver::start(0).unwrap();
    let endpoint = format!("http://{}", receiver.addr);
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        Some(PASSWORD),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "ars-test"),
        ],
    );
    let token = login(&server.base, "admin", PASSWORD).await;
    let (_, run) = run_a_parent_with_subagents(&server.base, &token).await;
    assert!(server.terminate().success());

    let received = receiver.spans();
    assert!(received.iter().all(|(service, _)| service == "ars-test"));
    let spans: Vec<Span> = received.into_iter().map(|(_, span)| span).collect();
    let task = the(&spans, "tool_call", "call_id", "call_task");
    let start = the(&spans, "tool_call", "call_id", "call_start");

    let children: Vec<&Span> = spans
        .iter()
        .filter(|s| {
            s.name == "run" && text(&s.attributes, "parent_run_id").as_deref() == Some(&run)
        })
        .collect();
    assert_eq!(children.len(), 2, "two child runs");
    for child in &children {
        assert_eq!(
            text(&child.attributes, "agent_slug").as_deref(),
            Some("helper")
        );
        assert_eq!(
            text(&child.attributes, "status").as_deref(),
            Some("success")
        );
        // Each child's own model call, with the tokens its script reports.
        let calls: Vec<&Span> = spans
            .iter()
            .filter(|s| s.name == "model_call" && s.parent_span_id == child.span_id)
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(int(&calls[0].attributes, "tokens_in"), Some(7));
        assert_eq!(int(&calls[0].attributes, "tokens_out"), Some(3));
    }
    // The child `task` waits for is inside that call's span, in the parent's trace.
    let waited = children
        .iter()
        .find(|c| text(&c.attributes, "delivery").as_deref() == Some("wait"))
        .expect("the task child");
    assert_eq!(
        text(&waited.attributes, "parent_tool_call_id").as_deref(),
        Some("call_task")
    );
    assert_eq!(waited.trace_id, task.trace_id);
    assert_eq!(waited.parent_span_id, task.span_id);
    // The background child outlives the call that started it: its own trace, linked to it.
    let background = children
        .iter()
        .find(|c| text(&c.attributes, "delivery").as_deref() == Some("background"))
        .expect("the background child");
    assert_ne!(background.trace_id, start.trace_id);
    assert!(background.parent_span_id.is_empty());
    assert!(
        background
            .links
            .iter()
            .any(|l| l.span_id == start.span_id && l.trace_id == start.trace_id),
        "the background child links to its subagent_start call"
    );
}

#[tokio::test]
async fn without_an_otlp_endpoint_nothing_is_sent() {
    // The exporter's default endpoint, where a wrongly active exporter would send; when the
    // port is taken the server's log still tells.
    let receiver = Receiver::start(4318)
        .or_else(|_| Receiver::start(0))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Everything but an endpoint, including a protocol an active exporter would refuse.
    let mut server = Server::start_with(
        dir.path(),
        Some(PASSWORD),
        &[
            ("OTEL_SERVICE_NAME", "ars-test"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
    );
    login(&server.base, "admin", PASSWORD).await;
    server.wait_for("finished processing request");
    let log = server.log.join("\n");
    assert!(server.terminate().success());
    assert!(!log.contains("exporting traces"), "{log}");
    assert!(receiver.requests.lock().unwrap().is_empty());
}
