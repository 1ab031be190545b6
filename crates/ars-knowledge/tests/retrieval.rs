//! Retrieval quality on the fixture set (`fixtures/retrieval`: 44 documents, half Chinese,
//! half English, and 88 questions, each with the passage that answers it): BM25 alone must
//! find a chunk holding the passage in its top 5 for at least 85% of the questions of each
//! language. `cargo bench -p ars-knowledge --bench retrieval` prints the full figures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../benches/support/retrieval.rs"]
mod retrieval;

use ars_knowledge::chunk::ChunkSettings;

#[test]
fn bm25_recall_at_5_is_at_least_85_percent_in_each_language() {
    let set = retrieval::FixtureSet::load();
    assert_eq!(set.documents.len(), 44);
    assert_eq!(set.questions.len(), 88);
    let corpus = retrieval::Corpus::build(&set, ChunkSettings::default());
    let report = corpus.evaluate_bm25(&set);
    for (lang, metrics) in &report {
        eprintln!("{lang}: {metrics}");
        assert!(
            metrics.recall_at_5 >= 0.85,
            "{lang}: recall@5 {:.3} is under 0.85; misses: {:?}",
            metrics.recall_at_5,
            metrics.misses
        );
    }
}

#[test]
fn hybrid_ranking_with_the_test_embedder_keeps_recall_at_5_at_least_85_percent() {
    let set = retrieval::FixtureSet::load();
    let corpus = retrieval::Corpus::build(&set, ChunkSettings::default());
    let mut embed = |texts: &[String]| -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| ars_knowledge::vectors::hash_embedding(t))
            .collect()
    };
    let vectors = corpus.vectors(&mut embed);
    assert_eq!(vectors.len(), corpus.texts.len());
    let report = corpus.evaluate_hybrid(&set, &vectors, &mut embed);
    for (lang, metrics) in &report {
        eprintln!("hybrid {lang}: {metrics}");
        assert!(
            metrics.recall_at_5 >= 0.85,
            "{lang}: {metrics}; misses {:?}",
            metrics.misses
        );
    }
}
