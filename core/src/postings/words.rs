//! Lists of words held in one string ([`WordList`]), and a word's position in a sorted one,
//! found by its hash ([`WordTable`]).

use std::ops::Range;

use crate::text::analyze::BuildHash;

/// Words held end to end in one string, each found by where it ends: the dictionary of an
/// index is two allocations however many terms it has, not one a term, and a write copies
/// its terms a run at a time (a million terms as `String`s cost a million allocations to
/// copy into the next snapshot and as many frees when the last was dropped: a sixth of a
/// write into a million pages).
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct WordList {
    text: String,
    /// Where each word ends in `text`.
    ends: Vec<usize>,
}

impl WordList {
    /// An empty list with room for `words` words of `bytes` bytes in all.
    pub(crate) fn with_capacity(words: usize, bytes: usize) -> WordList {
        WordList {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(words),
        }
    }

    /// Number of words.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Bytes of all the words.
    pub(crate) fn bytes(&self) -> usize {
        self.text.len()
    }

    /// Where word `i` starts in `text` (`i` at most the number of words).
    fn start(&self, i: usize) -> usize {
        i.checked_sub(1).map_or(0, |j| self.ends[j])
    }

    /// Word `i`.
    pub(crate) fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        Some(&self.text[self.start(i)..end])
    }

    /// The last word.
    pub(crate) fn last(&self) -> Option<&str> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The words in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone + '_ {
        (0..self.len()).map(|i| &self[i])
    }

    /// The first word.
    pub(crate) fn first(&self) -> Option<&str> {
        self.get(0)
    }

    /// Adds `word` at the end.
    pub(crate) fn push(&mut self, word: &str) {
        self.text.push_str(word);
        self.ends.push(self.text.len());
    }

    /// Adds the first `shared` bytes of the last word (none when empty), then `rest`: a
    /// front-coded word. `shared` is at most the last word's length, on a character boundary.
    pub(crate) fn push_after_last(&mut self, shared: usize, rest: &str) {
        let from = self.len().checked_sub(1).map_or(0, |i| self.start(i));
        self.text.extend_from_within(from..from + shared);
        self.text.push_str(rest);
        self.ends.push(self.text.len());
    }

    /// Adds words `at` of `other` at the end, their bytes copied at once.
    pub(crate) fn extend_from(&mut self, other: &WordList, at: Range<usize>) {
        if at.is_empty() {
            return;
        }
        let (from, to) = (other.start(at.start), other.ends[at.end - 1]);
        let base = self.text.len();
        self.text.push_str(&other.text[from..to]);
        (self.ends).extend(other.ends[at].iter().map(|&e| base + (e - from)));
    }

    /// Words `at`, as a list of their own.
    pub(crate) fn slice(&self, at: Range<usize>) -> WordList {
        let mut list = WordList::default();
        list.extend_from(self, at);
        list
    }

    /// Where `word` is in this sorted list, or where it would go ([`slice::binary_search`]).
    pub(crate) fn binary_search(&self, word: &str) -> Result<usize, usize> {
        let at = self.partition_point(|w| w < word);
        if self.get(at) == Some(word) {
            Ok(at)
        } else {
            Err(at)
        }
    }

    /// The number of words before the first for which `before` is false, in a list where it
    /// is true of a first run of words only ([`slice::partition_point`]).
    pub(crate) fn partition_point(&self, before: impl Fn(&str) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(&self.text[self.start(mid)..self.ends[mid]]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Whether each word sorts after the one before.
    pub(crate) fn ascends(&self) -> bool {
        let mut words = self.iter();
        let Some(mut prev) = words.next() else {
            return true;
        };
        words.all(|w| {
            let up = prev < w;
            prev = w;
            up
        })
    }
}

impl std::ops::Index<usize> for WordList {
    type Output = str;

    /// Word `i`.
    ///
    /// # Panics
    /// For `i` past the last word.
    fn index(&self, i: usize) -> &str {
        &self.text[self.start(i)..self.ends[i]]
    }
}

impl<'a> FromIterator<&'a str> for WordList {
    fn from_iter<I: IntoIterator<Item = &'a str>>(words: I) -> WordList {
        let mut list = WordList::default();
        for w in words {
            list.push(w);
        }
        list
    }
}

impl std::fmt::Debug for WordList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

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
    pub(super) fn new(words: &WordList) -> WordTable {
        if words.is_empty() {
            return WordTable::default();
        }
        let mut table = WordTable {
            slots: vec![0u32; (words.len() * 2).next_power_of_two()],
        };
        for (i, w) in (0u32..).zip(words.iter()) {
            table.put(w, i);
        }
        table
    }

    /// The table of `words`, made from this one (of a list whose word `i` is at `at[i]` in
    /// `words`, or gone: `u32::MAX`) and the positions in `words` of the words it adds,
    /// `added`: the slots copied with their positions moved, each gone word's run of filled
    /// slots cleared and its other words put in again, and the added words put in; no other
    /// word is hashed. Made anew when that would fill more than half of it, or less than an
    /// eighth (a list that lost most of its words).
    pub(super) fn moved(&self, at: &[u32], added: &[u32], words: &WordList) -> WordTable {
        /// A slot whose word is gone, until its run is put in again.
        const GONE: u32 = u32::MAX;
        let size = self.slots.len();
        if words.len() * 2 > size || words.len() * 8 < size {
            return WordTable::new(words);
        }
        let mut table = self.clone();
        let mut gone = Vec::new();
        for (s, slot) in table.slots.iter_mut().enumerate().filter(|(_, v)| **v != 0) {
            *slot = match at[*slot as usize - 1] {
                GONE => {
                    gone.push(s);
                    GONE
                }
                to => to + 1,
            };
        }
        let before = |s: usize| (s + size - 1) & (size - 1);
        for s in gone {
            if table.slots[s] != GONE {
                continue; // its run was put in again with another gone word's
            }
            // Every word of a run is found from a slot of the run (a search stops at an empty
            // slot), so the run's other words, put in again, land in it and nowhere else.
            let mut first = s;
            while table.slots[before(first)] != 0 {
                first = before(first);
            }
            let mut kept = Vec::new();
            let mut j = first;
            while table.slots[j] != 0 {
                if table.slots[j] != GONE {
                    kept.push(table.slots[j] - 1);
                }
                table.slots[j] = 0;
                j = (j + 1) & (size - 1);
            }
            for i in kept {
                table.put(&words[i as usize], i);
            }
        }
        for &i in added {
            table.put(&words[i as usize], i);
        }
        table
    }

    /// Puts `word`, at position `i` of its list, in the first empty slot from its own.
    fn put(&mut self, word: &str, i: u32) {
        let size = self.slots.len();
        let mut s = WordTable::slot(word, size);
        while self.slots[s] != 0 {
            s = (s + 1) & (size - 1);
        }
        self.slots[s] = i + 1;
    }

    /// How many words the table holds.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.slots.iter().filter(|&&v| v != 0).count()
    }

    /// The position of `word` in `words` (the list the table was made of).
    pub(super) fn get(&self, words: &WordList, word: &str) -> Option<usize> {
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

    #[test]
    fn a_run_across_the_last_slot_is_put_in_again_whole() {
        // Words whose first slot is the last of 16, or the first: one run across the end.
        let candidates: Vec<String> = (0..10_000).map(|i| format!("w{i}")).collect();
        let at = |slot| (candidates.iter()).filter(move |w| WordTable::slot(w, 16) == slot);
        let mut words: Vec<&str> = (at(15).take(3).chain(at(0).take(2)).chain(at(7).take(1)))
            .map(String::as_str)
            .collect();
        words.sort();
        let list: WordList = words.iter().copied().collect();
        let table = WordTable::new(&list);
        assert_eq!(table.slots.len(), 16);
        for gone in 0..list.len() {
            let kept: WordList = (list.iter().enumerate())
                .filter(|&(i, _)| i != gone)
                .map(|(_, w)| w)
                .collect();
            let at: Vec<u32> = (0..list.len())
                .map(|i| match i.cmp(&gone) {
                    std::cmp::Ordering::Less => i as u32,
                    std::cmp::Ordering::Equal => u32::MAX,
                    std::cmp::Ordering::Greater => i as u32 - 1,
                })
                .collect();
            let moved = table.moved(&at, &[], &kept);
            assert_eq!(moved.slots.len(), 16, "moved, not made anew");
            for (i, w) in kept.iter().enumerate() {
                assert_eq!(
                    moved.get(&kept, w),
                    Some(i),
                    "{w} with {} gone",
                    &list[gone]
                );
            }
            assert_eq!(moved.len(), kept.len());
        }
    }

    proptest::proptest! {
        /// A table moved to a list that drops some words and adds others finds each word
        /// where it now is, and holds nothing else.
        #[test]
        fn a_moved_word_table_finds_each_word_where_it_now_is(
            words in proptest::collection::btree_set("[abcé]{1,4}", 0..300),
            dropped in proptest::collection::vec(proptest::bool::weighted(0.2), 300),
            added in proptest::collection::btree_set("[abcdé]{1,4}", 0..40),
        ) {
            let old: WordList = words.iter().map(String::as_str).collect();
            // Made for a list of twice as many words, as a table of a dictionary that shrank.
            let mut table = WordTable::new(&old);
            if words.len() < 150 {
                let mut room: Vec<String> = words.iter().cloned().collect();
                room.extend((0..words.len()).map(|i| format!("zz{i}")));
                room.sort();
                let roomy: WordList = room.iter().map(String::as_str).collect();
                let at: Vec<u32> = room
                    .iter()
                    .map(|w| old.binary_search(w).map_or(u32::MAX, |i| i as u32))
                    .collect();
                table = WordTable::new(&roomy).moved(&at, &[], &old);
            }
            let kept: Vec<&String> = (words.iter().zip(&dropped))
                .filter(|(_, &d)| !d)
                .map(|(w, _)| w)
                .collect();
            let mut new: Vec<&String> = kept.clone();
            new.extend(added.iter().filter(|w| !words.contains(*w)));
            new.sort();
            let list: WordList = new.iter().map(|w| w.as_str()).collect();
            let at: Vec<u32> = words
                .iter()
                .map(|w| list.binary_search(w).map_or(u32::MAX, |i| i as u32))
                .collect();
            let put_in: Vec<u32> = (0..list.len() as u32)
                .filter(|&i| !words.contains(&list[i as usize]))
                .collect();
            let moved = table.moved(&at, &put_in, &list);
            for (i, w) in list.iter().enumerate() {
                proptest::prop_assert_eq!(moved.get(&list, w), Some(i));
            }
            proptest::prop_assert_eq!(moved.len(), list.len());
            for w in words.iter().filter(|w| list.binary_search(w).is_err()) {
                proptest::prop_assert_eq!(moved.get(&list, w), None);
            }
        }

        /// The word table finds each word of its list at its position, and no other word.
        #[test]
        fn a_word_table_finds_each_word_where_it_is_and_nothing_else(
            words in proptest::collection::btree_set("[abcé猫]{0,5}", 0..200),
            absent in proptest::collection::vec("[abcdé猫]{0,6}", 0..50),
        ) {
            let words: WordList = words.iter().map(String::as_str).collect();
            let table = WordTable::new(&words);
            for (i, w) in words.iter().enumerate() {
                proptest::prop_assert_eq!(table.get(&words, w), Some(i));
            }
            for w in &absent {
                proptest::prop_assert_eq!(table.get(&words, w), words.iter().position(|x| x == w));
            }
        }

        /// A word list holds the words it was given, in order, however it was put together:
        /// word by word, in runs copied from another, or front-coded after the last word; and
        /// it searches and orders as a sorted `Vec` does.
        #[test]
        fn a_word_list_holds_its_words_as_a_vec_does(
            words in proptest::collection::btree_set("[abé猫]{0,4}", 0..60),
            cut in 0usize..60,
            probe in "[abcé猫]{0,4}",
        ) {
            let words: Vec<String> = words.into_iter().collect();
            let list: WordList = words.iter().map(String::as_str).collect();
            proptest::prop_assert!(list.iter().eq(words.iter().map(String::as_str)));
            proptest::prop_assert_eq!(list.len(), words.len());
            proptest::prop_assert_eq!(list.first(), words.first().map(String::as_str));
            proptest::prop_assert_eq!(list.last(), words.last().map(String::as_str));
            proptest::prop_assert_eq!(list.get(words.len()), None);
            proptest::prop_assert!(list.ascends());
            proptest::prop_assert_eq!(list.binary_search(&probe), words.binary_search(&probe));
            proptest::prop_assert_eq!(
                list.partition_point(|w| w <= probe.as_str()),
                words.partition_point(|w| w.as_str() <= probe.as_str())
            );
            // In two runs, the second after a word of its own.
            let cut = cut.min(words.len());
            let mut runs = list.slice(0..cut);
            runs.push("x");
            runs.extend_from(&list, cut..words.len());
            runs.extend_from(&list, 0..0);
            let mut expected = words.clone();
            expected.insert(cut, "x".into());
            proptest::prop_assert!(runs.iter().eq(expected.iter().map(String::as_str)));
            proptest::prop_assert_eq!(&runs[cut], "x");
            // Front-coded: each word after the bytes it shares with the one before.
            let mut coded = WordList::default();
            let mut prev = "";
            for w in &words {
                let shared = (0..=prev.len().min(w.len()))
                    .rev()
                    .find(|&n| w.is_char_boundary(n) && prev.as_bytes()[..n] == w.as_bytes()[..n])
                    .unwrap_or(0);
                coded.push_after_last(shared, &w[shared..]);
                prev = w;
            }
            proptest::prop_assert_eq!(&coded, &list);
            proptest::prop_assert_eq!(format!("{coded:?}"), format!("{words:?}"));
            if words.len() > 1 {
                let mut unsorted = list.slice(1..words.len());
                unsorted.push(&words[0]);
                proptest::prop_assert!(!unsorted.ascends());
            }
        }
    }

    #[test]
    fn an_empty_word_table_finds_nothing() {
        let empty = WordList::default();
        let table = WordTable::new(&empty);
        assert_eq!(table.get(&empty, ""), None);
        assert_eq!(table.get(&empty, "a"), None);
    }
}
