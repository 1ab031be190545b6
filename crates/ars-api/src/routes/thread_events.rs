//! `GET /api/threads/{id}/events`: what changes on a thread, as Server-Sent Events — its runs,
//! the subagent runs started from it and the completion notices written to it — so a status
//! panel or a second tab stays current without polling. One SSE message per change:
//!
//! ```text
//! event: snapshot      data: ThreadSnapshot  {"thread_id", "subagents": [SubagentRun…], "active_run": RunDetail|null}
//! event: subagent      data: SubagentRun     a subagent run was created, changed status, spent tokens or ended
//! event: run           data: RunDetail       a run on the thread was created, changed status or ended
//! event: notice        data: ThreadNotice    {"message": Message, "subagent": SubagentRun}
//! event: approval_requested  data: ApprovalRequested  {"run_id", "thread_id", "items": [PendingItem…]}
//! event: approval_resolved   data: ApprovalResolved   {"run_id", "thread_id", "call_ids": […]}
//! event: stream_error  data: ErrorBody       the stream cannot go on (it ends)
//! ```
//!
//! The first message is always a `snapshot`, read after the stream started following the
//! thread, so nothing that happens between the two is missed; a client that falls too far
//! behind gets a fresh `snapshot` in the stream. Entries are whole: a client replaces the one it
//! has with the same `run_id` (delivery is at least once), and on one stream a run's terminal
//! entry is never followed by an older, non-terminal one. There are no event ids and nothing
//! to resume: a reconnecting client gets a fresh snapshot. Comment lines keep an idle stream
//! open; it ends when the server shuts down (or loses the event bus): reconnect.
//!
//! Across instances the changes travel over the event bus (`EventBus::follow_thread`): a child
//! run executing on another instance updates a stream opened here.

use std::collections::HashSet;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{PendingItem, RunId, Thread, ThreadId};
use ars_events::{EventError, ThreadEvent, ThreadEventStream};

use super::events::stream_error;
use super::runs::RunDetail;
use super::subagents::{SubagentRun, entries};
use super::threads::{MessageView, owned_thread};
use crate::metrics::SseSubscriber;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The first message of a thread's event stream (and of every catch-up): the thread as it
/// stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadSnapshot {
    pub thread_id: ThreadId,
    /// Every subagent run started from the thread, oldest first (as
    /// `GET /api/threads/{id}/subagents` lists them).
    pub subagents: Vec<SubagentRun>,
    /// The run active on the thread, if any (follow it at `GET /api/runs/{id}/events`).
    pub active_run: Option<RunDetail>,
    /// Every item the thread's runs and its subagents' runs wait on (as
    /// `GET /api/threads/{id}/pending` lists them).
    pub pending: Vec<PendingItem>,
}

/// A run of the thread, or of a subagent started from it, waits for decisions on `items`
/// (send them to `POST /api/runs/{run_id}/decisions`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ApprovalRequested {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    pub items: Vec<PendingItem>,
}

/// What a run waited on was decided (or its time for a decision ran out): those items are no
/// longer pending.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApprovalResolved {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    pub call_ids: Vec<String>,
}

/// A completion notice committed to the thread: the message (as
/// `GET /api/threads/{id}/messages` lists it) and the background subagent run it reports on.
#[derive(Debug, Serialize, ToSchema)]
pub struct ThreadNotice {
    pub message: MessageView,
    /// The child run as it ended.
    pub subagent: SubagentRun,
}

/// The `event:` names of a thread's event stream.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum ThreadEventName {
    Snapshot,
    Subagent,
    Run,
    Notice,
    ApprovalRequested,
    ApprovalResolved,
    StreamError,
}

// Only described, never built: `to_sse` and `stream_error` write the frames.
/// One message of a thread's event stream, as an SSE parser reads it (OpenAPI 3.1 cannot type
/// a stream, so this describes each message).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ThreadEventMessage {
    event: ThreadEventName,
    /// JSON: a `ThreadSnapshot` (`snapshot`), `SubagentRun` (`subagent`), `RunDetail` (`run`),
    /// `ThreadNotice` (`notice`), `ApprovalRequested` (`approval_requested`),
    /// `ApprovalResolved` (`approval_resolved`) or `ErrorBody` (`stream_error`).
    data: String,
}

/// Follows a thread (SSE): a `snapshot` of its subagent runs and active run, then every change
/// as `subagent`, `run` and `notice` messages. Never ends by itself; reconnecting gives a fresh
/// snapshot.
#[utoipa::path(get, path = "/threads/{id}/events", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")),
    responses(
        (status = 200, content_type = "text/event-stream", body = ThreadEventMessage,
         description = "One SSE message per change: `event:` its kind, `data:` its JSON (no `id:`); a `snapshot` first"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn thread_events(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, axum::Error>>>, ApiError> {
    let thread = owned_thread(&state, &auth, &id).await?;
    // Following first, reading second: a change in between arrives after the snapshot.
    let events = state.runtime.events().follow_thread(&thread.id).await?;
    let snapshot = snapshot(&state, &thread).await?;
    let keep_alive = state.config.sse_keep_alive;
    let closed = state.runtime.closed();
    let follower = Follower {
        state,
        thread,
        events,
        ended: HashSet::new(),
        next_snapshot: Some(snapshot),
        done: false,
        _counted: SseSubscriber::enter(),
    };
    let stream = futures::stream::unfold(follower, |mut follower| async move {
        let frame = follower.next().await?;
        Some((frame, follower))
    })
    .take_until(closed);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(keep_alive)))
}

/// The thread as it stands.
async fn snapshot(state: &AppState, thread: &Thread) -> Result<ThreadSnapshot, ApiError> {
    let subagents = entries(state, thread).await?;
    let active_run = match state.store.active_run(&thread.id).await? {
        Some(run) => Some(RunDetail {
            total_usage: state.runtime.total_usage(&run).await?,
            run: run.into(),
        }),
        None => None,
    };
    let pending = state
        .store
        .waiting_runs_under(&thread.id)
        .await?
        .into_iter()
        .flat_map(|r| r.pending)
        .collect();
    Ok(ThreadSnapshot {
        thread_id: thread.id.clone(),
        subagents,
        active_run,
        pending,
    })
}

/// One open stream: the thread's events as they come, turned into SSE messages.
struct Follower {
    state: AppState,
    thread: Thread,
    events: ThreadEventStream,
    /// Runs this stream has shown ended: an older entry of theirs that arrives late is
    /// dropped.
    ended: HashSet<RunId>,
    /// Sent before anything else.
    next_snapshot: Option<ThreadSnapshot>,
    /// After a `stream_error`, nothing more.
    done: bool,
    /// Counted while the stream lives.
    _counted: SseSubscriber,
}

impl Follower {
    /// The next SSE message; `None` ends the stream.
    async fn next(&mut self) -> Option<Result<Event, axum::Error>> {
        loop {
            if let Some(snapshot) = self.next_snapshot.take() {
                self.ended.extend(
                    snapshot
                        .subagents
                        .iter()
                        .filter(|s| s.status.is_terminal())
                        .map(|s| s.run_id),
                );
                return Some(Event::default().event("snapshot").json_data(&snapshot));
            }
            if self.done {
                return None;
            }
            match self.events.next().await? {
                Ok(event) => {
                    if let Some(frame) = self.frame(event) {
                        return Some(frame);
                    }
                }
                // Fell behind and missed some: the state as it now stands instead.
                Err(EventError::NotRetained) => match snapshot(&self.state, &self.thread).await {
                    Ok(snapshot) => self.next_snapshot = Some(snapshot),
                    Err(error) => {
                        self.done = true;
                        return Some(stream_error(error));
                    }
                },
                Err(error) => {
                    self.done = true;
                    return Some(stream_error(error.into()));
                }
            }
        }
    }

    /// The SSE message of one thread event, or `None` for one this stream does not show (not
    /// this thread's, or older than an end it has shown).
    fn frame(&mut self, event: ThreadEvent) -> Option<Result<Event, axum::Error>> {
        let run = event.run();
        if run.user_id != self.thread.user_id {
            return None;
        }
        let (id, terminal) = (run.id, run.status.is_terminal());
        let notice = matches!(event, ThreadEvent::Notice { .. });
        if !notice && !terminal && self.ended.contains(&id) {
            return None;
        }
        if terminal {
            self.ended.insert(id);
        }
        Some(match event {
            ThreadEvent::Run { run, total_usage } => {
                if run.thread_id != self.thread.id {
                    return None;
                }
                Event::default().event("run").json_data(RunDetail {
                    run: run.into(),
                    total_usage,
                })
            }
            ThreadEvent::Subagent { run, subagent_slug } => Event::default()
                .event("subagent")
                .json_data(SubagentRun::new(run, subagent_slug)),
            ThreadEvent::Notice {
                message,
                run,
                subagent_slug,
            } => Event::default().event("notice").json_data(ThreadNotice {
                message: (*message).into(),
                subagent: SubagentRun::new(run, subagent_slug),
            }),
            ThreadEvent::ApprovalRequested { run } => Event::default()
                .event("approval_requested")
                .json_data(ApprovalRequested {
                    run_id: run.id,
                    thread_id: run.thread_id,
                    items: run.pending,
                }),
            ThreadEvent::ApprovalResolved { run, call_ids } => Event::default()
                .event("approval_resolved")
                .json_data(ApprovalResolved {
                    run_id: run.id,
                    thread_id: run.thread_id,
                    call_ids,
                }),
        })
    }
}
