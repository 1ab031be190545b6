//! Users, roles and API tokens.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{TokenId, UserId, ValidationError};

/// What a user may do server-wide. Admins manage every agent and every user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    User,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::User => "user",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "admin" => Some(Self::Admin),
            "user" => Some(Self::User),
            _ => None,
        }
    }
}

/// A user account. The password hash never leaves the store layer in this type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct User {
    pub id: UserId,
    pub username: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl User {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
}

/// The name of the account created on first start.
pub const ADMIN_USERNAME: &str = "admin";

/// Checks a username: 1–64 characters of `[a-z0-9._-]`, starting with a letter or digit.
pub fn validate_username(name: &str) -> Result<(), ValidationError> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    let ok_start = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    if name.is_empty() || name.len() > 64 || !ok_chars || !ok_start {
        return Err(ValidationError::invalid(
            "username",
            "must be 1-64 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
        ));
    }
    Ok(())
}

/// Checks a new password: at least 8 and at most 1024 characters.
pub fn validate_password(password: &str) -> Result<(), ValidationError> {
    let len = password.chars().count();
    if !(8..=1024).contains(&len) {
        return Err(ValidationError::invalid(
            "password",
            "must be 8-1024 characters long",
        ));
    }
    Ok(())
}

/// An API token's metadata. The secret is shown once, at creation, and stored only as a hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApiToken {
    pub id: TokenId,
    pub user_id: UserId,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// `None` for tokens that never expire (administrative tokens).
    pub expires_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_checked() {
        assert!(validate_username("alice").is_ok());
        assert!(validate_username("bob.smith-2").is_ok());
        assert!(validate_username("").is_err());
        assert!(validate_username("Alice").is_err());
        assert!(validate_username("-x").is_err());
        assert!(validate_username(&"a".repeat(65)).is_err());
    }

    #[test]
    fn passwords_need_eight_characters() {
        assert!(validate_password("1234567").is_err());
        assert!(validate_password("12345678").is_ok());
    }
}
