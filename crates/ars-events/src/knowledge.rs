//! Knowledge events: what changed in a knowledge base — a document added, re-uploaded,
//! claimed, advanced, finished, failed, retried or deleted, or the knowledge base itself
//! deleted — for the followers of its document stream, on whichever instance the change
//! happened (an upload through one, ingestion on another).
//!
//! A knowledge base is a topic (see [`crate::topic`]): nothing is numbered or stored. An event
//! only *names* what changed; a follower reads it from the store. Several instances write one
//! document (the API of any of them, the worker that claimed it), and events from two
//! publishers may cross on the way, so a state carried in an event could arrive after a newer
//! one; a state read from the store cannot. The store stays the record.

use ars_domain::{KbDocumentId, KnowledgeBaseId};
use serde::{Deserialize, Serialize};

use crate::EventError;
use crate::topic::{TopicStream, Topics};

/// What changed in a knowledge base. The `type` tag names it on the wire between instances.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnowledgeEvent {
    /// A document was added or written (a new version, a claim, progress, its end, a retry),
    /// or deleted: read it again.
    Document { id: KbDocumentId },
    /// The knowledge base was deleted, with every document of it.
    Deleted,
}

impl KnowledgeEvent {
    /// The wire form between instances.
    pub fn encode(&self) -> Result<String, EventError> {
        serde_json::to_string(self).map_err(EventError::backend)
    }

    /// `None` for anything that is not a knowledge event (another version's, or foreign
    /// traffic), which followers skip.
    pub fn decode(payload: &str) -> Option<Self> {
        serde_json::from_str(payload).ok()
    }
}

/// A knowledge base's events from the moment of following on (see [`TopicStream`]).
pub type KnowledgeEventStream = TopicStream<KnowledgeEvent>;

/// The followers of each knowledge base in one process.
pub type LocalKnowledgeTopics = Topics<KnowledgeBaseId, KnowledgeEvent>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_payloads_are_not_knowledge_events() {
        for event in [
            KnowledgeEvent::Document {
                id: KbDocumentId::new(),
            },
            KnowledgeEvent::Deleted,
        ] {
            assert_eq!(
                KnowledgeEvent::decode(&event.encode().unwrap()),
                Some(event)
            );
        }
        for foreign in ["", "{}", r#"{"type":"run"}"#, r#"{"type":"document"}"#] {
            assert_eq!(KnowledgeEvent::decode(foreign), None, "{foreign}");
        }
    }
}
