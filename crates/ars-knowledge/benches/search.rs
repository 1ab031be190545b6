//! Speed of a large knowledge base: chunking and indexing throughput (BM25 only), and search
//! latency over an on-disk index of N generated chunks (default 100,000), half Chinese and
//! half English, built from the fixture documents' sentences.
//!
//! `cargo bench -p ars-knowledge --bench search -- [CHUNKS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/retrieval.rs"]
mod retrieval;

use std::time::{Duration, Instant};

use ars_knowledge::chunk::{ChunkSettings, TextKind, chunk, indexed_text};
use ars_knowledge::index::{IndexedChunk, KbIndex};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let target: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let set = retrieval::FixtureSet::load();
    // Sentences of the fixture documents, recombined into fresh documents.
    let sentences: Vec<String> = set
        .documents
        .iter()
        .flat_map(|d| {
            d.text
                .split_inclusive(['。', '！', '？', '.', '\n'])
                .map(str::trim)
                .filter(|s| s.chars().count() > 8 && !s.starts_with('#'))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let index = KbIndex::open_or_create(dir.path()).unwrap();
    let settings = ChunkSettings::default();
    let started = Instant::now();
    let (mut chunks, mut bytes, mut documents) = (0usize, 0usize, 0usize);
    let mut seed: u64 = 7;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    while chunks < target {
        // A document of about 40 paragraphs of 5 sentences under a few headings.
        let mut text = String::new();
        for section in 0..4 {
            text.push_str(&format!("## Section {section}\n\n"));
            for _ in 0..10 {
                for _ in 0..5 {
                    text.push_str(&sentences[next() % sentences.len()]);
                    text.push(' ');
                }
                text.push_str("\n\n");
            }
        }
        let pieces = chunk(&text, TextKind::Markdown, settings);
        let document_id = format!("doc-{documents}");
        let indexed: Vec<IndexedChunk> = pieces
            .iter()
            .map(|c| IndexedChunk {
                chunk_id: format!("{document_id}#{}", c.ordinal),
                document_id: document_id.clone(),
                text: indexed_text(c),
            })
            .collect();
        index.replace_document(&document_id, &indexed).unwrap();
        chunks += indexed.len();
        bytes += text.len();
        documents += 1;
        if documents % 200 == 0 {
            index.commit().unwrap();
        }
    }
    index.commit().unwrap();
    let took = started.elapsed();
    println!(
        "ingest (chunk + index, BM25 only): {documents} documents, {chunks} chunks, {:.1} MB in {:.1?}: {:.2} MB/s, {:.0} chunks/s",
        bytes as f64 / 1e6,
        took,
        bytes as f64 / 1e6 / took.as_secs_f64(),
        chunks as f64 / took.as_secs_f64()
    );
    let queries: Vec<&str> = set.questions.iter().map(|q| q.question.as_str()).collect();
    for q in &queries {
        index.search(q, 10).unwrap(); // warm up
    }
    for (lang, filter) in [("zh", "zh-"), ("en", "en-")] {
        let mut times = Vec::new();
        for _ in 0..10 {
            for q in set.questions.iter().filter(|q| q.id.starts_with(filter)) {
                let t = Instant::now();
                let hits = index.search(&q.question, 10).unwrap();
                times.push(t.elapsed());
                assert!(!hits.is_empty());
            }
        }
        times.sort();
        println!(
            "search top 10 over {chunks} chunks, {lang}: n {}  p50 {:.2?}  p99 {:.2?}  max {:.2?}",
            times.len(),
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            times[times.len() - 1]
        );
    }
}
