//! One run's shell cannot take the server down: while an agent runs a fork bomb and a memory
//! hog in its sandbox, `/api/health` keeps answering within a second.
//!
//! Needs bubblewrap (CI installs it); bounded by the commands' own timeouts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use ars_sandbox::SandboxLimits;
use common::{Setup, TestApp};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_answers_health_during_a_fork_bomb_and_a_memory_hog() {
    let app = TestApp::spawn_setup(Setup {
        sandbox_limits: SandboxLimits {
            processes: 128,
            memory_bytes: 512 * 1024 * 1024,
            ..SandboxLimits::default()
        },
        ..Setup::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    let bomb = "bomb() { bomb | bomb & }; bomb; sleep 4";
    // Keeps allocating until the limit stops it, then tries again until the timeout.
    let hog = "for i in 1 2 3 4 5 6 7 8; do \
        python3 -c 'x = []\nwhile True: x.append(bytearray(16 * 1024 * 1024))' 2>/dev/null; \
        done; sleep 4";
    app.scripted_agent(
        &alice,
        "stress",
        json!([
            {"tool_calls": [
                {"name": "execute", "arguments": {"command": bomb, "timeout_s": 5}},
                {"name": "execute", "arguments": {"command": hog, "timeout_s": 5}}
            ]},
            {"text": "survived"}
        ]),
    )
    .await;
    let thread = app.thread(&alice, "stress").await;
    let run = app.start_run(&alice, &thread, "go").await;

    // Probe health every 100 ms until the run ends (at most 30 s).
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut probes = 0;
    loop {
        let asked = Instant::now();
        let health = tokio::time::timeout(
            Duration::from_secs(1),
            app.client.get(format!("{}/api/health", app.base)).send(),
        )
        .await;
        let took = asked.elapsed();
        let answer = health.unwrap_or_else(|_| panic!("/api/health took over 1 s"));
        assert_eq!(answer.unwrap().status(), StatusCode::OK);
        slowest = slowest.max(took);
        probes += 1;
        let status = app.get(&format!("/api/runs/{run}"), &alice).await;
        let done = status.body["status"] != "running" && status.body["status"] != "pending";
        if done || started.elapsed() > Duration::from_secs(30) {
            assert_eq!(status.body["status"], "success", "{:?}", status.body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("{probes} health probes during the stress, slowest {slowest:?}");
    assert!(
        probes >= 20,
        "the stress ended too soon to mean anything ({probes} probes)"
    );
    assert!(
        slowest < Duration::from_secs(1),
        "slowest health answer: {slowest:?}"
    );
    let answer = app.wait(&alice, &run, 5).await;
    assert_eq!(answer["run"]["output"], "survived", "{answer:?}");
}
