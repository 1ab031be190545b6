//! Agents: a shared resource (see [`crate::shares`]), with the one default agent.

use async_trait::async_trait;

use ars_domain::{Agent, AgentDraft, AgentId, UserId};

use crate::{Deleted, Result};

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// Which agents a list returns.
#[derive(Clone, Copy, Debug)]
pub struct AgentFilter {
    /// Only agents this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every agent (admins).
    pub visible_to: Option<UserId>,
    /// Which kinds of agent.
    pub kinds: AgentKinds,
}

/// The kinds of agent a list returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKinds {
    /// Agents people chat with: no subagents.
    Chat,
    /// Subagents only: what a run may delegate to.
    Subagents,
    /// Both.
    All,
}

impl AgentKinds {
    /// The agents people chat with, and the subagents too when `include_subagents`.
    pub fn chat_or_all(include_subagents: bool) -> Self {
        if include_subagents {
            Self::All
        } else {
            Self::Chat
        }
    }
}

/// Agents: the row and its shares change together.
#[async_trait]
pub trait AgentStore: Send + Sync {
    /// Creates an agent owned by `owner` (`None`: system-owned). A taken slug is
    /// `StoreError::Conflict { field: "slug" }`; `draft.is_default` clears the previous default
    /// in the same transaction.
    async fn create_agent(&self, draft: &AgentDraft, owner: Option<UserId>) -> Result<Agent>;
    /// The agent with this id, shares included; no visibility check (callers apply
    /// `ars_domain::Caller`).
    async fn agent(&self, id: AgentId) -> Result<Option<Agent>>;
    /// [`AgentStore::agent`] and the model settings' version
    /// ([`crate::ProviderStore::model_settings_version`]) as one statement read them: what a
    /// run starts from, in one round trip where there were two. `None` when there is no such
    /// agent.
    async fn agent_for_run(&self, id: AgentId) -> Result<Option<(Agent, i64)>>;
    /// The agent with this slug (`subagent_slug` lookups), shares included.
    async fn agent_by_slug(&self, slug: &str) -> Result<Option<Agent>>;
    /// Agents matching `filter`: built-in rows first, then by name (byte order), then id.
    async fn list_agents(&self, filter: AgentFilter) -> Result<Vec<Agent>>;
    /// Replaces every writable field (shares included) and sets `updated_at`; `owner_id`,
    /// `is_builtin` and `created_at` never change. `NotFound` when the row is gone; a taken slug
    /// is `Conflict { field: "slug" }`; `draft.is_default` clears the previous default. One
    /// transaction: on any error nothing changes.
    async fn update_agent(&self, id: AgentId, draft: &AgentDraft) -> Result<Agent>;
    /// Deletes an agent with its shares and every thread that talks to it (so their messages,
    /// runs and child threads too, whoever owns them); [`Deleted::NotFound`] when there was no
    /// such row. Callers check `ars_domain::Caller::can_delete` first (built-in rows are never
    /// deleted).
    async fn delete_agent(&self, id: AgentId) -> Result<Deleted>;
    /// Makes `id` the one default agent, clearing any other, in one transaction. `NotFound`
    /// for a missing row; `Invalid` for a subagent (the schema refuses it).
    async fn set_default_agent(&self, id: AgentId) -> Result<Agent>;
    /// The default agent, if one is set.
    async fn default_agent(&self) -> Result<Option<Agent>>;
}
