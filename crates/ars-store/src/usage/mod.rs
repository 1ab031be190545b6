//! Usage: the tokens runs spent, rolled up by day, agent, user and model for the usage page.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{AgentId, UserId};

use crate::Result;

pub(crate) mod queries;
pub(crate) mod sql;

/// Which runs a usage read rolls up: created in `[from, to)`, of `user` (every user's when
/// `None`).
#[derive(Clone, Debug)]
pub struct UsageFilter {
    pub user: Option<UserId>,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// The runs of one day (UTC, `YYYY-MM-DD`), agent, user and model, added up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageRow {
    pub day: String,
    pub agent_id: AgentId,
    pub user_id: UserId,
    /// `provider/model`; `None` for runs that never reached a model.
    pub model: Option<String>,
    pub runs: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Reading usage.
#[async_trait]
pub trait UsageStore: Send + Sync {
    /// The runs `filter` selects, one row per day, agent, user and model, in that order. At
    /// most one row per combination, so the answer is bounded by days × agents × users ×
    /// models, never by the number of runs.
    async fn usage_rows(&self, filter: &UsageFilter) -> Result<Vec<UsageRow>>;
}
