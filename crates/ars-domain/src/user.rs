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
    /// A disabled account cannot log in, and every request with one of its tokens is refused.
    /// Its tokens are kept: enabling the account again makes them work again (reset the
    /// password to revoke them).
    #[serde(default)]
    pub disabled: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl User {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// An admin whose account is enabled: one who can manage the server.
    pub fn is_active_admin(&self) -> bool {
        self.is_admin() && !self.disabled
    }
}

/// An admin's change to an account: a new role, or enabling or disabling it. `None` leaves
/// that part as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccountChange {
    pub role: Option<Role>,
    pub disabled: Option<bool>,
}

impl AccountChange {
    /// `user` as the change leaves them.
    pub fn applied_to(&self, user: &User) -> User {
        User {
            role: self.role.unwrap_or(user.role),
            disabled: self.disabled.unwrap_or(user.disabled),
            ..user.clone()
        }
    }

    /// Refuses what no admin may do to their own account, `actor`: demote or disable it, which
    /// would lock them out of the very pages that undo it. Another admin has to do that.
    pub fn check_own(&self, actor: &User, target: UserId) -> Result<(), ValidationError> {
        if actor.id != target {
            return Ok(());
        }
        if self.role == Some(Role::User) && actor.is_admin() {
            return Err(ValidationError::conflict(
                "role",
                "you cannot remove your own admin role; another admin has to",
            )
            .because(crate::ErrorReason::OwnAccount));
        }
        if self.disabled == Some(true) {
            return Err(ValidationError::conflict(
                "disabled",
                "you cannot disable your own account; another admin has to",
            )
            .because(crate::ErrorReason::OwnAccount));
        }
        Ok(())
    }
}

/// The refusal of a change that would leave the server without an active admin.
pub fn last_admin_refusal(user: &User, change: &AccountChange) -> ValidationError {
    let field = if change.disabled == Some(true) {
        "disabled"
    } else {
        "role"
    };
    ValidationError::conflict(
        field,
        format!(
            "`{}` is the last active admin; make another user an admin first",
            user.username
        ),
    )
    .because(crate::Reason::new(crate::ErrorReason::LastAdmin).with("name", user.username.as_str()))
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
        )
        .because(crate::Reason::new(crate::ErrorReason::BadUsername).with("max", 64u64)));
    }
    Ok(())
}

/// The longest password accepted: argon2 handles more, but nobody types this much and a cap
/// keeps one login from hashing a megabyte.
pub const MAX_PASSWORD_CHARS: usize = 1024;

/// The shortest new password unless configured otherwise.
pub const DEFAULT_MIN_PASSWORD_CHARS: usize = 12;

/// What a new password must satisfy. Applies wherever a password is set (the API, `ars user
/// add`, the first-start admin), never at login: accounts created under an older, laxer rule
/// keep working.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PasswordPolicy {
    /// The fewest characters (Unicode scalar values) a new password may have.
    pub min_chars: usize,
}

impl Default for PasswordPolicy {
    fn default() -> Self {
        Self {
            min_chars: DEFAULT_MIN_PASSWORD_CHARS,
        }
    }
}

impl PasswordPolicy {
    /// Checks a new password: at least `min_chars` and at most [`MAX_PASSWORD_CHARS`].
    pub fn validate(&self, password: &str) -> Result<(), ValidationError> {
        let len = password.chars().count();
        let min = self.min_chars.min(MAX_PASSWORD_CHARS);
        if !(min..=MAX_PASSWORD_CHARS).contains(&len) {
            return Err(ValidationError::invalid(
                "password",
                format!("must be {min}-{MAX_PASSWORD_CHARS} characters long"),
            )
            .because(
                crate::Reason::new(crate::ErrorReason::PasswordLength)
                    .with("min", min)
                    .with("max", MAX_PASSWORD_CHARS),
            ));
        }
        Ok(())
    }
}

/// An API token's metadata. The secret is shown once, at creation, and stored only as a hash.
/// Login sessions are tokens too (named `login`, expiring after the session lifetime).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApiToken {
    pub id: TokenId,
    pub user_id: UserId,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// `None` for tokens that never expire (administrative tokens).
    pub expires_at: Option<DateTime<Utc>>,
    /// When a request last came with it (recorded at most once a minute); `None`: never.
    #[serde(default)]
    pub last_used_at: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role) -> User {
        let now = crate::time::now();
        User {
            id: UserId::new(),
            username: "a".into(),
            role,
            disabled: false,
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn admins_may_not_demote_or_disable_themselves() {
        let admin = user(Role::Admin);
        let demote = AccountChange {
            role: Some(Role::User),
            disabled: None,
        };
        let disable = AccountChange {
            role: None,
            disabled: Some(true),
        };
        let keep = AccountChange {
            role: Some(Role::Admin),
            disabled: Some(false),
        };
        assert_eq!(
            demote.check_own(&admin, admin.id).unwrap_err().field(),
            "role"
        );
        assert_eq!(
            disable.check_own(&admin, admin.id).unwrap_err().field(),
            "disabled"
        );
        assert!(keep.check_own(&admin, admin.id).is_ok());
        // Anyone else's account is another matter (the last-admin rule is the store's).
        assert!(demote.check_own(&admin, UserId::new()).is_ok());
        assert!(disable.check_own(&admin, UserId::new()).is_ok());
        let changed = disable.applied_to(&admin);
        assert!(changed.is_admin() && !changed.is_active_admin());
    }

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
    fn new_password_shorter_than_minimum_is_rejected() {
        let policy = PasswordPolicy::default();
        assert!(policy.validate("12345678901").is_err());
        assert!(policy.validate("123456789012").is_ok());
        // Characters, not bytes: twelve accented letters are enough.
        assert!(policy.validate(&"é".repeat(12)).is_ok());
        assert!(
            policy
                .validate(&"x".repeat(MAX_PASSWORD_CHARS + 1))
                .is_err()
        );
        let lax = PasswordPolicy { min_chars: 8 };
        assert!(lax.validate("12345678").is_ok());
    }
}
