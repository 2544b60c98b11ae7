//! Text analysis shared by indexing and querying: Unicode normalization (NFKC), lowercasing,
//! word splitting, stopwords and Snowball stemming.
//!
//! Words are maximal runs of alphanumeric characters (`mart_account_segments` is three words,
//! `don't` is two). The same [`Analyzer`] must be used for a blob's chunks and its queries; the
//! language is part of the blob's configuration.

use std::borrow::Cow;
use std::collections::HashSet;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::UnicodeNormalization;

pub use crate::config::Language;

/// English stopwords (the NLTK list without contractions; words are split at apostrophes).
pub const STOPWORDS_EN: &str = include_str!("analyze/stopwords_en.txt");

/// The Snowball stemmer of `language`, if it has one.
fn stemmer_algorithm(language: Language) -> Option<Algorithm> {
    Some(match language {
        Language::English => Algorithm::English,
        Language::French => Algorithm::French,
        Language::German => Algorithm::German,
        Language::Spanish => Algorithm::Spanish,
        Language::Italian => Algorithm::Italian,
        Language::Portuguese => Algorithm::Portuguese,
        Language::Dutch => Algorithm::Dutch,
        Language::Swedish => Algorithm::Swedish,
        Language::Norwegian => Algorithm::Norwegian,
        Language::Danish => Algorithm::Danish,
        Language::Finnish => Algorithm::Finnish,
        Language::Russian => Algorithm::Russian,
        Language::None => return None,
    })
}

/// The stopword list of `language` (one word a line; empty but for English).
fn stopword_list(language: Language) -> &'static str {
    match language {
        Language::English => STOPWORDS_EN,
        _ => "",
    }
}

/// Normalizes, filters and stems words. Cheap to clone? No: build one per index and reuse it.
pub struct Analyzer {
    stemmer: Option<Stemmer>,
    stopwords: HashSet<&'static str, BuildFnv>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("stemming", &self.stemmer.is_some())
            .field("stopwords", &self.stopwords.len())
            .finish()
    }
}

impl Analyzer {
    /// An analyzer for `language`.
    pub fn new(language: Language) -> Analyzer {
        Analyzer {
            stemmer: stemmer_algorithm(language).map(Stemmer::create),
            stopwords: stopword_list(language)
                .lines()
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .collect(),
        }
    }

    /// Whether the (normalized, lowercase) word is a stopword.
    pub fn is_stopword(&self, word: &str) -> bool {
        self.stopwords.contains(word)
    }

    /// Normalizes one raw word: NFKC and lowercase. ASCII words take a fast path.
    pub fn normalize<'a>(&self, word: &'a str) -> Cow<'a, str> {
        if word.is_ascii() {
            if word.bytes().any(|b| b.is_ascii_uppercase()) {
                Cow::Owned(word.to_ascii_lowercase())
            } else {
                Cow::Borrowed(word)
            }
        } else {
            Cow::Owned(word.nfkc().flat_map(char::to_lowercase).collect())
        }
    }

    /// The term of a normalized word: its stem, or the word itself for a language without a
    /// stemmer.
    fn stem(&self, norm: &str) -> String {
        match &self.stemmer {
            Some(s) => s.stem(norm).into_owned(),
            None => norm.to_string(),
        }
    }

    /// The index term for one raw word, or `None` for a stopword.
    pub fn term(&self, word: &str) -> Option<String> {
        let norm = self.normalize(word);
        if self.is_stopword(&norm) {
            return None;
        }
        Some(self.stem(&norm))
    }

    /// Appends the index terms of `text` to `out`, in order, duplicates kept.
    pub fn terms_into(&self, text: &str, out: &mut Vec<String>) {
        out.extend(words(text).filter_map(|(_, w)| self.term(w)));
    }

    /// Like [`Analyzer::terms_into`], remembering in `surface` the term of every normalized
    /// word seen, so each distinct word is stemmed once (and the index can skip stemming for
    /// query words it has seen).
    pub fn terms_into_recording(&self, text: &str, out: &mut Vec<String>, surface: &mut Surface) {
        for (_, w) in words(text) {
            let norm = self.normalize(w);
            if let Some(t) = surface.get(norm.as_ref()) {
                out.push(t.clone());
                continue;
            }
            if self.is_stopword(&norm) {
                continue;
            }
            let term = self.stem(&norm);
            surface.insert(norm.into_owned(), term.clone());
            out.push(term);
        }
    }

    /// The index terms of `text`, in order, duplicates kept.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.terms_into(text, &mut out);
        out
    }

    /// The query's terms: each distinct index term once, with the normalized word it first
    /// came from and how many times it occurs in the query, in query order. Stopwords are
    /// dropped.
    pub fn query<'q>(&self, text: &'q str) -> Vec<QueryTerm<'q>> {
        self.query_with(text, |_| None)
    }

    /// Like [`Analyzer::query`], taking the term of a normalized word from `known` when it
    /// has it (an index knows the term of every word of its text) and stemming otherwise.
    /// `known` must return what this analyzer would compute. Terms and words borrow from
    /// `known` and `text` where they can, so a typical query allocates no strings.
    // Out of line on purpose: inlined into `Index::ranking` the query path grew by ~7% in
    // instructions (callgrind, CACM).
    #[inline(never)]
    pub fn query_with<'q>(
        &self,
        text: &'q str,
        known: impl Fn(&str) -> Option<&'q str>,
    ) -> Vec<QueryTerm<'q>> {
        let mut out: Vec<QueryTerm<'q>> = Vec::new();
        for (_, w) in words(text) {
            let word = self.normalize(w);
            if self.is_stopword(&word) {
                continue;
            }
            let term: Cow<'q, str> = match known(&word) {
                Some(t) => Cow::Borrowed(t),
                None => Cow::Owned(self.stem(&word)),
            };
            match out.iter_mut().find(|q| q.term == term) {
                Some(q) => q.count += 1,
                None => out.push(QueryTerm {
                    term,
                    word,
                    count: 1,
                }),
            }
        }
        out
    }
}

/// One distinct term of a query (borrowing from the query text and the index where it can).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm<'q> {
    /// The index term (normalized, stemmed).
    pub term: Cow<'q, str>,
    /// The normalized word before stemming (the token lane matches it as a prefix).
    pub word: Cow<'q, str>,
    /// Occurrences in the query: the lexical lane weighs the term by it, as Lucene and bm25s
    /// do (a concept the query repeats matters more).
    pub count: u32,
}

/// FNV-1a: short keys (index terms) hash several times faster than with SipHash, and the
/// dictionary is built from the index's own text, so flooding resistance buys nothing here.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Builds [`Fnv`] hashers.
pub type BuildFnv = std::hash::BuildHasherDefault<Fnv>;

/// Normalized word → index term, as recorded while indexing.
pub type Surface = std::collections::HashMap<String, String, BuildFnv>;

/// Raw words of `text` with their byte offsets: maximal runs of alphanumeric characters and
/// combining marks (so `cafe\u{301}`, an accent stored apart as macOS file names and many
/// pastes have it, stays one word and normalizes to `café`).
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start: Option<usize> = None;
    let mut chars = text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')));
    std::iter::from_fn(move || {
        for (i, c) in chars.by_ref() {
            let word_char = c.is_alphanumeric()
                || (!c.is_ascii() && unicode_normalization::char::is_combining_mark(c));
            if word_char {
                if start.is_none() {
                    start = Some(i);
                }
            } else if let Some(s) = start.take() {
                return Some((s, &text[s..i]));
            }
        }
        None
    })
}

/// Number of whitespace-separated tokens: the unit chunk sizes are measured in.
pub fn token_count(text: &str) -> usize {
    text.split_whitespace().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_non_alphanumerics_with_offsets() {
        let w: Vec<_> = words("mart_account-segments, Ünïcode 42x!").collect();
        assert_eq!(
            w,
            [
                (0, "mart"),
                (5, "account"),
                (13, "segments"),
                (23, "Ünïcode"),
                (33, "42x")
            ]
        );
    }

    #[test]
    fn decomposed_and_precomposed_accents_give_the_same_term() {
        let a = Analyzer::new(Language::English);
        assert_eq!(
            a.terms("Le cafe\u{301} est bon"),
            a.terms("Le café est bon")
        );
        assert_eq!(words("cafe\u{301}!").count(), 1);
    }

    #[test]
    fn english_drops_stopwords_and_stems() {
        let a = Analyzer::new(Language::English);
        assert_eq!(a.terms("The Running of the Revenues"), ["run", "revenu"]);
    }

    #[test]
    fn normalization_folds_compatibility_forms_and_case() {
        let a = Analyzer::new(Language::None);
        assert_eq!(a.terms("ＦＵＬＬ ﬁle ÉCOLE"), ["full", "file", "école"]);
    }

    #[test]
    fn query_terms_are_deduplicated_and_keep_their_word() {
        let a = Analyzer::new(Language::English);
        let q = a.query("The revenues revenue REVENUE churn");
        let terms: Vec<_> = q
            .iter()
            .map(|t| (t.term.as_ref(), t.word.as_ref(), t.count))
            .collect();
        assert_eq!(terms, [("revenu", "revenues", 3), ("churn", "churn", 1)]);
    }

    #[test]
    fn recorded_surface_words_give_the_same_query_terms() {
        let a = Analyzer::new(Language::English);
        let mut surface = Surface::default();
        let mut terms = Vec::new();
        a.terms_into_recording(
            "Running revenues of the RUNNING stores",
            &mut terms,
            &mut surface,
        );
        assert_eq!(terms, a.terms("Running revenues of the RUNNING stores"));
        assert_eq!(surface.get("running").map(String::as_str), Some("run"));
        let q = "running revenues stored";
        let with = a.query_with(q, |w| surface.get(w).map(String::as_str));
        assert_eq!(with, a.query(q));
    }

    #[test]
    fn language_names_round_trip() {
        for l in Language::ALL {
            assert_eq!(Language::parse(l.name()).unwrap(), l);
        }
        assert_eq!(
            Language::parse("klingon").unwrap_err().code(),
            "invalid_argument"
        );
    }

    #[test]
    fn stopword_list_is_loaded() {
        let a = Analyzer::new(Language::English);
        assert!(a.is_stopword("the") && a.is_stopword("t") && !a.is_stopword("revenue"));
        assert!(!Analyzer::new(Language::German).is_stopword("the"));
    }
}
