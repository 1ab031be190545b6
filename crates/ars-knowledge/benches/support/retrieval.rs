//! The retrieval fixture set and its evaluation, shared by the quality test and the bench.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use ars_knowledge::chunk::{Chunk, ChunkSettings, TextKind, chunk, indexed_text};
use ars_knowledge::index::{IndexedChunk, KbIndex};

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
            for c in pieces {
                chunks.insert(
                    format!("{}#{}", document.name, c.ordinal),
                    (document.name.clone(), c),
                );
            }
        }
        index.commit().unwrap();
        Self { index, chunks }
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
