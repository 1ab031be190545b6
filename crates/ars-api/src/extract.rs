//! Request extractors whose rejections are [`ApiError`]s: JSON bodies, query strings, the
//! authenticated caller, and the client's address.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

use axum::extract::rejection::QueryRejection;
use axum::extract::{
    ConnectInfo, FromRequest, FromRequestParts, OptionalFromRequestParts, Request,
};
use axum::http::{StatusCode, header, request::Parts};
use bytes::Bytes;
use serde::de::DeserializeOwned;

use ars_domain::{Caller, ErrorReason, TokenId, User, credentials};

use crate::credentials::Recalled;
use crate::{ApiError, AppState};

/// A JSON body. Malformed JSON is a 400; JSON of the wrong shape (wrong types, unknown or
/// missing fields) is a 422 naming the field; an oversized body is a 413.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(is_json_type);
        if !is_json {
            return Err(ApiError::UnsupportedMediaType {
                expected: "a JSON body with `Content-Type: application/json`",
            });
        }
        let ApiBytes(bytes) = ApiBytes::from_request(req, state).await?;
        parse_json(&bytes).map(ApiJson)
    }
}

/// An optional JSON body: an empty body is `T::default()`; anything else is read exactly like
/// [`ApiJson`] (a JSON content type, 400/413/415/422 as there).
#[derive(Debug)]
pub struct ApiJsonOrEmpty<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for ApiJsonOrEmpty<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let content_type = req.headers().get(header::CONTENT_TYPE).cloned();
        let ApiBytes(bytes) = ApiBytes::from_request(req, state).await?;
        if bytes.is_empty() {
            return Ok(Self(T::default()));
        }
        if !content_type.as_ref().is_some_and(is_json_type) {
            return Err(ApiError::UnsupportedMediaType {
                expected: "a JSON body with `Content-Type: application/json`, or none",
            });
        }
        parse_json(&bytes).map(ApiJsonOrEmpty)
    }
}

/// Whether a `Content-Type` value names JSON (`application/json` or `…+json`).
fn is_json_type(value: &header::HeaderValue) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .map(|mime| {
            let mime = mime.trim();
            mime.eq_ignore_ascii_case("application/json") || mime.ends_with("+json")
        })
        .unwrap_or(false)
}

/// A raw body of any type, read up to the body limit in force; an oversized body is a 413.
#[derive(Debug)]
pub struct ApiBytes(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for ApiBytes {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let limit = body_limit(&req);
        Bytes::from_request(req, state)
            .await
            .map(ApiBytes)
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge { limit }
                } else {
                    ApiError::BadRequest(rejection.body_text())
                }
            })
    }
}

/// The configured body limit, recorded in the request extensions by the app's layers.
fn body_limit(req: &Request) -> usize {
    req.extensions()
        .get::<BodyLimit>()
        .map_or(crate::DEFAULT_BODY_LIMIT, |l| l.0)
}

/// The body limit in force, as a request extension (so the 413 message can state it).
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

/// Deserializes a JSON object from `bytes`, turning serde's error into a field-naming
/// [`ApiError`].
///
/// The body is read as a JSON value first, so that a number written with a zero fraction
/// (`228.0`) counts as the integer it is — JSON Schema says so, serde would refuse it.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    use ars_domain::nesting::{MAX_JSON_DEPTH, check_json_depth};
    check_json_depth(bytes, MAX_JSON_DEPTH)
        .map_err(|too_deep| ApiError::BadRequest(format!("malformed JSON: {too_deep}")))?;
    let mut value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("malformed JSON: {e}")))?;
    // serde reads a struct from an array too (positionally); every body here is an object.
    if !value.is_object() {
        return Err(ApiError::Unprocessable {
            message: "the body must be a JSON object".into(),
            field: None,
        });
    }
    whole_numbers_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        json_error(path, err.into_inner())
    })
}

/// Rewrites every float without a fractional part (within the 64-bit integer range) as an
/// integer, everywhere in `value`.
fn whole_numbers_as_integers(value: &mut serde_json::Value) {
    use serde_json::{Number, Value};
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0) {
                // `as` saturates; the range checks keep only exact conversions.
                if f >= 0.0 && f < u64::MAX as f64 {
                    *n = Number::from(f as u64);
                } else if f < 0.0 && f >= i64::MIN as f64 {
                    *n = Number::from(f as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers_as_integers),
        _ => {}
    }
}

fn json_error(path: String, err: serde_json::Error) -> ApiError {
    use serde_json::error::Category;
    match err.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            ApiError::BadRequest(format!("malformed JSON: {err}"))
        }
        Category::Data => {
            let message = strip_position(&err.to_string());
            let parent = if path == "." { String::new() } else { path };
            // serde names the offending key only inside its message; lift it into the path.
            let field = backticked(&message, "unknown field `")
                .or_else(|| backticked(&message, "missing field `"))
                .map(|key| join_path(&parent, key))
                .unwrap_or(parent);
            let field = if field.is_empty() { None } else { Some(field) };
            let reason = if message.starts_with("missing field") {
                ErrorReason::Required
            } else {
                ErrorReason::InvalidValue
            };
            ApiError::Unprocessable { message, field }.because(reason)
        }
    }
}

fn backticked<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = message.strip_prefix(prefix)?;
    rest.split('`').next()
}

fn join_path(parent: &str, key: &str) -> String {
    if parent.is_empty() || parent.ends_with(key) {
        // serde_path_to_error already records the unknown key itself as the last segment.
        if parent.is_empty() {
            key.to_string()
        } else {
            parent.to_string()
        }
    } else {
        format!("{parent}.{key}")
    }
}

/// serde_json appends " at line L column C"; the field path says more to an API client.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

/// A query string, rejected as a 400 JSON error when it does not parse.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| ApiQuery(q.0))
            .map_err(|rejection: QueryRejection| ApiError::BadRequest(rejection.body_text()))
    }
}

/// The authenticated caller: a user resolved from `Authorization: Bearer <token>`. An expired
/// or unknown token is a 401; a disabled user's token a 403 `account_disabled`.
#[derive(Clone, Debug)]
pub struct Auth {
    pub user: User,
    /// The token this request came with (so logout can revoke exactly it).
    pub token_id: TokenId,
}

impl Auth {
    pub fn caller(&self) -> Caller {
        Caller::from(&self.user)
    }

    /// Refuses non-admins with a 403.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        if self.user.is_admin() {
            Ok(())
        } else {
            Err(ApiError::forbidden("admin rights required").because(ErrorReason::AdminOnly))
        }
    }
}

/// A request that may be signed in: `None` without a usable token (no header, a malformed
/// or unknown token, a disabled account), never a rejection.
impl OptionalFromRequestParts<AppState> for Auth {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Option<Self>, Self::Rejection> {
        if !parts.headers.contains_key(header::AUTHORIZATION) {
            return Ok(None);
        }
        Ok(
            <Self as FromRequestParts<AppState>>::from_request_parts(parts, state)
                .await
                .ok(),
        )
    }
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let header = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
            ApiError::Unauthorized("missing `Authorization: Bearer <token>` header".into())
                .because(ErrorReason::CredentialsMissing)
        })?;
        let token = header
            .to_str()
            .ok()
            .and_then(bearer_token)
            .filter(|t| t.len() <= 512)
            .ok_or_else(|| {
                ApiError::Unauthorized(
                    "malformed Authorization header; expected `Bearer <token>`".into(),
                )
            })?;
        Auth::of_token(state, token).await
    }
}

impl Auth {
    /// The caller an API token names: 401 for an unknown or expired token, 403
    /// `account_disabled` for a disabled account.
    pub(crate) async fn of_token(state: &AppState, token: &str) -> Result<Self, ApiError> {
        let hash = credentials::token_hash(token);
        let now = ars_domain::time::now();
        let (user, token) = match state.credentials.recall(&hash, now) {
            Recalled::Known(user, token) => (user, token),
            Recalled::Read(mark) => {
                let (user, token) = state
                    .store
                    .token_user(&hash, now)
                    .await?
                    .ok_or_else(|| ApiError::Unauthorized("invalid or expired token".into()))?;
                state.credentials.keep(mark, &hash, &user, &token);
                (user, token)
            }
        };
        // Checked on every request (on what was read at most `FRESH_FOR` ago, and forgotten
        // on every change), so disabling an account stops its tokens at once.
        if user.disabled {
            return Err(ApiError::AccountDisabled);
        }
        if token
            .last_used_at
            .is_none_or(|at| now - at >= TOKEN_USE_GRANULARITY)
        {
            // Only a note for the token list: a failure to record it never fails the request.
            match state.store.touch_token(token.id, now).await {
                Ok(()) => state.credentials.used(&hash, now),
                Err(err) => {
                    tracing::warn!(%err, token = %token.id, "cannot record the token's use")
                }
            }
        }
        Ok(Auth {
            user,
            token_id: token.id,
        })
    }
}

/// The caller of a protocol adapter's routes: an API token as `Authorization: Bearer <token>`
/// or, as the LangGraph SDK sends it, `x-api-key: <token>`; otherwise exactly [`Auth`].
#[derive(Clone, Debug)]
pub struct KeyAuth(pub Auth);

const API_KEY: &str = "x-api-key";

impl FromRequestParts<AppState> for KeyAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        if parts.headers.contains_key(header::AUTHORIZATION) {
            return <Auth as FromRequestParts<AppState>>::from_request_parts(parts, state)
                .await
                .map(KeyAuth);
        }
        let key = parts.headers.get(API_KEY).ok_or_else(|| {
            ApiError::Unauthorized(
                "missing credentials: send `Authorization: Bearer <token>` or `x-api-key: <token>`"
                    .into(),
            )
            .because(ErrorReason::CredentialsMissing)
        })?;
        let token = key
            .to_str()
            .ok()
            .map(str::trim)
            .filter(|t| !t.is_empty() && t.len() <= 512)
            .ok_or_else(|| ApiError::Unauthorized("malformed `x-api-key` header".into()))?;
        Auth::of_token(state, token).await.map(KeyAuth)
    }
}

/// How stale a token's `last_used_at` may get before a request records it again: a write per
/// token per minute at most, not one per request.
const TOKEN_USE_GRANULARITY: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// The token of an `Authorization: Bearer <token>` value. The scheme is matched without regard
/// to case, as HTTP auth schemes are (RFC 9110 §11.1).
pub(crate) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The client's IP address: the socket peer of the connection, as recorded by
/// [`crate::serve`]. `None` when the router runs without it (e.g. `app().oneshot(…)`).
///
/// Behind a reverse proxy this is the proxy's address: forwarded headers are not trusted,
/// since any client can send them.
#[derive(Clone, Copy, Debug)]
pub struct ClientAddr(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        Ok(ClientAddr(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|info| info.0.ip()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        for value in ["Bearer t1", "bearer t1", "BEARER t1", "bEaReR   t1 "] {
            assert_eq!(bearer_token(value), Some("t1"), "{value:?}");
        }
        for value in ["Basic t1", "Bearer", "Bearer ", "Bearert1", "t1"] {
            assert_eq!(bearer_token(value), None, "{value:?}");
        }
    }
}
