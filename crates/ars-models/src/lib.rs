//! The ARS `ChatModel` seam: how the runtime talks to language models.
//!
//! - [`types`]: the one canonical request ([`ChatRequest`], [`Message`], [`ToolDefinition`]) and
//!   the events of a streamed answer ([`ChatEvent`]).
//! - [`model`]: the object-safe [`ChatModel`] trait; a call returns a [`ChatStream`], and
//!   dropping that stream cancels the call.
//! - [`accumulator`]: [`TurnAccumulator`] folds the events into an [`AssistantTurn`].
//! - [`providers`]: the OpenAI-compatible HTTP provider and the deterministic scripted
//!   test/demo provider, each with its wire format private to its module.
//! - [`registry`]: [`ModelRegistry`] turns an agent's `ModelConfig` into a model.
//! - [`config`]: provider configuration and all timing, so tests can run in milliseconds.
//!
//! **Boundary:** this crate knows HTTP only as a client of model servers. It knows nothing of
//! the runtime, the store or the API; API keys never appear in its `Debug` output, logs or
//! errors.

pub mod accumulator;
pub mod config;
pub mod error;
pub mod model;
pub mod providers;
pub mod registry;
pub mod secret;
pub mod types;

pub use accumulator::TurnAccumulator;
pub use config::{ModelsConfig, OpenAiOptions, ProviderConfig, ProviderKind, parse_model_ref};
pub use error::ModelError;
pub use model::{ChatModel, ChatStream};
pub use providers::openai::{OpenAiModel, OpenAiProvider};
pub use providers::scripted::{ScriptedModel, validate_script};
pub use registry::{ExtraProvider, ModelRegistry, ProviderInfo, ProviderSource};
pub use secret::ApiKey;
pub use types::{
    AssistantTurn, ChatEvent, ChatRequest, FinishReason, Message, Role, SamplingParams, ToolCall,
    ToolDefinition, Usage,
};
