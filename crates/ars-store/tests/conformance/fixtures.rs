//! Small builders shared by the checks.

use ars_domain::{AgentConfig, AgentDraft, Backend, Role, ShareConfig, User, UserId};
use ars_store::{AgentFilter, NewUser, Store};

/// A plain user named `name`, whose password hash is `hash-of-<name>`.
pub async fn user(store: &dyn Store, name: &str) -> User {
    user_with_role(store, name, Role::User).await
}

pub async fn user_with_role(store: &dyn Store, name: &str, role: Role) -> User {
    store
        .create_user(NewUser {
            username: name.to_string(),
            password_hash: format!("hash-of-{name}"),
            role,
        })
        .await
        .unwrap()
}

/// A private normal agent named after its slug, with no shares.
pub fn draft(slug: &str) -> AgentDraft {
    AgentDraft {
        slug: slug.to_string(),
        name: format!("Agent {slug}"),
        description: String::new(),
        backend: Backend::Default,
        config: AgentConfig::default(),
        share_config: ShareConfig::default(),
        is_default: false,
    }
}

/// A private subagent named after its slug, with no shares.
pub fn subagent_draft(slug: &str) -> AgentDraft {
    AgentDraft {
        backend: Backend::SubAgent,
        ..draft(slug)
    }
}

/// A share config with the given visibility and lists, as written (not normalized).
pub fn shares(
    visibility: ars_domain::Visibility,
    users: &[UserId],
    managers: &[UserId],
) -> ShareConfig {
    ShareConfig {
        visibility,
        user_ids: users.to_vec(),
        manager_ids: managers.to_vec(),
    }
}

/// Every agent, subagents included, as an admin lists them.
pub fn everything() -> AgentFilter {
    AgentFilter {
        visible_to: None,
        include_subagents: true,
    }
}

/// The sorted copy of `ids`, as the store returns share lists.
pub fn sorted(ids: &[UserId]) -> Vec<UserId> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids
}
