//! Row shapes as both databases return them, and their conversion into domain types.
//!
//! The `FromRow` derives are generic over the database, so one struct decodes a SQLite row and a
//! PostgreSQL row alike. Text columns (ids, roles, enums) are parsed here; anything that does
//! not parse is [`StoreError::Corrupt`], never a panic.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{
    Agent, AgentConfig, AgentId, ApiToken, Backend, Role, ShareConfig, TokenId, User, UserId,
    Visibility,
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
