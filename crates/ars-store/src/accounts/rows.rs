//! Rows of `users` and `api_tokens`, and their conversion into domain types.

use chrono::{DateTime, Utc};

use ars_domain::{ApiToken, Role, User};

use crate::Result;
use crate::rows::{corrupt, parse_token_id, parse_user_id};

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: String,
    username: String,
    role: String,
    disabled: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl UserRow {
    pub(crate) fn into_user(self) -> Result<User> {
        Ok(User {
            id: parse_user_id(&self.id)?,
            username: self.username,
            role: Role::parse(&self.role).ok_or_else(|| corrupt("users.role", &self.role))?,
            disabled: self.disabled,
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

/// A token's owner and the token.
#[derive(sqlx::FromRow)]
pub(crate) struct TokenUserRow {
    #[sqlx(flatten)]
    user: UserRow,
    token_id: String,
    token_name: String,
    token_created_at: DateTime<Utc>,
    token_expires_at: Option<DateTime<Utc>>,
    token_last_used_at: Option<DateTime<Utc>>,
}

impl TokenUserRow {
    pub(crate) fn into_pair(self) -> Result<(User, ApiToken)> {
        let user = self.user.into_user()?;
        let token = ApiToken {
            id: parse_token_id(&self.token_id)?,
            user_id: user.id,
            name: self.token_name,
            created_at: self.token_created_at,
            expires_at: self.token_expires_at,
            last_used_at: self.token_last_used_at,
        };
        Ok((user, token))
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct TokenRow {
    id: String,
    user_id: String,
    name: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    pub(crate) fn into_token(self) -> Result<ApiToken> {
        Ok(ApiToken {
            id: parse_token_id(&self.id)?,
            user_id: parse_user_id(&self.user_id)?,
            name: self.name,
            created_at: self.created_at,
            expires_at: self.expires_at,
            last_used_at: self.last_used_at,
        })
    }
}
