//! The `ChatModel` seam: what the runtime calls to talk to any model.

use async_trait::async_trait;
use futures::stream::BoxStream;

use crate::{AssistantTurn, ChatEvent, ChatRequest, ModelError, TurnAccumulator};

/// A streamed answer. It ends after the last event, or with an error item after which no more
/// items come. **Dropping it cancels the call**: the HTTP request is aborted and no task is
/// left behind, so the runtime cancels a run by dropping the stream.
pub type ChatStream = BoxStream<'static, Result<ChatEvent, ModelError>>;

/// A chat model bound to a provider and a model name, as returned by
/// [`crate::ModelRegistry::model_for`]. Object-safe so the runtime can hold `Arc<dyn ChatModel>`.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The provider name, e.g. `openai` or `scripted`, for logs and usage accounting.
    fn provider(&self) -> &str;

    /// The model name as the provider knows it.
    fn model(&self) -> &str;

    /// Starts a call. Failures before the first event (bad key, unknown model, retries
    /// exhausted) come back here; later ones as an error item of the stream.
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ModelError>;

    /// Runs a call to the end and returns the whole turn, for callers that need no deltas.
    async fn complete(&self, request: ChatRequest) -> Result<AssistantTurn, ModelError> {
        let stream = self.stream(request).await?;
        TurnAccumulator::for_provider(self.provider())
            .collect(stream)
            .await
    }
}
