//! What agents can be built from on this server: `GET /api/models` (every provider — built-in,
//! configured, stored by an admin — and the default model in force) and `GET /api/tools` (the
//! built-in tools with their argument schemas).
//!
//! The wire types are defined here, at the edge, from the runtime's own descriptions; no API
//! key or provider header ever appears in them, and providers' base URLs (which name internal
//! hosts) only for admins.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use ars_models::{ProviderKind, ProviderSource};

use crate::{ApiError, AppState, Auth, ErrorBody};

/// A model provider agents can name.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelProvider {
    /// What agents write in `config_json.context.model.provider`.
    name: String,
    /// `openai-compatible` or `scripted`.
    kind: String,
    /// `builtin` (`scripted`), `config` (the server configuration) or `database` (added by an
    /// admin).
    source: String,
    /// The API root, shown to admins only; absent for `scripted`, which needs no server.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_url: Option<String>,
    /// Advertised model names; the provider may accept others too.
    models: Vec<String>,
    /// Admins only: why it may not work, in plain words.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
}

/// A model reference: provider and model name.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelRef {
    provider: String,
    name: String,
}

/// The answer to `GET /api/models`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ModelCatalog {
    providers: Vec<ModelProvider>,
    /// The model agents without their own inherit (an admin's setting, else the
    /// configuration's); `null` when none is set (such agents cannot run until one is).
    default_model: Option<ModelRef>,
    /// Where `default_model` comes from: `database` (an admin's setting) or `config`; `null`
    /// when there is none.
    default_model_source: Option<String>,
}

/// A built-in tool, as an agent's `config_json.context.tools` names it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolDescription {
    name: String,
    /// When the model should use it.
    description: String,
    /// The JSON Schema of its arguments.
    #[schema(value_type = Object)]
    parameters: Value,
}

fn kind_name(kind: ProviderKind) -> String {
    match kind {
        ProviderKind::OpenaiCompatible => "openai-compatible",
        ProviderKind::Scripted => "scripted",
    }
    .to_string()
}

fn source_name(source: ProviderSource) -> String {
    match source {
        ProviderSource::Builtin => "builtin",
        ProviderSource::Config => "config",
        ProviderSource::Database => "database",
    }
    .to_string()
}

/// Every model provider and the default model in force. Base URLs and problems are for admins
/// only.
#[utoipa::path(get, path = "/models", tag = "catalog", security(("bearer" = [])),
    responses((status = 200, body = ModelCatalog), (status = 401, body = ErrorBody)))]
pub async fn list_models(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<ModelCatalog>, ApiError> {
    let admin = auth.user.is_admin();
    let snapshot = state.runtime.model_snapshot().await?;
    let providers = snapshot
        .registry
        .list()
        .into_iter()
        .map(|p| ModelProvider {
            name: p.name,
            kind: kind_name(p.kind),
            source: source_name(p.source),
            base_url: p.base_url.filter(|_| admin),
            models: p.models,
            problem: p.problem.filter(|_| admin),
        })
        .collect();
    let default_model = snapshot.default_model.as_ref().map(|d| ModelRef {
        provider: d.model.provider.clone(),
        name: d.model.name.clone(),
    });
    let default_model_source = snapshot.default_model.as_ref().map(|d| {
        match d.source {
            ars_runtime::DefaultModelSource::Database => "database",
            ars_runtime::DefaultModelSource::Config => "config",
        }
        .to_string()
    });
    Ok(Json(ModelCatalog {
        providers,
        default_model,
        default_model_source,
    }))
}

/// The built-in tools, by name.
#[utoipa::path(get, path = "/tools", tag = "catalog", security(("bearer" = [])),
    responses((status = 200, body = [ToolDescription]), (status = 401, body = ErrorBody)))]
pub async fn list_tools(
    State(state): State<AppState>,
    _auth: Auth,
) -> Result<Json<Vec<ToolDescription>>, ApiError> {
    let tools = state
        .runtime
        .tool_infos()
        .into_iter()
        .map(|t| ToolDescription {
            name: t.name,
            description: t.description,
            parameters: Value::clone(&t.parameters),
        })
        .collect();
    Ok(Json(tools))
}
