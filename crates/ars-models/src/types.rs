//! The canonical chat request and the events of a streamed answer.
//!
//! **Boundary:** these are the only shapes the runtime sees. Each provider converts them to and
//! from its own wire types in its own module, so a provider quirk never leaks past the seam.
//! They derive serde so the runtime can checkpoint a conversation; that JSON is ours, not any
//! provider's.

use serde::{Deserialize, Serialize};

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of a conversation. An enum rather than a struct with optional fields, so an
/// assistant message is the only one that can carry tool calls and a tool message always
/// names the call it answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        #[serde(default)]
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant message, e.g. a finished [`AssistantTurn`] fed back into the next request.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls,
        }
    }

    /// The result of the tool call `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    pub fn role(&self) -> Role {
        match self {
            Self::System { .. } => Role::System,
            Self::User { .. } => Role::User,
            Self::Assistant { .. } => Role::Assistant,
            Self::Tool { .. } => Role::Tool,
        }
    }

    /// The message text (for an assistant message, without its tool calls).
    pub fn content(&self) -> &str {
        match self {
            Self::System { content }
            | Self::User { content }
            | Self::Assistant { content, .. }
            | Self::Tool { content, .. } => content,
        }
    }
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    /// Tells the model when to use the tool; models lean on it heavily.
    pub description: String,
    /// JSON Schema of the arguments object; shared, as the tool keeps it once for every run.
    pub parameters: std::sync::Arc<serde_json::Value>,
}

/// Sampling parameters. `None` leaves the choice to the bound model's configuration, then to
/// the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplingParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
}

impl SamplingParams {
    /// Each field of `self`, or else the one of `fallback`.
    pub fn or(self, fallback: Self) -> Self {
        Self {
            temperature: self.temperature.or(fallback.temperature),
            max_tokens: self.max_tokens.or(fallback.max_tokens),
            top_p: self.top_p.or(fallback.top_p),
        }
    }
}

impl From<&ars_domain::ModelConfig> for SamplingParams {
    fn from(config: &ars_domain::ModelConfig) -> Self {
        Self {
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            top_p: config.top_p,
        }
    }
}

/// One call to a model. The model name is not here: a [`crate::ChatModel`] is already bound to
/// one by [`crate::ModelRegistry::model_for`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Shared: a run's tools are the same at every step, so each step's request holds them by
    /// reference, not as a copy of every schema.
    #[serde(default, skip_serializing_if = "no_tools")]
    pub tools: std::sync::Arc<Vec<ToolDefinition>>,
    /// Overrides the bound model's configured parameters field by field.
    #[serde(default)]
    pub params: SamplingParams,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::default()
        }
    }

    pub fn with_tools(mut self, tools: impl Into<std::sync::Arc<Vec<ToolDefinition>>>) -> Self {
        self.tools = tools.into();
        self
    }
}

fn no_tools(tools: &std::sync::Arc<Vec<ToolDefinition>>) -> bool {
    tools.is_empty()
}

/// A tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Echoed back in the tool message that answers this call.
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them: raw JSON text, not yet validated. The runtime
    /// parses it and reports bad JSON back to the model instead of failing the run.
    pub arguments: String,
}

/// Tokens spent by one model call: the workspace's one `Usage` type, shared with runs.
pub use ars_domain::Usage;

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end of the answer.
    Stop,
    /// The model wants its tool calls run. Some servers say `Stop` even then: the runtime
    /// should look at [`AssistantTurn::tool_calls`], not only at this.
    ToolCalls,
    /// `max_tokens` cut the answer short.
    Length,
    /// The provider's filter cut the answer.
    ContentFilter,
    /// A reason this crate does not know, kept verbatim.
    Other(String),
}

impl FinishReason {
    /// Maps the OpenAI wire names (shared by every compatible server).
    pub fn from_wire(reason: &str) -> Self {
        match reason {
            "stop" | "eos" | "end_turn" => Self::Stop,
            "tool_calls" | "function_call" => Self::ToolCalls,
            "length" => Self::Length,
            "content_filter" => Self::ContentFilter,
            other => Self::Other(other.to_string()),
        }
    }
}

/// One piece of a streamed answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatEvent {
    /// More answer text.
    TextDelta { text: String },
    /// A fragment of the tool call at `index`. The id and name usually come whole in the first
    /// fragment and the arguments in pieces; [`crate::TurnAccumulator`] joins them.
    ToolCallDelta {
        index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default)]
        arguments: String,
    },
    /// Token usage of the whole call; it may come after [`ChatEvent::Finished`].
    Usage(Usage),
    /// The model stopped.
    Finished { reason: FinishReason },
}

/// A finished assistant turn, folded from the events by [`crate::TurnAccumulator`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantTurn {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish_reason: FinishReason,
}

impl AssistantTurn {
    /// The turn as a message for the next request of a tool loop.
    pub fn to_message(&self) -> Message {
        Message::assistant(self.text.clone(), self.tool_calls.clone())
    }
}
