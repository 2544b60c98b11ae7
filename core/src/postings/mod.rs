//! The inverted index the lexical lane scores: a sorted term dictionary and, per term, the
//! chunks it occurs in with their term frequencies, each chunk's number of terms, and the
//! surface words of the indexed text with their terms. Scoring lives in
//! [`crate::lane::lexical`]; how a blob stores this index is in [`stored`] (posting blocks)
//! and [`dictionary`] (dictionary shards); [`words`] finds a word's position.

use crate::data::error::{Error, Result};
use crate::text::analyze::{Surface, Vocabulary};

pub(crate) mod dictionary;
pub(crate) mod splice;
pub(crate) mod stored;
mod words;

pub(crate) use dictionary::{front_coded, Dictionary};
pub(crate) use splice::{Source, Splice};
pub(crate) use stored::{block_range, take_varint, PostingBlock};
pub(crate) use words::WordList;
use words::WordTable;

/// The inverted index: a sorted term dictionary and, per term, the chunks it occurs in with
/// their term frequencies (chunk ids ascending).
#[derive(Debug, Clone, Default)]
pub struct LexicalIndex {
    terms: WordList,
    /// Term → dictionary position; derived from `terms` on load, never stored.
    lookup: WordTable,
    /// `offsets[t]..offsets[t + 1]` is term `t`'s slice of `chunks` and `tfs`.
    offsets: Vec<u32>,
    chunks: Vec<u32>,
    tfs: Vec<u32>,
    /// Number of terms in each chunk.
    lengths: Vec<u32>,
    /// Every normalized word of the indexed text (sorted) and the position of its term, so
    /// query analysis can skip stemming for words the index has seen.
    surface_words: WordList,
    /// Term position of each of `surface_words`.
    surface_terms: Vec<u32>,
    /// Word → position in `surface_words`; derived from them on load, never stored.
    surface: WordTable,
    /// Each term's document frequency when only some terms' postings are loaded (a
    /// [`crate::search::ranged::RangedIndex`]); `None` when every posting is here and a term's
    /// frequency is the length of its list.
    partial_dfs: Option<Vec<u32>>,
    /// The chunk count of a dictionary without chunk lengths (a sharded search's union of its
    /// shards' dictionaries); `None`: one length per chunk is here.
    dictionary_chunks: Option<usize>,
}

/// A lexical index's dictionary as a sharded search's coordinator reads it: its terms with
/// their document frequencies, its surface words with their terms, its chunk count and its
/// number of terms over all chunks ([`LexicalIndex::words`], [`LexicalIndex::union`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Words {
    terms: Vec<String>,
    dfs: Vec<u32>,
    surface_words: Vec<String>,
    surface_terms: Vec<u32>,
    chunks: u64,
    length: u64,
}

impl PartialEq for LexicalIndex {
    fn eq(&self, other: &Self) -> bool {
        // `lookup` is derived from `terms`.
        self.terms == other.terms
            && self.offsets == other.offsets
            && self.chunks == other.chunks
            && self.tfs == other.tfs
            && self.lengths == other.lengths
            && self.surface_words == other.surface_words
            && self.surface_terms == other.surface_terms
    }
}

impl LexicalIndex {
    /// Builds the index from each chunk's terms, in chunk order, and the surface words (each
    /// normalized word with its term). For tests and callers with terms at hand as text; a
    /// build numbers the terms as it analyzes (see [`Vocabulary`]) and builds from the
    /// numbers.
    pub fn build<I>(chunk_terms: I, surface: Surface) -> LexicalIndex
    where
        I: IntoIterator<Item = Vec<String>>,
    {
        let mut vocabulary = Vocabulary::default();
        let chunks: Vec<Vec<u32>> = chunk_terms
            .into_iter()
            .map(|terms| terms.iter().map(|t| vocabulary.number(t)).collect())
            .collect();
        for (word, term) in &surface {
            vocabulary.record(word, term);
        }
        LexicalIndex::build_numbered(chunks.iter().map(Vec::as_slice), vocabulary).0
    }

    /// Builds the index from each chunk's terms as `vocabulary` numbers them, in chunk order
    /// (see [`crate::text::analyze::Analyzer::terms_at_recording`]), and the words it
    /// recorded. Also returns each number's position in the dictionary (`u32::MAX` for a term
    /// no chunk holds), to map the chunks' terms to the index's.
    ///
    /// Two passes over the chunks: the first counts each term's chunks, so that the second
    /// writes every posting in its place in lists laid out once (a list per term, grown as
    /// postings came, held about a third more than its postings, and left the memory of every
    /// smaller copy behind).
    pub(crate) fn build_numbered<'a, I>(
        chunk_terms: I,
        vocabulary: Vocabulary,
    ) -> (LexicalIndex, Vec<u32>)
    where
        I: IntoIterator<Item = &'a [u32]> + Clone,
    {
        let (terms, words) = vocabulary.into_parts();
        let n = terms.len();
        // Per number: the chunk it was last seen in, so that a chunk counts once.
        let mut seen = vec![u32::MAX; n];
        let mut df = vec![0u32; n];
        let mut lengths = Vec::new();
        for (chunk, numbers) in (0u32..).zip(chunk_terms.clone()) {
            lengths.push(u32::try_from(numbers.len()).unwrap_or(u32::MAX));
            for &t in numbers {
                if let Some(last) = seen.get_mut(t as usize).filter(|l| **l != chunk) {
                    *last = chunk;
                    df[t as usize] += 1;
                }
            }
        }
        // The dictionary: the terms some chunk holds, sorted.
        let mut order: Vec<u32> = (0u32..)
            .zip(&df)
            .filter(|(_, &d)| d > 0)
            .map(|(n, _)| n)
            .collect();
        crate::data::sort::sort_unstable_by(&mut order, |&a, &b| {
            terms[a as usize].cmp(&terms[b as usize])
        });
        let mut position = vec![u32::MAX; n];
        // Per number: where its next posting goes.
        let mut next = vec![0usize; n];
        let mut index = LexicalIndex {
            lengths,
            offsets: Vec::with_capacity(order.len() + 1),
            terms: WordList::with_capacity(
                order.len(),
                order.iter().map(|&t| terms[t as usize].len()).sum(),
            ),
            ..LexicalIndex::default()
        };
        index.offsets.push(0);
        let mut total = 0usize;
        for (at, &t) in (0u32..).zip(&order) {
            position[t as usize] = at;
            next[t as usize] = total;
            index.terms.push(&terms[t as usize]);
            total += df[t as usize] as usize;
            index.offsets.push(u32::try_from(total).unwrap_or(u32::MAX));
        }
        drop((df, terms));
        (index.chunks, index.tfs) = (vec![0; total], vec![0; total]);
        seen.fill(u32::MAX);
        for (chunk, numbers) in (0u32..).zip(chunk_terms) {
            for &t in numbers {
                let t = t as usize;
                let Some(last) = seen.get_mut(t) else {
                    continue;
                };
                if *last == chunk {
                    // The posting this chunk opened for the term: one more occurrence.
                    let tf = &mut index.tfs[next[t] - 1];
                    *tf = tf.saturating_add(1);
                } else {
                    *last = chunk;
                    (index.chunks[next[t]], index.tfs[next[t]]) = (chunk, 1);
                    next[t] += 1;
                }
            }
        }
        let mut surface: Vec<(String, u32)> = words
            .into_iter()
            .filter_map(|(w, n)| {
                let at = *position.get(n as usize)?;
                (at != u32::MAX).then_some((w, at))
            })
            .collect();
        crate::data::sort::sort_unstable(&mut surface);
        index.surface_words = surface.iter().map(|(w, _)| w.as_str()).collect();
        index.surface_terms = surface.iter().map(|&(_, t)| t).collect();
        index.index_terms();
        (index, position)
    }

    /// This index's dictionary as a sharded search's coordinator reads it ([`Words`]).
    pub(crate) fn words(&self) -> Words {
        Words {
            terms: self.terms.iter().map(str::to_owned).collect(),
            dfs: (0..self.terms.len())
                .map(|t| u32::try_from(self.df(t)).unwrap_or(u32::MAX))
                .collect(),
            surface_words: self.surface_words.iter().map(str::to_owned).collect(),
            surface_terms: self.surface_terms.clone(),
            chunks: self.chunk_count() as u64,
            length: self.lengths.iter().map(|&l| u64::from(l)).sum(),
        }
    }

    /// The dictionary of a wiki indexed as `parts` (shards, each with its own chunk table, as
    /// [`LexicalIndex::words`] gives them): every part's terms and surface words, each term
    /// with the wiki's document frequency (the sum of the parts'), the wiki's chunk count;
    /// no posting lists and no chunk lengths. Query analysis reads it as the dictionary of
    /// one index of the whole wiki ([`crate::ShardedIndex`]). Also returns the wiki's number
    /// of terms over all its chunks and, per part, the wiki's frequency of each of the part's
    /// terms.
    ///
    /// # Errors
    /// `invalid_argument` for a part whose lists do not match (a frequency or a term for each
    /// term and surface word, terms sorted and distinct).
    pub(crate) fn union(parts: &[&Words]) -> Result<(LexicalIndex, u64, Vec<Vec<u32>>)> {
        use std::collections::BTreeMap;
        let mut dfs: BTreeMap<&str, u32> = BTreeMap::new();
        let mut surface: BTreeMap<&str, &str> = BTreeMap::new();
        let (mut chunks, mut length) = (0u64, 0u64);
        for part in parts {
            let sorted = part.terms.windows(2).all(|w| w[0] < w[1]);
            if !sorted
                || part.dfs.len() != part.terms.len()
                || part.surface_terms.len() != part.surface_words.len()
                || (part.surface_terms.iter()).any(|&t| t as usize >= part.terms.len())
            {
                return Err(Error::invalid_argument(
                    "a shard's dictionary does not hold together",
                ));
            }
            for (term, &df) in part.terms.iter().zip(&part.dfs) {
                let d = dfs.entry(term).or_insert(0);
                *d = d.saturating_add(df);
            }
            for (word, &t) in part.surface_words.iter().zip(&part.surface_terms) {
                surface.entry(word).or_insert(&part.terms[t as usize]);
            }
            chunks = chunks.saturating_add(part.chunks);
            length = length.saturating_add(part.length);
        }
        let mut index = LexicalIndex {
            terms: dfs.keys().copied().collect(),
            surface_words: surface.keys().copied().collect(),
            dictionary_chunks: Some(usize::try_from(chunks).unwrap_or(usize::MAX)),
            ..LexicalIndex::default()
        };
        let at = |term: &str| {
            index
                .terms
                .binary_search(term)
                .map_or(u32::MAX, |t| t as u32)
        };
        index.surface_terms = surface.values().map(|term| at(term)).collect();
        let wiki: Vec<Vec<u32>> = parts
            .iter()
            .map(|part| part.terms.iter().map(|term| dfs[term.as_str()]).collect())
            .collect();
        index.partial_dfs = Some(dfs.into_values().collect());
        index.index_terms();
        Ok((index, length, wiki))
    }

    /// The index term of a normalized word, if the indexed text contains the word.
    pub fn surface_term(&self, word: &str) -> Option<&str> {
        self.surface_term_at(word).and_then(|t| self.terms.get(t))
    }

    /// [`LexicalIndex::surface_term`] as the term's dictionary position.
    pub(crate) fn surface_term_at(&self, word: &str) -> Option<usize> {
        let w = self.surface.get(&self.surface_words, word)?;
        self.surface_terms.get(w).map(|&t| t as usize)
    }

    /// Fills the derived term → position and word → term maps (after building or decoding).
    pub(crate) fn index_terms(&mut self) {
        self.lookup = WordTable::new(&self.terms);
        self.surface = WordTable::new(&self.surface_words);
    }

    /// Checks a loaded index against the number of chunks (run on every load, whole or once
    /// every part is in): every posting list is here, with a length for each chunk, and the
    /// dictionary is sorted. The lists themselves were checked as their blocks were set
    /// ([`LexicalIndex::set_blocks`]: inside the chunk table, ascending, no zero frequency,
    /// and the stored chunk lengths the ones they give), so they are not walked again.
    pub(crate) fn validate(&self, n_chunks: usize) -> Result<()> {
        if self.partial_dfs.is_some() {
            return Err(Error::corrupt("lexical index: posting lists are missing"));
        }
        if self.lengths.len() != n_chunks {
            return Err(Error::corrupt(
                "lexical index: chunk lengths do not match the chunk count",
            ));
        }
        self.validate_dictionary()
    }

    /// The dictionary's part of [`LexicalIndex::validate`]: terms and surface words sorted,
    /// each surface word's term inside the dictionary.
    fn validate_dictionary(&self) -> Result<()> {
        let bad = |d: &str| Err(Error::corrupt(format!("lexical index: {d}")));
        if !self.terms.ascends() {
            return bad("dictionary is not sorted");
        }
        if self.surface_words.len() != self.surface_terms.len()
            || !self.surface_words.ascends()
            || self
                .surface_terms
                .iter()
                .any(|&t| t as usize >= self.terms.len())
        {
            return bad("surface words are unsorted or point outside the dictionary");
        }
        Ok(())
    }

    /// Number of chunks indexed.
    pub fn chunk_count(&self) -> usize {
        self.dictionary_chunks.unwrap_or(self.lengths.len())
    }

    /// Checks the look-up tables find every term and surface word where it is (the tables are
    /// derived, so the index's equality leaves them out).
    #[cfg(test)]
    pub(crate) fn assert_tables(&self) {
        for (t, term) in self.terms.iter().enumerate() {
            assert_eq!(self.lookup(term), Some(t), "term {term}");
        }
        for (word, &t) in self.surface_words.iter().zip(&self.surface_terms) {
            assert_eq!(self.surface_term_at(word), Some(t as usize), "word {word}");
        }
        assert_eq!(self.lookup("\u{0}absent"), None);
    }

    /// Number of distinct terms.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// The dictionary position of `term`.
    pub fn lookup(&self, term: &str) -> Option<usize> {
        self.lookup.get(&self.terms, term)
    }

    /// The term at dictionary position `t`.
    ///
    /// # Panics
    /// For a position outside the dictionary (positions come from this index's look-ups).
    pub fn term(&self, t: usize) -> &str {
        &self.terms[t]
    }

    /// Number of chunks containing term `t` (0 outside the dictionary).
    pub fn df(&self, t: usize) -> usize {
        if let Some(dfs) = &self.partial_dfs {
            return dfs.get(t).map_or(0, |&d| d as usize);
        }
        self.postings(t).map_or(0, |(chunks, _)| chunks.len())
    }

    /// The sorted, distinct words typo tolerance searches: every normalized word of the indexed
    /// text, or the terms themselves in an index that has no surface words.
    pub(crate) fn typo_words(&self) -> &WordList {
        if self.surface_words.is_empty() {
            &self.terms
        } else {
            &self.surface_words
        }
    }

    /// The dictionary position of the term of [`LexicalIndex::typo_words`]' word `i`.
    pub(crate) fn typo_word_term(&self, i: usize) -> usize {
        if self.surface_words.is_empty() {
            i
        } else {
            self.surface_terms[i] as usize
        }
    }

    /// The terms a word starting with `prefix` may have (dictionary positions, ascending, each
    /// once): those of the indexed words that start with it ([`LexicalIndex::typo_words`]) and
    /// the terms that start with it themselves (a CJK token's term is its text). `None` when
    /// there are more than `max`.
    pub(crate) fn terms_of_prefix(&self, prefix: &str, max: usize) -> Option<Vec<usize>> {
        let words = self.typo_words();
        let start = words.partition_point(|w| w < prefix);
        let mut out: Vec<usize> = Vec::new();
        for (i, w) in (start..words.len()).map(|i| (i, &words[i])) {
            if !w.starts_with(prefix) {
                break;
            }
            out.push(self.typo_word_term(i));
            if out.len() > max.saturating_mul(4) {
                return None;
            }
        }
        let own = self.prefixed(prefix, max.saturating_add(1));
        out.extend(own);
        out.sort_unstable();
        out.dedup();
        (out.len() <= max).then_some(out)
    }

    /// Dictionary positions of the terms starting with `prefix`, at most `max` of them.
    pub fn prefixed(&self, prefix: &str, max: usize) -> std::ops::Range<usize> {
        let start = self.terms.partition_point(|t| t < prefix);
        let mut end = start;
        while end < self.terms.len() && end - start < max && self.terms[end].starts_with(prefix) {
            end += 1;
        }
        start..end
    }

    /// The chunks containing term `t` (a dictionary position, as from
    /// [`LexicalIndex::lookup`]) and the term's frequency in each; `None` for a position
    /// outside the dictionary.
    pub fn postings(&self, t: usize) -> Option<(&[u32], &[u32])> {
        let s = *self.offsets.get(t)? as usize;
        let e = *self.offsets.get(t.checked_add(1)?)? as usize;
        Some((self.chunks.get(s..e)?, self.tfs.get(s..e)?))
    }

    /// Where term `t`'s postings lie in the index's posting order (empty outside the
    /// dictionary): the order [`crate::lane::phrase::Positions`] keeps its lists in.
    pub(crate) fn posting_range(&self, t: usize) -> std::ops::Range<usize> {
        match (
            self.offsets.get(t),
            t.checked_add(1).and_then(|u| self.offsets.get(u)),
        ) {
            (Some(&s), Some(&e)) => s as usize..e as usize,
            _ => 0..0,
        }
    }

    /// Every posting's term frequency, in posting order (terms in dictionary order, each
    /// term's chunks ascending).
    pub(crate) fn all_tfs(&self) -> &[u32] {
        &self.tfs
    }

    /// [`LexicalIndex::postings`] for a position this index gave out (empty if it were not).
    pub(crate) fn postings_of(&self, t: usize) -> (&[u32], &[u32]) {
        self.postings(t).unwrap_or((&[], &[]))
    }

    /// Each chunk's number of terms.
    pub(crate) fn lengths(&self) -> &[u32] {
        &self.lengths
    }

    /// The chunk ids of the postings `at` (a range of [`LexicalIndex::posting_range`]).
    ///
    /// # Panics
    /// For a range outside the postings.
    pub(crate) fn posting_chunks(&self, at: std::ops::Range<usize>) -> &[u32] {
        &self.chunks[at]
    }

    /// Terms in chunk `c`; `None` for a chunk outside the index.
    pub fn length(&self, c: u32) -> Option<u32> {
        self.lengths.get(c as usize).copied()
    }
}

/// An index over whitespace-split documents, one chunk each (for unit tests of the lanes).
#[cfg(test)]
pub(crate) fn test_index(docs: &[&str]) -> LexicalIndex {
    LexicalIndex::build(
        docs.iter()
            .map(|d| d.split_whitespace().map(str::to_string).collect()),
        Default::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx(docs: &[&str]) -> LexicalIndex {
        test_index(docs)
    }

    #[test]
    fn postings_are_sorted_with_term_frequencies() {
        let i = idx(&["a b a", "b c", "a"]);
        let t = i.lookup("a").unwrap();
        assert_eq!(i.postings(t), Some((&[0u32, 2][..], &[2u32, 1][..])));
        assert_eq!(i.length(0), Some(3));
        assert_eq!(i.postings(usize::MAX), None);
        assert_eq!(i.postings(i.term_count()), None);
        assert_eq!(i.length(3), None);
        assert!(i.validate(3).is_ok());
        assert!(i.validate(4).is_err());
    }

    #[test]
    fn prefix_range_is_capped() {
        let i = idx(&["rev revenu review zeta"]);
        let r = i.prefixed("rev", 10);
        assert_eq!(r.len(), 3);
        assert_eq!(i.prefixed("rev", 2).len(), 2);
        assert_eq!(i.prefixed("q", 10).len(), 0);
    }
}
