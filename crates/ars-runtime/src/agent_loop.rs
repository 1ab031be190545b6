//! The ReAct loop: model step → tool step → model step … until a final answer, a limit, or an
//! error. Cancellation and the wall-clock limit are applied around it by the runner, which
//! simply drops this future: every `.await` here is a cancellation point.
//!
//! **Invariant:** each complete message is committed to the store before the next step starts
//! (the checkpoint), so a crash loses at most the message being streamed. The final answer is
//! committed by the runner, together with the run's end ([`Answer`]).
//!
//! A turn whose calls include one that needs a person — a tool whose approval rule is `ask`, or
//! a valid `ask_user` — is committed and then stops the loop before any of its calls runs
//! ([`LoopEnd::Waiting`]). The run resumes with a [`Resolution`] for each of those calls
//! ([`LoopSpec::resume`]): the open turn's calls run first, each as decided, and the loop goes
//! on from there.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use tracing::Instrument;

use ars_domain::context::ResolvedLimits;
use ars_domain::waiting::Question;
use ars_domain::{
    Approval, ApprovalRules, Message as StoredMessage, MessageRole, NewMessage, PendingItem,
    PendingRequest, Resolution, RunErrorCode, RunFailure, ToolCallRecord, Usage, Waiting,
};
use ars_events::{EventKind, preview};
use ars_models::{ChatModel, ChatRequest, Message, ToolCall, ToolDefinition};
use ars_store::Store;

use crate::builtin::ASK_USER;
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
    /// The model as `provider/model`, recorded on the run with its usage.
    pub model_name: String,
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn Tool>>,
    pub limits: ResolvedLimits,
    /// The context of every tool call; `call_id` is filled in per call.
    pub tool_ctx: ToolContext,
    /// Usage so far, readable by the runner even when it drops the loop.
    pub usage: Arc<Mutex<Usage>>,
    /// How a model stream that breaks mid-answer is asked again.
    pub retry: StreamRetry,
    /// The agent's approval rules: a call of a tool whose rule is `ask` waits for a decision.
    pub approvals: ApprovalRules,
    /// The agent's slug, named in what the run waits on.
    pub agent_slug: String,
    /// When the run resumes after waiting: the decision on each call it waited on, by call id.
    pub resume: Option<HashMap<String, Resolution>>,
    /// The thread's messages when they were known as the run began (its input alone, the
    /// thread's first message); read from the store when not.
    pub history: Option<Vec<StoredMessage>>,
    /// The budget of the run's tree (`limits.max_total_tokens`, for a subagent the lower of its
    /// own and what its parent's left it), checked after each model call.
    pub budget: Option<TreeBudget>,
}

/// What the tokens spent on a run's behalf outside it (by the subagent runs it started) come
/// to now.
pub type UsageBeyond = Arc<dyn Fn() -> futures::future::BoxFuture<'static, Usage> + Send + Sync>;

/// A budget for a run together with the runs it starts.
#[derive(Clone)]
pub struct TreeBudget {
    /// The most tokens the run and its subagents may spend.
    pub limit: u64,
    /// Their tokens beyond the run's own.
    pub beyond: UsageBeyond,
}

/// How a loop ended on its own.
#[derive(Debug, PartialEq)]
pub enum LoopEnd {
    /// A final answer: its runner writes it with the run's end.
    Answer(Box<Answer>),
    /// A limit or an error ended the run; the failure says which.
    Failed(RunFailure),
    /// The last turn's calls need decisions: none of them ran.
    Waiting(Waiting),
}

/// A run's final answer, as the loop leaves it to its runner.
#[derive(Debug, PartialEq)]
pub struct Answer {
    /// The run's output.
    pub text: String,
    /// Its message, not written yet, and the last seq the loop holds: the runner writes the
    /// message with the run's end in one commit, which the store refuses when something was
    /// sent into the run after that seq — and then hands the answer back to the loop
    /// ([`Progress::sent_in`]). `None` when the message is written already.
    pub unwritten: Option<(NewMessage, i64)>,
}

/// Where a loop stands, kept by its runner between the loop's calls: a loop whose final answer
/// was handed back goes on from there. A loop dropped halfway (cancelled, out of time) leaves
/// it empty: its run ends.
#[derive(Default)]
pub struct Progress(Option<State>);

impl Progress {
    /// Something was sent into the run before `answer` could end it: the loop's next call
    /// commits the answer alone, reads what was sent, and goes on.
    pub fn sent_in(&mut self, answer: Box<Answer>) {
        if let Some(state) = &mut self.0 {
            state.answered = Some(answer);
        }
    }
}

/// What a loop has built up between its steps.
struct State {
    /// The model's messages so far.
    messages: Vec<Message>,
    cursor: Cursor,
    definitions: Arc<Vec<ToolDefinition>>,
    /// Model steps taken.
    steps: u32,
    invalid_turns: u32,
    /// The final answer handed back ([`Progress::sent_in`]).
    answered: Option<Box<Answer>>,
}

/// Runs the loop over the thread's committed history (which already holds the user's input),
/// from where `progress` stands.
pub async fn run_loop(spec: &LoopSpec, progress: &mut Progress) -> LoopEnd {
    match run_steps(spec, progress).await {
        Ok(end) => end,
        Err(message) => LoopEnd::Failed(message),
    }
}

/// Settles the calls a resumed run waited on, and reads the history the loop begins from.
async fn begin(spec: &LoopSpec) -> Result<State, RunFailure> {
    let thread_id = &spec.tool_ctx.thread_id;
    if let Some(resolutions) = &spec.resume {
        Box::pin(settle(spec, resolutions)).await?;
    }
    let history = match &spec.history {
        Some(known) => known.clone(),
        None => spec
            .store
            .messages(thread_id)
            .await
            .map_err(|e| format!("cannot load the thread: {e}"))?,
    };
    // Everything up to the cursor is in `messages`; what others add to the thread after it (a
    // steer message, a notice) is read before each model call.
    let cursor = Cursor::at(history.last().map_or(0, |m| m.seq));
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(Message::system(spec.system_prompt.clone()));
    messages.extend(to_model_messages(&history));
    let definitions = Arc::new(
        spec.tools
            .iter()
            .map(|t| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
            })
            .collect(),
    );
    Ok(State {
        messages,
        cursor,
        definitions,
        steps: 0,
        invalid_turns: 0,
        answered: None,
    })
}

/// Each step's future is boxed: a run's task lives as long as the run, waiting in one step
/// (its model, or the tools it called) at a time, and an unboxed loop would hold room for the
/// largest step all along.
async fn run_steps(spec: &LoopSpec, progress: &mut Progress) -> Result<LoopEnd, RunFailure> {
    let mut state = match progress.0.take() {
        Some(state) => state,
        None => Box::pin(begin(spec)).await?,
    };
    if let Some(answer) = state.answered.take() {
        // Sent in before the run's end: the answer is committed alone, and what was sent is
        // answered too, not left behind.
        let Some((message, _)) = answer.unwritten else {
            return Ok(LoopEnd::Answer(answer));
        };
        let stored = Box::pin(commit(spec, message)).await?;
        state.cursor.wrote(&stored);
        state.cursor.behind = true;
        let arrived = Box::pin(arrivals(spec, &mut state.cursor)).await?;
        if arrived.is_empty() {
            return Ok(LoopEnd::Answer(Box::new(Answer {
                text: answer.text,
                unwritten: None,
            })));
        }
        state.messages.extend(arrived);
    }
    while state.steps < spec.limits.max_steps {
        if state.steps > 0 {
            let arrived = Box::pin(arrivals(spec, &mut state.cursor)).await?;
            state.messages.extend(arrived);
        }
        state.steps += 1;
        let request =
            ChatRequest::new(state.messages.clone()).with_tools(Arc::clone(&state.definitions));
        let step = Step {
            model: &spec.model,
            emitter: &spec.emitter,
            retry: &spec.retry,
            run_id: spec.tool_ctx.run_id,
        };
        let turn = Box::pin(model_turn(&step, &request)).await?;
        let mut spent = None;
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
            // Recorded with the answer's message below: one commit for both.
            spent = Some(ars_domain::RunSpend {
                usage: total,
                model: Some(spec.model_name.clone()),
            });
            if let Some(budget) = &spec.budget {
                let tree = total.total() + (budget.beyond)().await.total();
                if tree > budget.limit {
                    Box::pin(commit(
                        spec,
                        assistant_message(spec, &turn.text, &[], spent),
                    ))
                    .await?;
                    return Ok(LoopEnd::Failed(RunFailure::new(
                        RunErrorCode::BudgetExceeded,
                        format!(
                            "budget exceeded: {tree} of {} tokens used by this run and its \
                             subagents",
                            budget.limit
                        ),
                    )));
                }
            }
            if let Some(budget) = spec.limits.max_tokens
                && total.total() > budget
            {
                Box::pin(commit(
                    spec,
                    assistant_message(spec, &turn.text, &[], spent),
                ))
                .await?;
                return Ok(LoopEnd::Failed(RunFailure::new(
                    RunErrorCode::TokenBudget,
                    format!(
                        "token budget exceeded: {} of {budget} tokens used",
                        total.total()
                    ),
                )));
            }
        }

        if turn.tool_calls.is_empty() {
            // Written with the run's end, unless something was sent in meanwhile: then it
            // comes back here (`Progress::sent_in`), and what was sent is answered too.
            let message = assistant_message(spec, &turn.text, &[], spent);
            let seen = state.cursor.seen;
            state.messages.push(turn.to_message());
            progress.0 = Some(state);
            return Ok(LoopEnd::Answer(Box::new(Answer {
                text: turn.text,
                unwritten: Some((message, seen)),
            })));
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
        let answer = Box::pin(commit(
            spec,
            assistant_message(spec, &turn.text, &records, spent),
        ))
        .await?;
        state.cursor.wrote(&answer);
        state.messages.push(turn.to_message());

        if let Some(waiting) = awaited(spec, &turn.tool_calls) {
            return Ok(LoopEnd::Waiting(waiting));
        }
        let (results, any_invalid) = Box::pin(run_and_commit(
            spec,
            &turn.tool_calls,
            None,
            Some(&mut state.cursor),
        ))
        .await?;
        state.messages.extend(results);
        state.invalid_turns = if any_invalid {
            state.invalid_turns + 1
        } else {
            0
        };
        if state.invalid_turns >= MAX_INVALID_ARGUMENT_TURNS {
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

/// How far the loop holds its thread: every message up to `seen`. A thread's messages take
/// consecutive seqs, so while nobody else writes to the thread the loop's own messages take
/// the seqs right after `seen` and move it on, and there is nothing to read. A message someone
/// else wrote first (steering, a notice) takes one of those seqs: the loop's next message lands
/// past it, and the cursor falls `behind` until [`arrivals`] reads the thread again.
///
/// A message written after the loop's last own message is read at its next check. The final
/// answer is written with the run's end only while nothing was sent into the run after the
/// cursor ([`Answer::unwritten`]): a message sent in before the end is read, and answered, by
/// this run.
struct Cursor {
    seen: i64,
    behind: bool,
}

impl Cursor {
    fn at(seen: i64) -> Self {
        Self {
            seen,
            behind: false,
        }
    }

    /// The loop wrote `stored`.
    fn wrote(&mut self, stored: &StoredMessage) {
        if !self.behind && stored.seq == self.seen + 1 {
            self.seen = stored.seq;
        } else {
            self.behind = true;
        }
    }
}

/// The messages sent into the run (`steer`: steering, a completion notice for a running parent)
/// that were added to the thread after the cursor, as model messages in the order they were
/// sent; moves the cursor past everything read, the loop's own messages included (the loop
/// holds those already). Reads nothing when only the loop wrote since ([`Cursor`]). Anything
/// else written meanwhile (a note for the thread's next run) waits for that run. Each arrival
/// is announced on the run's stream as the model reads it.
async fn arrivals(spec: &LoopSpec, cursor: &mut Cursor) -> Result<Vec<Message>, RunFailure> {
    if !cursor.behind {
        return Ok(Vec::new());
    }
    let after = spec
        .store
        .messages_after(&spec.tool_ctx.thread_id, cursor.seen)
        .await
        .map_err(|e| format!("cannot read the thread: {e}"))?;
    cursor.behind = false;
    let Some(last) = after.last() else {
        return Ok(Vec::new());
    };
    cursor.seen = last.seq;
    let mut arrived = Vec::new();
    for message in after {
        if message.steer {
            arrived.push(sent_in(&message));
            spec.emitter
                .emit(EventKind::MessageCompleted {
                    message: Box::new(message),
                })
                .await;
        }
    }
    Ok(arrived)
}

/// A user or system message of the thread as the model reads it.
fn sent_in(m: &StoredMessage) -> Message {
    match m.role {
        // Stored system messages are notices (e.g. a background subagent finished). Many chat
        // templates accept a system message only first, so the model reads them as a user-side
        // notice. A notice's text names the subagent; the ids the model needs to follow up on
        // it are added here.
        MessageRole::System => Message::user(match &m.notice {
            Some(n) => format!(
                "[notice] {} (run_id: {}, thread_id: {})",
                m.content, n.run_id, n.thread_id
            ),
            None => format!("[notice] {}", m.content),
        }),
        _ => Message::user(m.content.clone()),
    }
}

/// Runs `calls` (concurrently, each as `resolutions` decided when given) and commits their
/// results in call order, moving `cursor` (when the loop holds one) past them; answers them as
/// model messages, and whether any call's arguments were not JSON.
async fn run_and_commit(
    spec: &LoopSpec,
    calls: &[ToolCall],
    resolutions: Option<&HashMap<String, Resolution>>,
    mut cursor: Option<&mut Cursor>,
) -> Result<(Vec<Message>, bool), RunFailure> {
    let outcomes = futures::future::join_all(
        calls
            .iter()
            .map(|call| run_tool_call(spec, call, resolutions.and_then(|r| r.get(&call.id)))),
    )
    .await;
    let mut any_invalid = false;
    let mut messages = Vec::with_capacity(calls.len());
    for (call, outcome) in calls.iter().zip(outcomes) {
        any_invalid |= outcome.invalid_json;
        let (content, is_error) = match outcome.result {
            Ok(text) => (text, false),
            Err(e) => (e.to_string(), true),
        };
        let message = NewMessage {
            thread_id: spec.tool_ctx.thread_id.clone(),
            run_id: Some(spec.tool_ctx.run_id),
            role: MessageRole::Tool,
            content: content.clone(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
            is_error,
            notice: None,
            steer: false,
            tells: None,
            spent: None,
        };
        let stored = commit(spec, message).await?;
        if let Some(cursor) = cursor.as_deref_mut() {
            cursor.wrote(&stored);
        }
        messages.push(Message::tool(call.id.clone(), content));
    }
    Ok((messages, any_invalid))
}

/// What the calls of a turn wait on, if any needs a person: a valid question to the user, or a
/// call of an offered tool whose approval rule is `ask`. `None` when every call may run.
fn awaited(spec: &LoopSpec, calls: &[ToolCall]) -> Option<Waiting> {
    let mut waiting = Waiting::default();
    for call in calls {
        let Some(tool) = spec.tools.iter().find(|t| t.name() == call.name) else {
            continue;
        };
        let arguments = parse_arguments(&call.arguments);
        let request = if call.name == ASK_USER {
            // A call that is not a question runs, and the tool says what is wrong with it.
            match arguments.ok().and_then(|a| Question::parse(&a).ok()) {
                Some(q) => PendingRequest::Question {
                    question: q.question,
                    options: q.options,
                },
                None => continue,
            }
        } else if spec.approvals.decide(&call.name) == Approval::Ask {
            waiting
                .schemas
                .insert(call.id.clone(), Value::clone(&tool.parameters()));
            PendingRequest::Approval {
                tool: call.name.clone(),
                arguments: arguments.unwrap_or_else(|_| Value::String(call.arguments.clone())),
            }
        } else {
            continue;
        };
        waiting.items.push(PendingItem {
            call_id: call.id.clone(),
            request,
            run_id: spec.tool_ctx.run_id,
            thread_id: spec.tool_ctx.thread_id.clone(),
            agent_slug: spec.agent_slug.clone(),
        });
    }
    if waiting.items.is_empty() {
        return None;
    }
    if let Some(after_s) = spec.limits.approval_timeout_s {
        let after_ms = i64::try_from(after_s.saturating_mul(1000)).unwrap_or(i64::MAX);
        waiting.timeout_s = Some(after_s);
        waiting.until_ms = Some(
            ars_domain::time::now()
                .timestamp_millis()
                .saturating_add(after_ms),
        );
    }
    Some(waiting)
}

/// Runs the calls of the turn the run waited on, each as decided, and commits their results.
async fn settle(
    spec: &LoopSpec,
    resolutions: &HashMap<String, Resolution>,
) -> Result<(), RunFailure> {
    let history = spec
        .store
        .messages(&spec.tool_ctx.thread_id)
        .await
        .map_err(|e| format!("cannot load the thread: {e}"))?;
    let open = open_turn(&history);
    if !open.is_empty() {
        run_and_commit(spec, &open, Some(resolutions), None).await?;
    }
    Ok(())
}

/// The calls of the thread's last assistant turn that have no result yet.
fn open_turn(history: &[StoredMessage]) -> Vec<ToolCall> {
    let Some(at) = history
        .iter()
        .rposition(|m| m.role == MessageRole::Assistant)
    else {
        return Vec::new();
    };
    let answered: HashSet<&str> = history[at + 1..]
        .iter()
        .filter(|m| m.role == MessageRole::Tool)
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    history[at]
        .tool_calls
        .iter()
        .filter(|c| !answered.contains(c.id.as_str()))
        .map(|c| ToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.clone(),
        })
        .collect()
}

/// The model's answer as a message, with what the run has spent when this turn reported it.
fn assistant_message(
    spec: &LoopSpec,
    text: &str,
    calls: &[ToolCallRecord],
    spent: Option<ars_domain::RunSpend>,
) -> NewMessage {
    NewMessage {
        tool_calls: calls.to_vec(),
        spent,
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
            message: Box::new(stored.clone()),
        })
        .await;
    Ok(stored)
}

struct CallOutcome {
    result: Result<String, ToolError>,
    invalid_json: bool,
}

/// One call in its `tool_call` span; a child run its tool starts (`task`) is a child of it.
async fn run_tool_call(
    spec: &LoopSpec,
    call: &ToolCall,
    resolution: Option<&Resolution>,
) -> CallOutcome {
    let span = spans::tool_call(&call.name, &call.id);
    call_tool(spec, call, resolution).instrument(span).await
}

async fn call_tool(
    spec: &LoopSpec,
    call: &ToolCall,
    resolution: Option<&Resolution>,
) -> CallOutcome {
    let edited = match resolution {
        Some(Resolution::Edit { arguments }) => Some(arguments),
        _ => None,
    };
    spec.emitter
        .emit(EventKind::ToolCallStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: edited.map_or_else(|| call.arguments.clone(), Value::to_string),
        })
        .await;
    let called = Instant::now();
    let pending = |arguments| PendingCall {
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments,
    };
    let refusal = resolution.and_then(|r| r.refusal(&call.name));
    let (result, invalid_json) = match (resolution, refusal, edited) {
        (_, Some(refusal), _) => (Err(ToolError::Failed(refusal)), false),
        (Some(Resolution::Answer { answer }), _, _) => (Ok(answer.clone()), false),
        (_, _, Some(arguments)) => {
            let result = invoke(spec, pending(arguments.clone())).await;
            // The model's own call still reads as it sent it: say what ran instead.
            let note = format!("(the user edited the arguments; this ran with {arguments})");
            (result.map(|text| format!("{note}\n{text}")), false)
        }
        _ => match parse_arguments(&call.arguments) {
            Err(e) => (Err(e), true),
            Ok(arguments) => (invoke(spec, pending(arguments)).await, false),
        },
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
/// result (a run cut off mid-tool) gets a stand-in result, which every provider requires. A
/// message written while calls were open (steering while a tool ran or the run waited, a
/// notice) is read after their results, as the running loop read it.
pub fn to_model_messages(history: &[StoredMessage]) -> Vec<Message> {
    let mut out = Vec::with_capacity(history.len());
    let mut open_calls: Vec<String> = Vec::new();
    let mut held: Vec<Message> = Vec::new();
    let close_open = |out: &mut Vec<Message>, open: &mut Vec<String>, held: &mut Vec<Message>| {
        for id in open.drain(..) {
            out.push(Message::tool(
                id,
                "(no result: the run stopped before this call finished)",
            ));
        }
        out.append(held);
    };
    for m in history {
        match m.role {
            MessageRole::Tool => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                open_calls.retain(|open| *open != id);
                out.push(Message::tool(id, m.content.clone()));
                if open_calls.is_empty() {
                    out.append(&mut held);
                }
            }
            MessageRole::User | MessageRole::System if !open_calls.is_empty() => {
                held.push(sent_in(m));
            }
            MessageRole::User | MessageRole::System => {
                close_open(&mut out, &mut open_calls, &mut held);
                out.push(sent_in(m));
            }
            MessageRole::Assistant => {
                close_open(&mut out, &mut open_calls, &mut held);
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
    close_open(&mut out, &mut open_calls, &mut held);
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
            steer: false,
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

    fn stored(role: MessageRole, content: &str, steer: bool) -> StoredMessage {
        StoredMessage {
            id: MessageId::new(),
            thread_id: ThreadId::new(),
            run_id: None,
            seq: 0,
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            notice: None,
            steer,
            replaced_by_run_id: None,
            created_at: ars_domain::time::now(),
        }
    }

    #[test]
    fn the_cursor_falls_behind_only_when_a_message_it_did_not_write_took_a_seq_among_its_own() {
        let at = |seq| StoredMessage {
            seq,
            ..stored(MessageRole::Tool, "", false)
        };
        let mut cursor = Cursor::at(4);
        cursor.wrote(&at(5));
        cursor.wrote(&at(6));
        assert_eq!((cursor.seen, cursor.behind), (6, false));
        // Seq 7 went to someone else (a steer message): it is read from 6 on.
        cursor.wrote(&at(8));
        cursor.wrote(&at(9));
        assert_eq!((cursor.seen, cursor.behind), (6, true));
    }

    fn calling(ids: &[&str]) -> StoredMessage {
        StoredMessage {
            tool_calls: ids
                .iter()
                .map(|id| ToolCallRecord {
                    id: (*id).into(),
                    name: "ls".into(),
                    arguments: "{}".into(),
                    interrupted: false,
                })
                .collect(),
            ..stored(MessageRole::Assistant, "", false)
        }
    }

    fn result(id: &str) -> StoredMessage {
        StoredMessage {
            tool_call_id: Some(id.into()),
            ..stored(MessageRole::Tool, id, false)
        }
    }

    #[test]
    fn a_steer_message_sent_while_calls_were_open_is_read_after_their_results() {
        let history = [
            stored(MessageRole::User, "go", false),
            calling(&["a", "b"]),
            result("a"),
            stored(MessageRole::User, "steer", true),
            result("b"),
            stored(MessageRole::Assistant, "ok", false),
        ];
        assert_eq!(
            to_model_messages(&history),
            vec![
                Message::user("go"),
                Message::assistant("", to_calls(&history[1])),
                Message::tool("a", "a"),
                Message::tool("b", "b"),
                Message::user("steer"),
                Message::assistant("ok", Vec::new()),
            ]
        );
    }

    #[test]
    fn calls_left_open_get_stand_in_results_before_any_later_message() {
        let history = [
            stored(MessageRole::User, "go", false),
            calling(&["a"]),
            stored(MessageRole::User, "steer", true),
            stored(MessageRole::User, "next run", false),
        ];
        let model = to_model_messages(&history);
        assert_eq!(model.len(), 5, "{model:?}");
        assert!(matches!(&model[2], Message::Tool { .. }), "{model:?}");
        assert_eq!(model[3], Message::user("steer"));
        assert_eq!(model[4], Message::user("next run"));
    }

    fn to_calls(m: &StoredMessage) -> Vec<ToolCall> {
        m.tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            })
            .collect()
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
