//! Configuration of the model providers: which ones exist, where they live, and the timing
//! every HTTP call obeys.
//!
//! All timing is here rather than in constants so tests can shrink it to milliseconds.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ModelError;

/// The provider name reserved for the built-in scripted test/demo model.
pub const SCRIPTED: &str = "scripted";

/// The provider name the `OPENAI_BASE_URL`/`OPENAI_API_KEY` environment configures.
pub const OPENAI: &str = "openai";

/// The default `OPENAI_BASE_URL`.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How a provider is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    /// `POST {base_url}/chat/completions` in the OpenAI format: OpenAI, DeepSeek, vLLM, Ollama,
    /// llama.cpp server, LM Studio.
    OpenaiCompatible,
    /// The deterministic scripted model; needs no network.
    Scripted,
}

/// One named provider from the server configuration.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// What agents write in `model.provider`.
    pub name: String,
    pub kind: ProviderKind,
    /// The API root including its version, e.g. `http://localhost:11434/v1`; unused by
    /// `scripted`.
    #[serde(default)]
    pub base_url: String,
    /// The environment variable holding the API key, so the key stays out of config files.
    /// `None` for servers that need none (a local Ollama).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Extra headers sent with every request (e.g. an organisation id). They may hold secrets,
    /// so `Debug` prints only their names and [`crate::ProviderInfo`] omits them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Model names advertised to the UI; the server may serve others too.
    #[serde(default)]
    pub models: Vec<String>,
}

impl ProviderConfig {
    /// An OpenAI-compatible provider without key, headers or advertised models.
    pub fn openai_compatible(name: impl Into<String>, base_url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            kind: ProviderKind::OpenaiCompatible,
            base_url: base_url.into(),
            api_key_env: None,
            headers: BTreeMap::new(),
            models: Vec::new(),
        }
    }
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key_env", &self.api_key_env)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("models", &self.models)
            .finish()
    }
}

/// Timing and retry policy of the OpenAI-compatible provider.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OpenAiOptions {
    /// Time to establish the TCP/TLS connection.
    #[serde(with = "millis", rename = "connect_timeout_ms")]
    pub connect_timeout: Duration,
    /// Time from sending a streaming request to its response headers.
    #[serde(with = "millis", rename = "request_timeout_ms")]
    pub request_timeout: Duration,
    /// The longest silence allowed between two chunks of a stream; a stalled stream ends
    /// with [`ModelError::Idle`].
    #[serde(with = "millis", rename = "idle_timeout_ms")]
    pub idle_timeout: Duration,
    /// Time for a whole non-streaming answer, which arrives only once generation is done.
    #[serde(with = "millis", rename = "non_streaming_timeout_ms")]
    pub non_streaming_timeout: Duration,
    /// Attempts per call, the first included, on 429, 5xx and connection errors.
    pub max_attempts: u32,
    /// The first retry waits about this long; each further one twice as long.
    #[serde(with = "millis", rename = "backoff_base_ms")]
    pub backoff_base: Duration,
    /// No single backoff exceeds this.
    #[serde(with = "millis", rename = "backoff_max_ms")]
    pub backoff_max: Duration,
    /// A `Retry-After` up to this long is honoured; a longer one ends the call at once, as
    /// waiting that long would stall the run.
    #[serde(with = "millis", rename = "max_retry_after_ms")]
    pub max_retry_after: Duration,
}

impl Default for OpenAiOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(120),
            idle_timeout: Duration::from_secs(120),
            non_streaming_timeout: Duration::from_secs(600),
            max_attempts: 4,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

/// Everything the [`crate::ModelRegistry`] is built from, besides the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelsConfig {
    pub providers: Vec<ProviderConfig>,
    /// Timing shared by every OpenAI-compatible provider.
    pub openai: OpenAiOptions,
}

/// Parses a `provider/name` model reference such as `ARS_DEFAULT_MODEL`. The split is at the
/// first `/`, since model names often contain one themselves (`openai/meta-llama/Llama-3-8B`).
pub fn parse_model_ref(reference: &str) -> Result<ars_domain::ModelConfig, ModelError> {
    let reference = reference.trim();
    match reference.split_once('/') {
        Some((provider, name)) if !provider.is_empty() && !name.is_empty() => {
            Ok(ars_domain::ModelConfig {
                provider: provider.to_string(),
                name: name.to_string(),
                temperature: None,
                max_tokens: None,
                top_p: None,
                script: None,
            })
        }
        _ => Err(ModelError::Config(format!(
            "model reference `{reference}` is not of the form `provider/model`, \
             e.g. `openai/gpt-4o-mini`"
        ))),
    }
}

/// Durations as whole milliseconds in configuration files.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_refs_split_at_the_first_slash() {
        let config = parse_model_ref("vllm/meta-llama/Llama-3-8B").unwrap();
        assert_eq!(config.provider, "vllm");
        assert_eq!(config.name, "meta-llama/Llama-3-8B");
        for bad in ["", "gpt-4o", "/gpt-4o", "openai/"] {
            assert!(parse_model_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn provider_debug_hides_header_values() {
        let mut config = ProviderConfig::openai_compatible("x", "http://h/v1");
        config
            .headers
            .insert("api-key".into(), "secret-value".into());
        let debug = format!("{config:?}");
        assert!(debug.contains("api-key"));
        assert!(!debug.contains("secret-value"));
    }

    #[test]
    fn options_read_milliseconds_and_default_the_rest() {
        let options: OpenAiOptions =
            serde_json::from_value(serde_json::json!({"idle_timeout_ms": 250})).unwrap();
        assert_eq!(options.idle_timeout, Duration::from_millis(250));
        assert_eq!(options.max_attempts, OpenAiOptions::default().max_attempts);
    }
}
