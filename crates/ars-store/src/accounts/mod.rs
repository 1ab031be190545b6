//! Accounts: users and their API tokens.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{AccountChange, ApiToken, Role, TokenId, User, UserId};

use crate::{Deleted, Result, Updated};

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

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

/// What [`AccountStore::update_user`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserUpdate {
    /// The user as changed.
    Updated(User),
    /// Nothing changed: the user is the last active admin, and the change would demote or
    /// disable them. The user as they stand.
    LastAdmin(User),
}

/// Users and API tokens.
#[async_trait]
pub trait AccountStore: Send + Sync {
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
    /// Applies `change` (role, disabled) and sets `updated_at`, unless it would leave no
    /// active (enabled) admin: then nothing changes and the answer is
    /// [`UserUpdate::LastAdmin`]. Account changes are serialized (PostgreSQL: an advisory
    /// lock), so two admins demoting each other at once cannot both succeed. `NotFound` when
    /// there is no such user.
    async fn update_user(&self, id: UserId, change: AccountChange) -> Result<UserUpdate>;
    /// Sets the password hash and `updated_at` and revokes every token of the user except
    /// `keep` (the session that made the change), in one transaction; [`Updated::NotFound`]
    /// when there is no such user.
    async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        keep: Option<TokenId>,
    ) -> Result<Updated>;

    // API tokens.

    /// Stores a token; a hash already stored is `Conflict { field: "token_hash" }`, an unknown
    /// user `Invalid`. `expires_at` is kept to the microsecond.
    async fn create_token(&self, new: NewToken) -> Result<ApiToken>;
    /// The user owning an unexpired token with this hash, and the token. A token is unexpired
    /// when `expires_at` is NULL or later than `now`. A disabled user's tokens are found too
    /// (`User::disabled` says so; the caller refuses them).
    async fn token_user(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(User, ApiToken)>>;
    /// Records that the token was used at `at`; a token that is gone is no error.
    async fn touch_token(&self, id: TokenId, at: DateTime<Utc>) -> Result<()>;
    /// `user`'s tokens, oldest first, expired ones included (so they can be cleaned up).
    async fn list_tokens(&self, user: UserId) -> Result<Vec<ApiToken>>;
    /// Revokes (deletes) one of `user`'s tokens; [`Deleted::NotFound`] when there is no such
    /// token.
    async fn revoke_token(&self, user: UserId, id: TokenId) -> Result<Deleted>;
}
