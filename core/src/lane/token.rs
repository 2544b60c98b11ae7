//! The token lane: plain term overlap, so short or odd queries (a prefix typed so far, a rare
//! spelling) still get candidates, with no statistics and no model.
//!
//! A chunk scores the fraction of query terms it contains: 1 for a term it contains exactly,
//! 0.5 for a term it only contains as the prefix of a longer term (`rev` → `revenu`). Prefixes
//! are tried for the last query word (the one being typed) and for words the index does not
//! contain; a complete, known word is matched exactly. A CJK query is a list of character
//! bigrams ([`crate::text::analyze`]), each a unit here; a lone CJK character is matched as a prefix
//! too, so typing the first character of a word finds the bigrams it begins. A word the index
//! does not contain also gets its typo expansions ([`crate::lane::typo::expand`]): a term a few
//! edits away earns what the term itself would (1, or 0.5 for a prefix of the last word) times
//! [`TYPO_DISCOUNT`](crate::lane::typo::TYPO_DISCOUNT) per edit, so it never reaches an exact
//! match. Ties go to the chunk where the matched terms occur more often (typing `reven` should
//! find the page about revenue before a page that mentions it once), then to the shorter chunk,
//! then to the lower chunk index.

use super::lexical::LexicalIndex;
use super::prune::{self, Cursor, Parts, PRUNE_TOKEN_FROM};
use super::typo::{self, Expansion};
use super::{grow, top_keys, with_reused, Mask};
use crate::text::analyze::QueryTerm;

/// How many dictionary terms one query word may expand to as a prefix.
pub const MAX_PREFIX_EXPANSIONS: usize = 64;

/// Shortest query word that is matched as a prefix (but see [`long_enough_for_prefix`]).
pub const MIN_PREFIX_CHARS: usize = 2;

/// Whether `word` (a query word or term) is long enough to be matched as a prefix: at least
/// [`MIN_PREFIX_CHARS`] characters, or one CJK character, which carries about as much as a
/// short word and is how a CJK word begins to be typed (`晴` finds `晴れ`).
pub fn long_enough_for_prefix(word: &str) -> bool {
    let n = word.chars().count();
    n >= MIN_PREFIX_CHARS || (n == 1 && word.chars().all(crate::text::analyze::is_cjk))
}

/// What each query term earns credit from, in query order: the terms [`term_credits`] gives
/// it and their credits, in the order it gives them (a term given twice is listed twice).
/// What the lane ranks by ([`search`]); worked out once per query, on the dictionary whose
/// prefixes and typo matches decide it (a sharded search's union of every shard's).
pub(crate) type Credits = Vec<Vec<(usize, f32)>>;

/// The [`Credits`] of `query` in `index`, with its `typos`.
pub(crate) fn credits(
    index: &LexicalIndex,
    query: &[QueryTerm<'_>],
    typos: &[Expansion],
) -> Credits {
    (0..query.len())
        .map(|i| {
            let mut terms = Vec::new();
            term_credits(index, query, typos, i, |t, credit| terms.push((t, credit)));
            terms
        })
        .collect()
}

/// The `n` best chunks by term overlap with the query, as its [`Credits`] give it (each query
/// term matched exactly, as prefixes of the term or of the unstemmed word it came from, or as
/// the terms typo tolerance takes it for). From [`PRUNE_TOKEN_FROM`] chunks on, the chunks
/// that cannot make the best `n` are skipped ([`search_pruned`]); the answer is the same.
pub(crate) fn search(
    index: &LexicalIndex,
    credits: &[Vec<(usize, f32)>],
    mask: Mask<'_>,
    groups: Option<(&[u32], usize)>,
    n: usize,
) -> Vec<(u32, f32)> {
    search_keys(index, credits, mask, groups, n)
        .into_iter()
        .map(from_key)
        .collect()
}

/// [`search`] with each chunk's place among chunks of equal score: what the lane orders ties
/// by before the chunk index (more occurrences, then the shorter chunk), larger first. A
/// sharded search merges the shards' candidates by score, then this, then the chunk's place
/// in the whole wiki.
pub(crate) fn search_tied(
    index: &LexicalIndex,
    credits: &[Vec<(usize, f32)>],
    mask: Mask<'_>,
    groups: Option<(&[u32], usize)>,
    n: usize,
) -> Vec<(u32, f32, u64)> {
    search_keys(index, credits, mask, groups, n)
        .into_iter()
        .map(|key| {
            let (c, score) = from_key(key);
            (c, score, (key >> 32) as u64)
        })
        .collect()
}

/// The [`chunk_key`]s of [`search`]'s chunks, best first.
fn search_keys(
    index: &LexicalIndex,
    credits: &[Vec<(usize, f32)>],
    mask: Mask<'_>,
    groups: Option<(&[u32], usize)>,
    n: usize,
) -> Vec<u128> {
    if credits.is_empty() {
        return Vec::new();
    }
    if index.chunk_count() >= PRUNE_TOKEN_FROM {
        search_pruned(index, credits, mask, groups, n)
    } else {
        search_every(index, credits, mask, groups, n)
    }
}

/// [`search`] by crediting every posting of the query's terms, a query unit at a time, into
/// one score per chunk, then keeping the best.
fn search_every(
    index: &LexicalIndex,
    credits: &[Vec<(usize, f32)>],
    mask: Mask<'_>,
    groups: Option<(&[u32], usize)>,
    n: usize,
) -> Vec<u128> {
    let units = credits.len();
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    }
    with_reused(&SCRATCH, |sc| {
        let chunks = index.chunk_count();
        grow(&mut sc.acc, chunks);
        grow(&mut sc.credit, chunks);
        grow(&mut sc.occurrences, chunks);
        grow(&mut sc.best, groups.map_or(0, |(_, n)| n));
        let Scratch {
            acc,
            credit,
            occurrences,
            best,
            touched,
            credited,
            seen,
        } = sc;
        touched.clear();
        for unit in credits {
            for &(t, w) in unit {
                give(index.postings_of(t), w, mask, credit, credited, occurrences);
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
        // Making a chunk's key resets its buffers.
        let mut key = |c: u32| {
            let ci = c as usize;
            let score = std::mem::replace(&mut acc[ci], 0.0) / units as f32;
            chunk_key(index, score, std::mem::replace(&mut occurrences[ci], 0), c)
        };
        let keys = match groups {
            None => top_keys(touched.iter().map(|&c| key(c)), n),
            Some((groups, _)) => {
                seen.clear();
                for &c in touched.iter() {
                    let g = groups[c as usize] as usize;
                    if best[g] == 0 {
                        seen.push(g);
                    }
                    best[g] = best[g].max(key(c));
                }
                top_keys(seen.iter().map(|&g| std::mem::replace(&mut best[g], 0)), n)
            }
        };
        debug_assert!(acc.iter().all(|&x| x == 0.0), "score buffer left dirty");
        debug_assert!(
            occurrences.iter().all(|&x| x == 0),
            "occurrences left dirty"
        );
        debug_assert!(best.iter().all(|&x| x == 0), "group buffer left dirty");
        keys
    })
}

/// [`search`] skipping the chunks that cannot make the best `n` ([`prune::search`]): each
/// query unit adds at most its best credit. A chunk that may enter is credited exactly as
/// [`search_every`] credits it, so both give the same chunks with the same scores.
fn search_pruned(
    index: &LexicalIndex,
    credits: &[Vec<(usize, f32)>],
    mask: Mask<'_>,
    groups: Option<(&[u32], usize)>,
    n: usize,
) -> Vec<u128> {
    // Each unit's terms, in the order of its credits (a term listed twice counts twice, as
    // `search_every` counts its occurrences twice).
    let mut units = Vec::with_capacity(credits.len());
    let mut units_of = Units {
        index,
        terms: Vec::with_capacity(credits.len()),
    };
    for unit in credits {
        let (mut lists, mut terms) = (Vec::new(), Vec::new());
        for &(t, credit) in unit {
            let (chunks, tfs) = index.postings_of(t);
            lists.push(Cursor::new(chunks));
            terms.push((credit, tfs));
        }
        units.push(lists);
        units_of.terms.push(terms);
    }
    let bounds: Vec<f64> = units_of
        .terms
        .iter()
        .map(|terms| f64::from(terms.iter().map(|t| t.0).fold(0.0, f32::max)))
        .collect();
    prune::search(
        &units_of,
        units,
        &bounds,
        |c| mask[c as usize],
        |c| groups.map_or(c, |(g, _)| g[c as usize]),
        n,
    )
}

/// Chunk `c` with `score` and its matched `occurrences` as one integer that orders as the lane
/// ranks: score descending (a positive float, so its bits order like its value), then more
/// occurrences, then the shorter chunk, then the lower index.
fn chunk_key(index: &LexicalIndex, score: f32, occurrences: u32, c: u32) -> u128 {
    key_head(score, occurrences)
        | (u128::from(!index.length(c).unwrap_or(0)) << 32)
        | u128::from(!c)
}

/// What a [`chunk_key`] holds of its score and occurrences: the key of any chunk with them is
/// this plus at most `u64::MAX`.
fn key_head(score: f32, occurrences: u32) -> u128 {
    (u128::from(score.to_bits()) << 96) | (u128::from(occurrences) << 64)
}

/// The chunk and score of a [`chunk_key`].
fn from_key(key: u128) -> (u32, f32) {
    (!(key as u32), f32::from_bits((key >> 96) as u32))
}

/// A token-lane query as [`prune::search`] scores it: per unit (a query word), each of its
/// terms' credit and frequencies (parallel to the unit's lists).
struct Units<'a> {
    index: &'a LexicalIndex,
    terms: Vec<Vec<(f32, &'a [u32])>>,
}

impl Units<'_> {
    /// What unit `u` credits chunk `c` (its best term there), and the occurrences there of
    /// all its terms, moving their cursors to `c`.
    fn credit(&self, u: usize, lists: &mut [Cursor<'_>], c: u32) -> (f32, u32) {
        let (mut credit, mut occurrences) = (0f32, 0u32);
        for (list, &(value, tfs)) in lists.iter_mut().zip(&self.terms[u]) {
            if list.seek(c) {
                credit = credit.max(value);
                occurrences = occurrences.saturating_add(tfs[list.at]);
            }
        }
        (credit, occurrences)
    }
}

impl prune::Scored for Units<'_> {
    type Key = u128;

    fn parts(&self, u: usize, l: usize) -> Parts<'_> {
        Parts::All(self.terms[u][l].0)
    }

    /// The credit alone: the occurrences are read only for a chunk that may enter ([`key`]).
    /// A term whose credit is below `need` is not sought: once the best chunks all hold
    /// every word exactly, the terms a word's prefix or typos credit at 0.5 or less are
    /// passed over.
    ///
    /// [`key`]: prune::Scored::key
    fn part(&self, u: usize, lists: &mut [Cursor<'_>], c: u32, need: f64) -> f32 {
        lists
            .iter_mut()
            .zip(&self.terms[u])
            .filter(|(_, &(value, _))| f64::from(value) >= need)
            .filter_map(|(list, &(value, _))| list.seek(c).then_some(value))
            .fold(0.0, f32::max)
    }

    /// The key [`search_every`] makes: the credits added in the query's order over the
    /// units, then the occurrences, the chunk's length and index. The length is read only
    /// when the score and occurrences alone do not put the key at or below `floor` (most
    /// chunks of a large index tie on score, and their lengths lie in scattered memory).
    fn key(&self, units: &mut [Vec<Cursor<'_>>], c: u32, floor: Option<u128>) -> Option<u128> {
        let (mut acc, mut occurrences) = (0f32, 0u32);
        for (u, lists) in units.iter_mut().enumerate() {
            let (credit, occ) = self.credit(u, lists, c);
            acc += credit;
            occurrences = occurrences.saturating_add(occ);
        }
        let score = acc / self.terms.len() as f32;
        if floor.is_some_and(|f| key_head(score, occurrences) | u128::from(u64::MAX) <= f) {
            return None;
        }
        Some(chunk_key(self.index, score, occurrences, c))
    }

    /// A score times the units: the credits it stands for.
    fn reach(&self, key: u128) -> f64 {
        f64::from(from_key(key).1) * self.terms.len() as f64
    }
}

/// Per-thread buffers reused across queries ([`with_reused`]): per chunk, its score, the
/// credit of the query unit being added and its matched occurrences; per page, its best key.
/// All zero between uses.
#[derive(Default)]
struct Scratch {
    acc: Vec<f32>,
    credit: Vec<f32>,
    occurrences: Vec<u32>,
    best: Vec<u128>,
    touched: Vec<u32>,
    credited: Vec<u32>,
    seen: Vec<usize>,
}

/// Every chunk `mask` lets through that this lane would give credit: one holding a query
/// term exactly, as [`search`] matches them as a prefix, or as a term `typos` takes one for.
/// Ascending, each once.
pub(crate) fn matching_chunks(
    index: &LexicalIndex,
    query: &[QueryTerm<'_>],
    typos: &[Expansion],
    mask: Mask<'_>,
) -> Vec<u32> {
    chunks_holding(index, credited_terms(index, query, typos), mask)
}

/// Every term [`term_credits`] gives any of `query`'s terms, in query order (a term given
/// twice is listed twice).
pub(crate) fn credited_terms(
    index: &LexicalIndex,
    query: &[QueryTerm<'_>],
    typos: &[Expansion],
) -> Vec<usize> {
    let mut terms = Vec::new();
    for i in 0..query.len() {
        term_credits(index, query, typos, i, |t, _| terms.push(t));
    }
    terms
}

/// Every chunk `mask` lets through that holds one of `terms` (dictionary positions).
/// Ascending, each once.
pub(crate) fn chunks_holding(
    index: &LexicalIndex,
    terms: impl IntoIterator<Item = usize>,
    mask: Mask<'_>,
) -> Vec<u32> {
    let mut hit = vec![false; index.chunk_count()];
    for t in terms {
        for &c in index.postings_of(t).0 {
            if mask[c as usize] {
                hit[c as usize] = true;
            }
        }
    }
    (0..hit.len() as u32).filter(|&c| hit[c as usize]).collect()
}

/// The terms query term `i` earns credit from, each with its credit, as [`search`] gives it:
/// the term itself (1); when it [`matches_as_prefix`], the terms its term or word begins (0.5
/// each, the term itself aside); the terms `typos` takes it for (1, or 0.5 for a prefix of the
/// last word, times the typo discount per edit), unless the prefixes already credited them.
pub(crate) fn term_credits(
    index: &LexicalIndex,
    query: &[QueryTerm<'_>],
    typos: &[Expansion],
    i: usize,
    mut credit: impl FnMut(usize, f32),
) {
    let exact = index.lookup(&query[i].term);
    if let Some(t) = exact {
        credit(t, 1.0);
    }
    let mut given: [std::ops::Range<usize>; 2] = [0..0, 0..0];
    for (prefix, given) in prefixes(exact.is_some(), i, query).zip(&mut given) {
        *given = index.prefixed(prefix, MAX_PREFIX_EXPANSIONS);
        for t in given.clone().filter(|&t| Some(t) != exact) {
            credit(t, 0.5);
        }
    }
    for e in typos.iter().filter(|e| e.query == i) {
        // A term the prefixes already credited at 0.5 (at least a typo's credit) is not
        // counted twice.
        if given.iter().any(|g| g.contains(&e.term)) {
            continue;
        }
        let whole = if e.prefix { 0.5 } else { 1.0 };
        credit(e.term, whole * typo::discount(e.edits));
    }
}

/// Whether query term `i` of `n` (`known`: its term is in the dictionary) also matches as a
/// prefix: the last word (the one being typed) and words the index does not contain.
fn matches_as_prefix(known: bool, i: usize, n: usize) -> bool {
    !known || i + 1 == n
}

/// What query term `i` (`known`: its term is in the dictionary) is also matched as a prefix
/// of: its term and its unstemmed word when it [`matches_as_prefix`], each only if
/// [`long_enough_for_prefix`]. What [`term_credits`] credits the terms of, snippets highlight
/// and a ranged search loads the dictionary shards of.
pub(crate) fn prefixes<'a>(
    known: bool,
    i: usize,
    query: &'a [QueryTerm<'_>],
) -> impl Iterator<Item = &'a str> {
    let q = &query[i];
    let on = matches_as_prefix(known, i, query.len());
    [q.term.as_ref(), q.word.as_ref()]
        .into_iter()
        .filter(move |p| on && long_enough_for_prefix(p))
}

fn give(
    (chunks, tfs): (&[u32], &[u32]),
    value: f32,
    mask: Mask<'_>,
    credit: &mut [f32],
    credited: &mut Vec<u32>,
    occurrences: &mut [u32],
) {
    for (&c, &tf) in chunks.iter().zip(tfs) {
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
        occurrences[ci] = occurrences[ci].saturating_add(tf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::postings::test_index as idx;

    /// [`search`] of `query` with its `typos`.
    fn ranked(
        index: &LexicalIndex,
        query: &[QueryTerm<'_>],
        typos: &[Expansion],
        mask: Mask<'_>,
        groups: Option<(&[u32], usize)>,
        n: usize,
    ) -> Vec<(u32, f32)> {
        search(index, &credits(index, query, typos), mask, groups, n)
    }

    fn q<'a>(v: &[&'a str]) -> Vec<QueryTerm<'a>> {
        v.iter()
            .map(|x| QueryTerm {
                term: (*x).into(),
                word: (*x).into(),
                count: 1,
            })
            .collect()
    }

    #[test]
    fn ties_go_to_more_occurrences_then_shorter_chunks() {
        let i = idx(&["revenu x", "x revenu revenu y z", "revenu"]);
        let hits = ranked(&i, &q(&["rev"]), &[], &[true; 3], None, 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1, 2, 0]);
    }

    #[test]
    fn more_overlap_ranks_first_and_shorter_breaks_ties() {
        let i = idx(&["a b c d", "a b", "a x y z q", "a"]);
        let hits = ranked(&i, &q(&["a", "b"]), &[], &[true; 4], None, 10);
        let order: Vec<u32> = hits.iter().map(|h| h.0).collect();
        assert_eq!(order, [1, 0, 3, 2]);
        assert_eq!(hits[0].1, 1.0);
        assert_eq!(hits[2].1, 0.5);
    }

    #[test]
    fn prefixes_get_half_credit_once() {
        let i = idx(&["revenu review", "rev"]);
        let hits = ranked(&i, &q(&["rev"]), &[], &[true; 2], None, 10);
        assert_eq!(hits, [(1, 1.0), (0, 0.5)]);
    }

    #[test]
    fn known_words_before_the_last_are_matched_exactly() {
        let i = idx(&["revenu", "revenues", "rev"]);
        // "rev" is known and not last: exact only. "reve" is last: prefixes too.
        let hits = ranked(&i, &q(&["rev", "zzz"]), &[], &[true; 3], None, 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [2]);
        let hits = ranked(&i, &q(&["zzz", "rev"]), &[], &[true; 3], None, 10);
        assert_eq!(hits.len(), 3);
    }

    #[test]
    fn one_cjk_character_is_matched_as_a_prefix_one_latin_letter_is_not() {
        let i = idx(&["晴れ", "r", "rx"]);
        let hits = ranked(&i, &q(&["晴"]), &[], &[true; 3], None, 10);
        assert_eq!(hits, [(0, 0.5)]);
        let hits = ranked(&i, &q(&["r"]), &[], &[true; 3], None, 10);
        assert_eq!(hits, [(1, 1.0)]);
        assert!(long_enough_for_prefix("晴") && long_enough_for_prefix("re"));
        assert!(!long_enough_for_prefix("r") && !long_enough_for_prefix(""));
    }

    proptest::proptest! {
        /// Skipping chunks that cannot make the best `n` finds the chunks, scores and order
        /// that crediting every posting finds: with prefixes (`ab` and `abc` both begin
        /// `abcd`), words the index lacks, typo matches, a mask and pages.
        #[test]
        fn pruned_search_finds_what_crediting_every_posting_finds(
            docs in proptest::collection::vec(proptest::collection::vec(0usize..10, 1..12), 1..150),
            query in proptest::collection::vec(0usize..12, 1..6),
            typos in proptest::collection::vec((0usize..6, 0usize..10, 1u8..3, proptest::bool::ANY), 0..4),
            hidden in proptest::collection::vec(proptest::bool::ANY, 150),
            pages in proptest::collection::vec(0u32..50, 150),
            n in 0usize..12,
        ) {
            const WORDS: [&str; 12] =
                ["a", "ab", "abc", "abcd", "b", "bc", "bcd", "c", "cd", "d", "zz", "abz"];
            let texts: Vec<String> = docs
                .iter()
                .map(|d| d.iter().map(|&w| WORDS[w * w / 10]).collect::<Vec<_>>().join(" "))
                .collect();
            let i = idx(&texts.iter().map(String::as_str).collect::<Vec<_>>());
            let words: Vec<&str> = query.iter().map(|&w| WORDS[w]).collect();
            let query = q(&words);
            let typos: Vec<Expansion> = typos
                .iter()
                .filter(|&&(u, t, _, _)| u < query.len() && t < i.term_count())
                .map(|&(query, term, edits, prefix)| Expansion { query, term, edits, prefix })
                .collect();
            let mask: Vec<bool> = hidden[..texts.len()].iter().map(|h| !h).collect();
            let (groupings, n_groups) = prune::test_groupings(&pages[..texts.len()]);
            let all = vec![true; texts.len()];
            for mask in [&all, &mask] {
                for group in &groupings {
                    let groups = group.as_ref().map(|g| (&g[..], n_groups));
                    let credits = credits(&i, &query, &typos);
                    let every = search_every(&i, &credits, mask, groups, n);
                    let pruned = search_pruned(&i, &credits, mask, groups, n);
                    proptest::prop_assert_eq!(every, pruned);
                }
            }
        }
    }

    #[test]
    fn empty_query_gives_nothing() {
        let i = idx(&["a"]);
        assert!(ranked(&i, &[], &[], &[true], None, 10).is_empty());
    }
}
