//! The ReAct loop: model step → tool step → model step … until a final answer, a limit, or an
//! error. Cancellation and the wall-clock limit are applied around it by the runner, which
//! simply drops this future: every `.await` here is a cancellation point.
//!
//! **Invariant:** each complete message is committed to the store before the next step starts
//! (the checkpoint), so a crash loses at most the message being streamed.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use ars_domain::context::ResolvedLimits;
use ars_domain::{
    Message as StoredMessage, MessageRole, NewMessage, RunErrorCode, RunFailure, ToolCallRecord,
    Usage,
};
use ars_events::{EventKind, preview};
use ars_models::{ChatModel, ChatRequest, Message, ToolCall, ToolDefinition};
use ars_store::Store;

use crate::emitter::Emitter;
use crate::metrics;
use crate::middleware::PendingCall;
use crate::model_step::{Step, StreamRetry, model_turn};
use crate::spans;
use crate::tool::{Tool, ToolContext, ToolError};

/// How many model turns in a row may produce unparseable tool arguments before the run fails.
pub const MAX_INVALID_ARGUMENT_TURNS: u32 = 3;
/// Longest tool-result preview carried by events.
const PREVIEW_CHARS: usize = 500;

/// Everything one loop needs.
pub struct LoopSpec {
    pub store: Arc<dyn Store>,
    pub emitter: Emitter,
    pub model: Arc<dyn ChatModel>,
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn Tool>>,
    pub limits: ResolvedLimits,
    /// The context of every tool call; `call_id` is filled in per call.
    pub tool_ctx: ToolContext,
    /// Usage so far, readable by the runner even when it drops the loop.
    pub usage: Arc<Mutex<Usage>>,
    /// How a model stream that breaks mid-answer is asked again.
    pub retry: StreamRetry,
}

/// How a loop ended on its own.
#[derive(Debug, PartialEq)]
pub enum LoopEnd {
    /// A final answer.
    Answer(String),
    /// A limit or an error ended the run; the failure says which.
    Failed(RunFailure),
}

/// Runs the loop over the thread's committed history (which already holds the user's input).
pub async fn run_loop(spec: &LoopSpec) -> LoopEnd {
    match run_steps(spec).await {
        Ok(end) => end,
        Err(message) => LoopEnd::Failed(message),
    }
}

async fn run_steps(spec: &LoopSpec) -> Result<LoopEnd, RunFailure> {
    let thread_id = &spec.tool_ctx.thread_id;
    let history = spec
        .store
        .messages(thread_id)
        .await
        .map_err(|e| format!("cannot load the thread: {e}"))?;
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(Message::system(spec.system_prompt.clone()));
    messages.extend(to_model_messages(&history));
    let definitions: Vec<ToolDefinition> = spec
        .tools
        .iter()
        .map(|t| ToolDefinition {
            name: t.name().to_string(),
            description: t.description().to_string(),
            parameters: t.parameters(),
        })
        .collect();

    let mut invalid_turns = 0;
    for _step in 0..spec.limits.max_steps {
        let request = ChatRequest::new(messages.clone()).with_tools(definitions.clone());
        let step = Step {
            model: &spec.model,
            emitter: &spec.emitter,
            retry: &spec.retry,
            run_id: spec.tool_ctx.run_id,
        };
        let turn = model_turn(&step, &request).await?;
        if let Some(u) = turn.usage {
            let total = {
                let mut usage = spec
                    .usage
                    .lock()
                    .map_err(|_| "usage lock poisoned".to_string())?;
                usage.add(u);
                *usage
            };
            spec.emitter.emit(EventKind::Usage { usage: total }).await;
            let _ = spec.store.set_run_usage(spec.tool_ctx.run_id, total).await;
            if let Some(budget) = spec.limits.max_tokens
                && total.total() > budget
            {
                commit(spec, assistant_message(spec, &turn.text, &[])).await?;
                return Ok(LoopEnd::Failed(RunFailure::new(
                    RunErrorCode::TokenBudget,
                    format!(
                        "token budget exceeded: {} of {budget} tokens used",
                        total.total()
                    ),
                )));
            }
        }

        let records: Vec<ToolCallRecord> = turn
            .tool_calls
            .iter()
            .map(|c| ToolCallRecord {
                interrupted: false,
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect();
        commit(spec, assistant_message(spec, &turn.text, &records)).await?;
        messages.push(turn.to_message());
        if turn.tool_calls.is_empty() {
            return Ok(LoopEnd::Answer(turn.text));
        }

        let results = run_tool_calls(spec, &turn.tool_calls).await;
        let mut any_invalid = false;
        for (call, outcome) in turn.tool_calls.iter().zip(results) {
            any_invalid |= outcome.invalid_json;
            let (content, is_error) = match outcome.result {
                Ok(text) => (text, false),
                Err(e) => (e.to_string(), true),
            };
            let message = NewMessage {
                thread_id: thread_id.clone(),
                run_id: Some(spec.tool_ctx.run_id),
                role: MessageRole::Tool,
                content: content.clone(),
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id.clone()),
                tool_name: Some(call.name.clone()),
                is_error,
                notice: None,
            };
            commit(spec, message).await?;
            messages.push(Message::tool(call.id.clone(), content));
        }
        invalid_turns = if any_invalid { invalid_turns + 1 } else { 0 };
        if invalid_turns >= MAX_INVALID_ARGUMENT_TURNS {
            return Ok(LoopEnd::Failed(RunFailure::new(
                RunErrorCode::InvalidToolArguments,
                format!(
                    "the model produced invalid tool-call arguments {MAX_INVALID_ARGUMENT_TURNS} turns in a row"
                ),
            )));
        }
    }
    Ok(LoopEnd::Failed(RunFailure::new(
        RunErrorCode::StepLimit,
        format!(
            "step limit reached: {} model steps without a final answer",
            spec.limits.max_steps
        ),
    )))
}

fn assistant_message(spec: &LoopSpec, text: &str, calls: &[ToolCallRecord]) -> NewMessage {
    NewMessage {
        tool_calls: calls.to_vec(),
        ..NewMessage::text(
            spec.tool_ctx.thread_id.clone(),
            Some(spec.tool_ctx.run_id),
            MessageRole::Assistant,
            text.to_string(),
        )
    }
}

/// Commits one complete message and announces it.
async fn commit(spec: &LoopSpec, message: NewMessage) -> Result<StoredMessage, String> {
    let stored = spec
        .store
        .append_message(&message)
        .await
        .map_err(|e| format!("cannot save a message: {e}"))?;
    spec.emitter
        .emit(EventKind::MessageCompleted {
            message: stored.clone(),
        })
        .await;
    Ok(stored)
}

struct CallOutcome {
    result: Result<String, ToolError>,
    invalid_json: bool,
}

/// Runs every call of one turn concurrently; results come back in call order.
async fn run_tool_calls(spec: &LoopSpec, calls: &[ToolCall]) -> Vec<CallOutcome> {
    futures::future::join_all(calls.iter().map(|call| run_tool_call(spec, call))).await
}

/// One call in its `tool_call` span; a child run its tool starts (`task`) is a child of it.
async fn run_tool_call(spec: &LoopSpec, call: &ToolCall) -> CallOutcome {
    let span = spans::tool_call(&call.name, &call.id);
    call_tool(spec, call).instrument(span).await
}

async fn call_tool(spec: &LoopSpec, call: &ToolCall) -> CallOutcome {
    spec.emitter
        .emit(EventKind::ToolCallStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
    let called = Instant::now();
    let (result, invalid_json) = match parse_arguments(&call.arguments) {
        Err(e) => (Err(e), true),
        Ok(arguments) => {
            let pending = PendingCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
                arguments,
            };
            (invoke(spec, pending).await, false)
        }
    };
    let known = spec.tools.iter().any(|t| t.name() == call.name);
    metrics::tool_call(
        known.then_some(call.name.as_str()),
        called.elapsed(),
        &result,
    );
    let text = match &result {
        Ok(text) => text.clone(),
        Err(e) => e.to_string(),
    };
    spans::record_tool_result(&tracing::Span::current(), result.is_err().then_some(&text));
    spec.emitter
        .emit(EventKind::ToolCallFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            is_error: result.is_err(),
            preview: preview(&text, PREVIEW_CHARS),
        })
        .await;
    CallOutcome {
        result,
        invalid_json,
    }
}

async fn invoke(spec: &LoopSpec, call: PendingCall) -> Result<String, ToolError> {
    let mut ctx = spec.tool_ctx.clone();
    ctx.call_id = call.call_id.clone();
    let middleware = &spec.emitter.middleware;
    for m in middleware {
        if let Some(answer) = m.before_tool_call(&call, &ctx).await {
            return answer;
        }
    }
    let mut result = match spec.tools.iter().find(|t| t.name() == call.name) {
        Some(tool) => tool.call(call.arguments.clone(), &ctx).await,
        None => {
            let names: Vec<&str> = spec.tools.iter().map(|t| t.name()).collect();
            Err(ToolError::Failed(format!(
                "unknown tool `{}`; available tools: {}",
                call.name,
                names.join(", ")
            )))
        }
    };
    for m in middleware {
        m.after_tool_call(&call, &mut result).await;
    }
    result
}

/// Tool arguments must be a JSON object; an empty string means no arguments.
fn parse_arguments(raw: &str) -> Result<Value, ToolError> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    use ars_domain::nesting::{MAX_JSON_DEPTH, check_json_depth};
    if let Err(too_deep) = check_json_depth(raw.as_bytes(), MAX_JSON_DEPTH) {
        return Err(ToolError::InvalidArguments(format!(
            "the arguments are {too_deep}; send a flatter JSON object matching the tool's schema"
        )));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ToolError::InvalidArguments(
            "the arguments must be a JSON object".into(),
        )),
        Err(e) => Err(ToolError::InvalidArguments(format!(
            "the arguments are not valid JSON ({e}); send a JSON object matching the tool's schema"
        ))),
    }
}

/// The thread's committed history as model messages. An assistant tool call left without a
/// result (a run cut off mid-tool) gets a stand-in result, which every provider requires.
pub fn to_model_messages(history: &[StoredMessage]) -> Vec<Message> {
    let mut out = Vec::with_capacity(history.len());
    let mut open_calls: Vec<String> = Vec::new();
    let close_open = |out: &mut Vec<Message>, open: &mut Vec<String>| {
        for id in open.drain(..) {
            out.push(Message::tool(
                id,
                "(no result: the run stopped before this call finished)",
            ));
        }
    };
    for m in history {
        match m.role {
            MessageRole::Tool => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                open_calls.retain(|open| *open != id);
                out.push(Message::tool(id, m.content.clone()));
            }
            role => {
                close_open(&mut out, &mut open_calls);
                match role {
                    // Stored system messages are notices (e.g. a background subagent finished).
                    // Many chat templates accept a system message only first, so the model
                    // reads them as a user-side notice.
                    // A notice's text names the subagent; the ids the model needs to follow
                    // up on it are added here.
                    MessageRole::System => out.push(Message::user(match &m.notice {
                        Some(n) => format!(
                            "[notice] {} (run_id: {}, thread_id: {})",
                            m.content, n.run_id, n.thread_id
                        ),
                        None => format!("[notice] {}", m.content),
                    })),
                    MessageRole::User => out.push(Message::user(m.content.clone())),
                    _ => {
                        let calls: Vec<ToolCall> = m
                            .tool_calls
                            .iter()
                            .map(|c| ToolCall {
                                id: c.id.clone(),
                                name: c.name.clone(),
                                arguments: c.arguments.clone(),
                            })
                            .collect();
                        open_calls = calls.iter().map(|c| c.id.clone()).collect();
                        out.push(Message::assistant(m.content.clone(), calls));
                    }
                }
            }
        }
    }
    close_open(&mut out, &mut open_calls);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ars_domain::{MessageId, MessageNotice, RunId, RunStatus, ThreadId};

    #[test]
    fn a_notice_reaches_the_model_as_a_user_side_line_with_the_childs_ids() {
        let (run_id, thread_id) = (RunId::new(), ThreadId::new());
        let notice = StoredMessage {
            id: MessageId::new(),
            thread_id: ThreadId::new(),
            run_id: None,
            seq: 1,
            role: MessageRole::System,
            content: "Background subagent `r` finished (task: “x”): done".into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            notice: Some(MessageNotice {
                run_id,
                thread_id: thread_id.clone(),
                subagent_slug: Some("r".into()),
                status: RunStatus::Success,
            }),
            replaced_by_run_id: None,
            created_at: ars_domain::time::now(),
        };
        let plain = StoredMessage {
            notice: None,
            content: "a note".into(),
            ..notice.clone()
        };
        assert_eq!(
            to_model_messages(&[notice, plain]),
            vec![
                Message::user(format!(
                    "[notice] Background subagent `r` finished (task: “x”): done (run_id: \
                     {run_id}, thread_id: {thread_id})"
                )),
                Message::user("[notice] a note"),
            ]
        );
    }

    #[test]
    fn arguments_must_be_a_json_object() {
        assert!(parse_arguments("").is_ok());
        assert!(parse_arguments("{\"a\":1}").is_ok());
        assert!(matches!(
            parse_arguments("[1]"),
            Err(ToolError::InvalidArguments(_))
        ));
        assert!(matches!(
            parse_arguments("{\"a\":"),
            Err(ToolError::InvalidArguments(_))
        ));
    }
}
