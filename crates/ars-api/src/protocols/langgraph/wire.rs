//! ARS's agents, threads, runs and messages in the LangGraph API's shapes (as
//! `langgraph_sdk.schema` types them): an assistant is an agent (`graph_id` = its slug), a
//! thread's `values` are `{"messages": [...]}` in LangChain's message dicts.

use serde_json::{Value, json};

use ars_domain::{Agent, Message, MessageRole, PendingItem, Run, RunStatus, Thread};

/// RFC 3339 with microseconds, as the LangGraph servers write timestamps.
fn time(at: &chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Micros, false)
}

pub(super) fn assistant(agent: &Agent) -> Value {
    json!({
        "assistant_id": agent.id.to_string(),
        "graph_id": agent.slug,
        "name": agent.name,
        "description": agent.description,
        "config": {},
        "context": {},
        "metadata": {"kind": if agent.is_subagent { "subagent" } else { "agent" }},
        "version": 1,
        "created_at": time(&agent.created_at),
        "updated_at": time(&agent.updated_at),
    })
}

/// A run's status in LangGraph's words: a run waiting for a person is `interrupted` (its
/// thread too), as is a cancelled one; a run a server stop cut off is an `error`.
pub(super) fn run_status(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Pending => "pending",
        RunStatus::Running => "running",
        RunStatus::Waiting | RunStatus::Cancelled => "interrupted",
        RunStatus::Success => "success",
        RunStatus::Error | RunStatus::Interrupted => "error",
        RunStatus::Timeout => "timeout",
    }
}

pub(super) fn run(run: &Run, metadata: &Value, strategy: &str) -> Value {
    let updated = run.finished_at.or(run.started_at).unwrap_or(run.created_at);
    let mut out = json!({
        "run_id": run.id.to_string(),
        "thread_id": run.thread_id.to_string(),
        "assistant_id": run.agent_id.to_string(),
        "created_at": time(&run.created_at),
        "updated_at": time(&updated),
        "status": run_status(run.status),
        "metadata": metadata,
        "multitask_strategy": strategy,
        "kwargs": {"input": {"messages": [{"role": "user", "content": run.input}]}},
    });
    if let Some(error) = &run.error {
        out["error"] = json!(error);
    }
    out
}

/// A thread's status: `busy` while a run is active, `interrupted` while one waits for a person,
/// `error` when its last run failed, else `idle`.
pub(super) fn thread_status(last: Option<&Run>) -> &'static str {
    match last.map(|r| r.status) {
        Some(RunStatus::Pending | RunStatus::Running) => "busy",
        Some(RunStatus::Waiting) => "interrupted",
        Some(RunStatus::Error | RunStatus::Timeout | RunStatus::Interrupted) => "error",
        _ => "idle",
    }
}

pub(super) fn thread(
    thread: &Thread,
    metadata: &Value,
    last: Option<&Run>,
    messages: &[Message],
) -> Value {
    json!({
        "thread_id": thread.id.to_string(),
        "created_at": time(&thread.created_at),
        "updated_at": time(&thread.updated_at),
        "metadata": metadata,
        "status": thread_status(last),
        "config": {},
        "values": values(messages, last),
        "interrupts": interrupts(last),
    })
}

/// The thread's values: its messages, and while a run waits for a person, what it waits on
/// under `__interrupt__`. `null` before the first message.
pub(super) fn values(messages: &[Message], last: Option<&Run>) -> Value {
    if messages.is_empty() {
        return Value::Null;
    }
    let mut values = json!({"messages": messages.iter().map(message).collect::<Vec<_>>()});
    if let Some(run) = last.filter(|r| r.status == RunStatus::Waiting) {
        values["__interrupt__"] = json!(run.pending.iter().map(interrupt).collect::<Vec<_>>());
    }
    values
}

/// One pending item as a LangGraph interrupt: `{value, id}`, the id being the call to decide.
pub(super) fn interrupt(item: &PendingItem) -> Value {
    json!({"value": item, "id": item.call_id})
}

/// A thread's interrupts by task: the waiting run's pending items under its run id.
fn interrupts(last: Option<&Run>) -> Value {
    match last.filter(|r| r.status == RunStatus::Waiting) {
        Some(run) => json!({
            run.id.to_string(): run.pending.iter().map(interrupt).collect::<Vec<_>>()
        }),
        None => json!({}),
    }
}

/// A stored message as LangChain serialises it.
pub(super) fn message(m: &Message) -> Value {
    let base = json!({
        "content": m.content,
        "id": m.id.to_string(),
        "additional_kwargs": {},
        "response_metadata": {},
        "name": null,
    });
    let mut out = base;
    match m.role {
        MessageRole::User => out["type"] = json!("human"),
        MessageRole::System => out["type"] = json!("system"),
        MessageRole::Assistant => {
            out["type"] = json!("ai");
            out["tool_calls"] = json!(
                m.tool_calls
                    .iter()
                    .map(|call| json!({
                        "name": call.name,
                        "args": serde_json::from_str::<Value>(&call.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({})),
                        "id": call.id,
                        "type": "tool_call",
                    }))
                    .collect::<Vec<_>>()
            );
            out["invalid_tool_calls"] = json!([]);
            out["usage_metadata"] = Value::Null;
        }
        MessageRole::Tool => {
            out["type"] = json!("tool");
            out["tool_call_id"] = json!(m.tool_call_id);
            out["name"] = json!(m.tool_name);
            out["status"] = json!(if m.is_error { "error" } else { "success" });
        }
    }
    out
}

/// A piece of streamed assistant text as an `AIMessageChunk`.
pub(super) fn chunk(text: &str, id: &str) -> Value {
    json!({
        "type": "AIMessageChunk",
        "content": text,
        "id": id,
        "additional_kwargs": {},
        "response_metadata": {},
        "name": null,
        "tool_calls": [],
        "invalid_tool_calls": [],
        "tool_call_chunks": [],
        "usage_metadata": null,
    })
}
