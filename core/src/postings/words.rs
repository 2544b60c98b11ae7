//! A word's position in a sorted list of words, found by its hash.

use crate::text::analyze::BuildHash;

/// Where each word of a list is in it, found by its hash: a map of the list that holds
/// positions only, not copies of the words (a load makes one of the terms and one of the
/// surface words: copying them into a `HashMap` took a fifth of a whole load of CACM).
#[derive(Debug, Clone, Default)]
pub(super) struct WordTable {
    /// Open addressing, linear probing: per slot, 1 + a word's position, or 0 for none. A
    /// power of two long (0 for no words), at most half full.
    slots: Vec<u32>,
}

impl WordTable {
    /// The table of `words` (distinct, as a valid dictionary's are; of two equal words the
    /// first is found).
    pub(super) fn new(words: &[String]) -> WordTable {
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
    pub(super) fn get(&self, words: &[String], word: &str) -> Option<usize> {
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
    /// bits of its hash, mixed once more so that they depend on every bit of it.
    fn slot(word: &str, size: usize) -> usize {
        use std::hash::{BuildHasher, Hasher};
        let mut h = BuildHash::default().build_hasher();
        h.write(word.as_bytes());
        let mixed = h.finish().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> (64 - size.trailing_zeros())) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
