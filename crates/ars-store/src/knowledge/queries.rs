//! The queries of knowledge bases, their documents, chunks and change log, written once for
//! both databases (`$N` placeholders: see the crate docs).
//!
//! One statement differs per database: a claim on PostgreSQL skips rows another claim has
//! locked (`FOR UPDATE SKIP LOCKED`, which SQLite lacks and does not need, its one writer
//! running claims one at a time). Each store picks its variant as `CLAIM_KB_DOCUMENT`.

use crate::shares::{Dialects, ShareTable, share_table, visible_to, with_shares};

// Knowledge bases.

/// A knowledge base row with its document counts, in [`super::rows::KnowledgeBaseRow`]
/// order (the select list); [`knowledge_base_from!`] follows it.
macro_rules! knowledge_base_select {
    () => {
        "SELECT knowledge_bases.id AS id, knowledge_bases.slug AS slug, \
         knowledge_bases.name AS name, knowledge_bases.description AS description, \
         knowledge_bases.settings AS settings, knowledge_bases.visibility AS visibility, \
         knowledge_bases.owner_id AS owner_id, knowledge_bases.created_at AS created_at, \
         knowledge_bases.updated_at AS updated_at, \
         COUNT(d.id) AS documents, \
         CAST(COALESCE(SUM(d.chunk_count), 0) AS BIGINT) AS chunks, \
         CAST(COALESCE(SUM(d.size_bytes), 0) AS BIGINT) AS bytes, \
         COUNT(CASE WHEN d.status = 'pending' THEN 1 END) AS pending, \
         COUNT(CASE WHEN d.status = 'processing' THEN 1 END) AS processing, \
         COUNT(CASE WHEN d.status = 'error' THEN 1 END) AS failed"
    };
}

/// The tables of [`knowledge_base_select!`]; the statement continues with a `WHERE` on
/// `knowledge_bases` and must end with `GROUP BY knowledge_bases.id`.
macro_rules! knowledge_base_from {
    () => {
        " FROM knowledge_bases LEFT JOIN kb_documents d ON d.kb_id = knowledge_bases.id"
    };
}

/// `$8`: now, both timestamps.
pub(crate) const INSERT_KNOWLEDGE_BASE: &str = "INSERT INTO knowledge_bases (id, slug, name, \
     description, settings, visibility, owner_id, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)";

/// Everything but the id, the slug, the owner and `created_at`. `$6`: now.
pub(crate) const UPDATE_KNOWLEDGE_BASE: &str = "UPDATE knowledge_bases SET name = $2, \
     description = $3, settings = $4, visibility = $5, updated_at = $6 WHERE id = $1";

pub(crate) const KNOWLEDGE_BASE_BY_ID: Dialects = with_shares!(
    (
        "knowledge_bases",
        "knowledge_base_shares",
        "knowledge_base_id"
    ),
    knowledge_base_select!(),
    concat!(
        knowledge_base_from!(),
        " WHERE knowledge_bases.id = $1 GROUP BY knowledge_bases.id"
    )
);

pub(crate) const KNOWLEDGE_BASE_BY_SLUG: Dialects = with_shares!(
    (
        "knowledge_bases",
        "knowledge_base_shares",
        "knowledge_base_id"
    ),
    knowledge_base_select!(),
    concat!(
        knowledge_base_from!(),
        " WHERE knowledge_bases.slug = $1 GROUP BY knowledge_bases.id"
    )
);

/// `$1`: the viewing user's id, or NULL for every knowledge base. By slug, in byte order in
/// both databases (the PostgreSQL column uses the "C" collation). Each with its shares.
pub(crate) const LIST_KNOWLEDGE_BASES: Dialects = with_shares!(
    (
        "knowledge_bases",
        "knowledge_base_shares",
        "knowledge_base_id"
    ),
    knowledge_base_select!(),
    concat!(
        knowledge_base_from!(),
        " WHERE ",
        visible_to!(
            "knowledge_bases",
            "knowledge_base_shares",
            "knowledge_base_id",
            "$1"
        ),
        " GROUP BY knowledge_bases.id ORDER BY knowledge_bases.slug"
    )
);

/// The share rows of knowledge bases.
pub(crate) const KNOWLEDGE_BASE_SHARES: ShareTable =
    share_table!("knowledge_base_shares", "knowledge_base_id");

/// Shares, documents, files and chunks go with the row (ON DELETE CASCADE), in the same
/// statement.
pub(crate) const DELETE_KNOWLEDGE_BASE: &str = "DELETE FROM knowledge_bases WHERE id = $1";

pub(crate) const KNOWLEDGE_BASE_EXISTS: &str = "SELECT id FROM knowledge_bases WHERE id = $1";

// Documents.

/// The document columns, in [`super::rows::KbDocumentRow`] order; unqualified so they also
/// serve `RETURNING` clauses.
macro_rules! kb_document_columns {
    () => {
        "id, kb_id, name, format, size_bytes, sha256, version, status, progress, error, \
         chunk_count, attempts, uploaded_by, created_at, updated_at"
    };
}

/// Inserts document `$1` into knowledge base `$2` under name `$3`, or replaces the document of
/// that name in place: it keeps its id, chunks and `created_at`, takes the new format (`$4`),
/// size (`$5`), hash (`$6`) and uploader (`$7`), goes up one version and starts over as
/// `pending`. `$8`: now.
pub(crate) const PUT_KB_DOCUMENT: &str = concat!(
    "INSERT INTO kb_documents (id, kb_id, name, format, size_bytes, sha256, version, status, \
     progress, error, chunk_count, attempts, lease_until, uploaded_by, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, 1, 'pending', 0, NULL, 0, 0, NULL, $7, $8, $8) \
     ON CONFLICT (kb_id, name) DO UPDATE SET format = excluded.format, \
     size_bytes = excluded.size_bytes, sha256 = excluded.sha256, \
     version = kb_documents.version + 1, status = 'pending', progress = 0, error = NULL, \
     attempts = 0, lease_until = NULL, uploaded_by = excluded.uploaded_by, \
     updated_at = excluded.updated_at RETURNING ",
    kb_document_columns!()
);

/// `$1`: the document; `$2`: the bytes of its current version.
pub(crate) const PUT_KB_DOCUMENT_FILE: &str = "INSERT INTO kb_document_files (document_id, \
     bytes) VALUES ($1, $2) ON CONFLICT (document_id) DO UPDATE SET bytes = excluded.bytes";

/// By name, in byte order in both databases (the PostgreSQL column uses the "C" collation).
pub(crate) const KB_DOCUMENTS: &str = concat!(
    "SELECT ",
    kb_document_columns!(),
    " FROM kb_documents WHERE kb_id = $1 ORDER BY name"
);

pub(crate) const KB_DOCUMENT: &str = concat!(
    "SELECT ",
    kb_document_columns!(),
    " FROM kb_documents WHERE id = $1"
);

pub(crate) const KB_DOCUMENT_FILE: &str =
    "SELECT bytes FROM kb_document_files WHERE document_id = $1";

/// The file and chunks go with the row (ON DELETE CASCADE); answers the knowledge base, for
/// the change log.
pub(crate) const DELETE_KB_DOCUMENT: &str =
    "DELETE FROM kb_documents WHERE id = $1 RETURNING kb_id";

// Ingestion.

/// Whether a document may be claimed at `$1` (now): pending, or processing under a lease that
/// ran out (its worker died).
macro_rules! claimable {
    () => {
        "(status = 'pending' OR (status = 'processing' AND lease_until < $1))"
    };
}

/// Takes the least recently updated claimable document: processing, leased until `$2`, one
/// more attempt; `$1`: now. The subquery picks it, the outer condition re-checks it at the
/// moment of the update, so of racing claims only one takes it. `$lock` follows the subquery's
/// `LIMIT`.
macro_rules! claim_kb_document {
    ($lock:literal) => {
        concat!(
            "UPDATE kb_documents SET status = 'processing', lease_until = $2, \
             attempts = attempts + 1, updated_at = $1 WHERE id = (SELECT id FROM kb_documents \
             WHERE ",
            claimable!(),
            " ORDER BY updated_at, id LIMIT 1",
            $lock,
            ") AND ",
            claimable!(),
            " RETURNING ",
            kb_document_columns!()
        )
    };
}

/// Whether any document is claimable at `$1` (`Store::kb_claimable`).
pub(crate) const ANY_CLAIMABLE_KB_DOCUMENT: &str = concat!(
    "SELECT id FROM kb_documents WHERE ",
    claimable!(),
    " LIMIT 1"
);

/// SQLite's claim: its one writer runs claims one at a time.
pub(crate) const CLAIM_KB_DOCUMENT_SQLITE: &str = claim_kb_document!("");

/// PostgreSQL's claim: the subquery locks the document it picks and skips any another claim
/// has locked, so concurrent claims take different documents instead of all but one coming
/// back empty.
pub(crate) const CLAIM_KB_DOCUMENT_POSTGRES: &str = claim_kb_document!(" FOR UPDATE SKIP LOCKED");

/// `$1`: the document; `$2`: the version claimed; `$3`: progress; `$4`: the new lease end;
/// `$5`: now.
pub(crate) const RENEW_KB_DOCUMENT: &str = "UPDATE kb_documents SET progress = $3, \
     lease_until = $4, updated_at = $5 \
     WHERE id = $1 AND version = $2 AND status = 'processing'";

/// `$1`: the document; `$2`: the version claimed; `$3`: its chunk count; `$4`: now. Answers
/// the knowledge base, for the chunks and the change log; no row when the version is stale.
pub(crate) const FINISH_KB_DOCUMENT: &str = "UPDATE kb_documents SET status = 'ready', \
     progress = 1, chunk_count = $3, lease_until = NULL, error = NULL, updated_at = $4 \
     WHERE id = $1 AND version = $2 AND status = 'processing' RETURNING kb_id";

/// `$1`: the document; `$2`: the version claimed; `$3`: the error; `$4`: now.
pub(crate) const FAIL_KB_DOCUMENT: &str = "UPDATE kb_documents SET status = 'error', \
     error = $3, lease_until = NULL, updated_at = $4 \
     WHERE id = $1 AND version = $2 AND status = 'processing'";

/// `$1`: the document; `$2`: the version claimed; `$3`: now. The claim is given back
/// uncounted: the attempt it added is taken off.
pub(crate) const RELEASE_KB_DOCUMENT: &str = "UPDATE kb_documents SET status = 'pending', \
     lease_until = NULL, progress = 0, attempts = CASE WHEN attempts > 0 THEN attempts - 1 \
     ELSE 0 END, updated_at = $3 \
     WHERE id = $1 AND version = $2 AND status = 'processing'";

/// `$1`: the document; `$2`: now.
pub(crate) const RETRY_KB_DOCUMENT: &str = "UPDATE kb_documents SET status = 'pending', \
     error = NULL, progress = 0, attempts = 0, updated_at = $2 \
     WHERE id = $1 AND status = 'error'";

// Chunks.

/// The chunk columns, in [`super::rows::KbChunkRow`] order.
macro_rules! kb_chunk_columns {
    () => {
        "document_id, kb_id, ordinal, heading_path, start_offset, end_offset, text, embedding"
    };
}

/// The start of a multi-row insert; the caller pushes the values.
pub(crate) const INSERT_KB_CHUNKS: &str =
    concat!("INSERT INTO kb_chunks (", kb_chunk_columns!(), ") ");

/// How many chunks one insert writes: 8 binds each, far below either database's limit.
pub(crate) const KB_CHUNKS_PER_INSERT: usize = 500;

pub(crate) const DELETE_KB_CHUNKS: &str = "DELETE FROM kb_chunks WHERE document_id = $1";

pub(crate) const KB_CHUNKS: &str = concat!(
    "SELECT ",
    kb_chunk_columns!(),
    " FROM kb_chunks WHERE document_id = $1 ORDER BY ordinal"
);

/// How many (document, ordinal) pairs one [`kb_chunks_by_ids`] statement looks up.
pub(crate) const KB_CHUNK_IDS_PER_SELECT: usize = 400;

/// The chunks named by `n` (document, ordinal) pairs, bound as `$1, $2`, `$3, $4`, …
/// (`n` ≥ 1).
pub(crate) fn kb_chunks_by_ids(n: usize) -> String {
    let pairs: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "(document_id = ${} AND ordinal = ${})",
                2 * i + 1,
                2 * i + 2
            )
        })
        .collect();
    format!(
        "SELECT {} FROM kb_chunks WHERE {}",
        kb_chunk_columns!(),
        pairs.join(" OR ")
    )
}

/// Up to `$4` chunks of knowledge base `$1` after (document `$2`, ordinal `$3`), in that
/// order; from the start with `''` and -1. Document ids order by bytes in both databases (the
/// PostgreSQL column uses the "C" collation). The row-value comparison lets both answer from
/// the `(kb_id, document_id, ordinal)` index.
pub(crate) const KB_CHUNKS_PAGE: &str = concat!(
    "SELECT ",
    kb_chunk_columns!(),
    " FROM kb_chunks WHERE kb_id = $1 AND (document_id, ordinal) > ($2, $3) \
     ORDER BY document_id, ordinal LIMIT $4"
);

// The change log.

/// `$1`: the knowledge base; `$2`: the document; `$3`: now. Writers hold the store's change
/// log lock (PostgreSQL), so entries commit in `seq` order.
pub(crate) const APPEND_KB_CHANGE: &str =
    "INSERT INTO kb_changes (kb_id, document_id, at) VALUES ($1, $2, $3)";

pub(crate) const KB_CHANGES_SINCE: &str =
    "SELECT seq, kb_id, document_id FROM kb_changes WHERE seq > $1 ORDER BY seq LIMIT $2";

pub(crate) const KB_CHANGE_HEAD: &str = "SELECT COALESCE(MAX(seq), 0) FROM kb_changes";
