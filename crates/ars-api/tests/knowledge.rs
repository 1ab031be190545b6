//! Knowledge bases over HTTP: the resource and its sharing, document uploads in every format
//! with their limits, background ingestion (and its recovery after a restart), search in
//! Chinese and English (BM25 and hybrid), citations, and the knowledge plug-in in runs —
//! through the real server, SQLite or PostgreSQL store, and the loopback OpenAI-compatible
//! server for embeddings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "knowledge/documents.rs"]
mod documents;
#[path = "knowledge/search.rs"]
mod search;

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

use ars_models::{ModelsConfig, ProviderConfig};
use ars_runtime::knowledge::KnowledgeConfig;
use common::openai::FakeOpenAi;
use common::{Setup, TestApp};

/// Creates a knowledge base as `token`, asserting 201; answers its JSON.
async fn kb(app: &TestApp, token: &str, body: Value) -> Value {
    let reply = app.post("/api/knowledge-bases", token, body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body
}

/// Uploads `files` (name, bytes) in one multipart request.
async fn upload(
    app: &TestApp,
    token: &str,
    kb: &str,
    files: &[(&str, Vec<u8>)],
) -> (StatusCode, Value) {
    let mut form = Form::new();
    for (name, bytes) in files {
        form = form.part(
            "files",
            Part::bytes(bytes.clone()).file_name(name.to_string()),
        );
    }
    let res = app
        .client
        .post(format!("{}/api/knowledge-bases/{kb}/documents", app.base))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Waits until every document of `kb` is `ready` or `error`; answers them by name.
async fn settled(app: &TestApp, token: &str, kb: &str) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let reply = app
            .get(&format!("/api/knowledge-bases/{kb}/documents"), token)
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let documents = reply.body.as_array().unwrap().clone();
        if documents
            .iter()
            .all(|d| d["status"] == "ready" || d["status"] == "error")
        {
            return documents;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "ingestion did not settle: {documents:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn search(app: &TestApp, token: &str, kb: &str, query: &str) -> Value {
    let reply = app
        .post(
            &format!("/api/knowledge-bases/{kb}/search"),
            token,
            json!({"query": query, "top_k": 10}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

/// The document names of a search's hits, best first.
fn names(found: &Value) -> Vec<String> {
    found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["document_name"].as_str().unwrap().to_string())
        .collect()
}

fn id(value: &Value) -> String {
    value["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn knowledge_bases_round_trip_and_bad_input_names_the_field() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let created = kb(
        &app,
        &alice,
        json!({"slug": "handbook", "name": "Handbook", "description": "Travel and expenses"}),
    )
    .await;
    assert_eq!(created["settings"]["chunk_size"], 800);
    assert_eq!(created["search"], "bm25");
    assert_eq!(created["status"], "empty");
    assert_eq!(created["counts"]["documents"], 0);
    assert_eq!(created["can_manage"], true);
    let kb_id = id(&created);

    let patched = app
        .patch(
            &format!("/api/knowledge-bases/{kb_id}"),
            &alice,
            json!({"name": "员工手册", "settings": {"chunk_size": 400}}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["name"], "员工手册");
    assert_eq!(patched.body["settings"]["chunk_size"], 400);
    assert_eq!(patched.body["settings"]["chunk_overlap"], 120);

    for (body, status, field) in [
        (
            json!({"slug": "handbook", "name": "Again"}),
            StatusCode::CONFLICT,
            Some("slug"),
        ),
        (
            json!({"slug": "Bad Slug", "name": "x"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("slug"),
        ),
        (
            json!({"slug": "ok", "name": "x", "settings": {"chunk_size": 50}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("settings.chunk_size"),
        ),
        (
            json!({"slug": "ok", "name": "x", "settings": {"chunk_size": 400, "chunk_overlap": 300}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("settings.chunk_overlap"),
        ),
        (
            json!({"slug": "ok", "name": "x", "settings": {"embedding": {"provider": "nowhere", "model": "m"}}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("settings.embedding.provider"),
        ),
        (
            json!({"slug": "ok", "name": "x", "settings": [null, null]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("settings"),
        ),
        (
            json!({"slug": "ok", "name": "x", "settings": {"chunk_size": "big"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("settings"),
        ),
        (
            json!({"slug": "ok", "name": "x", "colour": "red"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
        ),
    ] {
        let reply = app.post("/api/knowledge-bases", &alice, body.clone()).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        if let Some(field) = field {
            assert_eq!(reply.field(), Some(field), "{body}: {}", reply.body);
        }
    }
    let renamed = app
        .patch(
            &format!("/api/knowledge-bases/{kb_id}"),
            &alice,
            json!({"slug": "other"}),
        )
        .await;
    assert_eq!(renamed.status, StatusCode::CONFLICT, "{}", renamed.body);
    assert_eq!(renamed.field(), Some("slug"));
    // Malformed JSON writes nothing.
    let res = app
        .client
        .post(format!("{}/api/knowledge-bases", app.base))
        .bearer_auth(&alice)
        .header("content-type", "application/json")
        .body("{\"slug\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let listed = app.get("/api/knowledge-bases", &alice).await.body;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let unauthenticated = app
        .client
        .get(format!("{}/api/knowledge-bases", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), StatusCode::UNAUTHORIZED);

    let deleted = app
        .delete(&format!("/api/knowledge-bases/{kb_id}"), &alice)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    assert_eq!(
        app.get(&format!("/api/knowledge-bases/{kb_id}"), &alice)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[derive(Clone, Copy, Debug)]
enum Who {
    Owner,
    Admin,
    Manager,
    Listed,
    Stranger,
}

#[tokio::test]
async fn sharing_matrix_for_knowledge_bases_and_their_documents() {
    use StatusCode as S;
    let app = TestApp::spawn().await;
    let (_, owner) = app.user("owner").await;
    let (manager_id, manager) = app.user("manager").await;
    let (listed_id, listed) = app.user("listed").await;
    let (_, stranger) = app.user("stranger").await;
    for visibility in ["private", "users", "public"] {
        for who in [
            Who::Owner,
            Who::Admin,
            Who::Manager,
            Who::Listed,
            Who::Stranger,
        ] {
            let token = match who {
                Who::Owner => owner.clone(),
                Who::Admin => app.admin.clone(),
                Who::Manager => manager.clone(),
                Who::Listed => listed.clone(),
                Who::Stranger => stranger.clone(),
            };
            let slug = format!("{visibility}-{who:?}").to_lowercase();
            let kb_id = id(&kb(
                &app,
                &owner,
                json!({"slug": slug, "name": slug, "share_config": {"visibility": visibility,
                       "user_ids": [listed_id], "manager_ids": [manager_id]}}),
            )
            .await);
            let sees = matches!(
                (who, visibility),
                (Who::Owner | Who::Admin | Who::Manager, _)
                    | (Who::Listed, "users" | "public")
                    | (Who::Stranger, "public")
            );
            let manages = matches!(who, Who::Owner | Who::Admin | Who::Manager);
            let (read, write, delete) = match (sees, manages) {
                (_, true) => (S::OK, S::CREATED, S::NO_CONTENT),
                (true, false) => (S::OK, S::FORBIDDEN, S::FORBIDDEN),
                (false, _) => (S::NOT_FOUND, S::NOT_FOUND, S::NOT_FOUND),
            };
            let base = format!("/api/knowledge-bases/{kb_id}");
            let case = format!("{who:?} on a {visibility} knowledge base");
            assert_eq!(app.get(&base, &token).await.status, read, "{case}: get");
            assert_eq!(
                app.get(&format!("{base}/documents"), &token).await.status,
                read,
                "{case}: documents"
            );
            assert_eq!(
                app.post(&format!("{base}/search"), &token, json!({"query": "x"}))
                    .await
                    .status,
                read,
                "{case}: search"
            );
            assert_eq!(
                app.post(
                    &format!("{base}/documents"),
                    &token,
                    json!({"name": "n.txt", "text": "hello"})
                )
                .await
                .status,
                write,
                "{case}: upload"
            );
            let patch = if manages { S::OK } else { write };
            assert_eq!(
                app.patch(&base, &token, json!({"name": "renamed"}))
                    .await
                    .status,
                patch,
                "{case}: patch"
            );
            let listed_slugs: Vec<String> = app
                .get("/api/knowledge-bases", &token)
                .await
                .body
                .as_array()
                .unwrap()
                .iter()
                .map(|kb| kb["slug"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(listed_slugs.contains(&slug), sees, "{case}: list");
            assert_eq!(
                app.delete(&base, &token).await.status,
                delete,
                "{case}: delete"
            );
        }
    }
}

#[tokio::test]
async fn a_user_cannot_search_or_read_a_knowledge_base_they_cannot_see_through_an_agent() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    let kb_id = id(&kb(&app, &alice, json!({"slug": "secret", "name": "Secret"})).await);
    let reply = app
        .post(
            &format!("/api/knowledge-bases/{kb_id}/documents"),
            &alice,
            json!({"name": "plans.md", "text": "# Plans\n\nThe launch code word is pelican."}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    settled(&app, &alice, &kb_id).await;

    // Bob cannot name it in an agent of his.
    let reply = app
        .post(
            "/api/agent",
            &bob,
            json!({"slug": "snoop", "name": "Snoop", "config_json": {"context": {
                "knowledge_bases": ["secret"]}}}),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(
        reply.field(),
        Some("config_json.context.knowledge_bases[0]")
    );
    // Nor reach it by API or citation.
    assert_eq!(
        app.post(
            &format!("/api/knowledge-bases/{kb_id}/search"),
            &bob,
            json!({"query": "pelican"})
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get(
            "/api/knowledge-citations?ref=%5Bsecret%3Aplans.md%230%5D",
            &bob
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
    let cited = app
        .get(
            "/api/knowledge-citations?ref=%5Bsecret%3Aplans.md%230%5D",
            &alice,
        )
        .await;
    assert_eq!(cited.status, StatusCode::OK, "{}", cited.body);
    assert_eq!(cited.body["document"]["name"], "plans.md");
    assert_eq!(cited.body["chunks"][0]["citation"], "[secret:plans.md#0]");
    assert!(
        cited.body["chunks"][0]["text"]
            .as_str()
            .unwrap()
            .contains("pelican")
    );

    // Alice's public agent names it: for Bob's runs it is dropped, so the tools are not
    // there; Alice's runs search it.
    let script = json!([
        {"tool_calls": [{"name": "knowledge_search", "arguments": {"query": "launch code word"}}]},
        {"tool_calls": [{"name": "knowledge_read", "arguments": {"document": "[secret:plans.md#0]"}}]},
        {"text": "{{last_tool_result}}"}
    ]);
    let reply = app
        .post(
            "/api/agent",
            &alice,
            json!({"slug": "keeper", "name": "Keeper", "share_config": {"visibility": "public"},
                   "config_json": {"context": {"knowledge_bases": ["secret"],
                   "model": {"provider": "scripted", "name": "demo", "script": script}}}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let answer = |token: String| {
        let app = &app;
        async move {
            let thread = app.thread(&token, "keeper").await;
            let run = app
                .start_run(&token, &thread, "what is the code word?")
                .await;
            app.wait(&token, &run, 30).await;
            let messages = app
                .get(&format!("/api/threads/{thread}/messages"), &token)
                .await
                .body;
            serde_json::to_string(&messages).unwrap()
        }
    };
    let alice_saw = answer(alice.clone()).await;
    assert!(alice_saw.contains("pelican"), "{alice_saw}");
    assert!(alice_saw.contains("[secret:plans.md#0]"), "{alice_saw}");
    let bob_saw = answer(bob.clone()).await;
    assert!(!bob_saw.contains("pelican"), "{bob_saw}");
}
