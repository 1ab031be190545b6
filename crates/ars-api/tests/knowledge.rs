//! Knowledge bases over HTTP: the resource and its sharing, document uploads in every format
//! with their limits, background ingestion (and its recovery after a restart), search in
//! Chinese and English (BM25 and hybrid), citations, and the knowledge plug-in in runs —
//! through the real server, SQLite or PostgreSQL store, and the loopback OpenAI-compatible
//! server for embeddings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

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

#[tokio::test]
async fn every_format_is_parsed_and_found_and_a_corrupt_pdf_fails_only_its_document() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let kb_id = id(&kb(&app, &alice, json!({"slug": "formats", "name": "Formats"})).await);
    let mut corrupt = ars_knowledge::samples::pdf("x");
    corrupt.truncate(40);
    corrupt.extend_from_slice(&[0xff; 64]);
    let (gb18030, _, _) = encoding_rs::GB18030.encode("国庆节放假安排：十月一日至七日");
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("plain.txt", b"The zeppelin hangar opens at dawn.".to_vec()),
        ("legacy.txt", gb18030.into_owned()),
        (
            "guide.md",
            b"# Guide\n\n## Parking\n\nThe quokka garage is on level two.".to_vec(),
        ),
        (
            "page.html",
            b"<html><body><h1>Menu</h1><script>ignored()</script><p>Our marmalade is homemade.</p></body></html>"
                .to_vec(),
        ),
        (
            "prices.csv",
            b"item,price\nxylophone,120\nkazoo,3\n".to_vec(),
        ),
        (
            "config.json",
            br#"{"service": {"name": "walrus-gateway", "port": 8443}}"#.to_vec(),
        ),
        ("policy.docx", ars_knowledge::samples::docx()),
        (
            "hotels.pdf",
            ars_knowledge::samples::pdf("Hotels in Reykjavik cost at most 600 per night"),
        ),
        ("broken.pdf", corrupt),
    ];
    let (status, body) = upload(&app, &alice, &kb_id, &files).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let uploaded = body["documents"].as_array().unwrap();
    assert_eq!(uploaded.len(), files.len());
    assert!(uploaded.iter().all(|d| d["status"] == "pending"));

    let documents = settled(&app, &alice, &kb_id).await;
    for document in &documents {
        if document["name"] == "broken.pdf" {
            assert_eq!(document["status"], "error", "{document}");
            let reason = document["error"].as_str().unwrap();
            assert!(reason.contains("PDF"), "{reason}");
        } else {
            assert_eq!(document["status"], "ready", "{document}");
            assert!(document["chunk_count"].as_u64().unwrap() >= 1);
        }
    }
    for (query, expected) in [
        ("zeppelin", "plain.txt"),
        ("国庆节", "legacy.txt"),
        ("quokka", "guide.md"),
        ("marmalade", "page.html"),
        ("xylophone", "prices.csv"),
        ("walrus-gateway", "config.json"),
        ("报销制度", "policy.docx"),
        ("Reykjavik", "hotels.pdf"),
    ] {
        let found = search(&app, &alice, &kb_id, query).await;
        assert_eq!(
            names(&found).first().map(String::as_str),
            Some(expected),
            "{query}: {found}"
        );
    }
    // The script of the HTML page is not text.
    assert!(names(&search(&app, &alice, &kb_id, "ignored").await).is_empty());
    // The heading path is kept for citations.
    let guide = search(&app, &alice, &kb_id, "quokka").await;
    assert_eq!(
        guide["hits"][0]["heading_path"],
        json!(["Guide", "Parking"])
    );
    assert_eq!(guide["hits"][0]["citation"], "[formats:guide.md#0]");
    assert!(
        guide["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<b>quokka</b>")
    );

    // A retry puts the failed one back, and it fails again, alone.
    let broken = documents
        .iter()
        .find(|d| d["name"] == "broken.pdf")
        .unwrap();
    let retried = app
        .post(
            &format!(
                "/api/knowledge-bases/{kb_id}/documents/{}/retry",
                id(broken)
            ),
            &alice,
            json!({}),
        )
        .await;
    assert_eq!(retried.status, StatusCode::OK, "{}", retried.body);
    assert_eq!(retried.body["status"], "pending");
    let again = settled(&app, &alice, &kb_id).await;
    assert_eq!(
        again
            .iter()
            .filter(|d| d["status"] == "error")
            .map(|d| d["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        vec!["broken.pdf"]
    );
    let ready = documents.iter().find(|d| d["name"] == "plain.txt").unwrap();
    let not_failed = app
        .post(
            &format!("/api/knowledge-bases/{kb_id}/documents/{}/retry", id(ready)),
            &alice,
            json!({}),
        )
        .await;
    assert_eq!(not_failed.status, StatusCode::CONFLICT);

    // The original comes back as uploaded, named in UTF-8.
    let policy = documents
        .iter()
        .find(|d| d["name"] == "policy.docx")
        .unwrap();
    let res = app
        .client
        .get(format!(
            "{}/api/knowledge-bases/{kb_id}/documents/{}/content",
            app.base,
            id(policy)
        ))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(
        res.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment")
    );
    assert_eq!(
        res.bytes().await.unwrap().to_vec(),
        ars_knowledge::samples::docx()
    );
    // The knowledge base counts what it holds and says some failed.
    let counted = app
        .get(&format!("/api/knowledge-bases/{kb_id}"), &alice)
        .await
        .body;
    assert_eq!(counted["counts"]["documents"], files.len());
    assert_eq!(counted["counts"]["failed"], 1);
    assert_eq!(counted["status"], "error");
}

#[tokio::test]
async fn uploads_over_a_limit_get_413_saying_it_and_bad_files_get_422_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let mut knowledge = KnowledgeConfig::new(dir.path());
    knowledge.max_document_bytes = 1000;
    knowledge.max_kb_bytes = 2500;
    let app = TestApp::spawn_setup(Setup {
        knowledge: Some(knowledge),
        ..Setup::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    let kb_id = id(&kb(&app, &alice, json!({"slug": "small", "name": "Small"})).await);
    let docs = format!("/api/knowledge-bases/{kb_id}/documents");

    let (status, body) = upload(&app, &alice, &kb_id, &[("big.txt", vec![b'a'; 1001])]).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("big.txt") && message.contains("1000 bytes"),
        "{message}"
    );

    let (status, body) = upload(
        &app,
        &alice,
        &kb_id,
        &[
            ("one.txt", vec![b'a'; 900]),
            ("two.txt", vec![b'b'; 900]),
            ("three.txt", vec![b'c'; 900]),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("small") && message.contains("2.4 KiB"),
        "{message}"
    );

    for (files, field) in [
        (vec![("tool.exe", b"MZ".to_vec())], "files[0]"),
        (
            vec![("fine.txt", b"ok".to_vec()), ("empty.md", Vec::new())],
            "files[1]",
        ),
        (
            vec![("same.txt", b"a".to_vec()), ("same.txt", b"b".to_vec())],
            "files[1]",
        ),
        (vec![("[draft].txt", b"a".to_vec())], "files[0]"),
    ] {
        let (status, body) = upload(&app, &alice, &kb_id, &files).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["field"], field, "{body}");
    }
    // JSON text: too long, empty, or of an unread format.
    for (body, status, field) in [
        (
            json!({"name": "long", "text": "x".repeat(1001)}),
            StatusCode::PAYLOAD_TOO_LARGE,
            "text",
        ),
        (
            json!({"name": "blank", "text": "  "}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "text",
        ),
        (
            json!({"name": "slides.pptx", "text": "hi"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
        ),
        (
            json!({"name": " ", "text": "hi"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
        ),
    ] {
        let reply = app.post(&docs, &alice, body.clone()).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        assert_eq!(reply.field(), Some(field), "{}", reply.body);
    }
    let res = app
        .client
        .post(format!("{}{docs}", app.base))
        .bearer_auth(&alice)
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        app.get(&docs, &alice)
            .await
            .body
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Replacing a document counts its new size, not both.
    let reply = app
        .post(
            &docs,
            &alice,
            json!({"name": "notes", "text": "a".repeat(1000)}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(reply.body["documents"][0]["name"], "notes.txt");
    for _ in 0..3 {
        let reply = app
            .post(
                &docs,
                &alice,
                json!({"name": "notes.txt", "text": "b".repeat(1000)}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
    let listed = app.get(&docs, &alice).await.body;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["version"], 4);
}

#[tokio::test]
async fn chinese_queries_match_words_not_characters_and_english_matches_stems() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let kb_id = id(&kb(&app, &alice, json!({"slug": "words", "name": "Words"})).await);
    let docs = format!("/api/knowledge-bases/{kb_id}/documents");
    for (name, text) in [
        ("life.txt", "我们研究生命起源的化学过程。"),
        ("students.txt", "研究生每月的补贴是两千元。"),
        ("pool.md", "# 数据库\n\n连接池的大小默认是二十个连接。"),
        (
            "runners.md",
            "# Training\n\nThe runners were running along the river.",
        ),
        ("cooking.txt", "Bake the bread for forty minutes."),
    ] {
        let reply = app
            .post(&docs, &alice, json!({"name": name, "text": text}))
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
    settled(&app, &alice, &kb_id).await;
    // 研究生 (graduate student) is one word: a text about 研究 生命 (studying life) holds its
    // characters in a row but not the word.
    assert_eq!(
        names(&search(&app, &alice, &kb_id, "研究生的补贴").await)[0],
        "students.txt"
    );
    let life = names(&search(&app, &alice, &kb_id, "生命起源").await);
    assert_eq!(life, vec!["life.txt"]);
    assert_eq!(
        names(&search(&app, &alice, &kb_id, "连接池多大").await)[0],
        "pool.md"
    );
    // English: "run" finds "running" and "runners".
    assert_eq!(
        names(&search(&app, &alice, &kb_id, "run").await),
        vec!["runners.md"]
    );
    assert_eq!(
        names(&search(&app, &alice, &kb_id, "baking breads").await),
        vec!["cooking.txt"]
    );
    // Bad queries name the field.
    for (body, field) in [
        (json!({"query": "  "}), "query"),
        (json!({"query": "x".repeat(1001)}), "query"),
        (json!({"query": "run", "top_k": 0}), "top_k"),
        (json!({"query": "run", "top_k": 51}), "top_k"),
    ] {
        let reply = app
            .post(
                &format!("/api/knowledge-bases/{kb_id}/search"),
                &alice,
                body,
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            reply.body
        );
        assert_eq!(reply.field(), Some(field));
    }
}

#[tokio::test]
async fn hybrid_search_fuses_the_bm25_and_vector_rankings_by_reciprocal_rank() {
    let embedder = FakeOpenAi::start("embedder", None, &["hash-256"]).await;
    let app = TestApp::spawn_setup(Setup {
        models: ModelsConfig {
            providers: vec![ProviderConfig::openai_compatible(
                "local",
                &embedder.base_url,
            )],
            ..ModelsConfig::default()
        },
        ..Setup::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    let created = kb(
        &app,
        &alice,
        json!({"slug": "hybrid", "name": "Hybrid",
               "settings": {"embedding": {"provider": "local", "model": "hash-256"}}}),
    )
    .await;
    assert_eq!(created["search"], "hybrid");
    let kb_id = id(&created);
    let texts = [
        ("a.txt", "Reimbursement of hotel costs needs the invoice."),
        (
            "b.txt",
            "Hotels near the office are booked by the travel desk.",
        ),
        ("c.txt", "The office kitchen has a coffee machine."),
        (
            "d.txt",
            "Invoices for travel are reimbursed within ten days.",
        ),
        ("e.txt", "差旅报销需要发票，酒店费用按标准报销。"),
    ];
    for (name, text) in texts {
        let reply = app
            .post(
                &format!("/api/knowledge-bases/{kb_id}/documents"),
                &alice,
                json!({"name": name, "text": text}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
    settled(&app, &alice, &kb_id).await;
    assert!(
        embedder.seen().iter().any(|s| s.path == "/v1/embeddings"),
        "the chunks were embedded"
    );

    // The expected order, computed apart: BM25 over the same texts, cosine over the same
    // embeddings, fused by reciprocal rank.
    let query = "hotel invoice reimbursement";
    let index = ars_knowledge::index::KbIndex::in_memory().unwrap();
    let mut vectors = ars_knowledge::vectors::VectorIndex::default();
    for (name, text) in texts {
        index
            .add_chunks(&[ars_knowledge::index::IndexedChunk {
                chunk_id: name.to_string(),
                document_id: name.to_string(),
                text: text.to_string(),
            }])
            .unwrap();
        vectors.add_rows(
            name,
            &[(
                name.to_string(),
                ars_knowledge::vectors::hash_embedding(text),
            )],
        );
    }
    index.commit().unwrap();
    let words: Vec<String> = index
        .search(query, 50)
        .unwrap()
        .into_iter()
        .map(|h| h.chunk_id)
        .collect();
    let near: Vec<String> = vectors
        .search(&ars_knowledge::vectors::hash_embedding(query), 50)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let fused: Vec<String> = ars_knowledge::fusion::reciprocal_rank_fusion(
        &[words.clone(), near.clone()],
        ars_knowledge::fusion::RRF_K,
    )
    .into_iter()
    .map(|(id, _)| id)
    .collect();
    assert_ne!(
        words, fused,
        "the vectors change the order, or the test shows nothing"
    );
    let found = search(&app, &alice, &kb_id, query).await;
    assert_eq!(found["search"], "hybrid");
    assert_eq!(names(&found), fused[..fused.len().min(10)].to_vec());
    let scores: Vec<f64> = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    // A knowledge base without a model searches by words and says so.
    let plain = id(&kb(&app, &alice, json!({"slug": "plain", "name": "Plain"})).await);
    assert_eq!(search(&app, &alice, &plain, query).await["search"], "bm25");
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

#[tokio::test]
async fn a_parent_and_its_subagent_each_search_only_their_own_knowledge_bases() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    for (slug, name, text) in [
        (
            "parent-kb",
            "north.txt",
            "The northern warehouse stores anchors.",
        ),
        (
            "child-kb",
            "south.txt",
            "The southern warehouse stores anchors too.",
        ),
    ] {
        let kb_id = id(&kb(&app, &alice, json!({"slug": slug, "name": slug})).await);
        let reply = app
            .post(
                &format!("/api/knowledge-bases/{kb_id}/documents"),
                &alice,
                json!({"name": name, "text": text}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
        settled(&app, &alice, &kb_id).await;
    }
    let child = json!({"slug": "clerk", "name": "Clerk", "description": "looks things up",
    "backend_id": "SubAgentBackend", "config_json": {"context": {
        "knowledge_bases": ["child-kb"],
        "model": {"provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"name": "knowledge_search", "arguments": {"query": "warehouse anchors"}}]},
            {"text": "child found: {{last_tool_result}}"}
        ]}}}});
    let reply = app.post("/api/agent", &alice, child).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let reply = app
        .post(
            "/api/agent",
            &alice,
            json!({"slug": "boss", "name": "Boss", "config_json": {"context": {
                "knowledge_bases": ["parent-kb"],
                "model": {"provider": "scripted", "name": "demo", "script": [
                    {"tool_calls": [{"name": "knowledge_search", "arguments": {"query": "warehouse anchors"}}]},
                    {"tool_calls": [{"name": "task", "arguments": {"description": "look it up", "subagent_slug": "clerk"}}]},
                    {"text": "done"}
                ]}}}}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let thread = app.thread(&alice, "boss").await;
    let run = app.start_run(&alice, &thread, "go").await;
    assert_eq!(app.wait(&alice, &run, 30).await["run"]["status"], "success");
    let messages = app
        .get(&format!("/api/threads/{thread}/messages"), &alice)
        .await
        .body;
    let results: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(results.len(), 2, "{messages}");
    // The parent's own search: its knowledge base only.
    assert!(
        results[0].contains("[parent-kb:north.txt#0]"),
        "{}",
        results[0]
    );
    assert!(!results[0].contains("south"), "{}", results[0]);
    // The child's answer, through `task`: its knowledge base only.
    assert!(
        results[1].contains("[child-kb:south.txt#0]"),
        "{}",
        results[1]
    );
    assert!(!results[1].contains("north"), "{}", results[1]);
}

#[tokio::test]
async fn a_reupload_replaces_a_document_atomically_under_concurrent_search() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let kb_id = id(&kb(
        &app,
        &alice,
        json!({"slug": "versions", "name": "Versions", "settings": {"chunk_size": 200, "chunk_overlap": 0}}),
    )
    .await);
    let docs = format!("/api/knowledge-bases/{kb_id}/documents");
    // Many chunks, each naming its version.
    let version = |v: u32| -> String {
        (0..40)
            .map(|i| {
                format!("Paragraph {i} of the manual mentions gearbox revision{v} clearly.\n\n")
            })
            .collect()
    };
    let reply = app
        .post(
            &docs,
            &alice,
            json!({"name": "manual.md", "text": version(1)}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    settled(&app, &alice, &kb_id).await;

    let searching = {
        let client = app.client.clone();
        let url = format!("{}/api/knowledge-bases/{kb_id}/search", app.base);
        let token = alice.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let until = tokio::time::Instant::now() + Duration::from_secs(8);
            while tokio::time::Instant::now() < until {
                let found: Value = client
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&json!({"query": "gearbox manual paragraph", "top_k": 50}))
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let texts: Vec<String> = found["hits"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| h["text"].as_str().unwrap().to_string())
                    .collect();
                seen.push(texts);
            }
            seen
        })
    };
    for v in 2..=4 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let reply = app
            .post(
                &docs,
                &alice,
                json!({"name": "manual.md", "text": version(v)}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
        settled(&app, &alice, &kb_id).await;
    }
    let seen = searching.await.unwrap();
    assert!(seen.len() > 10, "searched {} times", seen.len());
    let mut versions_seen = std::collections::BTreeSet::new();
    for texts in &seen {
        assert!(
            !texts.is_empty(),
            "a search during a replacement found nothing"
        );
        let versions: std::collections::BTreeSet<&str> = texts
            .iter()
            .filter_map(|t| {
                ["revision1", "revision2", "revision3", "revision4"]
                    .into_iter()
                    .find(|v| t.contains(v))
            })
            .collect();
        assert_eq!(versions.len(), 1, "one answer mixed versions: {versions:?}");
        versions_seen.extend(versions);
    }
    assert!(versions_seen.contains("revision4"));
    assert!(versions_seen.len() >= 2, "{versions_seen:?}");
}

#[tokio::test]
async fn document_status_streams_as_events_until_ready() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let kb_id = id(&kb(&app, &alice, json!({"slug": "live", "name": "Live"})).await);
    let mut stream = common::stream::LiveSse::open(
        &app,
        &format!("/api/knowledge-bases/{kb_id}/events"),
        Some(&alice),
    )
    .await
    .unwrap();
    // The stream opens with a snapshot (read before the upload, so it is empty).
    let snapshot = stream.next(Duration::from_secs(10)).await;
    assert_eq!(snapshot.event, "snapshot");
    assert_eq!(snapshot.data["documents"], json!([]));
    let reply = app
        .post(
            &format!("/api/knowledge-bases/{kb_id}/documents"),
            &alice,
            json!({"name": "note.txt", "text": "Watch me become ready."}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let seen = stream
        .until(Duration::from_secs(30), |m| {
            m.event == "document" && m.data["status"] == "ready"
        })
        .await;
    assert!(
        seen.iter()
            .all(|m| m.event == "document" && m.data["name"] == "note.txt")
    );
    let ready = seen.last().unwrap();
    assert_eq!(ready.data["name"], "note.txt");
    let document = id(&ready.data);
    let deleted = app
        .delete(
            &format!("/api/knowledge-bases/{kb_id}/documents/{document}"),
            &alice,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    let removed = stream
        .until(Duration::from_secs(10), |m| m.event == "removed")
        .await;
    assert_eq!(removed.last().unwrap().data["id"], document.as_str());
    assert!(names(&search(&app, &alice, &kb_id, "ready").await).is_empty());
}

/// A knowledge base and a document put straight into `store`, as an upload would.
async fn stored_document(
    store: &dyn ars_store::Store,
    kb: ars_domain::KnowledgeBaseId,
    name: &str,
    text: &str,
) -> ars_domain::KbDocumentId {
    store
        .put_kb_document(
            kb,
            ars_domain::knowledge::NewKbDocument::new(name.into(), text.as_bytes().to_vec(), None),
        )
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn a_document_given_back_at_shutdown_resumes_and_one_whose_worker_died_fails_at_once() {
    let (store, _dir) = ars_store::test_support::sqlite_fresh().await;
    let store: std::sync::Arc<dyn ars_store::Store> = std::sync::Arc::new(store);
    let kb_id = ars_domain::KnowledgeBaseId::new();
    let fields = ars_domain::knowledge::KnowledgeBaseFields {
        slug: "restart".into(),
        name: "Restart".into(),
        description: String::new(),
        settings: Default::default(),
        share_config: ars_domain::ShareConfig {
            visibility: ars_domain::Visibility::Public,
            ..Default::default()
        },
    };
    store
        .create_knowledge_base(kb_id, &fields, None)
        .await
        .unwrap();
    // A worker took this one, then its server stopped and gave it back.
    let interrupted = stored_document(
        &*store,
        kb_id,
        "interrupted.txt",
        "Resumed ingestion works.",
    )
    .await;
    let now = chrono::Utc::now();
    let claimed = store
        .claim_kb_document(now, Duration::from_secs(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claimed.id, interrupted);
    // The worker reading this one died (its server was killed): its lease ran out.
    let poison = stored_document(&*store, kb_id, "poison.txt", "Never finished.").await;
    let died = store
        .claim_kb_document(now - chrono::Duration::seconds(10), Duration::from_secs(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(died.id, poison);
    assert_eq!(
        store
            .release_kb_document(claimed.id, claimed.version)
            .await
            .unwrap(),
        ars_store::Written::Applied
    );
    let released = store.kb_document(interrupted).await.unwrap().unwrap();
    assert_eq!(released.status.as_str(), "pending");
    assert_eq!(released.attempts, 0);

    // The server starts again.
    let app = TestApp::spawn_setup(Setup {
        store: Some(std::sync::Arc::clone(&store)),
        ..Setup::default()
    })
    .await;
    let (_, alice) = app.user("alice").await;
    let documents = settled(&app, &alice, &kb_id.to_string()).await;
    let by_name = |name: &str| {
        documents
            .iter()
            .find(|d| d["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("interrupted.txt")["status"], "ready");
    let failed = by_name("poison.txt");
    assert_eq!(failed["status"], "error");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("stopped the server once"),
        "{failed}"
    );
    assert_eq!(
        names(&search(&app, &alice, &kb_id.to_string(), "resumed").await),
        vec!["interrupted.txt"]
    );
}

#[tokio::test]
async fn the_index_is_derived_data_rebuilt_from_the_store() {
    let (store, _dir) = ars_store::test_support::sqlite_fresh().await;
    let store: std::sync::Arc<dyn ars_store::Store> = std::sync::Arc::new(store);
    let mut first = TestApp::spawn_setup(Setup {
        store: Some(std::sync::Arc::clone(&store)),
        ..Setup::default()
    })
    .await;
    let kb_id = id(&kb(
        &first,
        &first.admin.clone(),
        json!({"slug": "derived", "name": "Derived"}),
    )
    .await);
    let admin = first.admin.clone();
    let reply = first
        .post(
            &format!("/api/knowledge-bases/{kb_id}/documents"),
            &admin,
            json!({"name": "atlas.md", "text": "# Atlas\n\nThe lighthouse stands on the cliff."}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    settled(&first, &admin, &kb_id).await;
    assert_eq!(
        names(&search(&first, &admin, &kb_id, "lighthouse").await),
        vec!["atlas.md"]
    );
    let reindexed = first
        .post(
            &format!("/api/knowledge-bases/{kb_id}/reindex"),
            &admin,
            json!({}),
        )
        .await;
    assert_eq!(reindexed.status, StatusCode::OK, "{}", reindexed.body);
    assert_eq!(reindexed.body["chunks"], 1);
    let index_dir = first.knowledge.config().index_dir.clone();
    first.shut_down(Duration::from_secs(5)).await;
    first.knowledge.shutdown().await;
    drop(first);
    // Its index went with its temporary folder.
    let _ = std::fs::remove_dir_all(&index_dir);
    assert!(!index_dir.exists());

    // Another server on the same store, with no index at all, finds it.
    let second = TestApp::spawn_setup(Setup {
        store: Some(store),
        ..Setup::default()
    })
    .await;
    let admin = second.admin.clone();
    assert_eq!(
        names(&search(&second, &admin, &kb_id, "lighthouse").await),
        vec!["atlas.md"]
    );
}

#[tokio::test]
async fn two_instances_on_one_postgresql_find_each_others_documents_within_seconds() {
    let Some(url) = common::pg_url() else {
        eprintln!("ARS_TEST_DATABASE_URL is not set: skipping the PostgreSQL case");
        return;
    };
    let a = TestApp::spawn_setup(Setup {
        postgres: Some(url),
        ..Setup::default()
    })
    .await;
    let b = TestApp::spawn_setup(Setup {
        store: Some(std::sync::Arc::clone(&a.store)),
        ..Setup::default()
    })
    .await;
    let (_, alice) = a.user("alice").await;
    let kb_id = id(&kb(&a, &alice, json!({"slug": "shared", "name": "Shared"})).await);
    // B has this knowledge base's index loaded before anything is in it.
    assert!(names(&search(&b, &alice, &kb_id, "harbour").await).is_empty());

    let found_within = |app: &'static str, query: &'static str, expect: Vec<&'static str>| {
        let target = if app == "a" { &a } else { &b };
        let alice = alice.clone();
        let kb_id = kb_id.clone();
        async move {
            let started = tokio::time::Instant::now();
            loop {
                let got = names(&search(target, &alice, &kb_id, query).await);
                if got == expect {
                    return started.elapsed();
                }
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "instance {app} still answers {got:?} for {query}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    let reply = a
        .post(
            &format!("/api/knowledge-bases/{kb_id}/documents"),
            &alice,
            json!({"name": "port.txt", "text": "The harbour master opens the gate at six."}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let document = id(&reply.body["documents"][0]);
    settled(&a, &alice, &kb_id).await;
    let took = found_within("b", "harbour", vec!["port.txt"]).await;
    eprintln!("ingested through A, found through B after {took:?}");
    // Replaced through B, A finds the new version; deleted through A, B stops finding it.
    let reply = b
        .post(
            &format!("/api/knowledge-bases/{kb_id}/documents"),
            &alice,
            json!({"name": "port.txt", "text": "The marina closes at nine."}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    settled(&b, &alice, &kb_id).await;
    found_within("a", "marina", vec!["port.txt"]).await;
    found_within("a", "harbour", vec![]).await;
    let deleted = a
        .delete(
            &format!("/api/knowledge-bases/{kb_id}/documents/{document}"),
            &alice,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    found_within("b", "marina", vec![]).await;
}
