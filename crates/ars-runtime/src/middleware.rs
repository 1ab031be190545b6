//! Hooks on one run's loop: a [`Middleware`] adds to the system prompt and the tool set, wraps
//! each tool call and observes every event the run publishes. A plug-in builds one per run
//! (`MiddlewareFactory::build`); the loop calls them without knowing whose they are.

use std::sync::Arc;

use async_trait::async_trait;

use ars_events::EventKind;

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
