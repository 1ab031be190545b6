//! Account operations shared by the HTTP API and the admin CLI: creating users (hashing off
//! the async threads), changing passwords, creating tokens, and the first-start admin.

use std::sync::OnceLock;

use ars_domain::user::{ADMIN_USERNAME, PasswordPolicy, validate_username};
use ars_domain::{ApiToken, Role, TokenId, User, UserId, ValidationError, credentials};
use ars_store::{AccountStore, NewToken, NewUser};

use crate::ApiError;

/// Hashes on a blocking thread: argon2 is slow on purpose and must not stall the runtime.
pub async fn hash_password(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || credentials::hash_password(&password))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// Verifies on a blocking thread. With no stored hash, a dummy hash is still checked so that
/// unknown usernames take as long as wrong passwords.
pub async fn verify_password(password: String, stored: Option<String>) -> bool {
    static DUMMY: OnceLock<String> = OnceLock::new();
    tokio::task::spawn_blocking(move || match stored {
        Some(hash) => credentials::verify_password(&password, &hash),
        None => {
            let dummy = DUMMY.get_or_init(|| {
                credentials::hash_password("not a real password").unwrap_or_default()
            });
            let _ = credentials::verify_password(&password, dummy);
            false
        }
    })
    .await
    .unwrap_or(false)
}

/// Validates and creates a user; the password must satisfy `policy`.
pub async fn create_user(
    store: &dyn AccountStore,
    policy: PasswordPolicy,
    username: &str,
    password: &str,
    role: Role,
) -> Result<User, ApiError> {
    validate_username(username)?;
    policy.validate(password)?;
    let password_hash = hash_password(password.to_string()).await?;
    Ok(store
        .create_user(NewUser {
            username: username.to_string(),
            password_hash,
            role,
        })
        .await?)
}

/// Makes `password` the user's new one: checked against `policy` (a 422 naming `field`),
/// hashed, stored, and every token of the user revoked but `keep` (the session that made the
/// change), so whoever knew the old password is logged out everywhere. A 404 when the user is
/// gone.
pub async fn change_password(
    store: &dyn AccountStore,
    policy: PasswordPolicy,
    user: UserId,
    password: &str,
    keep: Option<TokenId>,
    field: &str,
) -> Result<(), ApiError> {
    policy.validate(password).map_err(|err| match err {
        ValidationError::Invalid(e) => {
            let reason = e
                .reason
                .unwrap_or(ars_domain::ErrorReason::InvalidValue.into());
            ApiError::unprocessable(field, e.message).because(reason)
        }
        other => other.into(),
    })?;
    let password_hash = hash_password(password.to_string()).await?;
    match store.set_password(user, &password_hash, keep).await? {
        ars_store::Updated::Updated => Ok(()),
        ars_store::Updated::NotFound => Err(ApiError::not_found(ars_domain::Subject::User)),
    }
}

/// Creates a token for `user`; returns the secret (shown once) and its metadata.
pub async fn create_token(
    store: &dyn AccountStore,
    user: &User,
    name: &str,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<(String, ApiToken), ApiError> {
    let secret = credentials::generate_token();
    let token = store
        .create_token(NewToken {
            user_id: user.id,
            name: name.to_string(),
            token_hash: credentials::token_hash(&secret),
            expires_at,
        })
        .await?;
    Ok((secret, token))
}

/// The result of [`ensure_admin`].
#[derive(Debug, PartialEq, Eq)]
pub enum AdminBootstrap {
    /// Users already exist; nothing was done.
    Existing,
    /// The admin was created with the configured password.
    Created,
    /// The admin was created with this generated password, to be shown once.
    CreatedWithPassword(String),
}

/// On an empty database, creates the `admin` user; a configured password must satisfy
/// `policy` like any other. Safe to race: when another instance created it first, the unique
/// username makes this a no-op.
pub async fn ensure_admin(
    store: &dyn AccountStore,
    policy: PasswordPolicy,
    configured_password: Option<&str>,
) -> Result<AdminBootstrap, ApiError> {
    if store.count_users().await? > 0 {
        return Ok(AdminBootstrap::Existing);
    }
    let (password, generated) = match configured_password {
        Some(p) => (p.to_string(), false),
        None => (credentials::generate_password(policy.min_chars), true),
    };
    match create_user(store, policy, ADMIN_USERNAME, &password, Role::Admin).await {
        Ok(_) if generated => Ok(AdminBootstrap::CreatedWithPassword(password)),
        Ok(_) => Ok(AdminBootstrap::Created),
        Err(e) if matches!(e.kind(), ApiError::Conflict { .. }) => Ok(AdminBootstrap::Existing),
        Err(e) => Err(e),
    }
}
