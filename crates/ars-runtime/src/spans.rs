//! The runtime's tracing spans, named and shaped in one place: `run`, `model_call` and
//! `tool_call`. They are plain `tracing` spans at info level; the binary may export them
//! (OpenTelemetry), the runtime knows nothing of that. Field names follow the logs'
//! (`run_id`, `thread_id`); `otel.status_description` marks a failure for exporters that
//! read it and is an ordinary field to everything else.
//!
//! Counts are recorded as `i64`, the integer type exporters keep as a number (others may be
//! turned into text).
//!
//! Callers instrument futures with these spans (`Instrument`); no entered guard is held
//! across an `.await`.

use tracing::Span;
use tracing::field::{Empty, display};

use ars_domain::{Agent, Delivery, Run, RunStatus};
use ars_models::{AssistantTurn, ModelError};

/// A run's span, from its start to its recorded end. A run its starter's tool call waits for
/// ([`Delivery::Wait`]) is a child of the span current at its start, which is that tool call's.
/// Any other run (a background child, a run started over HTTP) outlives the span that started
/// it, so it is a trace of its own with a link (`follows_from`) to that span.
pub(crate) fn run(run: &Run) -> Span {
    let current = Span::current();
    let waited = run.delivery() == Some(Delivery::Wait);
    let parent_span = if waited { current.id() } else { None };
    let span = tracing::info_span!(
        parent: parent_span,
        "run",
        run_id = %run.id,
        thread_id = %run.thread_id,
        agent_id = %run.agent_id,
        agent_slug = Empty,
        parent_run_id = run.parent_run_id().map(display),
        parent_tool_call_id = run.lineage.as_ref().and_then(|l| l.parent_tool_call_id.as_deref()),
        delivery = run.delivery().map(|d| d.as_str()),
        status = Empty,
        otel.status_description = Empty,
    );
    if !waited {
        span.follows_from(&current);
    }
    span
}

/// Names the run's agent once it is loaded.
pub(crate) fn record_agent(span: &Span, agent: &Agent) {
    span.record("agent_slug", agent.slug.as_str());
}

/// Records how the run ended; an error or a timeout marks the span failed.
pub(crate) fn record_run_end(span: &Span, run: &Run) {
    span.record("status", run.status.as_str());
    if matches!(run.status, RunStatus::Error | RunStatus::Timeout) {
        let message = run.error.as_deref().unwrap_or(run.status.as_str());
        span.record("otel.status_description", message);
    }
}

/// One attempt at a model answer (a broken stream asked again is a second `model_call`).
pub(crate) fn model_call(provider: &str, model: &str, attempt: u32) -> Span {
    tracing::info_span!(
        "model_call",
        provider,
        model,
        attempt = i64::from(attempt),
        tokens_in = Empty,
        tokens_out = Empty,
        error = Empty,
        otel.status_description = Empty,
    )
}

/// Records the tokens of an answer, or its error.
pub(crate) fn record_model_result(span: &Span, result: &Result<AssistantTurn, ModelError>) {
    match result {
        Ok(turn) => {
            if let Some(usage) = turn.usage {
                span.record("tokens_in", count(usage.prompt_tokens));
                span.record("tokens_out", count(usage.completion_tokens));
            }
        }
        Err(e) => {
            span.record("error", display(e));
            span.record("otel.status_description", display(e));
        }
    }
}

/// One tool call, from its start event to its result.
pub(crate) fn tool_call(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        "tool_call",
        tool,
        call_id,
        is_error = Empty,
        otel.status_description = Empty,
    )
}

/// Records whether the call failed, and the message the model reads if it did.
pub(crate) fn record_tool_result(span: &Span, error: Option<&str>) {
    span.record("is_error", error.is_some());
    if let Some(message) = error {
        span.record("otel.status_description", message);
    }
}

/// A token count as a span field (saturating: no model call spends 2^63 tokens).
fn count(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}
