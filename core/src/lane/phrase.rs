//! Phrase matching: where each term occurs in each chunk, and which chunks hold a quoted phrase.
//!
//! A chunk's positions count every token of its analyzed text ([`crate::text::analyze::tokens`]: a
//! word, or a bigram of a CJK run), stopwords included, so the words of a phrase must occur at
//! the distances the phrase puts them: a stopword in a phrase stands for one token of any kind at
//! its place (`net of revenue` matches `net of revenue` and `net to revenue`, not `net revenue`),
//! as in Lucene with position increments kept. A quoted CJK run matches where its bigrams
//! follow each other. The fields a chunk is indexed under (key, title, summary, its text, each
//! tag) lie [`FIELD_GAP`] positions apart, so a phrase matches within one of them.
//!
//! Stored as one section beside the lexical postings, in their order: for each posting, the
//! term's positions in the chunk as unsigned LEB128 varints, the first as it is and each next
//! one as its distance from the one before (at least 1). Nothing else is stored: where each
//! term's lists start follows from the term frequencies, and is derived on load; where each of
//! a term's lists starts, the first time a search reads the term's positions.

use std::sync::OnceLock;

pub use super::lexical::FIELD_GAP;
use super::lexical::{ChunkTerms, LexicalIndex};
use super::Mask;
use crate::data::error::{Error, Result};
use crate::postings::{take_varint, Source};

/// The reason a search gives when its query quotes a phrase and the index has no positions:
/// the phrase's words were searched, not the phrase.
pub const NO_POSITIONS: &str = "this index has no term positions (built with `positions: false`): \
     phrases were searched as their words; build it again with positions to match them";

/// The positions of every posting of a [`LexicalIndex`] (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Positions {
    /// Varint lists, one per posting, in posting order.
    data: Vec<u8>,
    /// Where each term's first list starts in `data` (one more entry than terms); derived on
    /// load (and made by a build or a write), never stored.
    terms: Vec<u32>,
    /// Per term: where each of its lists starts in `data` (one more entry than its postings),
    /// made the first time its positions are read. A list start for every posting (4 bytes
    /// each, 200 MB at a million pages) was derived on every load and copied by every write;
    /// a search reads the positions of a few terms.
    lists: Vec<OnceLock<Box<[u32]>>>,
}

impl PartialEq for Positions {
    fn eq(&self, other: &Self) -> bool {
        // Where lists start is derived from `data`.
        self.data == other.data
    }
}

/// Calls `f(posting, value)` for each indexed token of `chunks` (their terms' numbers mapped
/// to `index`'s by `position`), in the order [`Positions`] stores the values of each list: a
/// token's position, or its distance from the term's position before it in the chunk. A
/// term's postings are in chunk order, the order the chunks come in, and a chunk's positions
/// ascend; the same position twice counts once.
fn each_value(
    index: &LexicalIndex,
    position: &[u32],
    chunks: &ChunkTerms,
    mut f: impl FnMut(usize, u32),
) {
    let n_terms = index.term_count();
    // Per term: its next posting, and the chunk and position it was last seen at.
    let mut next: Vec<usize> = (0..n_terms).map(|t| index.posting_range(t).start).collect();
    let mut last: Vec<(u32, u32)> = vec![(u32::MAX, 0); n_terms];
    for (c, (terms, positions)) in (0u32..).zip(chunks.chunks()) {
        for (&n, &p) in terms.iter().zip(positions) {
            let Some(&t) = position.get(n as usize).filter(|&&t| t != u32::MAX) else {
                continue;
            };
            let t = t as usize;
            let (seen_in, before) = last[t];
            let value = if seen_in == c {
                if p <= before {
                    continue;
                }
                p - before
            } else {
                next[t] += 1;
                p
            };
            last[t] = (c, p);
            f(next[t] - 1, value);
        }
    }
}

/// The bytes `v` takes as an unsigned LEB128 varint.
fn varint_len(v: u32) -> u32 {
    (32 - v.leading_zeros()).max(1).div_ceil(7)
}

/// Writes `v` as an unsigned LEB128 varint at `data[at..]`; the bytes it took.
fn put_varint_at(data: &mut [u8], at: usize, mut v: u32) -> u32 {
    let mut i = at;
    while v >= 0x80 {
        data[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    data[i] = v as u8;
    (i + 1 - at) as u32
}

/// Where a list starts in the section, as a [`Positions`] keeps it.
fn offset(at: usize) -> Result<u32> {
    u32::try_from(at).map_err(|_| Error::corrupt("positions: section larger than 4 GiB"))
}

/// Moves `*at` past one posting's list of `tf` positions, checking it.
fn skip_list(data: &[u8], at: &mut usize, tf: u32) -> Result<()> {
    let bad = |d: &str| Err(Error::corrupt(format!("positions: {d}")));
    let mut pos: u32 = 0;
    for i in 0..tf {
        let Some(v) = take_varint(data, at) else {
            return bad("a position list is cut short or malformed");
        };
        if i > 0 && v == 0 {
            return bad("a position repeats");
        }
        let Some(next) = pos.checked_add(v) else {
            return bad("a position overflows");
        };
        pos = next;
    }
    Ok(())
}

impl Positions {
    /// The positions of `index`'s postings, from the analyzed chunks it was built from (the
    /// same terms, in chunk order, each with its position), their term numbers mapped to the
    /// index's by `position` (what [`LexicalIndex::build_numbered`] returns). Same input,
    /// same bytes.
    ///
    /// Two passes over the chunks, each term's lists written in place: a term's postings are
    /// in chunk order, which is the order the chunks come in, and a chunk's positions ascend.
    /// The first pass sizes each posting's list, the second writes it where the sizes put it,
    /// so the memory is a number per term and per posting, not a triple per token to sort.
    pub(crate) fn build(index: &LexicalIndex, position: &[u32], chunks: &ChunkTerms) -> Positions {
        let n_postings = index.all_tfs().len();
        // Per posting: its list's length in bytes, then where it starts.
        let mut at = vec![0u32; n_postings + 1];
        each_value(index, position, chunks, |posting, v| {
            at[posting] += varint_len(v)
        });
        let mut total = 0u32;
        for slot in &mut at {
            let len = *slot;
            *slot = total;
            total += len;
        }
        let mut data = vec![0u8; total as usize];
        // Each posting's slot moves to the end of its list as the list is written.
        each_value(index, position, chunks, |posting, v| {
            at[posting] += put_varint_at(&mut data, at[posting] as usize, v);
        });
        // List `i` now ends where `i + 1` starts: each term's first list starts where the
        // list before it ends.
        let mut terms = Vec::with_capacity(index.term_count() + 1);
        terms.push(0);
        terms.extend((0..index.term_count()).map(|t| {
            let end = index.posting_range(t).end;
            end.checked_sub(1).map_or(0, |last| at[last])
        }));
        drop(at);
        let positions = Positions::of(data, terms);
        debug_assert!(positions.checked(index).is_ok());
        positions
    }

    /// The positions of `data` whose terms' first lists start at `terms`.
    fn of(data: Vec<u8>, terms: Vec<u32>) -> Positions {
        let lists = (1..terms.len()).map(|_| OnceLock::new()).collect();
        Positions { data, terms, lists }
    }

    /// Checks the lists against `index`'s term frequencies and where its terms start.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a list is cut short, a position repeats or overflows, a term
    /// starts elsewhere, or bytes are left over.
    pub(crate) fn checked(&self, index: &LexicalIndex) -> Result<()> {
        let tfs = index.all_tfs();
        let mut at = 0usize;
        for t in 0..index.term_count() {
            if self.terms.get(t) != Some(&offset(at)?) {
                return Err(Error::corrupt("positions: a term starts elsewhere"));
            }
            for p in index.posting_range(t) {
                skip_list(&self.data, &mut at, tfs[p])?;
            }
        }
        if at != self.data.len() || self.terms.last() != Some(&offset(at)?) {
            return Err(Error::corrupt(
                "positions: bytes left over after the last list",
            ));
        }
        Ok(())
    }

    /// The stored bytes of the lists of the terms `terms` (dictionary positions): one block of
    /// a blob ([`crate::blob`]).
    pub(crate) fn block(&self, terms: std::ops::Range<usize>) -> Vec<u8> {
        match (self.terms.get(terms.start), self.terms.get(terms.end)) {
            (Some(&s), Some(&e)) => self.data[s as usize..e as usize].to_vec(),
            _ => Vec::new(),
        }
    }

    /// Where each of term `t`'s lists starts in `data`, and where the last ends (`index` the
    /// index these are the positions of); made on first use. Empty for a term whose lists are
    /// not here (every list holds a position, so a term's lists take bytes).
    fn lists_of(&self, index: &LexicalIndex, t: usize) -> &[u32] {
        if self.terms.get(t) == self.terms.get(t + 1) {
            return &[];
        }
        self.lists.get(t).map_or(&[], |lists| {
            lists.get_or_init(|| {
                let tfs = index.all_tfs();
                let mut at = self.terms[t] as usize;
                let mut starts = Vec::with_capacity(index.posting_range(t).len() + 1);
                for p in index.posting_range(t) {
                    // `data` is at most 4 GiB (a load and a write refuse more).
                    starts.push(u32::try_from(at).unwrap_or(u32::MAX));
                    // Checked on load: a list cut short ends where the data does.
                    for _ in 0..tfs[p] {
                        if take_varint(&self.data, &mut at).is_none() {
                            at = self.data.len();
                        }
                    }
                }
                starts.push(u32::try_from(at).unwrap_or(u32::MAX));
                starts.into()
            })
        })
    }

    /// Where posting `p` of `index` (in posting order), one of term `t`'s or the one after its
    /// last, starts in `data`: where the term starts or ends, else from the term's lists.
    fn start_of(&self, index: &LexicalIndex, t: usize, p: usize) -> usize {
        let postings = index.posting_range(t);
        if p == postings.start {
            self.terms[t] as usize
        } else if p == postings.end {
            self.terms[t + 1] as usize
        } else {
            self.lists_of(index, t)[p - postings.start] as usize
        }
    }
}

/// Positions made from two others a run of postings at a time, in the order
/// [`LexicalIndex::spliced`] gives the runs ([`Source`]). Runs of the kept index's term that
/// follow each other are copied at once: a term whose postings are all kept is one copy, and
/// only a term whose postings the write changes has its lists' starts read.
pub(crate) struct Splicing<'a> {
    kept: (&'a Positions, &'a LexicalIndex),
    added: (&'a Positions, &'a LexicalIndex),
    data: Vec<u8>,
    terms: Vec<u32>,
    /// A term of `kept` and its postings not copied yet.
    pending: (usize, std::ops::Range<usize>),
}

impl<'a> Splicing<'a> {
    pub(crate) fn new(
        (kept, kept_index): (&'a Positions, &'a LexicalIndex),
        (added, added_index): (&'a Positions, &'a LexicalIndex),
    ) -> Splicing<'a> {
        let mut terms = Vec::with_capacity(kept.terms.len() + added.terms.len());
        terms.push(0);
        Splicing {
            kept: (kept, kept_index),
            added: (added, added_index),
            data: Vec::with_capacity(kept.data.len() + added.data.len()),
            terms,
            pending: (0, 0..0),
        }
    }

    /// Adds the lists of the postings `source` names, or ends a term.
    pub(crate) fn take(&mut self, source: Source) {
        match source {
            Source::Kept { term, at }
                if term == self.pending.0 && at.start == self.pending.1.end =>
            {
                self.pending.1.end = at.end;
            }
            Source::Kept { term, at } => {
                self.flush();
                self.pending = (term, at);
            }
            Source::Added { term, at } => {
                self.flush();
                Splicing::copy(&mut self.data, self.added, term, at);
            }
            Source::TermEnd => {
                self.flush();
                // Past 4 GiB, `finish` refuses the positions.
                let end = u32::try_from(self.data.len()).unwrap_or(u32::MAX);
                self.terms.push(end);
            }
        }
    }

    fn flush(&mut self) {
        let (term, at) = std::mem::replace(&mut self.pending, (0, 0..0));
        Splicing::copy(&mut self.data, self.kept, term, at);
    }

    fn copy(
        data: &mut Vec<u8>,
        (from, index): (&Positions, &LexicalIndex),
        term: usize,
        at: std::ops::Range<usize>,
    ) {
        if !at.is_empty() {
            let (s, e) = (
                from.start_of(index, term, at.start),
                from.start_of(index, term, at.end),
            );
            data.extend_from_slice(&from.data[s..e]);
        }
    }

    /// The positions made.
    ///
    /// # Errors
    /// [`Error::Encode`] when they take more than 4 GiB (a term's start would not fit, nor
    /// would a blob's section).
    pub(crate) fn finish(mut self) -> Result<Positions> {
        self.flush();
        if u32::try_from(self.data.len()).is_err() {
            return Err(Error::Encode {
                detail: "term positions larger than 4 GiB".into(),
            });
        }
        Ok(Positions::of(self.data, self.terms))
    }
}

impl Positions {
    /// The positions of `index` (made by [`LexicalIndex::from_parts`] with the same `firsts`)
    /// from the blocks at hand: block `i` holds the lists of terms `firsts[i]..firsts[i + 1]`,
    /// `None` when it is not loaded, and then its postings have no positions here (a search
    /// must load the blocks of every phrase term it matches). The blocks' lists are walked
    /// (and checked) on every core.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a block's lists disagree with the term frequencies.
    pub(crate) fn from_parts(
        index: &LexicalIndex,
        firsts: &[u32],
        blocks: &[Option<&[u8]>],
    ) -> Result<Positions> {
        let n = index.term_count();
        let tfs = index.all_tfs();
        // Where each term's lists start in its block.
        let of_block = |i: &usize| -> Result<Vec<u32>> {
            let terms = crate::postings::block_range(firsts, *i, n);
            let Some(bytes) = blocks[*i] else {
                return Ok(vec![0; terms.len()]);
            };
            let mut at = 0;
            let mut starts = Vec::with_capacity(terms.len());
            for t in terms {
                starts.push(offset(at)?);
                for p in index.posting_range(t) {
                    skip_list(bytes, &mut at, tfs[p])?;
                }
            }
            if at != bytes.len() {
                return Err(Error::corrupt("positions: bytes left over in a block"));
            }
            Ok(starts)
        };
        let which: Vec<usize> = (0..blocks.len()).collect();
        // A thread for every 64k postings at least; the tests walk every index on all cores.
        let fewest = if cfg!(test) { 1 } else { 1 << 16 };
        let threads = crate::data::parallel::threads_for(tfs.len(), fewest);
        let walked = crate::data::parallel::map(&which, threads, of_block);
        let total: usize = blocks.iter().flatten().map(|b| b.len()).sum();
        let mut data = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(n + 1);
        for (block, walked) in blocks.iter().zip(walked) {
            let at = data.len();
            for s in walked? {
                starts.push(offset(at + s as usize)?);
            }
            data.extend_from_slice(block.unwrap_or_default());
        }
        if starts.len() != n {
            return Err(Error::corrupt(
                "positions: blocks do not cover the dictionary",
            ));
        }
        starts.push(offset(data.len())?);
        Ok(Positions::of(data, starts))
    }

    /// Size of the stored section in bytes.
    pub fn stored_bytes(&self) -> usize {
        self.data.len()
    }

    /// The positions of the `i`-th posting of term `t` of `index`, ascending, into `out`
    /// (cleared first).
    fn positions_into(&self, index: &LexicalIndex, t: usize, i: usize, out: &mut Vec<u32>) {
        out.clear();
        let lists = self.lists_of(index, t);
        let (Some(&s), Some(&e)) = (lists.get(i), lists.get(i + 1)) else {
            return;
        };
        let (mut at, end) = (s as usize, e as usize);
        let mut pos = 0u32;
        let mut first = true;
        while at < end {
            let Some(v) = take_varint(&self.data, &mut at) else {
                return;
            };
            pos = if first { v } else { pos.saturating_add(v) };
            first = false;
            out.push(pos);
        }
    }

    /// Per chunk: does it hold every one of `phrases` (each its terms' dictionary positions,
    /// `None` for a term the index lacks, with their offsets from the first) and does `mask`
    /// allow it. A phrase with a term the index lacks matches nowhere.
    pub(crate) fn matching(
        &self,
        index: &LexicalIndex,
        phrases: &[Vec<(Option<usize>, u32)>],
        mask: Mask<'_>,
    ) -> Vec<bool> {
        let mut out: Vec<bool> = mask.to_vec();
        let mut lists: Vec<Vec<u32>> = Vec::new();
        for phrase in phrases {
            let Some(terms) = phrase
                .iter()
                .map(|&(t, off)| t.map(|t| (t, off)))
                .collect::<Option<Vec<(usize, u32)>>>()
            else {
                out.iter_mut().for_each(|m| *m = false);
                return out;
            };
            let Some(&(rarest, _)) = terms.iter().min_by_key(|&&(t, _)| index.df(t)) else {
                continue;
            };
            let mut held = vec![false; out.len()];
            for &c in index.postings_of(rarest).0 {
                let ci = c as usize;
                if !out.get(ci).copied().unwrap_or(false) {
                    continue;
                }
                held[ci] = self.chunk_holds(index, &terms, c, &mut lists);
            }
            out = held;
        }
        out
    }

    /// The positions of term `t` (a dictionary position) in chunk `c` into `out` (cleared
    /// first); false, with `out` empty, when the chunk does not contain the term.
    pub(crate) fn of_chunk(
        &self,
        index: &LexicalIndex,
        t: usize,
        c: u32,
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        let (chunks, _) = index.postings_of(t);
        match chunks.binary_search(&c) {
            Ok(i) => {
                self.positions_into(index, t, i, out);
                true
            }
            Err(_) => false,
        }
    }

    /// Whether chunk `c` holds the phrase `terms` (dictionary positions and offsets).
    fn chunk_holds(
        &self,
        index: &LexicalIndex,
        terms: &[(usize, u32)],
        c: u32,
        lists: &mut Vec<Vec<u32>>,
    ) -> bool {
        lists.resize_with(terms.len(), Vec::new);
        for (list, &(t, _)) in lists.iter_mut().zip(terms) {
            if !self.of_chunk(index, t, c, list) {
                return false;
            }
        }
        let (first, first_off) = (&lists[0], terms[0].1);
        first.iter().any(|&p| {
            let Some(base) = p.checked_sub(first_off) else {
                return false;
            };
            lists.iter().zip(terms).skip(1).all(|(list, &(_, off))| {
                base.checked_add(off)
                    .is_some_and(|want| list.binary_search(&want).is_ok())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whitespace-split documents, one chunk each, positions counting every word.
    fn built(docs: &[&str]) -> (LexicalIndex, Positions) {
        let mut vocabulary = crate::text::analyze::Vocabulary::default();
        let mut chunks = ChunkTerms::default();
        for d in docs {
            let (terms, positions): (Vec<u32>, Vec<u32>) = d
                .split_whitespace()
                .zip(0u32..)
                .filter(|(w, _)| *w != "_")
                .map(|(w, p)| (vocabulary.number(w), p))
                .unzip();
            chunks.push(&terms, &positions);
        }
        let (index, position) = LexicalIndex::build_numbered(chunks.terms(), vocabulary);
        let positions = Positions::build(&index, &position, &chunks);
        (index, positions)
    }

    fn phrase(index: &LexicalIndex, words: &[(&str, u32)]) -> Vec<(Option<usize>, u32)> {
        words.iter().map(|&(w, o)| (index.lookup(w), o)).collect()
    }

    #[test]
    fn varints_round_trip_and_reject_overflow() {
        for (v, len) in [
            (0u32, 1),
            (1, 1),
            (127, 1),
            (128, 2),
            (300, 2),
            (1 << 21, 4),
            (u32::MAX, 5),
        ] {
            assert_eq!(varint_len(v), len, "{v}");
            let mut out = vec![0u8; len as usize];
            assert_eq!(put_varint_at(&mut out, 0, v), len, "{v}");
            let mut at = 0;
            assert_eq!(take_varint(&out, &mut at), Some(v));
            assert_eq!(at, out.len());
        }
        assert_eq!(take_varint(&[0xff, 0xff, 0xff, 0xff, 0x1f], &mut 0), None);
        assert_eq!(take_varint(&[0x80], &mut 0), None);
    }

    #[test]
    fn a_phrase_matches_where_its_words_follow_each_other() {
        let (i, p) = built(&[
            "net revenue up",
            "revenue net",
            "net _ revenue",
            "net net revenue",
        ]);
        let all = [true; 4];
        let m = p.matching(&i, &[phrase(&i, &[("net", 0), ("revenue", 1)])], &all);
        assert_eq!(m, [true, false, false, true]);
        let gap = p.matching(&i, &[phrase(&i, &[("net", 0), ("revenue", 2)])], &all);
        // `net net revenue` has `net` two words before `revenue` too.
        assert_eq!(gap, [false, false, true, true]);
        let masked = p.matching(
            &i,
            &[phrase(&i, &[("net", 0), ("revenue", 1)])],
            &[false, true, true, true],
        );
        assert_eq!(masked, [false, false, false, true]);
        let unknown = p.matching(&i, &[phrase(&i, &[("net", 0), ("zzz", 1)])], &all);
        assert_eq!(unknown, [false; 4]);
    }

    #[test]
    fn every_phrase_must_match() {
        let (i, p) = built(&["a b c d", "a b x", "c d"]);
        let both = [
            phrase(&i, &[("a", 0), ("b", 1)]),
            phrase(&i, &[("c", 0), ("d", 1)]),
        ];
        assert_eq!(p.matching(&i, &both, &[true; 3]), [true, false, false]);
    }

    #[test]
    fn a_cut_or_padded_section_is_corrupt() {
        let (i, p) = built(&["a b a", "b"]);
        let mut cut = p.clone();
        cut.data.pop();
        assert!(cut.checked(&i).is_err());
        let mut padded = p.clone();
        padded.data.push(0);
        assert!(padded.checked(&i).is_err());
        assert!(p.checked(&i).is_ok());
    }
}
