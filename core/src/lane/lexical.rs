//! The lexical lane: BM25 over an inverted index this crate owns (postings live in the blob).
//!
//! Scoring is Lucene's BM25 (the variant bm25s calls `lucene`):
//! `idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))` and
//! `score(d) = Σ idf(t) · tf · (k1 + 1) / (tf + k1 · (1 - b + b · |d| / avgdl))`,
//! over the distinct query terms, each weighted by its count in the query. Each chunk is indexed as key + title + summary + chunk text +
//! tags, so a page's metadata matches through every one of its chunks.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::prune::{self, Cursor, Parts, PRUNE_LEXICAL_FROM};
use super::{grow, top_keys, with_reused, Mask};
pub use crate::data::config::Bm25Params;
pub use crate::postings::LexicalIndex;
pub use crate::text::analyze::BuildHash;
use crate::text::analyze::{Analyzer, Vocabulary};
use crate::text::page::Page;

/// One query term's part in a chunk's BM25 score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TermScore {
    /// The analyzed query term.
    pub term: String,
    /// Its weight: how many times the query contains it (times the typo discount for a
    /// `matched` term, see [`crate::lane::typo::discount`]).
    pub weight: f32,
    /// Occurrences in the chunk.
    pub tf: u32,
    /// Chunks containing the term.
    pub df: u32,
    /// The term's inverse document frequency.
    pub idf: f32,
    /// The term's contribution to the score.
    pub score: f32,
    /// For a typo-tolerant match, the dictionary term the query term was taken for (`tf`,
    /// `df`, `idf` and `score` are that term's); `None` when the term itself was looked up.
    #[serde(default)]
    pub matched: Option<String>,
    /// Edits between the query word and the nearest word of the text with the `matched`
    /// term (0 without one).
    #[serde(default)]
    pub edits: u32,
}

/// A page's fields as every one of its chunks indexes them: key, title and summary before the
/// chunk's text, tags after it. Each field's terms carry their positions
/// ([`Analyzer::terms_at_recording`]), fields [`FIELD_GAP`] positions apart so that a phrase
/// never matches across two of them.
pub(crate) struct PageFields {
    head: Vec<u32>,
    head_at: Vec<u32>,
    /// Where the chunk's text starts.
    text_at: u32,
    tail: Vec<u32>,
    /// Positions of `tail` from the tail's start.
    tail_at: Vec<u32>,
}

/// The fields of `page` its chunks index before their text, in order: key, title, summary.
fn head_fields(page: &Page) -> impl Iterator<Item = &str> {
    [
        Some(page.key.as_str()),
        Some(page.title.as_str()),
        page.summary.as_deref(),
    ]
    .into_iter()
    .flatten()
}

/// Where the text of `page`'s chunks starts in their positions: after the key, the title and
/// the summary, each followed by [`FIELD_GAP`] (what [`PageFields::new`] records before it).
pub(crate) fn text_position(page: &Page) -> u32 {
    head_fields(page).fold(0u32, |at, field| {
        let tokens = u32::try_from(crate::text::analyze::tokens(field).count()).unwrap_or(u32::MAX);
        at.saturating_add(tokens).saturating_add(FIELD_GAP)
    })
}

/// Positions left free between two fields of a chunk (key, title, summary, text, each tag):
/// more than a phrase of the longest query spans in practice, so a phrase matches within one
/// field (Lucene's `position_increment_gap` of 100 for multi-valued text fields).
pub const FIELD_GAP: u32 = 100;

/// The terms each chunk is indexed under (as [`Vocabulary`] numbers), in order, and the
/// position of each: one list of every chunk's in chunk order, each chunk's run ending at its
/// `ends`. A large build holds two numbers a token and nothing a chunk (a pair of lists a chunk
/// held about a third more than its tokens, and a heap full of holes once they were freed).
/// Pages analyzed apart, on several threads, each give such lists: they are kept as they are,
/// one after the other ([`ChunkTerms::append`]), not copied into one.
#[derive(Debug, Default)]
pub(crate) struct ChunkTerms {
    runs: Vec<TermRun>,
}

/// The lists of [`ChunkTerms`] for a run of chunks.
#[derive(Debug, Default)]
struct TermRun {
    terms: Vec<u32>,
    positions: Vec<u32>,
    ends: Vec<usize>,
}

impl TermRun {
    fn chunks(&self) -> impl Iterator<Item = (&[u32], &[u32])> + Clone {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| (&self.terms[start..end], &self.positions[start..end]))
    }
}

impl ChunkTerms {
    /// The run the next chunk goes in.
    fn last(&mut self) -> &mut TermRun {
        if self.runs.is_empty() {
            self.runs.push(TermRun::default());
        }
        let last = self.runs.len() - 1;
        &mut self.runs[last]
    }

    /// Ends the chunk whose terms and positions were pushed since the last one ended.
    pub(crate) fn end_chunk(&mut self) {
        let run = self.last();
        run.ends.push(run.terms.len());
    }

    /// Adds a chunk: its terms and their positions, in order.
    #[cfg(test)]
    pub(crate) fn push(&mut self, terms: &[u32], positions: &[u32]) {
        let run = self.last();
        run.terms.extend_from_slice(terms);
        run.positions.extend_from_slice(positions);
        self.end_chunk();
    }

    /// Puts the chunks of `next` after these, its term numbers `n` made `remap[n]` (the
    /// numbers of the vocabulary they now belong to: [`Vocabulary::absorb`]).
    pub(crate) fn append(&mut self, next: ChunkTerms, remap: &[u32]) {
        for mut run in next.runs {
            for t in &mut run.terms {
                *t = remap[*t as usize];
            }
            self.runs.push(run);
        }
    }

    /// Each chunk's terms, in chunk order.
    pub(crate) fn terms(&self) -> impl Iterator<Item = &[u32]> + Clone {
        self.chunks().map(|(terms, _)| terms)
    }

    /// Each chunk's terms and their positions, in chunk order.
    pub(crate) fn chunks(&self) -> impl Iterator<Item = (&[u32], &[u32])> + Clone {
        self.runs.iter().flat_map(TermRun::chunks)
    }
}

impl PageFields {
    /// Analyzes `page`'s fields, numbering their terms in `vocabulary`.
    pub(crate) fn new(analyzer: &Analyzer, page: &Page, vocabulary: &mut Vocabulary) -> PageFields {
        let (mut head, mut head_at, mut at) = (Vec::new(), Vec::new(), 0u32);
        let mut field = |text: &str, terms: &mut Vec<u32>, pos: &mut Vec<u32>, at: &mut u32| {
            analyzer.terms_at_recording(text, at, terms, pos, vocabulary);
            *at = at.saturating_add(FIELD_GAP);
        };
        for f in head_fields(page) {
            field(f, &mut head, &mut head_at, &mut at);
        }
        let (mut tail, mut tail_at, mut tail_end) = (Vec::new(), Vec::new(), 0u32);
        for t in &page.tags {
            field(t, &mut tail, &mut tail_at, &mut tail_end);
        }
        debug_assert_eq!(
            at,
            text_position(page),
            "text_position disagrees with the fields"
        );
        PageFields {
            head,
            head_at,
            text_at: at,
            tail,
            tail_at,
        }
    }

    /// Adds to `table` a chunk of the page with text `text`: the terms it is indexed under,
    /// with their positions.
    pub(crate) fn chunk_terms(
        &self,
        analyzer: &Analyzer,
        text: &str,
        vocabulary: &mut Vocabulary,
        table: &mut ChunkTerms,
    ) {
        let run = table.last();
        let (terms, positions) = (&mut run.terms, &mut run.positions);
        terms.extend_from_slice(&self.head);
        positions.extend_from_slice(&self.head_at);
        let mut at = self.text_at;
        analyzer.terms_at_recording(text, &mut at, terms, positions, vocabulary);
        let tail_from = at.saturating_add(FIELD_GAP);
        terms.extend_from_slice(&self.tail);
        positions.extend(self.tail_at.iter().map(|p| p.saturating_add(tail_from)));
        table.end_chunk();
    }
}

impl Bm25Scorer {
    /// Precomputes, for `params`, each chunk's length normalization in `index`. Each posting's
    /// impact `idf · tf · (k1 + 1) / (tf + norm)` is computed for a term the first time a
    /// query reads it, and kept, so that queries only add numbers (the approach bm25s calls
    /// eager scoring) while making a scorer, at every load and write, costs a pass over the
    /// chunks rather than the postings (and a 32-byte slot a term). Costs 4 bytes per posting
    /// of the terms read; nothing in the blob.
    pub fn new(index: &LexicalIndex, params: Bm25Params) -> Bm25Scorer {
        let lengths = index.lengths();
        let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
        Bm25Scorer::with_norms(index, params, total, lengths.len(), None)
    }

    /// A scorer for `index` as one shard of a wiki of `chunks` chunks holding `total` terms,
    /// in which each of `index`'s terms is in `dfs[t]` chunks: its scores are those an index
    /// of the whole wiki gives the same chunks, bit for bit (the same lengths, averages and
    /// frequencies go into the same arithmetic).
    pub(crate) fn for_shard(
        index: &LexicalIndex,
        params: Bm25Params,
        (chunks, total): (usize, u64),
        dfs: Vec<u32>,
    ) -> Bm25Scorer {
        debug_assert_eq!(dfs.len(), index.term_count());
        Bm25Scorer::with_norms(index, params, total, chunks, Some((chunks, dfs)))
    }

    fn with_norms(
        index: &LexicalIndex,
        params: Bm25Params,
        total: u64,
        chunks: usize,
        wiki: Option<(usize, Vec<u32>)>,
    ) -> Bm25Scorer {
        let avgdl = if chunks == 0 {
            1.0
        } else {
            (total as f64 / chunks as f64).max(1e-9)
        };
        let (k1, b) = (f64::from(params.k1), f64::from(params.b));
        let norms: Vec<f32> = (index.lengths().iter())
            .map(|&l| (k1 * (1.0 - b + b * f64::from(l) / avgdl)) as f32)
            .collect();
        Bm25Scorer {
            params,
            norms,
            terms: std::iter::repeat_with(OnceLock::new)
                .take(index.term_count())
                .collect(),
            wiki,
        }
    }
}

/// The inverse document frequency of a term in `df` of `index`'s chunks.
pub(crate) fn idf(index: &LexicalIndex, df: usize) -> f32 {
    idf_in(index.chunk_count(), df)
}

/// The inverse document frequency of a term in `df` of `chunks` chunks.
fn idf_in(chunks: usize, df: usize) -> f32 {
    let n = chunks as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// One term's BM25 score in one chunk: `idf · tf · (k1 + 1) / (tf + norm)`, where `norm` is
/// the chunk's `k1 · (1 - b + b · |d| / avgdl)`.
fn impact(params: Bm25Params, idf: f32, tf: f32, norm: f32) -> f32 {
    idf * tf * (params.k1 + 1.0) / (tf + norm)
}

/// BM25 with the length normalization of one index precomputed, and each term's impacts
/// once a query has read the term.
#[derive(Debug, Clone)]
pub struct Bm25Scorer {
    params: Bm25Params,
    norms: Vec<f32>,
    /// Per term, made when a query first reads it.
    terms: Vec<OnceLock<Impacts>>,
    /// For a shard of a wiki ([`Bm25Scorer::for_shard`]): the wiki's chunk count and, per
    /// term of this index, the wiki's document frequency.
    wiki: Option<(usize, Vec<u32>)>,
}

/// One term's BM25 score in each chunk that holds it.
#[derive(Debug, Clone)]
struct Impacts {
    /// Per posting (parallel to the term's postings).
    each: Box<[f32]>,
    /// The largest: what the term can add to any chunk's score at most.
    most: f32,
}

impl Bm25Scorer {
    /// Term `t`'s impacts in `index` (the index this scorer was made for), made on first use.
    fn impacts(&self, index: &LexicalIndex, t: usize) -> &Impacts {
        self.terms[t].get_or_init(|| {
            let (chunks, tfs) = index.postings_of(t);
            if chunks.is_empty() {
                // A ranged index's terms whose lists are not loaded: no logarithm for them.
                return Impacts {
                    each: Box::default(),
                    most: 0.0,
                };
            }
            let (_, idf) = self.df_idf(index, t);
            let each: Box<[f32]> = (chunks.iter().zip(tfs))
                .map(|(&c, &tf)| impact(self.params, idf, tf as f32, self.norms[c as usize]))
                .collect();
            let most = each.iter().copied().fold(0f32, f32::max);
            Impacts { each, most }
        })
    }

    /// Term `t`'s document frequency and idf: in `index`, or for a shard of a wiki
    /// ([`Bm25Scorer::for_shard`]) in the wiki.
    fn df_idf(&self, index: &LexicalIndex, t: usize) -> (usize, f32) {
        match &self.wiki {
            Some((n, dfs)) => (dfs[t] as usize, idf_in(*n, dfs[t] as usize)),
            None => {
                let df = index.postings_of(t).0.len();
                (df, idf(index, df))
            }
        }
    }

    /// The `n` best chunks for the query `terms` (dictionary positions, as from
    /// [`LexicalIndex::lookup`], each with its weight) among those `mask` allows (`None`: all),
    /// by score descending then chunk index ascending. With
    /// `groups` (chunk → page, and the number of pages), only each page's best chunk competes,
    /// so `n` candidates are `n` different pages. From [`PRUNE_LEXICAL_FROM`] chunks on, the
    /// chunks that cannot make the best `n` are skipped ([`Bm25Scorer::search_pruned`]); the
    /// answer is the same.
    // Kept out of line: inlined into `Index::ranking` it loses registers to the caller
    // (measured: +7% instructions per query).
    #[inline(never)]
    pub(crate) fn search(
        &self,
        index: &LexicalIndex,
        terms: &[(usize, f32)],
        mask: Option<Mask<'_>>,
        groups: Option<(&[u32], usize)>,
        n: usize,
    ) -> Vec<(u32, f32)> {
        if index.chunk_count() >= PRUNE_LEXICAL_FROM {
            self.search_pruned(index, terms, mask, groups, n)
        } else {
            self.search_every(index, terms, mask, groups, n)
        }
    }

    /// [`Bm25Scorer::search`] by scoring every posting of the query's terms, a term at a time
    /// into one score per chunk, then keeping the best: the fastest way while the index is
    /// small enough for those scores to stay in cache.
    fn search_every(
        &self,
        index: &LexicalIndex,
        found: &[(usize, f32)],
        mask: Option<Mask<'_>>,
        groups: Option<(&[u32], usize)>,
        n: usize,
    ) -> Vec<(u32, f32)> {
        let total: usize = found
            .iter()
            .map(|&(t, _)| index.postings_of(t).0.len())
            .sum();
        let n_groups = groups.map_or(0, |(_, n)| n);
        with_scratch(index.chunk_count(), n_groups, total, |sc| {
            let Scratch {
                acc,
                best,
                touched,
                seen,
            } = sc;
            // Every posting may add a new chunk; whether it does is a coin flip the branch
            // predictor loses, so the candidate is always written and the length advanced by
            // the comparison instead.
            let mut len = 0usize;
            for &(t, weight) in found {
                let at = index.posting_range(t);
                let postings =
                    (index.posting_chunks(at).iter()).zip(&self.impacts(index, t).each[..]);
                for (&c, &impact) in postings {
                    let ci = c as usize;
                    if mask.is_some_and(|m| !m[ci]) {
                        continue;
                    }
                    touched[len] = c;
                    len += usize::from(acc[ci] == 0.0);
                    acc[ci] += weight * impact;
                }
            }
            // Making a chunk's key resets its score.
            let mut key = |c: u32| chunk_key(std::mem::replace(&mut acc[c as usize], 0.0), c);
            let keys = match groups {
                None => top_keys(touched[..len].iter().map(|&c| key(c)), n),
                Some((groups, _)) => {
                    let mut n_seen = 0;
                    for &c in &touched[..len] {
                        let k = key(c);
                        let g = groups[c as usize] as usize;
                        seen[n_seen] = g as u32;
                        n_seen += usize::from(best[g] == 0);
                        best[g] = best[g].max(k);
                    }
                    top_keys(
                        seen[..n_seen]
                            .iter()
                            .map(|&g| std::mem::replace(&mut best[g as usize], 0)),
                        n,
                    )
                }
            };
            keys.into_iter().map(from_key).collect()
        })
    }

    /// [`Bm25Scorer::search`] skipping the chunks that cannot make the best `n`
    /// ([`prune::search`]): each term is a unit that adds at most its weight times its
    /// largest impact. A chunk that may enter is scored as [`Bm25Scorer::search_every`]
    /// scores it (the same products, summed in the query's order), so both give the same
    /// chunks with the same scores, bit for bit.
    fn search_pruned(
        &self,
        index: &LexicalIndex,
        terms: &[(usize, f32)],
        mask: Option<Mask<'_>>,
        groups: Option<(&[u32], usize)>,
        n: usize,
    ) -> Vec<(u32, f32)> {
        let ranges: Vec<_> = terms.iter().map(|&(t, _)| index.posting_range(t)).collect();
        let query = Terms {
            impacts: (terms.iter())
                .map(|&(t, _)| &self.impacts(index, t).each[..])
                .collect(),
            weights: terms.iter().map(|&(_, w)| w).collect(),
        };
        let units = ranges
            .into_iter()
            .map(|at| vec![Cursor::new(index.posting_chunks(at))])
            .collect();
        let bounds: Vec<f64> = terms
            .iter()
            .map(|&(t, w)| f64::from(w * self.impacts(index, t).most))
            .collect();
        prune::search(
            &query,
            units,
            &bounds,
            |c| mask.is_none_or(|m| m[c as usize]),
            |c| groups.map_or(c, |(g, _)| g[c as usize]),
            n,
        )
        .into_iter()
        .map(from_key)
        .collect()
    }

    /// Each query term's contribution to chunk `c`'s score (terms absent from it included
    /// with tf 0), for explanations.
    pub fn explain(&self, index: &LexicalIndex, terms: &[(&str, f32)], c: u32) -> Vec<TermScore> {
        let terms: Vec<Explained<'_>> = terms
            .iter()
            .map(|&(term, weight)| Explained {
                term,
                at: index.lookup(term),
                weight,
                typo: None,
            })
            .collect();
        self.explain_terms(index, &terms, c)
    }

    /// Each entry's contribution to chunk `c`'s score (tf 0 where the chunk lacks its term).
    pub(crate) fn explain_terms(
        &self,
        index: &LexicalIndex,
        terms: &[Explained<'_>],
        c: u32,
    ) -> Vec<TermScore> {
        terms
            .iter()
            .map(|e| {
                let (tf, df, idf) = match e.at {
                    Some(t) => {
                        let (chunks, tfs) = index.postings_of(t);
                        let tf = chunks.binary_search(&c).map_or(0, |i| tfs[i]);
                        let (df, idf) = self.df_idf(index, t);
                        (tf, df, idf)
                    }
                    None => (0, 0, 0.0),
                };
                let tff = tf as f32;
                let score = if tf == 0 {
                    0.0
                } else {
                    e.weight * impact(self.params, idf, tff, self.norms[c as usize])
                };
                let matched = e.typo.and(e.at).map(|t| index.term(t).to_string());
                TermScore {
                    term: e.term.to_string(),
                    weight: e.weight,
                    tf,
                    df: u32::try_from(df).unwrap_or(u32::MAX),
                    idf,
                    score,
                    edits: if matched.is_some() {
                        e.typo.map_or(0, u32::from)
                    } else {
                        0
                    },
                    matched,
                }
            })
            .collect()
    }
}

/// Chunk `c` with `score` as one integer that orders as the lane ranks: scores are positive,
/// so their bits order like their values; then the inverted index, so the lower chunk wins a
/// tie.
fn chunk_key(score: f32, c: u32) -> u64 {
    (u64::from(score.to_bits()) << 32) | u64::from(!c)
}

/// The chunk and score of a [`chunk_key`].
fn from_key(key: u64) -> (u32, f32) {
    (!(key as u32), f32::from_bits((key >> 32) as u32))
}

/// A lexical query as [`prune::search`] scores it: per term (a unit of one list), its
/// postings' impacts and its weight.
struct Terms<'a> {
    impacts: Vec<&'a [f32]>,
    weights: Vec<f32>,
}

impl prune::Scored for Terms<'_> {
    type Key = u64;

    fn parts(&self, u: usize, _: usize) -> Parts<'_> {
        Parts::Each(self.impacts[u], self.weights[u])
    }

    fn part(&self, u: usize, lists: &mut [Cursor<'_>], c: u32, _: f64) -> f32 {
        let list = &mut lists[0];
        if list.seek(c) {
            self.weights[u] * self.impacts[u][list.at]
        } else {
            0.0
        }
    }

    /// The score as the term-at-a-time sum makes it (each term's part added in the query's
    /// order), then the chunk index (lower first); always made whole.
    fn key(&self, units: &mut [Vec<Cursor<'_>>], c: u32, _: Option<u64>) -> Option<u64> {
        let score = units.iter_mut().enumerate().fold(0.0f32, |s, (u, lists)| {
            s + self.part(u, lists, c, f64::NEG_INFINITY)
        });
        Some(chunk_key(score, c))
    }

    fn reach(&self, key: u64) -> f64 {
        f64::from(from_key(key).1)
    }
}

/// A term to explain: the query term, the dictionary term scored for it and its weight.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Explained<'a> {
    /// The analyzed query term.
    pub term: &'a str,
    /// The dictionary position scored: the term's own, or a typo match's (`None`: nothing).
    pub at: Option<usize>,
    /// The weight the lane gave it.
    pub weight: f32,
    /// For a typo match, its edits.
    pub typo: Option<u8>,
}

/// Per-thread buffers reused across queries, so a query allocates nothing proportional to
/// the index. `acc` and `best` are all zero between uses (every entry set is reset);
/// `touched` and `seen` are only read where they were written in the same query.
#[derive(Default)]
struct Scratch {
    acc: Vec<f32>,
    best: Vec<u64>,
    touched: Vec<u32>,
    seen: Vec<u32>,
}

/// Runs `f` with this thread's scratch buffers grown to the sizes given.
fn with_scratch<R>(
    chunks: usize,
    groups: usize,
    postings: usize,
    f: impl FnOnce(&mut Scratch) -> R,
) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    }
    with_reused(&SCRATCH, |sc| {
        grow(&mut sc.acc, chunks);
        grow(&mut sc.best, groups);
        grow(&mut sc.touched, postings);
        grow(&mut sc.seen, postings);
        let out = f(sc);
        debug_assert!(sc.acc.iter().all(|&x| x == 0.0), "score buffer left dirty");
        debug_assert!(sc.best.iter().all(|&x| x == 0), "group buffer left dirty");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postings::test_index as idx;

    /// Query terms as the lane takes them: dictionary positions with weights.
    fn at(i: &LexicalIndex, q: &[(&str, f32)]) -> Vec<(usize, f32)> {
        q.iter()
            .filter_map(|&(t, w)| i.lookup(t).map(|t| (t, w)))
            .collect()
    }

    #[test]
    fn rarer_terms_score_higher() {
        let i = idx(&["common rare", "common", "common", "common"]);
        let s = Bm25Scorer::new(&i, Bm25Params::default());
        let q = [("rare", 1.0), ("common", 1.0)];
        let hits = s.search(&i, &at(&i, &q), None, None, 10);
        assert_eq!(hits[0].0, 0);
        let ex = s.explain(&i, &q, 0);
        assert!(ex[0].idf > ex[1].idf);
        assert!((ex.iter().map(|e| e.score).sum::<f32>() - hits[0].1).abs() < 1e-5);
    }

    #[test]
    fn a_terms_impacts_are_made_when_first_read_and_kept() {
        let i = idx(&["a b b", "b c", "a a a c d", "d"]);
        let p = Bm25Params::default();
        let s = Bm25Scorer::new(&i, p);
        assert!(s.terms.iter().all(|t| t.get().is_none()));
        for t in 0..i.term_count() {
            let (chunks, tfs) = i.postings_of(t);
            let idf = idf(&i, chunks.len());
            let each: Vec<f32> = (chunks.iter().zip(tfs))
                .map(|(&c, &tf)| impact(p, idf, tf as f32, s.norms[c as usize]))
                .collect();
            let made = s.impacts(&i, t);
            assert_eq!(&made.each[..], &each[..]);
            assert_eq!(made.most, each.iter().copied().fold(0f32, f32::max));
            assert!(std::ptr::eq(made, s.impacts(&i, t)));
        }
    }

    #[test]
    fn mask_excludes_chunks() {
        let i = idx(&["x", "x"]);
        let s = Bm25Scorer::new(&i, Bm25Params::default());
        let hits = s.search(&i, &at(&i, &[("x", 1.0)]), Some(&[false, true]), None, 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn groups_keep_only_the_best_chunk_of_each() {
        let i = idx(&["x x", "x", "x x x", "y"]);
        let s = Bm25Scorer::new(&i, Bm25Params::default());
        let hits = s.search(
            &i,
            &at(&i, &[("x", 1.0)]),
            None,
            Some((&[0, 0, 1, 1], 2)),
            10,
        );
        let chunks: Vec<u32> = hits.iter().map(|h| h.0).collect();
        assert_eq!(chunks.len(), 2);
        assert!(chunks.contains(&2) && (chunks.contains(&0) || chunks.contains(&1)));
    }

    proptest::proptest! {
        /// Skipping chunks that cannot make the best `n` finds the chunks and scores that
        /// scoring every posting finds, bit for bit: with weights, repeated terms, a mask and
        /// pages of several chunks, together or scattered.
        #[test]
        fn pruned_search_finds_what_scoring_every_posting_finds(
            docs in proptest::collection::vec(proptest::collection::vec(0u8..12, 1..30), 1..120),
            query in proptest::collection::vec((0u8..14, 1u8..4), 1..8),
            hidden in proptest::collection::vec(proptest::bool::ANY, 120),
            pages in proptest::collection::vec(0u32..40, 120),
            n in 0usize..15,
        ) {
            // Word `w`'s frequency falls with `w`, so bounds differ and lists are skipped.
            let texts: Vec<String> = docs
                .iter()
                .map(|d| d.iter().map(|&w| format!("w{}", w * w / 12)).collect::<Vec<_>>().join(" "))
                .collect();
            let i = idx(&texts.iter().map(String::as_str).collect::<Vec<_>>());
            let s = Bm25Scorer::new(&i, Bm25Params::default());
            let terms: Vec<(usize, f32)> = query
                .iter()
                .filter_map(|&(w, weight)| {
                    i.lookup(&format!("w{w}")).map(|t| (t, f32::from(weight) * 0.7))
                })
                .collect();
            let mask: Vec<bool> = hidden[..texts.len()].iter().map(|h| !h).collect();
            let (groupings, n_groups) = prune::test_groupings(&pages[..texts.len()]);
            for mask in [None, Some(&mask[..])] {
                for group in &groupings {
                    let groups = group.as_ref().map(|g| (&g[..], n_groups));
                    let every = s.search_every(&i, &terms, mask, groups, n);
                    let pruned = s.search_pruned(&i, &terms, mask, groups, n);
                    let bits = |v: &[(u32, f32)]| -> Vec<(u32, u32)> {
                        v.iter().map(|&(c, x)| (c, x.to_bits())).collect()
                    };
                    proptest::prop_assert_eq!(bits(&every), bits(&pruned));
                }
            }
        }
    }

    #[test]
    fn params_are_range_checked() {
        assert!(Bm25Params { k1: -1.0, b: 0.5 }.validate().is_err());
        assert!(Bm25Params { k1: 1.0, b: 1.5 }.validate().is_err());
        assert!(Bm25Params {
            k1: f32::NAN,
            b: 0.5
        }
        .validate()
        .is_err());
    }
}
