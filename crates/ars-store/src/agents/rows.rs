//! Rows of `agents`, and their conversion into domain types.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{Agent, AgentConfig, Backend};

use crate::Result;
use crate::rows::{corrupt, parse_agent_id, parse_user_id};
use crate::shares::{ShareRow, SharedRow, share_config};

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

impl SharedRow for AgentRow {
    type Resource = Agent;

    fn id(&self) -> &str {
        &self.id
    }

    fn into_resource(self, shares: Vec<ShareRow>) -> Result<Agent> {
        let share_config = share_config("agents.visibility", &self.visibility, shares)?;
        Ok(Agent {
            id: parse_agent_id(&self.id)?,
            slug: self.slug,
            name: self.name,
            description: self.description,
            backend_id: Backend::parse(&self.backend_id)
                .ok_or_else(|| corrupt("agents.backend_id", &self.backend_id))?,
            is_subagent: self.is_subagent,
            config_json: self.config_json.0,
            share_config,
            owner_id: self.owner_id.as_deref().map(parse_user_id).transpose()?,
            is_default: self.is_default,
            is_builtin: self.is_builtin,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}
