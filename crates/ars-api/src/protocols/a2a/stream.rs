//! A task's updates as SSE, each a JSON-RPC response whose `result` is a `StreamResponse`:
//! the task as it stands first, `TASK_STATE_WORKING` once the run runs, the answer's text as
//! artifact chunks while the model writes it, then the last status (with the agent's closing
//! message) — after which the stream closes. A task that starts waiting for a person ends its
//! stream at `TASK_STATE_INPUT_REQUIRED`; the client answers it with a message naming the task.

use std::convert::Infallible;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

use ars_domain::{MessageRole, Run, RunStatus};
use ars_events::{EventKind, EventStream};
use ars_store::Store;

use super::{RpcError, error_reply, reply, wire};
use crate::AppState;

struct Reading {
    events: Option<EventStream>,
    store: std::sync::Arc<dyn Store>,
    run: Run,
    id: Value,
    working: bool,
    /// Whether an artifact chunk went out (the next ones append).
    chunked: bool,
    done: bool,
}

impl Reading {
    fn data(&self, result: Value) -> Event {
        Event::default().data(reply(&self.id, result).to_string())
    }

    fn status_update(&self, run: &Run) -> Event {
        self.data(json!({"statusUpdate": {
            "taskId": run.id.to_string(),
            "contextId": run.thread_id.to_string(),
            "status": wire::status(run),
        }}))
    }

    fn chunk(&mut self, text: &str, last: bool) -> Event {
        let mut artifact =
            json!({"artifactId": wire::artifact_id(&self.run), "parts": [{"text": text}]});
        if !self.chunked {
            artifact["name"] = json!("answer");
        }
        let append = self.chunked;
        self.chunked = true;
        self.data(json!({"artifactUpdate": {
            "taskId": self.run.id.to_string(),
            "contextId": self.run.thread_id.to_string(),
            "append": append,
            "lastChunk": last,
            "artifact": artifact,
        }}))
    }

    async fn of(&mut self, kind: EventKind) -> Vec<Event> {
        match kind {
            EventKind::RunStatus {
                status: RunStatus::Running,
                ..
            } if !self.working => {
                self.working = true;
                let mut run = self.run.clone();
                run.status = RunStatus::Running;
                vec![self.status_update(&run)]
            }
            EventKind::MessageStarted {
                role: MessageRole::Assistant,
            } if !self.working => {
                self.working = true;
                let mut run = self.run.clone();
                run.status = RunStatus::Running;
                vec![self.status_update(&run)]
            }
            EventKind::MessageDelta { text } if !text.is_empty() => vec![self.chunk(&text, false)],
            EventKind::RunStatus { status, .. }
                if status == RunStatus::Waiting || status.is_terminal() =>
            {
                self.done = true;
                let run = match self.store.run(self.run.id).await {
                    Ok(Some(run)) => run,
                    _ => self.run.clone(),
                };
                let mut out = Vec::new();
                if status == RunStatus::Success {
                    // The last chunk closes the artifact; one that never streamed comes whole.
                    let rest = if self.chunked {
                        String::new()
                    } else {
                        run.output.clone().unwrap_or_default()
                    };
                    out.push(self.chunk(&rest, true));
                }
                out.push(self.status_update(&run));
                out
            }
            _ => Vec::new(),
        }
    }
}

/// The task's stream: what it is now, then its updates until it ends or waits for a person.
pub(super) async fn respond(state: &AppState, id: Value, run: Run) -> Response {
    let events = match state.runtime.events().subscribe(run.id, 0).await {
        Ok(events) => Some(events),
        Err(e) => {
            let error = RpcError::from(crate::ApiError::from(e));
            let body =
                futures::stream::iter(
                    [Event::default().data(error_reply(&id, &error).to_string())],
                );
            return Sse::new(body.map(Ok::<_, Infallible>)).into_response();
        }
    };
    let reading = Reading {
        events,
        store: state.store.clone(),
        run: run.clone(),
        id,
        working: run.status == RunStatus::Running,
        chunked: false,
        done: false,
    };
    let first = reading.data(json!({"task": wire::task(&run, None)}));
    let body = futures::stream::unfold(reading, |mut reading| async move {
        if reading.done {
            return None;
        }
        loop {
            let next = match reading.events.as_mut() {
                Some(events) => events.next().await,
                None => None,
            };
            match next {
                Some(Ok(event)) => {
                    let out = reading.of(event.into_event().kind).await;
                    if !out.is_empty() {
                        return Some((futures::stream::iter(out), reading));
                    }
                }
                Some(Err(e)) => {
                    reading.done = true;
                    let error = RpcError::from(crate::ApiError::from(e));
                    let event = Event::default().data(error_reply(&reading.id, &error).to_string());
                    return Some((futures::stream::iter(vec![event]), reading));
                }
                None => {
                    reading.done = true;
                    let run = match reading.store.run(reading.run.id).await {
                        Ok(Some(run)) => run,
                        _ => reading.run.clone(),
                    };
                    let update = reading.status_update(&run);
                    return Some((futures::stream::iter(vec![update]), reading));
                }
            }
        }
    })
    .flatten();
    let body = futures::stream::iter([first])
        .chain(body)
        .map(Ok::<_, Infallible>);
    Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response()
}
