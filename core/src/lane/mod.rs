//! The three ranking lanes (DESIGN §3). Each ranks chunks independently; [`crate::fusion`]
//! combines them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub mod lexical;
pub mod semantic;
pub mod token;

/// A ranking lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    /// BM25 over key + title + summary + body + tags, with stemming.
    Lexical,
    /// Cosine similarity between query and chunk embeddings.
    Semantic,
    /// Plain term overlap (exact terms, then prefixes); needs no statistics and no model.
    Token,
}

impl Lane {
    /// Every lane, in fusion order.
    pub const ALL: [Lane; 3] = [Lane::Lexical, Lane::Semantic, Lane::Token];

    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Lexical => "lexical",
            Lane::Semantic => "semantic",
            Lane::Token => "token",
        }
    }

    /// Parses a lane name.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown name.
    pub fn parse(s: &str) -> Result<Lane> {
        Lane::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown lane `{s}`; expected lexical, semantic or token"
                ))
            })
    }

    /// Parses a comma-separated list of lane names (`lexical,token`), deduplicated.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown or empty list.
    pub fn parse_list(s: &str) -> Result<Vec<Lane>> {
        let mut lanes: Vec<Lane> = s
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(Lane::parse)
            .collect::<Result<_>>()?;
        lanes.sort();
        lanes.dedup();
        if lanes.is_empty() {
            return Err(Error::invalid_argument("no lanes given"));
        }
        Ok(lanes)
    }
}

/// How a lane fared on one query. A skipped or failed lane is dropped from fusion, not zeroed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum LaneStatus {
    /// The lane ran.
    Ok,
    /// The lane did not run (not asked for, or not available in this index), and why.
    Skipped(Cow<'static, str>),
    /// The lane tried and failed, and why.
    Failed(Cow<'static, str>),
}

impl LaneStatus {
    /// `ok`, `skipped` or `failed`.
    pub fn name(&self) -> &'static str {
        match self {
            LaneStatus::Ok => "ok",
            LaneStatus::Skipped(_) => "skipped",
            LaneStatus::Failed(_) => "failed",
        }
    }

    /// The reason for a skipped or failed lane.
    pub fn reason(&self) -> Option<&str> {
        match self {
            LaneStatus::Ok => None,
            LaneStatus::Skipped(r) | LaneStatus::Failed(r) => Some(r),
        }
    }
}

/// Which chunks a query may return: one flag per chunk.
pub(crate) type Mask<'a> = &'a [bool];

/// Keeps the `n` best `(chunk, score)` pairs, by score descending then by `tie` ascending.
pub(crate) fn top_n(
    mut scored: Vec<(u32, f32)>,
    n: usize,
    tie: impl Fn(u32, u32) -> std::cmp::Ordering,
) -> Vec<(u32, f32)> {
    let cmp = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then_with(|| tie(a.0, b.0));
    if scored.len() > n && n > 0 {
        scored.select_nth_unstable_by(n - 1, cmp);
        scored.truncate(n);
    }
    scored.sort_unstable_by(cmp);
    scored.truncate(n);
    scored
}

/// Keeps each group's best `(chunk, score)` (score descending, then `tie` ascending).
pub(crate) fn best_per_group(
    scored: Vec<(u32, f32)>,
    groups: &[u32],
    tie: impl Fn(u32, u32) -> std::cmp::Ordering,
) -> Vec<(u32, f32)> {
    use std::collections::hash_map::Entry;
    let mut best: std::collections::HashMap<u32, (u32, f32), lexical::BuildFnv> =
        std::collections::HashMap::default();
    for (c, s) in scored {
        match best.entry(groups[c as usize]) {
            Entry::Vacant(v) => {
                v.insert((c, s));
            }
            Entry::Occupied(mut o) => {
                let (bc, bs) = *o.get();
                if s.total_cmp(&bs).then_with(|| tie(bc, c)).is_gt() {
                    o.insert((c, s));
                }
            }
        }
    }
    best.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_lists_parse_and_dedupe() {
        assert_eq!(
            Lane::parse_list("token, lexical,token").unwrap(),
            [Lane::Lexical, Lane::Token]
        );
        assert_eq!(Lane::parse_list("").unwrap_err().code(), "invalid_argument");
        assert_eq!(
            Lane::parse_list("bm25").unwrap_err().code(),
            "invalid_argument"
        );
    }

    #[test]
    fn top_n_orders_by_score_then_tie() {
        let v = vec![(3, 1.0), (1, 2.0), (2, 1.0), (0, 0.5)];
        assert_eq!(
            top_n(v.clone(), 3, |a, b| a.cmp(&b)),
            [(1, 2.0), (2, 1.0), (3, 1.0)]
        );
        assert_eq!(top_n(v, 10, |a, b| a.cmp(&b)).len(), 4);
    }
}
