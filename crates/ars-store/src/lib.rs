//! The `Store` seam: everything ARS persists, behind one object-safe trait.
//!
//! Two real implementations share one body of SQL: [`SqliteStore`] (the embedded default, WAL
//! mode) and [`PgStore`] (scaled deployments). Each runs its own migrations at connect time.
//!
//! **Boundary:** this is the only crate that knows sqlx or SQL. Callers get domain types.
//! **Invariant:** a write either happens whole or not at all (one transaction per call).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{Agent, AgentDraft, AgentId, ApiToken, Role, TokenId, User, UserId};

mod error;
pub use error::StoreError;

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A user to create. The password arrives already hashed.
#[derive(Clone, Debug)]
pub struct NewUser {
    pub username: String,
    pub password_hash: String,
    pub role: Role,
}

/// A token to create. Only the hash of the secret is stored.
#[derive(Clone, Debug)]
pub struct NewToken {
    pub user_id: UserId,
    pub name: String,
    pub token_hash: String,
    pub expires_at: Option<DateTime<Utc>>,
}

/// Which agents a list returns.
#[derive(Clone, Copy, Debug)]
pub struct AgentFilter {
    /// Only agents this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every agent (admins).
    pub visible_to: Option<UserId>,
    /// Whether subagents are included; normal agents always are.
    pub include_subagents: bool,
}

/// Everything ARS persists. Object-safe: the server holds an `Arc<dyn Store>`.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// `"sqlite"` or `"postgres"`, for logs and health output.
    fn kind(&self) -> &'static str;

    // Users.

    /// Creates a user; a taken username is `StoreError::Conflict { field: "username" }`.
    async fn create_user(&self, new: NewUser) -> Result<User>;
    async fn user(&self, id: UserId) -> Result<Option<User>>;
    /// The user and their password hash, for login.
    async fn user_credentials(&self, username: &str) -> Result<Option<(User, String)>>;
    async fn list_users(&self) -> Result<Vec<User>>;
    async fn count_users(&self) -> Result<u64>;
    /// Which of `ids` name existing users.
    async fn existing_users(&self, ids: &[UserId]) -> Result<Vec<UserId>>;

    // API tokens.

    async fn create_token(&self, new: NewToken) -> Result<ApiToken>;
    /// The user owning an unexpired token with this hash (as of `now`), and the token's id.
    async fn token_user(&self, token_hash: &str, now: DateTime<Utc>) -> Result<Option<(User, TokenId)>>;
    async fn list_tokens(&self, user: UserId) -> Result<Vec<ApiToken>>;
    /// Revokes (deletes) one of `user`'s tokens; `false` when there is no such token.
    async fn revoke_token(&self, user: UserId, id: TokenId) -> Result<bool>;

    // Agents.

    /// Creates an agent owned by `owner` (`None`: system-owned). A taken slug is
    /// `StoreError::Conflict { field: "slug" }`; `draft.is_default` clears the previous default
    /// in the same transaction.
    async fn create_agent(&self, draft: &AgentDraft, owner: Option<UserId>) -> Result<Agent>;
    async fn agent(&self, id: AgentId) -> Result<Option<Agent>>;
    async fn agent_by_slug(&self, slug: &str) -> Result<Option<Agent>>;
    /// Agents matching `filter`: built-in rows first, then by name.
    async fn list_agents(&self, filter: AgentFilter) -> Result<Vec<Agent>>;
    /// Replaces every writable field (shares included). `NotFound` when the row is gone.
    async fn update_agent(&self, id: AgentId, draft: &AgentDraft) -> Result<Agent>;
    /// Deletes an agent and its shares; `false` when there was no such row.
    async fn delete_agent(&self, id: AgentId) -> Result<bool>;
    /// Makes `id` the one default agent, clearing any other, in one transaction.
    async fn set_default_agent(&self, id: AgentId) -> Result<Agent>;
    /// The default agent, if one is set.
    async fn default_agent(&self) -> Result<Option<Agent>>;
}
