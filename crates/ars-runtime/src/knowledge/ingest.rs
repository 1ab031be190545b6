//! Ingestion: a worker takes a document from the store under a lease (renewed while it
//! works), reads its text (off the async runtime; a parser that panics fails only this
//! document), cuts it into chunks, embeds them when the knowledge base has a model, and stores
//! the chunks in one transaction — only if the document was not re-uploaded or deleted
//! meanwhile. A failure is recorded on the document, in words. A worker stopping with its
//! server gives its document back uncounted; a worker that dies (the process crashed or was
//! killed) leaves the lease to run out, and the next claim finds the attempt counted: past
//! `max_attempts` (1 by default) the document is failed rather than read again, so a
//! document that crashes its reader cannot take down the next instance too.

use std::sync::Arc;
use std::time::Duration;

use ars_domain::knowledge::{KbDocument, NewKbChunk};
use ars_knowledge::chunk::{ChunkSettings, chunk, indexed_text};
use ars_knowledge::extract::{Format, extract};
use tokio_util::sync::CancellationToken;

use super::{KnowledgeHub, embed};
use crate::models::ModelSource;

/// How long a worker waits for work when the store has none (an upload wakes it sooner).
const IDLE: Duration = Duration::from_millis(1000);

/// Takes and ingests documents until the hub shuts down.
pub(super) async fn work(hub: KnowledgeHub, models: ModelSource, worker: usize) {
    let config = hub.config().clone();
    loop {
        if hub.inner.shutdown.is_cancelled() {
            return;
        }
        // A read first: an idle poll never queues for the writer.
        let now = ars_domain::time::now();
        let claimed = match hub.store().kb_claimable(now).await {
            Ok(true) => hub.store().claim_kb_document(now, config.lease).await,
            Ok(false) => Ok(None),
            Err(e) => Err(e),
        };
        let document = match claimed {
            Ok(Some(document)) => {
                hub.document_changed(document.kb_id, document.id).await;
                document
            }
            Ok(None) => {
                tokio::select! {
                    () = hub.inner.shutdown.cancelled() => return,
                    () = hub.inner.uploaded.notified() => {}
                    () = tokio::time::sleep(IDLE) => {}
                }
                continue;
            }
            Err(e) => {
                tracing::warn!(worker, error = %e, "cannot take a document to ingest");
                tokio::time::sleep(IDLE).await;
                continue;
            }
        };
        tracing::info!(worker, document = %document.id, name = %document.name, attempt = document.attempts, "ingesting a document");
        let outcome = tokio::select! {
            outcome = ingest(&hub, &models, &document) => outcome,
            () = hub.inner.shutdown.cancelled() => {
                // Stopping with the server: the document goes back, its attempt not counted.
                match hub.store().release_kb_document(document.id, document.version).await {
                    Ok(released) => {
                        if released == ars_store::Written::Applied {
                            hub.document_changed(document.kb_id, document.id).await;
                        }
                        tracing::info!(worker, document = %document.id, "ingestion stopped with the server; the document is taken up again later");
                    }
                    Err(e) => tracing::warn!(worker, document = %document.id, error = %e, "cannot give the document back; it is taken up again when its lease runs out"),
                }
                return;
            }
        };
        let store = hub.store();
        let written = match outcome {
            Ok(chunks) => {
                let count = chunks.len();
                let done = store
                    .finish_kb_document(document.id, document.version, &chunks)
                    .await;
                if matches!(done, Ok(ars_store::Written::Applied)) {
                    tracing::info!(worker, document = %document.id, chunks = count, "document ingested");
                }
                done
            }
            Err(reason) => {
                tracing::info!(worker, document = %document.id, %reason, "document ingestion failed");
                store
                    .fail_kb_document(document.id, document.version, &reason)
                    .await
            }
        };
        match written {
            Ok(ars_store::Written::Applied) => {
                hub.document_changed(document.kb_id, document.id).await
            }
            Ok(ars_store::Written::Superseded) => tracing::info!(
                worker,
                document = %document.id,
                "the document changed while it was ingested; its newer version is ingested instead"
            ),
            Err(e) => {
                tracing::warn!(worker, document = %document.id, error = %e, "cannot record the ingestion")
            }
        }
    }
}

/// Reads, chunks and embeds one claimed document; its chunks, or why not (in words).
async fn ingest(
    hub: &KnowledgeHub,
    models: &ModelSource,
    document: &KbDocument,
) -> Result<Vec<NewKbChunk>, String> {
    let config = hub.config();
    if document.attempts > config.max_attempts {
        let times = document.attempts - 1;
        let times = if times == 1 {
            "once".to_string()
        } else {
            format!("{times} times")
        };
        return Err(format!(
            "reading this document stopped the server {times} (it crashed or was killed while \
             reading it), so it is not read again on its own; retry to try again"
        ));
    }
    let store = hub.store();
    let stop = CancellationToken::new();
    let renewing = renew_while_working(hub, document, stop.clone());
    let result = async {
        let kb = store
            .knowledge_base(document.kb_id)
            .await
            .map_err(|e| format!("cannot read the knowledge base: {e}"))?
            .ok_or("the knowledge base was deleted")?;
        let format = Format::of_name(&document.name).ok_or_else(|| {
            format!(
                "“{}” is not a format knowledge bases read ({})",
                document.name,
                Format::EXTENSIONS
            )
        })?;
        let bytes = store
            .kb_document_file(document.id)
            .await
            .map_err(|e| format!("cannot read the uploaded file: {e}"))?
            .ok_or("the document was deleted")?;
        // One rule for a document's size: its text may hold as many characters as the largest
        // upload holds bytes, so a text file that was accepted is always read (CSV and JSON,
        // whose text repeats headers and paths, and PDF or Word files may still be refused
        // when read).
        let limits = ars_knowledge::extract::ExtractLimits {
            max_chars: usize::try_from(config.max_document_bytes).unwrap_or(usize::MAX),
            ..config.extract
        };
        // Off the async runtime; a panic in a parser fails this document only.
        let text = tokio::task::spawn_blocking(move || extract(format, &bytes, limits))
            .await
            .map_err(|_| "the document could not be read: its parser failed on it".to_string())?
            .map_err(|e| e.to_string())?;
        progress(hub, document, 0.3).await;
        let settings = ChunkSettings {
            size: kb.fields.settings.chunk_size as usize,
            overlap: kb.fields.settings.chunk_overlap as usize,
        };
        let pieces = chunk(&text, format.text_kind(), settings);
        if pieces.is_empty() {
            return Err("the document holds no text".to_string());
        }
        let mut embeddings: Vec<Option<Vec<f32>>> = vec![None; pieces.len()];
        if let Some(model) = &kb.fields.settings.embedding {
            let texts: Vec<String> = pieces.iter().map(indexed_text).collect();
            let total = texts.len();
            let mut done = 0;
            for batch in texts.chunks(256) {
                let vectors = embed(
                    models,
                    &model.provider,
                    &model.model,
                    batch,
                    config.embed_timeout,
                )
                .await
                .map_err(|e| format!("embedding failed: {e}"))?;
                for vector in vectors {
                    embeddings[done] = Some(vector);
                    done += 1;
                }
                progress(hub, document, 0.3 + 0.6 * done as f32 / total as f32).await;
            }
        }
        Ok(pieces
            .into_iter()
            .zip(embeddings)
            .map(|(piece, embedding)| NewKbChunk {
                ordinal: u32::try_from(piece.ordinal).unwrap_or(u32::MAX),
                heading_path: piece.heading_path,
                start: piece.start as u64,
                end: piece.end as u64,
                text: piece.text,
                embedding,
            })
            .collect())
    }
    .await;
    stop.cancel();
    let _ = renewing.await;
    result
}

async fn progress(hub: &KnowledgeHub, document: &KbDocument, done: f32) {
    let until = ars_domain::time::now()
        + chrono::Duration::from_std(hub.config().lease).unwrap_or(chrono::Duration::seconds(60));
    if let Ok(ars_store::Written::Applied) = hub
        .store()
        .renew_kb_document(document.id, document.version, done, until)
        .await
    {
        hub.document_changed(document.kb_id, document.id).await;
    }
}

/// Renews the lease every third of it until `stop`.
fn renew_while_working(
    hub: &KnowledgeHub,
    document: &KbDocument,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let hub = hub.clone();
    let document = Arc::new(document.clone());
    tokio::spawn(async move {
        let every = hub.config().lease / 3;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            let until = ars_domain::time::now()
                + chrono::Duration::from_std(hub.config().lease)
                    .unwrap_or(chrono::Duration::seconds(60));
            let progress = hub
                .store()
                .kb_document(document.id)
                .await
                .ok()
                .flatten()
                .map_or(0.0, |d| d.progress);
            match hub
                .store()
                .renew_kb_document(document.id, document.version, progress, until)
                .await
            {
                // A renewal moves the document's `updated_at`: followers see it too.
                Ok(ars_store::Written::Applied) => {
                    hub.document_changed(document.kb_id, document.id).await;
                }
                Ok(ars_store::Written::Superseded) => return,
                Err(_) => {}
            }
        }
    })
}
