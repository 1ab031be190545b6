//! Searching a knowledge base, and opening a citation an agent wrote.

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use ars_domain::KbDocumentId;
use ars_runtime::knowledge::SearchMode;
use ars_runtime::knowledge::tools::{citation, parse_citation};

use super::documents::{KbChunkView, KbDocumentView, chunk_view, document_view};
use super::{SearchKind, visible};
use crate::extract::{ApiJson, ApiQuery};
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The longest query, in characters.
const QUERY_MAX_CHARS: usize = 1000;
/// The most hits one search answers.
const TOP_K_MAX: usize = 50;

/// The body of `POST /api/knowledge-bases/{id}/search`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KbSearchRequest {
    /// What to look for, in any words (Chinese and English alike); 1-1000 characters.
    #[schema(min_length = 1, max_length = 1000)]
    query: String,
    /// How many hits (default 10, at most 50).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 50)]
    top_k: Option<usize>,
}

/// A passage that answers the query.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbHitView {
    /// What agents cite it by: `[<knowledge base>:<document>#<ordinal>]`.
    citation: String,
    /// `<document id>#<ordinal>`.
    chunk_id: String,
    document_id: KbDocumentId,
    document_name: String,
    ordinal: u32,
    /// The headings above the passage, outermost first.
    heading_path: Vec<String>,
    /// Byte offsets of the passage in the document's extracted text.
    start: u64,
    end: u64,
    /// BM25: its score; hybrid: the fused reciprocal-rank score. Higher is better; scores of
    /// different searches do not compare.
    score: f64,
    /// A stretch of the passage, HTML-escaped, with the query's words in `<b>…</b>`.
    snippet: String,
    text: String,
}

/// What a search found.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbSearchView {
    /// How the hits were ranked: `hybrid` when the query was embedded too.
    search: SearchKind,
    /// Best first.
    hits: Vec<KbHitView>,
}

/// Searches a knowledge base: BM25 over its chunks (Chinese segmented into words, English
/// stemmed), fused with the embedding model's ranking when it has one. What was just
/// ingested, on any instance, is found.
#[utoipa::path(post, path = "/knowledge-bases/{id}/search", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    request_body = KbSearchRequest,
    responses(
        (status = 200, body = KbSearchView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "An empty or too long query, or `top_k` out of range"),
    ))]
pub async fn search_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<KbSearchRequest>,
) -> Result<Json<KbSearchView>, ApiError> {
    let kb = visible(&state, &auth.caller(), &id).await?;
    if body.query.trim().is_empty() {
        return Err(ApiError::unprocessable("query", "must not be empty"));
    }
    if body.query.chars().count() > QUERY_MAX_CHARS {
        return Err(ApiError::unprocessable(
            "query",
            format!("must be at most {QUERY_MAX_CHARS} characters"),
        ));
    }
    let top_k = body.top_k.unwrap_or(10);
    if !(1..=TOP_K_MAX).contains(&top_k) {
        return Err(ApiError::unprocessable(
            "top_k",
            format!("must be 1-{TOP_K_MAX}"),
        ));
    }
    let searched = state
        .knowledge
        .search(&kb, &body.query, top_k, state.runtime.model_source())
        .await
        .map_err(|e| ApiError::Internal(format!("searching {}: {e}", kb.id)))?;
    let slug = &kb.fields.slug;
    Ok(Json(KbSearchView {
        search: match searched.mode {
            SearchMode::Bm25 => SearchKind::Bm25,
            SearchMode::Hybrid => SearchKind::Hybrid,
        },
        hits: searched
            .hits
            .into_iter()
            .map(|hit| KbHitView {
                citation: citation(slug, &hit.document_name, hit.ordinal),
                chunk_id: hit.chunk_id,
                document_id: hit.document_id,
                document_name: hit.document_name,
                ordinal: hit.ordinal,
                heading_path: hit.heading_path,
                start: hit.start,
                end: hit.end,
                score: hit.score,
                snippet: hit.snippet,
                text: hit.text,
            })
            .collect(),
    }))
}

/// Which citation to open.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct CitationQuery {
    /// A citation as agents write it, e.g. `[handbook:travel.md#3]`.
    #[param(min_length = 1, max_length = 400)]
    r#ref: String,
}

/// The knowledge base a citation names.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbCitationBase {
    id: ars_domain::KnowledgeBaseId,
    slug: String,
    name: String,
}

/// A citation opened: the passage it names between its neighbours.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbCitationView {
    knowledge_base: KbCitationBase,
    document: KbDocumentView,
    /// The cited chunk (the document's first when the citation names none).
    ordinal: u32,
    /// The cited chunk with the one before and the one after it, when they exist.
    chunks: Vec<KbChunkView>,
}

/// Opens a citation an agent wrote (`[<knowledge base>:<document>#<chunk>]`): the knowledge
/// base, the document and the cited passage in context. What the caller cannot see is a 404.
#[utoipa::path(get, path = "/knowledge-citations", tag = "knowledge", security(("bearer" = [])),
    params(CitationQuery),
    responses(
        (status = 200, body = KbCitationView),
        (status = 400, body = ErrorBody, description = "Malformed query string"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such knowledge base, document or chunk that the caller can see"),
        (status = 422, body = ErrorBody, description = "`ref` is not a citation"),
    ))]
pub async fn open_citation(
    State(state): State<AppState>,
    auth: Auth,
    ApiQuery(query): ApiQuery<CitationQuery>,
) -> Result<Json<KbCitationView>, ApiError> {
    let (slug, name, ordinal) = parse_citation(&query.r#ref).ok_or_else(|| {
        ApiError::unprocessable(
            "ref",
            "not a citation: expected `[<knowledge base>:<document>#<chunk>]`",
        )
    })?;
    let caller = auth.caller();
    let not_found = || ApiError::not_found(ars_domain::Subject::Passage);
    let kb = state
        .store
        .knowledge_base_by_slug(&slug)
        .await?
        .filter(|kb| caller.can_view(kb))
        .ok_or_else(not_found)?;
    let document = state
        .store
        .kb_documents(kb.id)
        .await?
        .into_iter()
        .find(|d| d.name == name)
        .ok_or_else(not_found)?;
    let chunks = state.store.kb_chunks(document.id).await?;
    let ordinal = ordinal.unwrap_or(0);
    if !chunks.iter().any(|c| c.ordinal == ordinal) {
        return Err(not_found());
    }
    let chunks = chunks
        .into_iter()
        .filter(|c| c.ordinal + 1 >= ordinal && c.ordinal <= ordinal + 1)
        .map(|c| chunk_view(&kb, &document.name, c))
        .collect();
    Ok(Json(KbCitationView {
        knowledge_base: KbCitationBase {
            id: kb.id,
            slug: kb.fields.slug.clone(),
            name: kb.fields.name.clone(),
        },
        document: document_view(document),
        ordinal,
        chunks,
    }))
}
