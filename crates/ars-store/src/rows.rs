//! What every aggregate's rows share: ids and other text columns parsed into domain types.
//! Each aggregate decodes its own rows (`<aggregate>/rows.rs`); the `FromRow` derives there are
//! generic over the database, so one struct decodes a SQLite row and a PostgreSQL row alike.
//! Anything that does not parse is [`StoreError::Corrupt`], never a panic.

use ars_domain::{AgentId, RunId, ThreadId, TokenId, UserId};

use crate::{Result, StoreError};

pub(crate) fn parse_run_id(text: &str) -> Result<RunId> {
    RunId::parse(text).ok_or_else(|| corrupt("run id", text))
}

pub(crate) fn parse_thread_id(text: &str) -> Result<ThreadId> {
    ThreadId::parse(text).ok_or_else(|| corrupt("thread id", text))
}

pub(crate) fn parse_user_id(text: &str) -> Result<UserId> {
    UserId::parse(text).ok_or_else(|| corrupt("user id", text))
}

pub(crate) fn parse_agent_id(text: &str) -> Result<AgentId> {
    AgentId::parse(text).ok_or_else(|| corrupt("agent id", text))
}

pub(crate) fn parse_token_id(text: &str) -> Result<TokenId> {
    TokenId::parse(text).ok_or_else(|| corrupt("token id", text))
}

pub(crate) fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("unexpected {what} `{value}`"))
}
