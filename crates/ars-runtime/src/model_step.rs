//! The model step of the loop: one streamed answer, asked again from the start when the
//! stream breaks before the turn is committed.
//!
//! The retry lives here, not in the provider, because this is where the partial answer is
//! held: an attempt's accumulator is simply dropped, so a broken answer is never committed and
//! the committed message is always the one whole answer. The provider retries only what fails
//! before any of the answer is seen (429, 5xx, connect).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use tracing::Instrument;

use ars_domain::{MessageRole, RunErrorCode, RunFailure, RunId};
use ars_events::EventKind;
use ars_models::{AssistantTurn, ChatEvent, ChatModel, ChatRequest, ModelError, TurnAccumulator};

use crate::emitter::Emitter;
use crate::{metrics, spans};

/// What a model step needs of its run.
pub(crate) struct Step<'a> {
    pub model: &'a Arc<dyn ChatModel>,
    /// Where the answer's deltas (and a retry's notice) are published.
    pub emitter: &'a Emitter,
    pub retry: &'a StreamRetry,
    pub run_id: RunId,
}

/// How a model step retries a stream that broke mid-answer (see
/// [`ModelError::is_stream_fault`]). Other errors end the run at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRetry {
    /// Attempts in all, the first included; 1 turns retrying off.
    pub max_attempts: u32,
    /// The wait before the second attempt; it doubles for each later one.
    pub backoff_base: Duration,
    /// No single wait exceeds this.
    pub backoff_max: Duration,
}

impl Default for StreamRetry {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            backoff_base: Duration::from_millis(200),
            backoff_max: Duration::from_secs(2),
        }
    }
}

impl StreamRetry {
    /// The wait after failed attempt number `attempt` (1-based). No jitter: each run retries
    /// its own stream, so runs that failed together have no shared server to stampede in step
    /// beyond what the provider's request-time backoff already spreads.
    fn delay(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.backoff_base
            .saturating_mul(factor)
            .min(self.backoff_max)
    }
}

/// The stable code of a run that a model error ended.
pub fn error_code(error: &ModelError) -> RunErrorCode {
    match error {
        ModelError::Auth { .. } => RunErrorCode::ModelBadKey,
        ModelError::UnknownModel { .. } => RunErrorCode::ModelUnknownModel,
        ModelError::Connect { .. } | ModelError::Timeout { .. } => RunErrorCode::ModelUnreachable,
        ModelError::UnknownProvider { .. } => RunErrorCode::UnknownProvider,
        ModelError::Config(_) => RunErrorCode::ModelConfigInvalid,
        ModelError::Unavailable { .. }
        | ModelError::StreamCut { .. }
        | ModelError::Idle { .. }
        | ModelError::MalformedStream { .. }
        | ModelError::Malformed { .. }
        | ModelError::Rejected { .. }
        | ModelError::Provider(_) => RunErrorCode::ModelError,
    }
}

/// A model error as the failure of a run: its words and its code.
pub fn failure(error: &ModelError) -> RunFailure {
    RunFailure::new(error_code(error), error.to_string())
}

/// Streams one model answer, forwarding its text deltas, and returns the whole turn. Each
/// attempt starts with a fresh `MessageStarted`, so listeners restart the streaming message;
/// a retry is announced by an `Error` event first. The error is fit for the run's end.
pub(crate) async fn model_turn(
    spec: &Step<'_>,
    request: &ChatRequest,
) -> Result<AssistantTurn, RunFailure> {
    let retry = spec.retry;
    let max_attempts = retry.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        spec.emitter
            .emit(EventKind::MessageStarted {
                role: MessageRole::Assistant,
            })
            .await;
        let error = match attempt_once(spec, request, attempt).await {
            Ok(turn) => return Ok(turn),
            Err(error) => error,
        };
        if !error.is_stream_fault() {
            return Err(failure(&error));
        }
        if attempt >= max_attempts {
            let mut failure = failure(&error);
            if attempt > 1 {
                failure.message = format!("{error} (after {attempt} attempts)");
            }
            return Err(failure);
        }
        tracing::warn!(
            run_id = %spec.run_id,
            attempt,
            %error,
            "the model stream broke; asking again"
        );
        tokio::time::sleep(retry.delay(attempt)).await;
        attempt += 1;
        spec.emitter
            .emit(EventKind::Error {
                message: format!(
                    "the model stream broke; retrying (attempt {attempt} of {max_attempts})"
                ),
            })
            .await;
    }
}

/// One attempt in its `model_call` span, which ends with it (before any back-off).
async fn attempt_once(
    spec: &Step<'_>,
    request: &ChatRequest,
    attempt: u32,
) -> Result<AssistantTurn, ModelError> {
    let span = spans::model_call(spec.model.provider(), spec.model.model(), attempt);
    let asked = Instant::now();
    let result = stream_once(spec, request.clone())
        .instrument(span.clone())
        .await;
    metrics::model_request(spec.model.as_ref(), asked.elapsed(), &result);
    spans::record_model_result(&span, &result);
    result
}

/// One attempt: the stream folded into a turn, its text deltas forwarded as they come.
async fn stream_once(spec: &Step<'_>, request: ChatRequest) -> Result<AssistantTurn, ModelError> {
    let mut stream = spec.model.stream(request).await?;
    let mut acc = TurnAccumulator::for_provider(spec.model.provider());
    while let Some(event) = stream.next().await {
        let event = event?;
        if let ChatEvent::TextDelta { text } = &event {
            spec.emitter
                .emit(EventKind::MessageDelta { text: text.clone() })
                .await;
        }
        acc.push(&event);
    }
    acc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_the_base_and_is_capped() {
        let retry = StreamRetry::default();
        let waits: Vec<_> = (1..=6).map(|a| retry.delay(a).as_millis()).collect();
        assert_eq!(waits, [200, 400, 800, 1600, 2000, 2000]);
    }
}
