//! The queries sqlx runs, counted from its `sqlx::query` events by their text (whitespace
//! folded): on SQLite each is one round trip to a connection's worker thread. Shared by the
//! subagents bench (`ARS_BENCH_STATEMENTS=1`) and the round-trip budget test.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

/// Every query counted so far, by text; cheap to clone.
#[derive(Clone, Default)]
pub struct Queries(Arc<Mutex<BTreeMap<String, u64>>>);

impl Queries {
    /// Counts from now on, as this process's one subscriber (sqlx describes each statement it
    /// logs, so counting costs time: only when asked).
    pub fn install() -> Self {
        let queries = Self::default();
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target("sqlx::query", tracing::Level::DEBUG);
        let subscriber = tracing_subscriber::registry().with(queries.clone().with_filter(filter));
        tracing::subscriber::set_global_default(subscriber)
            .expect("no other subscriber in this process");
        queries
    }

    /// The counts so far, by text.
    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.0.lock().map(|q| q.clone()).unwrap_or_default()
    }

    /// Forgets what was counted.
    pub fn clear(&self) {
        if let Ok(mut queries) = self.0.lock() {
            queries.clear();
        }
    }
}

/// A query's text, from the event sqlx logs as it runs one.
#[derive(Default)]
struct Text(String);

impl tracing::field::Visit for Text {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "db.statement" {
            self.0 = value.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "db.statement" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Queries {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut text = Text::default();
        event.record(&mut text);
        if !text.0.is_empty()
            && let Ok(mut queries) = self.0.lock()
        {
            *queries.entry(text.0).or_default() += 1;
        }
    }
}
