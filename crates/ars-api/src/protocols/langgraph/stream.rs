//! A run's events as a LangGraph stream: `metadata` first, then the modes asked for, `end`
//! last (after an `error` when the run failed). A run that starts waiting for a person ends
//! its stream there, its values carrying `__interrupt__`.

use std::collections::HashSet;
use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};

use ars_domain::{Message, MessageRole, Run, RunId, RunStatus, Thread};
use ars_events::{EventKind, EventStream, RunEvent};
use ars_runtime::Runtime;
use ars_store::Store;

use super::wire;
use crate::ApiError;
use crate::protocols::CancelOnDrop;

/// The stream modes ARS answers. `messages`, `custom`, `debug`, `tasks` and `checkpoints` are
/// accepted and send nothing: a run has no graph nodes of its own to report.
const MODES: [&str; 9] = [
    "values",
    "updates",
    "messages-tuple",
    "events",
    "messages",
    "custom",
    "debug",
    "tasks",
    "checkpoints",
];

/// The modes a request asks for (`stream_mode`: a name or a list; default `values`).
pub(super) fn modes(value: Option<&Value>) -> Result<Vec<String>, ApiError> {
    let names: Vec<String> = match value {
        None | Some(Value::Null) => vec!["values".into()],
        Some(Value::String(mode)) => vec![mode.clone()],
        Some(Value::Array(modes)) => modes
            .iter()
            .map(|m| m.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                ApiError::unprocessable("stream_mode", "stream_mode is a name or a list of names")
            })?,
        Some(_) => {
            return Err(ApiError::unprocessable(
                "stream_mode",
                "stream_mode is a name or a list of names",
            ));
        }
    };
    if let Some(unknown) = names.iter().find(|m| !MODES.contains(&m.as_str())) {
        return Err(ApiError::unprocessable(
            "stream_mode",
            format!(
                "unknown stream mode `{unknown}`; ARS streams {}",
                MODES.join(", ")
            ),
        ));
    }
    Ok(names)
}

/// What the stream needs to know besides the events.
pub(super) struct StreamSpec {
    pub runtime: Runtime,
    pub store: std::sync::Arc<dyn Store>,
    pub thread: Thread,
    pub run: Run,
    pub graph_id: String,
    pub modes: Vec<String>,
    /// Resume after this event id (`Last-Event-ID`); 0 from the start.
    pub after: u64,
    /// Cancel the run when the client goes away.
    pub cancel_on_disconnect: bool,
}

struct Reading {
    events: EventStream,
    spec: StreamSpec,
    history: Vec<Message>,
    seen: HashSet<String>,
    /// The assistant message being streamed: its chunk id.
    chunk_id: String,
    started: usize,
    done: bool,
    guard: Option<CancelOnDrop>,
}

impl Reading {
    fn wants(&self, mode: &str) -> bool {
        self.spec.modes.iter().any(|m| m == mode)
    }

    fn values(&self, last: Option<&Run>) -> Value {
        let values = wire::values(&self.history, last);
        if values.is_null() {
            json!({"messages": []})
        } else {
            values
        }
    }

    /// The SSE events one run event becomes.
    async fn of(&mut self, event: RunEvent) -> Vec<Event> {
        let id = event.id.to_string();
        let mut out = Vec::new();
        if self.wants("events") {
            out.push(sse("events", &json!(event), Some(&id)));
        }
        match event.kind {
            EventKind::MessageStarted {
                role: MessageRole::Assistant,
            } => {
                self.started += 1;
                self.chunk_id = format!("run-{}-{}", self.spec.run.id, self.started);
            }
            EventKind::MessageDelta { text } if self.wants("messages-tuple") => {
                let metadata = json!({
                    "run_id": self.spec.run.id.to_string(),
                    "thread_id": self.spec.thread.id.to_string(),
                    "assistant_id": self.spec.run.agent_id.to_string(),
                    "graph_id": self.spec.graph_id,
                    "langgraph_node": "model",
                    "langgraph_step": self.started,
                });
                let chunk = wire::chunk(&text, &self.chunk_id);
                out.push(sse("messages", &json!([chunk, metadata]), Some(&id)));
            }
            EventKind::MessageCompleted { message } if self.seen.insert(message.id.to_string()) => {
                let node = match message.role {
                    MessageRole::Assistant => Some("model"),
                    MessageRole::Tool => Some("tools"),
                    _ => None,
                };
                if let Some(node) = node
                    && self.wants("updates")
                {
                    let update = json!({node: {"messages": [wire::message(&message)]}});
                    out.push(sse("updates", &update, Some(&id)));
                }
                self.history.push(*message);
                if self.wants("values") {
                    out.push(sse("values", &self.values(None), Some(&id)));
                }
            }
            EventKind::RunStatus { status, .. }
                if status == RunStatus::Waiting || status.is_terminal() =>
            {
                self.done = true;
                if let Some(guard) = &mut self.guard {
                    guard.disarm();
                }
                let run = match self.spec.store.run(self.spec.run.id).await {
                    Ok(Some(run)) => run,
                    _ => self.spec.run.clone(),
                };
                if status == RunStatus::Waiting && self.wants("values") {
                    out.push(sse("values", &self.values(Some(&run)), Some(&id)));
                }
                if matches!(
                    status,
                    RunStatus::Error | RunStatus::Timeout | RunStatus::Interrupted
                ) {
                    let error = json!({
                        "error": run.error_code.map_or("RunError", |c| c.as_str()),
                        "message": run.error.clone().unwrap_or_else(|| format!("the run ended {}", status.as_str())),
                    });
                    out.push(sse("error", &error, Some(&id)));
                }
                let end = json!({"run_id": run.id.to_string(), "status": wire::run_status(status)});
                out.push(sse("end", &end, None));
            }
            _ => {}
        }
        out
    }
}

fn sse(name: &str, data: &Value, id: Option<&str>) -> Event {
    let event = Event::default().event(name).data(data.to_string());
    match id {
        Some(id) => event.id(id),
        None => event,
    }
}

/// The run's stream, as an SSE answer.
pub(super) async fn respond(spec: StreamSpec) -> Result<Response, ApiError> {
    let body = events(spec).await?;
    Ok(Sse::new(body.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response())
}

async fn events(spec: StreamSpec) -> Result<impl Stream<Item = Event> + Send + 'static, ApiError> {
    let events = spec
        .runtime
        .events()
        .subscribe(spec.run.id, spec.after)
        .await?;
    let history = spec.store.messages(&spec.thread.id).await?;
    let seen = history.iter().map(|m| m.id.to_string()).collect();
    let guard = spec
        .cancel_on_disconnect
        .then(|| CancelOnDrop::new(&spec.runtime, spec.run.id));
    let run_id: RunId = spec.run.id;
    let mut head = vec![sse(
        "metadata",
        &json!({"run_id": run_id.to_string(), "attempt": 1}),
        None,
    )];
    let reading = Reading {
        events,
        history,
        seen,
        chunk_id: format!("run-{run_id}-0"),
        started: 0,
        done: false,
        guard,
        spec,
    };
    if reading.wants("values") && reading.spec.after == 0 {
        head.push(sse("values", &reading.values(None), None));
    }
    let body = futures::stream::unfold(reading, move |mut reading| async move {
        if reading.done {
            return None;
        }
        loop {
            match reading.events.next().await {
                Some(Ok(event)) => {
                    let out = reading.of(event.into_event()).await;
                    if !out.is_empty() || reading.done {
                        return Some((futures::stream::iter(out), reading));
                    }
                }
                Some(Err(e)) => {
                    reading.done = true;
                    if let Some(guard) = &mut reading.guard {
                        guard.disarm();
                    }
                    let error = json!({"error": "StreamError", "message": ApiError::from(e).public_message()});
                    let end = json!({"run_id": run_id.to_string(), "status": "error"});
                    let out = vec![sse("error", &error, None), sse("end", &end, None)];
                    return Some((futures::stream::iter(out), reading));
                }
                None => {
                    reading.done = true;
                    if let Some(guard) = &mut reading.guard {
                        guard.disarm();
                    }
                    let status = match reading.spec.store.run(run_id).await {
                        Ok(Some(run)) => wire::run_status(run.status),
                        _ => "error",
                    };
                    let end = json!({"run_id": run_id.to_string(), "status": status});
                    return Some((futures::stream::iter(vec![sse("end", &end, None)]), reading));
                }
            }
        }
    })
    .flatten();
    Ok(futures::stream::iter(head).chain(body))
}
