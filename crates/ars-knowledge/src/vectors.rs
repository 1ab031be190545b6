//! Dense vectors of one knowledge base's chunks, searched by cosine similarity: an exact
//! (brute-force) scan over normalized rows, which is fast enough for the sizes a knowledge base
//! has here (100,000 chunks of 256 dimensions scan in a few milliseconds) and never misses.
//! Also the deterministic embedder CI uses, so hybrid ranking is tested without a model.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Chunks' vectors, rows normalized to unit length.
#[derive(Debug, Default)]
pub struct VectorIndex {
    dims: usize,
    chunk_ids: Vec<String>,
    document_ids: Vec<String>,
    rows: Vec<f32>,
}

/// A row of `vector`, made unit length; `None` for a zero vector.
fn normalized(vector: &[f32]) -> Option<Vec<f32>> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 0.0 && norm.is_finite()).then(|| vector.iter().map(|x| x / norm).collect())
}

/// A scored row in the heap of the best `k` (a min-heap by score).
struct Scored(f32, usize);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: the heap's top is the worst of the best.
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl VectorIndex {
    /// The vectors' length (0 while empty).
    pub fn dims(&self) -> usize {
        self.dims
    }

    pub fn len(&self) -> usize {
        self.chunk_ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunk_ids.is_empty()
    }

    /// Replaces a document's vectors. A vector of another length than the index's, or a zero
    /// vector, is skipped (the chunk is then found by words only); answers how many were kept.
    pub fn replace_document(&mut self, document_id: &str, vectors: &[(String, Vec<f32>)]) -> usize {
        self.remove_document(document_id);
        self.add_rows(document_id, vectors)
    }

    /// Adds a document's vectors without removing any (a document read over several pages).
    pub fn add_rows(&mut self, document_id: &str, vectors: &[(String, Vec<f32>)]) -> usize {
        let mut kept = 0;
        for (chunk_id, vector) in vectors {
            if self.dims == 0 {
                self.dims = vector.len();
            }
            if vector.len() != self.dims {
                continue;
            }
            let Some(row) = normalized(vector) else {
                continue;
            };
            self.rows.extend_from_slice(&row);
            self.chunk_ids.push(chunk_id.clone());
            self.document_ids.push(document_id.to_owned());
            kept += 1;
        }
        kept
    }

    /// Removes a document's vectors.
    pub fn remove_document(&mut self, document_id: &str) {
        let mut i = 0;
        while i < self.document_ids.len() {
            if self.document_ids[i] == document_id {
                let last = self.document_ids.len() - 1;
                self.document_ids.swap_remove(i);
                self.chunk_ids.swap_remove(i);
                if i != last {
                    let (head, tail) = self.rows.split_at_mut(last * self.dims);
                    head[i * self.dims..(i + 1) * self.dims].copy_from_slice(&tail[..self.dims]);
                }
                self.rows.truncate(last * self.dims);
            } else {
                i += 1;
            }
        }
        if self.chunk_ids.is_empty() {
            self.dims = 0;
        }
    }

    /// The `top_k` chunks most similar to `query` (cosine), best first.
    pub fn search(&self, query: &[f32], top_k: usize) -> Vec<(String, f32)> {
        if top_k == 0 || self.is_empty() || query.len() != self.dims {
            return Vec::new();
        }
        let Some(query) = normalized(query) else {
            return Vec::new();
        };
        let mut best: BinaryHeap<Scored> = BinaryHeap::with_capacity(top_k + 1);
        for (i, row) in self.rows.chunks_exact(self.dims).enumerate() {
            let score: f32 = row.iter().zip(&query).map(|(a, b)| a * b).sum();
            if best.len() < top_k {
                best.push(Scored(score, i));
            } else if best.peek().is_some_and(|worst| score > worst.0) {
                best.pop();
                best.push(Scored(score, i));
            }
        }
        let mut hits: Vec<Scored> = best.into_vec();
        hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        hits.into_iter()
            .map(|Scored(score, i)| (self.chunk_ids[i].clone(), score))
            .collect()
    }
}

/// Dimensions of [`hash_embedding`].
pub const HASH_DIMS: usize = 256;

/// A deterministic embedding for tests and CI: the index's words (segmented, stemmed) hashed
/// into [`HASH_DIMS`] signed buckets, with Chinese character pairs besides, normalized. It knows
/// nothing of meaning — it stands in for a model so hybrid ranking runs without one.
pub fn hash_embedding(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; HASH_DIMS];
    let mut add = |feature: &str, weight: f32| {
        let hash = fnv1a(feature.as_bytes());
        let bucket = (hash % HASH_DIMS as u64) as usize;
        let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
        vector[bucket] += sign * weight;
    };
    for word in crate::index::tokens(text) {
        add(&word, 1.0);
    }
    let chars: Vec<char> = text.chars().filter(|c| is_cjk(*c)).collect();
    for pair in chars.windows(2) {
        add(&pair.iter().collect::<String>(), 0.5);
    }
    normalized(&vector).unwrap_or(vector)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0xF900..=0xFAFF)
}

/// 64-bit FNV-1a: small, fast and the same on every machine and Rust version.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: &[f32]) -> Vec<f32> {
        x.to_vec()
    }

    #[test]
    fn the_most_similar_chunks_come_first() {
        let mut index = VectorIndex::default();
        index.replace_document(
            "d1",
            &[
                ("a".into(), v(&[1.0, 0.0, 0.0])),
                ("b".into(), v(&[0.0, 1.0, 0.0])),
                ("c".into(), v(&[0.7, 0.7, 0.0])),
            ],
        );
        let hits = index.search(&[1.0, 0.1, 0.0], 2);
        assert_eq!(
            hits.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            vec!["a", "c"]
        );
        assert!(hits[0].1 > 0.99);
        // A query of another length finds nothing rather than nonsense.
        assert!(index.search(&[1.0, 0.0], 2).is_empty());
    }

    #[test]
    fn replacing_and_removing_documents_keeps_the_rest_intact() {
        let mut index = VectorIndex::default();
        index.replace_document(
            "d1",
            &[("a".into(), v(&[1.0, 0.0])), ("b".into(), v(&[0.0, 1.0]))],
        );
        index.replace_document("d2", &[("c".into(), v(&[1.0, 1.0]))]);
        // Another length and a zero vector are skipped.
        let kept = index.replace_document(
            "d3",
            &[("x".into(), v(&[1.0])), ("z".into(), v(&[0.0, 0.0]))],
        );
        assert_eq!(kept, 0);
        index.replace_document("d1", &[("a2".into(), v(&[0.0, 1.0]))]);
        assert_eq!(index.len(), 2);
        assert_eq!(index.search(&[0.0, 1.0], 1)[0].0, "a2");
        index.remove_document("d2");
        index.remove_document("d1");
        assert!(index.is_empty());
        assert_eq!(index.dims(), 0);
    }

    #[test]
    fn the_hash_embedding_is_deterministic_and_similar_for_shared_words() {
        let a = hash_embedding("出差住宿的报销上限");
        assert_eq!(a, hash_embedding("出差住宿的报销上限"));
        assert_eq!(a.len(), HASH_DIMS);
        let near = hash_embedding("出差期间的住宿费用每晚不得超过六百元");
        let far = hash_embedding("The nightly rebuild indexes all documents");
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
        assert!(
            dot(&a, &near) > dot(&a, &far),
            "{} vs {}",
            dot(&a, &near),
            dot(&a, &far)
        );
    }
}
