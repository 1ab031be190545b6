//! Providers: the model providers an admin stored (secrets arrive and leave sealed) and the
//! server-wide model settings, versioned together so every instance knows when its cached
//! providers are stale.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{ModelProvider, ModelProviderFields, ModelProviderId, UserId};

use crate::Result;

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// The server-wide model settings, with the version that every change to them or to a stored
/// model provider raises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSettings {
    /// Goes up in the transaction of every change to the settings or to `model_providers`;
    /// an unchanged version means cached providers are current.
    pub version: i64,
    /// `provider/model`: the model of agents that name none, over the configuration's.
    pub default_model: Option<String>,
    /// When anything of the settings or providers last changed; `None` before the first change.
    pub updated_at: Option<DateTime<Utc>>,
}

/// What [`ProviderStore::delete_model_provider`] did besides deleting the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeletedProvider {
    /// The default model named the deleted provider and is now unset.
    pub default_model_cleared: bool,
}

/// Model providers and the model settings. Every write raises [`ModelSettings::version`] in its
/// own transaction.
#[async_trait]
pub trait ProviderStore: Send + Sync {
    /// Creates a provider with this id. A taken name is `Conflict { field: "name" }`, an unknown
    /// creator `Invalid`.
    async fn create_model_provider(
        &self,
        id: ModelProviderId,
        fields: &ModelProviderFields,
        created_by: Option<UserId>,
    ) -> Result<ModelProvider>;
    /// The provider with this id, if any.
    async fn model_provider(&self, id: ModelProviderId) -> Result<Option<ModelProvider>>;
    /// Every stored provider, by name (byte order).
    async fn list_model_providers(&self) -> Result<Vec<ModelProvider>>;
    /// Replaces every field and sets `updated_at` (`models_refreshed_at` is kept only while the
    /// models are unchanged). When the name changes, a default model of the old name follows it,
    /// in the same transaction. `NotFound` when the row is gone; a taken name is
    /// `Conflict { field: "name" }`.
    async fn update_model_provider(
        &self,
        id: ModelProviderId,
        fields: &ModelProviderFields,
    ) -> Result<ModelProvider>;
    /// Stores the models the provider itself listed, with `refreshed_at`. `NotFound` when the
    /// row is gone.
    async fn set_model_provider_models(
        &self,
        id: ModelProviderId,
        models: &[String],
        refreshed_at: DateTime<Utc>,
    ) -> Result<ModelProvider>;
    /// Deletes a provider; a default model naming it is cleared in the same transaction.
    /// `None` when there was no such provider.
    async fn delete_model_provider(&self, id: ModelProviderId) -> Result<Option<DeletedProvider>>;
    /// The model settings.
    async fn model_settings(&self) -> Result<ModelSettings>;
    /// Just [`ModelSettings::version`]: one read of one row, for deciding whether cached
    /// providers are stale.
    async fn model_settings_version(&self) -> Result<i64>;
    /// Sets the default model (`provider/model`; the caller checked it) or, with `None`, clears
    /// it; answers the settings as stored.
    async fn set_default_model(&self, model: Option<&str>) -> Result<ModelSettings>;
}
