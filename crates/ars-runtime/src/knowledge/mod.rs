//! Knowledge bases at run time (SPEC §2): ingestion in the background, the search indexes,
//! and (in `tools`) the plug-in that gives agents `knowledge_search` and `knowledge_read`.
//!
//! The store holds everything that matters — documents, their files, chunks and vectors.
//! Each instance keeps, for every knowledge base it has searched, a BM25 index on disk
//! (`<data dir>/knowledge/<kb id>/`) and the chunks' vectors in memory: derived data, brought
//! up to date from the store's change log (a background loop every second, and before every
//! search), rebuilt from the chunks whenever it is missing or unreadable. So a document
//! ingested through one instance is found through every other within about a second.
//!
//! Ingestion (`ingest`) takes documents from the store under a lease, so several instances
//! share the work and a document whose worker died is taken up again. Every change to a
//! document is published on the event bus (`events`) for the streams that follow it.

mod events;
mod ingest;
pub mod tools;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use ars_domain::knowledge::{KbChunk, KnowledgeBase, chunk_id, parse_chunk_id};
use ars_domain::{KbDocumentId, KnowledgeBaseId};
use ars_events::EventBus;
use ars_knowledge::extract::ExtractLimits;
use ars_knowledge::fusion::{RRF_K, reciprocal_rank_fusion};
use ars_knowledge::index::{IndexedChunk, KbIndex};
use ars_knowledge::vectors::VectorIndex;
use ars_store::{KnowledgeStore, StoreError};

use crate::models::ModelSource;

/// How knowledge bases work on this instance (`[knowledge]` in the configuration).
#[derive(Clone, Debug)]
pub struct KnowledgeConfig {
    /// Where the search indexes live (`<data dir>/knowledge`).
    pub index_dir: PathBuf,
    /// Documents ingested at once on this instance.
    pub workers: usize,
    /// A worker's hold on a document; renewed while it works.
    pub lease: Duration,
    /// Claims of one version before it is marked failed. A claim is counted only when its
    /// worker died holding it (a worker that stops with its server gives the claim back), so
    /// with 1 a document whose reading killed the server fails at once instead of killing
    /// the next worker too.
    pub max_attempts: u32,
    /// How often the change log is read.
    pub sync_every: Duration,
    /// One embeddings request.
    pub embed_timeout: Duration,
    pub extract: ExtractLimits,
    /// The largest document one upload may hold, in bytes.
    pub max_document_bytes: u64,
    /// The most bytes of documents one knowledge base may hold.
    pub max_kb_bytes: u64,
}

impl KnowledgeConfig {
    pub fn new(index_dir: impl Into<PathBuf>) -> Self {
        Self {
            index_dir: index_dir.into(),
            workers: 2,
            lease: Duration::from_secs(60),
            max_attempts: 1,
            sync_every: Duration::from_secs(1),
            embed_timeout: Duration::from_secs(60),
            extract: ExtractLimits::default(),
            max_document_bytes: 32 * 1024 * 1024,
            max_kb_bytes: 1024 * 1024 * 1024,
        }
    }
}

/// Why a search or a read failed.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Index(String),
    #[error("embedding the query failed: {0}")]
    Embedding(String),
}

/// A search hit with what a citation needs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SearchHit {
    /// `<document id>#<ordinal>`.
    pub chunk_id: String,
    pub document_id: KbDocumentId,
    pub document_name: String,
    pub ordinal: u32,
    pub heading_path: Vec<String>,
    /// Byte offsets of the chunk in its document's text.
    pub start: u64,
    pub end: u64,
    /// BM25 alone: its score; hybrid: the fused reciprocal-rank score.
    pub score: f64,
    /// A stretch of the chunk with the query's words in `<b>…</b>` (HTML-escaped).
    pub snippet: String,
    pub text: String,
}

/// How a search ranked its hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Words alone (BM25): the knowledge base has no embedding model, none of its chunks has
    /// a vector yet, or the query could not be embedded.
    Bm25,
    /// Words and meaning: BM25 and vector rankings fused by reciprocal rank.
    Hybrid,
}

/// What a search found, and how.
#[derive(Clone, Debug)]
pub struct Searched {
    pub mode: SearchMode,
    pub hits: Vec<SearchHit>,
}

/// One knowledge base's derived search data on this instance.
struct KbState {
    index: KbIndex,
    vectors: RwLock<VectorIndex>,
    /// The change log entry this index is current up to.
    synced: AtomicI64,
    dir: PathBuf,
}

/// What the hub keeps in memory.
struct Inner {
    store: Arc<dyn KnowledgeStore>,
    /// Where document changes are published, for the streams that follow a knowledge base on
    /// any instance sharing the bus.
    events: Arc<dyn EventBus>,
    config: KnowledgeConfig,
    states: Mutex<HashMap<KnowledgeBaseId, Arc<KbState>>>,
    /// Serialises loading a knowledge base's state and applying changes.
    sync: tokio::sync::Mutex<()>,
    /// Wakes the workers (an upload) early.
    uploaded: tokio::sync::Notify,
    shutdown: CancellationToken,
    /// The ingestion workers, awaited at shutdown so each gives its claim back.
    workers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// Knowledge bases on this instance: ingestion, indexes, search. A cheap `Clone` handle.
#[derive(Clone)]
pub struct KnowledgeHub {
    inner: Arc<Inner>,
}

/// The file holding the change log position an index on disk is current up to.
const SYNCED_FILE: &str = "synced-seq";
/// Chunks read per page when rebuilding an index.
const REBUILD_PAGE: u32 = 1000;
/// Changes read per round of the sync loop.
const CHANGES_PAGE: u32 = 500;
/// How long shutdown waits for the workers to give their documents back.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);
/// How deep each ranking goes before fusion.
const CANDIDATES: usize = 50;

impl KnowledgeHub {
    pub fn new(
        store: Arc<dyn KnowledgeStore>,
        events: Arc<dyn EventBus>,
        config: KnowledgeConfig,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                store,
                events,
                config,
                states: Mutex::default(),
                sync: tokio::sync::Mutex::new(()),
                uploaded: tokio::sync::Notify::new(),
                shutdown: CancellationToken::new(),
                workers: Mutex::default(),
            }),
        }
    }

    pub fn config(&self) -> &KnowledgeConfig {
        &self.inner.config
    }

    pub fn store(&self) -> &Arc<dyn KnowledgeStore> {
        &self.inner.store
    }

    /// Starts the ingestion workers and the change-log loop, for as long as the hub lives or
    /// until [`KnowledgeHub::shutdown`].
    pub fn start(&self, models: ModelSource) {
        let mut workers = self
            .inner
            .workers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for worker in 0..self.inner.config.workers.max(1) {
            let hub = self.clone();
            let models = models.clone();
            workers.push(tokio::spawn(async move {
                ingest::work(hub, models, worker).await;
            }));
        }
        drop(workers);
        let hub = self.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(hub.inner.config.sync_every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = hub.inner.shutdown.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                if let Err(e) = hub.sync().await {
                    tracing::warn!(error = %e, "cannot bring the knowledge indexes up to date");
                }
            }
        });
    }

    /// Stops the workers and the sync loop. A document being ingested is given back
    /// (`pending`, the attempt not counted), to be taken up again by this or another
    /// instance; this waits (a few seconds at most) until the workers have done so.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let workers = std::mem::take(
            &mut *self
                .inner
                .workers
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let stopped = futures::future::join_all(workers);
        if tokio::time::timeout(SHUTDOWN_WAIT, stopped).await.is_err() {
            tracing::warn!(
                "ingestion workers did not stop in time; their documents are taken up again when their leases run out"
            );
        }
    }

    /// Tells the workers a document is waiting.
    pub fn uploaded(&self) {
        self.inner.uploaded.notify_waiters();
    }

    fn dir_of(&self, kb: KnowledgeBaseId) -> PathBuf {
        self.inner.config.index_dir.join(kb.to_string())
    }

    /// The loaded state of `kb`, if any.
    fn loaded(&self, kb: KnowledgeBaseId) -> Option<Arc<KbState>> {
        self.inner
            .states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&kb)
            .cloned()
    }

    /// The state of `kb`, loaded (and, when its index is missing, rebuilt) on first use.
    async fn state(&self, kb: KnowledgeBaseId) -> Result<Arc<KbState>, KnowledgeError> {
        if let Some(state) = self.loaded(kb) {
            return Ok(state);
        }
        let _guard = self.inner.sync.lock().await;
        if let Some(state) = self.loaded(kb) {
            return Ok(state);
        }
        let state = Arc::new(self.load(kb).await?);
        self.inner
            .states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(kb, Arc::clone(&state));
        Ok(state)
    }

    /// Opens `kb`'s index on disk and catches it up with the change log, or rebuilds it from
    /// the store's chunks when there is none (or it cannot be read); loads its vectors.
    async fn load(&self, kb: KnowledgeBaseId) -> Result<KbState, KnowledgeError> {
        let dir = self.dir_of(kb);
        let synced_on_disk = std::fs::read_to_string(dir.join(SYNCED_FILE))
            .ok()
            .and_then(|text| text.trim().parse::<i64>().ok());
        let opened = {
            let index_dir = dir.join("index");
            tokio::task::spawn_blocking(move || KbIndex::open_or_create(&index_dir))
                .await
                .map_err(|e| KnowledgeError::Index(e.to_string()))?
        };
        let index = match (opened, synced_on_disk) {
            (Ok(index), Some(_)) => index,
            // In use by another process on this data dir (a running server, when this is
            // `ars kb reindex`): never rebuilt from under it.
            (Err(e), _) if e.is_locked() => {
                return Err(KnowledgeError::Index(format!(
                    "the index of knowledge base {kb} is in use by another process (a server \
                     running on this data dir?): {e}"
                )));
            }
            (opened, _) => {
                if let Err(e) = &opened {
                    tracing::warn!(kb = %kb, error = %e, "the knowledge index cannot be opened; rebuilding it");
                }
                drop(opened);
                let _ = std::fs::remove_dir_all(dir.join("index"));
                let index_dir = dir.join("index");
                tokio::task::spawn_blocking(move || KbIndex::open_or_create(&index_dir))
                    .await
                    .map_err(|e| KnowledgeError::Index(e.to_string()))?
                    .map_err(|e| KnowledgeError::Index(e.to_string()))?
            }
        };
        let state = KbState {
            index,
            vectors: RwLock::new(VectorIndex::default()),
            synced: AtomicI64::new(0),
            dir,
        };
        match synced_on_disk {
            Some(seq) if !state.index.is_empty() || seq > 0 => {
                state.synced.store(seq, Ordering::SeqCst);
                // The vectors live in memory only: read them all.
                self.reload_vectors(kb, &state).await?;
                self.catch_up(kb, &state).await?;
            }
            _ => self.rebuild(kb, &state).await?,
        }
        Ok(state)
    }

    /// Rebuilds `kb`'s index and vectors from the store's chunks.
    async fn rebuild(&self, kb: KnowledgeBaseId, state: &KbState) -> Result<(), KnowledgeError> {
        let store = &self.inner.store;
        // Chunks read after this are at least as new as the head.
        let head = store.kb_change_head().await?;
        state.index.clear().map_err(index_error)?;
        let mut vectors = VectorIndex::default();
        let mut after = None;
        loop {
            let page = store.kb_chunks_page(kb, after, REBUILD_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = Some((last.document_id, last.ordinal));
            apply_chunks(state, &mut vectors, &page)?;
        }
        state.index.commit().map_err(index_error)?;
        *state
            .vectors
            .write()
            .unwrap_or_else(PoisonError::into_inner) = vectors;
        tracing::info!(kb = %kb, chunks = state.index.len(), "knowledge index rebuilt");
        self.mark_synced(state, head);
        Ok(())
    }

    /// Reads every vector of `kb` (they are not kept on disk).
    async fn reload_vectors(
        &self,
        kb: KnowledgeBaseId,
        state: &KbState,
    ) -> Result<(), KnowledgeError> {
        let mut vectors = VectorIndex::default();
        let mut after = None;
        loop {
            let page = self
                .inner
                .store
                .kb_chunks_page(kb, after, REBUILD_PAGE)
                .await?;
            let Some(last) = page.last() else { break };
            after = Some((last.document_id, last.ordinal));
            for (document, chunks) in by_document(&page) {
                let rows: Vec<(String, Vec<f32>)> = vector_rows(chunks.as_slice());
                if !rows.is_empty() {
                    // A document may come over two pages: add, never replace.
                    vectors.add_rows(&document.to_string(), &rows);
                }
            }
        }
        *state
            .vectors
            .write()
            .unwrap_or_else(PoisonError::into_inner) = vectors;
        Ok(())
    }

    /// Applies to `kb` every change after its synced position.
    async fn catch_up(&self, kb: KnowledgeBaseId, state: &KbState) -> Result<(), KnowledgeError> {
        loop {
            let from = state.synced.load(Ordering::SeqCst);
            let changes = self
                .inner
                .store
                .kb_changes_since(from, CHANGES_PAGE)
                .await?;
            let Some(last) = changes.last().map(|c| c.seq) else {
                return Ok(());
            };
            let documents: BTreeSet<KbDocumentId> = changes
                .iter()
                .filter(|c| c.kb_id == kb)
                .map(|c| c.document_id)
                .collect();
            self.refresh_documents(state, &documents).await?;
            self.mark_synced(state, last);
        }
    }

    /// Reads the chunks of `documents` again and replaces them in the index and vectors.
    async fn refresh_documents(
        &self,
        state: &KbState,
        documents: &BTreeSet<KbDocumentId>,
    ) -> Result<(), KnowledgeError> {
        if documents.is_empty() {
            return Ok(());
        }
        for document in documents {
            let chunks = self.inner.store.kb_chunks(*document).await?;
            let id = document.to_string();
            let indexed: Vec<IndexedChunk> = chunks.iter().map(indexed).collect();
            state
                .index
                .replace_document(&id, &indexed)
                .map_err(index_error)?;
            let rows = vector_rows(&chunks.iter().collect::<Vec<_>>());
            let mut vectors = state
                .vectors
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            vectors.replace_document(&id, &rows);
        }
        state.index.commit().map_err(index_error)?;
        Ok(())
    }

    fn mark_synced(&self, state: &KbState, seq: i64) {
        state.synced.store(seq, Ordering::SeqCst);
        let _ = std::fs::create_dir_all(&state.dir);
        let tmp = state.dir.join(format!("{SYNCED_FILE}.tmp"));
        if std::fs::write(&tmp, seq.to_string()).is_ok() {
            let _ = std::fs::rename(&tmp, state.dir.join(SYNCED_FILE));
        }
    }

    /// Brings every loaded knowledge base up to date with the change log, and drops the
    /// state of those that were deleted.
    pub async fn sync(&self) -> Result<(), KnowledgeError> {
        let _guard = self.inner.sync.lock().await;
        let states: Vec<(KnowledgeBaseId, Arc<KbState>)> = self
            .inner
            .states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(id, state)| (*id, Arc::clone(state)))
            .collect();
        for (kb, state) in states {
            if self.inner.store.knowledge_base(kb).await?.is_none() {
                self.forget(kb);
                continue;
            }
            self.catch_up(kb, &state).await?;
        }
        Ok(())
    }

    /// Drops a knowledge base's state and its files on this instance (it was deleted).
    pub fn forget(&self, kb: KnowledgeBaseId) {
        self.inner
            .states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&kb);
        let _ = std::fs::remove_dir_all(self.dir_of(kb));
    }

    /// Rebuilds `kb`'s index from the store (`ars kb reindex`, or after corruption).
    pub async fn reindex(&self, kb: KnowledgeBaseId) -> Result<u64, KnowledgeError> {
        let state = self.state(kb).await?;
        let _guard = self.inner.sync.lock().await;
        self.rebuild(kb, &state).await?;
        Ok(state.index.len())
    }

    /// The `top_k` chunks of `kb` that best answer `query`: BM25, fused by reciprocal rank
    /// with the vectors' ranking when the knowledge base has an embedding model. The index is
    /// brought up to date first, so what was just ingested is found.
    pub async fn search(
        &self,
        kb: &KnowledgeBase,
        query: &str,
        top_k: usize,
        models: &ModelSource,
    ) -> Result<Searched, KnowledgeError> {
        let state = self.state(kb.id).await?;
        {
            let _guard = self.inner.sync.lock().await;
            self.catch_up(kb.id, &state).await?;
        }
        let top_k = top_k.clamp(1, 50);
        let words = state.index.search(query, CANDIDATES).map_err(index_error)?;
        let mut snippets: HashMap<String, (String, f64)> = words
            .iter()
            .map(|hit| {
                (
                    hit.chunk_id.clone(),
                    (hit.snippet.clone(), f64::from(hit.score)),
                )
            })
            .collect();
        let mut mode = SearchMode::Bm25;
        let ranked: Vec<(String, f64)> = match &kb.fields.settings.embedding {
            Some(model)
                if !state
                    .vectors
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_empty() =>
            {
                let timeout = self.inner.config.embed_timeout;
                let query_vector = match embed(
                    models,
                    &model.provider,
                    &model.model,
                    &[query.to_owned()],
                    timeout,
                )
                .await
                {
                    Ok(mut vectors) => {
                        mode = SearchMode::Hybrid;
                        vectors.pop().unwrap_or_default()
                    }
                    Err(e) => {
                        // Words alone still answer; the model's failure is logged.
                        tracing::warn!(kb = %kb.fields.slug, error = %e, "cannot embed the query; searching by words only");
                        Vec::new()
                    }
                };
                let near: Vec<String> = state
                    .vectors
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .search(&query_vector, CANDIDATES)
                    .into_iter()
                    .map(|(id, _)| id)
                    .collect();
                let words: Vec<String> = words.iter().map(|h| h.chunk_id.clone()).collect();
                reciprocal_rank_fusion(&[words, near], RRF_K)
            }
            _ => words
                .iter()
                .map(|h| (h.chunk_id.clone(), f64::from(h.score)))
                .collect(),
        };
        let ranked: Vec<(String, f64)> = ranked.into_iter().take(top_k).collect();
        let ids: Vec<(KbDocumentId, u32)> = ranked
            .iter()
            .filter_map(|(id, _)| parse_chunk_id(id))
            .collect();
        let chunks = self.inner.store.kb_chunks_by_ids(&ids).await?;
        let by_id: BTreeMap<String, KbChunk> = chunks.into_iter().map(|c| (c.id(), c)).collect();
        // The names of the hits' documents only: a knowledge base may hold thousands.
        let mut names: HashMap<KbDocumentId, String> = HashMap::new();
        for document in by_id.values().map(|c| c.document_id) {
            if names.contains_key(&document) {
                continue;
            }
            if let Some(found) = self.inner.store.kb_document(document).await? {
                names.insert(document, found.name);
            }
        }
        let terms: BTreeSet<String> = ars_knowledge::index::tokens(query).into_iter().collect();
        let hits = ranked
            .into_iter()
            .filter_map(|(id, score)| {
                let chunk = by_id.get(&id)?;
                let snippet = match snippets.remove(&id) {
                    Some((snippet, _)) => snippet,
                    None => ars_knowledge::index::snippet(&chunk.text, &terms, 240),
                };
                Some(SearchHit {
                    chunk_id: id,
                    document_id: chunk.document_id,
                    document_name: names.get(&chunk.document_id).cloned().unwrap_or_default(),
                    ordinal: chunk.ordinal,
                    heading_path: chunk.heading_path.clone(),
                    start: chunk.start,
                    end: chunk.end,
                    score,
                    snippet,
                    text: chunk.text.clone(),
                })
            })
            .collect();
        Ok(Searched { mode, hits })
    }
}

fn index_error(e: ars_knowledge::index::IndexError) -> KnowledgeError {
    KnowledgeError::Index(e.to_string())
}

/// A stored chunk as the index takes it.
fn indexed(chunk: &KbChunk) -> IndexedChunk {
    let text = if chunk.heading_path.is_empty() {
        chunk.text.clone()
    } else {
        format!("{}\n{}", chunk.heading_path.join(" › "), chunk.text)
    };
    IndexedChunk {
        chunk_id: chunk_id(chunk.document_id, chunk.ordinal),
        document_id: chunk.document_id.to_string(),
        text,
    }
}

fn by_document(chunks: &[KbChunk]) -> BTreeMap<KbDocumentId, Vec<&KbChunk>> {
    let mut out: BTreeMap<KbDocumentId, Vec<&KbChunk>> = BTreeMap::new();
    for chunk in chunks {
        out.entry(chunk.document_id).or_default().push(chunk);
    }
    out
}

fn vector_rows(chunks: &[&KbChunk]) -> Vec<(String, Vec<f32>)> {
    chunks
        .iter()
        .filter_map(|c| c.embedding.clone().map(|v| (c.id(), v)))
        .collect()
}

/// Adds a page of chunks (possibly several documents, a document possibly over two pages) to
/// an index being rebuilt.
fn apply_chunks(
    state: &KbState,
    vectors: &mut VectorIndex,
    page: &[KbChunk],
) -> Result<(), KnowledgeError> {
    for (document, chunks) in by_document(page) {
        let indexed: Vec<IndexedChunk> = chunks.iter().map(|c| indexed(c)).collect();
        // A rebuild starts from an empty index: add, never replace (a document's chunks may
        // come over two pages).
        state.index.add_chunks(&indexed).map_err(index_error)?;
        let rows = vector_rows(&chunks);
        if !rows.is_empty() {
            vectors.add_rows(&document.to_string(), &rows);
        }
    }
    Ok(())
}

/// Embeds `texts` with `provider`'s `model`, in order.
pub(crate) async fn embed(
    models: &ModelSource,
    provider: &str,
    model: &str,
    texts: &[String],
    timeout: Duration,
) -> Result<Vec<Vec<f32>>, String> {
    let snapshot = models.snapshot().await.map_err(|e| e.to_string())?;
    let Some(client) = snapshot.registry.openai_provider(provider) else {
        return Err(format!(
            "the embedding model's provider `{provider}` is not configured on this server"
        ));
    };
    client
        .embed(model, texts, timeout)
        .await
        .map_err(|e| e.to_string())
}
