//! What the runtime measures: runs (started, ended, active, pending, how long), model requests,
//! tool calls, subagent runs and run leases, recorded through the `metrics` facade.
//!
//! The names are stated here once, each beside the one function that records it; the server
//! assembly installs the recorder that exports them (`GET /metrics`) and calls [`describe`].
//! Without a recorder every call is a no-op, so tests and embedders pay nothing.
//!
//! **Invariant:** the gauges are moved only by [`InGauge`] guards, which give back on drop
//! what they took, so a run that is cancelled, times out or panics never leaves them high.

use std::time::Duration;

use metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};

use ars_domain::Run;
use ars_models::ChatModel;

pub const RUNS_STARTED: &str = "ars_runs_started_total";
pub const RUNS_ENDED: &str = "ars_runs_ended_total";
pub const RUNS_ACTIVE: &str = "ars_runs_active";
pub const RUNS_PENDING: &str = "ars_runs_pending";
pub const RUN_DURATION: &str = "ars_run_duration_seconds";
pub const MODEL_REQUEST_DURATION: &str = "ars_model_request_duration_seconds";
pub const MODEL_REQUEST_ERRORS: &str = "ars_model_request_errors_total";
pub const TOOL_CALL_DURATION: &str = "ars_tool_call_duration_seconds";
pub const TOOL_CALL_ERRORS: &str = "ars_tool_call_errors_total";
pub const SUBAGENT_RUNS: &str = "ars_subagent_runs_total";
pub const LEASE_RENEWALS: &str = "ars_lease_renewals_total";
pub const RUNS_REAPED: &str = "ars_runs_reaped_total";
pub const STEER_MESSAGES: &str = "ars_steer_messages_total";

/// The label of tool calls naming no tool of the run: the model may invent any name, and a
/// label per invented name would grow without bound.
const UNKNOWN_TOOL: &str = "unknown";

/// Gives the installed recorder each metric's help text and unit, and exports the metrics
/// without labels from zero on, so a scraper sees them before the first run.
pub fn describe() {
    for name in [RUNS_STARTED, LEASE_RENEWALS, RUNS_REAPED, STEER_MESSAGES] {
        counter!(name).increment(0);
    }
    for name in [RUNS_ACTIVE, RUNS_PENDING] {
        gauge!(name).increment(0.0);
    }
    describe_counter!(RUNS_STARTED, "Runs created on this instance.");
    describe_counter!(
        STEER_MESSAGES,
        "Messages sent into active runs through this instance."
    );
    describe_counter!(
        RUNS_ENDED,
        "Runs whose end this instance wrote, by terminal status."
    );
    describe_gauge!(RUNS_ACTIVE, "Runs executing on this instance now.");
    describe_gauge!(
        RUNS_PENDING,
        "Runs of this instance waiting for an execution slot now."
    );
    describe_histogram!(
        RUN_DURATION,
        Unit::Seconds,
        "From a run's creation to its end, for the runs this instance executed, by status."
    );
    describe_histogram!(
        MODEL_REQUEST_DURATION,
        Unit::Seconds,
        "One model request, from asking to the end of its streamed answer, by provider and model."
    );
    describe_counter!(
        MODEL_REQUEST_ERRORS,
        "Model requests that failed (each retried attempt counts), by provider and model."
    );
    describe_histogram!(TOOL_CALL_DURATION, Unit::Seconds, "One tool call, by tool.");
    describe_counter!(
        TOOL_CALL_ERRORS,
        "Tool calls that answered an error, by tool."
    );
    describe_counter!(SUBAGENT_RUNS, "Subagent runs started, by subagent slug.");
    describe_counter!(
        LEASE_RENEWALS,
        "Run leases renewed by this instance's heartbeat (one per run per beat)."
    );
    describe_counter!(
        RUNS_REAPED,
        "Runs ended `interrupted` because their executor was gone: by start-up recovery or by \
         the reaper of expired leases."
    );
}

/// Holds one unit of a gauge while it lives.
#[must_use = "the gauge goes back down when the guard is dropped"]
pub(crate) struct InGauge(&'static str);

impl InGauge {
    pub(crate) fn enter(name: &'static str) -> Self {
        gauge!(name).increment(1.0);
        Self(name)
    }
}

impl Drop for InGauge {
    fn drop(&mut self) {
        gauge!(self.0).decrement(1.0);
    }
}

pub(crate) fn run_started() {
    counter!(RUNS_STARTED).increment(1);
}

/// A run this instance created and executed ended here: counted by status, its duration
/// recorded.
pub(crate) fn run_ended(run: &Run) {
    foreign_run_ended(run);
    let end = run.finished_at.unwrap_or_else(ars_domain::time::now);
    let seconds = (end - run.created_at).num_milliseconds().max(0) as f64 / 1000.0;
    histogram!(RUN_DURATION, "status" => run.status.as_str()).record(seconds);
}

/// This instance ended a run it was not executing (reaped, or cancelled in the store): counted
/// by status, but no duration, which would include time the run spent on another instance or
/// a dead one.
pub(crate) fn foreign_run_ended(run: &Run) {
    counter!(RUNS_ENDED, "status" => run.status.as_str()).increment(1);
}

/// Runs ended as cut off (recovery, the reaper); each is counted as ended too.
pub(crate) fn runs_reaped(count: usize) {
    counter!(RUNS_REAPED).increment(count as u64);
}

/// One model request (one attempt of a model step) and how it ended.
pub(crate) fn model_request<T, E>(model: &dyn ChatModel, took: Duration, answer: &Result<T, E>) {
    let labels = [
        ("provider", model.provider().to_string()),
        ("model", model.model().to_string()),
    ];
    histogram!(MODEL_REQUEST_DURATION, &labels).record(took.as_secs_f64());
    if answer.is_err() {
        counter!(MODEL_REQUEST_ERRORS, &labels).increment(1);
    }
}

/// One tool call and how it ended; `tool` is `None` when the run has no tool of the name
/// called.
pub(crate) fn tool_call<T, E>(tool: Option<&str>, took: Duration, result: &Result<T, E>) {
    let tool = tool.unwrap_or(UNKNOWN_TOOL).to_string();
    histogram!(TOOL_CALL_DURATION, "tool" => tool.clone()).record(took.as_secs_f64());
    if result.is_err() {
        counter!(TOOL_CALL_ERRORS, "tool" => tool).increment(1);
    }
}

pub(crate) fn subagent_run_started(slug: &str) {
    counter!(SUBAGENT_RUNS, "slug" => slug.to_string()).increment(1);
}

pub(crate) fn steer_message() {
    counter!(STEER_MESSAGES).increment(1);
}

pub(crate) fn leases_renewed(count: usize) {
    counter!(LEASE_RENEWALS).increment(count as u64);
}
