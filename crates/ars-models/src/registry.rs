//! The known providers, and how an agent's [`ModelConfig`] becomes a [`ChatModel`].
//!
//! A registry is built once from the server configuration (plus the built-in `scripted`
//! provider); [`ModelRegistry::with_providers`] layers providers added at run time (an admin's,
//! from the database) over it, making a new registry, so a run holds one consistent view.

use std::collections::BTreeMap;
use std::sync::Arc;

use ars_domain::ModelConfig;
use serde::Serialize;

use crate::config::{OPENAI, OPENAI_DEFAULT_BASE_URL, SCRIPTED};
use crate::providers::openai::OpenAiProvider;
use crate::providers::scripted::ScriptedModel;
use crate::secret::ApiKey;
use crate::{
    ChatModel, ModelError, ModelsConfig, OpenAiOptions, ProviderConfig, ProviderKind,
    SamplingParams,
};

/// Where a provider is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderSource {
    /// Built into the server (`scripted`).
    Builtin,
    /// The server configuration (`ars.toml`, `OPENAI_*` and `ARS_*` variables).
    Config,
    /// Added at run time (by an admin, stored in the database).
    Database,
}

/// A provider as the UI may see it: no key, no header values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProviderInfo {
    pub name: String,
    pub kind: ProviderKind,
    pub source: ProviderSource,
    /// `None` for providers without a server (`scripted`).
    pub base_url: Option<String>,
    /// Advertised model names; a server may accept others too.
    pub models: Vec<String>,
    /// Why it may not work, in plain words (a key variable that is not set, a stored key that
    /// cannot be decrypted); `None` when nothing is known to be wrong.
    pub problem: Option<String>,
}

/// A provider added over the configured ones (see [`ModelRegistry::with_providers`]).
#[derive(Clone, Debug)]
pub struct ExtraProvider {
    /// Its configuration, header values included (`Debug` shows only their names).
    pub config: ProviderConfig,
    pub api_key: Option<ApiKey>,
    /// Why it cannot be used; when set, [`ModelRegistry::model_for`] answers this as a
    /// configuration error instead of calling the provider.
    pub problem: Option<String>,
}

#[derive(Debug, Clone)]
enum Provider {
    OpenAi(OpenAiProvider),
    Scripted,
    /// Listed, but every model of it fails with this configuration error.
    Broken(String),
}

#[derive(Debug, Clone)]
struct Entry {
    provider: Provider,
    info: ProviderInfo,
}

/// Every provider the server knows, by name. Cheap to clone and share.
#[derive(Debug, Clone)]
pub struct ModelRegistry {
    providers: Arc<BTreeMap<String, Entry>>,
    /// The timing of every OpenAI-compatible provider, added ones included.
    options: OpenAiOptions,
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
            options: config.openai.clone(),
        })
    }

    fn entry(
        config: &ProviderConfig,
        options: &OpenAiOptions,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<Entry, ModelError> {
        let (provider, base_url, problem, source) = match config.kind {
            ProviderKind::Scripted => (Provider::Scripted, None, None, ProviderSource::Builtin),
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
                let provider = OpenAiProvider::new(config, key, hint.clone(), options.clone())?;
                let url = provider.base_url().to_string();
                (
                    Provider::OpenAi(provider),
                    Some(url),
                    hint,
                    ProviderSource::Config,
                )
            }
        };
        Ok(Entry {
            provider,
            info: ProviderInfo {
                name: config.name.clone(),
                kind: config.kind,
                source,
                base_url,
                models: config.models.clone(),
                problem,
            },
        })
    }

    /// This registry with `extra` providers added (an admin's, from the database). A name
    /// already known keeps its entry: the configuration and the built-in providers win, and
    /// callers report the clash. A provider that cannot be built (or comes with a `problem`)
    /// is listed, and its models fail with that problem in plain words.
    pub fn with_providers(&self, extra: Vec<ExtraProvider>) -> Self {
        let mut providers = (*self.providers).clone();
        for added in extra {
            let name = added.config.name.clone();
            if providers.contains_key(&name) {
                continue;
            }
            let built = match added.problem {
                Some(problem) => Err(problem),
                None => {
                    OpenAiProvider::new(&added.config, added.api_key, None, self.options.clone())
                        .map_err(|e| e.to_string())
                }
            };
            let (provider, problem) = match built {
                Ok(provider) => (Provider::OpenAi(provider), None),
                Err(problem) => (Provider::Broken(problem.clone()), Some(problem)),
            };
            let base_url = added.config.base_url.trim().trim_end_matches('/');
            let info = ProviderInfo {
                name: name.clone(),
                kind: added.config.kind,
                source: ProviderSource::Database,
                base_url: Some(base_url.to_string()),
                models: added.config.models,
                problem,
            };
            providers.insert(name, Entry { provider, info });
        }
        Self {
            providers: Arc::new(providers),
            options: self.options.clone(),
        }
    }

    /// The timing every OpenAI-compatible provider of this registry obeys.
    pub fn options(&self) -> &OpenAiOptions {
        &self.options
    }

    /// The OpenAI-compatible provider of this name, to probe it (list its models, test it).
    pub fn openai_provider(&self, name: &str) -> Option<&OpenAiProvider> {
        match &self.providers.get(name)?.provider {
            Provider::OpenAi(provider) => Some(provider),
            Provider::Scripted | Provider::Broken(_) => None,
        }
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
            Provider::Broken(problem) => {
                return Err(ModelError::Config(format!(
                    "provider `{}`: {problem}",
                    config.provider
                )));
            }
        })
    }

    /// Every provider, by name, for `GET /api/models`.
    pub fn list(&self) -> Vec<ProviderInfo> {
        self.providers.values().map(|e| e.info.clone()).collect()
    }

    /// The provider of this name, as the UI may see it.
    pub fn info(&self, name: &str) -> Option<&ProviderInfo> {
        self.providers.get(name).map(|e| &e.info)
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
    fn added_providers_layer_over_the_configured_ones() {
        let config = ModelsConfig {
            providers: vec![ProviderConfig::openai_compatible(
                "local",
                "http://127.0.0.1:1/v1",
            )],
            ..ModelsConfig::default()
        };
        let registry = ModelRegistry::new(&config, env(&[])).unwrap();
        let mut added = ProviderConfig::openai_compatible("db", "http://127.0.0.1:2/v1/");
        added.headers.insert("x-org".into(), "header-secret".into());
        let clash = ProviderConfig::openai_compatible("local", "http://127.0.0.1:3/v1");
        let broken = ProviderConfig::openai_compatible("broken", "http://127.0.0.1:4/v1");
        let layered = registry.with_providers(vec![
            ExtraProvider {
                config: added,
                api_key: ApiKey::new("sk-db-secret"),
                problem: None,
            },
            ExtraProvider {
                config: clash,
                api_key: None,
                problem: None,
            },
            ExtraProvider {
                config: broken,
                api_key: None,
                problem: Some("its key cannot be decrypted".into()),
            },
        ]);
        let names: Vec<_> = layered.list().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["broken", "db", "local", "scripted"]);
        let db = layered.info("db").unwrap();
        assert_eq!(db.source, ProviderSource::Database);
        assert_eq!(db.base_url.as_deref(), Some("http://127.0.0.1:2/v1"));
        // The configured provider keeps its name.
        let local = layered.info("local").unwrap();
        assert_eq!(local.source, ProviderSource::Config);
        assert_eq!(local.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
        assert!(layered.model_for(&model("db", "m")).is_ok());
        let error = layered.model_for(&model("broken", "m")).err().unwrap();
        assert!(error.to_string().contains("cannot be decrypted"), "{error}");
        assert!(
            registry.info("db").is_none(),
            "the base registry is unchanged"
        );
        let debug = format!("{layered:?} {:?}", layered.list());
        assert!(!debug.contains("sk-db-secret") && !debug.contains("header-secret"));
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
