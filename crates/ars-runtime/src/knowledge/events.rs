//! What the hub tells the followers of a knowledge base (`ars_events::knowledge`): every write
//! that changes a document — by the API on any instance, or by the ingestion worker holding it
//! — is published on the event bus, so a document stream on any instance sharing the bus hears
//! of it at once.
//!
//! An event only names the document; followers read it from the store. Publishing never fails
//! a write: a lost event delays a follower until the document's next change or its reconnect,
//! and the store keeps the record.

use ars_domain::{KbDocumentId, KnowledgeBaseId};
use ars_events::{EventError, KnowledgeEvent, KnowledgeEventStream};

use super::KnowledgeHub;

impl KnowledgeHub {
    /// Tells followers of `kb` that document `id` was written or deleted.
    pub async fn document_changed(&self, kb: KnowledgeBaseId, id: KbDocumentId) {
        self.publish(kb, KnowledgeEvent::Document { id }).await;
    }

    /// Tells followers of `kb` it was deleted (their streams end), and drops this instance's
    /// index of it.
    pub async fn deleted(&self, kb: KnowledgeBaseId) {
        self.forget(kb);
        self.publish(kb, KnowledgeEvent::Deleted).await;
    }

    /// Follows `kb`'s events, published from now on by any instance.
    pub async fn follow(&self, kb: KnowledgeBaseId) -> Result<KnowledgeEventStream, EventError> {
        self.inner.events.follow_knowledge(kb).await
    }

    async fn publish(&self, kb: KnowledgeBaseId, event: KnowledgeEvent) {
        if let Err(error) = self.inner.events.publish_knowledge(kb, &event).await {
            tracing::warn!(kb = %kb, ?event, %error, "cannot tell followers of a knowledge base what changed");
        }
    }
}
