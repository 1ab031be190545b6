//! The one HTTP error type: every failure becomes `{error: {code, message, field?}}`.
//!
//! **Invariant:** internal details (database messages, paths) are logged, never sent.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{ErrorReason, Param, Reason, RunId, Subject, ValidationError};
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
    /// This exact error as a stable code, for a client to word in its user's language with
    /// `params` (the English `message` says the same).
    pub reason: ErrorReason,
    /// The reason's values by name: `field`, `max`, `min`, `limit`, `name`, `subject`, `path`,
    /// `retry_after_s`, … (numbers or text).
    #[schema(value_type = Object, additional_properties)]
    pub params: serde_json::Map<String, serde_json::Value>,
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
    /// Any of the above with its reason stated (otherwise the reason follows from the kind).
    #[error("{inner}")]
    Reasoned {
        inner: Box<ApiError>,
        reason: Reason,
    },
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

    /// 404 for a `subject` the caller cannot see.
    pub fn not_found(subject: Subject) -> Self {
        Self::NotFound(format!("{} not found", subject.noun()))
            .because(Reason::new(ErrorReason::NotFound).with("subject", subject))
    }

    /// 403: the caller may use the `subject` but not delete it.
    pub fn cannot_delete(subject: Subject, message: &str) -> Self {
        Self::forbidden(message)
            .because(Reason::new(ErrorReason::CannotDelete).with("subject", subject))
    }

    /// 403: a built-in `subject` is never deleted.
    pub fn builtin_cannot_be_deleted(subject: Subject, message: &str) -> Self {
        Self::forbidden(message)
            .because(Reason::new(ErrorReason::BuiltinCannotBeDeleted).with("subject", subject))
    }

    /// The error with its reason stated.
    pub fn because(self, reason: impl Into<Reason>) -> Self {
        let reason = reason.into();
        match self {
            Self::Reasoned { inner, .. } => Self::Reasoned { inner, reason },
            inner => Self::Reasoned {
                inner: Box::new(inner),
                reason,
            },
        }
    }

    /// A 422 as the 409 it is when the rule it breaks is at odds with stored state, keeping
    /// its words, field and reason; anything else as it is.
    pub fn as_conflict(self) -> Self {
        let reason = self.reason();
        match self.kind() {
            Self::Unprocessable { message, field } => Self::Conflict {
                message: message.clone(),
                field: field.clone(),
            }
            .because(reason),
            _ => self,
        }
    }

    /// The kind of error, under any stated reason.
    pub fn kind(&self) -> &ApiError {
        match self {
            Self::Reasoned { inner, .. } => inner.kind(),
            other => other,
        }
    }

    /// The reason the answer states, with its parameters (`field` always among them when the
    /// error names one).
    pub fn reason(&self) -> Reason {
        let mut reason = match self {
            Self::Reasoned { reason, .. } => reason.clone(),
            Self::BadRequest(_) => ErrorReason::MalformedRequest.into(),
            Self::Unauthorized(_) => ErrorReason::CredentialsInvalid.into(),
            Self::AccountDisabled => ErrorReason::AccountDisabled.into(),
            Self::Forbidden { .. } => ErrorReason::Forbidden.into(),
            Self::NotFound(_) => ErrorReason::NotFound.into(),
            Self::MethodNotAllowed => ErrorReason::MethodNotAllowed.into(),
            Self::Conflict { .. } => ErrorReason::Conflict.into(),
            Self::Busy { .. } => ErrorReason::ThreadBusy.into(),
            Self::PreconditionFailed(_) => ErrorReason::FileExists.into(),
            Self::Gone(_) => ErrorReason::Gone.into(),
            Self::PayloadTooLarge { limit } => {
                Reason::new(ErrorReason::BodyTooLarge).with("limit", *limit)
            }
            Self::TooLarge { .. } => ErrorReason::TooLarge.into(),
            Self::UnsupportedMediaType { .. } => ErrorReason::UnsupportedMediaType.into(),
            Self::Unprocessable { .. } => ErrorReason::InvalidValue.into(),
            Self::PathRefused(_) => ErrorReason::PathRefused.into(),
            Self::TooManyRequests { retry_after_s } => {
                Reason::new(ErrorReason::TooManyLogins).with("retry_after_s", *retry_after_s)
            }
            Self::Unavailable { retry_after_s, .. } => {
                Reason::new(ErrorReason::ServerBusy).with("retry_after_s", *retry_after_s)
            }
            Self::Internal(_) => ErrorReason::Internal.into(),
        };
        if let Some(field) = self.field()
            && reason.param("field").is_none()
        {
            reason = reason.with("field", field);
        }
        reason
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::Reasoned { inner, .. } => inner.status(),
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
            Self::Reasoned { inner, .. } => inner.code(),
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
            Self::Reasoned { inner, .. } => inner.public_message(),
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
            Self::Reasoned { inner, .. } => inner.field(),
            _ => None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = self.public_message();
        let reason = self.reason();
        let params = params_json(&reason.params);
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message,
                field: self.field(),
                active_run_id: match self.kind() {
                    Self::Busy { active_run_id, .. } => Some(*active_run_id),
                    _ => None,
                },
                reason: reason.code,
                params,
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
            self.kind()
        {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from(*retry_after_s),
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
            }
            .because(ErrorReason::Taken),
            StoreError::NotFound => Self::NotFound("not found".into()),
            StoreError::Busy { active } => Self::busy(active),
            StoreError::RunEnded { run } => Self::Conflict {
                message: format!("run {run} has ended"),
                field: None,
            }
            .because(ErrorReason::RunEnded),
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
            }
            .because(ErrorReason::NotReplaceable),
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

/// Parameters as the JSON object an answer carries.
pub(crate) fn params_json(
    params: &[(&'static str, Param)],
) -> serde_json::Map<String, serde_json::Value> {
    params
        .iter()
        .map(|(name, value)| {
            let value = match value {
                Param::Number(n) => serde_json::Value::from(*n),
                Param::Text(t) => serde_json::Value::from(t.as_str()),
            };
            ((*name).to_string(), value)
        })
        .collect()
}

/// The reason of a refused run input or message.
pub(crate) fn input_reason(error: &ars_domain::RunInputError) -> Reason {
    match error {
        ars_domain::RunInputError::Blank => ErrorReason::Blank.into(),
        ars_domain::RunInputError::TooLong => {
            Reason::new(ErrorReason::TooLong).with("max", ars_domain::RunInput::MAX_CHARS)
        }
    }
}

impl From<RuntimeError> for ApiError {
    fn from(err: RuntimeError) -> Self {
        match err {
            RuntimeError::Busy { active } => Self::busy(active),
            RuntimeError::NotFound(what) => Self::not_found(what),
            RuntimeError::NotWaiting { status } => Self::Conflict {
                message: err.to_string(),
                field: None,
            }
            .because(Reason::new(ErrorReason::RunNotWaiting).with("status", status.as_str())),
            RuntimeError::Ended { status } => Self::Conflict {
                message: err.to_string(),
                field: None,
            }
            .because(Reason::new(ErrorReason::RunEnded).with("status", status.as_str())),
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
        let reason = err.reason();
        let plain = match err {
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
        };
        plain.because(reason)
    }
}
