//! `GET /api/knowledge-bases/{id}/events`: a knowledge base's documents as Server-Sent Events,
//! so the documents page follows ingestion without polling. One SSE message per change:
//!
//! ```text
//! event: snapshot   data: {"documents": [KbDocumentView…]}   every document, first
//! event: document   data: KbDocumentView                     one added or changed
//! event: removed    data: {"id"}                             one deleted
//! ```
//!
//! Changes travel over the event bus (`EventBus::follow_knowledge`), published by whoever
//! wrote them — the API on any instance (uploads, retries, deletions), the ingestion worker
//! that holds the document (its claim, progress and end). An event names the document; the
//! stream reads it from the store and sends it when it differs from what it last sent, so
//! events that cross on the way between instances cannot leave an older state standing. The
//! stream follows before it reads the snapshot, so nothing in between is missed; a stream that
//! fell behind reads every document again and sends what changed. An idle knowledge base costs
//! nothing. The stream ends when the knowledge base is deleted, when the server shuts down, or
//! when it loses the event bus: reconnect.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::convert::Infallible;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::{Stream, StreamExt};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::knowledge::KbDocument;
use ars_domain::{KbDocumentId, KnowledgeBaseId};
use ars_events::{EventError, KnowledgeEvent, KnowledgeEventStream};

use super::documents::{KbDocumentView, document_view};
use super::visible;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The `event:` names of a knowledge base's event stream.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum KbEventName {
    Snapshot,
    Document,
    Removed,
}

// Only described, never built: the stream writes the frames.
/// One message of a knowledge base's event stream (OpenAPI 3.1 cannot type a stream, so this
/// describes each message).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct KbEventMessage {
    event: KbEventName,
    /// JSON: `{"documents": [KbDocumentView…]}` (`snapshot`, the first message), a
    /// `KbDocumentView` (`document`), or `{"id"}` of a deleted document (`removed`).
    data: String,
}

/// Follows a knowledge base's documents (SSE): first a `snapshot` of them all, then a
/// `document` message whenever a document is added or its status or progress changes
/// (ingestion on any instance), and `removed` when one is deleted. Ends when the knowledge
/// base is deleted.
#[utoipa::path(get, path = "/knowledge-bases/{id}/events", tag = "knowledge", security(("bearer" = [])),
    params(("id" = String, Path, description = "The knowledge base's UUID")),
    responses(
        (status = 200, content_type = "text/event-stream", body = KbEventMessage,
         description = "One SSE message per change: `event:` its kind, `data:` its JSON"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
    ))]
pub async fn knowledge_events(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let kb = visible(&state, &auth.caller(), &id).await?;
    // Following first, reading second: a change in between arrives after the snapshot.
    let events = state.knowledge.follow(kb.id).await?;
    let documents = state.store.kb_documents(kb.id).await?;
    let keep_alive = state.config.sse_keep_alive;
    let closed = state.runtime.closed();
    let mut follower = Follower {
        state,
        kb: kb.id,
        events,
        sent: HashMap::new(),
        queue: VecDeque::new(),
        missed: false,
    };
    follower.snapshot(documents);
    let stream = futures::stream::unfold(follower, |mut follower| async move {
        let event = follower.next().await?;
        Some((Ok(event), follower))
    })
    .take_until(closed);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(keep_alive)))
}

/// One open stream: what it last sent of each document, and the messages still to send.
struct Follower {
    state: AppState,
    kb: KnowledgeBaseId,
    events: KnowledgeEventStream,
    sent: HashMap<KbDocumentId, KbDocumentView>,
    queue: VecDeque<Event>,
    /// A read of the store failed: the next event reads every document again.
    missed: bool,
}

impl Follower {
    /// The next message; `None` ends the stream.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            match self.events.next().await? {
                Ok(KnowledgeEvent::Deleted) => return None,
                Ok(KnowledgeEvent::Document { id }) if !self.missed => self.document(id).await,
                // Fell behind (or could not read last time): the documents as they now stand.
                Ok(KnowledgeEvent::Document { .. }) | Err(EventError::NotRetained) => {
                    self.catch_up().await?;
                }
                Err(error) => {
                    tracing::warn!(kb = %self.kb, %error, "a knowledge event stream lost the event bus");
                    return None;
                }
            }
        }
    }

    /// The first message: every document.
    fn snapshot(&mut self, documents: Vec<KbDocument>) {
        let views: Vec<KbDocumentView> = documents.into_iter().map(document_view).collect();
        if let Ok(event) = Event::default()
            .event("snapshot")
            .json_data(serde_json::json!({ "documents": &views }))
        {
            self.queue.push_back(event);
        }
        self.sent = views.into_iter().map(|v| (v.id(), v)).collect();
    }

    /// Document `id` changed: sends it as it now stands, or that it is gone.
    async fn document(&mut self, id: KbDocumentId) {
        match self.state.store.kb_document(id).await {
            Ok(Some(document)) if document.kb_id == self.kb => {
                self.changed(document_view(document))
            }
            Ok(_) => self.removed(id),
            Err(error) => {
                tracing::warn!(kb = %self.kb, %error, "cannot read a changed document");
                self.missed = true;
            }
        }
    }

    /// Reads every document again and sends what changed since the last message; `None` when
    /// the knowledge base is gone.
    async fn catch_up(&mut self) -> Option<()> {
        if let Ok(None) = self.state.store.knowledge_base(self.kb).await {
            return None;
        }
        let documents = match self.state.store.kb_documents(self.kb).await {
            Ok(documents) => documents,
            Err(error) => {
                tracing::warn!(kb = %self.kb, %error, "cannot read the documents again");
                self.missed = true;
                return Some(());
            }
        };
        self.missed = false;
        let mut seen = BTreeSet::new();
        for document in documents {
            seen.insert(document.id);
            self.changed(document_view(document));
        }
        let gone: Vec<KbDocumentId> = self
            .sent
            .keys()
            .filter(|id| !seen.contains(id))
            .copied()
            .collect();
        for id in gone {
            self.removed(id);
        }
        Some(())
    }

    /// Sends `view` unless it is what was last sent of it.
    fn changed(&mut self, view: KbDocumentView) {
        if self.sent.get(&view.id()) == Some(&view) {
            return;
        }
        if let Ok(event) = Event::default().event("document").json_data(&view) {
            self.queue.push_back(event);
        }
        self.sent.insert(view.id(), view);
    }

    /// Sends that document `id` is gone, if it was sent.
    fn removed(&mut self, id: KbDocumentId) {
        if self.sent.remove(&id).is_none() {
            return;
        }
        if let Ok(event) = Event::default()
            .event("removed")
            .json_data(serde_json::json!({ "id": id }))
        {
            self.queue.push_back(event);
        }
    }
}
