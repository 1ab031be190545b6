//! The configured providers, and how an agent's [`ModelConfig`] becomes a [`ChatModel`].

use std::collections::BTreeMap;
use std::sync::Arc;

use ars_domain::ModelConfig;
use serde::Serialize;

use crate::config::{OPENAI, OPENAI_DEFAULT_BASE_URL, SCRIPTED};
use crate::providers::openai::OpenAiProvider;
use crate::providers::scripted::ScriptedModel;
use crate::secret::ApiKey;
use crate::{ChatModel, ModelError, ModelsConfig, ProviderConfig, ProviderKind, SamplingParams};

/// A provider as the UI may see it: no key, no headers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderInfo {
    pub name: String,
    pub kind: ProviderKind,
    /// `None` for providers without a server (`scripted`).
    pub base_url: Option<String>,
    /// Advertised model names; a server may accept others too.
    pub models: Vec<String>,
}

#[derive(Debug, Clone)]
enum Provider {
    OpenAi(OpenAiProvider),
    Scripted,
}

#[derive(Debug, Clone)]
struct Entry {
    provider: Provider,
    info: ProviderInfo,
}

/// Every provider the server knows, by name. Built once at start-up; cheap to clone and share.
#[derive(Debug, Clone)]
pub struct ModelRegistry {
    providers: Arc<BTreeMap<String, Entry>>,
}

impl ModelRegistry {
    /// Builds the registry from `config` and the process environment: `OPENAI_BASE_URL` and
    /// `OPENAI_API_KEY` add a provider named `openai` unless the config has one, and each
    /// provider's `api_key_env` is read.
    pub fn from_env(config: &ModelsConfig) -> Result<Self, ModelError> {
        Self::new(config, |name| std::env::var(name).ok())
    }

    /// Like [`ModelRegistry::from_env`], with the environment passed in, for tests.
    pub fn new(
        config: &ModelsConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ModelError> {
        let mut providers = BTreeMap::new();
        let scripted = ProviderConfig {
            kind: ProviderKind::Scripted,
            models: vec![SCRIPTED.to_string()],
            ..ProviderConfig::openai_compatible(SCRIPTED, "")
        };
        let mut configs = vec![scripted];
        for provider in &config.providers {
            if provider.name.trim().is_empty() || provider.name.contains('/') {
                return Err(ModelError::Config(format!(
                    "provider name `{}` must be non-empty and contain no `/`",
                    provider.name
                )));
            }
            if configs.iter().any(|c| c.name == provider.name) {
                return Err(ModelError::Config(format!(
                    "provider `{}` is configured twice (`scripted` is built in)",
                    provider.name
                )));
            }
            configs.push(provider.clone());
        }
        let openai_url = env("OPENAI_BASE_URL").filter(|v| !v.trim().is_empty());
        let openai_key = env("OPENAI_API_KEY").filter(|v| !v.trim().is_empty());
        if (openai_url.is_some() || openai_key.is_some())
            && !configs.iter().any(|c| c.name == OPENAI)
        {
            let url = openai_url.unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.to_string());
            let mut openai = ProviderConfig::openai_compatible(OPENAI, url);
            openai.api_key_env = Some("OPENAI_API_KEY".into());
            configs.push(openai);
        }
        for provider in configs {
            let entry = Self::entry(&provider, &config.openai, &env)?;
            providers.insert(provider.name.clone(), entry);
        }
        Ok(Self {
            providers: Arc::new(providers),
        })
    }

    fn entry(
        config: &ProviderConfig,
        options: &crate::OpenAiOptions,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Entry, ModelError> {
        let (provider, base_url) = match config.kind {
            ProviderKind::Scripted => (Provider::Scripted, None),
            ProviderKind::OpenaiCompatible => {
                let (key, hint) = match &config.api_key_env {
                    Some(var) => match env(var).and_then(ApiKey::new) {
                        Some(key) => (Some(key), None),
                        None => {
                            tracing::warn!(provider = %config.name, env = %var, "API key variable is not set");
                            (None, Some(format!("environment variable {var} is not set")))
                        }
                    },
                    None => (None, None),
                };
                let provider = OpenAiProvider::new(config, key, hint, options.clone())?;
                let url = provider.base_url().to_string();
                (Provider::OpenAi(provider), Some(url))
            }
        };
        Ok(Entry {
            provider,
            info: ProviderInfo {
                name: config.name.clone(),
                kind: config.kind,
                base_url,
                models: config.models.clone(),
            },
        })
    }

    /// The model an agent's configuration names, ready to call. Fails for an unknown provider
    /// (listing the configured ones) or an invalid script.
    pub fn model_for(&self, config: &ModelConfig) -> Result<Arc<dyn ChatModel>, ModelError> {
        let entry =
            self.providers
                .get(&config.provider)
                .ok_or_else(|| ModelError::UnknownProvider {
                    name: config.provider.clone(),
                    configured: self.providers.keys().cloned().collect(),
                })?;
        if config.name.trim().is_empty() {
            return Err(ModelError::Config("the model name is empty".into()));
        }
        Ok(match &entry.provider {
            Provider::OpenAi(provider) => {
                Arc::new(provider.model(config.name.clone(), SamplingParams::from(config)))
            }
            Provider::Scripted => Arc::new(ScriptedModel::new(
                config.provider.clone(),
                config.name.clone(),
                config.script.as_ref(),
            )?),
        })
    }

    /// Every provider, by name, for `GET /api/models`.
    pub fn list(&self) -> Vec<ProviderInfo> {
        self.providers.values().map(|e| e.info.clone()).collect()
    }

    /// Whether a provider of that name exists, for validating agents at save time.
    pub fn contains(&self, provider: &str) -> bool {
        self.providers.contains_key(provider)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn model(provider: &str, name: &str) -> ModelConfig {
        crate::parse_model_ref(&format!("{provider}/{name}")).unwrap()
    }

    #[test]
    fn scripted_is_always_available() {
        let registry = ModelRegistry::new(&ModelsConfig::default(), env(&[])).unwrap();
        let names: Vec<_> = registry.list().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["scripted"]);
        assert_eq!(
            registry
                .model_for(&model("scripted", "demo"))
                .unwrap()
                .model(),
            "demo"
        );
    }

    #[test]
    fn unknown_provider_error_lists_the_configured_ones() {
        let config = ModelsConfig {
            providers: vec![ProviderConfig::openai_compatible(
                "local",
                "http://127.0.0.1:1/v1",
            )],
            ..ModelsConfig::default()
        };
        let registry = ModelRegistry::new(&config, env(&[])).unwrap();
        let error = registry.model_for(&model("nope", "x")).err().unwrap();
        assert_eq!(
            error.to_string(),
            "unknown model provider `nope`; configured providers: local, scripted"
        );
    }

    #[test]
    fn openai_env_adds_the_openai_provider_without_leaking_the_key() {
        let registry = ModelRegistry::new(
            &ModelsConfig::default(),
            env(&[
                ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
                ("OPENAI_API_KEY", "sk-top-secret"),
            ]),
        )
        .unwrap();
        let openai = registry
            .list()
            .into_iter()
            .find(|p| p.name == "openai")
            .unwrap();
        assert_eq!(openai.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(openai.kind, ProviderKind::OpenaiCompatible);
        let debug = format!("{registry:?} {:?}", registry.list());
        assert!(!debug.contains("sk-top-secret"), "{debug}");
    }

    #[test]
    fn duplicate_and_reserved_provider_names_are_refused() {
        for name in ["scripted", "a/b", ""] {
            let config = ModelsConfig {
                providers: vec![ProviderConfig::openai_compatible(name, "http://h/v1")],
                ..ModelsConfig::default()
            };
            assert!(ModelRegistry::new(&config, env(&[])).is_err(), "{name}");
        }
    }

    #[test]
    fn invalid_scripts_are_refused_when_the_model_is_built() {
        let registry = ModelRegistry::new(&ModelsConfig::default(), env(&[])).unwrap();
        let mut config = model("scripted", "demo");
        config.script = Some(serde_json::json!([]));
        assert!(matches!(
            registry.model_for(&config),
            Err(ModelError::Config(_))
        ));
    }
}
