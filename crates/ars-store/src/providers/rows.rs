//! Rows of `model_providers` and `model_settings`, and their conversion into domain types.
//!
//! Secrets pass through as the sealed text they were written as: the store never holds a key
//! and never sees a secret in clear.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{ModelProvider, ModelProviderFields, ModelProviderId, ModelProviderKind, Sealed};

use crate::rows::{corrupt, parse_user_id};
use crate::{ModelSettings, Result};

#[derive(sqlx::FromRow)]
pub(crate) struct ModelProviderRow {
    id: String,
    name: String,
    kind: String,
    base_url: String,
    api_key: Option<String>,
    headers: Json<BTreeMap<String, String>>,
    models: Json<Vec<String>>,
    models_refreshed_at: Option<DateTime<Utc>>,
    created_by: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    prices: Option<Json<ars_domain::model_provider::TokenPrices>>,
}

impl ModelProviderRow {
    pub(crate) fn into_provider(self) -> Result<ModelProvider> {
        Ok(ModelProvider {
            id: ModelProviderId::parse(&self.id)
                .ok_or_else(|| corrupt("model provider id", &self.id))?,
            fields: ModelProviderFields {
                name: self.name,
                kind: ModelProviderKind::parse(&self.kind)
                    .ok_or_else(|| corrupt("model_providers.kind", &self.kind))?,
                base_url: self.base_url,
                api_key: self.api_key.map(Sealed::from_stored),
                headers: self
                    .headers
                    .0
                    .into_iter()
                    .map(|(name, value)| (name, Sealed::from_stored(value)))
                    .collect(),
                models: self.models.0,
                prices: self.prices.map(|p| p.0),
            },
            models_refreshed_at: self.models_refreshed_at,
            created_by: self.created_by.as_deref().map(parse_user_id).transpose()?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The stored form of a provider's headers: names to sealed values.
pub(crate) fn stored_headers(fields: &ModelProviderFields) -> Json<BTreeMap<&str, &str>> {
    Json(
        fields
            .headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect(),
    )
}

#[derive(sqlx::FromRow)]
pub(crate) struct ModelSettingsRow {
    version: i64,
    default_model: Option<String>,
    updated_at: Option<DateTime<Utc>>,
}

impl ModelSettingsRow {
    pub(crate) fn into_settings(self) -> ModelSettings {
        ModelSettings {
            version: self.version,
            default_model: self.default_model,
            updated_at: self.updated_at,
        }
    }
}
