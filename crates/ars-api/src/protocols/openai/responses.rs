//! The Responses API, the subset an agent answers: a response is a run (`resp_<run id>`).
//! `POST /v1/responses` with `input` (a string or a list of messages) starts one on a new
//! thread, or with `previous_response_id` on that response's thread (its stored history plus
//! the last user message of `input`; system and developer messages are left out); `stream: true` sends `response.created`, the output
//! item and text part opening, `response.output_text.delta`s, their closing and
//! `response.completed` (`response.failed` when the run fails). `instructions` are ignored:
//! the agent's own system prompt applies. `GET /v1/responses/{id}` reads one back.

use std::convert::Infallible;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use ars_domain::{Agent, MessageRole, Run, RunId, RunStatus, Usage};

use super::chat::Content;
use super::stream::{Piece, pieces};
use super::{OpenAiError, model_agent, with_ids};
use crate::extract::{ApiJson, KeyAuth};
use crate::protocols::{
    CancelOnDrop, MAX_SEED_MESSAGES, Seed, ended, own_run, own_thread, run_input, seeded_thread,
    start,
};
use crate::{ApiError, AppState};

#[derive(Debug, Deserialize)]
pub(super) struct ResponseRequest {
    model: String,
    input: Input,
    #[serde(default)]
    previous_response_id: Option<String>,
    #[serde(default)]
    stream: Option<bool>,
    /// Read and ignored: the agent's own system prompt applies.
    #[serde(default)]
    #[allow(dead_code)]
    instructions: Option<String>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Input {
    Text(String),
    Items(Vec<InputItem>),
}

/// A message of `input` (`{"role", "content"}`, `type: "message"` or none); other item types
/// (function call outputs, reasoning) are refused.
#[derive(Debug, Deserialize)]
struct InputItem {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Option<Content>,
}

/// The conversation before the input, and the input (the last item, a user message).
fn conversation(input: Input) -> Result<(Vec<Seed>, String), ApiError> {
    let items = match input {
        Input::Text(text) => return Ok((Vec::new(), text)),
        Input::Items(items) => items,
    };
    if items.len() > MAX_SEED_MESSAGES {
        return Err(ApiError::unprocessable(
            "input",
            format!("at most {MAX_SEED_MESSAGES} input items"),
        ));
    }
    let mut seeds = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = format!("input[{i}]");
        if let Some(kind) = item.kind.as_deref().filter(|k| *k != "message") {
            return Err(ApiError::unprocessable(
                format!("{at}.type"),
                format!("input items of type `{kind}` are not supported; send messages"),
            ));
        }
        let role = match item.role.as_deref() {
            // As `instructions`: the agent's own system prompt applies.
            Some("system" | "developer") => continue,
            Some("user") => MessageRole::User,
            Some("assistant") => MessageRole::Assistant,
            other => {
                return Err(ApiError::unprocessable(
                    format!("{at}.role"),
                    format!(
                        "role {} is not one of system, developer, user or assistant",
                        other.map_or("(none)".into(), |r| format!("`{r}`"))
                    ),
                ));
            }
        };
        let content = match item.content {
            Some(content) => content.text(&at)?,
            None => String::new(),
        };
        seeds.push(Seed::text(role, content));
    }
    match seeds.pop() {
        Some(last) if last.role == MessageRole::User => Ok((seeds, last.content)),
        _ => Err(ApiError::unprocessable(
            "input",
            "the last input item must be the user's message: it is what the agent answers",
        )),
    }
}

/// The run a response id names (`resp_<run id>`, or the bare run id).
fn run_id_of(id: &str) -> Option<RunId> {
    RunId::parse(id.strip_prefix("resp_").unwrap_or(id))
}

fn response_id(run: &Run) -> String {
    format!("resp_{}", run.id)
}

fn message_id(run: &Run) -> String {
    format!("msg_{}", run.id)
}

/// A run as a response object.
fn response_of(run: &Run, model: &str, usage: Option<Usage>, previous: Option<RunId>) -> Value {
    let (status, error) = match run.status {
        RunStatus::Pending => ("queued", Value::Null),
        RunStatus::Running | RunStatus::Waiting => ("in_progress", Value::Null),
        RunStatus::Success => ("completed", Value::Null),
        RunStatus::Cancelled => ("cancelled", Value::Null),
        // The Responses API's error codes are a closed set: the run's own code is in `/api`.
        RunStatus::Error | RunStatus::Timeout | RunStatus::Interrupted => (
            "failed",
            json!({"code": "server_error",
                   "message": OpenAiError::of_run(run).body()["error"]["message"]}),
        ),
    };
    let output = match (&run.output, run.status) {
        (Some(text), RunStatus::Success) => json!([output_item(run, text, "completed")]),
        _ => json!([]),
    };
    json!({
        "id": response_id(run),
        "object": "response",
        "created_at": run.created_at.timestamp(),
        "status": status,
        "error": error,
        "incomplete_details": null,
        "instructions": null,
        "max_output_tokens": null,
        "model": model,
        "output": output,
        "parallel_tool_calls": false,
        "previous_response_id": previous.map(|id| format!("resp_{id}")),
        "reasoning": null,
        "store": true,
        "temperature": null,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": null,
        "truncation": "disabled",
        "usage": usage.map(usage_json),
        "user": null,
        "metadata": {},
    })
}

fn output_item(run: &Run, text: &str, status: &str) -> Value {
    json!({
        "type": "message",
        "id": message_id(run),
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

fn usage_json(usage: Usage) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total(),
    })
}

/// The run before `run` on its thread, whose response this one follows.
async fn previous_of(state: &AppState, run: &Run) -> Result<Option<RunId>, ApiError> {
    let runs = state.store.thread_runs(&run.thread_id).await?;
    Ok(runs
        .iter()
        .take_while(|r| r.id != run.id)
        .filter(|r| r.parent_run_id().is_none())
        .last()
        .map(|r| r.id))
}

pub(super) async fn create(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    body: Result<ApiJson<ResponseRequest>, ApiError>,
) -> Result<Response, OpenAiError> {
    let auth = auth?;
    let ApiJson(body) = body?;
    if body.tools.as_ref().is_some_and(|tools| !tools.is_empty()) {
        return Err(ApiError::unprocessable(
            "tools",
            "an agent runs its own tools; client-side tools are not supported",
        )
        .into());
    }
    let agent = model_agent(&state, &auth, &body.model).await?;
    let (seeds, input) = conversation(body.input)?;
    let input = run_input(input, "input")?;
    let user = &auth.0.user;
    let (thread, previous) = match &body.previous_response_id {
        Some(id) => {
            let previous = match run_id_of(id) {
                Some(run) => own_run(&state, user, run).await,
                None => Err(ApiError::not_found(ars_domain::Subject::Run)),
            }
            .map_err(|_| ApiError::NotFound(format!("no response `{id}` of yours")))?;
            let thread = own_thread(&state, user, &previous.thread_id.to_string(), Some(&agent))
                .await
                .map_err(|_| {
                    ApiError::unprocessable(
                        "previous_response_id",
                        format!(
                            "response `{id}` is not a conversation with `{}`",
                            agent.slug
                        ),
                    )
                })?;
            (thread, Some(previous.id))
        }
        None => (
            seeded_thread(&state, user, &agent, seeds, input.as_str()).await?,
            None,
        ),
    };
    let run = start(&state, user, thread, input).await?;
    tracing::info!(run_id = %run.id, agent = %agent.slug, user = %user.id, "run started over /v1/responses");
    if body.stream.unwrap_or(false) {
        return streamed(&state, run, agent, previous).await;
    }
    let mut guard = CancelOnDrop::new(&state.runtime, run.id);
    let ended = ended(&state.runtime, run.id).await?;
    guard.disarm();
    let usage = state
        .runtime
        .total_usage(&ended)
        .await
        .map_err(ApiError::from)?;
    let body = response_of(&ended, &agent.slug, Some(usage), previous);
    Ok(with_ids(Json(body).into_response(), &ended))
}

pub(super) async fn retrieve(
    State(state): State<AppState>,
    auth: Result<KeyAuth, ApiError>,
    Path(id): Path<String>,
) -> Result<Response, OpenAiError> {
    let auth = auth?;
    let user = &auth.0.user;
    let run = match run_id_of(&id) {
        Some(run) => own_run(&state, user, run).await,
        None => Err(ApiError::not_found(ars_domain::Subject::Run)),
    }
    .map_err(|_| ApiError::NotFound(format!("no response `{id}` of yours")))?;
    let model = state
        .store
        .agent(run.agent_id)
        .await
        .map_err(ApiError::from)?
        .map_or_else(String::new, |agent| agent.slug);
    let usage = state
        .runtime
        .total_usage(&run)
        .await
        .map_err(ApiError::from)?;
    let previous = previous_of(&state, &run).await?;
    let body = response_of(&run, &model, Some(usage), previous);
    Ok(with_ids(Json(body).into_response(), &run))
}

/// The response as events: `response.created`, `response.in_progress`, the output item and
/// its text part opened, `response.output_text.delta`s, everything closed again, then
/// `response.completed` (or `response.failed`, the run's error in it).
async fn streamed(
    state: &AppState,
    run: Run,
    agent: Agent,
    previous: Option<RunId>,
) -> Result<Response, OpenAiError> {
    let pieces = pieces(&state.runtime, run.id).await?;
    let runtime = state.runtime.clone();
    let mut events = ResponseEvents {
        sequence: 0,
        text: String::new(),
        opened: false,
        item_id: message_id(&run),
        model: agent.slug,
        previous,
    };
    let head = events.head(&run);
    let body = pieces
        .then(move |piece| {
            let runtime = runtime.clone();
            async move {
                match piece {
                    Piece::Ended(run) => {
                        let usage = runtime.total_usage(&run).await.ok();
                        (Piece::Ended(run), usage)
                    }
                    other => (other, None),
                }
            }
        })
        .map(move |(piece, usage)| futures::stream::iter(events.of(piece, usage)))
        .flatten();
    let body = futures::stream::iter(head)
        .chain(body)
        .map(Ok::<_, Infallible>);
    let response = Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response();
    Ok(with_ids(response, &run))
}

/// Writes a streamed response's events, numbered in order.
struct ResponseEvents {
    sequence: u64,
    /// The text streamed so far.
    text: String,
    /// Whether the output item and its text part were announced.
    opened: bool,
    item_id: String,
    model: String,
    previous: Option<RunId>,
}

impl ResponseEvents {
    fn event(&mut self, kind: &str, mut data: Value) -> Event {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        Event::default().event(kind).data(data.to_string())
    }

    /// `response.created` and `response.in_progress`.
    fn head(&mut self, run: &Run) -> Vec<Event> {
        let mut response = response_of(run, &self.model, None, self.previous);
        let created = self.event("response.created", json!({"response": response.clone()}));
        response["status"] = json!("in_progress");
        let in_progress = self.event("response.in_progress", json!({"response": response}));
        vec![created, in_progress]
    }

    /// The output item and its text part, announced once.
    fn open(&mut self, out: &mut Vec<Event>) {
        if self.opened {
            return;
        }
        self.opened = true;
        let item = json!({"type": "message", "id": self.item_id, "status": "in_progress",
                          "role": "assistant", "content": []});
        out.push(self.event(
            "response.output_item.added",
            json!({"output_index": 0, "item": item}),
        ));
        let part = json!({"type": "output_text", "text": "", "annotations": []});
        let at = json!({"item_id": self.item_id, "output_index": 0, "content_index": 0,
                        "part": part});
        out.push(self.event("response.content_part.added", at));
    }

    fn of(&mut self, piece: Piece, usage: Option<Usage>) -> Vec<Event> {
        let mut out = Vec::new();
        match piece {
            Piece::Text(delta) => {
                self.open(&mut out);
                self.text.push_str(&delta);
                let data = json!({"item_id": self.item_id, "output_index": 0, "content_index": 0,
                                  "delta": delta, "logprobs": []});
                out.push(self.event("response.output_text.delta", data));
            }
            Piece::Ended(run) if run.status == RunStatus::Success => {
                self.open(&mut out);
                // The stored answer is the authority; what streamed was its text.
                let text = run.output.clone().unwrap_or_else(|| self.text.clone());
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                let at = |extra: Value| {
                    let mut data = json!({"item_id": self.item_id, "output_index": 0,
                                          "content_index": 0});
                    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
                        data.extend(extra);
                    }
                    data
                };
                let done = at(json!({"text": text, "logprobs": []}));
                let part_done = at(json!({"part": part}));
                out.push(self.event("response.output_text.done", done));
                out.push(self.event("response.content_part.done", part_done));
                let item = output_item(&run, &text, "completed");
                out.push(self.event(
                    "response.output_item.done",
                    json!({"output_index": 0, "item": item}),
                ));
                let response = response_of(&run, &self.model, usage, self.previous);
                out.push(self.event("response.completed", json!({"response": response})));
            }
            Piece::Ended(run) => {
                let response = response_of(&run, &self.model, usage, self.previous);
                out.push(self.event("response.failed", json!({"response": response})));
            }
            Piece::Failed(error) => {
                let body = error.body();
                let data = json!({"code": body["error"]["code"], "message": body["error"]["message"],
                                  "param": null});
                out.push(self.event("error", data));
            }
        }
        out
    }
}
