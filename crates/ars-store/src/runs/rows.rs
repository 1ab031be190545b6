//! Rows of `runs`, and their conversion from and into domain types.

use chrono::{DateTime, Utc};

use ars_domain::{Delivery, Run, RunErrorCode, RunLineage, RunStatus, Usage};

use crate::rows::{corrupt, parse_agent_id, parse_run_id, parse_thread_id, parse_user_id};
use crate::{Result, StoreError};

#[derive(sqlx::FromRow)]
pub(crate) struct RunRow {
    id: String,
    thread_id: String,
    agent_id: String,
    user_id: String,
    status: String,
    input: String,
    output: Option<String>,
    error: Option<String>,
    prompt_tokens: i64,
    completion_tokens: i64,
    parent_run_id: Option<String>,
    parent_tool_call_id: Option<String>,
    created_at: DateTime<Utc>,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    delivery: Option<String>,
    error_code: Option<String>,
    waiting_json: Option<String>,
}

impl RunRow {
    pub(crate) fn into_run(self) -> Result<Run> {
        Ok(Run {
            id: parse_run_id(&self.id)?,
            thread_id: parse_thread_id(&self.thread_id)?,
            agent_id: parse_agent_id(&self.agent_id)?,
            user_id: parse_user_id(&self.user_id)?,
            status: RunStatus::parse(&self.status)
                .ok_or_else(|| corrupt("runs.status", &self.status))?,
            input: self.input,
            output: self.output,
            error: self.error,
            error_code: self
                .error_code
                .as_deref()
                .map(|c| RunErrorCode::parse(c).ok_or_else(|| corrupt("runs.error_code", c)))
                .transpose()?,
            usage: Usage {
                prompt_tokens: token_count("runs.prompt_tokens", self.prompt_tokens)?,
                completion_tokens: token_count("runs.completion_tokens", self.completion_tokens)?,
            },
            // A run without a parent run has no lineage (the rest of it is never written
            // without one).
            lineage: match self.parent_run_id.as_deref() {
                None => None,
                Some(parent) => Some(RunLineage {
                    parent_run_id: parse_run_id(parent)?,
                    parent_tool_call_id: self.parent_tool_call_id,
                    delivery: self
                        .delivery
                        .as_deref()
                        .map(|d| Delivery::parse(d).ok_or_else(|| corrupt("runs.delivery", d)))
                        .transpose()?,
                }),
            },
            created_at: self.created_at,
            started_at: self.started_at,
            finished_at: self.finished_at,
            pending: match self.waiting_json.as_deref() {
                None => Vec::new(),
                Some(json) => decode_items(json)?,
            },
        })
    }
}

/// A token count as the databases store it (`BIGINT`); larger counts are refused, not wrapped.
pub(crate) fn stored_tokens(count: u64) -> Result<i64> {
    i64::try_from(count)
        .map_err(|_| StoreError::Invalid(format!("token count {count} is out of range")))
}

fn token_count(what: &str, stored: i64) -> Result<u64> {
    u64::try_from(stored).map_err(|_| corrupt(what, &stored.to_string()))
}

/// The ids a statement answered (`RETURNING id`), parsed.
pub(crate) fn parse_run_ids(ids: Vec<(String,)>) -> Result<Vec<ars_domain::RunId>> {
    ids.iter().map(|(id,)| parse_run_id(id)).collect()
}

/// What a waiting run waits on, as stored.
pub(crate) fn decode_waiting(json: &str) -> Result<ars_domain::Waiting> {
    serde_json::from_str(json).map_err(|_| corrupt("runs.waiting_json", "(unreadable)"))
}

/// Only the pending items of what a waiting run waits on (the schemas are skipped unread).
fn decode_items(json: &str) -> Result<Vec<ars_domain::PendingItem>> {
    #[derive(serde::Deserialize)]
    struct Items {
        items: Vec<ars_domain::PendingItem>,
    }
    serde_json::from_str::<Items>(json)
        .map(|i| i.items)
        .map_err(|_| corrupt("runs.waiting_json", "(unreadable)"))
}
