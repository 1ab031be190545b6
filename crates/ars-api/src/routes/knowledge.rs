//! Knowledge bases (`/api/knowledge-bases`): collections of documents that agents search with
//! `knowledge_search` when their context names them (`context.knowledge_bases`), shared like
//! agents, skills and MCP servers.
//!
//! A knowledge base the caller cannot see is a 404; one they see but may not change a 403.
//! Viewers list, read and search its documents; managers upload, replace, retry and delete
//! them (`documents`). Search and the citations agents write are in `search`.
//!
//! Changing how a knowledge base cuts or embeds its documents (chunk size, overlap, embedding
//! model) ingests every document again; their current chunks stay searchable until the new
//! ones are ready.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::knowledge::{EmbeddingModel, KbCounts, KbSettings, KnowledgeBaseFields};
use ars_domain::{Caller, KnowledgeBase, KnowledgeBaseId, ShareConfig, UserId};
use ars_store::KnowledgeBaseFilter;

use super::patch::{Patch, PatchOver};
use super::sharing::{self, check_share_users};
use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody};

pub(super) mod documents;
pub(super) mod events;
pub(super) mod search;

/// How a knowledge base ranks search results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchKind {
    /// Keywords only (BM25): the knowledge base has no embedding model.
    Bm25,
    /// Keywords and meaning: BM25 and the embedding model's ranking, fused.
    Hybrid,
}

/// Where a knowledge base's documents stand, in one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KbStatus {
    /// No documents yet.
    Empty,
    /// Some documents are waiting or being read.
    Ingesting,
    /// Every document is searchable.
    Ready,
    /// Every document was read, and some of them failed (see their `error`).
    Error,
}

/// A knowledge base as its viewers see it.
#[derive(Debug, Serialize, ToSchema)]
pub struct KnowledgeBaseView {
    id: KnowledgeBaseId,
    /// What agents write in `context.knowledge_bases` and in citations.
    slug: String,
    name: String,
    description: String,
    settings: KbSettings,
    /// `bm25` without an embedding model, `hybrid` with one.
    search: SearchKind,
    counts: KbCounts,
    status: KbStatus,
    share_config: ShareConfig,
    /// `null` once the owner's account is gone.
    owner_id: Option<UserId>,
    /// Whether the caller may change it and its documents, and delete it.
    can_manage: bool,
    can_delete: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// Chunking and embedding, in a write: absent fields keep their value (defaults on create:
/// 800 characters, 120 of overlap, no embedding model).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KbSettingsWrite {
    /// The most characters a chunk holds (100-4000).
    #[serde(default)]
    #[schema(value_type = Option<u32>, minimum = 100, maximum = 4000)]
    chunk_size: Patch<u32>,
    /// Characters repeated from the end of one chunk at the start of the next (at most half a
    /// chunk).
    #[serde(default)]
    #[schema(value_type = Option<u32>, minimum = 0, maximum = 2000)]
    chunk_overlap: Patch<u32>,
    /// A model of a configured provider that serves `/v1/embeddings`; `null`: keyword search
    /// only.
    #[serde(default)]
    #[schema(value_type = Option<EmbeddingModel>)]
    embedding: Patch<EmbeddingModel>,
}

/// The body of `POST /api/knowledge-bases` and `PUT /api/knowledge-bases/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeBaseWrite {
    /// 1-64 characters of `a-z`, `0-9` and `-`, starting and ending with a letter or digit;
    /// unique; it never changes once created.
    #[schema(pattern = r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")]
    slug: String,
    /// 1-128 characters.
    #[schema(min_length = 1, max_length = 128)]
    name: String,
    /// Shown to agents, which choose what to search by it; at most 4000 characters.
    #[serde(default)]
    #[schema(max_length = 4000)]
    description: String,
    #[serde(default, deserialize_with = "settings_object")]
    settings: Option<KbSettingsWrite>,
    /// Absent: private to its owner.
    #[serde(default)]
    share_config: Option<ShareConfig>,
}

/// The body of `PATCH /api/knowledge-bases/{id}`: absent fields keep their stored value.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KnowledgeBasePatch {
    /// Only the stored slug is accepted: slugs never change.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    slug: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 128)]
    name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4000)]
    description: Patch<String>,
    #[serde(default, deserialize_with = "settings_object")]
    settings: Option<KbSettingsWrite>,
    #[serde(default)]
    #[schema(value_type = Option<ShareConfig>)]
    share_config: Patch<ShareConfig>,
}

impl KnowledgeBaseWrite {
    /// The fields a create or a replace asks for: settings not sent take their defaults.
    fn into_fields(self) -> KnowledgeBaseFields {
        KnowledgeBaseFields {
            slug: self.slug,
            name: self.name,
            description: self.description,
            settings: settings(self.settings, &KbSettings::default()),
            share_config: self.share_config.unwrap_or_default(),
        }
    }
}

/// The patch over `stored`: absent fields keep their stored value, and so does `null` (but
/// for `settings.embedding`, where it means keyword search only).
impl PatchOver<KnowledgeBase> for KnowledgeBasePatch {
    type Write = KnowledgeBaseFields;

    fn over(self, stored: &KnowledgeBase) -> Result<KnowledgeBaseFields, ApiError> {
        let stored = &stored.fields;
        Ok(KnowledgeBaseFields {
            slug: self.slug.or_keep(stored.slug.clone()),
            name: self.name.or_keep(stored.name.clone()),
            description: self.description.or_keep(stored.description.clone()),
            settings: settings(self.settings, &stored.settings),
            share_config: self.share_config.or_keep(stored.share_config.clone()),
        })
    }
}

/// Settings as a JSON object (or `null`) only: serde would also read a struct from an array.
fn settings_object<'de, D>(deserializer: D) -> Result<Option<KbSettingsWrite>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    use serde::de::Error;
    match Option::<serde_json::Value>::deserialize(deserializer)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value @ serde_json::Value::Object(_)) => serde_json::from_value(value)
            .map(Some)
            .map_err(D::Error::custom),
        Some(_) => Err(D::Error::custom(
            "invalid type: expected an object of settings",
        )),
    }
}

fn not_found() -> ApiError {
    ApiError::not_found(ars_domain::Subject::KnowledgeBase)
}

fn status_of(counts: &KbCounts) -> KbStatus {
    if counts.documents == 0 {
        KbStatus::Empty
    } else if counts.pending + counts.processing > 0 {
        KbStatus::Ingesting
    } else if counts.failed > 0 {
        KbStatus::Error
    } else {
        KbStatus::Ready
    }
}

pub(super) fn view(kb: KnowledgeBase, caller: &Caller) -> KnowledgeBaseView {
    let can_manage = caller.can_manage(&kb);
    let can_delete = can_manage && caller.can_delete(&kb);
    let fields = kb.fields;
    KnowledgeBaseView {
        id: kb.id,
        slug: fields.slug,
        name: fields.name,
        description: fields.description,
        search: if fields.settings.embedding.is_some() {
            SearchKind::Hybrid
        } else {
            SearchKind::Bm25
        },
        settings: fields.settings,
        status: status_of(&kb.counts),
        counts: kb.counts,
        share_config: fields.share_config,
        owner_id: kb.owner_id,
        can_manage,
        can_delete,
        created_at: kb.created_at,
        updated_at: kb.updated_at,
    }
}

/// The knowledge base with this id that `caller` can see; anything else is a 404.
pub(super) async fn visible(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<KnowledgeBase, ApiError> {
    let id = KnowledgeBaseId::parse(id).ok_or_else(not_found)?;
    sharing::visible(
        state.store.knowledge_base(id).await?,
        caller,
        ars_domain::Subject::KnowledgeBase,
    )
}

/// The knowledge base `caller` may change: 404 when invisible, 403 when only visible.
pub(super) async fn managed(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<KnowledgeBase, ApiError> {
    let kb = visible(state, caller, id).await?;
    sharing::managed(
        kb,
        caller,
        ars_domain::Subject::KnowledgeBase,
        "you can search this knowledge base but not manage it",
    )
}

fn settings(write: Option<KbSettingsWrite>, stored: &KbSettings) -> KbSettings {
    let write = write.unwrap_or_default();
    KbSettings {
        chunk_size: write.chunk_size.or_keep(stored.chunk_size),
        chunk_overlap: write.chunk_overlap.or_keep(stored.chunk_overlap),
        embedding: write.embedding.optional(stored.embedding.clone()),
    }
}

/// Checks the domain's rules, then that an embedding model's provider is configured here.
async fn checked(
    state: &AppState,
    fields: KnowledgeBaseFields,
) -> Result<KnowledgeBaseFields, ApiError> {
    let fields = fields.validate()?;
    if let Some(model) = &fields.settings.embedding {
        let snapshot = state.runtime.model_snapshot().await?;
        if snapshot.registry.openai_provider(&model.provider).is_none() {
            let configured: Vec<String> = snapshot
                .registry
                .list()
                .into_iter()
                .map(|p| p.name)
                .filter(|name| snapshot.registry.openai_provider(name).is_some())
                .collect();
            return Err(ApiError::unprocessable(
                "settings.embedding.provider",
                format!(
                    "no OpenAI-compatible model provider `{}` on this server to embed with; \
                     configured: {}",
                    model.provider,
                    if configured.is_empty() {
                        "none".to_string()
                    } else {
                        configured.join(", ")
                    }
                ),
            ));
        }
    }
    check_share_users(state, &fields.share_config).await?;
    Ok(fields)
}

/// Lists the knowledge bases the caller can see (admins: all), by slug.
#[utoipa::path(get, path = "/knowledge-bases", tag = "knowledge", security(("bearer" = [])),
    responses(
        (status = 200, body = [KnowledgeBaseView]),
        (status = 401, body = ErrorBody),
    ))]
pub async fn list_knowledge_bases(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<KnowledgeBaseView>>, ApiError> {
    let caller = auth.caller();
    let filter = KnowledgeBaseFilter {
        visible_to: sharing::visible_to(&caller),
    };
    let bases = state.store.list_knowledge_bases(filter).await?;
    Ok(Json(
        bases.into_iter().map(|kb| view(kb, &caller)).collect(),
    ))
}

/// One knowledge base, with its counts.
#[utoipa::path(get, path = "/knowledge-bases/{id}", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    responses(
        (status = 200, body = KnowledgeBaseView),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<KnowledgeBaseView>, ApiError> {
    let caller = auth.caller();
    let kb = visible(&state, &caller, &id).await?;
    Ok(Json(view(kb, &caller)))
}

/// Creates a knowledge base, owned by the caller.
#[utoipa::path(post, path = "/knowledge-bases", tag = "knowledge", security(("bearer" = [])),
    request_body = KnowledgeBaseWrite,
    responses(
        (status = 201, body = KnowledgeBaseView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The slug is taken, or a share names no user"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn create_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<KnowledgeBaseWrite>,
) -> Result<(StatusCode, Json<KnowledgeBaseView>), ApiError> {
    let caller = auth.caller();
    let fields = checked(&state, body.into_fields()).await?;
    let kb = state
        .store
        .create_knowledge_base(KnowledgeBaseId::new(), &fields, Some(caller.id))
        .await?;
    tracing::info!(kb = %kb.id, slug = %kb.fields.slug, user = %caller.id, "knowledge base created");
    Ok((StatusCode::CREATED, Json(view(kb, &caller))))
}

/// Replaces a knowledge base's fields (the slug stays). New chunk or embedding settings
/// ingest every document again.
#[utoipa::path(put, path = "/knowledge-bases/{id}", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    request_body = KnowledgeBaseWrite,
    responses(
        (status = 200, body = KnowledgeBaseView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Another slug than the stored one, or a share names no user"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn put_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<KnowledgeBaseWrite>,
) -> Result<Json<KnowledgeBaseView>, ApiError> {
    let caller = auth.caller();
    let existing = managed(&state, &caller, &id).await?;
    update(&state, &caller, existing, body.into_fields()).await
}

/// Changes some of a knowledge base's fields; absent ones keep their value. New chunk or
/// embedding settings ingest every document again.
#[utoipa::path(patch, path = "/knowledge-bases/{id}", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    request_body = KnowledgeBasePatch,
    responses(
        (status = 200, body = KnowledgeBaseView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Another slug than the stored one, or a share names no user"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn patch_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<KnowledgeBasePatch>,
) -> Result<Json<KnowledgeBaseView>, ApiError> {
    let caller = auth.caller();
    let existing = managed(&state, &caller, &id).await?;
    let fields = patch.over(&existing)?;
    update(&state, &caller, existing, fields).await
}

async fn update(
    state: &AppState,
    caller: &Caller,
    existing: KnowledgeBase,
    fields: KnowledgeBaseFields,
) -> Result<Json<KnowledgeBaseView>, ApiError> {
    if fields.slug != existing.fields.slug {
        return Err(ApiError::Conflict {
            message: format!(
                "a knowledge base's slug never changes (agents name it); this one is `{}`",
                existing.fields.slug
            ),
            field: Some("slug".into()),
        });
    }
    let fields = checked(state, fields).await?;
    let reingest = fields.settings != existing.fields.settings;
    let kb = state
        .store
        .update_knowledge_base(existing.id, &fields)
        .await?;
    tracing::info!(kb = %kb.id, slug = %kb.fields.slug, user = %caller.id, reingest, "knowledge base changed");
    let kb = if reingest {
        documents::reingest_all(state, &kb).await?;
        state.store.knowledge_base(kb.id).await?.unwrap_or(kb)
    } else {
        kb
    };
    Ok(Json(view(kb, caller)))
}

/// Deletes a knowledge base with its documents and chunks. Agents that name it drop it from
/// their next run on.
#[utoipa::path(delete, path = "/knowledge-bases/{id}", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    responses(
        (status = 204),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not deletable"),
        (status = 404, body = ErrorBody),
    ))]
pub async fn delete_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let caller = auth.caller();
    let kb = managed(&state, &caller, &id).await?;
    if !caller.can_delete(&kb) {
        return Err(ApiError::cannot_delete(
            ars_domain::Subject::KnowledgeBase,
            "you can manage this knowledge base but not delete it",
        ));
    }
    if state.store.delete_knowledge_base(kb.id).await? == ars_store::Deleted::Deleted {
        state.knowledge.deleted(kb.id).await;
        tracing::info!(kb = %kb.id, slug = %kb.fields.slug, user = %caller.id, "knowledge base deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found())
    }
}

/// What a rebuilt index holds.
#[derive(Debug, Serialize, ToSchema)]
pub struct KbReindexView {
    /// Chunks indexed.
    chunks: u64,
}

/// Rebuilds this instance's search index of a knowledge base from the chunks in the store
/// (the index is derived data; other instances keep theirs, which the change log keeps
/// current).
#[utoipa::path(post, path = "/knowledge-bases/{id}/reindex", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    responses(
        (status = 200, body = KbReindexView),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
    ))]
pub async fn reindex_knowledge_base(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<KbReindexView>, ApiError> {
    let caller = auth.caller();
    let kb = managed(&state, &caller, &id).await?;
    let chunks = state
        .knowledge
        .reindex(kb.id)
        .await
        .map_err(|e| ApiError::Internal(format!("reindexing {}: {e}", kb.id)))?;
    tracing::info!(kb = %kb.id, slug = %kb.fields.slug, chunks, user = %caller.id, "knowledge index rebuilt");
    Ok(Json(KbReindexView { chunks }))
}
