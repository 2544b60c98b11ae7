//! Typo tolerance: the words of the indexed text within a small edit distance of a
//! query word the index does not know, found by a bounded walk of a trie of those words.
//!
//! The trie ([`Dictionary`]) is made from the index's sorted table of surface words the first
//! time a search needs it (nothing is stored in the blob). A search walks it depth-first carrying,
//! per node, one row of the edit-distance table between the node's prefix and the query word: the
//! state of a Levenshtein automaton for the query. A node whose row has no cell within the bound
//! cannot lead to a match and is not entered, so a walk visits only the prefixes within the bound
//! of some prefix of the query, never the whole dictionary, and never more than [`MAX_VISITS`]
//! nodes.
//!
//! Distances are optimal string alignment over characters: inserting, deleting or substituting
//! one character, or swapping two adjacent ones, costs one edit (`incidnet` is one edit from
//! `incident`). The first character must match, as with Lucene's `prefixLength` of 1: people
//! rarely mistype how a word starts, and a fixed first character cuts the nodes a walk enters
//! several-fold.
//!
//! Which query words are expanded, and how the lanes score what they are taken for, is decided
//! by [`expand`] and the lanes: a query term the dictionary holds is never expanded.

use super::lexical::LexicalIndex;
use crate::text::analyze::QueryTerm;

/// Shortest query word, in characters, that may match with one edit: shorter words are matched
/// exactly (a four-letter word has too many one-edit neighbours: `form` and `from`, `data` and
/// `date`).
pub const ONE_TYPO_CHARS: usize = 5;

/// Shortest query word, in characters, that may match with two edits.
pub const TWO_TYPOS_CHARS: usize = 9;

/// Longest query word, in characters, that is matched with typos (a longer one is not a word
/// someone mistyped; the bound also bounds a walk's rows).
pub const MAX_TYPO_CHARS: usize = 32;

/// Most dictionary terms one query word is taken for, nearest first.
pub const MAX_TYPO_EXPANSIONS: usize = 8;

/// What each edit multiplies a match's score by: a lane scores a term one edit from the query
/// word at half what it gives the term itself, two edits at a quarter. Within `(0, 1]`: at 1 a
/// typo costs nothing; near 0 typo matches still find pages but rank below any exact match of
/// another query term.
pub const TYPO_DISCOUNT: f32 = 0.5;

/// Most trie nodes one walk enters; past that it returns what it found. Real dictionaries stay
/// far below it (a nine-letter word with two edits enters under a thousand nodes of CACM's).
pub const MAX_VISITS: usize = 20_000;

/// The edits a query word may differ by: 0 for words shorter than [`ONE_TYPO_CHARS`], longer
/// than [`MAX_TYPO_CHARS`], holding a digit (a number or a code is not a typo) or CJK text
/// (matched by character bigrams, see [`crate::text::analyze`]), 1 up to [`TWO_TYPOS_CHARS`], else 2.
pub fn max_edits(word: &str) -> u8 {
    if word
        .chars()
        .any(|c| c.is_numeric() || crate::text::analyze::is_cjk(c))
    {
        return 0;
    }
    match word.chars().count() {
        n if !(ONE_TYPO_CHARS..=MAX_TYPO_CHARS).contains(&n) => 0,
        n if n < TWO_TYPOS_CHARS => 1,
        _ => 2,
    }
}

/// The factor a match `edits` away is scored at: [`TYPO_DISCOUNT`] per edit.
pub fn discount(edits: u8) -> f32 {
    TYPO_DISCOUNT.powi(i32::from(edits))
}

/// A word of the dictionary near the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Near {
    /// Its position in the sorted words the dictionary was made from.
    pub word: usize,
    /// Edits from the query word (for a prefix search: from the word's nearest prefix).
    pub edits: u8,
}

/// Marks a node where a word ends (characters stop at `0x10FFFF`).
const TERMINAL: u32 = 1 << 31;

/// One trie node. Nodes are in depth-first order, which is the words' sorted order: a node's
/// children follow it, up to `end`.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// The character leading to the node, with [`TERMINAL`] when a word ends here.
    ch: u32,
    /// One past the node's last descendant.
    end: u32,
    /// The first word under the node (the node's own word when it is terminal).
    first: u32,
}

/// A trie of sorted, distinct words (12 bytes a node, about 2.5 nodes a word in English), for
/// bounded typo searches.
#[derive(Debug, Clone)]
pub struct Dictionary {
    nodes: Vec<Node>,
    words: u32,
}

impl Dictionary {
    /// The trie of `sorted` (sorted and distinct; otherwise searches stay bounded but may miss
    /// words).
    pub fn new<'a>(sorted: impl IntoIterator<Item = &'a str>) -> Dictionary {
        let n32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut nodes = vec![Node {
            ch: 0,
            end: 0,
            first: 0,
        }];
        // The current path: node positions, the root's first; and its characters.
        let mut stack: Vec<usize> = vec![0];
        let mut prev: Vec<char> = Vec::new();
        let mut chars: Vec<char> = Vec::new();
        let mut count = 0usize;
        for (i, w) in sorted.into_iter().enumerate() {
            count = i + 1;
            chars.clear();
            chars.extend(w.chars());
            let common = prev.iter().zip(&chars).take_while(|(a, b)| a == b).count();
            while stack.len() > common + 1 {
                if let Some(n) = stack.pop() {
                    nodes[n].end = n32(nodes.len());
                }
            }
            for &c in &chars[common..] {
                stack.push(nodes.len());
                nodes.push(Node {
                    ch: u32::from(c),
                    end: 0,
                    first: n32(i),
                });
            }
            if let Some(&n) = stack.last() {
                nodes[n].ch |= TERMINAL;
            }
            std::mem::swap(&mut prev, &mut chars);
        }
        while let Some(n) = stack.pop() {
            nodes[n].end = n32(nodes.len());
        }
        Dictionary {
            nodes,
            words: n32(count),
        }
    }

    /// The words within `max_edits` of `query` that start with its first character, nearest
    /// first, then in sorted order, at most `max` of them. With `prefix` (the query is a word
    /// typed so far), a word matches when one of its prefixes does, at that prefix's distance.
    pub fn near(&self, query: &str, max_edits: u8, prefix: bool, max: usize) -> Vec<Near> {
        self.near_counting(query, max_edits, prefix, max).0
    }

    /// [`Dictionary::near`], and how many nodes the walk entered.
    fn near_counting(
        &self,
        query: &str,
        max_edits: u8,
        prefix: bool,
        max: usize,
    ) -> (Vec<Near>, usize) {
        // Cells hold at most the bound plus one, in a byte.
        let max_edits = max_edits.min(u8::MAX - 2);
        let query: Vec<u32> = query.chars().map(u32::from).collect();
        let Some(&first) = query.first() else {
            return (Vec::new(), 0);
        };
        if max == 0 {
            return (Vec::new(), 0);
        }
        let cap = max_edits.saturating_add(1);
        let mut walk = Walk {
            nodes: &self.nodes,
            words: self.words,
            rows: (0..=query.len())
                .map(|j| u8::try_from(j).unwrap_or(u8::MAX).min(cap))
                .collect(),
            query,
            max_edits,
            prefix,
            path: Vec::new(),
            found: Vec::new(),
            visits: 0,
        };
        // Only the root's child for the query's first character.
        let mut child = 1;
        while child < self.nodes.len() {
            if self.nodes[child].ch & !TERMINAL == first {
                walk.enter(child, 1, u8::MAX);
                break;
            }
            child = self.nodes[child].end as usize;
        }
        let visits = walk.visits;
        let mut found = walk.found;
        // Stable: equal distances stay in sorted order (the walk's).
        crate::data::sort::sort_by_key(&mut found, |&(edits, _, _)| edits);
        let mut out: Vec<Near> = Vec::new();
        'runs: for (edits, lo, hi) in found {
            for word in lo as usize..hi as usize {
                if out.len() == max {
                    break 'runs;
                }
                // Prefix matches nest (a nearer prefix below a farther one): the first stands.
                if !out.iter().any(|n| n.word == word) {
                    out.push(Near { word, edits });
                }
            }
        }
        (out, visits)
    }

    /// Number of trie nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

/// A depth-first walk of a [`Dictionary`] for one query.
struct Walk<'a> {
    nodes: &'a [Node],
    words: u32,
    query: Vec<u32>,
    max_edits: u8,
    prefix: bool,
    /// One row of `query.len() + 1` cells per level of the current path, the root's first;
    /// cells are capped at `max_edits + 1`.
    rows: Vec<u8>,
    /// The characters of the current path (`path[l - 1]` leads to level `l`).
    path: Vec<u32>,
    /// Matches: edits, first word, one past the last word.
    found: Vec<(u8, u32, u32)>,
    visits: usize,
}

impl Walk<'_> {
    /// Computes the row of node `n` at `level` and goes on below it while a match is possible.
    /// `best`: the nearest prefix match on the path above (prefix searches).
    fn enter(&mut self, n: usize, level: usize, best: u8) {
        if self.visits >= MAX_VISITS {
            return;
        }
        self.visits += 1;
        let node = self.nodes[n];
        let c = node.ch & !TERMINAL;
        let m = self.query.len();
        let w = m + 1;
        let cap = self.max_edits.saturating_add(1);
        let base = level * w;
        // Cells more than `max_edits` from the diagonal hold more edits than that (each step
        // off the diagonal is an insertion or a deletion): they stay at the cap, and only the
        // band around the diagonal is computed.
        self.rows.truncate(base);
        self.rows.resize(base + w, cap);
        self.path.truncate(level - 1);
        self.path.push(c);
        let d = usize::from(self.max_edits);
        if level <= d {
            self.rows[base] = u8::try_from(level).unwrap_or(u8::MAX);
        }
        let mut row_min = self.rows[base];
        let up = base - w;
        for j in level.saturating_sub(d).max(1)..=(level + d).min(m) {
            let substitute = self.rows[up + j - 1] + u8::from(self.query[j - 1] != c);
            let delete = self.rows[up + j] + 1;
            let insert = self.rows[base + j - 1] + 1;
            let mut v = substitute.min(delete).min(insert);
            if level >= 2
                && j >= 2
                && c == self.query[j - 2]
                && self.path[level - 2] == self.query[j - 1]
            {
                v = v.min(self.rows[base - 2 * w + j - 2] + 1);
            }
            let v = v.min(cap);
            self.rows[base + j] = v;
            row_min = row_min.min(v);
        }
        // No later row's minimum is below this one's (a swap reaches back two rows, but the row
        // between holds that cell plus at most one), so nothing below can match.
        if row_min > self.max_edits {
            return;
        }
        let last = self.rows[base + m];
        let end = node.end as usize;
        if self.prefix {
            let best = if last <= self.max_edits && last < best {
                let hi = self.nodes.get(end).map_or(self.words, |next| next.first);
                self.found.push((last, node.first, hi));
                last
            } else {
                best
            };
            // Below, only a nearer prefix adds anything.
            if row_min < best {
                self.children(n, end, level, best);
            }
        } else {
            if last <= self.max_edits && node.ch & TERMINAL != 0 {
                self.found.push((last, node.first, node.first + 1));
            }
            self.children(n, end, level, best);
        }
    }

    fn children(&mut self, n: usize, end: usize, level: usize, best: u8) {
        let mut child = n + 1;
        while child < end {
            self.enter(child, level + 1, best);
            child = self.nodes[child].end as usize;
        }
    }
}

/// A dictionary term a query term is taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expansion {
    /// Position of the query term among the query's terms.
    pub query: usize,
    /// The dictionary term's position.
    pub term: usize,
    /// Edits between the query word and the nearest word of the text with that term.
    pub edits: u8,
    /// A prefix match (the query's last word, typed so far): a word of the text starts with
    /// something `edits` from the query word.
    pub prefix: bool,
}

/// Whether [`expand`] looks for the typo matches of query word `i`: a word whose term the
/// dictionary does not hold (`known[i]`, as [`LexicalIndex::lookup`] gives it) and that may
/// differ by an edit ([`max_edits`]); the last word (the one being typed) only when no term
/// begins as it or its term does.
pub(crate) fn expands(
    index: &LexicalIndex,
    query: &[QueryTerm<'_>],
    known: &[Option<usize>],
    i: usize,
) -> bool {
    let q = &query[i];
    known.get(i).copied().flatten().is_none()
        && max_edits(&q.word) > 0
        && (i + 1 < query.len()
            || (index.prefixed(&q.word, 1).is_empty() && index.prefixed(&q.term, 1).is_empty()))
}

/// Words a walk may return before they are grouped by term and cut to
/// [`MAX_TYPO_EXPANSIONS`].
const CANDIDATES: usize = 4 * MAX_TYPO_EXPANSIONS;

/// The dictionary terms each query term is also taken for. `known`: each query term's
/// dictionary position, if it has one; `dict`: the index's [`Dictionary`], asked for only when
/// some word needs it.
///
/// Only a term the dictionary does not hold is expanded (so a term found in the dictionary
/// matches exactly and nothing else), and only a word [`max_edits`] allows: to the terms of the
/// words of the text within its edit bound (and within theirs: `forum` is not taken for the
/// four-letter `form`) that start with its first character, nearest first,
/// then the terms more chunks contain, at most [`MAX_TYPO_EXPANSIONS`]. The last query word is
/// the one being typed: when some term starts with it, it is a word typed so far that the token
/// lane's prefix matches already complete, and it is not expanded; when none does, it is also
/// taken for the words that start with something within its bound (`prefix` expansions, after
/// the others, within the same cap), so `incidn` finds `incident` before the word is
/// finished.
pub fn expand<'d>(
    index: &LexicalIndex,
    dict: impl Fn() -> &'d Dictionary,
    query: &[QueryTerm<'_>],
    known: &[Option<usize>],
) -> Vec<Expansion> {
    let mut out = Vec::new();
    for (i, q) in query.iter().enumerate() {
        if !expands(index, query, known, i) {
            continue;
        }
        let bound = max_edits(&q.word);
        let last = i + 1 == query.len();
        let first = out.len();
        let take = |prefix: bool, out: &mut Vec<Expansion>| {
            let mut terms: Vec<(u8, usize)> = Vec::new();
            for n in dict().near(&q.word, bound, prefix, CANDIDATES) {
                // The length rule holds on both sides: a short word of the text is not taken
                // for a longer query word (`forum` is not a typo of `form`), whole or, being
                // shorter than the query word, as a prefix.
                let word = &index.typo_words()[n.word];
                let whole = !prefix || word.chars().count() < q.word.chars().count();
                if whole && n.edits > max_edits(word) {
                    continue;
                }
                let t = index.typo_word_term(n.word);
                let taken = out[first..].iter().any(|e| e.term == t);
                if !taken && !terms.iter().any(|&(_, u)| u == t) {
                    terms.push((n.edits, t));
                }
            }
            crate::data::sort::sort_by_key(&mut terms, |&(edits, t)| {
                (edits, std::cmp::Reverse(index.df(t)), t)
            });
            let room = MAX_TYPO_EXPANSIONS.saturating_sub(out.len() - first);
            out.extend(terms.into_iter().take(room).map(|(edits, term)| Expansion {
                query: i,
                term,
                edits,
                prefix,
            }));
        };
        take(false, &mut out);
        if last && out.len() - first < MAX_TYPO_EXPANSIONS {
            take(true, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Optimal string alignment distance between `a` and `b`, in characters: what
    /// [`Dictionary::near`] bounds, computed the obvious way (the oracle of its tests).
    fn distance(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut v = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        d[a.len()][b.len()]
    }

    /// [`Dictionary::near`] the obvious way: every word, its distance (for `prefix`, the least
    /// over its prefixes), kept when within the bound and starting with the query's first
    /// character; nearest first, then in table order.
    fn near_by_scanning(words: &[String], query: &str, max_edits: u8, prefix: bool) -> Vec<Near> {
        let mut out: Vec<Near> = words
            .iter()
            .enumerate()
            .filter(|(_, w)| w.chars().next().is_some() && w.chars().next() == query.chars().next())
            .filter_map(|(i, w)| {
                let d = if prefix {
                    let chars: Vec<char> = w.chars().collect();
                    (0..=chars.len())
                        .map(|k| distance(&chars[..k].iter().collect::<String>(), query))
                        .min()
                        .unwrap_or(usize::MAX)
                } else {
                    distance(w, query)
                };
                (d <= usize::from(max_edits)).then_some(Near {
                    word: i,
                    edits: d as u8,
                })
            })
            .collect();
        out.sort_by_key(|n| (n.edits, n.word));
        out
    }

    fn dict(words: &[&str]) -> (Vec<String>, Dictionary) {
        let mut words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        words.sort();
        words.dedup();
        let d = Dictionary::new(words.iter().map(String::as_str));
        (words, d)
    }

    proptest::proptest! {
        #[test]
        fn near_matches_scanning_every_word(
            words in proptest::collection::vec("[abcé]{0,6}", 0..40),
            query in "[abcé]{1,6}",
            max_edits in 0u8..5,
            prefix: bool,
        ) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let (words, d) = dict(&words);
            let got = d.near(&query, max_edits, prefix, usize::MAX);
            proptest::prop_assert_eq!(got, near_by_scanning(&words, &query, max_edits, prefix));
        }
    }

    #[test]
    fn a_swap_is_one_edit() {
        let (words, d) = dict(&["incident", "incidents", "accident", "indent"]);
        let near = d.near("incidnet", 1, false, 10);
        let found: Vec<(&str, u8)> = near
            .iter()
            .map(|n| (words[n.word].as_str(), n.edits))
            .collect();
        assert_eq!(found, [("incident", 1)]);
        assert_eq!(distance("incidnet", "incident"), 1);
    }

    #[test]
    fn prefix_search_takes_the_nearest_prefix() {
        let (words, d) = dict(&["escalate", "escalation", "estimate", "scale"]);
        let near = d.near("escla", 1, true, 10);
        let found: Vec<(&str, u8)> = near
            .iter()
            .map(|n| (words[n.word].as_str(), n.edits))
            .collect();
        assert_eq!(found, [("escalate", 1), ("escalation", 1)]);
        assert!(d.near("escla", 1, false, 10).is_empty());
    }

    #[test]
    fn results_are_capped_nearest_first() {
        let (words, d) = dict(&["abcde", "abcdf", "abcdg", "abcdh", "abcdex"]);
        let near = d.near("abcde", 1, false, 3);
        let found: Vec<&str> = near.iter().map(|n| words[n.word].as_str()).collect();
        assert_eq!(found, ["abcde", "abcdex", "abcdf"]);
    }

    #[test]
    fn non_ascii_letters_are_one_character() {
        let (words, d) = dict(&["café", "cafe", "cafés"]);
        let near = d.near("cafè", 1, false, 10);
        let found: Vec<&str> = near.iter().map(|n| words[n.word].as_str()).collect();
        assert_eq!(found, ["cafe", "café"]);
    }

    #[test]
    fn a_walk_stays_within_its_visit_budget() {
        // Every word of four letters a..l after an `a`: 20,736 words, 22,621 nodes.
        let letters = "abcdefghijkl";
        let mut words = Vec::new();
        for a in letters.chars() {
            for b in letters.chars() {
                for c in letters.chars() {
                    for e in letters.chars() {
                        words.push(format!("a{a}{b}{c}{e}"));
                    }
                }
            }
        }
        let d = Dictionary::new(words.iter().map(String::as_str));
        assert_eq!(d.node_count(), 1 + 1 + 12 + 144 + 1728 + 20_736);
        // Five edits allowed: every node is within the bound, so only the budget stops the walk.
        let (near, visits) = d.near_counting("aaaaa", 5, false, usize::MAX);
        assert_eq!(visits, MAX_VISITS);
        assert!(!near.is_empty() && near.len() < words.len());
        assert!(near.windows(2).all(|w| w[0].edits <= w[1].edits));
        // Two edits, as search allows: within the budget on this densest of dictionaries.
        let (near, visits) = d.near_counting("aaaaa", 2, false, usize::MAX);
        assert!(visits < MAX_VISITS, "{visits}");
        assert_eq!(near.len(), 1 + 4 * 11 + 6 * 11 * 11);
    }

    #[test]
    fn edit_bounds_follow_word_length() {
        assert_eq!(max_edits("call"), 0);
        assert_eq!(max_edits("calll"), 1);
        assert_eq!(max_edits("incidnet"), 1);
        assert_eq!(max_edits("pstmortex"), 2);
        assert_eq!(max_edits("x86_64abc"), 0);
        assert_eq!(max_edits(&"a".repeat(MAX_TYPO_CHARS + 1)), 0);
        assert_eq!(max_edits("日本語の文章です"), 0);
        assert_eq!(discount(0), 1.0);
        assert_eq!(discount(2), TYPO_DISCOUNT * TYPO_DISCOUNT);
    }

    #[test]
    fn empty_inputs_find_nothing() {
        let (_, d) = dict(&[]);
        assert!(d.near("hello", 2, true, 10).is_empty());
        let (_, d) = dict(&["hello"]);
        assert!(d.near("", 2, false, 10).is_empty());
        assert!(d.near("hello", 2, false, 0).is_empty());
    }
}
