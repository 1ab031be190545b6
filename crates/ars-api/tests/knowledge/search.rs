//! Search: Chinese and English tokenising, hybrid ranking, what a parent and its subagent each
//! search in a run, and two instances on one PostgreSQL store.

use super::*;

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
