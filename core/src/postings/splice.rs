//! An index made from another by taking chunks out and putting chunks in, without analyzing
//! the chunks it keeps again ([`LexicalIndex::spliced`]): what a write of one page does to
//! the postings of every other.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::ops::Range;

use super::words::{WordList, WordTable};
use super::LexicalIndex;
use crate::text::analyze::BuildHash;

/// Where a run of postings of a [`LexicalIndex::spliced`] index comes from: their places in
/// the posting lists of the index it kept chunks of, or of the index of the chunks it added
/// (with the term of that index they are postings of); or that a term's postings end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Kept { term: usize, at: Range<usize> },
    Added { term: usize, at: Range<usize> },
    TermEnd,
}

/// What [`LexicalIndex::spliced`] puts together.
pub(crate) struct Splice<'a> {
    /// The index before.
    pub(crate) kept: &'a LexicalIndex,
    /// Each of `kept`'s chunks' number after, or `u32::MAX` for a chunk taken out; the chunks
    /// kept keep their order.
    pub(crate) kept_chunks: &'a [u32],
    /// The index of the chunks put in ([`LexicalIndex::build_numbered`] over them alone).
    pub(crate) added: &'a LexicalIndex,
    /// Each of `added`'s chunks' number after, ascending.
    pub(crate) added_chunks: &'a [u32],
    /// The number of chunks after.
    pub(crate) chunks: usize,
    /// Surface words of `kept` that no text after holds.
    pub(crate) gone: &'a HashSet<String, BuildHash>,
    /// The normalized words of the added text, with their terms.
    pub(crate) words: Vec<(String, String)>,
}

impl LexicalIndex {
    /// The index [`LexicalIndex::build_numbered`] gives for the chunks `splice` describes, made
    /// from the postings of the two indexes: each term's lists merged by chunk number (a list
    /// left empty drops its term), the chunks' lengths carried, the surface words of both
    /// kept unless gone or their term is. `each` is called with the sources of the postings,
    /// in posting order, and with [`Source::TermEnd`] after each term's (the positions record
    /// where each term starts from it). Linear in the postings, which are copied a run at a
    /// time (the chunks a run of kept chunks holds are renumbered by one addition); nothing is
    /// analyzed.
    pub(crate) fn spliced(splice: Splice<'_>, mut each: impl FnMut(Source)) -> LexicalIndex {
        let Splice {
            kept,
            kept_chunks,
            added,
            added_chunks,
            chunks,
            gone,
            words,
        } = splice;
        // At most every posting and term of both (the lists grown as they came took a tenth
        // of a write in copies).
        let (postings, terms) = (
            kept.chunks.len() + added.chunks.len(),
            kept.terms.len() + added.terms.len(),
        );
        let mut out = LexicalIndex {
            lengths: vec![0; chunks],
            terms: WordList::with_capacity(terms, kept.terms.bytes() + added.terms.bytes()),
            offsets: Vec::with_capacity(terms + 1),
            chunks: Vec::with_capacity(postings),
            tfs: Vec::with_capacity(postings),
            ..LexicalIndex::default()
        };
        out.offsets.push(0);
        for (&to, &length) in kept_chunks.iter().zip(&kept.lengths) {
            if let Some(slot) = out.lengths.get_mut(to as usize) {
                *slot = length;
            }
        }
        for (&to, &length) in added_chunks.iter().zip(&added.lengths) {
            out.lengths[to as usize] = length;
        }
        let runs = runs(kept_chunks);
        // Per term of `kept`: its position after (`u32::MAX`: no chunk holds it any more).
        let mut kept_at = vec![u32::MAX; kept.terms.len()];
        // The terms after, as they are found: those of a run of `kept`'s terms taken in turn are
        // copied together when the run ends.
        let mut kept_run = 0..0;
        let mut n_terms = 0u32;
        // The positions after of the terms only `added` has.
        let mut new_terms = Vec::new();
        let (mut i, mut k) = (0usize, 0usize);
        loop {
            let order = match (kept.terms.get(i), added.terms.get(k)) {
                (Some(a), Some(b)) => a.cmp(b),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => break,
            };
            let from_kept = (order != Ordering::Greater).then(|| {
                i += 1;
                i - 1
            });
            let from_added = (order != Ordering::Less).then(|| {
                k += 1;
                k - 1
            });
            let start = out.chunks.len();
            let mut emit = Emit {
                out: &mut out,
                kept,
                added,
                added_chunks,
                terms: (from_kept.unwrap_or(0), from_added.unwrap_or(0)),
                each: &mut each,
            };
            let mut pending = from_added.map_or(0..0, |t| added.posting_range(t));
            let kept_range = from_kept.map_or(0..0, |t| kept.posting_range(t));
            for (mut j, end, shift) in segments(&kept.chunks, kept_range, &runs) {
                // The added postings numbered before this segment's last go in where they
                // fall (chunk numbers after are all different).
                let last = kept.chunks[end - 1].wrapping_add(shift);
                while let Some(a) = pending.clone().next() {
                    let x = added_chunks[added.chunks[a] as usize];
                    if x > last {
                        break;
                    }
                    let k = j + kept.chunks[j..end].partition_point(|&c| c.wrapping_add(shift) < x);
                    emit.kept(j..k, shift);
                    emit.added(a..a + 1);
                    pending.start += 1;
                    j = k;
                }
                emit.kept(j..end, shift);
            }
            emit.added(pending);
            if out.chunks.len() == start {
                continue;
            }
            each(Source::TermEnd);
            match (from_kept, from_added) {
                (Some(t), _) => {
                    kept_at[t] = n_terms;
                    if kept_run.end != t {
                        out.terms.extend_from(&kept.terms, kept_run);
                        kept_run = t..t;
                    }
                    kept_run.end = t + 1;
                }
                (None, Some(t)) => {
                    new_terms.push(n_terms);
                    out.terms
                        .extend_from(&kept.terms, std::mem::replace(&mut kept_run, 0..0));
                    out.terms.push(&added.terms[t]);
                }
                (None, None) => unreachable!("every round takes a term"),
            }
            n_terms = n_terms.saturating_add(1);
            out.offsets
                .push(u32::try_from(out.chunks.len()).unwrap_or(u32::MAX));
        }
        out.terms.extend_from(&kept.terms, kept_run);
        // The surface words: `kept`'s (sorted) and the new ones (sorted here) merged.
        let mut new: Vec<(&str, u32)> = words
            .iter()
            .filter_map(|(word, term)| {
                let at = out.terms.binary_search(term).ok()?;
                Some((word.as_str(), u32::try_from(at).unwrap_or(u32::MAX)))
            })
            .collect();
        crate::data::sort::sort_unstable(&mut new);
        new.dedup_by(|a, b| a.0 == b.0);
        // Per surface word of `kept`: its position after (`u32::MAX`: gone), and the positions
        // of the words that are new.
        let mut word_at = vec![u32::MAX; kept.surface_words.len()];
        let mut new_at = Vec::new();
        let old = (kept
            .surface_words
            .iter()
            .zip(&kept.surface_terms)
            .enumerate())
        .filter_map(|(i, (w, &t))| {
            let at = kept_at[t as usize];
            (at != u32::MAX && !gone.contains(w)).then_some((w, at, Some(i)))
        });
        let new = new.into_iter().map(|(w, t)| (w, t, None));
        let (mut old, mut new) = (old.peekable(), new.peekable());
        loop {
            let next = match (old.peek(), new.peek()) {
                (Some(a), Some(b)) => match a.0.cmp(b.0) {
                    Ordering::Less => old.next(),
                    Ordering::Greater => new.next(),
                    Ordering::Equal => {
                        // The same word has the same term in any text.
                        new.next();
                        old.next()
                    }
                },
                (Some(_), None) => old.next(),
                (None, _) => new.next(),
            };
            let Some((word, term, from)) = next else {
                break;
            };
            let at = u32::try_from(out.surface_words.len()).unwrap_or(u32::MAX);
            match from {
                Some(i) => word_at[i] = at,
                None => new_at.push(at),
            }
            out.surface_words.push(word);
            out.surface_terms.push(term);
        }
        // The look-up tables: `kept`'s while every word is kept and none added (each is where it
        // was), moved otherwise.
        let table = |old: &WordTable, at: &[u32], added: &[u32], words: &WordList| {
            if added.is_empty() && !at.contains(&u32::MAX) {
                old.clone()
            } else {
                old.moved(at, added, words)
            }
        };
        out.lookup = table(&kept.lookup, &kept_at, &new_terms, &out.terms);
        out.surface = table(&kept.surface, &word_at, &new_at, &out.surface_words);
        out
    }
}

/// Runs of kept chunks numbered consecutively before and after a splice: `(first, end, to)`
/// says chunks `first..end` become `to..to + (end - first)`. A write of one page makes two.
fn runs(kept_chunks: &[u32]) -> Vec<(u32, u32, u32)> {
    let mut runs: Vec<(u32, u32, u32)> = Vec::new();
    for (c, &to) in (0u32..).zip(kept_chunks) {
        if to == u32::MAX {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.1 == c && run.2.wrapping_add(c - run.0) == to => run.1 = c + 1,
            _ => runs.push((c, c + 1, to)),
        }
    }
    runs
}

/// The postings `range` of `chunks` (ascending) that land in `runs`, as segments
/// `(start, end, shift)`: postings `start..end`, their chunks renumbered by adding `shift`
/// (wrapping). Postings of chunks taken out fall between runs and are left out.
fn segments<'a>(
    chunks: &'a [u32],
    range: Range<usize>,
    runs: &'a [(u32, u32, u32)],
) -> impl Iterator<Item = (usize, usize, u32)> + 'a {
    let mut j = range.start;
    std::iter::from_fn(move || loop {
        let c = *chunks.get(j).filter(|_| j < range.end)?;
        let &(first, end, to) = runs.get(runs.partition_point(|r| r.1 <= c))?;
        if c < first {
            j += chunks[j..range.end].partition_point(|&x| x < first);
            continue;
        }
        let k = j + chunks[j..range.end].partition_point(|&x| x < end);
        let segment = (j, k, to.wrapping_sub(first));
        j = k;
        return Some(segment);
    })
}

/// Writes postings into a [`LexicalIndex::spliced`] index, telling `each` where they came from.
struct Emit<'a, F> {
    out: &'a mut LexicalIndex,
    kept: &'a LexicalIndex,
    added: &'a LexicalIndex,
    added_chunks: &'a [u32],
    /// The terms of `kept` and of `added` the postings are of.
    terms: (usize, usize),
    each: &'a mut F,
}

impl<F: FnMut(Source)> Emit<'_, F> {
    /// Kept postings `at`, their chunks renumbered by adding `shift`.
    fn kept(&mut self, at: Range<usize>, shift: u32) {
        if at.is_empty() {
            return;
        }
        let chunks = &self.kept.chunks[at.clone()];
        (self.out.chunks).extend(chunks.iter().map(|&c| c.wrapping_add(shift)));
        self.out.tfs.extend_from_slice(&self.kept.tfs[at.clone()]);
        let term = self.terms.0;
        (self.each)(Source::Kept { term, at });
    }

    /// Added postings `at`, their chunks numbered as `added_chunks` says.
    fn added(&mut self, at: Range<usize>) {
        if at.is_empty() {
            return;
        }
        let chunks = &self.added.chunks[at.clone()];
        (self.out.chunks).extend(chunks.iter().map(|&c| self.added_chunks[c as usize]));
        self.out.tfs.extend_from_slice(&self.added.tfs[at.clone()]);
        let term = self.terms.1;
        (self.each)(Source::Added { term, at });
    }
}
