//! Ingestion of knowledge documents under leases (claims that never collide, leases that run
//! out, stale versions that write nothing), chunk reads and the change log.

use std::collections::HashSet;

use ars_domain::{
    KbChunk, KbDocument, KbDocumentId, KbDocumentStatus, KnowledgeBaseId, NewKbChunk,
};
use ars_store::{Deleted, KbChange, Retried, Store, StoreError, Written};
use chrono::{DateTime, Utc};

use crate::knowledge::{LEASE, chunk, claim, ingested, knowledge_base, put, texts};

pub async fn check_concurrent_claims_never_take_one_document_twice(store: &dyn Store) {
    let kb = knowledge_base(store, "busy").await;
    let mut uploaded = HashSet::new();
    for i in 0..6 {
        uploaded.insert(put(store, &kb, &format!("{i}.txt"), b"text").await.id);
    }
    let now = ars_domain::time::now();
    let claims = (0..10).map(|_| store.claim_kb_document(now, LEASE));
    let claimed: Vec<KbDocument> = futures::future::join_all(claims)
        .await
        .into_iter()
        .filter_map(|claim| claim.unwrap())
        .collect();
    let ids: HashSet<KbDocumentId> = claimed.iter().map(|d| d.id).collect();
    assert_eq!(ids.len(), claimed.len(), "a document was claimed twice");
    assert_eq!(ids, uploaded, "every document was claimed once");
    for document in &claimed {
        assert_eq!(document.status, KbDocumentStatus::Processing);
        assert_eq!(document.attempts, 1);
    }
    assert_eq!(store.claim_kb_document(now, LEASE).await.unwrap(), None);
}

pub async fn check_claims_take_the_least_recently_updated_document_first(store: &dyn Store) {
    let kb = knowledge_base(store, "queue").await;
    let a = put(store, &kb, "a.txt", b"a").await;
    let b = put(store, &kb, "b.txt", b"b").await;
    let c = put(store, &kb, "c.txt", b"c").await;
    let first = claim(store, a.id).await;
    // Uploaded again while it is processed: back to pending, behind the others.
    put(store, &kb, "a.txt", b"a, again").await;
    let now = ars_domain::time::now();
    let order: Vec<KbDocumentId> = [
        store.claim_kb_document(now, LEASE).await.unwrap(),
        store.claim_kb_document(now, LEASE).await.unwrap(),
        store.claim_kb_document(now, LEASE).await.unwrap(),
    ]
    .into_iter()
    .map(|claimed| claimed.unwrap().id)
    .collect();
    assert_eq!(order, [b.id, c.id, a.id]);
    let again = store.kb_document(a.id).await.unwrap().unwrap();
    assert_eq!((again.version, again.attempts), (first.version + 1, 1));
    assert_eq!(store.claim_kb_document(now, LEASE).await.unwrap(), None);
}

pub async fn check_an_expired_lease_is_claimable_again_and_a_live_one_is_not(store: &dyn Store) {
    let kb = knowledge_base(store, "leases").await;
    let document = put(store, &kb, "doc.md", b"# Title").await;
    let at = |seconds: i64| -> DateTime<Utc> {
        ars_domain::time::now() + chrono::Duration::seconds(seconds)
    };
    let start = at(0);
    assert!(store.kb_claimable(start).await.unwrap());
    let first = store
        .claim_kb_document(start, LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first.id, first.version, first.attempts),
        (document.id, 1, 1)
    );
    assert_eq!(first.status, KbDocumentStatus::Processing);
    let live = start + chrono::Duration::seconds(30);
    assert!(!store.kb_claimable(live).await.unwrap());
    assert_eq!(store.claim_kb_document(live, LEASE).await.unwrap(), None);

    // The worker died: once its lease ran out, the document is claimed again.
    let expired = start + chrono::Duration::seconds(61);
    assert!(store.kb_claimable(expired).await.unwrap());
    let second = store
        .claim_kb_document(expired, LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (second.id, second.version, second.attempts),
        (document.id, 1, 2)
    );

    // Renewing moves the lease (and records progress) for the claimed version only.
    let later = expired + chrono::Duration::seconds(300);
    assert_eq!(
        store
            .renew_kb_document(document.id, 1, 0.25, later)
            .await
            .unwrap(),
        Written::Applied
    );
    assert_eq!(
        store
            .kb_document(document.id)
            .await
            .unwrap()
            .unwrap()
            .progress,
        0.25
    );
    let before_renewed_end = later - chrono::Duration::seconds(1);
    assert_eq!(
        store
            .claim_kb_document(before_renewed_end, LEASE)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .renew_kb_document(document.id, 2, 0.5, later)
            .await
            .unwrap(),
        Written::Superseded
    );
    assert_eq!(
        store
            .renew_kb_document(KbDocumentId::new(), 1, 0.5, later)
            .await
            .unwrap(),
        Written::Superseded
    );
    // Progress stays within 0..=1 whatever a worker reports.
    assert_eq!(
        store
            .renew_kb_document(document.id, 1, 7.0, later)
            .await
            .unwrap(),
        Written::Applied
    );
    assert_eq!(
        store
            .kb_document(document.id)
            .await
            .unwrap()
            .unwrap()
            .progress,
        1.0
    );
    let after_renewed_end = later + chrono::Duration::seconds(1);
    let third = store
        .claim_kb_document(after_renewed_end, LEASE)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(third.attempts, 3);

    // A ready document is never claimed, however late.
    assert_eq!(
        store.finish_kb_document(document.id, 1, &[]).await.unwrap(),
        Written::Applied
    );
    assert_eq!(
        store
            .renew_kb_document(document.id, 1, 0.5, later)
            .await
            .unwrap(),
        Written::Superseded
    );
    let far = at(86_400 * 365);
    assert_eq!(store.claim_kb_document(far, LEASE).await.unwrap(), None);
}

pub async fn check_a_released_claim_is_pending_again_and_not_counted(store: &dyn Store) {
    let kb = knowledge_base(store, "release").await;
    let document = put(store, &kb, "doc.md", b"# Title").await;
    let claimed = claim(store, document.id).await;
    assert_eq!(claimed.attempts, 1);
    // A stale version is not released.
    assert_eq!(
        store
            .release_kb_document(document.id, claimed.version + 1)
            .await
            .unwrap(),
        Written::Superseded
    );
    assert_eq!(
        store
            .release_kb_document(document.id, claimed.version)
            .await
            .unwrap(),
        Written::Applied
    );
    let released = store.kb_document(document.id).await.unwrap().unwrap();
    assert_eq!(released.status, KbDocumentStatus::Pending);
    assert_eq!(released.attempts, 0);
    // Claimable at once, not only when a lease runs out; a second release does nothing.
    assert_eq!(
        store
            .release_kb_document(document.id, claimed.version)
            .await
            .unwrap(),
        Written::Superseded
    );
    let again = claim(store, document.id).await;
    assert_eq!(again.attempts, 1);
}

pub async fn check_finish_writes_only_the_claimed_version_and_replaces_chunks_at_once(
    store: &dyn Store,
) {
    let kb = knowledge_base(store, "finish").await;
    let document = put(store, &kb, "guide.md", b"v1").await;
    let stale = claim(store, document.id).await;
    assert_eq!(stale.version, 1);
    // Re-uploaded while a worker ingests version 1: its writes now change nothing.
    put(store, &kb, "guide.md", b"v2").await;
    let head = store.kb_change_head().await.unwrap();
    assert_eq!(
        store
            .finish_kb_document(document.id, 1, &[chunk(0, "stale")])
            .await
            .unwrap(),
        Written::Superseded
    );
    assert_eq!(
        store
            .renew_kb_document(document.id, 1, 0.9, ars_domain::time::now())
            .await
            .unwrap(),
        Written::Superseded
    );
    assert_eq!(
        store
            .fail_kb_document(document.id, 1, "stale")
            .await
            .unwrap(),
        Written::Superseded
    );
    let waiting = store.kb_document(document.id).await.unwrap().unwrap();
    assert_eq!(
        (waiting.version, waiting.status),
        (2, KbDocumentStatus::Pending)
    );
    assert_eq!(waiting.chunk_count, 0);
    assert!(store.kb_chunks(document.id).await.unwrap().is_empty());
    assert_eq!(store.kb_change_head().await.unwrap(), head);

    // Version 2 finishes: chunks stored, ready, and one change logged.
    let claimed = claim(store, document.id).await;
    assert_eq!(claimed.version, 2);
    let first = [chunk(0, "zero"), chunk(1, "one"), chunk(2, "two")];
    assert_eq!(
        store
            .finish_kb_document(document.id, 2, &first)
            .await
            .unwrap(),
        Written::Applied
    );
    let ready = store.kb_document(document.id).await.unwrap().unwrap();
    assert_eq!(ready.status, KbDocumentStatus::Ready);
    assert_eq!((ready.progress, ready.chunk_count), (1.0, 3));
    assert_eq!(ready.error, None);
    assert_eq!(
        texts(&store.kb_chunks(document.id).await.unwrap()),
        ["zero", "one", "two"]
    );
    let changes = store.kb_changes_since(head, 10).await.unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].kb_id, changes[0].document_id),
        (kb.id, document.id)
    );
    // Finishing twice writes nothing: the document is no longer processing.
    assert_eq!(
        store
            .finish_kb_document(document.id, 2, &first)
            .await
            .unwrap(),
        Written::Superseded
    );
    assert_eq!(store.kb_changes_since(head, 10).await.unwrap(), changes);

    // Version 3 replaces every chunk of version 2 at once, fewer of them.
    put(store, &kb, "guide.md", b"v3").await;
    claim(store, document.id).await;
    assert_eq!(
        store
            .finish_kb_document(document.id, 3, &[chunk(0, "only")])
            .await
            .unwrap(),
        Written::Applied
    );
    assert_eq!(
        texts(&store.kb_chunks(document.id).await.unwrap()),
        ["only"]
    );
    assert_eq!(
        store
            .kb_document(document.id)
            .await
            .unwrap()
            .unwrap()
            .chunk_count,
        1
    );

    // Chunks that break a rule are refused, and nothing is written.
    put(store, &kb, "guide.md", b"v4").await;
    claim(store, document.id).await;
    let twice = [chunk(0, "a"), chunk(0, "b")];
    let refused = store.finish_kb_document(document.id, 4, &twice).await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    let backwards = NewKbChunk {
        end: 0,
        ..chunk(1, "backwards")
    };
    let refused = store.finish_kb_document(document.id, 4, &[backwards]).await;
    assert!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    let still = store.kb_document(document.id).await.unwrap().unwrap();
    assert_eq!(
        (still.version, still.status),
        (4, KbDocumentStatus::Processing)
    );
    assert_eq!(
        texts(&store.kb_chunks(document.id).await.unwrap()),
        ["only"]
    );

    // A deleted document's worker finishes nothing.
    assert_eq!(
        store.delete_kb_document(document.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        store
            .finish_kb_document(document.id, 4, &[chunk(0, "x")])
            .await
            .unwrap(),
        Written::Superseded
    );
    assert!(store.kb_chunks(document.id).await.unwrap().is_empty());
}

pub async fn check_failed_documents_keep_their_old_chunks_until_retried(store: &dyn Store) {
    let kb = knowledge_base(store, "failures").await;
    let document = ingested(store, &kb, "table.csv", &[chunk(0, "row one")]).await;
    put(store, &kb, "table.csv", b"broken").await;
    let claimed = claim(store, document.id).await;
    let head = store.kb_change_head().await.unwrap();
    assert_eq!(
        store
            .fail_kb_document(document.id, claimed.version, "not a CSV file")
            .await
            .unwrap(),
        Written::Applied
    );
    let failed = store.kb_document(document.id).await.unwrap().unwrap();
    assert_eq!(failed.status, KbDocumentStatus::Error);
    assert_eq!(failed.error.as_deref(), Some("not a CSV file"));
    assert_eq!(
        (failed.version, failed.attempts, failed.chunk_count),
        (2, 1, 1)
    );
    // The last finished version stays searchable; nothing was logged.
    assert_eq!(
        texts(&store.kb_chunks(document.id).await.unwrap()),
        ["row one"]
    );
    assert_eq!(store.kb_change_head().await.unwrap(), head);
    // A failed document is not claimed, however late, and fails only once.
    let far = ars_domain::time::now() + chrono::Duration::days(365);
    assert_eq!(store.claim_kb_document(far, LEASE).await.unwrap(), None);
    assert_eq!(
        store
            .fail_kb_document(document.id, 2, "again")
            .await
            .unwrap(),
        Written::Superseded
    );

    assert_eq!(
        store.retry_kb_document(document.id).await.unwrap(),
        Retried::Retried
    );
    let retried = store.kb_document(document.id).await.unwrap().unwrap();
    assert_eq!(retried.status, KbDocumentStatus::Pending);
    assert_eq!(
        (retried.error, retried.attempts, retried.progress),
        (None, 0, 0.0)
    );
    assert_eq!(retried.version, 2);
    assert_eq!(
        store.retry_kb_document(document.id).await.unwrap(),
        Retried::NotFailed,
        "only failed documents"
    );
    assert_eq!(
        store.retry_kb_document(KbDocumentId::new()).await.unwrap(),
        Retried::NotFailed
    );
    let again = claim(store, document.id).await;
    assert_eq!((again.version, again.attempts), (2, 1));
}

pub async fn check_kb_chunk_reads(store: &dyn Store) {
    let kb = knowledge_base(store, "reads").await;
    // Written out of order, read back by ordinal, embeddings and headings intact.
    let written = [chunk(2, "two"), chunk(0, "zero"), chunk(1, "one")];
    let a = ingested(store, &kb, "a.md", &written).await;
    let b = ingested(store, &kb, "b.md", &[chunk(0, "b zero"), chunk(1, "b one")]).await;
    let plain = NewKbChunk {
        heading_path: Vec::new(),
        embedding: None,
        ..chunk(0, "no headings")
    };
    let other = knowledge_base(store, "other").await;
    let c = ingested(store, &other, "c.md", &[plain]).await;

    let chunks = store.kb_chunks(a.id).await.unwrap();
    assert_eq!(texts(&chunks), ["zero", "one", "two"]);
    let expected = chunk(1, "one");
    assert_eq!(
        chunks[1],
        KbChunk {
            document_id: a.id,
            kb_id: kb.id,
            ordinal: 1,
            heading_path: expected.heading_path,
            start: 100,
            end: 103,
            text: "one".into(),
            embedding: expected.embedding,
        }
    );
    assert_eq!(chunks[1].id(), format!("{}#1", a.id));
    let bare = &store.kb_chunks(c.id).await.unwrap()[0];
    assert_eq!(
        (bare.heading_path.len(), bare.embedding.as_ref()),
        (0, None)
    );
    assert_eq!(bare.kb_id, other.id);
    assert!(
        store
            .kb_chunks(KbDocumentId::new())
            .await
            .unwrap()
            .is_empty()
    );

    // By ids: in the order first named, unknown ones left out, each once.
    let ids = [
        (b.id, 1),
        (a.id, 2),
        (a.id, 9),
        (KbDocumentId::new(), 0),
        (c.id, 0),
        (b.id, 1),
    ];
    let found = store.kb_chunks_by_ids(&ids).await.unwrap();
    assert_eq!(texts(&found), ["b one", "two", "no headings"]);
    assert!(store.kb_chunks_by_ids(&[]).await.unwrap().is_empty());
    // Many at once (more than one statement's worth).
    let many: Vec<(KbDocumentId, u32)> = (0..1000).map(|i| (a.id, i)).collect();
    assert_eq!(store.kb_chunks_by_ids(&many).await.unwrap().len(), 3);

    // Pages: the knowledge base's chunks in (document id, ordinal) order, and nothing else.
    let mut everything: Vec<KbChunk> = [
        store.kb_chunks(a.id).await.unwrap(),
        store.kb_chunks(b.id).await.unwrap(),
    ]
    .concat();
    everything.sort_by_key(|c| (c.document_id.to_string(), c.ordinal));
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = store.kb_chunks_page(kb.id, after, 2).await.unwrap();
        assert!(page.len() <= 2);
        let Some(last) = page.last() else {
            break;
        };
        after = Some((last.document_id, last.ordinal));
        paged.extend(page);
    }
    assert_eq!(paged, everything);
    let one = store.kb_chunks_page(kb.id, None, 1).await.unwrap();
    assert_eq!(one, everything[..1]);
    assert!(
        store
            .kb_chunks_page(KnowledgeBaseId::new(), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn check_kb_change_log(store: &dyn Store) {
    assert_eq!(store.kb_change_head().await.unwrap(), 0);
    assert!(store.kb_changes_since(0, 10).await.unwrap().is_empty());
    let kb = knowledge_base(store, "log").await;
    let a = ingested(store, &kb, "a.md", &[chunk(0, "a")]).await;
    let other = knowledge_base(store, "other").await;
    let b = ingested(store, &other, "b.md", &[chunk(0, "b")]).await;
    // Uploads, failures and retries change nothing searchable: no entries.
    put(store, &kb, "c.md", b"c").await;
    let c = store
        .claim_kb_document(ars_domain::time::now(), LEASE)
        .await
        .unwrap()
        .unwrap();
    store
        .fail_kb_document(c.id, c.version, "boom")
        .await
        .unwrap();
    store.retry_kb_document(c.id).await.unwrap();
    assert_eq!(
        store.delete_kb_document(a.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        store.delete_kb_document(a.id).await.unwrap(),
        Deleted::NotFound
    );

    let changes = store.kb_changes_since(0, 10).await.unwrap();
    let entries: Vec<(KnowledgeBaseId, KbDocumentId)> =
        changes.iter().map(|c| (c.kb_id, c.document_id)).collect();
    assert_eq!(entries, [(kb.id, a.id), (other.id, b.id), (kb.id, a.id)]);
    assert!(changes.windows(2).all(|w| w[0].seq < w[1].seq));
    let head = store.kb_change_head().await.unwrap();
    assert_eq!(head, changes[2].seq);
    assert_eq!(
        store.kb_changes_since(changes[0].seq, 10).await.unwrap(),
        changes[1..]
    );
    assert_eq!(store.kb_changes_since(0, 1).await.unwrap(), changes[..1]);
    assert_eq!(
        store.kb_changes_since(head, 10).await.unwrap(),
        Vec::<KbChange>::new()
    );
}
