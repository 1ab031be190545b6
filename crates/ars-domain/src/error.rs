//! Validation errors: a rule broken by a write, named by the field that broke it.

use std::fmt;

use crate::reason::{ErrorReason, Param, Reason};

/// One broken rule: the dotted path of the offending field, a sentence saying why, and the rule
/// as a stable code with its values (when the rule has one of its own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
    pub reason: Option<Reason>,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
            reason: None,
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

    /// Longer than `max` characters.
    pub fn too_long(field: impl Into<String>, max: impl Into<Param>) -> Self {
        let max = max.into();
        let shown = param_text(&max);
        Self::invalid(field, format!("must be at most {shown} characters"))
            .because(Reason::new(ErrorReason::TooLong).with("max", max))
    }

    /// Not 1 to `max` characters.
    pub fn length(field: impl Into<String>, max: impl Into<Param>) -> Self {
        let max = max.into();
        let shown = param_text(&max);
        Self::invalid(field, format!("must be 1-{shown} characters"))
            .because(Reason::new(ErrorReason::Length).with("max", max))
    }

    /// The rule with its code and values; the sentence stays.
    pub fn because(mut self, reason: impl Into<Reason>) -> Self {
        self.detail_mut().reason = Some(reason.into());
        self
    }

    pub fn field(&self) -> &str {
        &self.detail().field
    }

    pub fn detail(&self) -> &FieldError {
        match self {
            Self::Invalid(e) | Self::Forbidden(e) | Self::Conflict(e) => e,
        }
    }

    fn detail_mut(&mut self) -> &mut FieldError {
        match self {
            Self::Invalid(e) | Self::Forbidden(e) | Self::Conflict(e) => e,
        }
    }

    /// The rule's code: its own, or what every rule of this kind is.
    pub fn reason(&self) -> Reason {
        match (self, &self.detail().reason) {
            (_, Some(reason)) => reason.clone(),
            (Self::Invalid(_), None) => ErrorReason::InvalidValue.into(),
            (Self::Forbidden(_), None) => ErrorReason::Forbidden.into(),
            (Self::Conflict(_), None) => ErrorReason::Conflict.into(),
        }
    }
}

fn param_text(param: &Param) -> String {
    match param {
        Param::Number(n) => n.to_string(),
        Param::Text(t) => t.clone(),
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}
