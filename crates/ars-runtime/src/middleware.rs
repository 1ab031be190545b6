//! The plug-in seam: hooks that shape a run without a second execution path.
//!
//! A capability (subagents, Skills, MCP servers, knowledge bases) is a [`MiddlewareFactory`]
//! the server assembly hands the runtime in its parts. For each run it may build a
//! [`Middleware`] from the run's resolved context, which can add to the system prompt, add or
//! remove tools, wrap each tool call, and observe every event the run publishes. The loop and
//! the runtime core know no capability by name.

use std::sync::Arc;

use async_trait::async_trait;

use ars_domain::{Agent, Caller, ResolvedContext, Run, Thread};
use ars_events::EventKind;
use ars_sandbox::Scope;

use crate::agent_loop::Emitter;
use crate::tool::{Tool, ToolContext, ToolError};

/// What a middleware sees of a tool call before it runs.
#[derive(Clone, Debug)]
pub struct PendingCall {
    pub call_id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}

/// Hooks on one run. Every method has a do-nothing default.
#[async_trait]
pub trait Middleware: Send + Sync {
    /// Appends to (or rewrites) the system prompt.
    fn system_prompt(&self, _prompt: &mut String) {}

    /// Adds or removes tools.
    fn tools(&self, _tools: &mut Vec<Arc<dyn Tool>>) {}

    /// Runs before a tool call; returning `Some` answers the call without running the tool.
    async fn before_tool_call(
        &self,
        _call: &PendingCall,
        _ctx: &ToolContext,
    ) -> Option<Result<String, ToolError>> {
        None
    }

    /// Sees (and may rewrite) a tool call's result before the model does.
    async fn after_tool_call(&self, _call: &PendingCall, _result: &mut Result<String, ToolError>) {}

    /// Observes each event the run publishes.
    fn on_event(&self, _event: &EventKind) {}
}

/// What a middleware factory knows about the run being built.
pub struct RunSetup<'a> {
    /// The runtime itself, so a middleware can start and watch other runs.
    pub runtime: &'a crate::Runtime,
    /// The user the run acts for.
    pub caller: &'a Caller,
    pub run: &'a Run,
    pub thread: &'a Thread,
    pub agent: &'a Agent,
    pub context: &'a ResolvedContext,
    /// The run's sandbox scope (already prepared): the workspace, workdir and Skills
    /// projection its tools see.
    pub scope: &'a Scope,
    /// Publishes to the run's event stream, e.g. a warning about a skipped capability.
    pub events: &'a Emitter,
}

/// Builds a capability's middleware for each run (or none, e.g. only for normal agents).
/// Passed to the runtime once, in [`crate::RuntimeParts::plugins`].
#[async_trait]
pub trait MiddlewareFactory: Send + Sync {
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>>;
}
