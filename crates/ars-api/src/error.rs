//! The one HTTP error type: every failure becomes `{error: {code, message, field?}}`.
//!
//! **Invariant:** internal details (database messages, paths) are logged, never sent.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{RunId, ValidationError};
use ars_events::EventError;
use ars_runtime::RuntimeError;
use ars_store::{StoreError, Unreplaceable};

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
    /// `busy` errors: the run that keeps the thread busy, to watch or cancel instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub active_run_id: Option<RunId>,
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
    /// 403: the account is disabled (at login, and for every request with its tokens).
    #[error("this account is disabled; ask an administrator to enable it")]
    AccountDisabled,
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
    /// 409: the thread has an active run; nothing was queued or deleted.
    #[error("{message}")]
    Busy {
        message: String,
        active_run_id: RunId,
    },
    /// 412: a precondition of the request (`If-None-Match: *`) does not hold.
    #[error("{0}")]
    PreconditionFailed(String),
    /// 410: what was asked for existed but is no longer kept (expired run events).
    #[error("{0}")]
    Gone(String),
    /// 413: the body is over the limit.
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// 413: a part of the request is over a limit of its own (a document, a knowledge base's
    /// total); the message names the part and the limit.
    #[error("{message}")]
    TooLarge {
        message: String,
        field: Option<String>,
    },
    /// 415: the body is not of a type the endpoint reads (`expected` names the types, e.g.
    /// "a JSON body with `Content-Type: application/json`").
    #[error("expected {expected}")]
    UnsupportedMediaType { expected: &'static str },
    /// 422: the body is JSON but breaks a rule.
    #[error("{message}")]
    Unprocessable {
        message: String,
        field: Option<String>,
    },
    /// 422: a workdir path the sandbox refuses (`..` out, a symlink out, NUL bytes, too long,
    /// absolute), with the field `path`.
    #[error("{0}")]
    PathRefused(String),
    /// 429: too many failed logins; retry after this many seconds (also in `Retry-After`).
    #[error("too many failed logins; try again in {retry_after_s} s")]
    TooManyRequests { retry_after_s: u64 },
    /// 503: the server is busy with others' work (uploads held at once, say); retry after
    /// this many seconds (also in `Retry-After`).
    #[error("{message}")]
    Unavailable { message: String, retry_after_s: u64 },
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
            Self::Forbidden { .. } | Self::AccountDisabled => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict { .. } | Self::Busy { .. } => StatusCode::CONFLICT,
            Self::Gone(_) => StatusCode::GONE,
            Self::PreconditionFailed(_) => StatusCode::PRECONDITION_FAILED,
            Self::PayloadTooLarge { .. } | Self::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Unprocessable { .. } | Self::PathRefused(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub(crate) fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "bad_request",
            Self::Unauthorized(_) => "unauthorized",
            Self::Forbidden { .. } => "forbidden",
            Self::AccountDisabled => "account_disabled",
            Self::NotFound(_) => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Conflict { .. } => "conflict",
            Self::Busy { .. } => "busy",
            Self::Gone(_) => "gone",
            Self::PreconditionFailed(_) => "precondition_failed",
            Self::PayloadTooLarge { .. } | Self::TooLarge { .. } => "payload_too_large",
            Self::UnsupportedMediaType { .. } => "unsupported_media_type",
            Self::Unprocessable { .. } => "validation_failed",
            Self::PathRefused(_) => "path_refused",
            Self::TooManyRequests { .. } => "too_many_requests",
            Self::Unavailable { .. } => "unavailable",
            Self::Internal(_) => "internal",
        }
    }

    /// The sentence an answer carries: an internal error's detail is logged here and replaced.
    pub(crate) fn public_message(&self) -> String {
        match self {
            Self::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                "internal error".to_string()
            }
            other => other.to_string(),
        }
    }

    pub(crate) fn field(&self) -> Option<String> {
        match self {
            Self::Forbidden { field, .. }
            | Self::Conflict { field, .. }
            | Self::TooLarge { field, .. }
            | Self::Unprocessable { field, .. } => field.clone(),
            Self::PathRefused(_) => Some("path".into()),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = self.public_message();
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message,
                field: self.field(),
                active_run_id: match &self {
                    Self::Busy { active_run_id, .. } => Some(*active_run_id),
                    _ => None,
                },
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        if let Self::TooManyRequests { retry_after_s } | Self::Unavailable { retry_after_s, .. } =
            self
        {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from(retry_after_s),
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
            StoreError::Busy { active } => Self::busy(active),
            StoreError::RunEnded { run } => Self::Conflict {
                message: format!("run {run} has ended"),
                field: None,
            },
            // Well-formed, but at odds with the stored thread: a 409 like every reference to a
            // row that is not there (a 422 is only for what the schema itself refuses).
            StoreError::NotReplaceable { reason, .. } => Self::Conflict {
                message: match reason {
                    Unreplaceable::NotInThread => "replace_from names no message of this thread",
                    Unreplaceable::NotUserMessage => {
                        "replace_from must name a user message, not an answer, tool result or \
                         notice"
                    }
                    Unreplaceable::AlreadyReplaced => {
                        "the message replace_from names has already been replaced; name the \
                         message that took its place"
                    }
                }
                .into(),
                field: Some("replace_from".into()),
            },
            StoreError::Invalid(detail) => Self::Unprocessable {
                message: detail,
                field: None,
            },
            other => Self::Internal(other.to_string()),
        }
    }
}

impl ApiError {
    /// The 409 for a thread that already has an active run.
    pub fn busy(active_run_id: RunId) -> Self {
        Self::Busy {
            message: format!(
                "the thread already has an active run ({active_run_id}); wait for it or cancel it"
            ),
            active_run_id,
        }
    }
}

impl From<RuntimeError> for ApiError {
    fn from(err: RuntimeError) -> Self {
        match err {
            RuntimeError::Busy { active } => Self::busy(active),
            RuntimeError::NotFound(what) => Self::not_found(what),
            RuntimeError::NotWaiting { .. } | RuntimeError::Ended { .. } => Self::Conflict {
                message: err.to_string(),
                field: None,
            },
            RuntimeError::Invalid(e) => e.into(),
            RuntimeError::Store(e) => e.into(),
        }
    }
}

impl From<EventError> for ApiError {
    fn from(err: EventError) -> Self {
        match err {
            EventError::NotRetained => Self::Gone(
                "the run's events are no longer retained; read the run and the thread's \
                 messages instead"
                    .into(),
            ),
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
            ValidationError::Conflict(e) => Self::Conflict {
                message: e.message,
                field: Some(e.field),
            },
        }
    }
}
