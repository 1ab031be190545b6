//! Agents and subagents: one kind of row, and the rules every write must keep.
//!
//! **Invariant:** `is_subagent` is true exactly when `backend == SubAgent`, a subagent is never
//! the default agent, and a subagent's `context.subagents` is empty. [`AgentInput::validate`] is
//! the one place those rules are checked; the stores repeat the first two as `CHECK` constraints.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{AgentContext, AgentId, Caller, UserId, ValidationError};

/// The execution backend of an agent row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum Backend {
    /// A normal, chat-usable agent.
    #[serde(rename = "DefaultBackend")]
    Default,
    /// A subagent: called only through the task tools of a normal agent.
    #[serde(rename = "SubAgentBackend")]
    SubAgent,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Default, Backend::SubAgent];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "DefaultBackend",
            Self::SubAgent => "SubAgentBackend",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.as_str() == text)
    }

    pub fn is_subagent(self) -> bool {
        self == Self::SubAgent
    }
}

/// Who can see an agent or skill besides its owner, managers and admins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// Only the owner, managers and admins.
    #[default]
    Private,
    /// Also the users listed in `user_ids`.
    Users,
    /// Every user.
    Public,
}

impl Visibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Private => "private",
            Self::Users => "users",
            Self::Public => "public",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Private, Self::Users, Self::Public]
            .into_iter()
            .find(|v| v.as_str() == text)
    }
}

/// Visibility and management rights: the same sharing model for every agent and skill.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShareConfig {
    #[serde(default)]
    pub visibility: Visibility,
    /// Users who may see and use the agent when `visibility` is `users`.
    #[serde(default)]
    pub user_ids: Vec<UserId>,
    /// Users who may manage (edit, delete) the agent, whatever its visibility.
    #[serde(default)]
    pub manager_ids: Vec<UserId>,
}

impl ShareConfig {
    /// Every user id the config names, for an existence check against the store.
    pub fn referenced_users(&self) -> impl Iterator<Item = UserId> + '_ {
        self.user_ids.iter().chain(&self.manager_ids).copied()
    }

    /// Sorted, de-duplicated lists, so equal configs compare and store equal.
    pub fn normalized(mut self) -> Self {
        for list in [&mut self.user_ids, &mut self.manager_ids] {
            list.sort();
            list.dedup();
        }
        self
    }
}

/// `config_json`: the agent's stored configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    #[serde(default, deserialize_with = "crate::object::object")]
    pub context: AgentContext,
}

/// An agent row as stored and as served.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Agent {
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

/// A validated agent write, ready for the store.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentDraft {
    pub slug: String,
    pub name: String,
    pub description: String,
    pub backend: Backend,
    pub config: AgentConfig,
    pub share_config: ShareConfig,
    pub is_default: bool,
}

impl AgentDraft {
    pub fn is_subagent(&self) -> bool {
        self.backend.is_subagent()
    }
}

/// What a client asked to write (a create, a full replace, or a merge-patched agent).
///
/// `backend_id` and `is_subagent` stay raw here so that validation, not deserialization, names
/// a contradiction. `is_default: None` means "keep what is stored".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentInput {
    pub slug: String,
    pub name: String,
    pub description: String,
    pub backend_id: Option<String>,
    pub is_subagent: Option<bool>,
    pub config_json: AgentConfig,
    pub share_config: ShareConfig,
    pub is_default: Option<bool>,
}

/// The slug of the built-in subagent.
pub const GENERAL_PURPOSE_SLUG: &str = "general-purpose";

const MAX_NAME_CHARS: usize = 200;
const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// Checks a slug: 1–64 characters of `[a-z0-9-]`, not starting or ending with `-`.
pub fn validate_slug(slug: &str) -> Result<(), ValidationError> {
    let ok_chars = slug
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if slug.is_empty()
        || slug.len() > 64
        || !ok_chars
        || slug.starts_with('-')
        || slug.ends_with('-')
    {
        return Err(ValidationError::invalid(
            "slug",
            "must be 1-64 characters of a-z, 0-9 and '-', not starting or ending with '-'",
        )
        .because(crate::Reason::new(crate::ErrorReason::BadSlug).with("max", 64u64)));
    }
    Ok(())
}

impl AgentInput {
    /// The writable view of a stored agent: the base a merge patch applies to.
    ///
    /// `is_subagent` and `is_default` are left out: the first is derived from the backend, and
    /// the second changes only when a request names it.
    pub fn from_agent(agent: &Agent) -> Self {
        Self {
            slug: agent.slug.clone(),
            name: agent.name.clone(),
            description: agent.description.clone(),
            backend_id: Some(agent.backend_id.as_str().to_string()),
            is_subagent: None,
            config_json: agent.config_json.clone(),
            share_config: agent.share_config.clone(),
            is_default: None,
        }
    }

    /// Checks every rule of a write by `caller`, creating when `existing` is `None`.
    pub fn validate(
        self,
        caller: &Caller,
        existing: Option<&Agent>,
    ) -> Result<AgentDraft, ValidationError> {
        validate_slug(&self.slug)?;
        // The length is that of the name as sent (what the OpenAPI schema states); the blank
        // check and the stored value are trimmed.
        let name = self.name.trim().to_string();
        if name.is_empty() || self.name.chars().count() > MAX_NAME_CHARS {
            return Err(ValidationError::length("name", MAX_NAME_CHARS));
        }
        if name.chars().any(crate::text::forbidden_in_name) {
            return Err(ValidationError::invalid(
                "name",
                "must not hold control characters or bidirectional controls (such as U+202E)",
            )
            .because(crate::ErrorReason::BadCharacters));
        }
        if self.description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(ValidationError::too_long(
                "description",
                MAX_DESCRIPTION_CHARS,
            ));
        }
        let backend = match self.backend_id.as_deref() {
            None => Backend::Default,
            Some(text) => Backend::parse(text).ok_or_else(|| {
                ValidationError::invalid(
                    "backend_id",
                    format!("unknown backend `{text}`; expected DefaultBackend or SubAgentBackend"),
                )
            })?,
        };
        if let Some(flag) = self.is_subagent
            && flag != backend.is_subagent()
        {
            return Err(ValidationError::invalid(
                "is_subagent",
                format!(
                    "is_subagent must be {} for backend_id {}: it is true exactly when the \
                         backend is SubAgentBackend",
                    backend.is_subagent(),
                    backend.as_str()
                ),
            ));
        }

        let stored_default = existing.is_some_and(|a| a.is_default);
        let is_default = self.is_default.unwrap_or(stored_default);
        if backend.is_subagent() && is_default {
            return Err(if self.is_default == Some(true) {
                ValidationError::invalid("is_default", "a subagent can never be the default agent")
            } else {
                // The stored flag, not the request, stands in the way.
                ValidationError::conflict(
                    "is_default",
                    "this agent is the default agent; to turn it into a subagent, send \
                     is_default: false explicitly in the same request",
                )
                .because(crate::ErrorReason::DefaultAgentStays)
            });
        }
        if is_default && !stored_default && !caller.is_admin() {
            return Err(ValidationError::forbidden(
                "is_default",
                "only an admin can make an agent the default",
            )
            .because(crate::ErrorReason::AdminOnly));
        }

        let mut config = self.config_json;
        if backend.is_subagent() {
            if config
                .context
                .subagents
                .as_ref()
                .is_some_and(|s| !s.is_empty())
            {
                return Err(ValidationError::invalid(
                    "config_json.context.subagents",
                    "a subagent cannot configure or call other subagents; this list must be empty",
                )
                .because(crate::ErrorReason::SubagentNesting));
            }
            // Stored empty: the field has no meaning for a subagent.
            config.context.subagents = None;
        }
        config.context.validate("config_json.context")?;
        // Network for the shell is the server's to grant: only an admin turns it on, and
        // anyone who may manage the agent may keep what an admin granted (or turn it off).
        let stored_network = existing.is_some_and(|a| a.config_json.context.network == Some(true));
        if config.context.network == Some(true) && !stored_network && !caller.is_admin() {
            return Err(ValidationError::forbidden(
                "config_json.context.network",
                "only an admin can give an agent's shell network access",
            )
            .because(crate::ErrorReason::AdminOnly));
        }

        // Refused (403) whatever the body says: these follow from the row being built in, not
        // from the request, so no request schema can express them.
        if let Some(stored) = existing.filter(|a| a.is_builtin) {
            if self.slug != stored.slug {
                return Err(
                    ValidationError::forbidden("slug", "a built-in agent keeps its slug")
                        .because(crate::ErrorReason::BuiltinKeeps),
                );
            }
            if backend != stored.backend_id {
                return Err(ValidationError::forbidden(
                    "backend_id",
                    "a built-in agent keeps its backend",
                )
                .because(crate::ErrorReason::BuiltinKeeps));
            }
            if self.share_config.visibility != crate::Visibility::Public {
                return Err(ValidationError::forbidden(
                    "share_config.visibility",
                    "a built-in agent stays public: it exists for every user",
                )
                .because(crate::ErrorReason::BuiltinKeeps));
            }
        }

        Ok(AgentDraft {
            slug: self.slug,
            name,
            description: self.description,
            backend,
            config,
            share_config: self.share_config.normalized(),
            is_default,
        })
    }
}

#[cfg(test)]
mod tests;
