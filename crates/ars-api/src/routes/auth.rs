//! Login, logout, the current user (and their password), and API tokens.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::{ApiToken, TokenId, UserId};

use super::users::UserView;
use crate::extract::{ApiJson, ClientAddr};
use crate::{ApiError, AppState, Auth, ErrorBody, accounts};

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    username: String,
    password: String,
}

#[derive(Serialize, ToSchema)]
pub struct LoginResponse {
    /// The bearer token for every other endpoint.
    token: String,
    user: UserView,
    expires_at: Option<DateTime<Utc>>,
}

/// Exchanges a username and password for a bearer token.
///
/// Repeated failures for one username or from one client address are refused with a `429`
/// and `Retry-After` for an exponentially growing time; a refused attempt is not checked at
/// all, so even the right password waits out the back-off.
#[utoipa::path(post, path = "/auth/login", tag = "auth", request_body = LoginRequest,
    responses(
        (status = 200, body = LoginResponse),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody, description = "Wrong credentials"),
        (status = 403, body = ErrorBody, description = "The account is disabled (`account_disabled`; only with the right password)"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "Wrong shape"),
        (status = 429, body = ErrorBody, description = "Too many failed logins",
            headers(("Retry-After" = u64, description = "Seconds until a login may be tried again"))),
    ))]
pub async fn login(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Result<Json<LoginResponse>, ApiError> {
    let attempt = state
        .login_throttle
        .begin(&req.username, address)
        .map_err(locked_out)?;
    let found = if req.username.len() <= 64 {
        state.store.user_credentials(&req.username).await?
    } else {
        None
    };
    let (user, hash) = match found {
        Some((user, hash)) => (Some(user), Some(hash)),
        None => (None, None),
    };
    let verified = accounts::verify_password(req.password, hash).await;
    let user = user.filter(|_| verified).ok_or_else(|| {
        ApiError::Unauthorized("invalid username or password".into())
            .because(ars_domain::ErrorReason::LoginFailed)
    })?;
    state.login_throttle.succeeded(attempt);
    // Said only to whoever knows the password, so it tells a guesser nothing.
    if user.disabled {
        return Err(ApiError::AccountDisabled);
    }
    let expires_at = Some(ars_domain::time::now() + state.config.session_ttl);
    let (token, _) =
        accounts::create_token(state.store.as_ref(), &user, "login", expires_at).await?;
    Ok(Json(LoginResponse {
        token,
        user: user.into(),
        expires_at,
    }))
}

/// The answer to an attempt refused by the login throttle, for `wait` longer.
fn locked_out(wait: std::time::Duration) -> ApiError {
    ApiError::TooManyRequests {
        retry_after_s: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
    }
}

/// Revokes the token this request was made with.
#[utoipa::path(post, path = "/auth/logout", tag = "auth", security(("bearer" = [])),
    responses((status = 204), (status = 401, body = ErrorBody)))]
pub async fn logout(State(state): State<AppState>, auth: Auth) -> Result<StatusCode, ApiError> {
    let revoked = state.store.revoke_token(auth.user.id, auth.token_id).await;
    state.account_changed(auth.user.id).await;
    revoked?;
    Ok(StatusCode::NO_CONTENT)
}

/// The authenticated user, with their sandbox workspace's size against its quota.
#[derive(Debug, Serialize, ToSchema)]
pub struct Me {
    #[serde(flatten)]
    pub user: UserView,
    pub workspace: WorkspaceQuota,
}

/// A workspace (`/home/gem/user-data`) against its quota.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkspaceQuota {
    /// Bytes the workspace holds on disk, as last measured (after every command, and kept
    /// up to date by file-tool writes).
    pub used_bytes: u64,
    /// Bytes it may hold; 0 means no quota. Writes and commands fail while it is over.
    pub quota_bytes: u64,
}

/// The authenticated user.
#[utoipa::path(get, path = "/me", tag = "auth", security(("bearer" = [])),
    responses((status = 200, body = Me), (status = 401, body = ErrorBody)))]
pub async fn me(State(state): State<AppState>, auth: Auth) -> Result<Json<Me>, ApiError> {
    let usage = state
        .runtime
        .workspace_usage(auth.user.id)
        .await
        .map_err(|e| ApiError::Internal(format!("cannot measure the workspace: {e}")))?;
    Ok(Json(Me {
        user: auth.user.into(),
        workspace: WorkspaceQuota {
            used_bytes: usage.used_bytes,
            quota_bytes: usage.quota_bytes,
        },
    }))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangePasswordRequest {
    /// The password the account has now.
    current_password: String,
    /// At least the server's minimum (12 characters unless configured otherwise; the served
    /// document states the configured one), at most 1024.
    #[schema(min_length = 12, max_length = 1024)]
    new_password: String,
}

/// Changes the caller's password. The current one is checked like a login (a wrong one counts
/// as a failed login for the throttle); on success every other token and session of the
/// caller is revoked, and the one this request came with keeps working.
#[utoipa::path(put, path = "/me/password", tag = "auth", security(("bearer" = [])),
    request_body = ChangePasswordRequest,
    responses(
        (status = 204, description = "Changed; the caller's other tokens are revoked"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`current_password` is wrong"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "`new_password` breaks the password rules"),
        (status = 429, body = ErrorBody, description = "Too many wrong passwords",
            headers(("Retry-After" = u64, description = "Seconds until it may be tried again"))),
    ))]
pub async fn change_own_password(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    auth: Auth,
    ApiJson(req): ApiJson<ChangePasswordRequest>,
) -> Result<StatusCode, ApiError> {
    // The rules first: a bad new password costs no guess at the current one.
    let policy = state.config.password_policy;
    policy
        .validate(&req.new_password)
        .map_err(|err| match err {
            ars_domain::ValidationError::Invalid(e) => {
                let reason = e
                    .reason
                    .unwrap_or(ars_domain::ErrorReason::InvalidValue.into());
                ApiError::unprocessable("new_password", e.message).because(reason)
            }
            other => other.into(),
        })?;
    let attempt = state
        .login_throttle
        .begin(&auth.user.username, address)
        .map_err(locked_out)?;
    let stored = state
        .store
        .user_credentials(&auth.user.username)
        .await?
        .map(|(_, hash)| hash);
    if !accounts::verify_password(req.current_password, stored).await {
        return Err(ApiError::Forbidden {
            message: "the current password is wrong".into(),
            field: Some("current_password".into()),
        });
    }
    state.login_throttle.succeeded(attempt);
    let changed = accounts::change_password(
        state.store.as_ref(),
        policy,
        auth.user.id,
        &req.new_password,
        Some(auth.token_id),
        "new_password",
    )
    .await;
    state.account_changed(auth.user.id).await;
    changed?;
    Ok(StatusCode::NO_CONTENT)
}

/// An API token's metadata. The secret is shown once, at creation, and stored only as a hash.
/// Login sessions are tokens too (named `login`, expiring after the session lifetime).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = ApiToken)]
pub struct ApiTokenView {
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

impl From<ApiToken> for ApiTokenView {
    fn from(token: ApiToken) -> Self {
        Self {
            id: token.id,
            user_id: token.user_id,
            name: token.name,
            created_at: token.created_at,
            expires_at: token.expires_at,
            last_used_at: token.last_used_at,
        }
    }
}

/// The caller's API tokens (metadata only; secrets are never shown again).
#[utoipa::path(get, path = "/tokens", tag = "auth", security(("bearer" = [])),
    responses((status = 200, body = [ApiTokenView]), (status = 401, body = ErrorBody)))]
pub async fn list_tokens(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<ApiTokenView>>, ApiError> {
    let tokens = state.store.list_tokens(auth.user.id).await?;
    Ok(Json(tokens.into_iter().map(ApiTokenView::from).collect()))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenRequest {
    /// A label for the token, e.g. `ci` or `laptop`: at most 100 characters, not blank,
    /// stored trimmed.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    name: String,
    /// Days until the token expires (1 to 3650); omitted means it never expires.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 3650)]
    expires_in_days: Option<u32>,
}

#[derive(Serialize, ToSchema)]
pub struct CreatedToken {
    /// The secret: shown once, store it now.
    token: String,
    info: ApiTokenView,
}

/// Creates an API token for the caller.
#[utoipa::path(post, path = "/tokens", tag = "auth", security(("bearer" = [])),
    request_body = CreateTokenRequest,
    responses(
        (status = 201, body = CreatedToken),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub async fn create_token(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(req): ApiJson<CreateTokenRequest>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    let name = req.name.trim();
    if name.is_empty() || req.name.chars().count() > 100 {
        return Err(ApiError::unprocessable("name", "must be 1-100 characters"));
    }
    let expires_at = match req.expires_in_days {
        None => None,
        Some(days @ 1..=3650) => {
            Some(ars_domain::time::now() + chrono::Duration::days(days.into()))
        }
        Some(_) => {
            return Err(ApiError::unprocessable(
                "expires_in_days",
                "must be between 1 and 3650",
            ));
        }
    };
    let (token, info) =
        accounts::create_token(state.store.as_ref(), &auth.user, name, expires_at).await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedToken {
            token,
            info: info.into(),
        }),
    ))
}

/// Revokes one of the caller's tokens.
#[utoipa::path(delete, path = "/tokens/{id}", tag = "auth", security(("bearer" = [])),
    params(("id" = String, Path, description = "Token id")),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn revoke_token(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = TokenId::parse(&id).ok_or_else(|| ApiError::not_found(ars_domain::Subject::Token))?;
    let revoked = state.store.revoke_token(auth.user.id, id).await;
    state.account_changed(auth.user.id).await;
    if revoked? == ars_store::Deleted::Deleted {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(ars_domain::Subject::Token))
    }
}
