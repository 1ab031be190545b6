//! The models a run may use: the configured providers (fixed at start), the providers an admin
//! stored in the database (changing at run time, on any instance), and the server default
//! model (the database's setting over the configuration's).
//!
//! [`ModelSource::snapshot`] answers one consistent view of all three. It keeps the last view
//! and, on each call, reads one number from the store (`ModelSettings::version`, raised by every
//! change of a stored provider or of the settings, whichever instance made it); only when that
//! number moved are the stored providers read again, their secrets opened with the server key
//! and a new registry layered over the configured one. So a change applies to the next run on
//! every instance, without a restart, for the price of one single-row read per run start.
//!
//! A stored secret that cannot be opened (another server key, damage) makes that provider
//! unusable, with the reason in plain words; it never stops the server.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use ars_domain::{
    ContextDefaults, ModelConfig, ModelProvider, ModelProviderId, SecretError, SecretKey,
    model_provider,
};
use ars_models::{ApiKey, ExtraProvider, ModelRegistry, ProviderConfig, ProviderKind};
use ars_store::{ModelSettings, Store, StoreError};

/// Where the server default model comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultModelSource {
    /// The model settings stored in the database (an admin's choice).
    Database,
    /// The server configuration (`default_model`, `ARS_DEFAULT_MODEL`, `[defaults.base.model]`).
    Config,
}

/// The model of agents that name none, and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultModel {
    pub model: ModelConfig,
    pub source: DefaultModelSource,
}

/// One consistent view of the providers and the default model.
#[derive(Debug)]
pub struct ModelSnapshot {
    /// The settings version this view was read at.
    pub version: i64,
    /// The configured providers with the stored ones layered over them.
    pub registry: ModelRegistry,
    /// The stored providers as read (secrets still sealed), by name.
    pub stored: Vec<ModelProvider>,
    /// Why a stored provider cannot be used (a secret that does not open, a name the
    /// configuration already uses), by id.
    pub problems: BTreeMap<ModelProviderId, String>,
    /// The effective server default model: the stored setting, else the configuration's.
    pub default_model: Option<DefaultModel>,
    /// The stored default model setting as stored, even when it cannot be used.
    pub stored_default: Option<String>,
}

impl ModelSnapshot {
    /// `config` with this view's default model as the `BaseContext` model: what a run resolves
    /// an agent's context over.
    pub fn defaults(&self, config: &ContextDefaults) -> ContextDefaults {
        let mut defaults = config.clone();
        if let Some(default) = &self.default_model {
            defaults.base.model = Some(default.model.clone());
        }
        defaults
    }
}

/// The configured providers, the store's, and the key that opens their secrets. Cheap to
/// clone.
#[derive(Clone)]
pub struct ModelSource {
    inner: Arc<Inner>,
}

struct Inner {
    config: ModelRegistry,
    /// The configured `BaseContext` model: the default when the store sets none.
    config_default: Option<ModelConfig>,
    store: Arc<dyn Store>,
    key: SecretKey,
    /// The last view. A std lock: held only to clone or replace the `Arc`, never across an
    /// `.await`.
    current: RwLock<Option<Arc<ModelSnapshot>>>,
    /// Taken while a new view is read, so concurrent run starts read the store once.
    reloading: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ModelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSource")
            .field("config", &self.inner.config)
            .field("key", &self.inner.key)
            .finish_non_exhaustive()
    }
}

impl ModelSource {
    pub fn new(
        config: ModelRegistry,
        config_default: Option<ModelConfig>,
        store: Arc<dyn Store>,
        key: SecretKey,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                config_default,
                store,
                key,
                current: RwLock::new(None),
                reloading: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The configured providers alone (built-in and from the server configuration).
    pub fn config(&self) -> &ModelRegistry {
        &self.inner.config
    }

    /// The server key, which seals and opens stored secrets.
    pub fn key(&self) -> &SecretKey {
        &self.inner.key
    }

    fn cached(&self) -> Option<Arc<ModelSnapshot>> {
        self.inner
            .current
            .read()
            .ok()
            .and_then(|current| current.clone())
    }

    /// The current view: the last one while the store's version is unchanged, a fresh one
    /// otherwise. When the store cannot be read, the last view serves (logged), so a
    /// database hiccup does not fail runs whose providers are known.
    pub async fn snapshot(&self) -> Result<Arc<ModelSnapshot>, StoreError> {
        let version = match self.inner.store.model_settings_version().await {
            Ok(version) => version,
            Err(e) => match self.cached() {
                Some(cached) => {
                    tracing::warn!(error = %e, "cannot check the model providers for changes; using the last known ones");
                    return Ok(cached);
                }
                None => return Err(e),
            },
        };
        self.snapshot_at(version).await
    }

    /// The view for the store's `version`, read by the caller (with what it read anyway: see
    /// `AgentStore::agent_for_run`): the last one while it is that version, a fresh one
    /// otherwise.
    pub async fn snapshot_at(&self, version: i64) -> Result<Arc<ModelSnapshot>, StoreError> {
        if let Some(cached) = self.cached().filter(|c| c.version == version) {
            return Ok(cached);
        }
        let _reloading = self.inner.reloading.lock().await;
        // Another caller may have read it while this one waited.
        if let Some(cached) = self.cached().filter(|c| c.version >= version) {
            return Ok(cached);
        }
        let settings = self.inner.store.model_settings().await?;
        let stored = self.inner.store.list_model_providers().await?;
        let snapshot = Arc::new(self.build(settings, stored));
        tracing::debug!(
            version = snapshot.version,
            stored_providers = snapshot.stored.len(),
            "model providers loaded"
        );
        if let Ok(mut current) = self.inner.current.write() {
            *current = Some(Arc::clone(&snapshot));
        }
        Ok(snapshot)
    }

    fn build(&self, settings: ModelSettings, stored: Vec<ModelProvider>) -> ModelSnapshot {
        let mut problems = BTreeMap::new();
        let mut extra = Vec::with_capacity(stored.len());
        for provider in &stored {
            let name = &provider.fields.name;
            if self.inner.config.info(name).is_some() {
                problems.insert(
                    provider.id,
                    format!(
                        "the server configuration defines a provider named `{name}` too, and \
                         that one is used; rename this one"
                    ),
                );
                continue;
            }
            let (config, api_key, problem) = match self.open(provider) {
                Ok((config, api_key)) => (config, api_key, None),
                Err(e) => {
                    tracing::warn!(provider = %name, error = %e, "a stored provider's secret cannot be decrypted; the provider is unusable");
                    let problem = format!("its secrets cannot be decrypted: {e}");
                    problems.insert(provider.id, problem.clone());
                    (Self::plain_config(provider), None, Some(problem))
                }
            };
            extra.push(ExtraProvider {
                config,
                api_key,
                problem,
            });
        }
        let registry = self.inner.config.with_providers(extra);
        let stored_default = settings.default_model.clone();
        let from_store = stored_default.as_deref().and_then(|reference| {
            ars_models::parse_model_ref(reference)
                .inspect_err(|e| tracing::warn!(error = %e, "the stored default model is unusable"))
                .ok()
        });
        let default_model = match from_store {
            Some(model) => Some(DefaultModel {
                model,
                source: DefaultModelSource::Database,
            }),
            None => self.inner.config_default.clone().map(|model| DefaultModel {
                model,
                source: DefaultModelSource::Config,
            }),
        };
        ModelSnapshot {
            version: settings.version,
            registry,
            stored,
            problems,
            default_model,
            stored_default,
        }
    }

    /// A stored provider's configuration without its secrets.
    fn plain_config(provider: &ModelProvider) -> ProviderConfig {
        let fields = &provider.fields;
        ProviderConfig {
            models: fields.models.clone(),
            ..ProviderConfig::openai_compatible(&fields.name, &fields.base_url)
        }
    }

    /// A stored provider's configuration with its secrets opened: header values in the
    /// configuration, the key beside it.
    pub fn open(
        &self,
        provider: &ModelProvider,
    ) -> Result<(ProviderConfig, Option<ApiKey>), SecretError> {
        let key = &self.inner.key;
        let mut config = Self::plain_config(provider);
        config.kind = match provider.fields.kind {
            ars_domain::ModelProviderKind::OpenaiCompatible => ProviderKind::OpenaiCompatible,
        };
        for (name, sealed) in &provider.fields.headers {
            let value = key.open(&model_provider::header_context(provider.id, name), sealed)?;
            config.headers.insert(name.clone(), value.to_string());
        }
        let api_key = match &provider.fields.api_key {
            Some(sealed) => {
                let opened = key.open(&model_provider::api_key_context(provider.id), sealed)?;
                ApiKey::new(opened.as_str())
            }
            None => None,
        };
        Ok((config, api_key))
    }
}
