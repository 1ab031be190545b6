//! A knowledge base's documents: upload (multipart, several files at once, or JSON text),
//! list, read, download, retry, delete, and their chunks. Every change is told to the
//! followers of the knowledge base's event stream (`events`), on every instance.
//!
//! An upload is checked whole before anything is stored — every file's name, format and size,
//! and the knowledge base's total — so a refused upload stores nothing. A name already in the
//! knowledge base replaces that document as its next version; its old chunks stay searchable
//! until the new ones are ready, then are swapped in one transaction.

use std::collections::{BTreeSet, HashMap};

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use ars_domain::knowledge::{
    KbChunk, KbDocument, KbDocumentStatus, NewKbDocument, validate_document_name,
};
use ars_domain::{ErrorReason, KbDocumentId, KnowledgeBase, KnowledgeBaseId, Reason, UserId};
use ars_knowledge::extract::Format;
use ars_runtime::knowledge::tools::citation;

use super::{managed, visible};
use crate::extract::{ApiQuery, parse_json};
use crate::uploads::Held;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// Files one upload may hold.
const MAX_FILES: usize = 100;
/// Chunks one read of `/chunks` answers at most.
const MAX_CHUNKS_READ: u32 = 200;

/// Where a document is in ingestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KbDocumentStatusView {
    /// Waiting for a worker.
    Pending,
    /// Being read, cut and embedded (`progress` says how far).
    Processing,
    /// Searchable.
    Ready,
    /// Ingestion failed; `error` says why. Retry with `POST …/retry`.
    Error,
}

impl From<KbDocumentStatus> for KbDocumentStatusView {
    fn from(status: KbDocumentStatus) -> Self {
        match status {
            KbDocumentStatus::Pending => Self::Pending,
            KbDocumentStatus::Processing => Self::Processing,
            KbDocumentStatus::Ready => Self::Ready,
            KbDocumentStatus::Error => Self::Error,
        }
    }
}

/// A document of a knowledge base.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct KbDocumentView {
    id: KbDocumentId,
    knowledge_base_id: KnowledgeBaseId,
    /// Unique in its knowledge base; uploading the same name again replaces the document.
    name: String,
    /// The name's extension in lower case, e.g. `pdf`.
    format: String,
    size_bytes: u64,
    /// 1 for the first upload, one more for each replacement.
    version: u32,
    status: KbDocumentStatusView,
    /// How far ingestion of this version is, 0 to 1.
    progress: f32,
    /// Why ingestion failed, in words (status `error`).
    error: Option<String>,
    /// Chunks stored (the previous version's while a replacement is ingested).
    chunk_count: u64,
    uploaded_by: Option<UserId>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl KbDocumentView {
    pub(super) fn id(&self) -> KbDocumentId {
        self.id
    }
}

pub(crate) fn document_view(document: KbDocument) -> KbDocumentView {
    KbDocumentView {
        id: document.id,
        knowledge_base_id: document.kb_id,
        name: document.name,
        format: document.format,
        size_bytes: document.size_bytes,
        version: document.version,
        status: document.status.into(),
        progress: document.progress,
        error: document.error,
        chunk_count: document.chunk_count,
        uploaded_by: document.uploaded_by,
        created_at: document.created_at,
        updated_at: document.updated_at,
    }
}

/// What an upload stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbUploadView {
    /// In the order uploaded; each `pending` until a worker takes it.
    documents: Vec<KbDocumentView>,
}

/// A plain-text document, as JSON.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KbTextDocument {
    /// The document's name; without an extension it is stored as `<name>.txt`. `.md` makes
    /// the text Markdown (headings become citations' heading paths).
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    text: String,
}

/// Files as `multipart/form-data`: one or more parts named `files`, each with a file name.
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct KbFiles {
    /// `.txt`, `.md`, `.html`, `.pdf`, `.docx`, `.csv` or `.json` files.
    #[schema(value_type = Vec<String>, format = Binary)]
    files: Vec<Vec<u8>>,
}

/// One chunk of a document: the passage a citation names.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbChunkView {
    /// Its position in the document, from 0.
    ordinal: u32,
    /// What agents cite it by: `[<knowledge base>:<document>#<ordinal>]`.
    citation: String,
    /// The headings above it, outermost first.
    heading_path: Vec<String>,
    /// Byte offsets of the passage in the document's extracted text.
    start: u64,
    end: u64,
    text: String,
}

pub(crate) fn chunk_view(kb: &KnowledgeBase, document: &str, chunk: KbChunk) -> KbChunkView {
    KbChunkView {
        citation: citation(&kb.fields.slug, document, chunk.ordinal),
        ordinal: chunk.ordinal,
        heading_path: chunk.heading_path,
        start: chunk.start,
        end: chunk.end,
        text: chunk.text,
    }
}

/// A stretch of a document's chunks.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbChunksView {
    document: KbDocumentView,
    chunks: Vec<KbChunkView>,
    /// Chunks the document has.
    total: u64,
}

/// Which chunks to read.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ChunksQuery {
    /// The first chunk (default 0).
    #[param(minimum = 0)]
    from: Option<u32>,
    /// The last chunk (default: `from` + 49; at most 200 chunks at once).
    #[param(minimum = 0)]
    to: Option<u32>,
}

fn document_not_found() -> ApiError {
    ApiError::not_found(ars_domain::Subject::Document)
}

/// Sizes in words: `512 bytes`, `3.5 KiB`, `32 MiB`.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() < 0.05 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A file of an upload, read and checked.
struct Upload {
    name: String,
    bytes: Vec<u8>,
}

/// What an upload may still add to a knowledge base: its limit, less what it holds, plus
/// what the documents the upload replaces hold.
struct Quota {
    limit: u64,
    held: u64,
    by_name: HashMap<String, u64>,
}

impl Quota {
    async fn of(state: &AppState, kb: &KnowledgeBase) -> Result<Self, ApiError> {
        let documents = state.store.kb_documents(kb.id).await?;
        Ok(Self {
            limit: state.knowledge.config().max_kb_bytes,
            held: documents.iter().map(|d| d.size_bytes).sum(),
            by_name: documents
                .into_iter()
                .map(|d| (d.name, d.size_bytes))
                .collect(),
        })
    }

    /// Checks that `uploads` fit.
    fn check(&self, kb: &KnowledgeBase, uploads: &[Upload]) -> Result<(), ApiError> {
        let mut after = self.held;
        for upload in uploads {
            after = after.saturating_sub(self.by_name.get(&upload.name).copied().unwrap_or(0));
            after += upload.bytes.len() as u64;
        }
        if after > self.limit {
            return Err(self.over(kb, Some(after)));
        }
        Ok(())
    }

    /// The answer to an upload that does not fit: what the knowledge base would hold, when
    /// known, and its limit.
    fn over(&self, kb: &KnowledgeBase, after: Option<u64>) -> ApiError {
        let would = match after {
            Some(after) => format!("would hold {} of documents", size(after)),
            None => "would hold more documents than it may".to_string(),
        };
        ApiError::TooLarge {
            message: format!(
                "with this upload, knowledge base `{}` {would}; it may hold at most {}",
                kb.fields.slug,
                size(self.limit)
            ),
            field: Some("files".into()),
        }
        .because(Reason::new(ErrorReason::KnowledgeBaseFull).with("limit", self.limit))
    }
}

/// Checks a document's name and format; the field at fault is `field`.
fn check_name(name: &str, field: &str) -> Result<(), ApiError> {
    validate_document_name(name).map_err(|e| ApiError::unprocessable(field, e.to_string()))?;
    if Format::of_name(name).is_none() {
        return Err(ApiError::unprocessable(
            field,
            format!(
                "“{name}” is not a format knowledge bases read; they read {}",
                Format::EXTENSIONS
            ),
        )
        .because(
            Reason::new(ErrorReason::UnsupportedFormat)
                .with("name", name)
                .with("formats", Format::EXTENSIONS),
        ));
    }
    Ok(())
}

fn too_large(name: &str, limit: u64) -> ApiError {
    ApiError::TooLarge {
        message: format!(
            "“{name}” is larger than {}, the most a document may hold",
            size(limit)
        ),
        field: Some("files".into()),
    }
    .because(
        Reason::new(ErrorReason::FileTooLarge)
            .with("name", name)
            .with("limit", limit),
    )
}

/// Reads the parts of a multipart upload, each file up to the per-document limit, taking
/// room for its bytes in the server's upload budget as they arrive.
async fn read_multipart(
    state: &AppState,
    kb: &KnowledgeBase,
    request: Request,
    quota: &Quota,
    held: &mut Held,
) -> Result<Vec<Upload>, ApiError> {
    let limit = state.knowledge.config().max_document_bytes;
    let mut multipart = Multipart::from_request(request, state)
        .await
        .map_err(|e| ApiError::BadRequest(format!("cannot read the multipart body: {e}")))?;
    let mut uploads: Vec<Upload> = Vec::new();
    let mut names = BTreeSet::new();
    // What the files read so far add, so an upload far over the knowledge base's limit is
    // refused as it arrives rather than read whole.
    let mut total: u64 = 0;
    let room = quota.limit.saturating_sub(quota.held) + quota.by_name.values().sum::<u64>();
    loop {
        let field = multipart
            .next_field()
            .await
            .map_err(|e| ApiError::BadRequest(format!("cannot read the multipart body: {e}")))?;
        let Some(mut field) = field else { break };
        let index = uploads.len();
        let at = format!("files[{index}]");
        if field.name() != Some("files") {
            return Err(ApiError::unprocessable(
                field.name().unwrap_or("files").to_string(),
                "an upload holds only parts named `files`, each a file with its file name",
            ));
        }
        if index == MAX_FILES {
            return Err(ApiError::unprocessable(
                "files",
                format!("at most {MAX_FILES} files in one upload"),
            ));
        }
        let name = field
            .file_name()
            .map(str::to_owned)
            .ok_or_else(|| ApiError::unprocessable(&at, "a file part needs its file name"))?;
        check_name(&name, &at)?;
        if !names.insert(name.clone()) {
            return Err(
                ApiError::unprocessable(&at, format!("“{name}” is in this upload twice"))
                    .because(Reason::new(ErrorReason::Duplicate).with("name", name.as_str())),
            );
        }
        let mut bytes = Vec::new();
        while let Some(piece) = field
            .chunk()
            .await
            .map_err(|e| ApiError::BadRequest(format!("cannot read “{name}”: {e}")))?
        {
            if (bytes.len() + piece.len()) as u64 > limit {
                return Err(too_large(&name, limit));
            }
            total += piece.len() as u64;
            if total > room {
                return Err(quota.over(kb, None));
            }
            held.grow(piece.len())?;
            bytes.extend_from_slice(&piece);
        }
        if bytes.is_empty() {
            return Err(ApiError::unprocessable(&at, format!("“{name}” is empty"))
                .because(Reason::new(ErrorReason::EmptyFile).with("name", name.as_str())));
        }
        uploads.push(Upload { name, bytes });
    }
    if uploads.is_empty() {
        return Err(ApiError::unprocessable(
            "files",
            "no file: send one or more parts named `files`",
        ));
    }
    Ok(uploads)
}

/// Reads a JSON `{name, text}` upload, its text up to the per-document limit, taking room
/// in the server's upload budget as its bytes arrive.
async fn read_text(
    state: &AppState,
    request: Request,
    held: &mut Held,
) -> Result<Vec<Upload>, ApiError> {
    use futures::StreamExt;
    let limit = state.knowledge.config().max_document_bytes;
    // JSON escapes can double a text's size (`\n`), and a `\u` escape sixfold: read enough
    // to find out, then measure the text itself.
    let read_limit =
        usize::try_from(limit.saturating_mul(6).saturating_add(64 * 1024)).unwrap_or(usize::MAX);
    let mut body = request.into_body().into_data_stream();
    let mut bytes = Vec::new();
    while let Some(data) = body.next().await {
        let data = data.map_err(|e| ApiError::BadRequest(format!("cannot read the body: {e}")))?;
        if bytes.len() + data.len() > read_limit {
            return Err(too_large("the text", limit));
        }
        held.grow(data.len())?;
        bytes.extend_from_slice(&data);
    }
    // The text below is a second copy of the bytes, for as long as it is parsed.
    held.grow(bytes.len())?;
    let body: KbTextDocument = parse_json(&bytes)?;
    if body.name.trim().is_empty() {
        return Err(ApiError::unprocessable("name", "must not be empty"));
    }
    let mut name = body.name;
    if Format::of_name(&name).is_none() && ars_domain::knowledge::document_format(&name).is_empty()
    {
        name.push_str(".txt");
    }
    check_name(&name, "name")?;
    if body.text.len() as u64 > limit {
        return Err(ApiError::TooLarge {
            message: format!(
                "the text is larger than {}, the most a document may hold",
                size(limit)
            ),
            field: Some("text".into()),
        }
        .because(Reason::new(ErrorReason::FileTooLarge).with("limit", limit)));
    }
    if body.text.trim().is_empty() {
        return Err(
            ApiError::unprocessable("text", "the text is empty").because(ErrorReason::Blank)
        );
    }
    Ok(vec![Upload {
        name,
        bytes: body.text.into_bytes(),
    }])
}

fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        })
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| {
            let v = v.trim().to_ascii_lowercase();
            v == "application/json" || (v.starts_with("application/") && v.ends_with("+json"))
        })
}

/// Uploads documents: files as `multipart/form-data` (several at once, each a part named
/// `files`), or one text as JSON `{name, text}`. A name already in the knowledge base replaces
/// that document (its next version). The whole upload is checked before anything is stored;
/// each document is then ingested in the background (`pending` → `processing` → `ready` or
/// `error`).
#[utoipa::path(post, path = "/knowledge-bases/{id}/documents", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    request_body(content(
        (KbFiles = "multipart/form-data"),
        (KbTextDocument = "application/json"),
    )),
    responses(
        (status = 201, body = KbUploadView),
        (status = 400, body = ErrorBody, description = "A body that cannot be read"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody, description = "A document over the per-document limit, or the knowledge base over its own; the message says the limit"),
        (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A name, format or empty file; `field` names it (`files[i]`, `name`, `text`)"),
        (status = 503, body = ErrorBody, description = "The server holds as many uploads in memory as it may; retry after `Retry-After` seconds"),
    ))]
pub async fn upload_documents(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    request: Request,
) -> Result<(StatusCode, Json<KbUploadView>), ApiError> {
    let caller = auth.caller();
    let kb = managed(&state, &caller, &id).await?;
    let quota = Quota::of(&state, &kb).await?;
    // Held until the documents are stored (dropped with this handler's future).
    let mut held = state.uploads.hold();
    let uploads = if is_multipart(request.headers()) {
        read_multipart(&state, &kb, request, &quota, &mut held).await?
    } else if is_json(request.headers()) {
        read_text(&state, request, &mut held).await?
    } else {
        return Err(ApiError::UnsupportedMediaType {
            expected: "files as `multipart/form-data` (parts named `files`) or a text as JSON \
                       `{name, text}` (`Content-Type: application/json`)",
        });
    };
    quota.check(&kb, &uploads)?;
    let mut documents = Vec::with_capacity(uploads.len());
    for upload in uploads {
        let size = upload.bytes.len();
        let document = state
            .store
            .put_kb_document(
                kb.id,
                NewKbDocument::new(upload.name, upload.bytes, Some(caller.id)),
            )
            .await?;
        tracing::info!(kb = %kb.id, document = %document.id, name = %document.name, version = document.version, bytes = size, user = %caller.id, "document uploaded");
        state.knowledge.document_changed(kb.id, document.id).await;
        documents.push(document_view(document));
    }
    state.knowledge.uploaded();
    Ok((StatusCode::CREATED, Json(KbUploadView { documents })))
}

/// Puts every document of `kb` back to ingestion as its next version (its settings changed);
/// each keeps its current chunks until the new ones are ready.
pub(crate) async fn reingest_all(state: &AppState, kb: &KnowledgeBase) -> Result<(), ApiError> {
    for document in state.store.kb_documents(kb.id).await? {
        let Some(bytes) = state.store.kb_document_file(document.id).await? else {
            continue;
        };
        let stored = state
            .store
            .put_kb_document(
                kb.id,
                NewKbDocument::new(document.name, bytes, document.uploaded_by),
            )
            .await?;
        state.knowledge.document_changed(kb.id, stored.id).await;
    }
    state.knowledge.uploaded();
    Ok(())
}

/// The documents of a knowledge base, by name, each with its ingestion status.
#[utoipa::path(get, path = "/knowledge-bases/{id}/documents", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    responses(
        (status = 200, body = [KbDocumentView]),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn list_documents(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<KbDocumentView>>, ApiError> {
    let kb = visible(&state, &auth.caller(), &id).await?;
    let documents = state.store.kb_documents(kb.id).await?;
    Ok(Json(documents.into_iter().map(document_view).collect()))
}

/// The document `doc` of the knowledge base `kb`.
async fn document_of(
    state: &AppState,
    kb: &KnowledgeBase,
    doc: &str,
) -> Result<KbDocument, ApiError> {
    let id = KbDocumentId::parse(doc).ok_or_else(document_not_found)?;
    state
        .store
        .kb_document(id)
        .await?
        .filter(|d| d.kb_id == kb.id)
        .ok_or_else(document_not_found)
}

/// One document, with its ingestion status.
#[utoipa::path(get, path = "/knowledge-bases/{id}/documents/{doc}", tag = "knowledge", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The knowledge base's UUID"),
        ("doc" = String, Path, description = "The document's UUID"),
    ),
    responses(
        (status = 200, body = KbDocumentView),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get_document(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, doc)): Path<(String, String)>,
) -> Result<Json<KbDocumentView>, ApiError> {
    let kb = visible(&state, &auth.caller(), &id).await?;
    Ok(Json(document_view(document_of(&state, &kb, &doc).await?)))
}

/// Deletes a document and its chunks; searches stop finding it at once.
#[utoipa::path(delete, path = "/knowledge-bases/{id}/documents/{doc}", tag = "knowledge", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The knowledge base's UUID"),
        ("doc" = String, Path, description = "The document's UUID"),
    ),
    responses(
        (status = 204),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
    ))]
pub async fn delete_document(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, doc)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let caller = auth.caller();
    let kb = managed(&state, &caller, &id).await?;
    let document = document_of(&state, &kb, &doc).await?;
    if state.store.delete_kb_document(document.id).await? == ars_store::Deleted::Deleted {
        tracing::info!(kb = %kb.id, document = %document.id, name = %document.name, user = %caller.id, "document deleted");
        state.knowledge.document_changed(kb.id, document.id).await;
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(document_not_found())
    }
}

/// The document's file as uploaded, as an attachment.
#[utoipa::path(get, path = "/knowledge-bases/{id}/documents/{doc}/content", tag = "knowledge", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The knowledge base's UUID"),
        ("doc" = String, Path, description = "The document's UUID"),
    ),
    responses(
        (status = 200, content_type = "application/octet-stream", body = Vec<u8>,
            headers(("Content-Disposition" = String, description = "`attachment`, with `filename` and `filename*`"))),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn download_document(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, doc)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let kb = visible(&state, &auth.caller(), &id).await?;
    let document = document_of(&state, &kb, &doc).await?;
    let bytes = state
        .store
        .kb_document_file(document.id)
        .await?
        .ok_or_else(document_not_found)?;
    let content_type = mime_guess::from_path(&document.name)
        .first_or_octet_stream()
        .essence_str()
        .to_owned();
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        crate::routes::files::content::disposition(&document.name, false),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; sandbox"),
    );
    Ok((headers, Body::from(bytes)).into_response())
}

/// Puts a failed document back to ingestion.
#[utoipa::path(post, path = "/knowledge-bases/{id}/documents/{doc}/retry", tag = "knowledge", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The knowledge base's UUID"),
        ("doc" = String, Path, description = "The document's UUID"),
    ),
    responses(
        (status = 200, body = KbDocumentView, description = "The document, `pending` again"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The document did not fail"),
    ))]
pub async fn retry_document(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, doc)): Path<(String, String)>,
) -> Result<Json<KbDocumentView>, ApiError> {
    let caller = auth.caller();
    let kb = managed(&state, &caller, &id).await?;
    let document = document_of(&state, &kb, &doc).await?;
    if state.store.retry_kb_document(document.id).await? == ars_store::Retried::NotFailed {
        return Err(ApiError::Conflict {
            message: format!(
                "“{}” is {}, not failed: there is nothing to retry",
                document.name,
                document.status.as_str()
            ),
            field: None,
        });
    }
    state.knowledge.document_changed(kb.id, document.id).await;
    state.knowledge.uploaded();
    let document = document_of(&state, &kb, &doc).await?;
    Ok(Json(document_view(document)))
}

/// A stretch of a document's chunks, by ordinal: what a citation opens.
#[utoipa::path(get, path = "/knowledge-bases/{id}/documents/{doc}/chunks", tag = "knowledge", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The knowledge base's UUID"),
        ("doc" = String, Path, description = "The document's UUID"),
        ChunksQuery,
    ),
    responses(
        (status = 200, body = KbChunksView),
        (status = 400, body = ErrorBody, description = "Malformed query string"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "`from` after `to`"),
    ))]
pub async fn document_chunks(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, doc)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<ChunksQuery>,
) -> Result<Json<KbChunksView>, ApiError> {
    let kb = visible(&state, &auth.caller(), &id).await?;
    let document = document_of(&state, &kb, &doc).await?;
    let from = query.from.unwrap_or(0);
    let to = query.to.unwrap_or(from.saturating_add(49));
    if from > to {
        return Err(ApiError::unprocessable("from", "must not be after `to`"));
    }
    let to = to.min(from.saturating_add(MAX_CHUNKS_READ - 1));
    let chunks = state.store.kb_chunks(document.id).await?;
    let total = chunks.len() as u64;
    let chunks = chunks
        .into_iter()
        .filter(|c| c.ordinal >= from && c.ordinal <= to)
        .map(|c| chunk_view(&kb, &document.name, c))
        .collect();
    Ok(Json(KbChunksView {
        document: document_view(document),
        chunks,
        total,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(512), "512 bytes");
        assert_eq!(size(1536), "1.5 KiB");
        assert_eq!(size(32 * 1024 * 1024), "32 MiB");
        assert_eq!(size(1024 * 1024 * 1024), "1 GiB");
    }
}
