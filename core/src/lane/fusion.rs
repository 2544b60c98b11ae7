//! Weighted Reciprocal Rank Fusion.
//!
//! Each lane that ran adds `weight / (k + rank)` (ranks start at 1) to every chunk it ranked.
//! Results are ordered by fused score, then by how many lanes matched, then by chunk id, so
//! equal inputs always give the same order. A single lane keeps its own order. A lane that was skipped or failed is simply absent
//! from the input: it is dropped, not counted as zero.

use std::cmp::Ordering;

pub use crate::data::config::FusionConfig;
use crate::lane::Lane;

/// One lane's ranking: chunk indices with the lane's own scores, best first.
#[derive(Debug, Clone)]
pub struct LaneRanking {
    /// The lane.
    pub lane: Lane,
    /// Its fusion weight.
    pub weight: f32,
    /// `(chunk, lane score)`, best first; rank is position + 1.
    pub ranked: Vec<(u32, f32)>,
}

/// Where a chunk stood in one lane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaneRank {
    /// 1-based rank in the lane.
    pub rank: u32,
    /// The lane's own score.
    pub score: f32,
    /// The item the lane ranked (the chunk; for page fusion the caller sets it to the lane's
    /// chunk of that page).
    pub chunk: u32,
}

/// A chunk after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    /// Chunk index.
    pub chunk: u32,
    /// Fused score: `Σ weight / (k + rank)`.
    pub score: f32,
    /// Per lane (in [`Lane::ALL`] order), the chunk's rank and score, if the lane ranked it.
    pub ranks: [Option<LaneRank>; 3],
}

impl Fused {
    /// Number of lanes that ranked this chunk.
    pub fn lanes_matched(&self) -> usize {
        self.ranks.iter().filter(|r| r.is_some()).count()
    }
}

fn lane_slot(lane: Lane) -> usize {
    match lane {
        Lane::Lexical => 0,
        Lane::Semantic => 1,
        Lane::Token => 2,
    }
}

/// The rank and score `lane` gave, from a fused result.
pub fn lane_rank(f: &Fused, lane: Lane) -> Option<LaneRank> {
    f.ranks[lane_slot(lane)]
}

/// Mutable access to `lane`'s entry of a fused result.
pub fn lane_rank_mut(f: &mut Fused, lane: Lane) -> Option<&mut LaneRank> {
    f.ranks[lane_slot(lane)].as_mut()
}

/// Fuses lane rankings with weighted RRF. `id_order` compares two chunks by id, for the last
/// tie rule.
pub fn rrf(k: f32, lanes: &[LaneRanking], id_order: impl Fn(u32, u32) -> Ordering) -> Vec<Fused> {
    if let [lane] = lanes {
        return single_lane(k, lane);
    }
    let mut by_chunk: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    let mut out: Vec<Fused> = Vec::new();
    for lane in lanes {
        let slot = lane_slot(lane.lane);
        for (i, &(chunk, score)) in lane.ranked.iter().enumerate() {
            let rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let at = *by_chunk.entry(chunk).or_insert_with(|| {
                out.push(Fused {
                    chunk,
                    score: 0.0,
                    ranks: [None; 3],
                });
                out.len() - 1
            });
            let f = &mut out[at];
            if f.ranks[slot].is_none() {
                f.ranks[slot] = Some(LaneRank { rank, score, chunk });
            }
        }
    }
    // Sum in lane order so the float result does not depend on insertion order.
    for f in &mut out {
        f.score = lanes
            .iter()
            .filter_map(|l| f.ranks[lane_slot(l.lane)].map(|r| l.weight / (k + r.rank as f32)))
            .sum();
    }
    crate::data::sort::sort_by(&mut out, |a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.lanes_matched().cmp(&a.lanes_matched()))
            .then_with(|| id_order(a.chunk, b.chunk))
    });
    out
}

/// RRF of a single lane: there is nothing to combine, so the lane's own order (which already
/// breaks its score ties deterministically) is the fused order, whatever its weight (with
/// weight 0 every fused score is 0 and the tie rules would otherwise sort by id).
fn single_lane(k: f32, lane: &LaneRanking) -> Vec<Fused> {
    let slot = lane_slot(lane.lane);
    lane.ranked
        .iter()
        .enumerate()
        .map(|(i, &(chunk, score))| {
            let rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let mut ranks = [None; 3];
            ranks[slot] = Some(LaneRank { rank, score, chunk });
            Fused {
                chunk,
                score: lane.weight / (k + rank as f32),
                ranks,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_settings_parse_by_lane_name_and_reject_bad_ones() {
        let mut f = FusionConfig::default();
        f.apply_setting("token=0.5").unwrap();
        f.apply_setting(" Semantic = 3 ").unwrap();
        assert_eq!((f.token, f.semantic), (0.5, 3.0));
        for bad in ["token", "token=x", "nope=1", "lexical=101", "lexical=-1"] {
            assert_eq!(
                f.apply_setting(bad).unwrap_err().code(),
                "invalid_argument",
                "{bad}"
            );
        }
        assert_eq!((f.token, f.semantic, f.lexical), (0.5, 3.0, 1.5));
    }

    fn lane(lane: Lane, weight: f32, chunks: &[u32]) -> LaneRanking {
        LaneRanking {
            lane,
            weight,
            ranked: chunks.iter().map(|&c| (c, 1.0)).collect(),
        }
    }

    #[test]
    fn rrf_adds_weight_over_k_plus_rank() {
        let f = rrf(
            60.0,
            &[
                lane(Lane::Lexical, 1.5, &[7, 8]),
                lane(Lane::Token, 0.75, &[8]),
            ],
            |a: u32, b: u32| a.cmp(&b),
        );
        assert_eq!(f[0].chunk, 8);
        assert!((f[0].score - (1.5 / 62.0 + 0.75 / 61.0)).abs() < 1e-7);
        assert_eq!(lane_rank(&f[0], Lane::Token).unwrap().rank, 1);
        assert!((f[1].score - 1.5 / 61.0).abs() < 1e-7);
    }

    #[test]
    fn rrf_breaks_ties_by_lane_count_then_id() {
        // Chunk 1: rank 1 in a weight-2 lane. Chunk 2: rank 1 in two weight-1 lanes with k
        // chosen so both sum to the same score.
        let lanes = [
            lane(Lane::Semantic, 2.0, &[1]),
            lane(Lane::Lexical, 1.0, &[2]),
            lane(Lane::Token, 1.0, &[2]),
        ];
        let f = rrf(60.0, &lanes, |a: u32, b: u32| a.cmp(&b));
        assert_eq!(f[0].score, f[1].score);
        assert_eq!(f[0].chunk, 2, "more lanes wins the tie");
        let f = rrf(
            60.0,
            &[lane(Lane::Lexical, 1.0, &[5]), lane(Lane::Token, 1.0, &[4])],
            |a: u32, b: u32| a.cmp(&b),
        );
        assert_eq!((f[0].chunk, f[1].chunk), (4, 5), "then the lower id");
    }

    #[test]
    fn missing_lane_is_dropped_not_zeroed() {
        let f = rrf(60.0, &[lane(Lane::Lexical, 1.5, &[3])], |a: u32, b: u32| {
            a.cmp(&b)
        });
        assert!(lane_rank(&f[0], Lane::Semantic).is_none());
        assert_eq!(f.len(), 1);
    }

    #[test]
    fn config_ranges_are_checked() {
        assert!(FusionConfig::default().validate().is_ok());
        let bad = FusionConfig {
            k: 0.0,
            ..FusionConfig::default()
        };
        assert!(bad.validate().is_err());
        let bad = FusionConfig {
            token: -1.0,
            ..FusionConfig::default()
        };
        assert!(bad.validate().is_err());
    }
}
