//! Whether the word-matching lanes can read a query, and the fusion weight that follows.
//!
//! The lexical and token lanes rank every chunk that shares a word with the query. When most
//! of a query's words are ones the index does not hold (a query in another language than the
//! pages that answer it; a wiki whose vocabulary does not cover the question), they can only
//! match its remaining words, often the most common ones, and with fixed weights reciprocal
//! rank fusion lets those hits outvote the semantic lane: with `k` = 60 a lane adds
//! `weight / (k + rank)` to every page it ranks, so one more lane's vote for a page is worth
//! more than the gap between the semantic lane's first and fifth page.
//!
//! The signal is the share of the query's term weight the index can read (`known_share`):
//! each query term weighs its count in the query times its inverse document frequency (a term
//! the index does not hold weighs what a term in no chunk would, the most), and counts as read
//! by the credit the token lane gives it (`token::term_credits`: 1 for the term itself, less
//! for a typo match or the prefix of a longer term). The rule ([`weight_factor`]): the lexical
//! and token lanes keep their configured weights when the index reads at least
//! [`MIN_KNOWN_SHARE`] of the query, and get weight 0 below it (they still run and are
//! reported). The semantic lane keeps its weight. Weights adapt only when the semantic lane
//! ran: without it the word lanes are all there is.
//!
//! How the bound was chosen, and what it does on each collection, is in the book
//! (`docs/benchmarks/quality.md`).

use crate::lane::lexical::{idf, LexicalIndex};
use crate::lane::token;
use crate::lane::typo::{self, Expansion};
use crate::text::analyze::QueryTerm;

/// The share of a query's term weight the index must read for the lexical and token lanes to
/// keep their weights (when the semantic lane runs beside them).
pub const MIN_KNOWN_SHARE: f32 = 2.0 / 3.0;

/// The share of the query's term weight the index can read: `Σ credit · count · idf / Σ count
/// · idf` over the query's terms, where `credit` is the best the token lane gives the term
/// (1 when the index holds it; a prefix or typo match's credit; 0 when nothing matches it), in
/// `0.0..=1.0`; 1 for a query without terms (there is nothing the index fails to read).
pub(crate) fn known_share(
    index: &LexicalIndex,
    query: &[QueryTerm<'_>],
    typos: &[Expansion],
) -> f32 {
    let (mut total, mut known) = (0f64, 0f64);
    for (i, q) in query.iter().enumerate() {
        let exact = index.lookup(&q.term);
        let df = exact.map_or(0, |t| index.df(t));
        let weight = f64::from(q.count) * f64::from(idf(index, df));
        let mut credit = 0f32;
        if i + 1 == query.len() {
            // The word being typed: read when it begins a word of the index.
            token::term_credits(index, query, typos, i, |_, given| {
                credit = credit.max(given)
            });
        } else if exact.is_some() {
            credit = 1.0;
        } else {
            for e in typos.iter().filter(|e| e.query == i) {
                let whole = if e.prefix { 0.5 } else { 1.0 };
                credit = credit.max(whole * typo::discount(e.edits));
            }
        }
        total += weight;
        known += weight * f64::from(credit.min(1.0));
    }
    if total > 0.0 {
        (known / total).clamp(0.0, 1.0) as f32
    } else {
        1.0
    }
}

/// The factor the lexical and token lanes' weights are multiplied by when the index reads
/// `known` of the query (`known_share`): 1 from [`MIN_KNOWN_SHARE`] up, else 0.
pub fn weight_factor(known: f32) -> f32 {
    if known >= MIN_KNOWN_SHARE {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_factor_keeps_the_weight_from_the_bound_up() {
        assert_eq!(weight_factor(1.0), 1.0);
        assert_eq!(weight_factor(MIN_KNOWN_SHARE), 1.0);
        assert_eq!(weight_factor(MIN_KNOWN_SHARE - 0.01), 0.0);
        assert_eq!(weight_factor(0.0), 0.0);
    }
}
