//! The OpenAI-compatible provider: OpenAI, DeepSeek, vLLM, Ollama, llama.cpp server, LM Studio.
//!
//! A call is `POST {base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`, read as server-sent events. Servers that refuse to stream
//! when tools are present get the same request without streaming, and the whole answer is
//! replayed as events; the provider remembers such models so later calls skip the refusal.

mod embeddings;
mod http;
mod probe;
mod sse;
mod wire;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::secret::{ApiKey, Redactor};
use crate::{
    ChatModel, ChatRequest, ChatStream, ModelError, OpenAiOptions, ProviderConfig, SamplingParams,
};

/// One configured OpenAI-compatible server. Cheap to clone; clones share the HTTP connection
/// pool and what was learnt about the server's models.
#[derive(Clone, Debug)]
pub struct OpenAiProvider {
    shared: Arc<Shared>,
}

/// What every model of one provider shares.
pub(crate) struct Shared {
    name: String,
    base_url: String,
    /// `{base_url}/chat/completions`.
    endpoint: String,
    /// `Bearer <key>`, marked sensitive so the http stack never logs it.
    authorization: Option<HeaderValue>,
    api_key: Option<ApiKey>,
    /// The key and the header values, blanked out of whatever the server echoes back.
    redactor: Redactor,
    /// Said in an auth error when the key's environment variable was not set.
    missing_key_hint: Option<String>,
    /// Configured extra headers.
    headers: HeaderMap,
    client: reqwest::Client,
    options: OpenAiOptions,
    /// Models that refused `stream: true` together with tools. A std mutex: it is only held
    /// to look up or insert, never across an `.await`.
    non_streaming_with_tools: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    fn prefers_non_streaming(&self, model: &str) -> bool {
        self.non_streaming_with_tools
            .lock()
            .map(|set| set.contains(model))
            .unwrap_or(false)
    }

    fn remember_non_streaming(&self, model: &str) {
        if let Ok(mut set) = self.non_streaming_with_tools.lock() {
            set.insert(model.to_string());
        }
    }
}

impl OpenAiProvider {
    /// Builds a provider from its configuration. `api_key` comes from the environment variable
    /// the configuration names; `missing_key_hint` is said in auth errors when that variable
    /// was unset.
    pub fn new(
        config: &ProviderConfig,
        api_key: Option<ApiKey>,
        missing_key_hint: Option<String>,
        options: OpenAiOptions,
    ) -> Result<Self, ModelError> {
        let invalid =
            |what: String| ModelError::Config(format!("provider `{}`: {what}", config.name));
        let base_url = config.base_url.trim().trim_end_matches('/').to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(invalid(format!(
                "base_url `{base_url}` must start with http:// or https://"
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| invalid(format!("`{name}` is not a valid header name")))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| invalid(format!("the value of header `{name}` is not valid")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let authorization = match &api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                    .map_err(|_| invalid("the API key contains invalid characters".into()))?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .build()
            .map_err(|e| invalid(format!("cannot build an HTTP client: {e}")))?;
        let redactor = Redactor::new(
            api_key.as_ref(),
            config.headers.values().map(String::as_str),
        );
        Ok(Self {
            shared: Arc::new(Shared {
                name: config.name.clone(),
                endpoint: format!("{base_url}/chat/completions"),
                base_url,
                authorization,
                api_key,
                redactor,
                missing_key_hint,
                headers,
                client,
                options,
                non_streaming_with_tools: Mutex::new(HashSet::new()),
            }),
        })
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The timing this provider's calls obey.
    pub fn options(&self) -> &OpenAiOptions {
        &self.shared.options
    }

    /// The same server, key and headers with other timing (a probe's: one attempt, a short
    /// connect limit), on a connection pool of its own.
    pub fn with_options(&self, options: OpenAiOptions) -> Result<Self, ModelError> {
        let shared = &self.shared;
        let client = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .build()
            .map_err(|e| {
                ModelError::Config(format!(
                    "provider `{}`: cannot build an HTTP client: {e}",
                    shared.name
                ))
            })?;
        Ok(Self {
            shared: Arc::new(Shared {
                name: shared.name.clone(),
                base_url: shared.base_url.clone(),
                endpoint: shared.endpoint.clone(),
                authorization: shared.authorization.clone(),
                api_key: shared.api_key.clone(),
                redactor: shared.redactor.clone(),
                missing_key_hint: shared.missing_key_hint.clone(),
                headers: shared.headers.clone(),
                client,
                options,
                non_streaming_with_tools: Mutex::new(HashSet::new()),
            }),
        })
    }

    /// The API root, without credentials; safe to show.
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    /// Whether requests carry an API key (never the key itself).
    pub fn has_api_key(&self) -> bool {
        self.shared.api_key.is_some()
    }

    /// The names of the extra headers sent (never their values), in lower case.
    pub fn header_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .shared
            .headers
            .keys()
            .map(|name| name.as_str().to_string())
            .collect();
        names.sort_unstable();
        names
    }

    /// A [`ChatModel`] for `model` on this server. `defaults` are the agent's configured
    /// sampling parameters; a request's own parameters override them.
    pub fn model(&self, model: impl Into<String>, defaults: SamplingParams) -> OpenAiModel {
        OpenAiModel {
            shared: Arc::clone(&self.shared),
            model: model.into(),
            defaults,
        }
    }
}

/// A model on an OpenAI-compatible server.
#[derive(Debug)]
pub struct OpenAiModel {
    shared: Arc<Shared>,
    model: String,
    defaults: SamplingParams,
}

impl OpenAiModel {
    fn body(&self, request: &ChatRequest, streaming: bool) -> Bytes {
        let params = request.params.or(self.defaults);
        let body = wire::request_body(&self.model, request, params, streaming);
        Bytes::from(body.to_string())
    }

    /// The request without streaming, its whole answer replayed as events.
    async fn non_streaming(&self, request: &ChatRequest) -> Result<ChatStream, ModelError> {
        let shared = &self.shared;
        let limit = shared.options.non_streaming_timeout;
        let response = http::send(shared, self.body(request, false), limit)
            .await
            .map_err(|failure| self.failure_error(failure))?;
        let read = http::read_capped(response, http::MAX_ANSWER_BYTES);
        let body = match tokio::time::timeout(limit, read).await {
            Ok(Ok(body)) => body,
            Ok(Err(http::ReadError::TooLarge(max))) => {
                return Err(http::too_large(shared, max));
            }
            Ok(Err(http::ReadError::Network(error))) => {
                tracing::debug!(
                    provider = %shared.name,
                    error = %shared.redact(&http::describe(&error)),
                    "reading a non-streaming answer failed"
                );
                return Err(ModelError::StreamCut {
                    provider: shared.name.clone(),
                    how: "broke the connection",
                });
            }
            Err(_) => {
                return Err(ModelError::Timeout {
                    provider: shared.name.clone(),
                    phase: "reading a non-streaming answer",
                    waited: limit,
                });
            }
        };
        let events = wire::completion_events(&body).map_err(|error| match error {
            wire::ChunkError::Malformed(message) => ModelError::MalformedStream {
                provider: shared.name.clone(),
                message,
            },
            wire::ChunkError::Provider(message) => ModelError::Provider(shared.redact(&message)),
        })?;
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }

    fn failure_error(&self, failure: http::Failure) -> ModelError {
        match failure {
            http::Failure::Refused { status, body } => {
                http::refusal_error(&self.shared, &self.model, status, &body)
            }
            http::Failure::Error(error) => error,
        }
    }
}

#[async_trait]
impl ChatModel for OpenAiModel {
    fn provider(&self) -> &str {
        &self.shared.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ModelError> {
        let shared = &self.shared;
        let has_tools = !request.tools.is_empty();
        if has_tools && shared.prefers_non_streaming(&self.model) {
            return self.non_streaming(&request).await;
        }
        let sent = http::send(
            shared,
            self.body(&request, true),
            shared.options.request_timeout,
        )
        .await;
        match sent {
            Ok(response) => Ok(sse::chat_stream(
                response,
                shared.name.clone(),
                shared.options.idle_timeout,
                shared.redactor.clone(),
            )),
            Err(http::Failure::Refused { status, body })
                if has_tools
                    && status.is_client_error()
                    && wire::refuses_stream_with_tools(&body) =>
            {
                tracing::info!(
                    provider = %shared.name,
                    model = %self.model,
                    "server refuses to stream with tools; using non-streaming requests for this model"
                );
                shared.remember_non_streaming(&self.model);
                self.non_streaming(&request).await
            }
            Err(failure) => Err(self.failure_error(failure)),
        }
    }
}
