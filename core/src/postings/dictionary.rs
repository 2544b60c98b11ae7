//! The dictionary as a blob stores it, in shards, and the front coding of its word lists.

use serde::{Deserialize, Serialize};

use super::stored::block_range;
use super::words::WordList;
use crate::data::error::{Error, Result};

/// The lexical index's dictionary as a blob's dictionary shards store it ([`crate::blob`]): the terms, their document frequencies, the surface words (as in
/// [`super::stored`]) and each chunk's length. With it a search can analyze a query, expand its typos
/// and prefixes and score with BM25 before any posting list is loaded: the lists come in
/// blocks of consecutive terms ([`super::PostingBlock`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Dictionary {
    #[serde(with = "front_coded")]
    pub(super) terms: WordList,
    pub(super) dfs: Vec<u32>,
    pub(super) own: Vec<u8>,
    #[serde(with = "front_coded")]
    pub(super) other_words: WordList,
    pub(super) other_terms: Vec<u32>,
    pub(super) lengths: Vec<u32>,
}

impl Dictionary {
    /// Number of chunks.
    pub(crate) fn chunk_count(&self) -> usize {
        self.lengths.len()
    }

    /// The terms, sorted.
    pub(crate) fn terms(&self) -> &WordList {
        &self.terms
    }

    /// The surface words that are not their own term, sorted.
    pub(crate) fn other_words(&self) -> &WordList {
        &self.other_words
    }

    /// The terms (dictionary positions) of [`Dictionary::other_words`].
    pub(crate) fn other_terms(&self) -> &[u32] {
        &self.other_terms
    }

    /// The chunk lengths alone: what a blob's head keeps of the dictionary.
    pub(crate) fn lengths_only(&self) -> Dictionary {
        Dictionary {
            terms: WordList::default(),
            dfs: Vec::new(),
            own: Vec::new(),
            other_words: WordList::default(),
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
            terms: self.terms.slice(terms.clone()),
            dfs: self.dfs[terms].to_vec(),
            own,
            other_words: self.other_words.slice(words.clone()),
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
        // Where each shard's terms start here (`None`: not at hand).
        let (starts, n) = shard_starts(firsts, n_terms, shards.iter().copied())?;
        let here = |t: u32| -> Result<Option<u32>> {
            if t as usize >= n_terms {
                return Err(bad("a surface word's term lies outside the dictionary"));
            }
            let i = firsts.partition_point(|&f| f <= t).saturating_sub(1);
            Ok(starts[i].map(|s| s + (t - firsts[i])))
        };
        let bytes = shards.iter().flatten().map(|d| d.terms.bytes()).sum();
        let mut out = Dictionary {
            terms: WordList::with_capacity(n, bytes),
            dfs: Vec::with_capacity(n),
            own: vec![0u8; n.div_ceil(8)],
            other_words: WordList::default(),
            other_terms: Vec::new(),
            lengths: lengths.to_vec(),
        };
        for d in shards.iter().flatten() {
            copy_own(&mut out.own, out.terms.len(), d);
            out.terms.extend_from(&d.terms, 0..d.terms.len());
            out.dfs.extend_from_slice(&d.dfs);
            for (w, &t) in d.other_words.iter().zip(&d.other_terms) {
                if let Some(t) = here(t)? {
                    out.other_words.push(w);
                    out.other_terms.push(t);
                }
            }
        }
        Ok(out)
    }

    /// The dictionary of every shard, in order, as one: what [`Dictionary::assemble`] makes of
    /// them all (the same checks), each shard's words copied at once (a whole load).
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
        let (_, n) = shard_starts(firsts, n_terms, shards.iter().map(Some))?;
        let words: usize = shards.iter().map(|d| d.other_words.len()).sum();
        let bytes =
            |list: fn(&Dictionary) -> &WordList| shards.iter().map(|d| list(d).bytes()).sum();
        let mut out = Dictionary {
            terms: WordList::with_capacity(n, bytes(|d| &d.terms)),
            dfs: Vec::with_capacity(n),
            own: vec![0u8; n.div_ceil(8)],
            other_words: WordList::with_capacity(words, bytes(|d| &d.other_words)),
            other_terms: Vec::with_capacity(words),
            lengths,
        };
        for d in shards {
            copy_own(&mut out.own, out.terms.len(), &d);
            // With every shard, a term is numbered here as in the whole dictionary.
            if d.other_terms.iter().any(|&t| t as usize >= n_terms) {
                return Err(bad("a surface word's term lies outside the dictionary"));
            }
            out.terms.extend_from(&d.terms, 0..d.terms.len());
            out.dfs.extend(d.dfs);
            out.other_words
                .extend_from(&d.other_words, 0..d.other_words.len());
            out.other_terms.extend(d.other_terms);
        }
        Ok(out)
    }
}

/// Where each of `shards` (`None`: not at hand) starts among the terms of those at hand, and
/// how many terms they hold; shard `i` holds the terms `firsts[i]..firsts[i + 1]` of a
/// dictionary of `n_terms`.
///
/// # Errors
/// [`Error::Corrupt`] when the head and the shards disagree in number, or a shard holds
/// another number of terms than the head gives it.
fn shard_starts<'a>(
    firsts: &[u32],
    n_terms: usize,
    shards: impl ExactSizeIterator<Item = Option<&'a Dictionary>>,
) -> Result<(Vec<Option<u32>>, usize)> {
    let bad = |d: &str| Error::corrupt(format!("dictionary shards: {d}"));
    if firsts.len() != shards.len() {
        return Err(bad("the head and the shards disagree"));
    }
    let mut starts = Vec::with_capacity(firsts.len());
    let mut n = 0usize;
    for (i, shard) in shards.enumerate() {
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
    Ok((starts, n))
}

/// Sets in `own` (the bits of a dictionary being assembled) shard `d`'s own bits, its terms
/// starting at term `at`.
fn copy_own(own: &mut [u8], at: usize, d: &Dictionary) {
    for k in 0..d.terms.len() {
        if d.own.get(k / 8).is_some_and(|b| b & (1 << (k % 8)) != 0) {
            own[(at + k) / 8] |= 1 << ((at + k) % 8);
        }
    }
}

/// A sorted list of words stored front-coded: each word as the length of the prefix it shares
/// with the word before (in bytes) and the rest, which on CACM's dictionary deflates to 40%
/// fewer bytes than the words whole. The list is a `Vec<String>` or a [`WordList`]; both give
/// the same bytes.
pub(crate) mod front_coded {
    use serde::de::{DeserializeSeed, Error as _, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    use super::WordList;
    use crate::data::error::decode_error;

    /// A list of words as front coding writes it.
    pub(crate) trait Coded {
        /// The words in order.
        fn words(&self) -> impl ExactSizeIterator<Item = &str>;
    }

    /// A list of words as front coding reads it.
    pub(crate) trait Decoded: Default {
        /// The last word, `""` for none.
        fn last_word(&self) -> &str;
        /// Adds the first `shared` bytes of the last word (a character boundary in it), then
        /// `rest`.
        fn push_coded(&mut self, shared: usize, rest: &str);
    }

    impl<T: Coded> Coded for &T {
        fn words(&self) -> impl ExactSizeIterator<Item = &str> {
            (*self).words()
        }
    }

    impl Coded for Vec<String> {
        fn words(&self) -> impl ExactSizeIterator<Item = &str> {
            self.iter().map(String::as_str)
        }
    }

    impl Decoded for Vec<String> {
        fn last_word(&self) -> &str {
            self.last().map_or("", String::as_str)
        }

        fn push_coded(&mut self, shared: usize, rest: &str) {
            let head = &self.last_word()[..shared];
            let mut word = String::with_capacity(head.len() + rest.len());
            word.push_str(head);
            word.push_str(rest);
            self.push(word);
        }
    }

    impl Coded for WordList {
        fn words(&self) -> impl ExactSizeIterator<Item = &str> {
            self.iter()
        }
    }

    impl Decoded for WordList {
        fn last_word(&self) -> &str {
            self.last().unwrap_or_default()
        }

        fn push_coded(&mut self, shared: usize, rest: &str) {
            self.push_after_last(shared, rest);
        }
    }

    pub(crate) fn serialize<S: Serializer, L: Coded>(words: &L, s: S) -> Result<S::Ok, S::Error> {
        let mut prev = "";
        s.collect_seq(words.words().map(|w| {
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

    /// Each word is made as its entry is read (a sharded head's page keys and every dictionary
    /// shard come this way: decoding them is on the way to a first result).
    pub(crate) fn deserialize<'de, D: Deserializer<'de>, L: Decoded>(d: D) -> Result<L, D::Error> {
        d.deserialize_seq(Entries(std::marker::PhantomData))
    }

    struct Entries<L>(std::marker::PhantomData<L>);

    impl<'de, L: Decoded> Visitor<'de> for Entries<L> {
        type Value = L;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("front-coded words")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<L, A::Error> {
            let mut words = L::default();
            // A word may repeat all of the one before, so bytes that ask for a long word again
            // and again would make words far beyond their own size: they may make 64 bytes of
            // words for each of theirs (about two bytes an entry and its rest), or 64 MiB.
            let (mut read, mut made) = (0usize, 0usize);
            loop {
                let next = Next {
                    words: &mut words,
                    budget: (64usize << 20)
                        .max(read.saturating_mul(64))
                        .saturating_sub(made),
                };
                let Some((word, rest)) = seq.next_element_seed(next)? else {
                    break;
                };
                read += rest + 2;
                made += word;
            }
            Ok(words)
        }
    }

    /// One entry, `(shared, rest)`: the first `shared` bytes of the last of `words`, then
    /// `rest`, added to `words`; at most `budget` bytes. Gives the lengths of the word and of
    /// its rest.
    struct Next<'a, L> {
        words: &'a mut L,
        budget: usize,
    }

    impl<'de, L: Decoded> DeserializeSeed<'de> for Next<'_, L> {
        type Value = (usize, usize);

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(usize, usize), D::Error> {
            d.deserialize_tuple(2, self)
        }
    }

    impl<'de, L: Decoded> Visitor<'de> for Next<'_, L> {
        type Value = (usize, usize);

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a shared length and the rest of a word")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(usize, usize), A::Error> {
            let missing = || A::Error::invalid_length(0, &"a shared length and the rest of a word");
            let shared: u32 = seq.next_element()?.ok_or_else(missing)?;
            let shared = shared as usize;
            if self.words.last_word().get(..shared).is_none() {
                return Err(decode_error(
                    "a front-coded word shares more than the word before",
                ));
            }
            let rest = Rest {
                words: self.words,
                shared,
                budget: self.budget,
            };
            seq.next_element_seed(rest)?.ok_or_else(missing)
        }
    }

    /// The rest of a word, added with the `shared` bytes before it to `words` as it is read
    /// (borrowed from the bytes where the decoder can, so with no copy of its own).
    struct Rest<'a, L> {
        words: &'a mut L,
        shared: usize,
        budget: usize,
    }

    impl<'de, L: Decoded> DeserializeSeed<'de> for Rest<'_, L> {
        type Value = (usize, usize);

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(usize, usize), D::Error> {
            d.deserialize_str(self)
        }
    }

    impl<'de, L: Decoded> Visitor<'de> for Rest<'_, L> {
        type Value = (usize, usize);

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("the rest of a word")
        }

        fn visit_str<E: serde::de::Error>(self, rest: &str) -> Result<(usize, usize), E> {
            if self.shared + rest.len() > self.budget {
                return Err(decode_error(
                    "front-coded words make far more bytes than they take",
                ));
            }
            self.words.push_coded(self.shared, rest);
            Ok((self.shared + rest.len(), rest.len()))
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
            // A word list codes to the same bytes, and decodes from them.
            #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
            struct List(#[serde(with = "super")] super::WordList);
            let list = List(words.0.iter().map(String::as_str).collect());
            assert_eq!(postcard::to_allocvec(&list).unwrap(), bytes);
            assert_eq!(postcard::from_bytes::<List>(&bytes).unwrap(), list);
            // A shared length past the word before is an error, not a panic.
            let bad = postcard::to_allocvec(&vec![(0u32, "ab"), (5u32, "c")]).unwrap();
            assert!(postcard::from_bytes::<Words>(&bad).is_err());
            assert!(postcard::from_bytes::<List>(&bad).is_err());
            let mid = postcard::to_allocvec(&vec![(0u32, "\u{e9}"), (1u32, "x")]).unwrap();
            assert!(postcard::from_bytes::<Words>(&mid).is_err());
            assert!(postcard::from_bytes::<List>(&mid).is_err());
            // Entries that repeat a long word again and again are refused before they make
            // far more bytes than they take (200 MiB from 1 MiB here).
            let long = "x".repeat(1 << 20);
            let mut entries = vec![(0u32, long.as_str())];
            entries.extend(std::iter::repeat_n((1u32 << 20, ""), 200));
            let bytes = postcard::to_allocvec(&entries).unwrap();
            assert!(postcard::from_bytes::<Words>(&bytes).is_err());
            assert!(postcard::from_bytes::<List>(&bytes).is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::postings::LexicalIndex;

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
        shards[1].other_words.push("zz");
        assert!(Dictionary::concat(vec![], n, &firsts, shards).is_err());
    }
}
