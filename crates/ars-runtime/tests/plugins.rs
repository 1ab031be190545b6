//! The plug-in seam: a capability the runtime has never heard of, registered by the assembly
//! (here: the test), shapes a run's prompt and tool set from the run's resolved context.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};

use ars_domain::{Limits, RunStatus};
use ars_runtime::{
    Middleware, MiddlewareFactory, RunSetup, RuntimeConfig, Tool, ToolContext, ToolError, tool_meta,
};
use common::harness_parts;

/// A tool only the test plug-in knows.
struct Stamp;

#[async_trait]
impl Tool for Stamp {
    tool_meta!(
        "stamp",
        "Answers the plug-in's stamp.",
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    async fn call(&self, _args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        Ok(format!("stamped {}", ctx.run_id))
    }
}

struct StampMiddleware {
    line: String,
}

impl Middleware for StampMiddleware {
    fn system_prompt(&self, prompt: &mut String) {
        prompt.push_str(&self.line);
    }
    fn tools(&self, tools: &mut Vec<Arc<dyn Tool>>) {
        tools.push(Arc::new(Stamp));
    }
}

/// Mounts on every run and counts how often it was asked.
#[derive(Default)]
struct StampPlugin {
    builds: AtomicUsize,
}

#[async_trait]
impl MiddlewareFactory for StampPlugin {
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>> {
        self.builds.fetch_add(1, Ordering::SeqCst);
        Some(Arc::new(StampMiddleware {
            // From the run's resolved context, as a real capability would.
            line: format!(
                "\nPLUGIN LINE for {} with {} tools",
                setup.agent.slug,
                setup.context.tools.len()
            ),
        }))
    }
}

#[tokio::test]
async fn a_plugin_registered_by_the_assembly_adds_a_tool_and_a_prompt_line() {
    let plugin = Arc::new(StampPlugin::default());
    let mounted: Arc<dyn MiddlewareFactory> = plugin.clone();
    let h = harness_parts(RuntimeConfig::default(), |_, _| vec![mounted]).await;
    let thread = h
        .thread(
            json!([
                {"tool_calls": [{"name": "stamp", "arguments": {}}]},
                {"text": "{{last_tool_result}} | {{system_prompt}}"}
            ]),
            &["ls"],
            Limits::default(),
        )
        .await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let output = run.output.unwrap();
    assert!(
        output.starts_with(&format!("stamped {}", run.id)),
        "{output}"
    );
    assert!(output.contains("PLUGIN LINE for a"), "{output}");
    assert!(output.contains("with 1 tools"), "{output}");
    assert_eq!(plugin.builds.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_the_plugin_its_tool_is_unknown_to_the_model() {
    let h = harness_parts(RuntimeConfig::default(), |_, _| Vec::new()).await;
    let thread = h
        .thread(
            json!([
                {"tool_calls": [{"name": "stamp", "arguments": {}}]},
                {"text": "{{last_tool_result}} | {{system_prompt}}"}
            ]),
            &["ls"],
            Limits::default(),
        )
        .await;
    let run = h.finish(&thread, "go").await;
    let output = run.output.unwrap_or_default();
    assert!(!output.contains("PLUGIN LINE"), "{output}");
    assert!(!output.starts_with("stamped"), "{output}");
}

/// Adds a line to the prompt, nothing else.
struct LineMiddleware(&'static str);

impl Middleware for LineMiddleware {
    fn system_prompt(&self, prompt: &mut String) {
        prompt.push_str(self.0);
    }
}

/// Builds only once every plug-in sharing `met` has begun building.
struct MeetingPlugin {
    met: Arc<tokio::sync::Barrier>,
    line: &'static str,
}

#[async_trait]
impl MiddlewareFactory for MeetingPlugin {
    async fn build(&self, _setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>> {
        self.met.wait().await;
        Some(Arc::new(LineMiddleware(self.line)))
    }
}

#[tokio::test]
async fn plugins_build_at_once_and_mount_in_their_order() {
    // Each plug-in's build waits for the other's to begin: built one after the other, the
    // run would never start.
    let met = Arc::new(tokio::sync::Barrier::new(2));
    let first: Arc<dyn MiddlewareFactory> = Arc::new(MeetingPlugin {
        met: Arc::clone(&met),
        line: "\nFIRST PLUGIN",
    });
    let second: Arc<dyn MiddlewareFactory> = Arc::new(MeetingPlugin {
        met,
        line: "\nSECOND PLUGIN",
    });
    let h = harness_parts(RuntimeConfig::default(), move |_, _| vec![first, second]).await;
    let thread = h
        .thread(
            json!([{"text": "{{system_prompt}}"}]),
            &["ls"],
            Limits::default(),
        )
        .await;
    let run = tokio::time::timeout(std::time::Duration::from_secs(30), h.finish(&thread, "go"))
        .await
        .expect("the plug-ins were built one after the other");
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let output = run.output.unwrap();
    let (first, second) = (
        output.find("FIRST PLUGIN").expect(&output),
        output.find("SECOND PLUGIN").expect(&output),
    );
    assert!(first < second, "{output}");
}
