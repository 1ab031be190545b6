//! The ARS agent runtime.
//!
//! - [`tool`]: the `Tool` seam and the registry; [`builtin`]: the sandbox file and shell tools.
//! - [`middleware`]: the plug-in seam — hooks on a run (system prompt, tool set, tool-call
//!   wrapping, events), built per run by the factories the server assembly passes in.
//! - [`agent_loop`]: the ReAct loop, checkpointing each complete message.
//! - [`model_step`]: one streamed model answer, asked again when the stream breaks mid-answer.
//! - [`models`]: the providers a run may use — configured and stored — and the default model,
//!   reloaded when an admin changes them.
//! - [`runtime`]: durable runs as background tasks: start, cancel, wait, recover, shut down.
//! - [`metrics`]: what the runtime measures (runs, model requests, tool calls, leases).
//!
//! Plug-ins (each imports the core, never the other way round):
//! - [`subagents`]: `task` and the `subagent_*` tools.
//! - [`skills`]: the user's Skills, listed in the prompt and projected into the sandbox.
//!
//! **Boundary:** the runtime never imports the API: it speaks domain types, the `Store`,
//! `EventBus`, `ChatModel` and `Sandbox` seams.

pub mod agent_loop;
pub mod builtin;
pub mod knowledge;
pub mod mcp;
pub mod metrics;
pub mod middleware;
pub mod model_step;
pub mod models;
pub mod runtime;
pub mod skills;
mod spans;
pub mod subagents;
pub mod tool;

pub use agent_loop::Emitter;
pub use builtin::builtin_tools;
pub use middleware::{Middleware, MiddlewareFactory, PendingCall, RunSetup};
pub use model_step::StreamRetry;
pub use models::{DefaultModel, DefaultModelSource, ModelSnapshot, ModelSource};
pub use runtime::{
    ChildDelivery, ParentLink, Recovery, Runtime, RuntimeConfig, RuntimeError, RuntimeParts,
    StartRun, Waited, now_ms, run_ref, thread_scope,
};
pub use subagents::{
    SubagentMiddlewareFactory, SubagentRun, TASK_TOOLS, allowed_subagents, subagent_runs,
};
pub use tool::{Tool, ToolContext, ToolError, ToolInfo, ToolRegistry, parse_args, to_json};
