//! The Prometheus recorder behind `GET /metrics`: built once per process, installed as the
//! `metrics` facade's global recorder (which every library crate records through), and kept
//! as a [`PrometheusHandle`] the API renders on each scrape. The exporter opens no listener of
//! its own; the API serves what it renders.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Histogram buckets (seconds) of the latencies: model requests, tool calls.
const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// Runs last from well under a second (a scripted answer) to their one-hour-ish time limits.
const RUN_BUCKETS: &[f64] = &[
    0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// A store write is a millisecond or so, unless it queues.
const STORE_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

/// How often histograms are compacted (the exporter leaves that to its owner without its own
/// listener).
const UPKEEP: Duration = Duration::from_secs(5);

/// The process's recorder, installed on first use (a second server in one process, as tests
/// of `ars chat` may start, shares it). Call inside a Tokio runtime: it starts the upkeep task.
pub fn handle() -> anyhow::Result<PrometheusHandle> {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let recorder = PrometheusBuilder::new()
        .set_buckets(LATENCY_BUCKETS)?
        .set_buckets_for_metric(
            Matcher::Full(ars_runtime::metrics::RUN_DURATION.into()),
            RUN_BUCKETS,
        )?
        .set_buckets_for_metric(
            Matcher::Full(ars_store::metrics::WRITE_DURATION.into()),
            STORE_BUCKETS,
        )?
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder)
        .context("another metrics recorder is already installed")?;
    ars_runtime::metrics::describe();
    ars_store::metrics::describe();
    ars_api::metrics::describe();
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(UPKEEP);
        loop {
            tick.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(HANDLE.get_or_init(|| handle).clone())
}

/// What the API calls to render a scrape.
pub fn render(handle: PrometheusHandle) -> ars_api::RenderMetrics {
    Arc::new(move || handle.render())
}
