//! A knowledge base's document stream (`GET /api/knowledge-bases/{id}/events`) over the event
//! bus: it follows what is published instead of reading the store on a timer, holds nothing
//! for a knowledge base nobody follows, ends when the knowledge base is deleted, and — over
//! Redis — hears of uploads, ingestion and deletions through another instance.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use common::stream::LiveSse;
use common::{Setup, TestApp};

/// How long a check waits for a message before calling it lost.
const PROMPT: Duration = Duration::from_secs(30);

fn id(value: &Value) -> String {
    value["id"].as_str().unwrap().to_string()
}

async fn kb(app: &TestApp, token: &str, slug: &str) -> String {
    let reply = app
        .post(
            "/api/knowledge-bases",
            token,
            json!({"slug": slug, "name": slug}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    id(&reply.body)
}

async fn open(app: &TestApp, token: &str, kb: &str) -> LiveSse {
    LiveSse::open(
        app,
        &format!("/api/knowledge-bases/{kb}/events"),
        Some(token),
    )
    .await
    .unwrap()
}

async fn upload(app: &TestApp, token: &str, kb: &str, name: &str, text: &str) -> String {
    let reply = app
        .post(
            &format!("/api/knowledge-bases/{kb}/documents"),
            token,
            json!({"name": name, "text": text}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    id(&reply.body["documents"][0])
}

#[tokio::test]
async fn a_stream_follows_the_bus_only_while_open_and_ends_with_its_knowledge_base() {
    let app = TestApp::spawn().await;
    let bus = app.bus.clone().unwrap();
    let (_, alice) = app.user("alice").await;
    let kb_id = kb(&app, &alice, "followed").await;
    assert_eq!(bus.followed_knowledge_bases(), 0, "nobody follows it yet");
    let mut stream = open(&app, &alice, &kb_id).await;
    assert_eq!(stream.next(PROMPT).await.event, "snapshot");
    assert_eq!(bus.followed_knowledge_bases(), 1);

    let document = upload(&app, &alice, &kb_id, "a.txt", "Ready soon.").await;
    let seen = stream
        .until(PROMPT, |m| {
            m.event == "document" && m.data["status"] == "ready"
        })
        .await;
    assert!(seen.iter().all(|m| m.data["id"] == document.as_str()));

    let deleted = app
        .delete(&format!("/api/knowledge-bases/{kb_id}"), &alice)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    while stream.next_or_end(PROMPT).await.is_some() {}
    assert_eq!(stream.ended, Some(Ok(())), "the stream ended cleanly");
    drop(stream);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while bus.followed_knowledge_bases() != 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the knowledge base is still followed after its stream closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn on_redis_a_stream_hears_of_changes_made_through_another_instance() {
    let Ok(url) = std::env::var("ARS_TEST_REDIS_URL") else {
        eprintln!("ARS_TEST_REDIS_URL is not set: skipping the Redis case");
        return;
    };
    let redis = Some((url, format!("ars-test-{}", ars_domain::RunId::new())));
    let here = TestApp::spawn_setup(Setup {
        redis: redis.clone(),
        ..Setup::default()
    })
    .await;
    let there = TestApp::spawn_setup(Setup {
        store: Some(here.store.clone()),
        redis,
        ..Setup::default()
    })
    .await;
    let (_, alice) = here.user("alice").await;
    let kb_id = kb(&here, &alice, "across").await;
    let mut stream = open(&here, &alice, &kb_id).await;
    let snapshot = stream.next(PROMPT).await;
    assert_eq!(snapshot.event, "snapshot");
    assert_eq!(snapshot.data["documents"], json!([]));

    // Uploaded, ingested (by either instance's workers) and deleted through the other one.
    let document = upload(&there, &alice, &kb_id, "far.txt", "Written over there.").await;
    let seen = stream
        .until(PROMPT, |m| {
            m.event == "document" && m.data["status"] == "ready"
        })
        .await;
    assert!(seen.iter().all(|m| m.data["id"] == document.as_str()));
    let deleted = there
        .delete(
            &format!("/api/knowledge-bases/{kb_id}/documents/{document}"),
            &alice,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let removed = stream.until(PROMPT, |m| m.event == "removed").await;
    assert_eq!(removed.last().unwrap().data["id"], document.as_str());

    // The knowledge base deleted over there ends the stream here.
    let deleted = there
        .delete(&format!("/api/knowledge-bases/{kb_id}"), &alice)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    while stream.next_or_end(PROMPT).await.is_some() {}
    assert_eq!(stream.ended, Some(Ok(())));
}
