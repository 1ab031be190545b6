//! The ARS domain: the types every other crate speaks and the rules that hold for them.
//!
//! This crate does no I/O. It knows what an agent, a skill, a user and a share are, which writes
//! are valid, who may see or manage what, and how an agent's runtime context is layered over the
//! server defaults. Storage, HTTP and the runtime build on it and never re-state its rules.

pub mod access;
pub mod agent;
pub mod approvals;
pub mod context;
pub mod credentials;
pub mod error;
pub mod ids;
pub mod knowledge;
pub mod lineage;
pub mod mcp_server;
pub mod model_provider;
pub mod nesting;
pub mod object;
pub mod outbound;
pub mod reason;
pub mod run;
pub mod secret;
pub mod skill;
pub mod text;
pub mod thread;
pub mod time;
pub mod user;
pub mod waiting;

pub use access::{Caller, Shared};
pub use agent::{Agent, AgentConfig, AgentDraft, AgentInput, Backend, ShareConfig, Visibility};
pub use approvals::{Approval, ApprovalRules};
pub use context::{
    AgentContext, ContextDefaults, Limits, ModelConfig, ResolvedContext, SubagentResults,
};
pub use error::{FieldError, ValidationError};
pub use ids::{
    AgentId, KbDocumentId, KnowledgeBaseId, McpServerId, MessageId, ModelProviderId, RunId,
    SkillId, TokenId, UserId,
};
pub use knowledge::{
    EmbeddingModel, KbChunk, KbCounts, KbDocument, KbDocumentStatus, KbSettings, KnowledgeBase,
    KnowledgeBaseFields, NewKbChunk, NewKbDocument,
};
pub use lineage::{Delivery, Lineage, RunLineage, ThreadLineage};
pub use mcp_server::{McpServer, McpServerFields, McpTransport, McpTransportKind, McpValue};
pub use model_provider::{ModelProvider, ModelProviderFields, ModelProviderKind};
pub use outbound::OutboundPolicy;
pub use reason::{ErrorReason, Param, Reason, Subject};
pub use run::{
    Lease, NewRun, Run, RunErrorCode, RunFailure, RunInput, RunInputError, RunOutcome, RunStatus,
    Usage,
};
pub use secret::{Sealed, SecretError, SecretKey};
pub use skill::{NewSkill, Skill, SkillContent, SkillFile, SkillFileInfo};
pub use thread::{
    Message, MessageNotice, MessageRole, NewMessage, RunSpend, Thread, ThreadId, ToolCallRecord,
};
pub use user::{AccountChange, ApiToken, Role, User};
pub use waiting::{DecisionInput, PendingItem, PendingRequest, Resolution, Waiting};
