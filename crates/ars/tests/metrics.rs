//! `GET /metrics` of the real `ars serve`: Prometheus text that a parser reads line by line,
//! counters that move with the runs, tool calls and model requests it served, gauges back at
//! zero once they end, and who may read it (an admin, the metrics token, or anyone on the
//! separate metrics listener).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use prometheus_parse::{LineInfo, Scrape, Value as Sample};
use reqwest::Method;
use serde_json::{Value, json};

use common::{Server, call, eventually, login, post, scripted_agent};

const PASSWORD: &str = "admin-password";

/// One scrape, parsed.
struct Metrics {
    scrape: Scrape,
    text: String,
}

impl Metrics {
    /// Reads Prometheus text strictly: every line is a `# HELP`, a `# TYPE` or a sample with a
    /// number (the parser silently skips anything else, so a skipped line is a failure here),
    /// and every sample belongs to a family whose type was declared.
    fn parse(text: String) -> Metrics {
        assert!(!text.trim().is_empty(), "an empty scrape");
        let mut typed = Vec::new();
        for line in text.lines() {
            match LineInfo::parse(line) {
                LineInfo::Type { metric_name, .. } => {
                    typed.push(metric_name.trim_end_matches("_bucket").to_string());
                }
                LineInfo::Sample {
                    metric_name, value, ..
                } => {
                    assert!(value.parse::<f64>().is_ok(), "not a number: {line}");
                    let family = ["_bucket", "_sum", "_count"]
                        .iter()
                        .find_map(|s| metric_name.strip_suffix(s))
                        .filter(|f| typed.iter().any(|t| t == f))
                        .unwrap_or(metric_name);
                    assert!(typed.iter().any(|t| t == family), "no # TYPE before {line}");
                }
                LineInfo::Doc { .. } | LineInfo::Empty => {}
                LineInfo::Ignored => panic!("not Prometheus text: {line:?}"),
            }
        }
        let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_string()))).unwrap();
        Metrics { scrape, text }
    }

    /// The value of the sample `name` whose labels include `labels`; 0 when there is none yet
    /// (a counter is exported from its first increment on).
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let values: Vec<f64> = self
            .scrape
            .samples
            .iter()
            .filter(|s| s.metric == name)
            .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map(|s| match &s.value {
                Sample::Counter(v) | Sample::Gauge(v) | Sample::Untyped(v) => *v,
                other => panic!("{name} is not a single number: {other:?}"),
            })
            .collect();
        assert!(
            values.len() <= 1,
            "{name}{labels:?} matches several samples"
        );
        values.first().copied().unwrap_or(0.0)
    }

    fn has_help(&self, family: &str) -> bool {
        self.scrape.docs.contains_key(family)
    }
}

/// `GET /metrics` on `base` (with a bearer token, if any): status and body.
async fn fetch(base: &str, token: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("{base}/metrics"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

async fn scrape(base: &str, token: Option<&str>) -> Metrics {
    let (status, body) = fetch(base, token).await;
    assert_eq!(status, 200, "{body}");
    Metrics::parse(body)
}

/// Starts a run of `agent` on a new thread and waits for its end; answers the run.
async fn run_to_end(base: &str, token: &str, agent: &str) -> Value {
    let (status, thread) = post(base, "/api/threads", token, json!({"agent_id": agent})).await;
    assert_eq!(status, 201, "{thread}");
    let thread = thread["id"].as_str().unwrap();
    let (status, run) = post(
        base,
        &format!("/api/threads/{thread}/runs"),
        token,
        json!({"input": "go"}),
    )
    .await;
    assert_eq!(status, 202, "{run}");
    let run = run["run"]["id"].as_str().unwrap();
    let (status, waited) = call(
        Method::GET,
        format!("{base}/api/runs/{run}/wait?timeout_s=60"),
        Some(token),
        None,
    )
    .await;
    assert_eq!(status, 200, "{waited}");
    assert_eq!(waited["wait_timed_out"], false, "{waited}");
    waited["run"].clone()
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_move_with_runs() {
    let dir = tempfile::tempdir().unwrap();
    // A short lease, so the heartbeat renews the slow run's lease while it runs.
    let server = Server::start_with(dir.path(), Some(PASSWORD), &[("ARS_LEASE_TTL_S", "1")]);
    let base = server.base.clone();
    let token = login(&base, "admin", PASSWORD).await;
    let helper = json!({"slug": "helper", "name": "Helper", "description": "helps",
        "backend_id": "SubAgentBackend", "config_json": {"context": {"model": {
            "provider": "scripted", "name": "demo", "script": [{"text": "helped"}]}}}});
    assert_eq!(post(&base, "/api/agent", &token, helper).await.0, 201);
    // One turn of three tool calls — one that works, one that fails, one subagent run — after
    // a second's wait, then the answer: three model requests (the child's included).
    scripted_agent(
        &base,
        &token,
        "worker",
        json!([
            {"delay_ms": 1200, "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}},
                {"name": "read_file", "arguments": {"path": "missing.txt"}},
                {"name": "task", "arguments": {"description": "help", "subagent_slug": "helper"}}
            ]},
            {"text": "done"}
        ]),
    )
    .await;
    scripted_agent(
        &base,
        &token,
        "failer",
        json!([{"error": "the model fell over"}]),
    )
    .await;

    let before = scrape(&base, Some(&token)).await;
    assert_eq!(
        run_to_end(&base, &token, "worker").await["status"],
        "success"
    );
    assert_eq!(run_to_end(&base, &token, "failer").await["status"], "error");
    let after = scrape(&base, Some(&token)).await;

    let moved =
        |name: &str, labels: &[(&str, &str)]| after.get(name, labels) - before.get(name, labels);
    // The worker, its subagent run and the failer.
    assert_eq!(moved("ars_runs_started_total", &[]), 3.0, "{}", after.text);
    assert_eq!(moved("ars_runs_ended_total", &[("status", "success")]), 2.0);
    assert_eq!(moved("ars_runs_ended_total", &[("status", "error")]), 1.0);
    assert_eq!(
        moved("ars_run_duration_seconds_count", &[("status", "success")]),
        2.0
    );
    assert!(after.get("ars_run_duration_seconds_sum", &[("status", "success")]) >= 1.2);
    assert_eq!(moved("ars_subagent_runs_total", &[("slug", "helper")]), 1.0);

    let tool = |name| [("tool", name)];
    for name in ["write_file", "read_file", "task"] {
        assert_eq!(
            moved("ars_tool_call_duration_seconds_count", &tool(name)),
            1.0,
            "{name}"
        );
    }
    assert_eq!(moved("ars_tool_call_errors_total", &tool("read_file")), 1.0);
    assert_eq!(
        moved("ars_tool_call_errors_total", &tool("write_file")),
        0.0
    );

    let scripted = [("provider", "scripted"), ("model", "demo")];
    // Worker: two steps; helper: one; failer: one, which failed.
    assert_eq!(
        moved("ars_model_request_duration_seconds_count", &scripted),
        4.0
    );
    assert_eq!(moved("ars_model_request_errors_total", &scripted), 1.0);

    // The worker's turn with its three calls and their results; each run's final answer goes
    // with its end (worker, helper).
    assert!(
        moved(
            "ars_store_write_duration_seconds_count",
            &[("operation", "append_message")]
        ) >= 4.0
    );
    assert_eq!(
        moved(
            "ars_store_write_duration_seconds_count",
            &[("operation", "finish_run_with_answer")]
        ),
        2.0
    );
    assert!(
        after.get("ars_lease_renewals_total", &[]) >= 1.0,
        "{}",
        after.text
    );
    for family in [
        "ars_runs_started_total",
        "ars_tool_call_duration_seconds",
        "ars_store_write_queue_depth",
    ] {
        assert!(after.has_help(family), "{family} is described");
    }

    // Nothing is executing, waiting or writing any more: every gauge came back down.
    for gauge in [
        "ars_runs_active",
        "ars_runs_pending",
        "ars_store_write_queue_depth",
    ] {
        assert_eq!(after.get(gauge, &[]), 0.0, "{gauge}\n{}", after.text);
    }
    server.terminate();
}

#[tokio::test]
async fn open_event_streams_and_active_runs_are_counted_until_they_end() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let base = server.base.clone();
    let token = login(&base, "admin", PASSWORD).await;
    scripted_agent(
        &base,
        &token,
        "slow",
        json!([{"text": "slow answer", "delay_ms": 600_000}]),
    )
    .await;
    let (_, thread) = post(&base, "/api/threads", &token, json!({"agent_id": "slow"})).await;
    let thread = thread["id"].as_str().unwrap();
    let (_, run) = post(
        &base,
        &format!("/api/threads/{thread}/runs"),
        &token,
        json!({"input": "go"}),
    )
    .await;
    let run = run["run"]["id"].as_str().unwrap().to_string();
    let stream = reqwest::Client::new()
        .get(format!("{base}/api/runs/{run}/events"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    eventually(10, "one stream and one active run", || async {
        let now = scrape(&base, Some(&token)).await;
        now.get("ars_sse_subscribers", &[]) == 1.0 && now.get("ars_runs_active", &[]) == 1.0
    })
    .await;

    // The client goes away: its stream is no longer counted.
    drop(stream);
    eventually(10, "no stream", || async {
        scrape(&base, Some(&token))
            .await
            .get("ars_sse_subscribers", &[])
            == 0.0
    })
    .await;
    let (status, cancelled) =
        post(&base, &format!("/api/runs/{run}/cancel"), &token, json!({})).await;
    assert_eq!(
        (status, cancelled["status"].as_str()),
        (200, Some("cancelled"))
    );
    let after = scrape(&base, Some(&token)).await;
    assert_eq!(after.get("ars_runs_active", &[]), 0.0);
    assert_eq!(
        after.get("ars_runs_ended_total", &[("status", "cancelled")]),
        1.0
    );
    server.terminate();
}

#[tokio::test]
async fn a_restarted_server_counts_the_runs_it_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    scripted_agent(
        &server.base,
        &token,
        "stalls",
        json!([{"text": "never", "delay_ms": 600_000}]),
    )
    .await;
    let (_, thread) = post(
        &server.base,
        "/api/threads",
        &token,
        json!({"agent_id": "stalls"}),
    )
    .await;
    let thread = thread["id"].as_str().unwrap();
    let (status, _) = post(
        &server.base,
        &format!("/api/threads/{thread}/runs"),
        &token,
        json!({"input": "go"}),
    )
    .await;
    assert_eq!(status, 202);
    server.kill();

    let server = Server::start(dir.path(), Some(PASSWORD));
    let token = login(&server.base, "admin", PASSWORD).await;
    let now = scrape(&server.base, Some(&token)).await;
    assert_eq!(now.get("ars_runs_reaped_total", &[]), 1.0, "{}", now.text);
    assert_eq!(
        now.get("ars_runs_ended_total", &[("status", "interrupted")]),
        1.0
    );
    // Not executed here: no duration to speak of.
    assert_eq!(
        now.get(
            "ars_run_duration_seconds_count",
            &[("status", "interrupted")]
        ),
        0.0
    );
    server.terminate();
}

#[tokio::test]
async fn without_a_metrics_token_only_admins_may_read_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some(PASSWORD));
    let base = server.base.clone();
    let admin = login(&base, "admin", PASSWORD).await;
    let user = json!({"username": "alice", "password": "alice-password-1"});
    assert_eq!(post(&base, "/api/users", &admin, user).await.0, 201);
    let alice = login(&base, "alice", "alice-password-1").await;

    let refused = |status: u16, body: &str, code: &str| {
        let error: Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], code, "{status} {body}");
        status
    };
    let (status, body) = fetch(&base, None).await;
    assert_eq!(refused(status, &body, "unauthorized"), 401);
    let (status, body) = fetch(&base, Some("ars_not-a-token")).await;
    assert_eq!(refused(status, &body, "unauthorized"), 401);
    let (status, body) = fetch(&base, Some(&alice)).await;
    assert_eq!(refused(status, &body, "forbidden"), 403);
    let (status, body) = fetch(&base, Some(&admin)).await;
    assert_eq!(status, 200, "{body}");
    server.terminate();
}

#[tokio::test]
async fn with_a_metrics_token_only_that_token_may_read_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "scrape-me-please";
    let server = Server::start_with(dir.path(), Some(PASSWORD), &[("ARS_METRICS_TOKEN", secret)]);
    let base = server.base.clone();
    let admin = login(&base, "admin", PASSWORD).await;
    assert_eq!(fetch(&base, None).await.0, 401);
    assert_eq!(fetch(&base, Some("scrape-me-please!")).await.0, 401);
    assert_eq!(fetch(&base, Some("scrape-me")).await.0, 401);
    // The metrics token is the one credential here: not even an admin's token.
    assert_eq!(fetch(&base, Some(&admin)).await.0, 401);
    let (status, body) = fetch(&base, Some(secret)).await;
    assert_eq!(status, 200, "{body}");
    Metrics::parse(body);
    server.terminate();
}

#[tokio::test]
async fn the_metrics_listener_answers_without_credentials_and_the_main_port_stays_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(
        dir.path(),
        Some(PASSWORD),
        &[("ARS_METRICS_LISTEN", "127.0.0.1:0")],
    );
    let line = server
        .log
        .iter()
        .find(|l| l.contains("serving metrics"))
        .unwrap_or_else(|| panic!("the metrics address is logged:\n{}", server.log.join("\n")));
    let at = line.find("http://").unwrap();
    let url = line[at..].split_whitespace().next().unwrap();
    let metrics_base = url.trim_end_matches("/metrics").to_string();

    let now = scrape(&metrics_base, None).await;
    // Exported from the start, before any run.
    for family in [
        "ars_runs_active",
        "ars_runs_started_total",
        "ars_sse_subscribers",
    ] {
        assert!(now.has_help(family), "{family}\n{}", now.text);
    }
    // Only /metrics is served there: not the API, not the UI.
    let (status, body) = call(
        Method::GET,
        format!("{metrics_base}/api/health"),
        None,
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    // The main port's /metrics still asks for an admin.
    assert_eq!(fetch(&server.base, None).await.0, 401);
    server.terminate();
}
