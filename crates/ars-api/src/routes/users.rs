//! Users: listing (for sharing pickers), and for admins creation, changes of role, disabling
//! and password resets.
//!
//! **Invariant:** the server keeps an active admin. No admin may demote or disable their own
//! account (`AccountChange::check_own`), and the store refuses any change that would leave no
//! enabled admin, serialising account changes so two admins cannot demote each other at once.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::user::last_admin_refusal;
use ars_domain::{AccountChange, Role, User, UserId};
use ars_store::{StoreError, UserUpdate};

use super::patch::Patch;
use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody, accounts};

/// A user account. The password hash never leaves the store layer in this type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = User)]
pub struct UserView {
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

impl From<User> for UserView {
    fn from(user: User) -> Self {
        Self {
            id: user.id,
            username: user.username,
            role: user.role,
            disabled: user.disabled,
            created_at: user.created_at,
            updated_at: user.updated_at,
        }
    }
}

/// A user as `GET /api/users` lists them: what sharing an agent needs (id and username) for
/// everyone, the whole account for admins.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserListEntry {
    id: UserId,
    username: String,
    /// Admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<Role>,
    /// Admins only: a disabled account cannot log in and its tokens are refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    disabled: Option<bool>,
    /// Admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<DateTime<Utc>>,
    /// Admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_at: Option<DateTime<Utc>>,
}

impl UserListEntry {
    fn new(user: User, full: bool) -> Self {
        Self {
            id: user.id,
            username: user.username,
            role: full.then_some(user.role),
            disabled: full.then_some(user.disabled),
            created_at: full.then_some(user.created_at),
            updated_at: full.then_some(user.updated_at),
        }
    }
}

/// Every user, so sharing can name them: id and username, plus role, whether disabled and
/// timestamps for admins (who manage accounts).
#[utoipa::path(get, path = "/users", tag = "users", security(("bearer" = [])),
    responses((status = 200, body = [UserListEntry]), (status = 401, body = ErrorBody)))]
pub async fn list_users(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<UserListEntry>>, ApiError> {
    let full = auth.user.is_admin();
    let users = state.store.list_users().await?;
    Ok(Json(
        users
            .into_iter()
            .map(|user| UserListEntry::new(user, full))
            .collect(),
    ))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    /// 1-64 characters of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or digit.
    #[schema(pattern = r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    username: String,
    /// At least the server's minimum (12 characters unless configured otherwise; the served
    /// document states the configured one), at most 1024.
    #[schema(min_length = 12, max_length = 1024)]
    password: String,
    /// Defaults to `user`.
    #[serde(default)]
    role: Option<Role>,
}

/// Creates a user (admins only).
#[utoipa::path(post, path = "/users", tag = "users", security(("bearer" = [])),
    request_body = CreateUserRequest,
    responses(
        (status = 201, body = UserView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 409, body = ErrorBody, description = "Username taken"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub async fn create_user(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(req): ApiJson<CreateUserRequest>,
) -> Result<(StatusCode, Json<UserView>), ApiError> {
    auth.require_admin()?;
    let role = req.role.unwrap_or(Role::User);
    let user = accounts::create_user(
        state.store.as_ref(),
        state.config.password_policy,
        &req.username,
        &req.password,
        role,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(user.into())))
}

/// One user: the whole account (but the password) for admins and for the user themselves, id
/// and username for everyone else.
#[utoipa::path(get, path = "/users/{id}", tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "User id")),
    responses((status = 200, body = UserListEntry), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_user(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<UserListEntry>, ApiError> {
    let user = existing_user(&state, &id).await?;
    let full = auth.user.is_admin() || auth.user.id == user.id;
    Ok(Json(UserListEntry::new(user, full)))
}

/// The user `id` names; a malformed or unknown id is a 404.
async fn existing_user(state: &AppState, id: &str) -> Result<User, ApiError> {
    let not_found = || ApiError::not_found(ars_domain::Subject::User);
    let id = UserId::parse(id).ok_or_else(not_found)?;
    state.store.user(id).await?.ok_or_else(not_found)
}

/// The body of `PATCH /api/users/{id}`: what to change; an omitted (or null) field stays.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateUserRequest {
    #[serde(default)]
    #[schema(value_type = Option<Role>)]
    role: Patch<Role>,
    /// `true` disables the account (its tokens are refused at once, login too); `false`
    /// enables it again, and its tokens work again unless they were revoked or expired.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    disabled: Patch<bool>,
}

/// An account is changed by the store in one step (which keeps an active admin), not read,
/// merged and written back: the patch is the change itself, and `null` changes nothing.
impl From<UpdateUserRequest> for AccountChange {
    fn from(patch: UpdateUserRequest) -> Self {
        Self {
            role: patch.role.set(),
            disabled: patch.disabled.set(),
        }
    }
}

/// Changes a user's role or disables or enables the account (admins only). Nobody may demote
/// or disable themselves, and the last active admin stays one (409, field `role` or
/// `disabled`).
#[utoipa::path(patch, path = "/users/{id}", tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "User id")), request_body = UpdateUserRequest,
    responses(
        (status = 200, body = UserView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Demoting or disabling yourself, or the last active admin"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub async fn update_user(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<UpdateUserRequest>,
) -> Result<Json<UserView>, ApiError> {
    auth.require_admin()?;
    let not_found = || ApiError::not_found(ars_domain::Subject::User);
    let id = UserId::parse(&id).ok_or_else(not_found)?;
    let change = AccountChange::from(req);
    change.check_own(&auth.user, id)?;
    let updated = state.store.update_user(id, change).await;
    state.account_changed(id).await;
    match updated {
        Ok(UserUpdate::Updated(user)) => {
            tracing::info!(user = %user.id, by = %auth.user.id, role = user.role.as_str(),
                disabled = user.disabled, "account changed");
            Ok(Json(user.into()))
        }
        Ok(UserUpdate::LastAdmin(user)) => Err(last_admin_refusal(&user, &change).into()),
        Err(StoreError::NotFound) => Err(not_found()),
        Err(other) => Err(other.into()),
    }
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetPasswordRequest {
    /// At least the server's minimum (12 characters unless configured otherwise; the served
    /// document states the configured one), at most 1024.
    #[schema(min_length = 12, max_length = 1024)]
    new_password: String,
}

/// Sets a user's password (admins only) and revokes every token and session of theirs (but the
/// caller's own, when resetting their own password), so the old password's holder is out.
#[utoipa::path(post, path = "/users/{id}/password", tag = "users", security(("bearer" = [])),
    params(("id" = String, Path, description = "User id")), request_body = ResetPasswordRequest,
    responses(
        (status = 204, description = "Set; the user's other tokens are revoked"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "`new_password` breaks the password rules"),
    ))]
pub async fn reset_password(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<ResetPasswordRequest>,
) -> Result<StatusCode, ApiError> {
    auth.require_admin()?;
    let user = existing_user(&state, &id).await?;
    let keep = (user.id == auth.user.id).then_some(auth.token_id);
    let changed = accounts::change_password(
        state.store.as_ref(),
        state.config.password_policy,
        user.id,
        &req.new_password,
        keep,
        "new_password",
    )
    .await;
    state.account_changed(user.id).await;
    changed?;
    tracing::info!(user = %user.id, by = %auth.user.id, "password reset");
    Ok(StatusCode::NO_CONTENT)
}
