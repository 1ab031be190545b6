//! Hybrid ranking: reciprocal-rank fusion (RRF) of several rankings of the same items. An
//! item's fused score is the sum over rankings of `1 / (k + rank)` (rank from 1); items a
//! ranking lacks get nothing from it. Scores of different kinds (BM25, cosine) never need to
//! be compared, only ranks.

use std::collections::HashMap;
use std::hash::Hash;

/// The usual constant: it damps the weight of the very first ranks.
pub const RRF_K: f64 = 60.0;

/// Fuses `rankings` (each best first) into one ranking, best first, with each item's fused
/// score. Ties keep the order in which items were first seen (first ranking first).
pub fn reciprocal_rank_fusion<T: Clone + Eq + Hash>(rankings: &[Vec<T>], k: f64) -> Vec<(T, f64)> {
    let mut scores: HashMap<T, (f64, usize)> = HashMap::new();
    let mut seen = 0;
    for ranking in rankings {
        for (rank, item) in ranking.iter().enumerate() {
            let entry = scores.entry(item.clone()).or_insert_with(|| {
                seen += 1;
                (0.0, seen)
            });
            entry.0 += 1.0 / (k + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(T, f64, usize)> = scores
        .into_iter()
        .map(|(item, (score, order))| (item, score, order))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused
        .into_iter()
        .map(|(item, score, _)| (item, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_both_rankings_place_high_wins_over_one_only_one_places_first() {
        let bm25 = vec!["a", "b", "c"];
        let vectors = vec!["b", "d", "a"];
        let fused = reciprocal_rank_fusion(&[bm25, vectors], RRF_K);
        let order: Vec<&str> = fused.iter().map(|(item, _)| *item).collect();
        // b: 1/62 + 1/61; a: 1/61 + 1/63; d: 1/62; c: 1/63.
        assert_eq!(order, vec!["b", "a", "d", "c"]);
        assert!((fused[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
    }

    #[test]
    fn one_ranking_alone_keeps_its_order_and_ties_keep_first_seen_order() {
        let fused = reciprocal_rank_fusion(&[vec![3, 1, 2]], RRF_K);
        assert_eq!(
            fused.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            vec![3, 1, 2]
        );
        let tied = reciprocal_rank_fusion(&[vec!["x"], vec!["y"]], RRF_K);
        assert_eq!(
            tied.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            vec!["x", "y"]
        );
        assert!(reciprocal_rank_fusion::<u8>(&[], RRF_K).is_empty());
    }
}
