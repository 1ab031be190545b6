//! Approvals in runs: `config_json.context.approvals` rules layered over the defaults; a
//! `deny`ed tool is never offered to the model; an `ask` one is (its calls wait for a decision:
//! see `waiting.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;

use ars_domain::{AgentContext, Approval, ApprovalRules, Backend, ContextDefaults};
use common::{Harness, harness_with, scripted};

fn rules(pairs: &[(&str, Approval)]) -> ApprovalRules {
    ApprovalRules(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
}

/// The tools the model of an agent with `approvals` is offered, as the loop names them when
/// the model calls one that does not exist.
async fn offered(
    h: &Harness,
    slug: &str,
    backend: Backend,
    approvals: ApprovalRules,
) -> Vec<String> {
    let context = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"name": "probe", "arguments": {}}]},
            {"text": "TOOLS: {{last_tool_result}}"}
        ]))),
        approvals: Some(approvals),
        ..AgentContext::default()
    };
    let agent = h.agent(slug, backend, context).await;
    let thread = h.thread_of(&agent, &h.caller.clone()).await;
    let output = h.finish(&thread, "go").await.output.unwrap();
    let list = output
        .split("available tools: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no tool list in {output}"));
    list.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_')
        .split(", ")
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_denied_tool_is_not_offered_and_the_most_specific_rule_wins() {
    let h = harness_with(ContextDefaults::default()).await;
    let tools = offered(
        &h,
        "careful",
        Backend::Default,
        rules(&[
            ("*_file", Approval::Deny),
            ("read_file", Approval::Allow),
            ("execute", Approval::Deny),
            ("grep", Approval::Ask),
            // Plug-ins' tools too: the background lifecycle tools, not `task`.
            ("subagent_*", Approval::Deny),
        ]),
    )
    .await;
    // `grep` asks: offered, and its calls wait for a decision.
    assert_eq!(
        tools,
        ["ls", "read_file", "glob", "grep", "task"],
        "{tools:?}"
    );
}

#[tokio::test]
async fn rules_inherit_the_defaults_key_by_key_and_each_subagent_uses_its_own() {
    let mut defaults = ContextDefaults::default();
    defaults.base.approvals = Some(rules(&[
        ("execute", Approval::Deny),
        ("ls", Approval::Deny),
    ]));
    defaults.subagent.approvals = Some(rules(&[("grep", Approval::Deny)]));
    let h = harness_with(defaults).await;
    // The agent's own rule for `ls` wins over the base's; `execute` stays denied by the base.
    let own = rules(&[("ls", Approval::Allow), ("subagent_*", Approval::Deny)]);
    let main = offered(&h, "main", Backend::Default, own).await;
    assert_eq!(
        main,
        [
            "ls",
            "read_file",
            "write_file",
            "edit_file",
            "glob",
            "grep",
            "task"
        ],
        "{main:?}"
    );
    // A subagent also has `[defaults.subagent]` between its own rules and the base's.
    let sub = offered(&h, "sub", Backend::SubAgent, ApprovalRules::default()).await;
    assert_eq!(
        sub,
        ["read_file", "write_file", "edit_file", "glob"],
        "{sub:?}"
    );
}
