//! The ARS agent runtime.
//!
//! - [`tool`]: the `Tool` seam and the registry; [`builtin`]: the sandbox file and shell tools.
//! - [`middleware`]: hooks on a run (system prompt, tool set, tool-call wrapping, events).
//! - [`agent_loop`]: the ReAct loop, checkpointing each complete message.
//! - [`runtime`]: durable runs as background tasks: start, cancel, wait, recover, shut down.
//!
//! **Boundary:** the runtime never imports the API: it speaks domain types, the `Store`,
//! `EventBus`, `ChatModel` and `Sandbox` seams.

pub mod agent_loop;
pub mod builtin;
pub mod middleware;
pub mod runtime;
pub mod subagents;
pub mod tool;

pub use builtin::builtin_tools;
pub use middleware::{Middleware, MiddlewareFactory, PendingCall, RunSetup};
pub use runtime::{
    ParentLink, Runtime, RuntimeConfig, RuntimeError, RuntimeParts, StartRun, run_ref,
};
pub use subagents::{SubagentMiddlewareFactory, TASK_TOOLS, allowed_subagents};
pub use tool::{Tool, ToolContext, ToolError, ToolInfo, ToolRegistry, parse_args};
