//! Why a request failed, as a stable code with its parameters, so a client words it in its
//! user's language from its own catalogue; the English sentence beside it stays for API users.
//!
//! **Invariant:** every reason the server can answer is a variant of [`ErrorReason`] (listed in
//! [`ErrorReason::ALL`] and in the OpenAPI document), and every thing a "not found" or "cannot
//! delete" names is a [`Subject`]: a client that translates each of them translates every error.

use serde::Serialize;
use utoipa::ToSchema;

macro_rules! codes {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$doc:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        $vis enum $name { $($(#[$doc])* $variant,)* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant,)*];

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text,)* }
            }
        }
    };
}

codes! {
    /// The stable code of an error answer (`error.reason`); `error.params` carries its values.
    pub enum ErrorReason {
        // The request itself.
        /// The body or query cannot be read (malformed JSON, a bad query string).
        MalformedRequest => "malformed_request",
        /// The body is over the size limit (`limit` bytes).
        BodyTooLarge => "body_too_large",
        /// The body is not of a type the endpoint reads.
        UnsupportedMediaType => "unsupported_media_type",
        /// The method is not served at this path.
        MethodNotAllowed => "method_not_allowed",
        /// Nothing is served at this path.
        NoSuchEndpoint => "no_such_endpoint",
        // Who is asking.
        /// No credentials were sent.
        CredentialsMissing => "credentials_missing",
        /// The credentials are malformed, expired or unknown.
        CredentialsInvalid => "credentials_invalid",
        /// The username or the password is wrong.
        LoginFailed => "login_failed",
        /// Too many failed logins (`retry_after_s`).
        TooManyLogins => "too_many_logins",
        /// The account is disabled.
        AccountDisabled => "account_disabled",
        /// Only an administrator may do this.
        AdminOnly => "admin_only",
        /// The caller may use the `subject` but not delete it.
        CannotDelete => "cannot_delete",
        /// The caller may use the `subject` but not change it.
        CannotChange => "cannot_change",
        /// A built-in `subject` cannot be deleted.
        BuiltinCannotBeDeleted => "builtin_cannot_be_deleted",
        /// A built-in agent keeps this field as it is.
        BuiltinKeeps => "builtin_keeps",
        /// An administrator cannot demote or disable their own account.
        OwnAccount => "own_account",
        /// The change would leave no active administrator (`name` is the last one).
        LastAdmin => "last_admin",
        /// Any other refusal of a right.
        Forbidden => "forbidden",
        // What is asked for.
        /// No `subject` of that id or name is visible to the caller (`name` when known).
        NotFound => "not_found",
        /// The thing existed but is no longer kept (expired run events).
        Gone => "gone",
        // Conflicts with what is stored.
        /// The `field` value is already taken.
        Taken => "taken",
        /// A shared skill of this `name` exists; the upload may replace it.
        SkillExists => "skill_exists",
        /// A file at `path` exists and the request asked not to replace one.
        FileExists => "file_exists",
        /// The thread has an active run.
        ThreadBusy => "thread_busy",
        /// The run has ended.
        RunEnded => "run_ended",
        /// The run does not wait for a decision.
        RunNotWaiting => "run_not_waiting",
        /// The default agent cannot become a subagent without saying so.
        DefaultAgentStays => "default_agent_stays",
        /// The message to replace cannot be replaced.
        NotReplaceable => "not_replaceable",
        /// Any other conflict with stored state.
        Conflict => "conflict",
        // Rules of a field (each names `field`).
        /// Required and missing.
        Required => "required",
        /// Empty or only white space.
        Blank => "blank",
        /// Longer than `max` characters.
        TooLong => "too_long",
        /// Must be 1 to `max` characters.
        Length => "length",
        /// Holds control characters, bidirectional controls or line breaks.
        BadCharacters => "bad_characters",
        /// Not a slug: 1 to `max` characters of a-z, 0-9 and '-'.
        BadSlug => "bad_slug",
        /// Not a username: 1 to `max` characters of a-z, 0-9, '.', '_' and '-'.
        BadUsername => "bad_username",
        /// A password must be `min` to `max` characters.
        PasswordLength => "password_length",
        /// More than `max` items.
        TooMany => "too_many",
        /// Outside `min`..=`max`.
        OutOfRange => "out_of_range",
        /// `name` is listed twice.
        Duplicate => "duplicate",
        /// `name` is not a known value of the field (a tool, a provider, a knowledge base…).
        Unknown => "unknown",
        /// Not a URL the field accepts.
        BadUrl => "bad_url",
        /// A subagent cannot have subagents.
        SubagentNesting => "subagent_nesting",
        /// A workdir path the sandbox refuses.
        PathRefused => "path_refused",
        /// Any other broken rule of the field.
        InvalidValue => "invalid_value",
        // Uploads and documents.
        /// `name` is not a format knowledge bases read.
        UnsupportedFormat => "unsupported_format",
        /// `name` is larger than `limit` bytes, the most one file may hold.
        FileTooLarge => "file_too_large",
        /// The knowledge base would hold more than `limit` bytes.
        KnowledgeBaseFull => "knowledge_base_full",
        /// `name` is empty.
        EmptyFile => "empty_file",
        /// Any other part of the request over a limit of its own.
        TooLarge => "too_large",
        // The server.
        /// Busy with others' work; retry after `retry_after_s`.
        ServerBusy => "server_busy",
        /// Our fault; the detail is logged.
        Internal => "internal",
    }
}

codes! {
    /// What a reason speaks of (`params.subject`), so a client names it in its own words.
    pub enum Subject {
        Agent => "agent",
        Thread => "thread",
        Run => "run",
        Message => "message",
        File => "file",
        Skill => "skill",
        SkillFile => "skill_file",
        User => "user",
        Token => "token",
        ModelProvider => "model_provider",
        KnowledgeBase => "knowledge_base",
        Document => "document",
        Passage => "passage",
        McpServer => "mcp_server",
        McpSession => "mcp_session",
        Metrics => "metrics",
    }
}

impl Subject {
    /// The English noun, for the sentence beside the code.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Thread => "thread",
            Self::Run => "run",
            Self::Message => "message",
            Self::File => "file",
            Self::Skill => "skill",
            Self::SkillFile => "skill file",
            Self::User => "user",
            Self::Token => "token",
            Self::ModelProvider => "model provider",
            Self::KnowledgeBase => "knowledge base",
            Self::Document => "document",
            Self::Passage => "cited passage",
            Self::McpServer => "MCP server",
            Self::McpSession => "MCP session",
            Self::Metrics => "metrics",
        }
    }
}

/// One parameter's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Param {
    Number(u64),
    Text(String),
}

impl From<u64> for Param {
    fn from(n: u64) -> Self {
        Self::Number(n)
    }
}

impl From<usize> for Param {
    fn from(n: usize) -> Self {
        Self::Number(n as u64)
    }
}

impl From<u32> for Param {
    fn from(n: u32) -> Self {
        Self::Number(u64::from(n))
    }
}

impl From<i64> for Param {
    fn from(n: i64) -> Self {
        Self::Number(n.max(0) as u64)
    }
}

impl From<&str> for Param {
    fn from(s: &str) -> Self {
        Self::Text(s.to_string())
    }
}

impl From<String> for Param {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<Subject> for Param {
    fn from(s: Subject) -> Self {
        Self::Text(s.as_str().to_string())
    }
}

/// A reason with its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    pub code: ErrorReason,
    pub params: Vec<(&'static str, Param)>,
}

impl Reason {
    pub fn new(code: ErrorReason) -> Self {
        Self {
            code,
            params: Vec::new(),
        }
    }

    /// Adds (or replaces) a parameter.
    pub fn with(mut self, name: &'static str, value: impl Into<Param>) -> Self {
        let value = value.into();
        match self.params.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.params.push((name, value)),
        }
        self
    }

    /// The parameter's value, when set.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

impl From<ErrorReason> for Reason {
    fn from(code: ErrorReason) -> Self {
        Self::new(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_and_subject_has_its_wire_name() {
        for reason in ErrorReason::ALL {
            let wire = serde_json::to_value(reason).unwrap_or_default();
            assert_eq!(wire, reason.as_str());
        }
        for subject in Subject::ALL {
            let wire = serde_json::to_value(subject).unwrap_or_default();
            assert_eq!(wire, subject.as_str());
        }
        let mut names: Vec<_> = ErrorReason::ALL.iter().map(|r| r.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorReason::ALL.len(), "no name twice");
    }

    #[test]
    fn a_parameter_set_twice_keeps_the_last_value() {
        let reason = Reason::new(ErrorReason::TooLong)
            .with("max", 10u64)
            .with("max", 20u64);
        assert_eq!(reason.params, vec![("max", Param::Number(20))]);
        assert_eq!(reason.param("max"), Some(&Param::Number(20)));
    }
}
