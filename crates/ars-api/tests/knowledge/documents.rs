//! Documents: every format, the upload limits, atomic re-uploads under search, the status stream,
//! and ingestion's recovery: a document given back at shutdown, a worker that died, the index
//! rebuilt from the store.

use super::*;

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
    // Back to ingestion: a worker may already have taken it by the time it is read back.
    assert!(
        matches!(
            retried.body["status"].as_str(),
            Some("pending" | "processing")
        ),
        "{}",
        retried.body
    );
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
