//! An index made from another by taking chunks out and putting chunks in, without analyzing
//! the chunks it keeps again ([`LexicalIndex::spliced`]): what a write of one page does to
//! the postings of every other.

use std::cmp::Ordering;
use std::collections::HashSet;

use super::LexicalIndex;
use crate::text::analyze::BuildHash;

/// Where a posting of a [`LexicalIndex::spliced`] index comes from: its place in the posting
/// lists of the index it kept chunks of, or of the index of the chunks it added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Kept(usize),
    Added(usize),
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
    /// kept unless gone or their term is. `each` is called with the source of every posting,
    /// in posting order. Linear in the postings; nothing is analyzed.
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
            terms: Vec::with_capacity(terms),
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
        // Per term of `kept`: its position after (`u32::MAX`: no chunk holds it any more).
        let mut kept_at = vec![u32::MAX; kept.terms.len()];
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
            let mut left = from_kept
                .map_or(0..0, |t| kept.posting_range(t))
                .filter_map(|j| {
                    let to = kept_chunks[kept.chunks[j] as usize];
                    (to != u32::MAX).then_some((to, kept.tfs[j], Source::Kept(j)))
                })
                .peekable();
            let mut right = from_added
                .map_or(0..0, |t| added.posting_range(t))
                .map(|j| {
                    (
                        added_chunks[added.chunks[j] as usize],
                        added.tfs[j],
                        Source::Added(j),
                    )
                })
                .peekable();
            let start = out.chunks.len();
            loop {
                let next = match (left.peek(), right.peek()) {
                    (Some(a), Some(b)) if a.0 < b.0 => left.next(),
                    (Some(_), Some(_)) | (None, Some(_)) => right.next(),
                    (Some(_), None) => left.next(),
                    (None, None) => break,
                };
                let Some((chunk, tf, source)) = next else {
                    break;
                };
                out.chunks.push(chunk);
                out.tfs.push(tf);
                each(source);
            }
            if out.chunks.len() == start {
                continue;
            }
            let at = u32::try_from(out.terms.len()).unwrap_or(u32::MAX);
            if let Some(t) = from_kept {
                kept_at[t] = at;
            }
            let term = match (from_kept, from_added) {
                (Some(t), _) => &kept.terms[t],
                (None, Some(t)) => &added.terms[t],
                (None, None) => unreachable!("every round takes a term"),
            };
            out.terms.push(term.clone());
            out.offsets
                .push(u32::try_from(out.chunks.len()).unwrap_or(u32::MAX));
        }
        // The surface words: `kept`'s (sorted) and the new ones (sorted here) merged.
        let mut new: Vec<(String, u32)> = words
            .into_iter()
            .filter_map(|(word, term)| {
                let at = out.terms.binary_search(&term).ok()?;
                Some((word, u32::try_from(at).unwrap_or(u32::MAX)))
            })
            .collect();
        crate::data::sort::sort_unstable(&mut new);
        new.dedup_by(|a, b| a.0 == b.0);
        let old = (kept.surface_words.iter().zip(&kept.surface_terms)).filter_map(|(w, &t)| {
            let at = kept_at[t as usize];
            (at != u32::MAX && !gone.contains(w)).then(|| (w.clone(), at))
        });
        let (mut old, mut new) = (old.peekable(), new.into_iter().peekable());
        loop {
            let next = match (old.peek(), new.peek()) {
                (Some(a), Some(b)) => match a.0.cmp(&b.0) {
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
            let Some((word, term)) = next else {
                break;
            };
            out.surface_words.push(word);
            out.surface_terms.push(term);
        }
        out.index_terms();
        out
    }
}
