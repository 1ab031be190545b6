//! Model providers an admin manages (`/api/model-providers`): the database's, which an admin
//! creates, changes and deletes, listed with the server configuration's and the built-in
//! `scripted` one, which are read-only here.
//!
//! Ids: a stored provider's is its UUID; a configured one's `config:<name>`; the built-in one's
//! `builtin:scripted`. Changing or deleting either of the latter is a 409.
//!
//! Secrets (the API key, the values of extra headers) are write-only: sealed with the server
//! key before they are stored, never answered (a view says `api_key_set` and the header
//! names), never logged. In every write they *merge*: absent keeps what is stored, `null`
//! removes it, a string sets it — in a `PUT` as in a `PATCH`, since a client cannot read them
//! back to send them again.
//!
//! Every operation is for admins only: others get a 403, as for the other admin endpoints.
//! Changes apply to the next run on every instance (see `ars_runtime::models`).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::model_provider::TokenPrices;
use ars_domain::{ModelProvider, ModelProviderId, ModelProviderKind, UserId};
use ars_models::ProviderSource;
use ars_runtime::ModelSnapshot;
use ars_store::{AgentFilter, AgentKinds};

use super::patch::{Patch, PatchOver};
use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody};

mod fields;
pub mod probe;

use fields::Changes;

/// The prefix of a configured provider's id.
const CONFIG_PREFIX: &str = "config:";
/// The prefix of the built-in provider's id.
const BUILTIN_PREFIX: &str = "builtin:";

/// How a provider is spoken to.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKindView {
    OpenaiCompatible,
    /// The built-in deterministic test model.
    Scripted,
}

/// Where a provider is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderSourceView {
    /// Stored in the database: an admin manages it here.
    Database,
    /// The server configuration (`ars.toml`, environment): read-only here.
    Config,
    /// Built into the server (`scripted`): read-only.
    Builtin,
}

/// A model provider as admins see it. Never a secret: `api_key_set` and
/// `extra_header_names` say what is set, not what it is.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelProviderView {
    /// A UUID for stored providers, `config:<name>` for configured ones, `builtin:scripted`.
    id: String,
    /// What agents write in `config_json.context.model.provider` (and `provider/model`
    /// references).
    name: String,
    kind: ProviderKindView,
    source: ProviderSourceView,
    /// `true` unless stored in the database: change it in the server configuration.
    read_only: bool,
    /// The API root; absent for `scripted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_url: Option<String>,
    /// Whether an API key is set (it is never shown).
    api_key_set: bool,
    /// The extra headers sent, by name (lower case); their values are never shown.
    extra_header_names: Vec<String>,
    /// The models offered, as typed or fetched.
    models: Vec<String>,
    /// When `models` was last fetched from the provider; absent when typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    models_refreshed_at: Option<DateTime<Utc>>,
    /// What its tokens cost per million, when set (stored providers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    prices: Option<TokenPrices>,
    /// How many agents (subagents included) name this provider in their model.
    agents_using: u64,
    /// Why it may not work, in plain words (a secret this server's key cannot decrypt, a
    /// name the configuration also uses, an unset key variable).
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    /// Stored providers: the admin who created it, while that account exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    created_by: Option<UserId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_at: Option<DateTime<Utc>>,
}

/// The body of `POST /api/model-providers` and `PUT /api/model-providers/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelProviderWrite {
    /// 1-64 characters of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or digit;
    /// unique, and neither `scripted` nor a configured provider's name.
    #[schema(pattern = r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    pub(crate) name: String,
    /// Defaults to `openai-compatible` (the only kind for now).
    #[serde(default)]
    pub(crate) kind: Option<ModelProviderKind>,
    /// `http://` or `https://`, a host, an optional port and path; no credentials, query or
    /// fragment. E.g. `http://127.0.0.1:11434/v1` (Ollama), `https://api.openai.com/v1`.
    #[schema(max_length = 2048, pattern = r"^https?://[A-Za-z0-9_\[]")]
    pub(crate) base_url: String,
    /// Write-only. Absent: keep the stored key (none for a new provider); `null`: remove it;
    /// a string: set it. 1-4096 visible ASCII characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4096, pattern = r"^[!-~]+$")]
    pub(crate) api_key: Patch<String>,
    /// Write-only values by header name. Absent: keep every stored header; a name with a
    /// string: set it; a name with `null`: remove it. At most 32 headers; `Authorization`
    /// and the HTTP client's own headers are refused.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, Option<String>>>)]
    pub(crate) extra_headers: Option<BTreeMap<String, Option<String>>>,
    /// The models offered (absent: none), as typed; `refresh-models` fetches them instead.
    #[serde(default)]
    #[schema(max_items = 2000)]
    pub(crate) models: Vec<String>,
    /// What its tokens cost per million (absent: not known), for the usage page's costs.
    #[serde(default)]
    pub(crate) prices: Option<TokenPrices>,
}

/// The body of `PATCH /api/model-providers/{id}`: any of `ModelProviderWrite`'s fields.
/// Absent fields keep their value; `null` resets `kind` and `models`, removes the API key or
/// (for `extra_headers`) every header; `name` and `base_url` cannot be removed. In
/// `extra_headers`, each name merges on its own, as in a `PUT`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelProviderPatch {
    /// Cannot be removed, only changed.
    #[serde(default)]
    #[schema(value_type = String, required = false, pattern = r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    pub(crate) name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<ModelProviderKind>)]
    pub(crate) kind: Patch<ModelProviderKind>,
    /// Cannot be removed, only changed.
    #[serde(default)]
    #[schema(value_type = String, required = false, max_length = 2048, pattern = r"^https?://[A-Za-z0-9_\[]")]
    pub(crate) base_url: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4096, pattern = r"^[!-~]+$")]
    pub(crate) api_key: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, Option<String>>>)]
    pub(crate) extra_headers: Patch<BTreeMap<String, Option<String>>>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 2000)]
    pub(crate) models: Patch<Vec<String>>,
    /// `null` removes the prices.
    #[serde(default)]
    #[schema(value_type = Option<TokenPrices>)]
    pub(crate) prices: Patch<TokenPrices>,
}

/// The answer to a `DELETE`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelProviderDeleted {
    /// Agents (subagents included) that named the provider: their runs now fail with
    /// `unknown_provider` until they name another.
    agents_using: u64,
    /// The server default model was this provider's and is now unset (the configuration's
    /// default, if any, applies again).
    default_model_cleared: bool,
}

/// Which provider an id names.
enum ProviderKey {
    Stored(ModelProviderId),
    Config(String),
    Builtin(String),
}

impl ProviderKey {
    fn parse(id: &str) -> Option<Self> {
        if let Some(name) = id.strip_prefix(CONFIG_PREFIX) {
            return Some(Self::Config(name.to_string()));
        }
        if let Some(name) = id.strip_prefix(BUILTIN_PREFIX) {
            return Some(Self::Builtin(name.to_string()));
        }
        ModelProviderId::parse(id).map(Self::Stored)
    }

    /// The 409 for changing a provider that is not stored.
    fn read_only(&self) -> Option<ApiError> {
        let message = match self {
            Self::Stored(_) => return None,
            Self::Config(_) => {
                "this provider is defined in the server configuration; change it there \
                 (ars.toml or the environment)"
            }
            Self::Builtin(_) => "this provider is built into the server and cannot be changed",
        };
        Some(ApiError::Conflict {
            message: message.into(),
            field: None,
        })
    }
}

fn not_found() -> ApiError {
    ApiError::not_found(ars_domain::Subject::ModelProvider)
}

/// How many agents name each provider, by provider name.
pub(crate) async fn agents_by_provider(
    state: &AppState,
) -> Result<BTreeMap<String, u64>, ApiError> {
    let agents = state
        .store
        .list_agents(AgentFilter {
            visible_to: None,
            kinds: AgentKinds::All,
        })
        .await?;
    let mut counts = BTreeMap::new();
    for agent in agents {
        if let Some(model) = &agent.config_json.context.model {
            *counts.entry(model.provider.clone()).or_insert(0) += 1;
        }
    }
    Ok(counts)
}

/// The view of a stored provider in `snapshot`.
fn stored_view(
    provider: &ModelProvider,
    snapshot: &ModelSnapshot,
    agents: &BTreeMap<String, u64>,
) -> ModelProviderView {
    let fields = &provider.fields;
    ModelProviderView {
        id: provider.id.to_string(),
        name: fields.name.clone(),
        kind: ProviderKindView::OpenaiCompatible,
        source: ProviderSourceView::Database,
        read_only: false,
        base_url: Some(fields.base_url.clone()),
        api_key_set: fields.api_key.is_some(),
        extra_header_names: fields.headers.keys().cloned().collect(),
        models: fields.models.clone(),
        models_refreshed_at: provider.models_refreshed_at,
        prices: fields.prices,
        agents_using: agents.get(&fields.name).copied().unwrap_or(0),
        problem: snapshot.problems.get(&provider.id).cloned(),
        created_by: provider.created_by,
        created_at: Some(provider.created_at),
        updated_at: Some(provider.updated_at),
    }
}

/// The view of a configured or built-in provider of `snapshot`, if `name` is one.
fn configured_view(
    name: &str,
    snapshot: &ModelSnapshot,
    agents: &BTreeMap<String, u64>,
) -> Option<ModelProviderView> {
    let info = snapshot.registry.info(name)?;
    let (source, prefix, kind) = match info.source {
        ProviderSource::Config => (
            ProviderSourceView::Config,
            CONFIG_PREFIX,
            ProviderKindView::OpenaiCompatible,
        ),
        ProviderSource::Builtin => (
            ProviderSourceView::Builtin,
            BUILTIN_PREFIX,
            ProviderKindView::Scripted,
        ),
        ProviderSource::Database => return None,
    };
    let openai = snapshot.registry.openai_provider(name);
    Some(ModelProviderView {
        id: format!("{prefix}{name}"),
        name: name.to_string(),
        kind,
        source,
        read_only: true,
        base_url: info.base_url.clone(),
        api_key_set: openai.is_some_and(|p| p.has_api_key()),
        extra_header_names: openai.map(|p| p.header_names()).unwrap_or_default(),
        models: info.models.clone(),
        models_refreshed_at: None,
        prices: None,
        agents_using: agents.get(name).copied().unwrap_or(0),
        problem: info.problem.clone(),
        created_by: None,
        created_at: None,
        updated_at: None,
    })
}

/// The provider `id` names, as a view; 404 when there is none.
async fn view_of(state: &AppState, key: &ProviderKey) -> Result<ModelProviderView, ApiError> {
    let snapshot = state.runtime.model_snapshot().await?;
    let agents = agents_by_provider(state).await?;
    let view = match key {
        ProviderKey::Stored(id) => {
            let provider = state
                .store
                .model_provider(*id)
                .await?
                .ok_or_else(not_found)?;
            Some(stored_view(&provider, &snapshot, &agents))
        }
        ProviderKey::Config(name) => configured_view(name, &snapshot, &agents)
            .filter(|v| v.source == ProviderSourceView::Config),
        ProviderKey::Builtin(name) => configured_view(name, &snapshot, &agents)
            .filter(|v| v.source == ProviderSourceView::Builtin),
    };
    view.ok_or_else(not_found)
}

/// Every provider: the built-in one, the configured ones (read-only), then the stored ones,
/// each group by name.
#[utoipa::path(get, path = "/model-providers", tag = "models", security(("bearer" = [])),
    responses(
        (status = 200, body = [ModelProviderView]),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
    ))]
pub async fn list_model_providers(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<ModelProviderView>>, ApiError> {
    auth.require_admin()?;
    let snapshot = state.runtime.model_snapshot().await?;
    let agents = agents_by_provider(&state).await?;
    let mut views: Vec<ModelProviderView> = snapshot
        .registry
        .list()
        .iter()
        .filter_map(|info| configured_view(&info.name, &snapshot, &agents))
        .collect();
    // Built-in first, then configured: both by name already.
    views.sort_by_key(|v| v.source != ProviderSourceView::Builtin);
    views.extend(
        snapshot
            .stored
            .iter()
            .map(|p| stored_view(p, &snapshot, &agents)),
    );
    Ok(Json(views))
}

/// One provider, by id (`<uuid>`, `config:<name>` or `builtin:scripted`).
#[utoipa::path(get, path = "/model-providers/{id}", tag = "models", security(("bearer" = [])),
    params(("id" = String, Path, description = "A stored provider's UUID, `config:<name>` or `builtin:scripted`")),
    responses(
        (status = 200, body = ModelProviderView),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
    ))]
pub async fn get_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<ModelProviderView>, ApiError> {
    auth.require_admin()?;
    let key = ProviderKey::parse(&id).ok_or_else(not_found)?;
    Ok(Json(view_of(&state, &key).await?))
}

/// Stores a new provider; agents may name it at once, and runs use it from the next one on.
#[utoipa::path(post, path = "/model-providers", tag = "models", security(("bearer" = [])),
    request_body = ModelProviderWrite,
    responses(
        (status = 201, body = ModelProviderView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 409, body = ErrorBody, description = "The name is taken, by a stored or a configured provider"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn create_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<ModelProviderWrite>,
) -> Result<(StatusCode, Json<ModelProviderView>), ApiError> {
    auth.require_admin()?;
    let id = ModelProviderId::new();
    let fields = Changes::from_write(body).apply(&state, id, None).await?;
    let provider = state
        .store
        .create_model_provider(id, &fields, Some(auth.user.id))
        .await?;
    tracing::info!(provider = %provider.fields.name, id = %provider.id, "model provider created");
    let view = view_of(&state, &ProviderKey::Stored(provider.id)).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// The stored provider `id` names, for a change; 404, or 409 for a read-only one.
async fn changeable(state: &AppState, id: &str) -> Result<ModelProvider, ApiError> {
    let key = ProviderKey::parse(id).ok_or_else(not_found)?;
    let ProviderKey::Stored(id) = key else {
        // A configured or built-in id that names nothing is a 404 all the same.
        view_of(state, &key).await?;
        return Err(key.read_only().unwrap_or_else(not_found));
    };
    state.store.model_provider(id).await?.ok_or_else(not_found)
}

/// Replaces a stored provider's name, kind, base URL and models; its secrets merge (absent
/// keeps, `null` removes, a string sets).
#[utoipa::path(put, path = "/model-providers/{id}", tag = "models", security(("bearer" = [])),
    params(("id" = String, Path, description = "A stored provider's UUID")),
    request_body = ModelProviderWrite,
    responses(
        (status = 200, body = ModelProviderView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The name is taken, agents still use the old name, or the provider is defined in the server configuration"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub async fn put_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<ModelProviderWrite>,
) -> Result<Json<ModelProviderView>, ApiError> {
    auth.require_admin()?;
    let existing = changeable(&state, &id).await?;
    update(&state, existing, Changes::from_write(body)).await
}

/// Changes some fields of a stored provider (see `ModelProviderPatch`), validated as a `PUT`.
#[utoipa::path(patch, path = "/model-providers/{id}", tag = "models", security(("bearer" = [])),
    params(("id" = String, Path, description = "A stored provider's UUID")),
    request_body = ModelProviderPatch,
    responses(
        (status = 200, body = ModelProviderView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The name is taken, agents still use the old name, or the provider is defined in the server configuration"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub async fn patch_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<ModelProviderPatch>,
) -> Result<Json<ModelProviderView>, ApiError> {
    auth.require_admin()?;
    let existing = changeable(&state, &id).await?;
    let changes = patch.over(&existing)?;
    update(&state, existing, changes).await
}

async fn update(
    state: &AppState,
    existing: ModelProvider,
    changes: Changes,
) -> Result<Json<ModelProviderView>, ApiError> {
    let fields = changes.apply(state, existing.id, Some(&existing)).await?;
    let old_name = &existing.fields.name;
    if fields.name != *old_name {
        let using = agents_by_provider(state)
            .await?
            .get(old_name)
            .copied()
            .unwrap_or(0);
        if using > 0 {
            return Err(ApiError::Conflict {
                message: format!(
                    "{using} agent(s) name this provider as `{old_name}`; point them at another \
                     provider first, or keep the name"
                ),
                field: Some("name".into()),
            });
        }
    }
    let provider = state
        .store
        .update_model_provider(existing.id, &fields)
        .await?;
    tracing::info!(provider = %provider.fields.name, id = %provider.id, "model provider updated");
    Ok(Json(
        view_of(state, &ProviderKey::Stored(provider.id)).await?,
    ))
}

/// Deletes a stored provider. Agents that name it stay as they are (their runs fail with
/// `unknown_provider` until they name another): the answer says how many; a server default
/// model of this provider is unset.
#[utoipa::path(delete, path = "/model-providers/{id}", tag = "models", security(("bearer" = [])),
    params(("id" = String, Path, description = "A stored provider's UUID")),
    responses(
        (status = 200, body = ModelProviderDeleted),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The provider is defined in the server configuration"),
    ))]
pub async fn delete_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<ModelProviderDeleted>, ApiError> {
    auth.require_admin()?;
    let existing = changeable(&state, &id).await?;
    let agents_using = agents_by_provider(&state)
        .await?
        .get(&existing.fields.name)
        .copied()
        .unwrap_or(0);
    let deleted = state
        .store
        .delete_model_provider(existing.id)
        .await?
        .ok_or_else(not_found)?;
    tracing::info!(provider = %existing.fields.name, id = %existing.id, agents_using, "model provider deleted");
    Ok(Json(ModelProviderDeleted {
        agents_using,
        default_model_cleared: deleted.default_model_cleared,
    }))
}
