//! Several `ars serve` instances on one PostgreSQL and one Redis (issue 11): leases keep a live
//! instance's runs its own, a dead instance's runs are reaped within the lease TTL, a fenced
//! executor writes nothing more, and waiting, streaming and subagents work across instances.
//! Real processes; runs whenever `ARS_TEST_DATABASE_URL` and `ARS_TEST_REDIS_URL` are set.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::cluster::{
    Cluster, EventStream, LEASE_TTL_S, ThreadEvents, assert_not_interleaved, at, is_terminal,
    of_run, since, worker,
};
use serde_json::{Value, json};

/// Steps of a worker run: about 6 s, long enough to outlive a kill, a reap or a restart.
const STEPS: usize = 30;

/// Messages a finished worker run wrote: its input, an assistant message and a tool result per
/// step, the answer.
const WORKER_MESSAGES: usize = 2 * STEPS + 2;

/// How much later than its lease TTL a dead instance's run may be reaped: a reaper beats every
/// third of the TTL, plus the time to read the run.
const REAP_MARGIN: Duration = Duration::from_millis(1500);

/// Asserts a worker run succeeded with its whole history, not interleaved with any other.
async fn assert_worker_succeeded(c: &Cluster, via: usize, thread: &str, run: &str, input: &str) {
    let ended = c.until_ended(via, run, 30).await;
    assert_eq!(ended["status"], "success", "{ended}");
    assert_eq!(ended["output"], format!("done {input}"), "{ended}");
    let messages = c.messages(via, thread).await;
    assert_not_interleaved(&messages);
    assert_eq!(
        of_run(&messages, run).len(),
        WORKER_MESSAGES,
        "{messages:#?}"
    );
}

/// A run on its own thread: (instance, thread, run, input).
type Job = (usize, String, String, String);

/// Starts one worker run through each of `instances` on a new thread; waits until all of them
/// have committed a tool step.
async fn start_jobs(c: &Cluster, instances: &[usize], tag: &str) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (k, &i) in instances.iter().enumerate() {
        let thread = c.thread(i, "worker").await;
        let input = format!("{tag}-{k}");
        let run = c.start_run(i, &thread, &input).await;
        jobs.push((i, thread, run, input));
    }
    for (i, thread, run, _) in &jobs {
        c.until_messages(*i, thread, run, 3).await;
    }
    jobs
}

#[tokio::test]
async fn starting_an_instance_does_not_touch_another_instances_active_runs() {
    let Some(mut c) = Cluster::start("inst_start", 1).await else {
        return;
    };
    c.agent(0, "worker", worker(STEPS)).await;
    let jobs = start_jobs(&c, &[0; 5], "a").await;

    // B's start-up recovery and its reaper see A's five active runs, whose leases A renews.
    let b = c.add();
    for (_, _, run, _) in &jobs {
        let now = c.run(b, run).await;
        assert_eq!(now["status"], "running", "still A's after B started: {now}");
    }
    for (_, thread, run, input) in &jobs {
        assert_worker_succeeded(&c, b, thread, run, input).await;
    }
}

#[tokio::test]
async fn a_killed_instances_runs_are_interrupted_within_the_lease_ttl_and_no_other_run_is_disturbed()
 {
    let Some(mut c) = Cluster::start("inst_kill", 3).await else {
        return;
    };
    c.agent(0, "worker", worker(STEPS)).await;
    let jobs = start_jobs(&c, &[0, 0, 1, 1, 2, 2], "k").await;
    let (killed, live): (Vec<_>, Vec<_>) = jobs.iter().partition(|(i, ..)| *i == 2);

    c.kill(2);
    let killed_at = Instant::now();
    eventually_all_ended(&c, 0, &killed, LEASE_TTL_S + 10).await;
    let reaped_after = killed_at.elapsed();
    eprintln!("the killed instance's runs were interrupted {reaped_after:?} after the kill");
    assert!(
        reaped_after <= Duration::from_secs(LEASE_TTL_S) + REAP_MARGIN,
        "reaped only after {reaped_after:?} (lease TTL {LEASE_TTL_S} s)"
    );
    // The live instances' runs were active all along and are left alone.
    for (_, _, run, _) in &live {
        assert_eq!(c.run(0, run).await["status"], "running");
    }
    let mut again = Vec::new();
    for (_, thread, run, _) in &killed {
        let ended = c.run(0, run).await;
        assert_eq!(ended["status"], "interrupted", "{ended}");
        let messages = c.messages(0, thread).await;
        for message in of_run(&messages, run) {
            assert!(
                at(&message["created_at"]) <= at(&ended["finished_at"]),
                "{message}"
            );
        }
        // The killed instance's threads take a new run, executed by a live instance.
        let input = format!("{thread}-again");
        let next = c.start_run(1, thread, &input).await;
        again.push((1, thread.clone(), next, input));
    }
    for (i, thread, run, input) in live.into_iter().chain(&again) {
        assert_worker_succeeded(&c, *i, thread, run, input).await;
    }
}

/// Waits until every job's run is terminal, read through instance `via`.
async fn eventually_all_ended(c: &Cluster, via: usize, jobs: &[&Job], secs: u64) {
    common::eventually(secs, "the runs' ends", || async {
        for (_, _, run, _) in jobs {
            if !is_terminal(&c.run(via, run).await) {
                return false;
            }
        }
        true
    })
    .await;
}

#[tokio::test]
async fn a_rolling_restart_interrupts_only_the_stopping_instances_runs() {
    let Some(mut c) = Cluster::start("inst_rolling", 3).await else {
        return;
    };
    c.agent(0, "worker", worker(STEPS)).await;
    for stopping in 0..3 {
        let jobs = start_jobs(&c, &[0, 1, 2], &format!("round{stopping}")).await;
        c.terminate(stopping);
        c.restart(stopping);
        // The others' runs are still active after the instance went and came back.
        for (i, _, run, _) in jobs.iter().filter(|(i, ..)| *i != stopping) {
            assert_eq!(c.run(*i, run).await["status"], "running");
        }
        for (i, thread, run, input) in &jobs {
            if *i == stopping {
                let ended = c.until_ended(*i, run, 30).await;
                assert_eq!(ended["status"], "interrupted", "{ended}");
                assert!(
                    ended["error"].as_str().unwrap().contains("stopped"),
                    "{ended}"
                );
                assert_not_interleaved(&c.messages(*i, thread).await);
            } else {
                assert_worker_succeeded(&c, *i, thread, run, input).await;
            }
        }
    }
}

#[tokio::test]
async fn a_run_reaped_while_its_executor_lives_writes_nothing_afterwards() {
    let Some(c) = Cluster::start("inst_fence", 2).await else {
        return;
    };
    c.agent(0, "worker", worker(STEPS)).await;
    let thread = c.thread(0, "worker").await;
    let old = c.start_run(0, &thread, "old").await;
    c.until_messages(1, &thread, &old, 5).await;

    // A is frozen mid-run: its lease runs out and B reaps the run.
    c.freeze(0);
    let frozen_at = Instant::now();
    let reaped = c.until_ended(1, &old, LEASE_TTL_S + 10).await;
    eprintln!(
        "the frozen instance's run was reaped {:?} after SIGSTOP",
        frozen_at.elapsed()
    );
    assert_eq!(reaped["status"], "interrupted", "{reaped}");
    let written = of_run(&c.messages(1, &thread).await, &old).len();
    let new = c.start_run(1, &thread, "new").await;

    // A carries on where it stopped; the store refuses what it still tries to write.
    c.thaw(0);
    // The old executor's last event is the run's end as stored: it has finished (fenced).
    let mut events = EventStream::open(&c.base(1), &c.token, &old, None).await;
    let mut last = None;
    while let Some((_, event)) = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("the old executor ends its run after SIGCONT")
    {
        last = Some(event);
    }
    let last = last.unwrap();
    assert_eq!(
        (&last["type"], &last["status"]),
        (&json!("run_status"), &json!("interrupted"))
    );
    assert_worker_succeeded(&c, 1, &thread, &new, "new").await;

    let messages = c.messages(1, &thread).await;
    let old_messages = of_run(&messages, &old);
    assert_eq!(
        old_messages.len(),
        written,
        "the old run wrote after its end"
    );
    for message in old_messages {
        assert!(
            at(&message["created_at"]) <= at(&reaped["finished_at"]),
            "{message}"
        );
    }
    assert_eq!(
        c.run(0, &old).await,
        reaped,
        "the old run's end is written once"
    );
}

#[tokio::test]
async fn waiting_on_one_instance_for_a_run_on_another_answers_when_it_ends() {
    let Some(c) = Cluster::start("inst_wait", 2).await else {
        return;
    };
    c.agent(0, "worker", worker(10)).await;
    let thread = c.thread(0, "worker").await;
    let run = c.start_run(0, &thread, "awaited").await;
    c.until_messages(1, &thread, &run, 2).await;

    let asked = Instant::now();
    let reply = c
        .get(1, &format!("/api/runs/{run}/wait?timeout_s=30"))
        .await;
    let lag = since(at(&reply["run"]["finished_at"]));
    eprintln!("the wait answered {lag:?} after the run ended");
    assert_eq!(reply["wait_timed_out"], false, "{reply}");
    assert_eq!(reply["run"]["status"], "success", "{reply}");
    assert_eq!(reply["run"]["output"], "done awaited", "{reply}");
    assert!(
        asked.elapsed() > Duration::from_millis(500),
        "the wait began before the end"
    );
    assert!(
        lag < Duration::from_millis(500),
        "answered {lag:?} after the end"
    );
}

#[tokio::test]
async fn an_event_stream_resumes_on_another_instance_with_every_event_once() {
    let Some(mut c) = Cluster::start("inst_sse", 3).await else {
        return;
    };
    c.agent(0, "worker", worker(15)).await;
    let thread = c.thread(0, "worker").await;
    let run = c.start_run(0, &thread, "streamed").await;

    let mut seen: Vec<(u64, Value)> = Vec::new();
    let mut first = EventStream::open(&c.base(1), &c.token, &run, None).await;
    while seen.len() < 8 {
        seen.push(first.next().await.expect("the run streams from B"));
    }
    drop(first);
    c.kill(1);
    assert_eq!(c.run(2, &run).await["status"], "running", "resumed mid-run");

    let last_id = seen.last().unwrap().0;
    let mut resumed = EventStream::open(&c.base(2), &c.token, &run, Some(last_id)).await;
    let mut live = 0;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(20), resumed.next())
        .await
        .expect("the stream ends with the run")
    {
        live += 1;
        seen.push(event);
    }
    let ids: Vec<u64> = seen.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "every event once, in order"
    );
    assert!(
        seen[8..].iter().any(|(_, e)| e["type"] == "message_delta"),
        "the resumed part is live: {live} events"
    );
    let (_, end) = seen.last().unwrap();
    assert_eq!(
        (&end["type"], &end["status"]),
        (&json!("run_status"), &json!("success"))
    );
    assert_eq!(end["output"], "done streamed");
}

/// A parent that starts a background `helper` and ends, answering the child's run id.
fn starts_a_background_child() -> Value {
    json!([
        {"tool_calls": [{"name": "subagent_start",
            "arguments": {"description": "background job", "subagent_slug": "helper"}}]},
        {"text": "{{last_tool_result.run_id}}"}
    ])
}

/// Starts the parent's first run through instance `i` and answers (thread, parent run, child
/// run) once the parent run has ended, the child still running.
async fn parent_with_background_child(c: &Cluster, i: usize) -> (String, String, String) {
    c.agent(i, "boss", starts_a_background_child()).await;
    let thread = c.thread(i, "boss").await;
    let parent = c.start_run(i, &thread, "start it").await;
    let ended = c.until_ended(i, &parent, 20).await;
    assert_eq!(ended["status"], "success", "{ended}");
    let child = ended["output"].as_str().unwrap().to_string();
    let now = c.run(i, &child).await;
    assert!(
        !is_terminal(&now),
        "the child outlives its parent's run: {now}"
    );
    (thread, parent, child)
}

#[tokio::test]
async fn subagent_await_on_one_instance_gets_a_child_running_on_another() {
    let Some(c) = Cluster::start("inst_await", 2).await else {
        return;
    };
    c.subagent(
        0,
        "helper",
        json!([{"text": "helped with {{input}}", "delay_ms": 3000}]),
    )
    .await;
    let (thread, _, child) = parent_with_background_child(&c, 0).await;

    // The parent's next run, executed by B, awaits the child A executes.
    c.set_script(1, "boss", json!([
        {"tool_calls": [{"name": "subagent_await", "arguments": {"run_id": "{{input}}", "timeout_s": 30}}]},
        {"text": "child said: {{last_tool_result.output}}"}
    ]))
    .await;
    let second = c.start_run(1, &thread, &child).await;
    let ended = c.until_ended(1, &second, 30).await;
    assert_eq!(ended["status"], "success", "{ended}");
    assert_eq!(ended["output"], "child said: helped with background job");
    let child = c.run(1, &child).await;
    assert_eq!(child["status"], "success", "{child}");
    assert!(
        at(&child["finished_at"]) > at(&ended["started_at"]),
        "the child was still running when the await began: {child} {ended}"
    );
}

#[tokio::test]
async fn a_background_childs_notice_is_written_once_when_another_instance_cancels_it() {
    let Some(c) = Cluster::start("inst_notice", 2).await else {
        return;
    };
    c.subagent(0, "helper", json!([{"text": "never", "delay_ms": 600_000}]))
        .await;
    let (thread, _, child) = parent_with_background_child(&c, 0).await;

    let (status, cancelled) = c
        .post(1, &format!("/api/runs/{child}/cancel"), json!({}))
        .await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    // A, still executing the child, stops it; its stream ends with the stored end.
    let mut events = EventStream::open(&c.base(1), &c.token, &child, None).await;
    let mut last = None;
    while let Some((_, event)) = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("the child's executor stops")
    {
        last = Some(event);
    }
    assert_eq!(last.unwrap()["status"], "cancelled");

    let notices = || async {
        c.messages(0, &thread)
            .await
            .into_iter()
            .filter(|m| {
                m["role"] == "system"
                    && m["content"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("Background subagent `helper`"))
            })
            .collect::<Vec<_>>()
    };
    // Whoever else might write a second notice has had a heartbeat and more to do it.
    let deadline = Instant::now() + Duration::from_secs(LEASE_TTL_S);
    while Instant::now() < deadline {
        assert!(notices().await.len() <= 1);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let notices = notices().await;
    assert_eq!(notices.len(), 1, "{notices:#?}");
    let text = notices[0]["content"].as_str().unwrap();
    assert!(text.contains("`helper` was cancelled"), "{text}");
    assert_eq!(
        (
            &notices[0]["notice"]["run_id"],
            &notices[0]["notice"]["status"]
        ),
        (&json!(child), &json!("cancelled"))
    );
    assert_eq!(c.run(0, &child).await["status"], "cancelled");
}

#[tokio::test]
async fn a_thread_stream_on_one_instance_follows_a_child_running_on_another_to_its_notice() {
    let Some(c) = Cluster::start("inst_thread_sse", 2).await else {
        return;
    };
    c.subagent(0, "helper", json!([{"text": "helped", "delay_ms": 1500}]))
        .await;
    c.agent(0, "boss", starts_a_background_child()).await;
    let thread = c.thread(0, "boss").await;
    let mut stream = ThreadEvents::open(&c.base(0), &c.token, &thread).await;
    let (event, snapshot) = stream.next().await.expect("a snapshot first");
    assert_eq!(
        (event.as_str(), &snapshot["subagents"]),
        ("snapshot", &json!([]))
    );

    // The parent, and so its child, executes on B; the stream is A's.
    let parent = c.start_run(1, &thread, "start it").await;
    let mut seen: Vec<(String, Value)> = Vec::new();
    while seen.last().is_none_or(|(event, _)| event != "notice") {
        let next = tokio::time::timeout(Duration::from_secs(20), stream.next())
            .await
            .expect("the child's changes reach A")
            .expect("the stream stays open");
        seen.push(next);
    }
    let statuses = |event: &str, key: &str, id: &str| {
        let mut statuses: Vec<String> = Vec::new();
        for (_, data) in seen.iter().filter(|(e, d)| e == event && d[key] == id) {
            let status = data["status"].as_str().unwrap().to_string();
            if statuses.last() != Some(&status) {
                statuses.push(status);
            }
        }
        statuses
    };
    let (_, notice) = seen.last().unwrap();
    let child = notice["subagent"]["run_id"].as_str().unwrap();
    // Slots were free: each run is created running.
    assert_eq!(
        statuses("subagent", "run_id", child),
        ["running", "success"]
    );
    assert_eq!(statuses("run", "id", &parent), ["running", "success"]);
    assert_eq!(notice["message"]["notice"]["run_id"], child);
    assert_eq!(notice["subagent"]["output"], "helped");
    // What the stream said is what either instance now answers.
    let list = c.get(0, &format!("/api/threads/{thread}/subagents")).await;
    let (_, last_entry) = seen.iter().rfind(|(e, _)| e == "subagent").unwrap();
    assert_eq!(&list[0], last_entry);
}

#[tokio::test]
async fn a_cancel_through_another_instance_ends_the_run_within_a_second() {
    let Some(mut c) = Cluster::start("inst_cancel", 3).await else {
        return;
    };
    c.agent(0, "worker", worker(STEPS)).await;
    let jobs = start_jobs(&c, &[0], "cancel").await;

    // Instance 0 executes the run; the cancel goes through instance 1.
    let (_, thread, run, _) = &jobs[0];
    let asked = Instant::now();
    let (status, cancelled) = c
        .post(1, &format!("/api/runs/{run}/cancel"), json!({}))
        .await;
    let took = asked.elapsed();
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
    assert!(
        c.log(0).contains("cancelled through another instance"),
        "{}",
        c.log(0)
    );
    // Its executor stopped there and then: nothing written after the end, and the thread
    // takes a new run.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ended = c.run(0, run).await;
    for message in of_run(&c.messages(0, thread).await, run) {
        assert!(
            at(&message["created_at"]) <= at(&ended["finished_at"]),
            "written after the cancel: {message}"
        );
    }
    let next = c.start_run(2, thread, "after the cancel").await;
    assert_eq!(c.until_ended(2, &next, 30).await["status"], "success");

    // With its instance dead and its lease still running, the run is cancelled all the same,
    // before the reaper could have ended it `interrupted`.
    let jobs = start_jobs(&c, &[0], "dead").await;
    let (_, _, run, _) = &jobs[0];
    c.kill(0);
    let asked = Instant::now();
    let (status, cancelled) = c
        .post(2, &format!("/api/runs/{run}/cancel"), json!({}))
        .await;
    let took = asked.elapsed();
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(
        took < Duration::from_secs(LEASE_TTL_S),
        "the cancel of a dead instance's run took {took:?}"
    );
}

#[tokio::test]
async fn without_redis_cancel_and_wait_cross_instances_through_postgres_notify() {
    let Some(mut c) = Cluster::start_on_postgres_only("inst_pg_only", 2).await else {
        return;
    };
    c.agent(0, "worker", worker(STEPS)).await;
    let jobs = start_jobs(&c, &[0, 0], "pg").await;

    // A wait through B (whose in-process bus knows nothing of A's runs) answers when the run
    // ends, woken by A's announcement.
    let (_, _, waited, _) = &jobs[0];
    let wait = tokio::spawn({
        let (base, token, run) = (c.base(1), c.token.clone(), waited.clone());
        async move { common::get(&base, &format!("/api/runs/{run}/wait?timeout_s=60"), &token).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !wait.is_finished(),
        "the wait answered before the run ended"
    );

    // A cancel through B stops the run on A within a second.
    let (_, _, cancelled, _) = &jobs[1];
    let asked = Instant::now();
    let (status, run) = c
        .post(1, &format!("/api/runs/{cancelled}/cancel"), json!({}))
        .await;
    let took = asked.elapsed();
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["status"], "cancelled", "{run}");
    assert!(took < Duration::from_secs(1), "the cancel took {took:?}");
    // A heard it and stopped the run (B did not end it in the store for want of an answer).
    assert!(
        c.log(0).contains("cancelled through another instance"),
        "{}",
        c.log(0)
    );

    let reply = tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the wait answers")
        .unwrap();
    assert_eq!(reply["wait_timed_out"], false, "{reply}");
    assert_eq!(reply["run"]["status"], "success", "{reply}");
    let lag = since(at(&reply["run"]["finished_at"]));
    assert!(
        lag < Duration::from_millis(500),
        "the wait answered {lag:?} after the run ended"
    );
}

/// The admin disables (or enables) user `id` through instance `via`.
async fn set_disabled(c: &Cluster, via: usize, id: &str, disabled: bool) {
    let (status, body) = common::call(
        reqwest::Method::PATCH,
        format!("{}/api/users/{id}", c.base(via)),
        Some(&c.token),
        Some(json!({ "disabled": disabled })),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

/// Waits until instance `i` answers `token`'s `GET /api/me` with `status`; fails after
/// `within`.
async fn until_answered(c: &Cluster, i: usize, token: &str, status: u16, within: Duration) {
    let started = Instant::now();
    loop {
        let (now, body) = common::call(
            reqwest::Method::GET,
            format!("{}/api/me", c.base(i)),
            Some(token),
            None,
        )
        .await;
        if now == status {
            return;
        }
        assert!(
            started.elapsed() < within,
            "instance {i} still answers {now} after {:?}: {body}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_account_change_on_one_instance_holds_on_every_other_before_remembered_credentials_go_stale()
 {
    let Some(c) = Cluster::start("inst_accounts", 2).await else {
        return;
    };
    const ADA: &str = "correct horse battery";
    let (status, ada) = c
        .post(0, "/api/users", json!({"username": "ada", "password": ADA}))
        .await;
    assert_eq!(status, 201, "{ada}");
    let laptop = common::login(&c.base(0), "ada", ADA).await;
    let phone = common::login(&c.base(0), "ada", ADA).await;
    // Both instances have read both sessions: each remembers them now.
    for i in 0..2 {
        for token in [&laptop, &phone] {
            common::get(&c.base(i), "/api/me", token).await;
        }
    }
    // Well under the second an instance trusts what it read: only the signal can say it.
    let prompt = Duration::from_millis(600);

    // The laptop logs out through instance 0: instance 1 refuses it, the phone goes on.
    let (status, body) = common::call(
        reqwest::Method::POST,
        format!("{}/api/auth/logout", c.base(0)),
        Some(&laptop),
        None,
    )
    .await;
    assert_eq!(status, 204, "{body}");
    until_answered(&c, 1, &laptop, 401, prompt).await;
    common::get(&c.base(1), "/api/me", &phone).await;

    // The admin disables ada through instance 1: instance 0 refuses the phone as disabled.
    let ada = ada["id"].as_str().unwrap();
    set_disabled(&c, 1, ada, true).await;
    until_answered(&c, 0, &phone, 403, prompt).await;

    // Enabled again: the phone works again on both (a token survives its account's disabling).
    set_disabled(&c, 0, ada, false).await;
    until_answered(&c, 1, &phone, 200, prompt).await;
    until_answered(&c, 0, &phone, 200, prompt).await;
}
