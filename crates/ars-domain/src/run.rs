//! Runs: one execution of an agent on a thread, from the user's input to a terminal status.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::lineage::{Delivery, RunLineage};
use crate::waiting::PendingItem;
use crate::{AgentId, RunId, ThreadId, UserId};

/// The life of a run. `Pending`, `Running` and `Waiting` are active; every other status is
/// terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Pending,
    Running,
    /// Stopped before a turn's calls until a person decides on them (`pending`); holds no
    /// lease and no task, and resumes on whichever instance receives the decision.
    Waiting,
    Success,
    Error,
    Cancelled,
    Timeout,
    /// Cut off by a server stop; its committed messages are kept.
    Interrupted,
}

impl RunStatus {
    pub const ALL: [RunStatus; 8] = [
        Self::Pending,
        Self::Running,
        Self::Waiting,
        Self::Success,
        Self::Error,
        Self::Cancelled,
        Self::Timeout,
        Self::Interrupted,
    ];

    pub fn is_terminal(self) -> bool {
        !matches!(self, Self::Pending | Self::Running | Self::Waiting)
    }

    /// Whether an instance executes (or is about to execute) the run: a waiting run is active
    /// but executed nowhere.
    pub fn is_executing(self) -> bool {
        matches!(self, Self::Pending | Self::Running)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Success => "success",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Tokens spent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
    }
}

/// A run as stored and served.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: RunId,
    pub thread_id: ThreadId,
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub status: RunStatus,
    /// The user's message that started the run.
    pub input: String,
    /// The final assistant text, once there is one.
    pub output: Option<String>,
    pub error: Option<String>,
    /// Set on some failed runs: what went wrong as a stable code a client can translate
    /// (`error` keeps the words).
    pub error_code: Option<RunErrorCode>,
    /// This run's own tokens (children's are reported separately and rolled up by the caller).
    pub usage: Usage,
    /// Set on subagent runs: which run's tool call started this one, and how it takes the
    /// result. Served as `parent_run_id`, `parent_tool_call_id` and `delivery`.
    #[serde(flatten, with = "crate::lineage::run_fields")]
    pub lineage: Option<RunLineage>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// What a `waiting` run needs decisions on; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingItem>,
}

impl Run {
    /// The run whose tool call started this one, if any.
    pub fn parent_run_id(&self) -> Option<RunId> {
        self.lineage.as_ref().map(|l| l.parent_run_id)
    }

    /// How the parent takes this run's result, if it has a parent (and it was recorded).
    pub fn delivery(&self) -> Option<Delivery> {
        self.lineage.as_ref().and_then(|l| l.delivery)
    }
}

/// A run to create: `pending`, or `running` when its executor holds a slot for it already.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRun {
    pub thread_id: ThreadId,
    pub agent_id: AgentId,
    pub user_id: UserId,
    pub input: String,
    /// Set on subagent runs.
    pub lineage: Option<RunLineage>,
    /// The instance that will execute it, and until when (renewed while it runs).
    pub lease: Option<Lease>,
    /// A run a background child's end starts on its parent thread (a wake): the completion
    /// notice about that child, which is the run's input message. Its creation tells the
    /// child's parent of the end, so it happens once per child.
    pub woken_by: Option<crate::MessageNotice>,
    /// A thread to create with the run, in its transaction (a subagent's new thread: one
    /// commit for the thread, the run and its input).
    pub new_thread: Option<crate::Thread>,
    /// It starts executing at once (its executor took a free slot for it): created `running`,
    /// started when created, instead of `pending` and marked running in a commit of its own.
    pub running: bool,
}

/// Who executes an active run, and until when that claim holds unless renewed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The executing instance's id.
    pub owner: String,
    /// When the lease runs out, in Unix milliseconds.
    pub expires_ms: i64,
}

/// How a run ended, written once. Each variant carries exactly what that ending has: only a
/// success has an output, only a failure a message of its own.
#[derive(Clone, Debug, PartialEq)]
pub enum RunOutcome {
    /// The model gave its final answer.
    Success { output: String, usage: Usage },
    /// The run failed; `message` says why in plain words, `code` (when known) as a stable
    /// code.
    Error {
        message: String,
        code: Option<RunErrorCode>,
        usage: Usage,
    },
    /// Someone cancelled it (the user, the parent run, the API).
    Cancelled { usage: Usage },
    /// It hit its wall-clock limit.
    Timeout { limit_s: u64, usage: Usage },
    /// A server stop (or a lost executor) cut it off; `reason` says which.
    Interrupted { reason: String, usage: Usage },
}

impl RunOutcome {
    pub fn status(&self) -> RunStatus {
        match self {
            Self::Success { .. } => RunStatus::Success,
            Self::Error { .. } => RunStatus::Error,
            Self::Cancelled { .. } => RunStatus::Cancelled,
            Self::Timeout { .. } => RunStatus::Timeout,
            Self::Interrupted { .. } => RunStatus::Interrupted,
        }
    }

    /// The final answer, for a success.
    pub fn output(&self) -> Option<&str> {
        match self {
            Self::Success { output, .. } => Some(output),
            _ => None,
        }
    }

    /// What the run's `error` field says, for every ending but a success.
    pub fn error(&self) -> Option<String> {
        match self {
            Self::Success { .. } => None,
            Self::Error { message, .. } => Some(message.clone()),
            Self::Cancelled { .. } => Some("cancelled".into()),
            Self::Timeout { limit_s, .. } => Some(format!("{TIME_LIMIT_WORDS}{limit_s} s")),
            Self::Interrupted { reason, .. } => Some(reason.clone()),
        }
    }

    /// The stable code of a failure, when it has one.
    pub fn error_code(&self) -> Option<RunErrorCode> {
        match self {
            Self::Error { code, .. } => *code,
            _ => None,
        }
    }

    /// A failure with its code and words.
    pub fn failed(failure: RunFailure, usage: Usage) -> Self {
        Self::Error {
            message: failure.message,
            code: failure.code,
            usage,
        }
    }

    pub fn usage(&self) -> Usage {
        match self {
            Self::Success { usage, .. }
            | Self::Error { usage, .. }
            | Self::Cancelled { usage }
            | Self::Timeout { usage, .. }
            | Self::Interrupted { usage, .. } => *usage,
        }
    }
}

/// The words of a timed-out run's error, before its limit in seconds.
const TIME_LIMIT_WORDS: &str = "the run hit its time limit of ";

/// The values a client needs to word a run's end in its own language, read back from what the
/// run stores: a timeout's `limit_s`.
pub fn end_params(status: RunStatus, error: Option<&str>) -> Vec<(&'static str, crate::Param)> {
    let limit = (status == RunStatus::Timeout)
        .then_some(error)
        .flatten()
        .and_then(|e| e.strip_prefix(TIME_LIMIT_WORDS))
        .and_then(|rest| rest.strip_suffix(" s"))
        .and_then(|n| n.parse::<u64>().ok());
    limit
        .map(|n| vec![("limit_s", crate::Param::Number(n))])
        .unwrap_or_default()
}

/// Why a run failed, for clients to translate: a stable code beside the run's `error` words.
/// Only failures a user can act on have one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunErrorCode {
    /// Neither the agent nor the server names a model.
    NoModelConfigured,
    /// The agent's model provider is not (or no longer) configured.
    UnknownProvider,
    /// The provider's configuration cannot work (e.g. its stored key cannot be decrypted).
    ModelConfigInvalid,
    /// The provider refused the API key (HTTP 401/403).
    ModelBadKey,
    /// The provider does not serve the model.
    ModelUnknownModel,
    /// The provider could not be reached, or did not answer in time.
    ModelUnreachable,
    /// Any other failure of the model or its provider.
    ModelError,
    /// The run took its most model steps without a final answer.
    StepLimit,
    /// The run spent its token budget.
    TokenBudget,
    /// The model kept producing tool calls whose arguments are not JSON.
    InvalidToolArguments,
    /// The run's tree — the run with every subagent run it started — spent its budget
    /// (`limits.max_total_tokens`), or a subagent spent what its parent's budget left it.
    BudgetExceeded,
}

impl RunErrorCode {
    pub const ALL: [Self; 11] = [
        Self::NoModelConfigured,
        Self::UnknownProvider,
        Self::ModelConfigInvalid,
        Self::ModelBadKey,
        Self::ModelUnknownModel,
        Self::ModelUnreachable,
        Self::ModelError,
        Self::StepLimit,
        Self::TokenBudget,
        Self::InvalidToolArguments,
        Self::BudgetExceeded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoModelConfigured => "no_model_configured",
            Self::UnknownProvider => "unknown_provider",
            Self::ModelConfigInvalid => "model_config_invalid",
            Self::ModelBadKey => "model_bad_key",
            Self::ModelUnknownModel => "model_unknown_model",
            Self::ModelUnreachable => "model_unreachable",
            Self::ModelError => "model_error",
            Self::StepLimit => "step_limit",
            Self::TokenBudget => "token_budget",
            Self::InvalidToolArguments => "invalid_tool_arguments",
            Self::BudgetExceeded => "budget_exceeded",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// A failure on its way to a run's end: its words and, when it has one, its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFailure {
    pub code: Option<RunErrorCode>,
    pub message: String,
}

impl RunFailure {
    pub fn new(code: RunErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: Some(code),
            message: message.into(),
        }
    }
}

impl From<String> for RunFailure {
    fn from(message: String) -> Self {
        Self {
            code: None,
            message,
        }
    }
}

impl From<&str> for RunFailure {
    fn from(message: &str) -> Self {
        message.to_string().into()
    }
}

/// The user's message that starts a run: not blank, at most [`RunInput::MAX_CHARS`]
/// characters. Every way of starting a run — the REST API, `/api/mcp`, a subagent's
/// delegation — builds one, so the rule is stated here once and `start_run` cannot be handed
/// anything else; each caller words a refusal its own way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInput(String);

/// Why a text cannot start a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunInputError {
    #[error("the input must not be blank")]
    Blank,
    #[error("the input is longer than {} characters", RunInput::MAX_CHARS)]
    TooLong,
}

impl RunInput {
    /// The longest input, in characters.
    pub const MAX_CHARS: usize = 100_000;

    /// Checks `text` against the rule: blank first, then length.
    pub fn new(text: impl Into<String>) -> Result<Self, RunInputError> {
        let text = text.into();
        if text.trim().is_empty() {
            return Err(RunInputError::Blank);
        }
        if text.chars().count() > Self::MAX_CHARS {
            return Err(RunInputError::TooLong);
        }
        Ok(Self(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeouts_limit_is_read_back_from_its_words() {
        let outcome = RunOutcome::Timeout {
            limit_s: 42,
            usage: Usage::default(),
        };
        let error = outcome.error();
        assert_eq!(
            end_params(RunStatus::Timeout, error.as_deref()),
            vec![("limit_s", crate::Param::Number(42))]
        );
        assert!(end_params(RunStatus::Error, error.as_deref()).is_empty());
        assert!(end_params(RunStatus::Timeout, Some("something else")).is_empty());
    }

    #[test]
    fn error_codes_round_trip_and_match_their_wire_names() {
        for code in RunErrorCode::ALL {
            assert_eq!(RunErrorCode::parse(code.as_str()), Some(code));
            let wire = serde_json::to_value(code).unwrap_or_default();
            assert_eq!(wire, code.as_str());
        }
    }

    #[test]
    fn a_run_input_is_not_blank_and_not_too_long() {
        assert_eq!(RunInput::new("go").unwrap().as_str(), "go");
        assert_eq!(RunInput::new(" \n\t"), Err(RunInputError::Blank));
        assert_eq!(RunInput::new(""), Err(RunInputError::Blank));
        let longest = "é".repeat(RunInput::MAX_CHARS);
        assert!(
            RunInput::new(longest.clone()).is_ok(),
            "counted in characters"
        );
        assert_eq!(
            RunInput::new(format!("{longest}x")),
            Err(RunInputError::TooLong)
        );
    }
}
