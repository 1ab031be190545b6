//! Rows of `knowledge_bases`, `kb_documents`, `kb_chunks` and `kb_changes`, and their
//! conversion from and into domain types.
//!
//! Counts, sizes, versions and ordinals are `BIGINT`s in the databases: values outside the
//! domain's unsigned types are refused on the way in ([`StoreError::Invalid`]) and reported on
//! the way out ([`StoreError::Corrupt`]), never wrapped. Embeddings are stored as little-endian
//! 32-bit floats.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{
    KbChunk, KbCounts, KbDocument, KbDocumentId, KbDocumentStatus, KbSettings, KnowledgeBase,
    KnowledgeBaseFields, KnowledgeBaseId, NewKbChunk,
};

use crate::rows::{corrupt, parse_user_id};
use crate::shares::{ShareRow, SharedRow, share_config};
use crate::{KbChange, Result, StoreError};

#[derive(sqlx::FromRow)]
pub(crate) struct KnowledgeBaseRow {
    id: String,
    slug: String,
    name: String,
    description: String,
    settings: Json<KbSettings>,
    visibility: String,
    owner_id: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    documents: i64,
    chunks: i64,
    bytes: i64,
    pending: i64,
    processing: i64,
    failed: i64,
}

impl SharedRow for KnowledgeBaseRow {
    type Resource = KnowledgeBase;

    fn id(&self) -> &str {
        &self.id
    }

    fn into_resource(self, shares: Vec<ShareRow>) -> Result<KnowledgeBase> {
        let count = |what: &str, stored: i64| {
            u64::try_from(stored).map_err(|_| corrupt(what, &stored.to_string()))
        };
        Ok(KnowledgeBase {
            id: parse_kb_id(&self.id)?,
            fields: KnowledgeBaseFields {
                slug: self.slug,
                name: self.name,
                description: self.description,
                settings: self.settings.0,
                share_config: share_config("knowledge_bases.visibility", &self.visibility, shares)?,
            },
            owner_id: self.owner_id.as_deref().map(parse_user_id).transpose()?,
            counts: KbCounts {
                documents: count("document count", self.documents)?,
                chunks: count("chunk count", self.chunks)?,
                bytes: count("document bytes", self.bytes)?,
                pending: count("pending count", self.pending)?,
                processing: count("processing count", self.processing)?,
                failed: count("failed count", self.failed)?,
            },
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct KbDocumentRow {
    id: String,
    kb_id: String,
    name: String,
    format: String,
    size_bytes: i64,
    sha256: String,
    version: i64,
    status: String,
    progress: f32,
    error: Option<String>,
    chunk_count: i64,
    attempts: i64,
    uploaded_by: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl KbDocumentRow {
    pub(crate) fn into_document(self) -> Result<KbDocument> {
        Ok(KbDocument {
            id: parse_document_id(&self.id)?,
            kb_id: parse_kb_id(&self.kb_id)?,
            name: self.name,
            format: self.format,
            size_bytes: u64::try_from(self.size_bytes)
                .map_err(|_| corrupt("kb_documents.size_bytes", &self.size_bytes.to_string()))?,
            sha256: self.sha256,
            version: u32::try_from(self.version)
                .map_err(|_| corrupt("kb_documents.version", &self.version.to_string()))?,
            status: KbDocumentStatus::parse(&self.status)
                .ok_or_else(|| corrupt("kb_documents.status", &self.status))?,
            progress: self.progress,
            error: self.error,
            chunk_count: u64::try_from(self.chunk_count)
                .map_err(|_| corrupt("kb_documents.chunk_count", &self.chunk_count.to_string()))?,
            attempts: u32::try_from(self.attempts)
                .map_err(|_| corrupt("kb_documents.attempts", &self.attempts.to_string()))?,
            uploaded_by: self.uploaded_by.as_deref().map(parse_user_id).transpose()?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct KbChunkRow {
    document_id: String,
    kb_id: String,
    ordinal: i64,
    heading_path: Json<Vec<String>>,
    start_offset: i64,
    end_offset: i64,
    text: String,
    embedding: Option<Vec<u8>>,
}

impl KbChunkRow {
    pub(crate) fn into_chunk(self) -> Result<KbChunk> {
        let offset = |what: &str, stored: i64| {
            u64::try_from(stored).map_err(|_| corrupt(what, &stored.to_string()))
        };
        Ok(KbChunk {
            document_id: parse_document_id(&self.document_id)?,
            kb_id: parse_kb_id(&self.kb_id)?,
            ordinal: u32::try_from(self.ordinal)
                .map_err(|_| corrupt("kb_chunks.ordinal", &self.ordinal.to_string()))?,
            heading_path: self.heading_path.0,
            start: offset("kb_chunks.start_offset", self.start_offset)?,
            end: offset("kb_chunks.end_offset", self.end_offset)?,
            text: self.text,
            embedding: self
                .embedding
                .as_deref()
                .map(embedding_from_bytes)
                .transpose()?,
        })
    }
}

/// A chunk as the databases store it (offsets as `BIGINT`, the embedding as bytes).
pub(crate) struct StoredChunk<'a> {
    pub(crate) ordinal: i64,
    pub(crate) heading_path: &'a [String],
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) text: &'a str,
    pub(crate) embedding: Option<Vec<u8>>,
}

/// `chunks` as stored, checked first: each ordinal once, no chunk ending before it starts, and
/// offsets a `BIGINT` holds. The first chunk that breaks a rule is named.
pub(crate) fn stored_chunks(chunks: &[NewKbChunk]) -> Result<Vec<StoredChunk<'_>>> {
    let mut ordinals = std::collections::HashSet::new();
    chunks
        .iter()
        .map(|chunk| {
            let bad = |why: &str| StoreError::Invalid(format!("chunk {}: {why}", chunk.ordinal));
            if !ordinals.insert(chunk.ordinal) {
                return Err(bad("its ordinal is given more than once"));
            }
            if chunk.end < chunk.start {
                return Err(bad("it ends before it starts"));
            }
            let offset = |value: u64| i64::try_from(value).map_err(|_| bad("offset out of range"));
            Ok(StoredChunk {
                ordinal: i64::from(chunk.ordinal),
                heading_path: &chunk.heading_path,
                start: offset(chunk.start)?,
                end: offset(chunk.end)?,
                text: &chunk.text,
                embedding: chunk.embedding.as_deref().map(embedding_bytes),
            })
        })
        .collect()
}

/// An embedding as stored: each float's 4 little-endian bytes, in order.
pub(crate) fn embedding_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// An embedding read back from its bytes.
fn embedding_from_bytes(bytes: &[u8]) -> Result<Vec<f32>> {
    let chunks = bytes.chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return Err(StoreError::Corrupt(format!(
            "an embedding of {} bytes is not a list of 32-bit floats",
            bytes.len()
        )));
    }
    Ok(chunks
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

#[derive(sqlx::FromRow)]
pub(crate) struct KbChangeRow {
    seq: i64,
    kb_id: String,
    document_id: String,
}

impl KbChangeRow {
    pub(crate) fn into_change(self) -> Result<KbChange> {
        Ok(KbChange {
            seq: self.seq,
            kb_id: parse_kb_id(&self.kb_id)?,
            document_id: parse_document_id(&self.document_id)?,
        })
    }
}

/// A document's size as stored.
pub(crate) fn stored_size(bytes: &[u8]) -> Result<i64> {
    i64::try_from(bytes.len()).map_err(|_| StoreError::Invalid("the document is too large".into()))
}

/// Progress as stored: within 0..=1, and 0 for NaN (a CHECK refuses anything else).
pub(crate) fn stored_progress(progress: f32) -> f32 {
    if progress.is_nan() {
        0.0
    } else {
        progress.clamp(0.0, 1.0)
    }
}

pub(crate) fn parse_kb_id(text: &str) -> Result<KnowledgeBaseId> {
    KnowledgeBaseId::parse(text).ok_or_else(|| corrupt("knowledge base id", text))
}

fn parse_document_id(text: &str) -> Result<KbDocumentId> {
    KbDocumentId::parse(text).ok_or_else(|| corrupt("document id", text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_round_trip_through_little_endian_bytes() {
        let vector = vec![0.0, -1.5, f32::MAX, 1e-7];
        let bytes = embedding_bytes(&vector);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[4..8], &(-1.5f32).to_le_bytes());
        assert_eq!(embedding_from_bytes(&bytes).unwrap(), vector);
        assert!(embedding_from_bytes(&bytes[..5]).is_err());
    }

    #[test]
    fn progress_is_kept_within_zero_and_one() {
        assert_eq!(stored_progress(0.25), 0.25);
        assert_eq!(stored_progress(1.5), 1.0);
        assert_eq!(stored_progress(-0.1), 0.0);
        assert_eq!(stored_progress(f32::NAN), 0.0);
    }

    #[test]
    fn chunks_with_one_ordinal_twice_or_ending_before_they_start_are_refused() {
        let chunk = |ordinal, start, end| NewKbChunk {
            ordinal,
            heading_path: Vec::new(),
            start,
            end,
            text: "t".into(),
            embedding: None,
        };
        assert!(stored_chunks(&[chunk(0, 0, 1), chunk(1, 1, 1)]).is_ok());
        let twice = stored_chunks(&[chunk(0, 0, 1), chunk(0, 1, 2)]).err();
        assert!(matches!(twice, Some(StoreError::Invalid(m)) if m.contains("more than once")));
        let backwards = stored_chunks(&[chunk(3, 5, 4)]).err();
        assert!(matches!(backwards, Some(StoreError::Invalid(m)) if m.starts_with("chunk 3")));
    }
}
