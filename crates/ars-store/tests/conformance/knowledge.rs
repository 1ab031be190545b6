//! Knowledge bases: round trips with counts, unique slugs, updates that keep the slug, shares
//! and the list filter agreeing with `Caller::can_view`, cascading deletes; documents uploaded
//! and replaced by name. Ingestion, chunk reads and the change log are in `ingestion`, which
//! shares this file's helpers.

use std::collections::BTreeMap;
use std::time::Duration;

use ars_domain::knowledge::document_format;
use ars_domain::{
    Caller, EmbeddingModel, KbChunk, KbCounts, KbDocument, KbDocumentId, KbDocumentStatus,
    KbSettings, KnowledgeBase, KnowledgeBaseFields, KnowledgeBaseId, NewKbChunk, NewKbDocument,
    Role, UserId, Visibility,
};
use ars_store::test_support::RawSql;
use ars_store::{Deleted, KnowledgeBaseFilter, Store, StoreError, Written};

use crate::fixtures::{shares, user, wide_shares};

/// How long claims in these checks hold a document.
pub(crate) const LEASE: Duration = Duration::from_secs(60);

pub(crate) fn fields(slug: &str) -> KnowledgeBaseFields {
    KnowledgeBaseFields {
        slug: slug.into(),
        name: format!("KB {slug}"),
        description: "员工手册 / the handbook".into(),
        settings: KbSettings {
            chunk_size: 500,
            chunk_overlap: 50,
            embedding: Some(EmbeddingModel {
                provider: "local".into(),
                model: "bge-m3".into(),
            }),
        },
        share_config: Default::default(),
    }
}

pub(crate) async fn knowledge_base(store: &dyn Store, slug: &str) -> KnowledgeBase {
    store
        .create_knowledge_base(KnowledgeBaseId::new(), &fields(slug), None)
        .await
        .unwrap()
}

/// A stand-in for the SHA-256 of `bytes`: 64 hex digits that differ with the bytes.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(17u128, |h, b| {
        h.wrapping_mul(1_000_003).wrapping_add(u128::from(*b))
    });
    format!("{hash:064x}")
}

pub(crate) fn upload(name: &str, bytes: &[u8]) -> NewKbDocument {
    NewKbDocument {
        id: KbDocumentId::new(),
        name: name.into(),
        format: document_format(name),
        bytes: bytes.to_vec(),
        sha256: digest(bytes),
        uploaded_by: None,
    }
}

pub(crate) async fn put(
    store: &dyn Store,
    kb: &KnowledgeBase,
    name: &str,
    bytes: &[u8],
) -> KbDocument {
    store
        .put_kb_document(kb.id, upload(name, bytes))
        .await
        .unwrap()
}

pub(crate) fn chunk(ordinal: u32, text: &str) -> NewKbChunk {
    let start = u64::from(ordinal) * 100;
    NewKbChunk {
        ordinal,
        heading_path: vec!["手册".into(), format!("Section {ordinal}")],
        start,
        end: start + text.len() as u64,
        text: text.into(),
        embedding: Some(vec![ordinal as f32, -0.5, 1e-3]),
    }
}

/// Claims the one claimable document (there must be exactly one, or the oldest is `expected`).
pub(crate) async fn claim(store: &dyn Store, expected: KbDocumentId) -> KbDocument {
    let claimed = store
        .claim_kb_document(ars_domain::time::now(), LEASE)
        .await
        .unwrap()
        .expect("a claimable document");
    assert_eq!(claimed.id, expected);
    claimed
}

/// Uploads `name` and ingests it into `chunks`.
pub(crate) async fn ingested(
    store: &dyn Store,
    kb: &KnowledgeBase,
    name: &str,
    chunks: &[NewKbChunk],
) -> KbDocument {
    let document = put(store, kb, name, name.as_bytes()).await;
    let claimed = claim(store, document.id).await;
    assert_eq!(
        store
            .finish_kb_document(claimed.id, claimed.version, chunks)
            .await
            .unwrap(),
        Written::Applied
    );
    store.kb_document(document.id).await.unwrap().unwrap()
}

pub(crate) fn texts(chunks: &[KbChunk]) -> Vec<&str> {
    chunks.iter().map(|c| c.text.as_str()).collect()
}

pub async fn check_knowledge_bases_round_trip_with_counts(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let id = KnowledgeBaseId::new();
    let written = fields("handbook");
    let created = store
        .create_knowledge_base(id, &written, Some(owner.id))
        .await
        .unwrap();
    assert_eq!(created.id, id);
    assert_eq!(created.fields, written);
    assert_eq!(created.owner_id, Some(owner.id));
    assert_eq!(created.counts, KbCounts::default());
    assert_eq!(store.knowledge_base(id).await.unwrap().unwrap(), created);
    assert_eq!(
        store.knowledge_base_by_slug("handbook").await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(
        store.knowledge_base(KnowledgeBaseId::new()).await.unwrap(),
        None
    );
    assert_eq!(store.knowledge_base_by_slug("nope").await.unwrap(), None);

    // One document of each status, and another knowledge base's, which is not counted.
    ingested(store, &created, "ready.md", &[chunk(0, "a"), chunk(1, "b")]).await;
    let failed = put(store, &created, "failed.pdf", b"%PDF-1.7").await;
    let claimed = claim(store, failed.id).await;
    assert_eq!(
        store
            .fail_kb_document(failed.id, claimed.version, "no text")
            .await
            .unwrap(),
        Written::Applied
    );
    put(store, &created, "first.txt", b"12345").await;
    put(store, &created, "second.csv", b"a,b\n1,2\n").await;
    store
        .claim_kb_document(ars_domain::time::now(), LEASE)
        .await
        .unwrap()
        .unwrap();
    let other = knowledge_base(store, "other").await;
    put(store, &other, "elsewhere.txt", b"not counted").await;

    let counted = store.knowledge_base(id).await.unwrap().unwrap();
    let bytes = ["ready.md".len(), 8, 5, 8];
    assert_eq!(
        counted.counts,
        KbCounts {
            documents: 4,
            chunks: 2,
            bytes: bytes.iter().sum::<usize>() as u64,
            pending: 1,
            processing: 1,
            failed: 1,
        }
    );
    let all = store
        .list_knowledge_bases(KnowledgeBaseFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0], counted);
    assert_eq!(all[1].fields.slug, "other");
    assert_eq!(all[1].counts.documents, 1);
    assert_eq!(all[1].owner_id, None);
}

pub async fn check_knowledge_base_slugs_are_unique_and_a_conflict_writes_nothing(
    store: &dyn Store,
) {
    let owner = user(store, "owner").await;
    let first = store
        .create_knowledge_base(KnowledgeBaseId::new(), &fields("docs"), Some(owner.id))
        .await
        .unwrap();
    let again = KnowledgeBaseFields {
        name: "Another".into(),
        share_config: shares(Visibility::Users, &[owner.id], &[]),
        ..fields("docs")
    };
    let err = store
        .create_knowledge_base(KnowledgeBaseId::new(), &again, Some(owner.id))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { field: "slug" }),
        "{err:?}"
    );
    let all = store
        .list_knowledge_bases(KnowledgeBaseFilter::default())
        .await
        .unwrap();
    assert_eq!(all, vec![first]);

    // An unknown owner or share user is refused, and leaves nothing behind either.
    let ghost = KnowledgeBaseFields {
        share_config: shares(Visibility::Users, &[UserId::new()], &[]),
        ..fields("ghost")
    };
    let unknown = store
        .create_knowledge_base(KnowledgeBaseId::new(), &ghost, Some(owner.id))
        .await;
    assert!(
        matches!(unknown, Err(StoreError::Invalid(_))),
        "{unknown:?}"
    );
    assert_eq!(store.knowledge_base_by_slug("ghost").await.unwrap(), None);
}

pub async fn check_update_knowledge_base_keeps_the_slug_and_replaces_shares(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let id = KnowledgeBaseId::new();
    let first = KnowledgeBaseFields {
        share_config: shares(Visibility::Users, &[owner.id], &[]),
        ..fields("docs")
    };
    let before = store
        .create_knowledge_base(id, &first, Some(owner.id))
        .await
        .unwrap();
    let document = put(store, &before, "kept.txt", b"kept").await;
    let change = KnowledgeBaseFields {
        slug: "renamed".into(),
        name: "Renamed".into(),
        description: String::new(),
        settings: KbSettings::default(),
        share_config: shares(Visibility::Users, &[friend.id], &[friend.id]),
    };
    let after = store.update_knowledge_base(id, &change).await.unwrap();
    assert_eq!(after.fields.slug, "docs", "the slug never changes");
    assert_eq!(after.fields.name, "Renamed");
    assert_eq!(after.fields.description, "");
    assert_eq!(after.fields.settings, KbSettings::default());
    assert_eq!(
        after.fields.share_config,
        change.share_config.clone().normalized()
    );
    assert_eq!(after.owner_id, Some(owner.id));
    assert_eq!(after.created_at, before.created_at);
    assert!(after.updated_at >= before.updated_at);
    assert_eq!(after.counts.documents, 1, "documents are not touched");
    assert_eq!(store.knowledge_base(id).await.unwrap().unwrap(), after);
    assert_eq!(
        store.kb_document(document.id).await.unwrap(),
        Some(document)
    );

    let missing = store
        .update_knowledge_base(KnowledgeBaseId::new(), &change)
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
    let ghost = KnowledgeBaseFields {
        name: "Ghost".into(),
        share_config: shares(Visibility::Users, &[UserId::new()], &[]),
        ..change
    };
    let unknown = store.update_knowledge_base(id, &ghost).await;
    assert!(
        matches!(unknown, Err(StoreError::Invalid(_))),
        "{unknown:?}"
    );
    assert_eq!(store.knowledge_base(id).await.unwrap().unwrap(), after);
}

pub async fn check_knowledge_base_list_filter_matrix(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let manager = user(store, "manager").await;
    let listed = user(store, "listed").await;
    let stranger = user(store, "stranger").await;
    for visibility in [Visibility::Private, Visibility::Users, Visibility::Public] {
        let written = KnowledgeBaseFields {
            share_config: shares(visibility, &[listed.id], &[manager.id]),
            ..fields(visibility.as_str())
        };
        let kb = store
            .create_knowledge_base(KnowledgeBaseId::new(), &written, Some(owner.id))
            .await
            .unwrap();
        // Counts come along in lists too.
        put(store, &kb, "doc.txt", b"x").await;
    }
    let unlisted = KnowledgeBaseFields {
        share_config: shares(Visibility::Users, &[], &[]),
        ..fields("users-unlisted")
    };
    store
        .create_knowledge_base(KnowledgeBaseId::new(), &unlisted, Some(owner.id))
        .await
        .unwrap();
    let all = store
        .list_knowledge_bases(KnowledgeBaseFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].counts.pending, 1);
    let mut seen = BTreeMap::new();
    for viewer in [&owner, &manager, &listed, &stranger] {
        let caller = Caller {
            id: viewer.id,
            role: Role::User,
        };
        let got = store
            .list_knowledge_bases(KnowledgeBaseFilter {
                visible_to: Some(viewer.id),
            })
            .await
            .unwrap();
        let expected: Vec<_> = all
            .iter()
            .filter(|kb| caller.can_view(*kb))
            .cloned()
            .collect();
        assert_eq!(got, expected, "{}", viewer.username);
        seen.insert(
            viewer.username.clone(),
            got.iter()
                .map(|kb| kb.fields.slug.clone())
                .collect::<Vec<_>>(),
        );
    }
    // The same rules spelled out, so the check does not rest on `can_view` alone.
    let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        seen["owner"],
        list(&["private", "public", "users", "users-unlisted"])
    );
    assert_eq!(seen["manager"], list(&["private", "public", "users"]));
    assert_eq!(seen["listed"], list(&["public", "users"]));
    assert_eq!(seen["stranger"], list(&["public"]));
}

pub async fn check_delete_knowledge_base_cascades<S: Store + RawSql>(store: &S) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let written = KnowledgeBaseFields {
        share_config: shares(Visibility::Users, &[friend.id], &[friend.id]),
        ..fields("gone")
    };
    let gone = store
        .create_knowledge_base(KnowledgeBaseId::new(), &written, Some(owner.id))
        .await
        .unwrap();
    let document = ingested(store, &gone, "a.md", &[chunk(0, "a"), chunk(1, "b")]).await;
    let kept = knowledge_base(store, "kept").await;
    let kept_document = ingested(store, &kept, "k.md", &[chunk(0, "k")]).await;
    put(store, &gone, "b.md", b"pending").await;
    let head = store.kb_change_head().await.unwrap();

    assert_eq!(
        store.delete_knowledge_base(gone.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        store.delete_knowledge_base(gone.id).await.unwrap(),
        Deleted::NotFound
    );
    assert_eq!(store.knowledge_base(gone.id).await.unwrap(), None);
    assert!(store.kb_documents(gone.id).await.unwrap().is_empty());
    assert_eq!(store.kb_document(document.id).await.unwrap(), None);
    assert_eq!(store.kb_document_file(document.id).await.unwrap(), None);
    assert!(store.kb_chunks(document.id).await.unwrap().is_empty());
    // Nothing of it is left behind the trait's back either (a delete counts what it finds).
    for (table, column) in [
        ("knowledge_base_shares", "knowledge_base_id"),
        ("kb_documents", "kb_id"),
        ("kb_chunks", "kb_id"),
    ] {
        let sql = format!("DELETE FROM {table} WHERE {column} = '{}'", gone.id);
        assert_eq!(store.execute_raw(&sql).await.unwrap(), 0, "{table}");
    }
    let files = format!(
        "DELETE FROM kb_document_files WHERE document_id = '{}'",
        document.id
    );
    assert_eq!(store.execute_raw(&files).await.unwrap(), 0);
    assert_eq!(
        store.kb_change_head().await.unwrap(),
        head,
        "a deleted knowledge base is noticed by its absence, not logged"
    );
    // The other knowledge base is untouched.
    assert_eq!(
        texts(&store.kb_chunks(kept_document.id).await.unwrap()),
        ["k"]
    );

    // A deleted owner leaves a knowledge base ownerless; a deleted uploader leaves its
    // documents without one.
    let theirs = store
        .create_knowledge_base(KnowledgeBaseId::new(), &fields("theirs"), Some(owner.id))
        .await
        .unwrap();
    let uploaded = store
        .put_kb_document(
            theirs.id,
            NewKbDocument {
                uploaded_by: Some(owner.id),
                ..upload("mine.txt", b"mine")
            },
        )
        .await
        .unwrap();
    assert_eq!(uploaded.uploaded_by, Some(owner.id));
    let sql = format!("DELETE FROM users WHERE id = '{}'", owner.id);
    assert_eq!(store.execute_raw(&sql).await.unwrap(), 1);
    assert_eq!(
        store
            .knowledge_base(theirs.id)
            .await
            .unwrap()
            .unwrap()
            .owner_id,
        None
    );
    let orphan = store.kb_document(uploaded.id).await.unwrap().unwrap();
    assert_eq!(orphan.uploaded_by, None);
}

pub async fn check_put_kb_document_inserts_then_replaces_by_name(store: &dyn Store) {
    let uploader = user(store, "uploader").await;
    let kb = knowledge_base(store, "docs").await;
    let first = NewKbDocument {
        uploaded_by: Some(uploader.id),
        ..upload("Report.PDF", b"version one")
    };
    let stored = store.put_kb_document(kb.id, first.clone()).await.unwrap();
    assert_eq!(stored.id, first.id);
    assert_eq!(stored.kb_id, kb.id);
    assert_eq!(stored.name, "Report.PDF");
    assert_eq!(stored.format, "pdf");
    assert_eq!(stored.size_bytes, 11);
    assert_eq!(stored.sha256, first.sha256);
    assert_eq!(stored.version, 1);
    assert_eq!(stored.status, KbDocumentStatus::Pending);
    assert_eq!(stored.progress, 0.0);
    assert_eq!(stored.error, None);
    assert_eq!((stored.chunk_count, stored.attempts), (0, 0));
    assert_eq!(stored.uploaded_by, Some(uploader.id));
    assert_eq!(stored.created_at, stored.updated_at);
    assert_eq!(
        store.kb_document(stored.id).await.unwrap(),
        Some(stored.clone())
    );
    assert_eq!(
        store.kb_document_file(stored.id).await.unwrap().as_deref(),
        Some(&b"version one"[..])
    );

    // Ingested, then uploaded again under the same name (by someone else, as another id).
    let claimed = claim(store, stored.id).await;
    store
        .renew_kb_document(stored.id, 1, 0.5, ars_domain::time::now())
        .await
        .unwrap();
    assert_eq!(
        store
            .finish_kb_document(stored.id, 1, &[chunk(0, "old zero"), chunk(1, "old one")])
            .await
            .unwrap(),
        Written::Applied
    );
    let second = upload("Report.PDF", b"the second version");
    let replaced = store.put_kb_document(kb.id, second.clone()).await.unwrap();
    assert_eq!(
        replaced.id, stored.id,
        "a replacement keeps the document's id"
    );
    assert_eq!(replaced.version, 2);
    assert_eq!(replaced.status, KbDocumentStatus::Pending);
    assert_eq!(replaced.progress, 0.0);
    assert_eq!((replaced.attempts, replaced.error.as_deref()), (0, None));
    assert_eq!(replaced.size_bytes, 18);
    assert_eq!(replaced.sha256, second.sha256);
    assert_eq!(replaced.uploaded_by, None);
    assert_eq!(replaced.created_at, stored.created_at);
    assert!(replaced.updated_at >= claimed.updated_at);
    assert_eq!(store.kb_document(second.id).await.unwrap(), None);
    assert_eq!(
        store.kb_document_file(stored.id).await.unwrap().as_deref(),
        Some(&b"the second version"[..])
    );
    // The old chunks stay searchable until the new version is finished.
    assert_eq!(replaced.chunk_count, 2);
    assert_eq!(
        texts(&store.kb_chunks(stored.id).await.unwrap()),
        ["old zero", "old one"]
    );
    let claimed = claim(store, stored.id).await;
    assert_eq!((claimed.version, claimed.attempts), (2, 1));
    assert_eq!(
        store
            .finish_kb_document(stored.id, 2, &[chunk(0, "new zero")])
            .await
            .unwrap(),
        Written::Applied
    );
    assert_eq!(
        texts(&store.kb_chunks(stored.id).await.unwrap()),
        ["new zero"]
    );

    // Names are per knowledge base; listings go by name (byte order).
    let other = knowledge_base(store, "other").await;
    let elsewhere = put(store, &other, "Report.PDF", b"elsewhere").await;
    assert_ne!(elsewhere.id, stored.id);
    assert_eq!(elsewhere.version, 1);
    put(store, &kb, "b.txt", b"b").await;
    put(store, &kb, "A.txt", b"a").await;
    let names: Vec<String> = store
        .kb_documents(kb.id)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, ["A.txt", "Report.PDF", "b.txt"]);
    assert!(
        store
            .kb_documents(KnowledgeBaseId::new())
            .await
            .unwrap()
            .is_empty()
    );

    let nowhere = store
        .put_kb_document(KnowledgeBaseId::new(), upload("x.txt", b"x"))
        .await;
    assert!(matches!(nowhere, Err(StoreError::NotFound)), "{nowhere:?}");
}

pub async fn check_knowledge_base_schema_rejects_forbidden_rows<S: Store + RawSql>(store: &S) {
    let at = "'2025-01-01T00:00:00+00:00'";
    let kb_row = |slug: &str, settings: &str| {
        format!(
            "INSERT INTO knowledge_bases (id, slug, name, settings, visibility, created_at, \
             updated_at) VALUES ('{}', '{slug}', 'n', '{settings}', 'private', {at}, {at})",
            KnowledgeBaseId::new()
        )
    };
    let settings = |size: u32, overlap: u32| {
        format!(r#"{{"chunk_size": {size}, "chunk_overlap": {overlap}, "embedding": null}}"#)
    };
    assert_eq!(
        store
            .execute_raw(&kb_row("raw", &settings(800, 120)))
            .await
            .unwrap(),
        1
    );
    for bad in [
        kb_row("raw", &settings(800, 120)),
        kb_row("small", &settings(99, 0)),
        kb_row("overlap", &settings(800, 401)),
    ] {
        let result = store.execute_raw(&bad).await;
        assert!(
            matches!(
                result,
                Err(StoreError::Invalid(_) | StoreError::Conflict { .. })
            ),
            "{bad}: {result:?}"
        );
    }
    let kb = store.knowledge_base_by_slug("raw").await.unwrap().unwrap();
    assert_eq!(kb.fields.settings, KbSettings::default());

    let document = |name: &str, status: &str, error: &str, lease: &str, progress: f32| {
        format!(
            "INSERT INTO kb_documents (id, kb_id, name, format, size_bytes, sha256, version, \
             status, progress, error, chunk_count, attempts, lease_until, created_at, \
             updated_at) VALUES ('{}', '{}', '{name}', 'txt', 1, '{}', 1, '{status}', \
             {progress}, {error}, 0, 0, {lease}, {at}, {at})",
            KbDocumentId::new(),
            kb.id,
            digest(b"x")
        )
    };
    let fine = document("fine.txt", "processing", "NULL", at, 0.5);
    assert_eq!(store.execute_raw(&fine).await.unwrap(), 1);
    for bad in [
        document("done.txt", "done", "NULL", "NULL", 0.0),
        // A worker holds a document exactly while it is processing.
        document("unleased.txt", "processing", "NULL", "NULL", 0.0),
        document("leased.txt", "pending", "NULL", at, 0.0),
        // An error is recorded exactly when the status is `error`.
        document("silent.txt", "error", "NULL", "NULL", 0.0),
        document("noisy.txt", "ready", "'oops'", "NULL", 1.0),
        document("over.txt", "pending", "NULL", "NULL", 1.5),
        document("..", "pending", "NULL", "NULL", 0.0),
        document("dir/file.txt", "pending", "NULL", "NULL", 0.0),
        document("fine.txt", "pending", "NULL", "NULL", 0.0),
    ] {
        let result = store.execute_raw(&bad).await;
        assert!(
            matches!(
                result,
                Err(StoreError::Invalid(_) | StoreError::Conflict { .. })
            ),
            "{bad}: {result:?}"
        );
    }

    // A chunk belongs to its document's knowledge base and no other.
    let stored = store.kb_documents(kb.id).await.unwrap();
    assert_eq!(stored.len(), 1);
    let other = knowledge_base(store, "other").await;
    let chunk_row = |kb_id: KnowledgeBaseId, start: i64, end: i64| {
        format!(
            "INSERT INTO kb_chunks (document_id, kb_id, ordinal, heading_path, start_offset, \
             end_offset, text) VALUES ('{}', '{kb_id}', {start}, '[]', {start}, {end}, 't')",
            stored[0].id
        )
    };
    assert_eq!(store.execute_raw(&chunk_row(kb.id, 0, 1)).await.unwrap(), 1);
    for bad in [chunk_row(other.id, 1, 2), chunk_row(kb.id, 2, 1)] {
        let result = store.execute_raw(&bad).await;
        assert!(
            matches!(result, Err(StoreError::Invalid(_))),
            "{bad}: {result:?}"
        );
    }
    assert_eq!(store.kb_chunks(stored[0].id).await.unwrap().len(), 1);
}

/// Every read of a knowledge base (by id, by slug, listed) answers exactly its share rows,
/// with its document counts.
pub async fn check_every_read_of_a_knowledge_base_answers_exactly_its_shares(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (many, _, managers) = wide_shares(store, 30, 1).await;
    let wide = KnowledgeBaseFields {
        share_config: many.clone(),
        ..fields("wide")
    };
    let wide = store
        .create_knowledge_base(KnowledgeBaseId::new(), &wide, Some(owner.id))
        .await
        .unwrap();
    assert_eq!(wide.fields.share_config, many.clone().normalized());
    knowledge_base(store, "bare").await;
    assert_eq!(
        store.knowledge_base(wide.id).await.unwrap(),
        Some(wide.clone())
    );
    assert_eq!(
        store.knowledge_base_by_slug("wide").await.unwrap(),
        Some(wide.clone())
    );
    let all = store
        .list_knowledge_bases(KnowledgeBaseFilter { visible_to: None })
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1], wide);
    assert_eq!(all[0].fields.share_config, Default::default());
    let theirs = store
        .list_knowledge_bases(KnowledgeBaseFilter {
            visible_to: Some(managers[0]),
        })
        .await
        .unwrap();
    assert_eq!(theirs, vec![wide]);
}
