//! Helpers for delegation tests: subagents and parents that play scripts, and the `task`
//! call.

use serde_json::{Value, json};

use ars_domain::{AgentContext, Backend, Limits};

use super::{Harness, scripted};

/// A subagent of the harness's user that plays `script`.
pub async fn sub(h: &Harness, slug: &str, script: Value) {
    let context = AgentContext {
        model: Some(scripted(script)),
        ..AgentContext::default()
    };
    h.agent(slug, Backend::SubAgent, context).await;
}

/// A subagent with its own tools and limits.
pub async fn sub_with(h: &Harness, slug: &str, script: Value, tools: &[&str], limits: Limits) {
    let context = AgentContext {
        model: Some(scripted(script)),
        tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        limits: Some(limits),
        ..AgentContext::default()
    };
    h.agent(slug, Backend::SubAgent, context).await;
}

/// A normal agent's thread whose allow-list is `subagents` (None: all visible).
pub async fn parent(
    h: &Harness,
    script: Value,
    tools: &[&str],
    subagents: Option<Vec<&str>>,
) -> ars_domain::Thread {
    let slug = format!(
        "p{}",
        &ars_domain::RunId::new().to_string().replace('-', "")[20..]
    );
    let context = AgentContext {
        model: Some(scripted(script)),
        tools: Some(tools.iter().map(|t| t.to_string()).collect()),
        subagents: subagents.map(|s| s.iter().map(|x| x.to_string()).collect()),
        ..AgentContext::default()
    };
    let agent = h.agent(&slug, Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

pub fn task(slug: &str, description: &str) -> Value {
    json!({"name": "task", "arguments": {"description": description, "subagent_slug": slug}})
}

pub fn start_call(slug: &str, description: &str) -> Value {
    json!({"name": "subagent_start", "arguments": {"description": description, "subagent_slug": slug}})
}

/// The tokens each answer of [`counted_delegation`] reports: 12.
pub fn answer_usage() -> Value {
    json!({"prompt_tokens": 10, "completion_tokens": 2})
}

/// A subagent `helper` that answers "done", and the thread of a parent that delegates one
/// `task` to it and then answers "thanks"; every answer reports [`answer_usage`].
pub async fn counted_delegation(h: &Harness) -> ars_domain::Thread {
    let usage = answer_usage();
    sub(h, "helper", json!([{"text": "done", "usage": usage}])).await;
    parent(
        h,
        json!([
            {"tool_calls": [task("helper", "do it")], "usage": usage},
            {"text": "thanks", "usage": usage}
        ]),
        &[],
        Some(vec!["helper"]),
    )
    .await
}
