//! Validation errors: a rule broken by a write, named by the field that broke it.

use std::fmt;

/// One broken rule: the dotted path of the offending field and a sentence saying why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A rejected write. The first broken rule is reported; nothing is written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// The input breaks a rule (answered as 422).
    #[error("{}: {}", .0.field, .0.message)]
    Invalid(FieldError),
    /// The caller lacks the right to make this change (answered as 403).
    #[error("{}: {}", .0.field, .0.message)]
    Forbidden(FieldError),
    /// The input is sound but at odds with what is stored (answered as 409): a rule no
    /// schema of the request can state.
    #[error("{}: {}", .0.field, .0.message)]
    Conflict(FieldError),
}

impl ValidationError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid(FieldError::new(field, message))
    }

    pub fn forbidden(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Forbidden(FieldError::new(field, message))
    }

    pub fn conflict(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Conflict(FieldError::new(field, message))
    }

    pub fn field(&self) -> &str {
        match self {
            Self::Invalid(e) | Self::Forbidden(e) | Self::Conflict(e) => &e.field,
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}
