//! Row shapes as both databases return them, and their conversion into domain types.
//!
//! The `FromRow` derives are generic over the database, so one struct decodes a SQLite row and a
//! PostgreSQL row alike. Text columns (ids, roles, enums) are parsed here; anything that does
//! not parse is [`StoreError::Corrupt`], never a panic.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{
    Agent, AgentConfig, AgentId, ApiToken, Backend, Delivery, Message, MessageId, MessageRole,
    Role, Run, RunId, RunStatus, ShareConfig, Thread, ThreadId, TokenId, ToolCallRecord, Usage,
    User, UserId, Visibility,
};

use crate::{Result, StoreError};

/// The `agent_shares.role` of a `share_config.user_ids` entry.
pub(crate) const SHARE_USER: &str = "user";
/// The `agent_shares.role` of a `share_config.manager_ids` entry.
pub(crate) const SHARE_MANAGER: &str = "manager";

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: String,
    username: String,
    role: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl UserRow {
    pub(crate) fn into_user(self) -> Result<User> {
        Ok(User {
            id: parse_user_id(&self.id)?,
            username: self.username,
            role: Role::parse(&self.role).ok_or_else(|| corrupt("users.role", &self.role))?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A user with the password hash, for login.
#[derive(sqlx::FromRow)]
pub(crate) struct CredentialsRow {
    #[sqlx(flatten)]
    pub(crate) user: UserRow,
    pub(crate) password_hash: String,
}

/// A token's owner and the token's id.
#[derive(sqlx::FromRow)]
pub(crate) struct TokenUserRow {
    #[sqlx(flatten)]
    pub(crate) user: UserRow,
    pub(crate) token_id: String,
}

#[derive(sqlx::FromRow)]
pub(crate) struct TokenRow {
    id: String,
    user_id: String,
    name: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    pub(crate) fn into_token(self) -> Result<ApiToken> {
        Ok(ApiToken {
            id: parse_token_id(&self.id)?,
            user_id: parse_user_id(&self.user_id)?,
            name: self.name,
            created_at: self.created_at,
            expires_at: self.expires_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct AgentRow {
    id: String,
    slug: String,
    name: String,
    description: String,
    backend_id: String,
    is_subagent: bool,
    config_json: Json<AgentConfig>,
    visibility: String,
    owner_id: Option<String>,
    is_default: bool,
    is_builtin: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct ShareRow {
    agent_id: String,
    user_id: String,
    role: String,
}

impl AgentRow {
    /// The stored id text, to look up this agent's shares.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The agent, with `shares` being exactly this agent's share rows (in any order).
    pub(crate) fn into_agent(self, shares: Vec<ShareRow>) -> Result<Agent> {
        let mut share_config = ShareConfig {
            visibility: Visibility::parse(&self.visibility)
                .ok_or_else(|| corrupt("agents.visibility", &self.visibility))?,
            user_ids: Vec::new(),
            manager_ids: Vec::new(),
        };
        for share in shares {
            let user = parse_user_id(&share.user_id)?;
            match share.role.as_str() {
                SHARE_USER => share_config.user_ids.push(user),
                SHARE_MANAGER => share_config.manager_ids.push(user),
                other => return Err(corrupt("agent_shares.role", other)),
            }
        }
        Ok(Agent {
            id: parse_agent_id(&self.id)?,
            slug: self.slug,
            name: self.name,
            description: self.description,
            backend_id: Backend::parse(&self.backend_id)
                .ok_or_else(|| corrupt("agents.backend_id", &self.backend_id))?,
            is_subagent: self.is_subagent,
            config_json: self.config_json.0,
            share_config: share_config.normalized(),
            owner_id: self.owner_id.as_deref().map(parse_user_id).transpose()?,
            is_default: self.is_default,
            is_builtin: self.is_builtin,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Joins agent rows with the share rows of all of them, keeping the agents' order.
pub(crate) fn assemble_agents(rows: Vec<AgentRow>, shares: Vec<ShareRow>) -> Result<Vec<Agent>> {
    let mut by_agent: HashMap<String, Vec<ShareRow>> = HashMap::new();
    for share in shares {
        by_agent
            .entry(share.agent_id.clone())
            .or_default()
            .push(share);
    }
    rows.into_iter()
        .map(|row| {
            let shares = by_agent.remove(&row.id).unwrap_or_default();
            row.into_agent(shares)
        })
        .collect()
}

/// The share rows to write for `share`: one per listed user and role, without duplicates.
pub(crate) fn share_rows(share: &ShareConfig) -> Vec<(UserId, &'static str)> {
    let share = share.clone().normalized();
    let users = share.user_ids.into_iter().map(|id| (id, SHARE_USER));
    let managers = share.manager_ids.into_iter().map(|id| (id, SHARE_MANAGER));
    users.chain(managers).collect()
}

#[derive(sqlx::FromRow)]
pub(crate) struct ThreadRow {
    id: String,
    user_id: String,
    agent_id: String,
    title: String,
    parent_thread_id: Option<String>,
    subagent_slug: Option<String>,
    runtime_scope_id: String,
    workdir_path: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ThreadRow {
    pub(crate) fn into_thread(self) -> Result<Thread> {
        Ok(Thread {
            id: parse_thread_id(&self.id)?,
            user_id: parse_user_id(&self.user_id)?,
            agent_id: parse_agent_id(&self.agent_id)?,
            title: self.title,
            parent_thread_id: self
                .parent_thread_id
                .as_deref()
                .map(parse_thread_id)
                .transpose()?,
            subagent_slug: self.subagent_slug,
            runtime_scope_id: self.runtime_scope_id,
            workdir_path: self.workdir_path,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct MessageRow {
    id: String,
    thread_id: String,
    run_id: Option<String>,
    seq: i64,
    role: String,
    content: String,
    tool_calls: Json<Vec<ToolCallRecord>>,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    is_error: bool,
    created_at: DateTime<Utc>,
}

impl MessageRow {
    pub(crate) fn into_message(self) -> Result<Message> {
        Ok(Message {
            id: MessageId::parse(&self.id).ok_or_else(|| corrupt("message id", &self.id))?,
            thread_id: parse_thread_id(&self.thread_id)?,
            run_id: self.run_id.as_deref().map(parse_run_id).transpose()?,
            seq: self.seq,
            role: MessageRole::parse(&self.role)
                .ok_or_else(|| corrupt("messages.role", &self.role))?,
            content: self.content,
            tool_calls: self.tool_calls.0,
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            is_error: self.is_error,
            created_at: self.created_at,
        })
    }
}

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
            usage: Usage {
                prompt_tokens: token_count("runs.prompt_tokens", self.prompt_tokens)?,
                completion_tokens: token_count("runs.completion_tokens", self.completion_tokens)?,
            },
            parent_run_id: self
                .parent_run_id
                .as_deref()
                .map(parse_run_id)
                .transpose()?,
            parent_tool_call_id: self.parent_tool_call_id,
            delivery: self
                .delivery
                .as_deref()
                .map(|d| Delivery::parse(d).ok_or_else(|| corrupt("runs.delivery", d)))
                .transpose()?,
            created_at: self.created_at,
            started_at: self.started_at,
            finished_at: self.finished_at,
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

pub(crate) fn parse_run_id(text: &str) -> Result<RunId> {
    RunId::parse(text).ok_or_else(|| corrupt("run id", text))
}

fn parse_thread_id(text: &str) -> Result<ThreadId> {
    ThreadId::parse(text).ok_or_else(|| corrupt("thread id", text))
}

pub(crate) fn parse_user_id(text: &str) -> Result<UserId> {
    UserId::parse(text).ok_or_else(|| corrupt("user id", text))
}

fn parse_agent_id(text: &str) -> Result<AgentId> {
    AgentId::parse(text).ok_or_else(|| corrupt("agent id", text))
}

pub(crate) fn parse_token_id(text: &str) -> Result<TokenId> {
    TokenId::parse(text).ok_or_else(|| corrupt("token id", text))
}

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("unexpected {what} `{value}`"))
}
