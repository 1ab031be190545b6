//! "Test connection" and "Refresh models": a tiny chat request or `GET {base_url}/models`, one
//! attempt within a time limit, answered as `{ok: true, …}` or `{ok: false, error: {kind,
//! message}}` — a provider's failure is the answer, not an error of this API, so it is a 200.
//!
//! A test can run on a stored provider, a configured one, or settings not saved yet (a form
//! about to save), optionally over a stored provider's secrets.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::model_provider::MODEL_NAME_MAX_CHARS;
use ars_domain::{ModelProviderId, ModelProviderKind};
use ars_models::{ModelError, OpenAiOptions, OpenAiProvider, ProviderConfig};

use super::fields::Changes;
use super::{ModelProviderView, ProviderKey, changeable, not_found, view_of};
use crate::extract::{ApiJson, ApiJsonOrEmpty};
use crate::routes::patch::Patch;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The longest a test waits for the provider's whole answer.
const TEST_LIMIT: Duration = Duration::from_secs(20);
/// The longest a refresh waits for the model list.
const LIST_LIMIT: Duration = Duration::from_secs(15);
/// The longest a probe waits for the connection to open.
const CONNECT_LIMIT: Duration = Duration::from_secs(5);

/// What kind of failure a probe met, for the UI to say in its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProbeErrorKind {
    /// The provider refused the API key (HTTP 401/403), or none was set where one is needed.
    BadKey,
    /// The provider does not serve the model (HTTP 404, or its `model_not_found`).
    UnknownModel,
    /// The provider could not be reached: connection refused, no such host, or no answer in
    /// time.
    Unreachable,
    /// No model was named and the provider lists none to test with.
    NoModels,
    /// Anything else; the message says what.
    Other,
}

/// Why a probe failed.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProbeError {
    kind: ProbeErrorKind,
    /// In plain words, with the provider's own message where it gave one (never a secret).
    message: String,
}

impl ProbeError {
    fn of(error: &ModelError, base_url: &str) -> Self {
        let kind = match error {
            ModelError::Auth { .. } => ProbeErrorKind::BadKey,
            ModelError::UnknownModel { .. } => ProbeErrorKind::UnknownModel,
            ModelError::Connect { .. } | ModelError::Timeout { .. } => ProbeErrorKind::Unreachable,
            _ => ProbeErrorKind::Other,
        };
        let message = match kind {
            ProbeErrorKind::Unreachable => format!("{error} (at {base_url})"),
            _ => error.to_string(),
        };
        Self { kind, message }
    }

    fn other(message: impl Into<String>) -> Self {
        Self {
            kind: ProbeErrorKind::Other,
            message: message.into(),
        }
    }

    fn no_models() -> Self {
        Self {
            kind: ProbeErrorKind::NoModels,
            message: "the provider lists no models; type the name of one to test it".into(),
        }
    }
}

/// The answer of a connection test.
#[derive(Debug, Serialize, ToSchema)]
pub struct TestResult {
    /// Whether the model answered.
    ok: bool,
    /// The model tested.
    model: String,
    /// How long the whole answer took, in milliseconds (when `ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_ms: Option<u64>,
    /// Why it failed (when not `ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ProbeError>,
    /// When no model was named and none was listed: the models the provider lists now (the
    /// test asked the first of them). Nothing is stored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    models: Vec<String>,
}

/// The body of `POST /api/model-providers/{id}/test` (or none).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestRequest {
    /// The model to ask; default: the provider's first listed model.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 256)]
    model: Option<String>,
}

/// The body of `POST /api/model-providers/test`: a provider's settings, not saved.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TestUnsavedRequest {
    /// Named in the answer's messages; default `unsaved`.
    #[serde(default)]
    #[schema(pattern = r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    name: Option<String>,
    #[serde(default)]
    kind: Option<ModelProviderKind>,
    #[schema(max_length = 2048, pattern = r"^https?://[A-Za-z0-9_\[]")]
    base_url: String,
    /// As in a write: with `provider_id`, absent keeps that provider's key.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4096, pattern = r"^[!-~]+$")]
    api_key: Patch<String>,
    /// As in a write: with `provider_id`, they merge over that provider's headers.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, Option<String>>>)]
    extra_headers: Option<BTreeMap<String, Option<String>>>,
    #[serde(default)]
    #[schema(max_items = 2000)]
    models: Vec<String>,
    /// The model to ask; default: the first of `models`.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 256)]
    model: Option<String>,
    /// A stored provider whose secrets fill in what the body leaves out (editing a provider
    /// whose key the form cannot show).
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Uuid)]
    provider_id: Option<String>,
}

/// The answer of a model refresh.
#[derive(Debug, Serialize, ToSchema)]
pub struct RefreshResult {
    /// Whether the provider listed its models (and they were stored).
    ok: bool,
    /// The provider with its new models (when `ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<ModelProviderView>,
    /// Why it failed (when not `ok`); the stored models are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ProbeError>,
}

/// Probe timing: one attempt, a short connect limit.
fn probe_options(options: &OpenAiOptions) -> OpenAiOptions {
    OpenAiOptions {
        connect_timeout: CONNECT_LIMIT,
        max_attempts: 1,
        ..options.clone()
    }
}

/// The model to test: the one asked for, else the first listed; `None` when neither names
/// one (the test then asks the provider for its list).
fn model_to_test(asked: Option<String>, listed: &[String]) -> Result<Option<String>, ApiError> {
    let model = match asked {
        Some(model) => model.trim().to_string(),
        None => return Ok(listed.first().cloned()),
    };
    if model.is_empty() || model.chars().count() > MODEL_NAME_MAX_CHARS {
        return Err(ApiError::unprocessable(
            "model",
            format!("must be 1-{MODEL_NAME_MAX_CHARS} characters"),
        ));
    }
    Ok(Some(model))
}

async fn run_test(provider: &OpenAiProvider, model: String) -> TestResult {
    match provider.check_chat(&model, TEST_LIMIT).await {
        Ok(latency) => TestResult {
            ok: true,
            model,
            latency_ms: Some(u64::try_from(latency.as_millis()).unwrap_or(u64::MAX)),
            error: None,
            models: Vec::new(),
        },
        Err(error) => TestResult {
            ok: false,
            model,
            latency_ms: None,
            error: Some(ProbeError::of(&error, provider.base_url())),
            models: Vec::new(),
        },
    }
}

/// A failed test that never reached the provider.
fn failed_test(model: String, error: ProbeError) -> TestResult {
    TestResult {
        ok: false,
        model,
        latency_ms: None,
        error: Some(error),
        models: Vec::new(),
    }
}

/// Tests `model`, or with none named, the first model the provider lists now (the answer
/// carries the list, which fills an empty Models box); a provider that lists none, or cannot
/// list them, is a failed test saying so.
async fn test_with(
    provider: Result<OpenAiProvider, ProbeError>,
    model: Option<String>,
) -> TestResult {
    let provider = match provider {
        Ok(provider) => provider,
        Err(error) => return failed_test(model.unwrap_or_default(), error),
    };
    if let Some(model) = model {
        return run_test(&provider, model).await;
    }
    let listed = match provider.list_models(LIST_LIMIT).await {
        Ok(ids) => ars_domain::model_provider::models_from_listing(ids),
        Err(error) => {
            return failed_test(String::new(), ProbeError::of(&error, provider.base_url()));
        }
    };
    let Some(first) = listed.first().cloned() else {
        return failed_test(String::new(), ProbeError::no_models());
    };
    let mut result = run_test(&provider, first).await;
    result.models = listed;
    result
}

/// Builds a probe-ready provider from a configuration and key.
fn probe_provider(
    state: &AppState,
    config: &ProviderConfig,
    key: Option<ars_models::ApiKey>,
) -> Result<OpenAiProvider, ProbeError> {
    let options = probe_options(state.runtime.config_models().options());
    OpenAiProvider::new(config, key, None, options).map_err(|e| ProbeError::other(e.to_string()))
}

/// Sends a tiny chat request to a stored or configured provider and says how it went.
#[utoipa::path(post, path = "/model-providers/{id}/test", tag = "models", security(("bearer" = [])),
    params(("id" = String, Path, description = "A stored provider's UUID or `config:<name>`")),
    request_body(content = Option<TestRequest>, description = "Optional: the model to test"),
    responses(
        (status = 200, body = TestResult, description = "The test ran; `ok` says how it went"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The built-in test model has no connection to test"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "No model to test"),
    ))]
pub async fn test_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJsonOrEmpty(body): ApiJsonOrEmpty<TestRequest>,
) -> Result<Json<TestResult>, ApiError> {
    auth.require_admin()?;
    let key = ProviderKey::parse(&id).ok_or_else(not_found)?;
    match key {
        ProviderKey::Stored(provider_id) => {
            let stored = state
                .store
                .model_provider(provider_id)
                .await?
                .ok_or_else(not_found)?;
            let model = model_to_test(body.model, &stored.fields.models)?;
            let opened = state.runtime.model_source().open(&stored);
            let provider = match opened {
                Ok((config, key)) => probe_provider(&state, &config, key),
                Err(e) => Err(ProbeError::other(format!(
                    "the stored secrets cannot be decrypted: {e}"
                ))),
            };
            Ok(Json(test_with(provider, model).await))
        }
        ProviderKey::Config(_) | ProviderKey::Builtin(_) => {
            let view = view_of(&state, &key).await?;
            let snapshot = state.runtime.model_snapshot().await?;
            let Some(provider) = snapshot.registry.openai_provider(&view.name) else {
                return Err(ApiError::Conflict {
                    message: "the built-in test model needs no connection to test".into(),
                    field: None,
                });
            };
            let model = model_to_test(body.model, &view.models)?;
            let provider = provider
                .with_options(probe_options(provider.options()))
                .map_err(|e| ProbeError::other(e.to_string()));
            Ok(Json(test_with(provider, model).await))
        }
    }
}

/// Sends a tiny chat request with settings not saved yet (a form testing before it saves).
#[utoipa::path(post, path = "/model-providers/test", tag = "models", security(("bearer" = [])),
    request_body = TestUnsavedRequest,
    responses(
        (status = 200, body = TestResult, description = "The test ran; `ok` says how it went"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody, description = "`provider_id` names no stored provider"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn test_unsaved_model_provider(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<TestUnsavedRequest>,
) -> Result<Json<TestResult>, ApiError> {
    auth.require_admin()?;
    let model = model_to_test(body.model.clone(), &body.models)?;
    let provider = unsaved_provider(&state, body.settings()).await?;
    Ok(Json(test_with(provider, model).await))
}

/// A provider's settings from a form, not saved.
struct Settings {
    name: Option<String>,
    kind: Option<ModelProviderKind>,
    base_url: String,
    api_key: Patch<String>,
    extra_headers: Option<BTreeMap<String, Option<String>>>,
    models: Vec<String>,
    provider_id: Option<String>,
}

impl TestUnsavedRequest {
    fn settings(self) -> Settings {
        Settings {
            name: self.name,
            kind: self.kind,
            base_url: self.base_url,
            api_key: self.api_key,
            extra_headers: self.extra_headers,
            models: self.models,
            provider_id: self.provider_id,
        }
    }
}

/// A probe-ready provider from settings not saved yet, over a stored provider's secrets when
/// `provider_id` names one: sealed and opened again, the one way from a write to a provider,
/// so a probe uses exactly what saving would store.
async fn unsaved_provider(
    state: &AppState,
    settings: Settings,
) -> Result<Result<OpenAiProvider, ProbeError>, ApiError> {
    let existing = match &settings.provider_id {
        None => None,
        Some(id) => {
            let id = ModelProviderId::parse(id).ok_or_else(not_found)?;
            Some(
                state
                    .store
                    .model_provider(id)
                    .await?
                    .ok_or_else(not_found)?,
            )
        }
    };
    let id = existing
        .as_ref()
        .map_or_else(ModelProviderId::new, |p| p.id);
    let changes = Changes {
        name: settings.name.unwrap_or_else(|| "unsaved".into()),
        kind: settings.kind.unwrap_or(ModelProviderKind::OpenaiCompatible),
        base_url: settings.base_url,
        models: settings.models,
        prices: None,
        api_key: settings.api_key,
        clear_headers: false,
        headers: settings.extra_headers.unwrap_or_default(),
    };
    let source = state.runtime.model_source();
    let fields = changes.checked(source.key(), id, existing.as_ref())?;
    let unsaved = ars_domain::ModelProvider {
        id,
        fields,
        models_refreshed_at: None,
        created_by: None,
        created_at: ars_domain::time::now(),
        updated_at: ars_domain::time::now(),
    };
    Ok(match source.open(&unsaved) {
        Ok((config, key)) => probe_provider(state, &config, key),
        Err(e) => Err(ProbeError::other(format!(
            "the stored secrets cannot be decrypted: {e}"
        ))),
    })
}

/// The body of `POST /api/model-providers/list-models`: a provider's settings as a form shows
/// them, not saved.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListUnsavedRequest {
    /// Named in the answer's messages; default `unsaved`.
    #[serde(default)]
    #[schema(pattern = r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    name: Option<String>,
    #[serde(default)]
    kind: Option<ModelProviderKind>,
    #[schema(max_length = 2048, pattern = r"^https?://[A-Za-z0-9_\[]")]
    base_url: String,
    /// As in a write: with `provider_id`, absent keeps that provider's key.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4096, pattern = r"^[!-~]+$")]
    api_key: Patch<String>,
    /// As in a write: with `provider_id`, they merge over that provider's headers.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, Option<String>>>)]
    extra_headers: Option<BTreeMap<String, Option<String>>>,
    /// A stored provider whose secrets fill in what the body leaves out.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Uuid)]
    provider_id: Option<String>,
}

/// The answer of a model listing with unsaved settings.
#[derive(Debug, Serialize, ToSchema)]
pub struct ListResult {
    /// Whether the provider listed its models.
    ok: bool,
    /// The models it lists, sorted (when `ok`; possibly none).
    #[serde(skip_serializing_if = "Option::is_none")]
    models: Option<Vec<String>>,
    /// Why it failed (when not `ok`).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ProbeError>,
}

/// Asks a provider for its models (`GET {base_url}/models`) with the settings a form shows,
/// not saved (nothing is stored): "Fetch from the provider" before or while editing.
#[utoipa::path(post, path = "/model-providers/list-models", tag = "models", security(("bearer" = [])),
    request_body = ListUnsavedRequest,
    responses(
        (status = 200, body = ListResult, description = "The listing ran; `ok` says how it went"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody, description = "`provider_id` names no stored provider"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn list_unsaved_models(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<ListUnsavedRequest>,
) -> Result<Json<ListResult>, ApiError> {
    auth.require_admin()?;
    let settings = Settings {
        name: body.name,
        kind: body.kind,
        base_url: body.base_url,
        api_key: body.api_key,
        extra_headers: body.extra_headers,
        models: Vec::new(),
        provider_id: body.provider_id,
    };
    let listed = match unsaved_provider(&state, settings).await? {
        Ok(provider) => provider
            .list_models(LIST_LIMIT)
            .await
            .map_err(|e| ProbeError::of(&e, provider.base_url())),
        Err(error) => Err(error),
    };
    Ok(Json(match listed {
        Ok(ids) => ListResult {
            ok: true,
            models: Some(ars_domain::model_provider::models_from_listing(ids)),
            error: None,
        },
        Err(error) => ListResult {
            ok: false,
            models: None,
            error: Some(error),
        },
    }))
}

/// Fetches the models a stored provider lists (`GET {base_url}/models`) and stores them.
#[utoipa::path(post, path = "/model-providers/{id}/refresh-models", tag = "models", security(("bearer" = [])),
    params(("id" = String, Path, description = "A stored provider's UUID")),
    responses(
        (status = 200, body = RefreshResult, description = "The refresh ran; `ok` says how it went"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The provider is defined in the server configuration"),
    ))]
pub async fn refresh_model_provider_models(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<RefreshResult>, ApiError> {
    auth.require_admin()?;
    let stored = changeable(&state, &id).await?;
    let provider = match state.runtime.model_source().open(&stored) {
        Ok((config, key)) => probe_provider(&state, &config, key),
        Err(e) => Err(ProbeError::other(format!(
            "the stored secrets cannot be decrypted: {e}"
        ))),
    };
    let listed = match provider {
        Ok(provider) => provider
            .list_models(LIST_LIMIT)
            .await
            .map_err(|e| ProbeError::of(&e, provider.base_url())),
        Err(error) => Err(error),
    };
    let ids = match listed {
        Ok(ids) => ids,
        Err(error) => {
            return Ok(Json(RefreshResult {
                ok: false,
                provider: None,
                error: Some(error),
            }));
        }
    };
    let models = ars_domain::model_provider::models_from_listing(ids);
    state
        .store
        .set_model_provider_models(stored.id, &models, ars_domain::time::now())
        .await?;
    tracing::info!(provider = %stored.fields.name, models = models.len(), "model list refreshed");
    let view = view_of(&state, &ProviderKey::Stored(stored.id)).await?;
    Ok(Json(RefreshResult {
        ok: true,
        provider: Some(view),
        error: None,
    }))
}
