//! The server-wide model settings (`/api/model-settings`, admins only): the default model of
//! agents that name none. Stored in the database, it applies to the next run on every
//! instance; unset, the configuration's `default_model` (`ARS_DEFAULT_MODEL`) applies.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::ModelConfig;
use ars_runtime::{DefaultModelSource, ModelSnapshot};

use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The longest `provider/model` reference: a provider name and a model name.
const REFERENCE_MAX_CHARS: usize = ars_domain::model_provider::NAME_MAX_CHARS
    + 1
    + ars_domain::model_provider::MODEL_NAME_MAX_CHARS;

/// Where the default model in force comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DefaultModelSourceView {
    /// Set here (stored in the database).
    Database,
    /// The server configuration (`default_model`, `ARS_DEFAULT_MODEL`).
    Config,
}

impl From<DefaultModelSource> for DefaultModelSourceView {
    fn from(source: DefaultModelSource) -> Self {
        match source {
            DefaultModelSource::Database => Self::Database,
            DefaultModelSource::Config => Self::Config,
        }
    }
}

/// The model settings.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelSettingsView {
    /// The server default model in force, `provider/model`: what agents without a model of
    /// their own use; `null` when neither this setting nor the configuration names one.
    default_model: Option<String>,
    /// Where `default_model` comes from; `null` when there is none.
    source: Option<DefaultModelSourceView>,
    /// The configuration's default model, which applies when this setting is unset.
    config_default_model: Option<String>,
}

/// The body of `PUT /api/model-settings`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSettingsWrite {
    /// `provider/model` of a provider that exists (stored, configured or `scripted`); `null`
    /// unsets it, so the configuration's default applies again.
    #[schema(max_length = 321, pattern = r"^[^/\s]+/\S")]
    default_model: Option<String>,
}

fn reference(model: &ModelConfig) -> String {
    format!("{}/{}", model.provider, model.name)
}

fn view(snapshot: &ModelSnapshot, config_default: Option<&ModelConfig>) -> ModelSettingsView {
    ModelSettingsView {
        default_model: snapshot.default_model.as_ref().map(|d| reference(&d.model)),
        source: snapshot.default_model.as_ref().map(|d| d.source.into()),
        config_default_model: config_default.map(reference),
    }
}

/// The server default model and where it comes from.
#[utoipa::path(get, path = "/model-settings", tag = "models", security(("bearer" = [])),
    responses(
        (status = 200, body = ModelSettingsView),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
    ))]
pub async fn get_model_settings(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<ModelSettingsView>, ApiError> {
    auth.require_admin()?;
    let snapshot = state.runtime.model_snapshot().await?;
    Ok(Json(view(
        &snapshot,
        state.runtime.defaults().base.model.as_ref(),
    )))
}

/// Sets (or, with `null`, unsets) the server default model. Applies to the next run.
#[utoipa::path(put, path = "/model-settings", tag = "models", security(("bearer" = [])),
    request_body = ModelSettingsWrite,
    responses(
        (status = 200, body = ModelSettingsView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "Not `provider/model`, or no such provider"),
    ))]
pub async fn set_model_settings(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<ModelSettingsWrite>,
) -> Result<Json<ModelSettingsView>, ApiError> {
    auth.require_admin()?;
    let stored = match body.default_model.as_deref() {
        None => None,
        Some(text) => {
            let bad = |message: String| ApiError::unprocessable("default_model", message);
            if text.chars().count() > REFERENCE_MAX_CHARS {
                return Err(bad(format!(
                    "must be at most {REFERENCE_MAX_CHARS} characters"
                )));
            }
            if text.chars().any(char::is_control) {
                return Err(bad("must not hold control characters".into()));
            }
            let model = ars_models::parse_model_ref(text).map_err(|e| bad(e.to_string()))?;
            let snapshot = state.runtime.model_snapshot().await?;
            if !snapshot.registry.contains(&model.provider) {
                let known: Vec<String> = snapshot
                    .registry
                    .list()
                    .into_iter()
                    .map(|p| p.name)
                    .collect();
                return Err(bad(format!(
                    "no model provider is named `{}`; known providers: {}",
                    model.provider,
                    known.join(", ")
                )));
            }
            Some(reference(&model))
        }
    };
    state.store.set_default_model(stored.as_deref()).await?;
    tracing::info!(
        default_model = stored.as_deref().unwrap_or("(unset)"),
        "server default model changed"
    );
    let snapshot = state.runtime.model_snapshot().await?;
    Ok(Json(view(
        &snapshot,
        state.runtime.defaults().base.model.as_ref(),
    )))
}
