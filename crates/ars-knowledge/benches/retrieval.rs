//! Retrieval quality on the fixture set (44 documents, 88 questions, half Chinese and half
//! English): recall@5 and MRR@10, BM25 alone and hybrid (BM25 + vectors fused by reciprocal
//! rank) with the deterministic test embedder.
//!
//! `cargo bench -p ars-knowledge --bench retrieval`

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/retrieval.rs"]
mod retrieval;

use ars_knowledge::chunk::ChunkSettings;
use ars_knowledge::vectors::hash_embedding;

fn main() {
    let set = retrieval::FixtureSet::load();
    let corpus = retrieval::Corpus::build(&set, ChunkSettings::default());
    println!(
        "{} documents, {} chunks, {} questions",
        set.documents.len(),
        corpus.chunks.len(),
        set.questions.len()
    );
    for (lang, metrics) in corpus.evaluate_bm25(&set) {
        println!(
            "BM25             {lang}: {metrics}  misses {:?}",
            metrics.misses
        );
    }
    let mut embed =
        |texts: &[String]| -> Vec<Vec<f32>> { texts.iter().map(|t| hash_embedding(t)).collect() };
    let vectors = corpus.vectors(&mut embed);
    for (lang, metrics) in corpus.evaluate_hybrid(&set, &vectors, &mut embed) {
        println!(
            "hybrid (hashing) {lang}: {metrics}  misses {:?}",
            metrics.misses
        );
    }
}
