//! The compact form in which blobs store the lexical index's postings (in [`PostingBlock`]s)
//! and surface words (in [`Dictionary`] shards). Every number a load can derive is left out,
//! and the rest is stored as small numbers: each term's document frequency instead of where
//! its postings start, each chunk id as its gap from the one before in the term's list
//! (ascending, so a gap is at least 1 but for the first), and no chunk lengths beyond the
//! head's. The surface words are stored as exceptions: most words are their own term
//! (`system`), and those are one bit per term; only the words whose term differs
//! (`computers` → `comput`) are stored with their term.

use serde::Serialize;

use super::{Dictionary, LexicalIndex, WordList};
use crate::data::error::{Error, Result};

/// What a posting list that is not ascending, leaves the chunk table or holds a zero frequency
/// is.
const OUT_OF_ORDER: &str = "a posting list is out of order or out of range";

/// Writes the chunk ids of the posting lists of terms with document frequencies `dfs` (their
/// gaps stored, see [the module](self), as many as the frequencies add up to) into `chunks`
/// (as many), checking each list as [`LexicalIndex::validate`] relies on: ascending, and every
/// chunk id below `n_chunks`. The lengths are checked too, though `set_blocks` gives it a
/// block's gaps and place after holding their length to the frequencies.
pub(crate) fn decode_postings(
    dfs: &[u32],
    gaps: impl IntoIterator<Item = u32>,
    n_chunks: usize,
    chunks: &mut [u32],
) -> Result<(), &'static str> {
    let mut gaps = gaps.into_iter();
    let mut at: usize = 0;
    for &df in dfs {
        let end = at
            .checked_add(df as usize)
            .filter(|&e| e <= chunks.len())
            .ok_or("a posting list lies outside the postings")?;
        let mut last: Option<u32> = None;
        for out in &mut chunks[at..end] {
            let gap = gaps.next().ok_or("postings lengths disagree")?;
            let c = match last {
                None => gap,
                Some(_) if gap == 0 => return Err(OUT_OF_ORDER),
                Some(l) => l.checked_add(gap).ok_or("a chunk id overflows")?,
            };
            if c as usize >= n_chunks {
                return Err(OUT_OF_ORDER);
            }
            *out = c;
            last = Some(c);
        }
        at = end;
    }
    if at != chunks.len() || gaps.next().is_some() {
        return Err("postings lengths disagree");
    }
    Ok(())
}

/// The surface words (sorted) and their terms, from the terms that are their own word
/// (bit `t` of `own`) and the other words with their terms (see [the module](self)).
pub(crate) fn surface_from(
    terms: &WordList,
    own: &[u8],
    other_words: &WordList,
    other_terms: Vec<u32>,
) -> Result<(WordList, Vec<u32>), &'static str> {
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
    let mut other = other_words.iter().zip(other_terms).peekable();
    let (mut surface_words, mut surface_terms) = (WordList::default(), Vec::new());
    loop {
        if let Some(t) = mine.next_if(|&t| other.peek().is_none_or(|(w, _)| &terms[t] <= *w)) {
            surface_words.push(&terms[t]);
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

/// A load makes the chunk ids of its postings on a thread for every this many postings at
/// least; the tests make every index's on all the cores.
const POSTINGS_A_THREAD: usize = if cfg!(test) { 1 } else { 1 << 16 };

/// The posting lists of a block of consecutive terms, as a blob stores them: each term's chunk
/// ids as gaps (its document frequency is in the [`Dictionary`]) and their term frequencies,
/// the postcard encoding of [`StoredBlock`]. A load keeps a block as the bytes it inflated to,
/// checked well formed, and makes its numbers only where the lexical index holds them
/// ([`LexicalIndex::set_blocks`]): as bytes a block takes a third of the memory of its numbers
/// or less (most gaps and frequencies are a byte).
#[derive(Debug, Clone)]
pub(crate) struct PostingBlock {
    /// The postcard bytes: the number of postings, their gaps, the number again, their term
    /// frequencies, each a varint of at most 32 bits.
    bytes: Vec<u8>,
    /// How many postings.
    len: usize,
    /// Where the gaps start in `bytes`, and the term frequencies.
    gaps_at: usize,
    tfs_at: usize,
}

/// A block of postings as a save writes it ([`PostingBlock`]).
#[derive(Debug, Default, Serialize)]
pub(crate) struct StoredBlock {
    gaps: Vec<u32>,
    tfs: Vec<u32>,
}

impl PostingBlock {
    /// The block of the postcard bytes `bytes` (inflated), checked: two lists of as many
    /// numbers, each number a varint of at most 32 bits, and nothing after them.
    ///
    /// # Errors
    /// What is wrong with them, for bytes that are not such lists.
    pub(crate) fn from_bytes(mut bytes: Vec<u8>) -> Result<PostingBlock, &'static str> {
        let bad = "a block of postings is not two lists of as many numbers";
        // Each number takes a byte at least, so a list's length is checked against the bytes
        // before the walk.
        let list = |at: &mut usize| -> Result<(usize, usize), &'static str> {
            let len = take_varint(&bytes, at).ok_or(bad)? as usize;
            let start = *at;
            if len > bytes.len() - start {
                return Err(bad);
            }
            for _ in 0..len {
                take_varint(&bytes, at).ok_or(bad)?;
            }
            Ok((len, start))
        };
        let mut at = 0;
        let (len, gaps_at) = list(&mut at)?;
        let (tfs_len, tfs_at) = list(&mut at)?;
        if tfs_len != len || at != bytes.len() {
            return Err(bad);
        }
        // A ranged index keeps its blocks: not the room the inflater left.
        bytes.shrink_to_fit();
        Ok(PostingBlock {
            bytes,
            len,
            gaps_at,
            tfs_at,
        })
    }

    /// The `len` numbers from byte `at` (checked by [`PostingBlock::from_bytes`]).
    fn numbers(&self, at: usize) -> impl Iterator<Item = u32> + '_ {
        let mut at = at;
        std::iter::from_fn(move || take_varint(&self.bytes, &mut at)).take(self.len)
    }

    /// The chunk ids' gaps.
    fn gaps(&self) -> impl Iterator<Item = u32> + '_ {
        self.numbers(self.gaps_at)
    }

    /// The term frequencies.
    fn tfs(&self) -> impl Iterator<Item = u32> + '_ {
        self.numbers(self.tfs_at)
    }

    /// The block of `stored`, as a load reads it.
    #[cfg(test)]
    pub(crate) fn of(stored: &StoredBlock) -> PostingBlock {
        PostingBlock::from_bytes(postcard::to_allocvec(stored).unwrap()).unwrap()
    }
}

/// Reads an unsigned LEB128 varint of at most 32 bits (as postcard writes a `u32`) at `*at`,
/// moving past it.
pub(crate) fn take_varint(data: &[u8], at: &mut usize) -> Option<u32> {
    let mut v: u32 = 0;
    for shift in (0..35).step_by(7) {
        let b = *data.get(*at)?;
        *at += 1;
        let bits = u32::from(b & 0x7f);
        if shift == 28 && bits > 0x0f {
            return None;
        }
        v |= bits << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

impl LexicalIndex {
    /// The surface words as stored (see [the module](self)): bit `t` of the first list says
    /// term `t` is itself a surface word; the other words (sorted) follow with their terms.
    fn surface_exceptions(&self) -> (Vec<u8>, Vec<&str>, Vec<u32>) {
        let mut own = vec![0u8; self.terms.len().div_ceil(8)];
        let (mut other_words, mut other_terms) = (Vec::new(), Vec::new());
        for (w, &t) in self.surface_words.iter().zip(&self.surface_terms) {
            if w == &self.terms[t as usize] {
                own[t as usize / 8] |= 1 << (t % 8);
            } else {
                other_words.push(w);
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
            other_words: other_words.into_iter().collect(),
            other_terms,
            lengths: self.lengths.clone(),
        }
    }

    /// The postings of terms `terms` (dictionary positions) as a save writes them.
    pub(crate) fn posting_block(&self, terms: std::ops::Range<usize>) -> StoredBlock {
        let mut block = StoredBlock::default();
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
        // The dictionary's lists taken, not copied (the other surface words are merged into a
        // list of their own): a ranged index makes this again whenever shards arrive.
        let (surface_words, surface_terms) =
            surface_from(&dict.terms, &dict.own, &dict.other_words, dict.other_terms)
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
    /// [`Error::Corrupt`] when a block's lists disagree with the frequencies (every block's
    /// lengths are checked before any list), a list is not ascending, leaves the chunk table or
    /// holds a zero frequency (the first such block's), or (with every block, of the whole
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
        // Where each term's list ends, from the frequencies, and the terms of each block at
        // hand.
        let mut offsets: Vec<u32> = Vec::with_capacity(n + 1);
        offsets.push(0);
        let mut at: u64 = 0;
        let mut present = Vec::new();
        for (i, block) in blocks.iter().enumerate() {
            let terms = block_range(firsts, i, n);
            let Some(range) = dfs_all.get(terms.clone()) else {
                return Err(bad("a block lies outside the dictionary"));
            };
            match block {
                Some(b) => {
                    let count: u64 = range.iter().map(|&d| u64::from(d)).sum();
                    if b.len as u64 != count {
                        return Err(bad("a block's lists disagree with the frequencies"));
                    }
                    for &df in range {
                        at += u64::from(df);
                        offsets.push(u32::try_from(at).map_err(|_| bad("too many postings"))?);
                    }
                    present.push((*b, terms));
                }
                None => {
                    let at = offsets.last().copied().unwrap_or(0);
                    offsets.extend(std::iter::repeat_n(at, range.len()));
                }
            }
        }
        if offsets.len() != n + 1 {
            return Err(bad("blocks do not cover the dictionary"));
        }
        // Each block's chunk ids made from its gaps in its place in the one list, and its
        // lists checked there, on every core (a whole load's are tens of millions).
        let total = at as usize;
        let (mut chunks, mut tfs) = (vec![0u32; total], vec![0u32; total]);
        let mut places = Vec::with_capacity(present.len());
        let (mut rest_chunks, mut rest_tfs) = (&mut chunks[..], &mut tfs[..]);
        for (b, terms) in present {
            let (c, r) = std::mem::take(&mut rest_chunks).split_at_mut(b.len);
            let (t, rt) = std::mem::take(&mut rest_tfs).split_at_mut(b.len);
            (rest_chunks, rest_tfs) = (r, rt);
            places.push((b, terms, c, t));
        }
        let n_chunks = lengths.len();
        let threads = crate::data::parallel::threads_for(total, POSTINGS_A_THREAD);
        let decoded = crate::data::parallel::map_owned(places, threads, |place| {
            let (b, terms, chunks, tfs) = place;
            decode_postings(&dfs_all[terms], b.gaps(), n_chunks, chunks)?;
            for (out, tf) in tfs.iter_mut().zip(b.tfs()) {
                if tf == 0 {
                    return Err(OUT_OF_ORDER);
                }
                *out = tf;
            }
            Ok(())
        });
        decoded
            .into_iter()
            .collect::<Result<(), _>>()
            .map_err(bad)?;
        // Every posting of the index: its lengths can be checked, and its frequencies are the
        // lists' (a ranged index's dictionary may be some shards, each with all its blocks).
        // The stored lengths must be the ones the postings give, as a whole load derives them.
        let complete = whole_dictionary && blocks.iter().all(Option::is_some);
        if complete && lengths_of(&chunks, &tfs, n_chunks) != *lengths {
            return Err(bad("chunk lengths disagree with the postings"));
        }
        (self.offsets, self.chunks, self.tfs) = (offsets, chunks, tfs);
        self.partial_dfs = (!complete).then_some(dfs_all);
        Ok(())
    }
}

/// The chunk lengths postings imply: each chunk's number of terms is the sum of its term
/// frequencies (every chunk id below `n_chunks`, as [`decode_postings`] checks).
fn lengths_of(chunks: &[u32], tfs: &[u32], n_chunks: usize) -> Vec<u32> {
    let mut lengths = vec![0u32; n_chunks];
    for (&c, &tf) in chunks.iter().zip(tfs) {
        if let Some(l) = lengths.get_mut(c as usize) {
            *l = l.saturating_add(tf);
        }
    }
    lengths
}

/// The items of block `i` of blocks that start at `firsts` (ascending), over `0..n`.
pub(crate) fn block_range(firsts: &[u32], i: usize, n: usize) -> std::ops::Range<usize> {
    let start = firsts.get(i).map_or(n, |&f| f as usize);
    let end = firsts.get(i + 1).map_or(n, |&f| f as usize);
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let other_words = other_words.into_iter().collect();
        let (words, terms) = surface_from(&i.terms, &own, &other_words, other_terms).unwrap();
        assert_eq!(
            (words, terms),
            (i.surface_words.clone(), i.surface_terms.clone())
        );
    }

    #[test]
    fn a_loaded_index_is_valid_once_every_block_is_set_for_its_chunks() {
        let whole = crate::postings::test_index(&["alpha beta", "beta gamma", "delta alpha"]);
        let firsts = [0, 2];
        let n = whole.terms.len();
        let blocks: Vec<PostingBlock> = [0..2, 2..n]
            .map(|r| PostingBlock::of(&whole.posting_block(r)))
            .to_vec();
        let mut loaded = LexicalIndex::from_dictionary(whole.dictionary()).unwrap();
        // No postings yet, then one block of two: lists are missing.
        assert!(loaded.validate(3).is_err());
        loaded
            .set_blocks(&firsts, &[Some(&blocks[0]), None], true)
            .unwrap();
        assert!(loaded.validate(3).is_err());
        loaded
            .set_blocks(&firsts, &[Some(&blocks[0]), Some(&blocks[1])], true)
            .unwrap();
        loaded.validate(3).unwrap();
        assert_eq!(loaded, whole);
        // Lengths for another number of chunks.
        assert!(loaded.validate(4).is_err());
    }

    #[test]
    fn stored_frequencies_that_overrun_the_postings_are_an_error() {
        let decode = |dfs: Vec<u32>, gaps: Vec<u32>| {
            let mut chunks = vec![0; gaps.len()];
            decode_postings(&dfs, gaps, 1 << 20, &mut chunks).map(|()| chunks)
        };
        assert_eq!(decode(vec![1, 2], vec![0, 2, 3]), Ok(vec![0, 2, 5]));
        // More postings claimed than stored, fewer, more than `u32` chunk ids reach.
        assert!(decode(vec![1, 2], vec![0, 2]).is_err());
        assert!(decode(vec![1, 0], vec![0, 2]).is_err());
        assert!(decode(vec![0, 2], vec![u32::MAX, 1]).is_err());
        // A chunk twice in a list (a gap of 0 after its first), one past the chunk table.
        assert!(decode(vec![2], vec![3, 0]).is_err());
        assert!(decode(vec![1, 1], vec![3, 0]).is_ok());
        let past = |gaps: Vec<u32>| decode_postings(&[2], gaps, 5, &mut [0, 0]);
        assert!(past(vec![1, 3]).is_ok());
        assert!(past(vec![1, 4]).is_err());
    }

    #[test]
    fn a_block_read_as_bytes_gives_back_its_numbers_and_refuses_bytes_that_are_not_two_lists() {
        let stored = StoredBlock {
            gaps: vec![0, 127, 128, u32::MAX],
            tfs: vec![1, 300, 2, 16_384],
        };
        let bytes = postcard::to_allocvec(&stored).unwrap();
        let block = PostingBlock::from_bytes(bytes.clone()).unwrap();
        assert_eq!(block.gaps().collect::<Vec<_>>(), stored.gaps);
        assert_eq!(block.tfs().collect::<Vec<_>>(), stored.tfs);
        // Cut short anywhere, a byte more, lists of unequal lengths, a number past 32 bits.
        for cut in 0..bytes.len() {
            assert!(
                PostingBlock::from_bytes(bytes[..cut].to_vec()).is_err(),
                "{cut}"
            );
        }
        assert!(PostingBlock::from_bytes([&bytes[..], &[0]].concat()).is_err());
        let unequal = StoredBlock {
            gaps: vec![1, 2],
            tfs: vec![1],
        };
        assert!(PostingBlock::from_bytes(postcard::to_allocvec(&unequal).unwrap()).is_err());
        assert!(PostingBlock::from_bytes(vec![1, 0xff, 0xff, 0xff, 0xff, 0x1f, 1, 1]).is_err());
        assert!(PostingBlock::from_bytes(vec![1, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1]).is_ok());
        // A length claiming more numbers than there are bytes.
        assert!(PostingBlock::from_bytes(vec![0xff, 0xff, 0x03, 0]).is_err());
    }

    #[test]
    fn a_block_whose_lists_leave_the_chunk_table_or_hold_a_zero_frequency_is_refused() {
        let whole = crate::postings::test_index(&["alpha beta", "beta gamma", "delta alpha"]);
        let n = whole.terms.len();
        let firsts = [0, 2];
        let blocks: Vec<PostingBlock> = [0..2, 2..n]
            .map(|r| PostingBlock::of(&whole.posting_block(r)))
            .to_vec();
        // As some shards of a dictionary set them (so the chunk lengths are not held to the
        // lists): only the lists' own checks refuse them.
        let set = |second: &PostingBlock| {
            let mut loaded = LexicalIndex::from_dictionary(whole.dictionary()).unwrap();
            let before = loaded.clone();
            let r = loaded.set_blocks(&firsts, &[Some(&blocks[0]), Some(second)], false);
            (r, loaded == before)
        };
        assert!(set(&blocks[1]).0.is_ok());
        let mut zero = whole.posting_block(2..n);
        zero.tfs[0] = 0;
        let mut outside = whole.posting_block(2..n);
        outside.gaps[0] = 3;
        for bad in [zero, outside].map(|b| PostingBlock::of(&b)) {
            let (r, unchanged) = set(&bad);
            assert_eq!(r.unwrap_err().code(), "corrupt_index");
            assert!(unchanged, "nothing changes on an error");
        }
    }

    #[test]
    fn stored_surface_words_that_disagree_with_the_dictionary_are_an_error() {
        let decode = |own: Vec<u8>, other_words: Vec<&str>, other_terms: Vec<u32>| {
            let terms = ["a", "b"].into_iter().collect();
            let other_words = other_words.into_iter().collect();
            surface_from(&terms, &own, &other_words, other_terms)
        };
        assert!(decode(vec![0b11], vec!["bb"], vec![1]).is_ok());
        // A bit past the dictionary, a bitmap of the wrong length, and words without terms.
        assert!(decode(vec![0b111], vec![], vec![]).is_err());
        assert!(decode(vec![0, 0], vec![], vec![]).is_err());
        assert!(decode(vec![0], vec!["bb"], vec![]).is_err());
    }
}
