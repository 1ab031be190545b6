//! Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM,
//! llama.cpp, LM Studio…): texts sent in batches, each batch retried like a chat request
//! (429, 5xx and connection failures, with back-off), the vectors answered in input order.

use std::time::Duration;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::json;

use super::{OpenAiProvider, http, wire};
use crate::ModelError;

/// Texts sent in one request at most.
pub const EMBEDDING_BATCH: usize = 64;

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiProvider {
    /// The embedding of each text by `model`, in the texts' order. Every vector of one call
    /// has the same length (a server answering otherwise is an error).
    pub async fn embed(
        &self,
        model: &str,
        texts: &[String],
        timeout: Duration,
    ) -> Result<Vec<Vec<f32>>, ModelError> {
        let shared = &self.shared;
        let url = format!("{}/embeddings", shared.base_url);
        let mut vectors: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        for batch in texts.chunks(EMBEDDING_BATCH) {
            let body = Bytes::from(json!({"model": model, "input": batch}).to_string());
            let response = match http::send_to(shared, &url, body, timeout).await {
                Ok(response) => response,
                Err(http::Failure::Error(e)) => return Err(e),
                Err(http::Failure::Refused { status, body }) => {
                    return Err(http::refusal_error(shared, model, status, &body));
                }
            };
            let text = match tokio::time::timeout(
                timeout,
                http::read_capped(response, http::MAX_ANSWER_BYTES),
            )
            .await
            {
                Ok(Ok(text)) => text,
                Ok(Err(http::ReadError::TooLarge(max))) => {
                    return Err(http::too_large(shared, max));
                }
                // Read as nothing: the parse below says it is not an embeddings list.
                Ok(Err(http::ReadError::Network(_))) | Err(_) => String::new(),
            };
            let answer: Answer = serde_json::from_str(&text).map_err(|_| {
                ModelError::Provider(format!(
                    "provider `{}` answered the embeddings request with something that is not \
                     an embeddings list: {}",
                    shared.name,
                    shared.redact(&wire::error_message(&text))
                ))
            })?;
            if answer.data.len() != batch.len() {
                return Err(ModelError::Provider(format!(
                    "provider `{}` answered {} embeddings for {} texts",
                    shared.name,
                    answer.data.len(),
                    batch.len()
                )));
            }
            let mut items: Vec<(usize, Vec<f32>)> = answer
                .data
                .into_iter()
                .enumerate()
                .map(|(position, item)| (item.index.unwrap_or(position), item.embedding))
                .collect();
            items.sort_by_key(|(index, _)| *index);
            vectors.extend(items.into_iter().map(|(_, v)| v));
        }
        if let Some(first) = vectors.first()
            && (first.is_empty() || vectors.iter().any(|v| v.len() != first.len()))
        {
            return Err(ModelError::Provider(format!(
                "provider `{}` answered embeddings of differing or empty lengths",
                shared.name
            )));
        }
        Ok(vectors)
    }
}
