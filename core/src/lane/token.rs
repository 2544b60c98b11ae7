//! The token lane: plain term overlap, so short or odd queries (a prefix typed so far, a rare
//! spelling) still get candidates, with no statistics and no model.
//!
//! A chunk scores the fraction of query terms it contains: 1 for a term it contains exactly,
//! 0.5 for a term it only contains as the prefix of a longer term (`rev` → `revenu`). Ties go
//! to the shorter chunk (the match is a larger part of it), then to the lower chunk index.

use super::lexical::LexicalIndex;
use super::{top_n, Mask};
use crate::analyze::QueryTerm;

/// How many dictionary terms one query word may expand to as a prefix.
pub const MAX_PREFIX_EXPANSIONS: usize = 64;

/// Shortest query word that is matched as a prefix.
pub const MIN_PREFIX_CHARS: usize = 2;

/// The `n` best chunks by term overlap with the query's terms (exactly, or as prefixes of the
/// term or of the unstemmed word it came from).
pub(crate) fn search(
    index: &LexicalIndex,
    query: &[QueryTerm],
    mask: Mask<'_>,
    groups: Option<&[u32]>,
    n: usize,
) -> Vec<(u32, f32)> {
    let units = query.len();
    if units == 0 {
        return Vec::new();
    }
    let mut acc = vec![0f32; index.chunk_count()];
    let mut touched: Vec<u32> = Vec::new();
    // Per query unit: the best credit each chunk got (exact 1.0 beats prefix 0.5).
    let mut credit = vec![0f32; index.chunk_count()];
    let mut credited: Vec<u32> = Vec::new();
    for q in query {
        let exact = index.lookup(&q.term);
        if let Some(t) = exact {
            give(index.postings(t).0, 1.0, mask, &mut credit, &mut credited);
        }
        for prefix in [q.term.as_str(), q.word.as_str()] {
            if prefix.chars().count() < MIN_PREFIX_CHARS {
                continue;
            }
            for t in index.prefixed(prefix, MAX_PREFIX_EXPANSIONS) {
                if Some(t) != exact {
                    give(index.postings(t).0, 0.5, mask, &mut credit, &mut credited);
                }
            }
        }
        for c in credited.drain(..) {
            let ci = c as usize;
            if acc[ci] == 0.0 {
                touched.push(c);
            }
            acc[ci] += credit[ci];
            credit[ci] = 0.0;
        }
    }
    let scored: Vec<(u32, f32)> = touched
        .into_iter()
        .map(|c| (c, acc[c as usize] / units as f32))
        .collect();
    let tie = |a: u32, b: u32| index.length(a).cmp(&index.length(b)).then(a.cmp(&b));
    let scored = match groups {
        Some(groups) => super::best_per_group(scored, groups, tie),
        None => scored,
    };
    top_n(scored, n, tie)
}

fn give(chunks: &[u32], value: f32, mask: Mask<'_>, credit: &mut [f32], credited: &mut Vec<u32>) {
    for &c in chunks {
        let ci = c as usize;
        if !mask[ci] {
            continue;
        }
        if credit[ci] == 0.0 {
            credited.push(c);
        }
        if value > credit[ci] {
            credit[ci] = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::lane::lexical::test_index as idx;

    fn q(v: &[&str]) -> Vec<QueryTerm> {
        v.iter()
            .map(|x| QueryTerm {
                term: x.to_string(),
                word: x.to_string(),
                count: 1,
            })
            .collect()
    }

    #[test]
    fn more_overlap_ranks_first_and_shorter_breaks_ties() {
        let i = idx(&["a b c d", "a b", "a x y z q", "a"]);
        let hits = search(&i, &q(&["a", "b"]), &[true; 4], None, 10);
        let order: Vec<u32> = hits.iter().map(|h| h.0).collect();
        assert_eq!(order, [1, 0, 3, 2]);
        assert_eq!(hits[0].1, 1.0);
        assert_eq!(hits[2].1, 0.5);
    }

    #[test]
    fn prefixes_get_half_credit_once() {
        let i = idx(&["revenu review", "rev"]);
        let hits = search(&i, &q(&["rev"]), &[true; 2], None, 10);
        assert_eq!(hits, [(1, 1.0), (0, 0.5)]);
    }

    #[test]
    fn empty_query_gives_nothing() {
        let i = idx(&["a"]);
        assert!(search(&i, &[], &[true], None, 10).is_empty());
    }
}
