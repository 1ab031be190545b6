//! An agent on the wire. Its fields mirror the stored row today; the view keeps the wire shape
//! where it is when the row changes.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{Agent, AgentConfig, AgentId, Backend, ShareConfig, UserId};

/// An agent row as stored and as served.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[schema(as = Agent)]
pub struct AgentView {
    pub id: AgentId,
    pub slug: String,
    pub name: String,
    pub description: String,
    pub backend_id: Backend,
    pub is_subagent: bool,
    pub config_json: AgentConfig,
    pub share_config: ShareConfig,
    /// `None` for system-owned rows (the built-in `general-purpose` subagent).
    pub owner_id: Option<UserId>,
    pub is_default: bool,
    /// Built-in rows are created by migrations: only admins edit them and nobody deletes them.
    pub is_builtin: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Agent> for AgentView {
    fn from(agent: Agent) -> Self {
        Self {
            id: agent.id,
            slug: agent.slug,
            name: agent.name,
            description: agent.description,
            backend_id: agent.backend_id,
            is_subagent: agent.is_subagent,
            config_json: agent.config_json,
            share_config: agent.share_config,
            owner_id: agent.owner_id,
            is_default: agent.is_default,
            is_builtin: agent.is_builtin,
            created_at: agent.created_at,
            updated_at: agent.updated_at,
        }
    }
}
