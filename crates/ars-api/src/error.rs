//! The one HTTP error type: every failure becomes `{error: {code, message, field?}}`.
//!
//! **Invariant:** internal details (database messages, paths) are logged, never sent.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::ValidationError;
use ars_store::StoreError;

/// The JSON body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong, for people and programs.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// A stable machine-readable code, e.g. `validation_failed`.
    pub code: &'static str,
    /// A sentence for people.
    pub message: String,
    /// The dotted path of the payload field at fault, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// An error answer of the HTTP API.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request cannot be read (malformed JSON, bad query string).
    #[error("{0}")]
    BadRequest(String),
    /// 401: no valid credentials.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: authenticated, but not allowed.
    #[error("{message}")]
    Forbidden {
        message: String,
        field: Option<String>,
    },
    /// 404: no such resource, or one the caller may not see.
    #[error("{0}")]
    NotFound(String),
    /// 405.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 409: the write conflicts with stored state (a taken slug or username).
    #[error("{message}")]
    Conflict {
        message: String,
        field: Option<String>,
    },
    /// 413: the body is over the limit.
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// 415: the body is not JSON.
    #[error("expected a JSON body with `Content-Type: application/json`")]
    UnsupportedMediaType,
    /// 422: the body is JSON but breaks a rule.
    #[error("{message}")]
    Unprocessable {
        message: String,
        field: Option<String>,
    },
    /// 500: our fault; the detail is logged, not sent.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn unprocessable(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Unprocessable {
            message: message.into(),
            field: Some(field.into()),
        }
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::Forbidden {
            message: message.into(),
            field: None,
        }
    }

    pub fn not_found(what: &str) -> Self {
        Self::NotFound(format!("{what} not found"))
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "bad_request",
            Self::Unauthorized(_) => "unauthorized",
            Self::Forbidden { .. } => "forbidden",
            Self::NotFound(_) => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Conflict { .. } => "conflict",
            Self::PayloadTooLarge { .. } => "payload_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Unprocessable { .. } => "validation_failed",
            Self::Internal(_) => "internal",
        }
    }

    fn field(&self) -> Option<String> {
        match self {
            Self::Forbidden { field, .. }
            | Self::Conflict { field, .. }
            | Self::Unprocessable { field, .. } => field.clone(),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = match &self {
            Self::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                "internal error".to_string()
            }
            other => other.to_string(),
        };
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message,
                field: self.field(),
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Conflict { field } => Self::Conflict {
                message: format!("{field} is already taken"),
                field: Some(field.to_string()),
            },
            StoreError::NotFound => Self::NotFound("not found".into()),
            StoreError::Invalid(detail) => Self::Unprocessable {
                message: detail,
                field: None,
            },
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(err: ValidationError) -> Self {
        match err {
            ValidationError::Invalid(e) => Self::Unprocessable {
                message: e.message,
                field: Some(e.field),
            },
            ValidationError::Forbidden(e) => Self::Forbidden {
                message: e.message,
                field: Some(e.field),
            },
        }
    }
}
