//! The lexical lane: BM25 over an inverted index this crate owns (postings live in the blob).
//!
//! Scoring is Lucene's BM25 (the variant bm25s calls `lucene`):
//! `idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))` and
//! `score(d) = Σ idf(t) · tf · (k1 + 1) / (tf + k1 · (1 - b + b · |d| / avgdl))`,
//! over the distinct query terms, each weighted by its count in the query. Each chunk is indexed as key + title + summary + chunk text +
//! tags, so a page's metadata matches through every one of its chunks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{top_keys, Mask};
pub use crate::data::config::Bm25Params;
use crate::data::error::{Error, Result};
use crate::text::analyze::{Analyzer, Surface};
pub use crate::text::analyze::{BuildFnv, Fnv};
use crate::text::page::Page;

/// The inverted index: a sorted term dictionary and, per term, the chunks it occurs in with
/// their term frequencies (chunk ids ascending).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LexicalIndex {
    terms: Vec<String>,
    /// Term → dictionary position; derived from `terms` on load, never stored.
    #[serde(skip)]
    lookup: WordTable,
    /// `offsets[t]..offsets[t + 1]` is term `t`'s slice of `chunks` and `tfs`.
    offsets: Vec<u32>,
    chunks: Vec<u32>,
    tfs: Vec<u32>,
    /// Number of terms in each chunk.
    lengths: Vec<u32>,
    /// Every normalized word of the indexed text (sorted) and the position of its term, so
    /// query analysis can skip stemming for words the index has seen.
    surface_words: Vec<String>,
    /// Term position of each of `surface_words`.
    surface_terms: Vec<u32>,
    /// Word → position in `surface_words`; derived from them on load, never stored.
    #[serde(skip)]
    surface: WordTable,
    /// Each term's document frequency when only some terms' postings are loaded (a
    /// [`crate::search::ranged::RangedIndex`]); `None` when every posting is here and a term's
    /// frequency is the length of its list.
    #[serde(skip)]
    partial_dfs: Option<Vec<u32>>,
}

/// Where each word of a list is in it, found by its hash: a map of the list that holds
/// positions only, not copies of the words (a load makes one of the terms and one of the
/// surface words: copying them into a `HashMap` took a fifth of a whole load of CACM).
#[derive(Debug, Clone, Default)]
struct WordTable {
    /// Open addressing, linear probing: per slot, 1 + a word's position, or 0 for none. A
    /// power of two long (0 for no words), at most half full.
    slots: Vec<u32>,
}

impl WordTable {
    /// The table of `words` (distinct, as a valid dictionary's are; of two equal words the
    /// first is found).
    fn new(words: &[String]) -> WordTable {
        if words.is_empty() {
            return WordTable::default();
        }
        let size = (words.len() * 2).next_power_of_two();
        let mut slots = vec![0u32; size];
        for (i, w) in (1u32..).zip(words) {
            let mut s = WordTable::slot(w, size);
            while slots[s] != 0 {
                s = (s + 1) & (size - 1);
            }
            slots[s] = i;
        }
        WordTable { slots }
    }

    /// The position of `word` in `words` (the list the table was made of).
    fn get(&self, words: &[String], word: &str) -> Option<usize> {
        let size = self.slots.len();
        if size == 0 {
            return None;
        }
        let mut s = WordTable::slot(word, size);
        loop {
            let i = (*self.slots.get(s)? as usize).checked_sub(1)?;
            if words.get(i).is_some_and(|w| w == word) {
                return Some(i);
            }
            s = (s + 1) & (size - 1);
        }
    }

    /// The first slot to try for `word` in a table of `size` slots (a power of two): the top
    /// bits of its FNV hash, mixed (FNV's low bits depend on the low bits of each byte only).
    fn slot(word: &str, size: usize) -> usize {
        use std::hash::{BuildHasher, Hasher};
        let mut h = BuildFnv::default().build_hasher();
        h.write(word.as_bytes());
        let mixed = h.finish().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - size.trailing_zeros())) as usize
    }
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

/// The compact form in which blobs store the lexical index's postings (in [`PostingBlock`]s)
/// and surface words (in [`Dictionary`] shards). Every number a load can derive is left out,
/// and the rest is stored as small numbers: each term's document frequency instead of where
/// its postings start, each chunk id as its gap from the one before in the term's list
/// (ascending, so a gap is at least 1 but for the first), and no chunk lengths beyond the
/// head's. The surface words are stored as exceptions: most words are their own term
/// (`system`), and those are one bit per term; only the words whose term differs
/// (`computers` → `comput`) are stored with their term.
pub(crate) mod stored {
    /// Where each term's list starts (one more entry than `dfs`) and the chunk ids, from each
    /// term's document frequency and its chunk ids stored as gaps (see [`stored`]).
    pub(super) fn postings_from(
        dfs: &[u32],
        gaps: &[u32],
    ) -> Result<(Vec<u32>, Vec<u32>), &'static str> {
        let mut offsets = Vec::with_capacity(dfs.len() + 1);
        let mut chunks = Vec::with_capacity(gaps.len());
        let mut at: usize = 0;
        offsets.push(0);
        for &df in dfs {
            let end = at
                .checked_add(df as usize)
                .filter(|&e| e <= gaps.len())
                .ok_or("a posting list lies outside the postings")?;
            let mut last: u32 = 0;
            for &gap in &gaps[at..end] {
                last = last.checked_add(gap).ok_or("a chunk id overflows")?;
                chunks.push(last);
            }
            at = end;
            offsets.push(u32::try_from(at).map_err(|_| "too many postings")?);
        }
        if at != gaps.len() {
            return Err("postings lengths disagree");
        }
        Ok((offsets, chunks))
    }

    /// The surface words (sorted) and their terms, from the terms that are their own word
    /// (bit `t` of `own`) and the other words with their terms (see [`stored`]).
    pub(super) fn surface_from(
        terms: &[String],
        own: &[u8],
        other_words: Vec<String>,
        other_terms: Vec<u32>,
    ) -> Result<(Vec<String>, Vec<u32>), &'static str> {
        let n = terms.len();
        let is_own = |t: usize| own[t / 8] & (1 << (t % 8)) != 0;
        if own.len() != n.div_ceil(8)
            || (n..own.len() * 8).any(is_own)
            || other_words.len() != other_terms.len()
        {
            return Err("surface words disagree with the dictionary");
        }
        // Merge the terms that are their own word with the other words, both sorted;
        // `validate` rejects a word listed twice.
        let mut mine = (0..n).filter(|&t| is_own(t)).peekable();
        let mut other = other_words.into_iter().zip(other_terms).peekable();
        let (mut surface_words, mut surface_terms) = (Vec::new(), Vec::new());
        loop {
            if let Some(t) = mine.next_if(|&t| other.peek().is_none_or(|(w, _)| terms[t] <= *w)) {
                surface_words.push(terms[t].clone());
                surface_terms.push(t as u32);
            } else if let Some((w, t)) = other.next() {
                surface_words.push(w);
                surface_terms.push(t);
            } else {
                break;
            }
        }
        Ok((surface_words, surface_terms))
    }
}

/// The lexical index's dictionary as a blob's dictionary shards store it ([`crate::blob`]): the terms, their document frequencies, the surface words (as in
/// [`stored`]) and each chunk's length. With it a search can analyze a query, expand its typos
/// and prefixes and score with BM25 before any posting list is loaded: the lists come in
/// blocks of consecutive terms ([`PostingBlock`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Dictionary {
    #[serde(with = "front_coded")]
    terms: Vec<String>,
    dfs: Vec<u32>,
    own: Vec<u8>,
    #[serde(with = "front_coded")]
    other_words: Vec<String>,
    other_terms: Vec<u32>,
    lengths: Vec<u32>,
}

impl Dictionary {
    /// Number of chunks.
    pub(crate) fn chunk_count(&self) -> usize {
        self.lengths.len()
    }

    /// The terms, sorted.
    pub(crate) fn terms(&self) -> &[String] {
        &self.terms
    }

    /// The surface words that are not their own term, sorted.
    pub(crate) fn other_words(&self) -> &[String] {
        &self.other_words
    }

    /// The terms (dictionary positions) of [`Dictionary::other_words`].
    pub(crate) fn other_terms(&self) -> &[u32] {
        &self.other_terms
    }

    /// The chunk lengths alone: what a blob's head keeps of the dictionary.
    pub(crate) fn lengths_only(&self) -> Dictionary {
        Dictionary {
            terms: Vec::new(),
            dfs: Vec::new(),
            own: Vec::new(),
            other_words: Vec::new(),
            other_terms: Vec::new(),
            lengths: self.lengths.clone(),
        }
    }

    /// The chunk lengths.
    pub(crate) fn lengths(&self) -> &[u32] {
        &self.lengths
    }

    /// Whether this is shaped as a shard: as many frequencies and own bytes as its terms
    /// need (no own bit past the last term), a term for each other word, no chunk lengths.
    pub(crate) fn is_shard_shaped(&self) -> bool {
        let n = self.terms.len();
        self.dfs.len() == n
            && self.own.len() == n.div_ceil(8)
            && !(n..self.own.len() * 8).any(|t| self.own[t / 8] & (1 << (t % 8)) != 0)
            && self.other_words.len() == self.other_terms.len()
            && self.lengths.is_empty()
    }

    /// Whether this holds nothing but chunk lengths.
    pub(crate) fn is_lengths_only(&self) -> bool {
        self.terms.is_empty()
            && self.dfs.is_empty()
            && self.own.is_empty()
            && self.other_words.is_empty()
            && self.other_terms.is_empty()
    }

    /// The shard of terms `terms` and of the other surface words `words` (positions in
    /// [`Dictionary::other_words`]): their own bits renumbered from the shard's first term,
    /// the other words' terms kept as dictionary positions, no chunk lengths.
    pub(crate) fn shard(
        &self,
        terms: std::ops::Range<usize>,
        words: std::ops::Range<usize>,
    ) -> Dictionary {
        let mut own = vec![0u8; terms.len().div_ceil(8)];
        for (i, t) in terms.clone().enumerate() {
            if self.own[t / 8] & (1 << (t % 8)) != 0 {
                own[i / 8] |= 1 << (i % 8);
            }
        }
        Dictionary {
            terms: self.terms[terms.clone()].to_vec(),
            dfs: self.dfs[terms].to_vec(),
            own,
            other_words: self.other_words[words.clone()].to_vec(),
            other_terms: self.other_terms[words].to_vec(),
            lengths: Vec::new(),
        }
    }

    /// The dictionary of the shards at hand, in order, as one (see [`Dictionary::shard`]):
    /// shard `i` holds the terms `firsts[i]..firsts[i + 1]` of the whole dictionary's
    /// `n_terms` (the last one up to the end), `None` when it is not at hand. The terms are
    /// numbered from 0 across the shards at hand (with every shard, as in the whole
    /// dictionary; [`crate::RangedIndex`] maps between the two), so a shard not loaded costs
    /// nothing. A surface word whose term is in a shard not at hand is left out: its term is
    /// its stem, which query analysis then makes itself. The head's chunk lengths come with
    /// it.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a shard's size is not the one the head gives, or a surface
    /// word's term lies outside the dictionary.
    pub(crate) fn assemble(
        lengths: &[u32],
        n_terms: usize,
        firsts: &[u32],
        shards: &[Option<&Dictionary>],
    ) -> Result<Dictionary> {
        let bad = |d: &str| Error::corrupt(format!("dictionary shards: {d}"));
        if firsts.len() != shards.len() {
            return Err(bad("the head and the shards disagree"));
        }
        // Where each shard's terms start here (`None`: not at hand), each one's size checked
        // against the head's word first.
        let mut starts: Vec<Option<u32>> = Vec::with_capacity(shards.len());
        let mut n = 0usize;
        for (i, shard) in shards.iter().enumerate() {
            let range = block_range(firsts, i, n_terms);
            match shard {
                Some(d) if d.terms.len() != range.len() || d.dfs.len() != range.len() => {
                    return Err(bad("a shard holds another number of terms"));
                }
                Some(d) => {
                    starts.push(Some(n as u32));
                    n += d.terms.len();
                }
                None => starts.push(None),
            }
        }
        let here = |t: u32| -> Result<Option<u32>> {
            if t as usize >= n_terms {
                return Err(bad("a surface word's term lies outside the dictionary"));
            }
            let i = firsts.partition_point(|&f| f <= t).saturating_sub(1);
            Ok(starts[i].map(|s| s + (t - firsts[i])))
        };
        let mut out = Dictionary {
            terms: Vec::with_capacity(n),
            dfs: Vec::with_capacity(n),
            own: vec![0u8; n.div_ceil(8)],
            other_words: Vec::new(),
            other_terms: Vec::new(),
            lengths: lengths.to_vec(),
        };
        for d in shards.iter().flatten() {
            let at = out.terms.len();
            for k in 0..d.terms.len() {
                if d.own.get(k / 8).is_some_and(|b| b & (1 << (k % 8)) != 0) {
                    out.own[(at + k) / 8] |= 1 << ((at + k) % 8);
                }
            }
            out.terms.extend_from_slice(&d.terms);
            out.dfs.extend_from_slice(&d.dfs);
            for (w, &t) in d.other_words.iter().zip(&d.other_terms) {
                if let Some(t) = here(t)? {
                    out.other_words.push(w.clone());
                    out.other_terms.push(t);
                }
            }
        }
        Ok(out)
    }

    /// The dictionary of every shard, in order, as one: what [`Dictionary::assemble`] makes of
    /// them all (the same checks), their words moved rather than copied (a whole load).
    ///
    /// # Errors
    /// As [`Dictionary::assemble`].
    pub(crate) fn concat(
        lengths: Vec<u32>,
        n_terms: usize,
        firsts: &[u32],
        shards: Vec<Dictionary>,
    ) -> Result<Dictionary> {
        let bad = |d: &str| Error::corrupt(format!("dictionary shards: {d}"));
        if firsts.len() != shards.len() {
            return Err(bad("the head and the shards disagree"));
        }
        let mut n = 0usize;
        for (i, d) in shards.iter().enumerate() {
            let range = block_range(firsts, i, n_terms);
            if d.terms.len() != range.len() || d.dfs.len() != range.len() {
                return Err(bad("a shard holds another number of terms"));
            }
            n += d.terms.len();
        }
        let words: usize = shards.iter().map(|d| d.other_words.len()).sum();
        let mut out = Dictionary {
            terms: Vec::with_capacity(n),
            dfs: Vec::with_capacity(n),
            own: vec![0u8; n.div_ceil(8)],
            other_words: Vec::with_capacity(words),
            other_terms: Vec::with_capacity(words),
            lengths,
        };
        for d in shards {
            let at = out.terms.len();
            for k in 0..d.terms.len() {
                if d.own.get(k / 8).is_some_and(|b| b & (1 << (k % 8)) != 0) {
                    out.own[(at + k) / 8] |= 1 << ((at + k) % 8);
                }
            }
            // With every shard, a term is numbered here as in the whole dictionary.
            if d.other_terms.iter().any(|&t| t as usize >= n_terms) {
                return Err(bad("a surface word's term lies outside the dictionary"));
            }
            out.terms.extend(d.terms);
            out.dfs.extend(d.dfs);
            out.other_words.extend(d.other_words);
            out.other_terms.extend(d.other_terms);
        }
        Ok(out)
    }
}

/// A sorted list of words stored front-coded: each word as the length of the prefix it shares
/// with the word before (in bytes) and the rest, which on CACM's dictionary deflates to 40%
/// fewer bytes than the words whole.
pub(crate) mod front_coded {
    use serde::de::{DeserializeSeed, Error as _, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    use crate::data::error::decode_error;

    pub(crate) fn serialize<S: Serializer>(words: &[String], s: S) -> Result<S::Ok, S::Error> {
        let mut prev = "";
        s.collect_seq(words.iter().map(|w| {
            let shared = prev
                .bytes()
                .zip(w.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            // Back to a character boundary, so that the rest is a string.
            let shared = (0..=shared)
                .rev()
                .find(|&n| w.is_char_boundary(n))
                .unwrap_or(0);
            prev = w;
            (shared as u32, &w[shared..])
        }))
    }

    /// Each word is made in one allocation as its entry is read (a sharded head's page keys and
    /// every dictionary shard come this way: decoding them is on the way to a first result).
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
        d.deserialize_seq(Words)
    }

    struct Words;

    impl<'de> Visitor<'de> for Words {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("front-coded words")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            // The hint is the decoder's claim; the vector grows past a small start otherwise.
            let mut words: Vec<String> = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            // A word may repeat all of the one before, so bytes that ask for a long word again
            // and again would make words far beyond their own size: they may make 64 bytes of
            // words for each of theirs (about two bytes an entry and its rest), or 64 MiB.
            let (mut read, mut made) = (0usize, 0usize);
            loop {
                let next = Next {
                    before: words.last().map_or("", String::as_str),
                    budget: (64usize << 20)
                        .max(read.saturating_mul(64))
                        .saturating_sub(made),
                };
                let Some((word, rest)) = seq.next_element_seed(next)? else {
                    break;
                };
                read += rest + 2;
                made += word.len();
                words.push(word);
            }
            Ok(words)
        }
    }

    /// One entry, `(shared, rest)`: the first `shared` bytes of the word `before`, then `rest`;
    /// at most `budget` bytes. Gives the word and the length of its rest.
    struct Next<'a> {
        before: &'a str,
        budget: usize,
    }

    impl<'de> DeserializeSeed<'de> for Next<'_> {
        type Value = (String, usize);

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(String, usize), D::Error> {
            d.deserialize_tuple(2, self)
        }
    }

    impl<'de> Visitor<'de> for Next<'_> {
        type Value = (String, usize);

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a shared length and the rest of a word")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(String, usize), A::Error> {
            let missing = || A::Error::invalid_length(0, &"a shared length and the rest of a word");
            let shared: u32 = seq.next_element()?.ok_or_else(missing)?;
            let Some(head) = self.before.get(..shared as usize) else {
                return Err(decode_error(
                    "a front-coded word shares more than the word before",
                ));
            };
            let rest = Rest {
                head,
                budget: self.budget,
            };
            seq.next_element_seed(rest)?.ok_or_else(missing)
        }
    }

    /// The rest of a word, appended to the shared part `head` as it is read (borrowed from the
    /// bytes where the decoder can, so with no copy of its own).
    struct Rest<'a> {
        head: &'a str,
        budget: usize,
    }

    impl<'de> DeserializeSeed<'de> for Rest<'_> {
        type Value = (String, usize);

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(String, usize), D::Error> {
            d.deserialize_str(self)
        }
    }

    impl<'de> Visitor<'de> for Rest<'_> {
        type Value = (String, usize);

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("the rest of a word")
        }

        fn visit_str<E: serde::de::Error>(self, rest: &str) -> Result<(String, usize), E> {
            if self.head.len() + rest.len() > self.budget {
                return Err(decode_error(
                    "front-coded words make far more bytes than they take",
                ));
            }
            let mut word = String::with_capacity(self.head.len() + rest.len());
            word.push_str(self.head);
            word.push_str(rest);
            Ok((word, rest.len()))
        }
    }

    #[cfg(test)]
    mod tests {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Words(#[serde(with = "super")] Vec<String>);

        #[test]
        fn front_coded_words_round_trip_across_multibyte_prefixes() {
            let words = Words(
                [
                    "",
                    "a",
                    "ab",
                    "abc",
                    "abd",
                    "b",
                    "caf\u{e9}",
                    "caf\u{e8}",
                    "\u{732b}",
                    "\u{732b}\u{72ac}",
                ]
                .map(String::from)
                .to_vec(),
            );
            let bytes = postcard::to_allocvec(&words).unwrap();
            assert_eq!(postcard::from_bytes::<Words>(&bytes).unwrap(), words);
            // A shared length past the word before is an error, not a panic.
            let bad = postcard::to_allocvec(&vec![(0u32, "ab"), (5u32, "c")]).unwrap();
            assert!(postcard::from_bytes::<Words>(&bad).is_err());
            let mid = postcard::to_allocvec(&vec![(0u32, "\u{e9}"), (1u32, "x")]).unwrap();
            assert!(postcard::from_bytes::<Words>(&mid).is_err());
            // Entries that repeat a long word again and again are refused before they make
            // far more bytes than they take (200 MiB from 1 MiB here).
            let long = "x".repeat(1 << 20);
            let mut entries = vec![(0u32, long.as_str())];
            entries.extend(std::iter::repeat_n((1u32 << 20, ""), 200));
            let bytes = postcard::to_allocvec(&entries).unwrap();
            assert!(postcard::from_bytes::<Words>(&bytes).is_err());
        }
    }
}

/// The posting lists of a block of consecutive terms, as a blob stores them: each
/// term's chunk ids as gaps (its document frequency is in the [`Dictionary`]) and their term
/// frequencies.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct PostingBlock {
    gaps: Vec<u32>,
    tfs: Vec<u32>,
}

impl LexicalIndex {
    /// The surface words as stored (see [`stored`]): bit `t` of the first list says term `t` is
    /// itself a surface word; the other words (sorted) follow with their terms.
    fn surface_exceptions(&self) -> (Vec<u8>, Vec<&str>, Vec<u32>) {
        let mut own = vec![0u8; self.terms.len().div_ceil(8)];
        let (mut other_words, mut other_terms) = (Vec::new(), Vec::new());
        for (w, &t) in self.surface_words.iter().zip(&self.surface_terms) {
            if *w == self.terms[t as usize] {
                own[t as usize / 8] |= 1 << (t % 8);
            } else {
                other_words.push(w.as_str());
                other_terms.push(t);
            }
        }
        (own, other_words, other_terms)
    }

    /// This index's [`Dictionary`].
    pub(crate) fn dictionary(&self) -> Dictionary {
        let (own, other_words, other_terms) = self.surface_exceptions();
        Dictionary {
            terms: self.terms.clone(),
            dfs: self.offsets.windows(2).map(|w| w[1] - w[0]).collect(),
            own,
            other_words: other_words.into_iter().map(str::to_string).collect(),
            other_terms,
            lengths: self.lengths.clone(),
        }
    }

    /// The postings of terms `terms` (dictionary positions) as a [`PostingBlock`].
    pub(crate) fn posting_block(&self, terms: std::ops::Range<usize>) -> PostingBlock {
        let mut block = PostingBlock::default();
        for t in terms {
            let (chunks, tfs) = self.postings_of(t);
            let mut last = 0;
            for &c in chunks {
                block.gaps.push(c - last);
                last = c;
            }
            block.tfs.extend_from_slice(tfs);
        }
        block
    }

    /// The index from its dictionary and the posting blocks at hand: block `i` holds the
    /// terms `firsts[i]..firsts[i + 1]` (the last one up to the end), `None` when it is not
    /// loaded ([`LexicalIndex::from_dictionary`], then [`LexicalIndex::set_blocks`]). With
    /// every block it is the index the blob was written from.
    ///
    /// # Errors
    /// As the two it calls.
    pub(crate) fn from_parts(
        dict: Dictionary,
        firsts: &[u32],
        blocks: &[PostingBlock],
    ) -> Result<LexicalIndex> {
        // Its look-up maps are left to the load to make, once it has checked the rest
        // (`blob::finish`).
        let mut index = LexicalIndex::from_dictionary_unindexed(dict)?;
        let blocks: Vec<Option<&PostingBlock>> = blocks.iter().map(Some).collect();
        index.set_blocks(firsts, &blocks, true)?;
        Ok(index)
    }

    /// The index of a dictionary with no posting list loaded yet: the terms, the surface
    /// words and their look-up maps, the chunk lengths, and every term's document frequency
    /// ([`LexicalIndex::df`]), so typo expansion orders candidates as the whole index would.
    /// Made once per [`crate::RangedIndex`]; [`LexicalIndex::set_blocks`] fills the lists.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the surface words disagree with the dictionary or either is
    /// unsorted.
    pub(crate) fn from_dictionary(dict: Dictionary) -> Result<LexicalIndex> {
        let mut index = LexicalIndex::from_dictionary_unindexed(dict)?;
        index.validate_dictionary()?;
        index.index_terms();
        Ok(index)
    }

    /// [`LexicalIndex::from_dictionary`] without its look-up maps, nor the order of its words
    /// checked (a whole load checks it with the rest: [`LexicalIndex::validate`]).
    fn from_dictionary_unindexed(dict: Dictionary) -> Result<LexicalIndex> {
        let bad = |d: &str| Error::corrupt(format!("lexical index: {d}"));
        if dict.dfs.len() != dict.terms.len() {
            return Err(bad("dictionary and frequencies disagree"));
        }
        // Taken, not copied: a ranged index makes this again whenever shards arrive.
        let (surface_words, surface_terms) =
            stored::surface_from(&dict.terms, &dict.own, dict.other_words, dict.other_terms)
                .map_err(bad)?;
        let index = LexicalIndex {
            offsets: vec![0; dict.terms.len() + 1],
            terms: dict.terms,
            lengths: dict.lengths,
            surface_words,
            surface_terms,
            partial_dfs: Some(dict.dfs),
            ..LexicalIndex::default()
        };
        Ok(index)
    }

    /// Replaces the posting lists with those of the blocks at hand (see
    /// [`LexicalIndex::from_parts`]); the dictionary part stays as it is. A term of a block
    /// not loaded has no postings here but keeps its document frequency; a search must load
    /// the blocks of every term it scores. Nothing changes on an error.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a block's lists disagree with the frequencies or fail the
    /// postings' checks of [`LexicalIndex::validate`], or (with every block, of the whole
    /// dictionary: `whole_dictionary`, not some of its shards) the stored chunk lengths are
    /// not the ones the postings give.
    pub(crate) fn set_blocks(
        &mut self,
        firsts: &[u32],
        blocks: &[Option<&PostingBlock>],
        whole_dictionary: bool,
    ) -> Result<()> {
        let bad = |d: &str| Error::corrupt(format!("lexical index: {d}"));
        if firsts.len() != blocks.len() {
            return Err(bad("dictionary and blocks disagree"));
        }
        // The dictionary's frequencies and chunk lengths, as the index holds them (every
        // term's, from `from_dictionary` or the lists at hand: see `df`).
        let n = self.terms.len();
        let dfs_all: Vec<u32> = (0..n).map(|t| self.df(t) as u32).collect();
        let lengths = &self.lengths;
        let mut dfs = Vec::with_capacity(n);
        let (mut gaps, mut tfs) = (Vec::new(), Vec::new());
        for (i, block) in blocks.iter().enumerate() {
            let Some(range) = dfs_all.get(block_range(firsts, i, n)) else {
                return Err(bad("a block lies outside the dictionary"));
            };
            match block {
                Some(b) => {
                    let count: u64 = range.iter().map(|&d| u64::from(d)).sum();
                    if b.gaps.len() as u64 != count || b.tfs.len() != b.gaps.len() {
                        return Err(bad("a block's lists disagree with the frequencies"));
                    }
                    dfs.extend_from_slice(range);
                    gaps.extend_from_slice(&b.gaps);
                    tfs.extend_from_slice(&b.tfs);
                }
                None => dfs.extend(std::iter::repeat_n(0, range.len())),
            }
        }
        if dfs.len() != n {
            return Err(bad("blocks do not cover the dictionary"));
        }
        let (offsets, chunks) = stored::postings_from(&dfs, &gaps).map_err(bad)?;
        // Every posting of the index: its lengths can be checked, and its frequencies are the
        // lists' (a ranged index's dictionary may be some shards, each with all its blocks).
        let complete = whole_dictionary && blocks.iter().all(Option::is_some);
        let mut next = LexicalIndex {
            offsets,
            chunks,
            tfs,
            lengths: lengths.clone(),
            ..LexicalIndex::default()
        };
        next.validate_postings(n, lengths.len())?;
        if complete {
            // The stored lengths must be the ones the postings give, as a whole load derives them.
            next.derive_lengths(lengths.len());
            if next.lengths != *lengths {
                return Err(bad("chunk lengths disagree with the postings"));
            }
        }
        (self.offsets, self.chunks, self.tfs, self.lengths) =
            (next.offsets, next.chunks, next.tfs, next.lengths);
        self.partial_dfs = (!complete).then_some(dfs_all);
        Ok(())
    }
}

/// The items of block `i` of blocks that start at `firsts` (ascending), over `0..n`.
pub(crate) fn block_range(firsts: &[u32], i: usize, n: usize) -> std::ops::Range<usize> {
    let start = firsts.get(i).map_or(n, |&f| f as usize);
    let end = firsts.get(i + 1).map_or(n, |&f| f as usize);
    start..end.max(start)
}

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
    head: Vec<String>,
    head_at: Vec<u32>,
    /// Where the chunk's text starts.
    text_at: u32,
    tail: Vec<String>,
    /// Positions of `tail` from the tail's start.
    tail_at: Vec<u32>,
}

/// Positions left free between two fields of a chunk (key, title, summary, text, each tag):
/// more than a phrase of the longest query spans in practice, so a phrase matches within one
/// field (Lucene's `position_increment_gap` of 100 for multi-valued text fields).
pub const FIELD_GAP: u32 = 100;

/// The terms a chunk is indexed under, in order, and the position of each.
pub(crate) type ChunkTerms = (Vec<String>, Vec<u32>);

impl PageFields {
    /// Analyzes `page`'s fields, recording their words in `surface`.
    pub(crate) fn new(analyzer: &Analyzer, page: &Page, surface: &mut Surface) -> PageFields {
        let (mut head, mut head_at, mut at) = (Vec::new(), Vec::new(), 0u32);
        let mut field = |text: &str, terms: &mut Vec<String>, pos: &mut Vec<u32>, at: &mut u32| {
            analyzer.terms_at_recording(text, at, terms, pos, surface);
            *at = at.saturating_add(FIELD_GAP);
        };
        field(&page.key, &mut head, &mut head_at, &mut at);
        field(&page.title, &mut head, &mut head_at, &mut at);
        if let Some(s) = &page.summary {
            field(s, &mut head, &mut head_at, &mut at);
        }
        let (mut tail, mut tail_at, mut tail_end) = (Vec::new(), Vec::new(), 0u32);
        for t in &page.tags {
            field(t, &mut tail, &mut tail_at, &mut tail_end);
        }
        PageFields {
            head,
            head_at,
            text_at: at,
            tail,
            tail_at,
        }
    }

    /// The terms a chunk of the page with text `text` is indexed under, with their positions.
    pub(crate) fn chunk_terms(
        &self,
        analyzer: &Analyzer,
        text: &str,
        surface: &mut Surface,
    ) -> ChunkTerms {
        let mut terms = self.head.clone();
        let mut positions = self.head_at.clone();
        let mut at = self.text_at;
        analyzer.terms_at_recording(text, &mut at, &mut terms, &mut positions, surface);
        let tail_from = at.saturating_add(FIELD_GAP);
        terms.extend(self.tail.iter().cloned());
        positions.extend(self.tail_at.iter().map(|p| p.saturating_add(tail_from)));
        (terms, positions)
    }
}

impl LexicalIndex {
    /// Builds the index from each chunk's analyzed terms, in chunk order, and the surface
    /// words recorded while analyzing them (see [`Analyzer::terms_into_recording`]).
    ///
    /// [`Analyzer::terms_into_recording`]: crate::text::analyze::Analyzer::terms_into_recording
    pub fn build<I>(chunk_terms: I, surface: Surface) -> LexicalIndex
    where
        I: IntoIterator<Item = Vec<String>>,
    {
        LexicalIndex::build_from(chunk_terms, surface)
    }

    /// [`LexicalIndex::build`] from borrowed (or owned) term lists.
    pub(crate) fn build_from<I>(chunk_terms: I, surface: Surface) -> LexicalIndex
    where
        I: IntoIterator,
        I::Item: AsRef<[String]>,
    {
        let mut postings: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
        let mut lengths = Vec::new();
        for (chunk, terms) in chunk_terms.into_iter().enumerate() {
            let terms = terms.as_ref();
            let chunk = u32::try_from(chunk).unwrap_or(u32::MAX);
            lengths.push(u32::try_from(terms.len()).unwrap_or(u32::MAX));
            // Count each distinct term of the chunk: sort, then take runs.
            let mut sorted: Vec<&str> = terms.iter().map(String::as_str).collect();
            crate::data::sort::sort_unstable(&mut sorted);
            let mut rest = &sorted[..];
            while let Some(&t) = rest.first() {
                let run = rest.iter().take_while(|&&u| u == t).count();
                rest = &rest[run..];
                let tf = u32::try_from(run).unwrap_or(u32::MAX);
                match postings.get_mut(t) {
                    Some(list) => list.push((chunk, tf)),
                    None => {
                        postings.insert(t.to_string(), vec![(chunk, tf)]);
                    }
                }
            }
        }
        let mut index = LexicalIndex {
            lengths,
            offsets: vec![0],
            ..LexicalIndex::default()
        };
        for (term, list) in postings {
            index.terms.push(term);
            for (c, tf) in list {
                index.chunks.push(c);
                index.tfs.push(tf);
            }
            index
                .offsets
                .push(u32::try_from(index.chunks.len()).unwrap_or(u32::MAX));
        }
        index.index_terms();
        let mut surface: Vec<(String, u32)> = surface
            .into_iter()
            .filter_map(|(w, t)| index.lookup(&t).map(|i| (w, i as u32)))
            .collect();
        crate::data::sort::sort_unstable(&mut surface);
        (index.surface_words, index.surface_terms) = surface.into_iter().unzip();
        index.index_terms();
        index
    }

    /// The index term of a normalized word, if the indexed text contains the word.
    pub fn surface_term(&self, word: &str) -> Option<&str> {
        let w = self.surface.get(&self.surface_words, word)?;
        let t = *self.surface_terms.get(w)?;
        self.terms.get(t as usize).map(String::as_str)
    }

    /// Fills the derived term → position and word → term maps (after building or decoding).
    pub(crate) fn index_terms(&mut self) {
        self.lookup = WordTable::new(&self.terms);
        self.surface = WordTable::new(&self.surface_words);
    }

    /// Restores the chunk lengths a whole blob's postings imply (see [`stored`]): each chunk's number
    /// of terms is the sum of its term frequencies. A chunk id at or past `n_chunks` is left
    /// for [`LexicalIndex::validate`] to reject.
    pub(crate) fn derive_lengths(&mut self, n_chunks: usize) {
        let mut lengths = vec![0u32; n_chunks];
        for (&c, &tf) in self.chunks.iter().zip(&self.tfs) {
            if let Some(l) = lengths.get_mut(c as usize) {
                *l = l.saturating_add(tf);
            }
        }
        self.lengths = lengths;
    }

    /// Checks internal consistency against the number of chunks (run on every load).
    pub(crate) fn validate(&self, n_chunks: usize) -> Result<()> {
        self.validate_dictionary()?;
        self.validate_postings(self.terms.len(), n_chunks)
    }

    /// The dictionary's part of [`LexicalIndex::validate`]: terms and surface words sorted,
    /// each surface word's term inside the dictionary.
    fn validate_dictionary(&self) -> Result<()> {
        let bad = |d: &str| Err(Error::corrupt(format!("lexical index: {d}")));
        if self.terms.windows(2).any(|w| w[0] >= w[1]) {
            return bad("dictionary is not sorted");
        }
        if self.surface_words.len() != self.surface_terms.len()
            || self.surface_words.windows(2).any(|w| w[0] >= w[1])
            || self
                .surface_terms
                .iter()
                .any(|&t| t as usize >= self.terms.len())
        {
            return bad("surface words are unsorted or point outside the dictionary");
        }
        Ok(())
    }

    /// The postings' part of [`LexicalIndex::validate`], for a dictionary of `n_terms`: the
    /// lengths and offsets agree, and every list is ascending, inside the chunk table, with no
    /// zero frequency.
    fn validate_postings(&self, n_terms: usize, n_chunks: usize) -> Result<()> {
        let bad = |d: &str| Err(Error::corrupt(format!("lexical index: {d}")));
        if self.lengths.len() != n_chunks {
            return bad("chunk lengths do not match the chunk count");
        }
        if self.offsets.len() != n_terms + 1 || self.offsets.first() != Some(&0) {
            return bad("term offsets do not match the dictionary");
        }
        if self.chunks.len() != self.tfs.len()
            || self.offsets.last().map(|&o| o as usize) != Some(self.chunks.len())
        {
            return bad("postings lengths disagree");
        }
        if self.offsets.windows(2).any(|w| w[0] > w[1]) {
            return bad("term offsets are not ascending");
        }
        for t in 0..n_terms {
            let Some((chunks, tfs)) = self.postings(t) else {
                return bad("a posting list lies outside the postings");
            };
            if chunks.windows(2).any(|w| w[0] >= w[1])
                || chunks.iter().any(|&c| c as usize >= n_chunks)
                || tfs.contains(&0)
            {
                return bad("a posting list is out of order or out of range");
            }
        }
        Ok(())
    }

    /// Number of chunks indexed.
    pub fn chunk_count(&self) -> usize {
        self.lengths.len()
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
    pub(crate) fn typo_words(&self) -> &[String] {
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

    /// Dictionary positions of the terms starting with `prefix`, at most `max` of them.
    pub fn prefixed(&self, prefix: &str, max: usize) -> std::ops::Range<usize> {
        let start = self.terms.partition_point(|t| t.as_str() < prefix);
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

    /// Terms in chunk `c`; `None` for a chunk outside the index.
    pub fn length(&self, c: u32) -> Option<u32> {
        self.lengths.get(c as usize).copied()
    }

    /// Precomputes, for `params`, each chunk's length normalization and each posting's
    /// impact `idf · tf · (k1 + 1) / (tf + norm)`, so that a query only adds numbers (the
    /// approach bm25s calls eager scoring). Costs 4 bytes per posting in memory; nothing in
    /// the blob.
    pub fn scorer(&self, params: Bm25Params) -> Bm25Scorer {
        let total: u64 = self.lengths.iter().map(|&l| u64::from(l)).sum();
        let avgdl = if self.lengths.is_empty() {
            1.0
        } else {
            (total as f64 / self.lengths.len() as f64).max(1e-9)
        };
        let (k1, b) = (f64::from(params.k1), f64::from(params.b));
        let norms: Vec<f32> = self
            .lengths
            .iter()
            .map(|&l| (k1 * (1.0 - b + b * f64::from(l) / avgdl)) as f32)
            .collect();
        let mut impacts = Vec::with_capacity(self.chunks.len());
        for t in 0..self.terms.len() {
            let (chunks, tfs) = self.postings_of(t);
            if chunks.is_empty() {
                // A ranged index's terms whose lists are not loaded: no logarithm for them.
                continue;
            }
            let idf = self.idf(chunks.len());
            impacts.extend(chunks.iter().zip(tfs).map(|(&c, &tf)| {
                let tf = tf as f32;
                impact(params, idf, tf, norms[c as usize])
            }));
        }
        Bm25Scorer {
            params,
            norms,
            impacts,
        }
    }

    fn idf(&self, df: usize) -> f32 {
        let n = self.lengths.len() as f64;
        let df = df as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
    }
}

/// One term's BM25 score in one chunk: `idf · tf · (k1 + 1) / (tf + norm)`, where `norm` is
/// the chunk's `k1 · (1 - b + b · |d| / avgdl)`.
fn impact(params: Bm25Params, idf: f32, tf: f32, norm: f32) -> f32 {
    idf * tf * (params.k1 + 1.0) / (tf + norm)
}

/// BM25 with the length normalization of one index precomputed.
#[derive(Debug, Clone)]
pub struct Bm25Scorer {
    params: Bm25Params,
    norms: Vec<f32>,
    /// Per posting (parallel to the index's postings): the term's BM25 score in that chunk.
    impacts: Vec<f32>,
}

impl Bm25Scorer {
    /// The `n` best chunks for the query `terms` (dictionary positions, as from
    /// [`LexicalIndex::lookup`], each with its weight) among those `mask` allows (`None`: all),
    /// by score descending then chunk index ascending. With
    /// `groups` (chunk → page, and the number of pages), only each page's best chunk competes,
    /// so `n` candidates are `n` different pages.
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
        let found = terms;
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
                let (s, e) = (index.offsets[t] as usize, index.offsets[t + 1] as usize);
                let postings = index.chunks[s..e].iter().zip(&self.impacts[s..e]);
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
            // Scores are positive, so their bit patterns order like the values: pack score and
            // inverted chunk index into one integer key.
            let mut key = |c: u32| {
                let score = std::mem::replace(&mut acc[c as usize], 0.0);
                (u64::from(score.to_bits()) << 32) | u64::from(!c)
            };
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
            keys.into_iter()
                .map(|k| (!(k as u32), f32::from_bits((k >> 32) as u32)))
                .collect()
        })
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
                        (tf, chunks.len(), index.idf(chunks.len()))
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

/// Runs `f` with this thread's scratch buffers grown to the sizes given. If `f` panics the
/// buffers are dropped rather than returned dirty.
fn with_scratch<R>(
    chunks: usize,
    groups: usize,
    postings: usize,
    f: impl FnOnce(&mut Scratch) -> R,
) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
    }
    let mut sc = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let grow = |v: &mut Vec<u32>, n: usize| {
        if v.len() < n {
            v.resize(n, 0);
        }
    };
    if sc.acc.len() < chunks {
        sc.acc.resize(chunks, 0.0);
    }
    if sc.best.len() < groups {
        sc.best.resize(groups, 0);
    }
    grow(&mut sc.touched, postings);
    grow(&mut sc.seen, postings);
    let out = f(&mut sc);
    debug_assert!(sc.acc.iter().all(|&x| x == 0.0), "score buffer left dirty");
    debug_assert!(sc.best.iter().all(|&x| x == 0), "group buffer left dirty");
    SCRATCH.with(|s| *s.borrow_mut() = sc);
    out
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
    fn the_stored_surface_words_give_back_every_word_whether_its_own_term_or_not() {
        // Words that are their own term (`system`, `comput` as typed) and words that are not
        // (`computers`, `computing`, `systems`), interleaved in sort order.
        let docs = [vec!["comput", "system"], vec!["system", "comput"]];
        let words = [
            ("comput", "comput"),
            ("computers", "comput"),
            ("computing", "comput"),
            ("system", "system"),
            ("systems", "system"),
        ];
        let surface = words
            .iter()
            .map(|&(w, t)| (w.to_string(), t.to_string()))
            .collect();
        let docs = docs
            .iter()
            .map(|d| d.iter().map(|w| w.to_string()).collect::<Vec<_>>());
        let i = LexicalIndex::build(docs, surface);
        assert_eq!(i.surface_words.len(), 5);
        let (own, other_words, other_terms) = i.surface_exceptions();
        assert_eq!(other_words, ["computers", "computing", "systems"]);
        let other_words = other_words.into_iter().map(String::from).collect();
        let (words, terms) =
            stored::surface_from(&i.terms, &own, other_words, other_terms).unwrap();
        assert_eq!(
            (words, terms),
            (i.surface_words.clone(), i.surface_terms.clone())
        );
    }

    #[test]
    fn stored_frequencies_that_overrun_the_postings_are_an_error() {
        let decode = |dfs: Vec<u32>, gaps: Vec<u32>| stored::postings_from(&dfs, &gaps);
        assert!(decode(vec![1, 1], vec![0, 2]).is_ok());
        // More postings claimed than stored, fewer, more than `u32` chunk ids reach.
        assert!(decode(vec![1, 2], vec![0, 2]).is_err());
        assert!(decode(vec![1, 0], vec![0, 2]).is_err());
        assert!(decode(vec![0, 2], vec![u32::MAX, 1]).is_err());
    }

    #[test]
    fn stored_surface_words_that_disagree_with_the_dictionary_are_an_error() {
        let decode = |own: Vec<u8>, other_words: Vec<&str>, other_terms: Vec<u32>| {
            let terms = ["a", "b"].map(String::from);
            let other_words = other_words.into_iter().map(String::from).collect();
            stored::surface_from(&terms, &own, other_words, other_terms)
        };
        assert!(decode(vec![0b11], vec!["bb"], vec![1]).is_ok());
        // A bit past the dictionary, a bitmap of the wrong length, and words without terms.
        assert!(decode(vec![0b111], vec![], vec![]).is_err());
        assert!(decode(vec![0, 0], vec![], vec![]).is_err());
        assert!(decode(vec![0], vec!["bb"], vec![]).is_err());
    }

    proptest::proptest! {
        /// The word table finds each word of its list at its position, and no other word.
        #[test]
        fn a_word_table_finds_each_word_where_it_is_and_nothing_else(
            words in proptest::collection::btree_set("[abcé猫]{0,5}", 0..200),
            absent in proptest::collection::vec("[abcdé猫]{0,6}", 0..50),
        ) {
            let words: Vec<String> = words.into_iter().collect();
            let table = WordTable::new(&words);
            for (i, w) in words.iter().enumerate() {
                proptest::prop_assert_eq!(table.get(&words, w), Some(i));
            }
            for w in &absent {
                proptest::prop_assert_eq!(table.get(&words, w), words.iter().position(|x| x == w));
            }
        }
    }

    #[test]
    fn an_empty_word_table_finds_nothing() {
        let table = WordTable::new(&[]);
        assert_eq!(table.get(&[], ""), None);
        assert_eq!(table.get(&[], "a"), None);
    }

    /// A dictionary's fields, to compare two (it has no `PartialEq`: a search never compares).
    fn fields(d: &Dictionary) -> Vec<u8> {
        postcard::to_allocvec(d).unwrap()
    }

    #[test]
    fn concatenated_shards_are_the_dictionary_assembled_from_them_all() {
        let i = LexicalIndex::build(
            [
                "alpha beta gamma delta",
                "beta epsilon zeta eta",
                "theta iota kappa alpha",
            ]
            .iter()
            .map(|d| d.split_whitespace().map(str::to_string).collect()),
            [("alphas", "alpha"), ("betas", "beta"), ("zetas", "zeta")]
                .iter()
                .map(|&(w, t)| (w.to_string(), t.to_string()))
                .collect(),
        );
        let whole = i.dictionary();
        let n = whole.terms.len();
        // The shards as a blob cuts them: each other word with the shard of the term before it.
        let cut = |firsts: &[u32]| -> Vec<Dictionary> {
            (0..firsts.len())
                .map(|j| {
                    let terms = block_range(firsts, j, n);
                    let words_from = |j: usize| match j {
                        0 => 0,
                        j => firsts.get(j).map_or(whole.other_words.len(), |&f| {
                            let first = &whole.terms[f as usize];
                            whole.other_words.partition_point(|w| w < first)
                        }),
                    };
                    whole.shard(terms, words_from(j)..words_from(j + 1))
                })
                .collect()
        };
        for firsts in [
            vec![0],
            vec![0, 3],
            vec![0, 1, 5, 9],
            (0..n as u32).collect(),
        ] {
            let shards = cut(&firsts);
            let refs: Vec<Option<&Dictionary>> = shards.iter().map(Some).collect();
            let assembled = Dictionary::assemble(&whole.lengths, n, &firsts, &refs).unwrap();
            let concat = Dictionary::concat(whole.lengths.clone(), n, &firsts, shards).unwrap();
            assert_eq!(fields(&concat), fields(&assembled), "{firsts:?}");
            assert_eq!(fields(&concat), fields(&whole), "{firsts:?}");
        }
        // A shard of another size, a shard too many, a word's term past the dictionary.
        let firsts = [0, 3];
        assert!(Dictionary::concat(vec![], n, &[0, 4], cut(&firsts)).is_err());
        assert!(Dictionary::concat(vec![], n, &[0], cut(&firsts)).is_err());
        let mut shards = cut(&firsts);
        shards[1].other_terms.push(n as u32);
        shards[1].other_words.push("zz".into());
        assert!(Dictionary::concat(vec![], n, &firsts, shards).is_err());
    }

    /// Query terms as the lane takes them: dictionary positions with weights.
    fn at(i: &LexicalIndex, q: &[(&str, f32)]) -> Vec<(usize, f32)> {
        q.iter()
            .filter_map(|&(t, w)| i.lookup(t).map(|t| (t, w)))
            .collect()
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
    fn rarer_terms_score_higher() {
        let i = idx(&["common rare", "common", "common", "common"]);
        let s = i.scorer(Bm25Params::default());
        let q = [("rare", 1.0), ("common", 1.0)];
        let hits = s.search(&i, &at(&i, &q), None, None, 10);
        assert_eq!(hits[0].0, 0);
        let ex = s.explain(&i, &q, 0);
        assert!(ex[0].idf > ex[1].idf);
        assert!((ex.iter().map(|e| e.score).sum::<f32>() - hits[0].1).abs() < 1e-5);
    }

    #[test]
    fn mask_excludes_chunks() {
        let i = idx(&["x", "x"]);
        let s = i.scorer(Bm25Params::default());
        let hits = s.search(&i, &at(&i, &[("x", 1.0)]), Some(&[false, true]), None, 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn groups_keep_only_the_best_chunk_of_each() {
        let i = idx(&["x x", "x", "x x x", "y"]);
        let s = i.scorer(Bm25Params::default());
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

    #[test]
    fn prefix_range_is_capped() {
        let i = idx(&["rev revenu review zeta"]);
        let r = i.prefixed("rev", 10);
        assert_eq!(r.len(), 3);
        assert_eq!(i.prefixed("rev", 2).len(), 2);
        assert_eq!(i.prefixed("q", 10).len(), 0);
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
