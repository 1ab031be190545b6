//! Users: listing (for sharing pickers) and creation (admins only).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use ars_domain::{Role, User, UserId};

use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody, accounts};

/// A user as `GET /api/users` lists them: what sharing an agent needs (id and username) for
/// everyone, the whole account for admins.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserListEntry {
    id: UserId,
    username: String,
    /// Admins only.
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<Role>,
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
            created_at: full.then_some(user.created_at),
            updated_at: full.then_some(user.updated_at),
        }
    }
}

/// Every user, so sharing can name them: id and username, plus role and timestamps for
/// admins (who manage accounts).
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
        (status = 201, body = User),
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
) -> Result<(StatusCode, Json<User>), ApiError> {
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
    Ok((StatusCode::CREATED, Json(user)))
}
