//! The `Store` seam: everything ARS persists, behind one object-safe trait.
//!
//! Two real implementations share one body of SQL: [`SqliteStore`] (the embedded default, WAL
//! mode) and [`PgStore`] (scaled deployments). Each runs its own migrations at connect time;
//! [`connect`] picks one by URL scheme. With the `test-utils` feature, `test_support` gives
//! each test a fresh database of either kind.
//!
//! Code map: `sql` holds every query (written once, `$N` placeholders), `store_impl` the one
//! `Store` body expanded per database, `rows` the decoding into domain types, `error` the
//! mapping of constraint violations; `sqlite` and `postgres` only open pools and migrate.
//!
//! **Boundary:** this is the only crate that knows sqlx or SQL. Callers get domain types.
//! **Invariant:** a write either happens whole or not at all (one transaction per call).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{Agent, AgentDraft, AgentId, ApiToken, Role, TokenId, User, UserId};

mod error;
mod postgres;
mod rows;
mod sql;
mod sqlite;
mod store_impl;
#[cfg(feature = "test-utils")]
pub mod test_support;

pub use error::StoreError;
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// A store call's result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// How many ids one `existing_users` statement checks: far below SQLite's and PostgreSQL's
/// bind-parameter limits.
const EXISTING_USERS_CHUNK: usize = 500;

/// Connects to the store a database URL names and migrates it: `sqlite:…` (the parent
/// directory of the file is created if needed) or `postgres://…` / `postgresql://…`.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>> {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    match scheme {
        "sqlite" => Ok(Arc::new(SqliteStore::connect(url).await?)),
        "postgres" | "postgresql" => Ok(Arc::new(PgStore::connect(url).await?)),
        // Only the scheme is echoed: the rest of a URL may hold a password.
        _ => Err(StoreError::Database(sqlx::Error::Configuration(
            format!(
                "unsupported database URL scheme `{scheme}`: expected sqlite:, postgres: or \
                 postgresql:"
            )
            .into(),
        ))),
    }
}

/// A user to create. The password arrives already hashed.
#[derive(Clone, Debug)]
pub struct NewUser {
    /// Already validated (`ars_domain::user::validate_username`).
    pub username: String,
    /// The PHC string of the password hash; the store never sees the password.
    pub password_hash: String,
    pub role: Role,
}

/// A token to create. Only the hash of the secret is stored.
#[derive(Clone, Debug)]
pub struct NewToken {
    /// The owner: the token authenticates as this user.
    pub user_id: UserId,
    /// A label the user chose, to tell tokens apart.
    pub name: String,
    /// The hash of the secret, which is what lookups match.
    pub token_hash: String,
    /// `None` for a token that never expires.
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
    /// The user with this id, if any (request authentication, share checks).
    async fn user(&self, id: UserId) -> Result<Option<User>>;
    /// The user and their password hash, for login.
    async fn user_credentials(&self, username: &str) -> Result<Option<(User, String)>>;
    /// Every user, by username.
    async fn list_users(&self) -> Result<Vec<User>>;
    /// How many users exist (zero means first start: create the admin).
    async fn count_users(&self) -> Result<u64>;
    /// Which of `ids` name existing users, in the order given (to validate share lists).
    async fn existing_users(&self, ids: &[UserId]) -> Result<Vec<UserId>>;

    // API tokens.

    /// Stores a token; a hash already stored is `Conflict { field: "token_hash" }`, an unknown
    /// user `Invalid`. `expires_at` is kept to the microsecond.
    async fn create_token(&self, new: NewToken) -> Result<ApiToken>;
    /// The user owning an unexpired token with this hash, and the token's id. A token is
    /// unexpired when `expires_at` is NULL or later than `now`.
    async fn token_user(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(User, TokenId)>>;
    /// `user`'s tokens, oldest first, expired ones included (so they can be cleaned up).
    async fn list_tokens(&self, user: UserId) -> Result<Vec<ApiToken>>;
    /// Revokes (deletes) one of `user`'s tokens; `false` when there is no such token.
    async fn revoke_token(&self, user: UserId, id: TokenId) -> Result<bool>;

    // Agents.

    /// Creates an agent owned by `owner` (`None`: system-owned). A taken slug is
    /// `StoreError::Conflict { field: "slug" }`; `draft.is_default` clears the previous default
    /// in the same transaction.
    async fn create_agent(&self, draft: &AgentDraft, owner: Option<UserId>) -> Result<Agent>;
    /// The agent with this id, shares included; no visibility check (callers apply
    /// `ars_domain::Caller`).
    async fn agent(&self, id: AgentId) -> Result<Option<Agent>>;
    /// The agent with this slug (`subagent_slug` lookups), shares included.
    async fn agent_by_slug(&self, slug: &str) -> Result<Option<Agent>>;
    /// Agents matching `filter`: built-in rows first, then by name (byte order), then id.
    async fn list_agents(&self, filter: AgentFilter) -> Result<Vec<Agent>>;
    /// Replaces every writable field (shares included) and sets `updated_at`; `owner_id`,
    /// `is_builtin` and `created_at` never change. `NotFound` when the row is gone; a taken slug
    /// is `Conflict { field: "slug" }`; `draft.is_default` clears the previous default. One
    /// transaction: on any error nothing changes.
    async fn update_agent(&self, id: AgentId, draft: &AgentDraft) -> Result<Agent>;
    /// Deletes an agent and its shares; `false` when there was no such row. Callers check
    /// `ars_domain::Caller::can_delete` first (built-in rows are never deleted).
    async fn delete_agent(&self, id: AgentId) -> Result<bool>;
    /// Makes `id` the one default agent, clearing any other, in one transaction. `NotFound`
    /// for a missing row; `Invalid` for a subagent (the schema refuses it).
    async fn set_default_agent(&self, id: AgentId) -> Result<Agent>;
    /// The default agent, if one is set.
    async fn default_agent(&self) -> Result<Option<Agent>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn connect_picks_sqlite_and_creates_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("nested/deeper/ars.db");
        let store = connect(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        assert_eq!(store.kind(), "sqlite");
        assert!(file.exists());
        assert_eq!(store.count_users().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn in_memory_sqlite_keeps_its_data() {
        let store = connect("sqlite::memory:").await.unwrap();
        let user = NewUser {
            username: "a".into(),
            password_hash: "h".into(),
            role: Role::User,
        };
        store.create_user(user).await.unwrap();
        assert_eq!(store.count_users().await.unwrap(), 1);
        assert!(
            store
                .agent(ars_domain::ids::GENERAL_PURPOSE_ID)
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn unknown_schemes_are_refused_without_echoing_the_url() {
        let Err(error) = connect("mysql://root:hunter2@db/ars").await else {
            panic!("mysql is not a supported store");
        };
        let message = error.to_string();
        assert!(message.contains("`mysql`"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }
}
