//! Knowledge: knowledge bases (a shared resource, see [`crate::shares`]), their documents and
//! the ingestion of those, the chunks searches read, and the change log that keeps every
//! instance's search index current.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{
    KbChunk, KbDocument, KbDocumentId, KnowledgeBase, KnowledgeBaseFields, KnowledgeBaseId,
    NewKbChunk, NewKbDocument, UserId,
};

use crate::{Deleted, Result, Retried, Written};

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// Which knowledge bases a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct KnowledgeBaseFilter {
    /// Only knowledge bases this user can see (`ars_domain::Caller::can_view` for a
    /// non-admin); `None` lists every knowledge base (admins).
    pub visible_to: Option<UserId>,
}

/// An entry of the knowledge base change log: document `document_id` of `kb_id` was finished
/// or deleted, so its chunks in a search index are stale (read them again; none left means
/// drop them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KbChange {
    /// Rises with every entry, in commit order: whoever has applied every entry up to `seq`
    /// has seen every change committed before it.
    pub seq: i64,
    pub kb_id: KnowledgeBaseId,
    pub document_id: KbDocumentId,
}

/// Knowledge bases, their documents and ingestion, chunks and the change log.
#[async_trait]
pub trait KnowledgeStore: Send + Sync {
    // Knowledge bases: the row and its shares change together; documents, their files and
    // chunks go with it. Writes that change what is searchable (a document finished or
    // deleted) append to the change log in their transaction.

    /// Creates a knowledge base with this id. A taken slug is `Conflict { field: "slug" }`; an
    /// unknown owner or share user is `Invalid`. Nothing is written on any error.
    async fn create_knowledge_base(
        &self,
        id: KnowledgeBaseId,
        fields: &KnowledgeBaseFields,
        owner: Option<UserId>,
    ) -> Result<KnowledgeBase>;
    /// The knowledge base with this id, shares and counts included; no visibility check.
    async fn knowledge_base(&self, id: KnowledgeBaseId) -> Result<Option<KnowledgeBase>>;
    /// The knowledge base with this slug, shares and counts included; no visibility check.
    async fn knowledge_base_by_slug(&self, slug: &str) -> Result<Option<KnowledgeBase>>;
    /// Knowledge bases matching `filter`, by slug (byte order).
    async fn list_knowledge_bases(&self, filter: KnowledgeBaseFilter)
    -> Result<Vec<KnowledgeBase>>;
    /// Replaces every field but the slug (which never changes: `fields.slug` is ignored) and
    /// the shares, sets `updated_at`, in one transaction; `NotFound` when the knowledge base is
    /// gone, an unknown share user `Invalid`. Documents are not touched: changed chunk
    /// settings apply to documents ingested from then on.
    async fn update_knowledge_base(
        &self,
        id: KnowledgeBaseId,
        fields: &KnowledgeBaseFields,
    ) -> Result<KnowledgeBase>;
    /// Deletes a knowledge base with its shares, documents, files and chunks;
    /// [`Deleted::NotFound`] when there was none. Nothing goes to the change log: an instance
    /// drops the index of a knowledge base it finds gone.
    async fn delete_knowledge_base(&self, id: KnowledgeBaseId) -> Result<Deleted>;

    // Documents of knowledge bases, and their ingestion. Several instances may ingest at once:
    // a document is taken with a lease ([`KnowledgeStore::claim_kb_document`]), and every later
    // write of the worker names the version it claimed, so a re-upload (a new version) or a
    // deletion meanwhile turns those writes into no-ops ([`Written::Superseded`]).

    /// Uploads a document into knowledge base `kb_id`, in one transaction: inserted as `new.id`
    /// at version 1, or, when the knowledge base already holds a document of that name,
    /// replacing it in place (it keeps its id; new bytes, size, hash, format and uploader;
    /// version + 1). Either way it is `pending` with progress 0, no error, no attempts and no
    /// lease. A replaced document's chunks stay (searches find the old version) until the new
    /// version is finished. `NotFound` when the knowledge base is gone.
    async fn put_kb_document(
        &self,
        kb_id: KnowledgeBaseId,
        new: NewKbDocument,
    ) -> Result<KbDocument>;
    /// The documents of a knowledge base, by name (byte order); empty for an unknown one.
    async fn kb_documents(&self, kb_id: KnowledgeBaseId) -> Result<Vec<KbDocument>>;
    /// The document with this id, if any.
    async fn kb_document(&self, id: KbDocumentId) -> Result<Option<KbDocument>>;
    /// The bytes uploaded for the document's current version; `None` when it is gone.
    async fn kb_document_file(&self, id: KbDocumentId) -> Result<Option<Vec<u8>>>;
    /// Deletes a document with its file and chunks and appends it to the change log, in one
    /// transaction; [`Deleted::NotFound`] when there was none.
    async fn delete_kb_document(&self, id: KbDocumentId) -> Result<Deleted>;
    /// Whether [`KnowledgeStore::claim_kb_document`] at `now` would find a document: a read,
    /// so an idle worker polls without taking a place in the write queue.
    async fn kb_claimable(&self, now: DateTime<Utc>) -> Result<bool>;
    /// Takes one document for ingestion, atomically: the one least recently updated among
    /// those `pending` and those `processing` whose lease ran out before `now` (their worker
    /// died). It becomes `processing` with its lease until `now + lease` and one more attempt,
    /// and is answered as claimed (with the version to name in later writes); `None` when
    /// nothing is claimable. Of concurrent callers, on any instance, exactly one gets a given
    /// document. Callers give up on a document whose attempts pass their limit
    /// ([`KnowledgeStore::fail_kb_document`]).
    async fn claim_kb_document(
        &self,
        now: DateTime<Utc>,
        lease: std::time::Duration,
    ) -> Result<Option<KbDocument>>;
    /// Records the progress (clamped to 0..=1) of ingesting `version` and extends its lease to
    /// `lease_until`; [`Written::Superseded`] when the document is gone, has another version
    /// or is no longer `processing`: the worker stops.
    async fn renew_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        progress: f32,
        lease_until: DateTime<Utc>,
    ) -> Result<Written>;
    /// Stores the chunks of `version`, in one transaction, only while the document still has
    /// that version and is `processing`: its previous chunks are replaced by `chunks`, it
    /// becomes `ready` (progress 1, `chunk_count`, no lease, no error) and the change log gets
    /// an entry. [`Written::Superseded`] (nothing written) when it was re-uploaded, deleted or
    /// is no longer processing. Two chunks with one ordinal, or a chunk ending before it
    /// starts, are `Invalid`.
    async fn finish_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        chunks: &[NewKbChunk],
    ) -> Result<Written>;
    /// Marks `version` failed with `error` (status `error`, no lease) while it is
    /// `processing`; its previous chunks, if any, stay searchable. [`Written::Superseded`] as
    /// for [`KnowledgeStore::renew_kb_document`].
    async fn fail_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        error: &str,
    ) -> Result<Written>;
    /// Gives a claim of `version` back while it is `processing` (a worker stopping with its
    /// server): `pending` again, no lease, and the claim's attempt not counted.
    /// [`Written::Superseded`] as for [`KnowledgeStore::renew_kb_document`].
    async fn release_kb_document(&self, id: KbDocumentId, version: u32) -> Result<Written>;
    /// Puts a failed document back to `pending` with no error, progress 0 and no attempts;
    /// [`Retried::NotFailed`] when it is gone or not `error`.
    async fn retry_kb_document(&self, id: KbDocumentId) -> Result<Retried>;

    // Chunks and the change log, for searching and for keeping search indexes current.

    /// The chunks of a document, by ordinal; empty for an unknown one.
    async fn kb_chunks(&self, document_id: KbDocumentId) -> Result<Vec<KbChunk>>;
    /// The chunks named by `ids` (document, ordinal), in the order first named; those not
    /// stored are left out.
    async fn kb_chunks_by_ids(&self, ids: &[(KbDocumentId, u32)]) -> Result<Vec<KbChunk>>;
    /// Up to `limit` chunks of a knowledge base in (document id, ordinal) order, starting after
    /// `after`: pages for rebuilding a search index.
    async fn kb_chunks_page(
        &self,
        kb_id: KnowledgeBaseId,
        after: Option<(KbDocumentId, u32)>,
        limit: u32,
    ) -> Result<Vec<KbChunk>>;
    /// Up to `limit` change log entries after `seq`, oldest first.
    async fn kb_changes_since(&self, seq: i64, limit: u32) -> Result<Vec<KbChange>>;
    /// The last change log entry's `seq`; 0 when there is none. An index rebuilt from the
    /// chunks read after this answer is current up to it.
    async fn kb_change_head(&self) -> Result<i64>;
}
