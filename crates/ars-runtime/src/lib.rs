//! The ARS agent runtime.
//!
//! The core (it names no capability):
//! - [`tool`]: the `Tool` seam and the registry; [`builtin`]: the sandbox file and shell tools.
//! - [`plugin`]: the plug-in seam — a capability's hooks on every run (run start, the run's
//!   changes and end, usage), passed in by the server assembly; [`middleware`]: the hooks a
//!   plug-in mounts on one run's loop (system prompt, tool set, tool-call wrapping, events).
//! - [`runs`]: the handle plug-ins act on runs through (start, wait, cancel), and its words.
//! - [`agent_loop`]: the ReAct loop, checkpointing each complete message.
//! - [`model_step`]: one streamed model answer, asked again when the stream breaks mid-answer.
//! - [`emitter`]: a run's events, seen by its middleware; [`feed`]: what a run tells its
//!   thread's followers and the plug-ins following it.
//! - [`models`]: the providers a run may use — configured and stored — and the default model,
//!   reloaded when an admin changes them.
//! - [`runtime`]: durable runs as background tasks: start, cancel, wait, recover, shut down.
//! - [`metrics`]: what the runtime and its plug-ins measure (runs, model requests, tool calls,
//!   subagent runs, leases).
//!
//! Plug-ins (each imports the core, never the other way round):
//! - [`subagents`]: `task` and the `subagent_*` tools, and child runs end to end.
//! - [`skills`]: the user's Skills, listed in the prompt and projected into the sandbox.
//! - [`mcp`]: the tools of MCP servers; [`knowledge`]: knowledge bases and their search.
//!
//! **Boundary:** the runtime never imports the API: it speaks domain types, the `Store`,
//! `EventBus`, `ChatModel` and `Sandbox` seams.

pub mod agent_loop;
pub mod builtin;
pub mod emitter;
pub mod feed;
pub mod knowledge;
pub mod mcp;
pub mod metrics;
pub mod middleware;
pub mod model_step;
pub mod models;
pub mod plugin;
pub mod runs;
pub mod runtime;
pub mod skills;
mod spans;
pub mod subagents;
pub mod tool;

pub use builtin::builtin_tools;
pub use emitter::Emitter;
pub use feed::RunObserver;
pub use middleware::{Middleware, PendingCall};
pub use model_step::StreamRetry;
pub use models::{DefaultModel, DefaultModelSource, ModelSnapshot, ModelSource};
pub use plugin::{MiddlewareFactory, RunSetup};
pub use runs::{ParentLink, Runs, RuntimeError, Slots, StartRun, Waited};
pub use runtime::{Recovery, Runtime, RuntimeConfig, RuntimeParts, now_ms, run_ref, thread_scope};
pub use subagents::{
    SubagentMiddlewareFactory, SubagentRun, SubagentSettings, TASK_TOOLS, allowed_subagents,
    subagent_runs,
};
pub use tool::{
    RunSandbox, Tool, ToolContext, ToolError, ToolInfo, ToolRegistry, parse_args, to_json,
};
