//! The retrieval fixture set and its evaluation, shared by the quality test and the bench.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use ars_knowledge::chunk::{Chunk, ChunkSettings, TextKind, chunk, indexed_text};
use ars_knowledge::fusion::{RRF_K, reciprocal_rank_fusion};
use ars_knowledge::index::{IndexedChunk, KbIndex};
use ars_knowledge::vectors::VectorIndex;

pub struct Document {
    pub name: String,
    pub text: String,
}

#[derive(serde::Deserialize)]
pub struct Question {
    pub id: String,
    pub lang: String,
    pub question: String,
    pub doc: String,
    pub passage: String,
}

pub struct FixtureSet {
    pub documents: Vec<Document>,
    pub questions: Vec<Question>,
}

impl FixtureSet {
    pub fn load() -> Self {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/retrieval");
        let mut documents: Vec<Document> = std::fs::read_dir(root.join("docs"))
            .unwrap()
            .map(|entry| {
                let path = entry.unwrap().path();
                Document {
                    name: path.file_name().unwrap().to_string_lossy().into_owned(),
                    text: std::fs::read_to_string(&path).unwrap(),
                }
            })
            .collect();
        documents.sort_by(|a, b| a.name.cmp(&b.name));
        let questions = std::fs::read_to_string(root.join("questions.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        Self {
            documents,
            questions,
        }
    }
}

/// The fixture documents chunked and indexed, with where each chunk lies.
pub struct Corpus {
    pub index: KbIndex,
    /// Each chunk's indexed text, by id (what an embedder is given).
    pub texts: BTreeMap<String, String>,
    /// Chunk id → (document, chunk).
    pub chunks: BTreeMap<String, (String, Chunk)>,
}

/// How well the questions of one language were answered.
#[derive(Debug, Default)]
pub struct Metrics {
    pub questions: usize,
    pub recall_at_5: f64,
    pub mrr_at_10: f64,
    pub misses: Vec<String>,
}

impl std::fmt::Display for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} questions, recall@5 {:.3}, MRR@10 {:.3}",
            self.questions, self.recall_at_5, self.mrr_at_10
        )
    }
}

impl Corpus {
    pub fn build(set: &FixtureSet, settings: ChunkSettings) -> Self {
        let index = KbIndex::in_memory().unwrap();
        let mut chunks = BTreeMap::new();
        let mut texts = BTreeMap::new();
        for document in &set.documents {
            let kind = if document.name.ends_with(".md") {
                TextKind::Markdown
            } else {
                TextKind::Plain
            };
            let pieces = chunk(&document.text, kind, settings);
            let indexed: Vec<IndexedChunk> = pieces
                .iter()
                .map(|c| IndexedChunk {
                    chunk_id: format!("{}#{}", document.name, c.ordinal),
                    document_id: document.name.clone(),
                    text: indexed_text(c),
                })
                .collect();
            index.replace_document(&document.name, &indexed).unwrap();
            for chunk in &indexed {
                texts.insert(chunk.chunk_id.clone(), chunk.text.clone());
            }
            for c in pieces {
                chunks.insert(
                    format!("{}#{}", document.name, c.ordinal),
                    (document.name.clone(), c),
                );
            }
        }
        index.commit().unwrap();
        Self {
            index,
            texts,
            chunks,
        }
    }

    /// Whether chunk `id` holds (part of) the passage that answers `question`.
    pub fn is_relevant(&self, set: &FixtureSet, question: &Question, id: &str) -> bool {
        let Some((doc, chunk)) = self.chunks.get(id) else {
            return false;
        };
        if *doc != question.doc {
            return false;
        }
        let text = &set
            .documents
            .iter()
            .find(|d| d.name == question.doc)
            .unwrap()
            .text;
        let start = text.find(&question.passage).unwrap();
        let end = start + question.passage.len();
        chunk.start < end && start < chunk.end
    }

    /// Evaluates `rank` (question → chunk ids, best first) per language.
    pub fn evaluate(
        &self,
        set: &FixtureSet,
        mut rank: impl FnMut(&Question) -> Vec<String>,
    ) -> BTreeMap<String, Metrics> {
        let mut report: BTreeMap<String, Metrics> = BTreeMap::new();
        for question in &set.questions {
            let ranked = rank(question);
            let first = ranked
                .iter()
                .take(10)
                .position(|id| self.is_relevant(set, question, id));
            let metrics = report.entry(question.lang.clone()).or_default();
            metrics.questions += 1;
            match first {
                Some(position) => {
                    if position < 5 {
                        metrics.recall_at_5 += 1.0;
                    } else {
                        metrics.misses.push(question.id.clone());
                    }
                    metrics.mrr_at_10 += 1.0 / (position as f64 + 1.0);
                }
                None => metrics.misses.push(question.id.clone()),
            }
        }
        for metrics in report.values_mut() {
            metrics.recall_at_5 /= metrics.questions as f64;
            metrics.mrr_at_10 /= metrics.questions as f64;
        }
        report
    }

    /// The chunks' vectors by `embed` (all texts at once, in id order), in a vector index.
    pub fn vectors(&self, embed: &mut dyn FnMut(&[String]) -> Vec<Vec<f32>>) -> VectorIndex {
        let ids: Vec<&String> = self.texts.keys().collect();
        let texts: Vec<String> = self.texts.values().cloned().collect();
        let embedded = embed(&texts);
        let mut by_document: BTreeMap<&str, Vec<(String, Vec<f32>)>> = BTreeMap::new();
        for (id, vector) in ids.into_iter().zip(embedded) {
            let document = &self.chunks[id].0;
            by_document
                .entry(document.as_str())
                .or_default()
                .push((id.clone(), vector));
        }
        let mut index = VectorIndex::default();
        for (document, vectors) in by_document {
            index.replace_document(document, &vectors);
        }
        index
    }

    /// BM25 and vector rankings (50 deep each) fused by reciprocal rank.
    pub fn evaluate_hybrid(
        &self,
        set: &FixtureSet,
        vectors: &VectorIndex,
        embed: &mut dyn FnMut(&[String]) -> Vec<Vec<f32>>,
    ) -> BTreeMap<String, Metrics> {
        let questions: Vec<String> = set.questions.iter().map(|q| q.question.clone()).collect();
        let query_vectors: BTreeMap<String, Vec<f32>> = set
            .questions
            .iter()
            .map(|q| q.id.clone())
            .zip(embed(&questions))
            .collect();
        self.evaluate(set, |q| {
            let words: Vec<String> = self
                .index
                .search(&q.question, 50)
                .unwrap()
                .into_iter()
                .map(|hit| hit.chunk_id)
                .collect();
            let near: Vec<String> = vectors
                .search(&query_vectors[&q.id], 50)
                .into_iter()
                .map(|(id, _)| id)
                .collect();
            reciprocal_rank_fusion(&[words, near], RRF_K)
                .into_iter()
                .map(|(id, _)| id)
                .collect()
        })
    }

    pub fn evaluate_bm25(&self, set: &FixtureSet) -> BTreeMap<String, Metrics> {
        self.evaluate(set, |q| {
            self.index
                .search(&q.question, 10)
                .unwrap()
                .into_iter()
                .map(|hit| hit.chunk_id)
                .collect()
        })
    }
}
