//! The one error type of the model seam.
//!
//! Every variant names the provider it came from and carries a message fit to show a user: the
//! server's own words where it gave any, never an API key (see [`crate::secret`]).

use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The provider refused the credentials (HTTP 401/403).
    #[error("the provider `{provider}` refused the API key: {message}")]
    Auth { provider: String, message: String },

    /// The provider does not serve the requested model (HTTP 404, or an error naming the model).
    #[error("provider `{provider}` does not know model `{model}`: {message}")]
    UnknownModel {
        provider: String,
        model: String,
        message: String,
    },

    /// No provider of that name is configured.
    #[error("unknown model provider `{name}`; configured providers: {}", configured.join(", "))]
    UnknownProvider {
        name: String,
        configured: Vec<String>,
    },

    /// Rate limiting or server errors that outlasted every retry.
    #[error("provider `{provider}` is unavailable after {attempts} attempt(s){}: {message}",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Unavailable {
        provider: String,
        /// The last HTTP status seen, if the server answered at all.
        status: Option<u16>,
        attempts: u32,
        message: String,
    },

    /// The provider could not be reached at all. The message is in plain words; the HTTP
    /// library's own error chain goes to the debug log, not here.
    #[error("cannot reach provider `{provider}`: {message}")]
    Connect { provider: String, message: String },

    /// The provider answered, but the stream stopped before the model said it was done: the
    /// connection broke or was closed early. Nothing of the partial answer should be kept.
    #[error("the provider `{provider}` {how} before the answer was complete")]
    StreamCut {
        provider: String,
        /// What happened, e.g. "closed the stream" or "broke the connection".
        how: &'static str,
    },

    /// The stream was open but no byte came for the provider's idle timeout.
    #[error("the model sent nothing for {} s (provider `{provider}`)", waited.as_secs_f64())]
    Idle { provider: String, waited: Duration },

    /// The provider took too long: to answer at all, or between two stream chunks.
    #[error("provider `{provider}` timed out {phase} after {}ms", waited.as_millis())]
    Timeout {
        provider: String,
        /// What we were waiting for, e.g. "waiting for response headers".
        phase: &'static str,
        waited: Duration,
    },

    /// The provider sent something that is not the OpenAI wire format.
    #[error("provider `{provider}` sent a malformed stream: {message}")]
    MalformedStream { provider: String, message: String },

    /// The provider answered something that is not the OpenAI format (outside a stream: a
    /// model list, a test answer).
    #[error("provider `{provider}` answered in an unexpected format: {message}")]
    Malformed { provider: String, message: String },

    /// The provider refused the request itself (another 4xx): a bug in what we sent, or a
    /// parameter this server does not accept.
    #[error("provider `{provider}` rejected the request (HTTP {status}): {message}")]
    Rejected {
        provider: String,
        status: u16,
        message: String,
    },

    /// The model itself reported a failure; the scripted provider's `error` turns end here too.
    #[error("the model reported an error: {0}")]
    Provider(String),

    /// The model configuration cannot work: a bad script, a bad model reference, a bad
    /// provider entry.
    #[error("invalid model configuration: {0}")]
    Config(String),
}

impl ModelError {
    /// Whether trying the same call again later may succeed. The provider already retried
    /// before returning; this tells the runtime whether a later, user-driven retry makes sense.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Unavailable { .. }
                | Self::Connect { .. }
                | Self::Timeout { .. }
                | Self::Idle { .. }
                | Self::StreamCut { .. }
                | Self::MalformedStream { .. }
        )
    }

    /// Whether this is a fault of a stream that was already answering — it broke, closed
    /// early, or sent a chunk that is not the wire format — so that asking again from the
    /// start, discarding the partial answer, is likely to work. Refusals (401, 404, other
    /// 4xx), the model's own errors and timeouts are not: a retry would fail the same way or
    /// only double the wait.
    pub fn is_stream_fault(&self) -> bool {
        matches!(self, Self::StreamCut { .. } | Self::MalformedStream { .. })
    }
}
