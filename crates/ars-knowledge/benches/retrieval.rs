//! Retrieval quality on the fixture set (44 documents, 88 questions, half Chinese and half
//! English): recall@5 and MRR@10, BM25 alone and hybrid (BM25 + vectors fused by reciprocal
//! rank) with the deterministic test embedder and, when an endpoint is given, with a real
//! embedding model.
//!
//! `cargo bench -p ars-knowledge --bench retrieval`; with a real model:
//! `ARS_BENCH_EMBEDDINGS_URL=http://127.0.0.1:11434/v1 ARS_BENCH_EMBEDDINGS_MODEL=bge-m3
//! [ARS_BENCH_EMBEDDINGS_KEY=…] cargo bench -p ars-knowledge --bench retrieval`

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
    if let (Ok(url), Ok(model)) = (
        std::env::var("ARS_BENCH_EMBEDDINGS_URL"),
        std::env::var("ARS_BENCH_EMBEDDINGS_MODEL"),
    ) {
        let provider = ars_models::providers::openai::OpenAiProvider::new(
            &ars_models::ProviderConfig::openai_compatible("bench", &url),
            std::env::var("ARS_BENCH_EMBEDDINGS_KEY")
                .ok()
                .and_then(ars_models::secret::ApiKey::new),
            None,
            ars_models::OpenAiOptions::default(),
        )
        .expect("a usable endpoint");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut embed = |texts: &[String]| -> Vec<Vec<f32>> {
            runtime
                .block_on(provider.embed(&model, texts, std::time::Duration::from_secs(120)))
                .expect("the endpoint embeds")
        };
        let vectors = corpus.vectors(&mut embed);
        for (lang, metrics) in corpus.evaluate_hybrid(&set, &vectors, &mut embed) {
            println!(
                "hybrid ({model}) {lang}: {metrics}  misses {:?}",
                metrics.misses
            );
        }
    }
}
