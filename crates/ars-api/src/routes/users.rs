//! Users: listing (for sharing pickers) and creation (admins only).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;

use ars_domain::{Role, User};

use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody, accounts};

/// Every user (id, name, role), so sharing can name them.
#[utoipa::path(get, path = "/users", tag = "users", security(("bearer" = [])),
    responses((status = 200, body = [User]), (status = 401, body = ErrorBody)))]
pub async fn list_users(
    State(state): State<AppState>,
    _auth: Auth,
) -> Result<Json<Vec<User>>, ApiError> {
    Ok(Json(state.store.list_users().await?))
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUserRequest {
    username: String,
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
        (status = 413, body = ErrorBody), (status = 422, body = ErrorBody),
    ))]
pub async fn create_user(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(req): ApiJson<CreateUserRequest>,
) -> Result<(StatusCode, Json<User>), ApiError> {
    auth.require_admin()?;
    let role = req.role.unwrap_or(Role::User);
    let user =
        accounts::create_user(state.store.as_ref(), &req.username, &req.password, role).await?;
    Ok((StatusCode::CREATED, Json(user)))
}
