//! The statements of accounts (users and API tokens), written once for both databases
//! (`$N` placeholders: see the crate docs).

/// The user columns, in [`super::rows::UserRow`] order.
macro_rules! user_columns {
    () => {
        "id, username, role, disabled, created_at, updated_at"
    };
}

// Users.

pub(crate) const INSERT_USER: &str = "INSERT INTO users \
     (id, username, password_hash, role, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";

pub(crate) const USER_BY_ID: &str =
    concat!("SELECT ", user_columns!(), " FROM users WHERE id = $1");

pub(crate) const CREDENTIALS_BY_USERNAME: &str = concat!(
    "SELECT ",
    user_columns!(),
    ", password_hash FROM users WHERE username = $1"
);

pub(crate) const LIST_USERS: &str = concat!(
    "SELECT ",
    user_columns!(),
    " FROM users ORDER BY username, id"
);

pub(crate) const COUNT_USERS: &str = "SELECT COUNT(*) FROM users";

/// `$1`: the user; `$2`: role; `$3`: disabled; `$4`: now.
pub(crate) const UPDATE_USER: &str = concat!(
    "UPDATE users SET role = $2, disabled = $3, updated_at = $4 WHERE id = $1 RETURNING ",
    user_columns!()
);

/// Active (enabled) admins other than `$1`.
pub(crate) const OTHER_ACTIVE_ADMINS: &str =
    "SELECT COUNT(*) FROM users WHERE id <> $1 AND role = 'admin' AND NOT disabled";

/// `$1`: the user; `$2`: the new password hash; `$3`: now.
pub(crate) const SET_PASSWORD: &str =
    "UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1";

/// `$1`: the user; `$2`: the one token to keep, or NULL for none.
pub(crate) const REVOKE_OTHER_TOKENS: &str =
    "DELETE FROM api_tokens WHERE user_id = $1 AND ($2 IS NULL OR id <> $2)";

/// `SELECT id FROM users WHERE id IN ($1, …, $n)` for `n` ids (`n` ≥ 1).
pub(crate) fn existing_users(n: usize) -> String {
    format!(
        "SELECT id FROM users WHERE id IN ({})",
        crate::sql_store::placeholders(n)
    )
}

// API tokens.

pub(crate) const INSERT_TOKEN: &str = "INSERT INTO api_tokens \
     (id, user_id, name, token_hash, created_at, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";

/// `$1`: token hash; `$2`: now. A token expiring exactly now is already expired. Disabled
/// users' tokens are found too: the caller refuses them, saying why.
pub(crate) const TOKEN_USER: &str = "SELECT u.id, u.username, u.role, u.disabled, u.created_at, \
     u.updated_at, t.id AS token_id, t.name AS token_name, t.created_at AS token_created_at, \
     t.expires_at AS token_expires_at, t.last_used_at AS token_last_used_at \
     FROM api_tokens t JOIN users u ON u.id = t.user_id \
     WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > $2)";

pub(crate) const LIST_TOKENS: &str = "SELECT id, user_id, name, created_at, expires_at, \
     last_used_at FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id";

/// `$1`: the token; `$2`: when it was used.
pub(crate) const TOUCH_TOKEN: &str = "UPDATE api_tokens SET last_used_at = $2 WHERE id = $1";

pub(crate) const REVOKE_TOKEN: &str = "DELETE FROM api_tokens WHERE id = $1 AND user_id = $2";
