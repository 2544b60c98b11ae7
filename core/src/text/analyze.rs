//! Text analysis shared by indexing and querying: Unicode normalization (NFKC), lowercasing,
//! word splitting, CJK segmentation, stopwords and Snowball stemming.
//!
//! Words are maximal runs of alphanumeric characters (`mart_account_segments` is three words,
//! `don't` is two), and a run of CJK characters (Han, Hiragana, Katakana, Hangul; see
//! [`is_cjk`]) is a word of its own even where no space or punctuation separates it from other
//! letters (`Rust语言` is `Rust` and `语言`).
//!
//! Chinese and Japanese put no spaces between words, so a CJK run is indexed as its overlapping
//! character bigrams, a run of one character as that character (`自然语言处理` is `自然 然语 语言
//! 言处 处理`): the baseline of Lucene's `CJKBigramFilter` and Elasticsearch's `cjk` analyzer,
//! with no dictionary. A CJK word inside a longer run is found because its bigrams are among the
//! run's; a character is a code point with the marks and jamo that extend it, so a decomposed
//! kana or Hangul syllable counts once. CJK terms are normalized (NFKC, so halfwidth katakana
//! meets fullwidth) but never stemmed or stopped. Text without CJK characters is analyzed
//! exactly as it was before CJK segmentation existed.
//!
//! The same [`Analyzer`] must be used for a blob's chunks and its queries; the language is part
//! of the blob's configuration.
//!
//! Normalization ([`normalize_form`]) uses unicode-normalization's tables, and lowercasing
//! ([`lowercase`], [`lowercase_chars`]) std's case tables, with the feature
//! `normalization-tables` (a default). Without it, a binding registers a normalizer at start-up
//! ([`set_normalizer`]): the browser's search module registers JavaScript's
//! `String.prototype.normalize` and `toLowerCase`, whose Unicode version is the engine's (ICU's)
//! rather than the crate's and std's, so a character newer than one of the two may normalize
//! or lowercase differently. ASCII text never reaches either: every form leaves it unchanged but
//! for its capitals, which are lowercased in Rust.

use std::borrow::Cow;
use std::collections::HashSet;

use rust_stemmers::{Algorithm, Stemmer};

pub use crate::data::config::Language;

/// English stopwords (the NLTK list without contractions; words are split at apostrophes).
pub const STOPWORDS_EN: &str = include_str!("stopwords_en.txt");

/// The Snowball stemmer of `language`, if it has one in this build (each behind its core
/// feature `stem-<language>`; feature `stemmers`, a default, turns on all of them).
fn stemmer_algorithm(language: Language) -> Option<Algorithm> {
    match language {
        #[cfg(feature = "stem-english")]
        Language::English => Some(Algorithm::English),
        #[cfg(feature = "stem-french")]
        Language::French => Some(Algorithm::French),
        #[cfg(feature = "stem-german")]
        Language::German => Some(Algorithm::German),
        #[cfg(feature = "stem-spanish")]
        Language::Spanish => Some(Algorithm::Spanish),
        #[cfg(feature = "stem-italian")]
        Language::Italian => Some(Algorithm::Italian),
        #[cfg(feature = "stem-portuguese")]
        Language::Portuguese => Some(Algorithm::Portuguese),
        #[cfg(feature = "stem-dutch")]
        Language::Dutch => Some(Algorithm::Dutch),
        #[cfg(feature = "stem-swedish")]
        Language::Swedish => Some(Algorithm::Swedish),
        #[cfg(feature = "stem-norwegian")]
        Language::Norwegian => Some(Algorithm::Norwegian),
        #[cfg(feature = "stem-danish")]
        Language::Danish => Some(Algorithm::Danish),
        #[cfg(feature = "stem-finnish")]
        Language::Finnish => Some(Algorithm::Finnish),
        #[cfg(feature = "stem-russian")]
        Language::Russian => Some(Algorithm::Russian),
        _ => None,
    }
}

/// NLTK's stopword lists of the other languages with a stemmer (core/build.rs).
mod nltk {
    include!(concat!(env!("OUT_DIR"), "/stopwords.rs"));
}

/// The stopwords of `language`: English's list (`stopwords_en.txt`), NLTK's for the other
/// languages whose stemmer is compiled in (a build without it refuses the language anyway),
/// none for `none`.
fn stopword_list(language: Language) -> Vec<&'static str> {
    let list: &[&str] = match language {
        Language::English => {
            return STOPWORDS_EN
                .lines()
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .collect()
        }
        #[cfg(feature = "stem-french")]
        Language::French => nltk::STOPWORDS_FR,
        #[cfg(feature = "stem-german")]
        Language::German => nltk::STOPWORDS_DE,
        #[cfg(feature = "stem-spanish")]
        Language::Spanish => nltk::STOPWORDS_ES,
        #[cfg(feature = "stem-italian")]
        Language::Italian => nltk::STOPWORDS_IT,
        #[cfg(feature = "stem-portuguese")]
        Language::Portuguese => nltk::STOPWORDS_PT,
        #[cfg(feature = "stem-dutch")]
        Language::Dutch => nltk::STOPWORDS_NL,
        #[cfg(feature = "stem-swedish")]
        Language::Swedish => nltk::STOPWORDS_SV,
        #[cfg(feature = "stem-norwegian")]
        Language::Norwegian => nltk::STOPWORDS_NO,
        #[cfg(feature = "stem-danish")]
        Language::Danish => nltk::STOPWORDS_DA,
        #[cfg(feature = "stem-finnish")]
        Language::Finnish => nltk::STOPWORDS_FI,
        #[cfg(feature = "stem-russian")]
        Language::Russian => nltk::STOPWORDS_RU,
        _ => &[],
    };
    list.to_vec()
}

/// A Unicode normalization form (see [`normalize_form`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Canonical composition: `e` followed by U+0301 becomes `é`; compatibility characters
    /// (`ﬁ`, fullwidth `Ａ`) stay as they are. Used for page keys and citation words.
    Nfc,
    /// Compatibility composition: NFC, and compatibility characters folded (`ﬁ` to `fi`,
    /// fullwidth `Ａ` to `A`, halfwidth katakana to fullwidth). Used by the [`Analyzer`].
    Nfkc,
    /// Compatibility decomposition: compatibility characters folded as by [`Form::Nfkc`],
    /// and every accented letter split into its letter and its marks (`é` is `e` and U+0301).
    /// Used for the ASCII anchors of some site generators ([`crate::site::anchor`]).
    Nfkd,
    /// Lowercase, as `str::to_lowercase` and JavaScript's `toLowerCase` do it: Unicode's full
    /// mapping, a capital sigma at the end of a word as `ς`, no language's rules
    /// ([`lowercase`]).
    Lower,
}

/// A function that returns its text in the given form, as a binding registers it
/// ([`set_normalizer`]). It is only called on text that is not all ASCII.
pub type Normalizer = fn(&str, Form) -> String;

#[cfg(not(feature = "normalization-tables"))]
static NORMALIZER: std::sync::OnceLock<Normalizer> = std::sync::OnceLock::new();

/// Registers the normalizer of a build without the feature `normalization-tables` (the
/// browser's search module registers `String.prototype.normalize` when it starts). The first
/// registration wins: returns whether this one did. With the tables compiled in, they are
/// always used and this returns `false`.
pub fn set_normalizer(normalizer: Normalizer) -> bool {
    #[cfg(feature = "normalization-tables")]
    {
        let _ = normalizer;
        false
    }
    #[cfg(not(feature = "normalization-tables"))]
    {
        NORMALIZER.set(normalizer).is_ok()
    }
}

/// `text` in Unicode normalization `form`. ASCII text is returned as it is, without a call
/// (every form leaves it unchanged). Other text goes through unicode-normalization's tables
/// (feature `normalization-tables`, a default), else through the normalizer registered with
/// [`set_normalizer`], else is returned unnormalized.
pub fn normalize_form(text: &str, form: Form) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    #[cfg(feature = "normalization-tables")]
    {
        use unicode_normalization::UnicodeNormalization;
        Cow::Owned(match form {
            Form::Nfc => text.nfc().collect(),
            Form::Nfkc => text.nfkc().collect(),
            Form::Nfkd => text.nfkd().collect(),
            Form::Lower => text.to_lowercase(),
        })
    }
    #[cfg(not(feature = "normalization-tables"))]
    match NORMALIZER.get() {
        Some(normalize) => Cow::Owned(normalize(text, form)),
        None => Cow::Borrowed(text),
    }
}

/// `text` lowercased as `str::to_lowercase` does (see [`Form::Lower`]); ASCII text in Rust,
/// other text as [`normalize_form`] says.
pub fn lowercase(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return ascii_lowercase(text);
    }
    normalize_form(text, Form::Lower)
}

/// `text` with each character lowercased on its own, as `char::to_lowercase` does: the same as
/// [`lowercase`] but that a capital sigma is always `σ`. So with the sigmas lowercased first,
/// no other character's mapping depends on its neighbours and [`Form::Lower`] does the rest.
pub fn lowercase_chars(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return ascii_lowercase(text);
    }
    #[cfg(feature = "normalization-tables")]
    {
        Cow::Owned(text.chars().flat_map(char::to_lowercase).collect())
    }
    #[cfg(not(feature = "normalization-tables"))]
    {
        if text.contains('Σ') {
            Cow::Owned(normalize_form(&text.replace('Σ', "σ"), Form::Lower).into_owned())
        } else {
            normalize_form(text, Form::Lower)
        }
    }
}

fn ascii_lowercase(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// Normalizes, filters and stems words. Cheap to clone? No: build one per index and reuse it.
pub struct Analyzer {
    stemmer: Option<Stemmer>,
    stopwords: HashSet<&'static str, BuildHash>,
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
            stopwords: stopword_list(language).into_iter().collect(),
        }
    }

    /// Whether the (normalized, lowercase) word is a stopword.
    pub fn is_stopword(&self, word: &str) -> bool {
        self.stopwords.contains(word)
    }

    /// Normalizes one raw word: NFKC and lowercase. ASCII words take a fast path.
    pub fn normalize<'a>(&self, word: &'a str) -> Cow<'a, str> {
        if word.is_ascii() {
            ascii_lowercase(word)
        } else {
            Cow::Owned(lowercase_chars(&normalize_form(word, Form::Nfkc)).into_owned())
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

    /// The index term of one token: [`Analyzer::term`] of a word, the normalized text of a CJK
    /// bigram or character (never a stopword, never stemmed).
    pub fn token_term(&self, token: &Token<'_>) -> Option<String> {
        if token.cjk {
            Some(self.normalize(token.text).into_owned())
        } else {
            self.term(token.text)
        }
    }

    /// Appends the index terms of `text` to `out`, in order, duplicates kept.
    pub fn terms_into(&self, text: &str, out: &mut Vec<String>) {
        out.extend(tokens(text).filter_map(|t| self.token_term(&t)));
    }

    /// The index terms of `text` as numbers of `vocabulary` (see [`Vocabulary`]), in order,
    /// into `out`, each with its position into `positions`: `*at` for the first token of
    /// `text`, one more for each token after it. Every token counts, stopwords included (they
    /// leave a gap), so a phrase matches the words it quotes at their distances. `*at` is left
    /// one past the last token. Each distinct word is stemmed once: `vocabulary` remembers the
    /// term of every normalized word it has seen (and the index keeps that, so a search skips
    /// stemming for query words it has seen). CJK terms are not remembered as words: they are
    /// not stemmed.
    pub fn terms_at_recording(
        &self,
        text: &str,
        at: &mut u32,
        out: &mut Vec<u32>,
        positions: &mut Vec<u32>,
        vocabulary: &mut Vocabulary,
    ) {
        let start = *at;
        let mut count = 0u32;
        for t in tokens(text) {
            let i = count;
            count = count.saturating_add(1);
            let norm = self.normalize(t.text);
            let term = if t.cjk {
                vocabulary.number(norm.as_ref())
            } else if let Some(&term) = vocabulary.words.get(norm.as_ref()) {
                term
            } else if self.is_stopword(&norm) {
                continue;
            } else {
                let term = vocabulary.number(&self.stem(&norm));
                vocabulary.words.insert(norm.into_owned(), term);
                term
            };
            out.push(term);
            positions.push(start.saturating_add(i));
        }
        *at = start.saturating_add(count);
    }

    /// The terms of a quoted phrase with their offsets from its first term, in order: every
    /// token counts, so a stopword leaves a gap of one (`net of revenue` is `net` at 0 and
    /// `revenu` at 2) and stopwords before the first term or after the last are dropped. A CJK
    /// run gives its bigrams at consecutive offsets. Terms come from `known` where it has them,
    /// as in [`Analyzer::query_with`]. Empty for a phrase with no searchable word.
    pub fn phrase_with<'q>(
        &self,
        text: &'q str,
        known: impl Fn(&str) -> Option<&'q str>,
    ) -> Vec<(Cow<'q, str>, u32)> {
        let mut out: Vec<(Cow<'q, str>, u32)> = Vec::new();
        let mut first: Option<u32> = None;
        for (at, t) in (0u32..).zip(tokens(text)) {
            let word = self.normalize(t.text);
            let Some(term) = self.query_term(&word, t.cjk, &known) else {
                continue;
            };
            let first = *first.get_or_insert(at);
            out.push((term, at - first));
        }
        out
    }

    /// The index term of the normalized query word `word`: the word itself in a CJK run,
    /// `None` for a stopword, else its term from `known`, or stemmed (what
    /// [`Analyzer::query_with`] and [`Analyzer::phrase_with`] both read a word as).
    #[inline]
    fn query_term<'q>(
        &self,
        word: &Cow<'q, str>,
        cjk: bool,
        known: &impl Fn(&str) -> Option<&'q str>,
    ) -> Option<Cow<'q, str>> {
        if cjk {
            Some(word.clone())
        } else if self.is_stopword(word) {
            None
        } else {
            Some(known(word).map_or_else(|| Cow::Owned(self.stem(word)), Cow::Borrowed))
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
        for t in tokens(text) {
            let word = self.normalize(t.text);
            let Some(term) = self.query_term(&word, t.cjk, &known) else {
                continue;
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

/// The quoted phrases of a query: the text between an opening quote (`"`, or the typographic
/// `“`) and the next closing one (`"` or `”`), in query order. A quote that nothing closes is
/// ignored (the text after it is plain words), as is a closing `”` that nothing opened. The
/// quotes themselves are punctuation to [`tokens`], so the query's words, quoted or not, are
/// still [`Analyzer::query`]'s terms.
///
/// # Example
/// ```
/// use wikidex::analyze::quoted;
/// assert_eq!(quoted(r#"how "net revenue" is “booked” "unclosed"#), ["net revenue", "booked"]);
/// ```
pub fn quoted(query: &str) -> Vec<&str> {
    const OPEN: [char; 2] = ['"', '\u{201C}'];
    const CLOSE: [char; 2] = ['"', '\u{201D}'];
    let mut out = Vec::new();
    let mut rest = query;
    while let Some(i) = rest.find(OPEN) {
        let inside = &rest[i + rest[i..].chars().next().map_or(1, char::len_utf8)..];
        let Some(j) = inside.find(CLOSE) else {
            break;
        };
        out.push(&inside[..j]);
        rest = &inside[j + inside[j..].chars().next().map_or(1, char::len_utf8)..];
    }
    out
}

/// One distinct term of a query (borrowing from the query text and the index where it can).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm<'q> {
    /// The index term (normalized, stemmed).
    pub term: Cow<'q, str>,
    /// The normalized word before stemming (the token lane matches it as a prefix); for a CJK
    /// term, the bigram or character itself.
    pub word: Cow<'q, str>,
    /// Occurrences in the query: the lexical lane weighs the term by it, as Lucene and bm25s
    /// do (a concept the query repeats matters more).
    pub count: u32,
}

/// A query's terms owned, to outlive the query and the analysis they came from, their texts in
/// one buffer: a search keeps them for its hits, and two allocations a term (and as many
/// frees) were an eighth of a search that only ranks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct QueryTerms {
    text: String,
    /// Each term's `term` and `word` ends in `text` (each starts where the one before ends),
    /// and its count.
    ends: Vec<(usize, usize, u32)>,
}

impl QueryTerms {
    /// `terms`, owned.
    pub(crate) fn new(terms: &[QueryTerm<'_>]) -> QueryTerms {
        let mut owned = QueryTerms {
            text: String::with_capacity(terms.iter().map(|q| q.term.len() + q.word.len()).sum()),
            ends: Vec::with_capacity(terms.len()),
        };
        for q in terms {
            owned.text.push_str(&q.term);
            let term = owned.text.len();
            owned.text.push_str(&q.word);
            owned.ends.push((term, owned.text.len(), q.count));
        }
        owned
    }

    /// Each term's index term, word and count, in order.
    fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str, u32)> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&(term, word, count)| {
            let texts = (&self.text[start..term], &self.text[term..word]);
            start = word;
            (texts.0, texts.1, count)
        })
    }

    /// The terms, borrowing their texts.
    pub(crate) fn get(&self) -> Vec<QueryTerm<'_>> {
        self.iter()
            .map(|(term, word, count)| QueryTerm {
                term: Cow::Borrowed(term),
                word: Cow::Borrowed(word),
                count,
            })
            .collect()
    }

    /// Each term's index term, in order.
    pub(crate) fn terms(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.iter().map(|(term, _, _)| term)
    }
}

/// The hasher of the analyzer's and the index's word maps: rustc-hash's Fx, which takes a word
/// eight bytes at a time (FNV-1a, before it, took one: a search's snippets spent a fifth of
/// their time hashing words). The words come from the index's own text, so flooding
/// resistance buys nothing here.
pub type BuildHash = rustc_hash::FxBuildHasher;

/// Normalized word → index term ([`crate::postings::LexicalIndex::build`]).
pub type Surface = std::collections::HashMap<String, String, BuildHash>;

/// The terms a build meets, numbered in the order first met, and the term of every normalized
/// word it has analyzed ([`Analyzer::terms_at_recording`]). A chunk's terms are kept as these
/// numbers until the index is assembled: a number is 4 bytes, a `String` 24 and an allocation
/// of its own, and a build holds every chunk's terms at once.
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    terms: Vec<String>,
    numbers: std::collections::HashMap<String, u32, BuildHash>,
    /// Normalized word → the number of its term.
    words: std::collections::HashMap<String, u32, BuildHash>,
}

impl Vocabulary {
    /// The number of `term`, given it if it has none yet.
    pub fn number(&mut self, term: &str) -> u32 {
        if let Some(&n) = self.numbers.get(term) {
            return n;
        }
        let n = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        self.terms.push(term.to_string());
        self.numbers.insert(term.to_string(), n);
        n
    }

    /// The term numbered `n`, if there is one.
    pub fn term(&self, n: u32) -> Option<&str> {
        self.terms.get(n as usize).map(String::as_str)
    }

    /// Records that the normalized word `word` has the term `term`.
    pub fn record(&mut self, word: &str, term: &str) {
        let n = self.number(term);
        self.words.insert(word.to_string(), n);
    }

    /// Whether the normalized word `word` was recorded.
    pub(crate) fn has_word(&self, word: &str) -> bool {
        self.words.contains_key(word)
    }

    /// Every recorded word with its term, in no particular order.
    pub(crate) fn words(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        (self.words.iter()).map(|(w, &n)| (w.as_str(), self.terms[n as usize].as_str()))
    }

    /// The term of a normalized word, if it was recorded.
    #[cfg(test)]
    pub(crate) fn word_term(&self, word: &str) -> Option<&str> {
        self.words.get(word).and_then(|&n| self.term(n))
    }

    /// The number of words recorded.
    #[cfg(test)]
    pub(crate) fn word_count(&self) -> usize {
        self.words.len()
    }

    /// Takes in the terms and words of `other`, a vocabulary of other text, and gives the
    /// number each of its terms has here (indexed by its number there).
    pub(crate) fn absorb(&mut self, other: Vocabulary) -> Vec<u32> {
        let remap: Vec<u32> = other.terms.iter().map(|t| self.number(t)).collect();
        for (word, n) in other.words {
            // A word has the same term in any text (its stem), so one already here agrees.
            self.words.entry(word).or_insert(remap[n as usize]);
        }
        remap
    }

    /// The terms (indexed by their numbers) and the recorded words with their terms' numbers.
    pub(crate) fn into_parts(
        self,
    ) -> (
        Vec<String>,
        std::collections::HashMap<String, u32, BuildHash>,
    ) {
        (self.terms, self.words)
    }
}

/// Raw words of `text` with their byte offsets: maximal runs of alphanumeric characters and
/// combining marks (so `cafe\u{301}`, an accent stored apart as macOS file names and many
/// pastes have it, stays one word and normalizes to `café`), split where CJK characters (see
/// [`is_cjk`]) meet others (`Rust语言` is two words). A combining mark stays with the word
/// before it.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    // The next byte to read, and the current word's start and whether it is a CJK run.
    let mut at = 0;
    let mut start: Option<(usize, bool)> = None;
    std::iter::from_fn(move || {
        // Most words are ASCII between ASCII: such a word is taken at once.
        if start.is_none() {
            at = skip_ascii(bytes, at, false);
            if bytes.get(at).is_some_and(u8::is_ascii_alphanumeric) {
                let s = at;
                at = skip_ascii(bytes, at, true);
                if bytes.get(at).is_none_or(u8::is_ascii) {
                    return Some((s, &text[s..at]));
                }
                start = Some((s, false));
            }
        }
        while at <= bytes.len() {
            // Runs of ASCII, most text, in a tight loop: alphanumerics continue a word that
            // is not a CJK run, other characters are skipped between words.
            match start {
                Some((_, false)) => at = skip_ascii(bytes, at, true),
                None => at = skip_ascii(bytes, at, false),
                Some((_, true)) => {}
            }
            let i = at;
            // An ASCII character is a word character when alphanumeric, and never a mark or
            // CJK: this skips decoding and the Unicode tables.
            let (word, mark, cjk) = match bytes.get(i) {
                None => {
                    at += 1;
                    (false, false, false)
                }
                Some(&b) if b.is_ascii() => {
                    at += 1;
                    (b.is_ascii_alphanumeric(), false, false)
                }
                Some(_) => {
                    let c = text[i..].chars().next().unwrap_or(' ');
                    at += c.len_utf8();
                    let mark = crate::text::marks::is_combining_mark(c);
                    (c.is_alphanumeric() || mark, mark, !mark && is_cjk(c))
                }
            };
            if !word {
                if let Some((s, _)) = start.take() {
                    return Some((s, &text[s..i]));
                }
                continue;
            }
            match start {
                None => start = Some((i, cjk)),
                Some((s, was)) if was != cjk && !mark => {
                    start = Some((i, cjk));
                    return Some((s, &text[s..i]));
                }
                Some(_) => {}
            }
        }
        None
    })
}

/// The words of `text`, which must be ASCII, as byte ranges `(start, end)`: what [`words`]
/// gives for it (with no other characters, a word is a run of ASCII letters and digits), eight
/// bytes at a time, each word's ends taken from a mask of the eight bytes rather than found
/// byte by byte. A snippet walks an ASCII chunk's words this way.
pub(crate) fn ascii_words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    debug_assert!(text.is_ascii());
    let bytes = text.as_bytes();
    // The group of eight bytes at `at` (`next` is the one after it), its word edges not yet
    // taken (the high bit of a byte where a word starts or ends: the first byte of a word,
    // the first one past it), whether the byte before `next` is alphanumeric (bit 7), and the
    // start of a word whose end is not yet met.
    let (mut at, mut next, mut edges, mut before, mut open) = (0, 0, 0u64, 0u64, None);
    std::iter::from_fn(move || loop {
        if edges != 0 {
            let i = at + (edges.trailing_zeros() / 8) as usize;
            edges &= edges - 1;
            match open.take() {
                None => open = Some(i),
                Some(s) => return Some((s, i)),
            }
            continue;
        }
        if next >= bytes.len() {
            return open.take().map(|s| (s, bytes.len()));
        }
        // Past the end, zeros: not alphanumeric, so a word there ends at the text's end.
        let mut eight = [0u8; 8];
        let tail = &bytes[next..bytes.len().min(next + 8)];
        eight[..tail.len()].copy_from_slice(tail);
        let alnum = alphanumeric_bits(u64::from_le_bytes(eight));
        edges = alnum ^ ((alnum << 8) | before);
        before = (alnum >> 56) & 0x80;
        (at, next) = (next, next + 8);
    })
}

/// The high bit of each of eight bytes.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// `b` in each of eight bytes.
const fn splat(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// For eight bytes read as one little-endian `u64`: the high bit of each byte set where it is
/// an ASCII letter or digit. Exact for every byte before the first non-ASCII one (a byte of
/// 0x80 or more may carry into the bytes after it).
fn alphanumeric_bits(x: u64) -> u64 {
    // Each ASCII byte plus `0x80 - lo` reaches 0x80 exactly when it is `lo` or more, and
    // stays below 0x100, so nothing carries between ASCII bytes.
    let at_least = |x: u64, lo: u8| x.wrapping_add(splat(0x80 - lo)) & HIGH_BITS;
    let digit = at_least(x, b'0') & !at_least(x, b'9' + 1);
    let lower = x | splat(0x20);
    let letter = at_least(lower, b'a') & !at_least(lower, b'z' + 1);
    digit | letter
}

/// From `at`, past every byte that is ASCII and alphanumeric (`word`) or ASCII and not
/// (`!word`): eight at a time while eight are left, then a byte at a time.
fn skip_ascii(bytes: &[u8], mut at: usize, word: bool) -> usize {
    while let Some(eight) = bytes.get(at..at + 8) {
        let x = u64::from_le_bytes(eight.try_into().unwrap_or_default());
        let alnum = alphanumeric_bits(x);
        let stop = (x & HIGH_BITS) | if word { !alnum & HIGH_BITS } else { alnum };
        if stop != 0 {
            return at + (stop.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes
        .get(at)
        .is_some_and(|b| b.is_ascii() && b.is_ascii_alphanumeric() == word)
    {
        at += 1;
    }
    at
}

/// Whether `c` is written without spaces between words and so segmented into bigrams: Han
/// (with `々 〆 〇` and the other ideographic letters of U+3005..U+303C), Hiragana, Katakana
/// (with `ー`, the phonetic extensions and the halfwidth forms) and Hangul (syllables, jamo and
/// their halfwidth forms): the scripts Lucene's `CJKBigramFilter` bigrams. Only alphanumeric
/// characters are ever part of a word, so punctuation in these blocks (`、。・「」`) still
/// separates words.
pub fn is_cjk(c: char) -> bool {
    let c = c as u32;
    c >= 0x1100
        && matches!(c,
            0x1100..=0x11FF // Hangul jamo
            | 0x3005..=0x3007 // 々 〆 〇
            | 0x3021..=0x3029 // Hangzhou numerals
            | 0x3031..=0x3035 // kana repeat marks
            | 0x3038..=0x303C // 〸 〹 〺 〻 〼
            | 0x3041..=0x30FF // Hiragana, Katakana
            | 0x3131..=0x318E // Hangul compatibility jamo
            | 0x31F0..=0x31FF // Katakana phonetic extensions
            | 0x3400..=0x4DBF // CJK Unified Ideographs Extension A
            | 0x4E00..=0x9FFF // CJK Unified Ideographs
            | 0xA960..=0xA97F // Hangul jamo extended-A
            | 0xAC00..=0xD7FF // Hangul syllables, jamo extended-B
            | 0xF900..=0xFAFF // CJK compatibility ideographs
            | 0xFF66..=0xFFDC // halfwidth Katakana and Hangul
            | 0x1AFF0..=0x1B16F // kana extended, supplement, small kana
            | 0x20000..=0x323AF // CJK Unified Ideographs Extensions B..H, compatibility supplement
        )
}

/// One unit of analyzed text: a word, or a bigram (or lone character) of a CJK run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// Byte offset of the token in the text.
    pub start: usize,
    /// The raw text of the token (not normalized): `text[start..start + text.len()]`.
    pub text: &'a str,
    /// From a CJK run: never stemmed or stopped, and overlapping its neighbours by one
    /// character.
    pub cjk: bool,
}

impl Token<'_> {
    /// One past the token's last byte.
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

/// The tokens of `text` in order: each of its [`words`], but a CJK run as its overlapping
/// character bigrams (a run of one character as that character). A character is a code point
/// with the ones that extend it (see [`cjk_chars`]), so `か\u{3099}` (a decomposed `が`) and
/// halfwidth `ｶﾞ` count as one.
///
/// # Example
/// ```
/// use wikidex::analyze::tokens;
/// let t: Vec<(usize, &str)> = tokens("Rust语言处理 雨").map(|t| (t.start, t.text)).collect();
/// assert_eq!(t, [(0, "Rust"), (4, "语言"), (7, "言处"), (10, "处理"), (17, "雨")]);
/// ```
pub fn tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    words(text).flat_map(|(start, word)| {
        let cjk = word.chars().next().is_some_and(is_cjk);
        WordTokens {
            start,
            word,
            chars: cjk.then(|| cjk_chars(0, word)),
            prev: None,
            done: false,
        }
    })
}

/// The characters of a CJK word with their byte offsets in `text`, given the word's own
/// offset: where its bigrams start, and where a snippet may cut CJK text, which has no spaces
/// to cut at. A character is a code point and the ones that extend it as they would an
/// extended grapheme cluster in CJK text (combining marks such as the kana voiced sound marks
/// and variation selectors, the halfwidth voiced sound marks, Hangul vowel and final jamo), so
/// no table of grapheme clusters is needed.
pub fn cjk_chars(start: usize, word: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let rest = &word[at..];
        let mut chars = rest.char_indices();
        chars.next()?;
        let len = chars
            .find(|&(_, c)| !extends_cjk_char(c))
            .map_or(rest.len(), |(i, _)| i);
        let from = at;
        at += len;
        Some((start + from, &word[from..at]))
    })
}

/// Whether `c` belongs to the CJK character before it (see [`cjk_chars`]).
fn extends_cjk_char(c: char) -> bool {
    matches!(c as u32, 0xFF9E..=0xFF9F | 0x1160..=0x11FF | 0xD7B0..=0xD7FF)
        || crate::text::marks::is_combining_mark(c)
}

/// The tokens of one word (see [`tokens`]).
struct WordTokens<'a, C> {
    start: usize,
    word: &'a str,
    /// The characters of a CJK run; `None` for any other word (one token, itself).
    chars: Option<C>,
    /// Offset in `word` of the previous character of a CJK run.
    prev: Option<usize>,
    /// The word (or, for a run of one character, that character) has been given out.
    done: bool,
}

impl<'a, C: Iterator<Item = (usize, &'a str)>> Iterator for WordTokens<'a, C> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let (start, word) = (self.start, self.word);
        let token = |from: usize, to: usize, cjk: bool| Token {
            start: start + from,
            text: &word[from..to],
            cjk,
        };
        let Some(chars) = &mut self.chars else {
            if self.done {
                return None;
            }
            self.done = true;
            return Some(token(0, word.len(), false));
        };
        for (i, c) in chars.by_ref() {
            if let Some(p) = self.prev.replace(i) {
                self.done = true;
                return Some(token(p, i + c.len(), true));
            }
        }
        // A run of one character is that character.
        match self.prev {
            Some(p) if !self.done => {
                self.done = true;
                Some(token(p, word.len(), true))
            }
            _ => None,
        }
    }
}

/// Number of tokens, the unit chunk sizes are measured in: whitespace-separated words, except
/// that each CJK character ([`is_cjk`]) is a token of its own (Chinese and Japanese put no
/// spaces between words, and a character is about one model token), so a page in those
/// languages is cut into chunks of the same order of size as any other.
pub fn token_count(text: &str) -> usize {
    if text.is_ascii() {
        return text.split_whitespace().count();
    }
    token_spans(text).count()
}

/// The tokens of [`token_count`], as byte ranges of `text`: each CJK character, and each run
/// of other characters between whitespace and CJK characters.
pub fn token_spans(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while chars.next_if(|&(_, c)| c.is_whitespace()).is_some() {}
        let (start, c) = chars.next()?;
        let mut end = start + c.len_utf8();
        if is_cjk(c) {
            // With the marks that belong to it (a voicing mark, a variation selector).
            while let Some((i, c)) = chars.next_if(|&(_, c)| extends_cjk_char(c)) {
                end = i + c.len_utf8();
            }
            return Some((start, end));
        }
        while let Some((i, c)) = chars.next_if(|&(_, c)| !c.is_whitespace() && !is_cjk(c)) {
            end = i + c.len_utf8();
        }
        Some((start, end))
    })
}

#[cfg(test)]
mod tests {
    use unicode_normalization::UnicodeNormalization;

    use super::*;

    #[test]
    fn lowercase_maps_a_final_sigma_and_lowercase_chars_does_not() {
        assert_eq!(lowercase("ΟΔΟΣ ΟΔΟΣ"), "οδος οδος");
        assert_eq!(lowercase_chars("ΟΔΟΣ ΟΔΟΣ"), "οδοσ οδοσ");
        assert_eq!(
            lowercase_chars("İstanbul STRAẞE Ǆ"),
            "i\u{307}stanbul straße ǆ"
        );
        assert!(matches!(lowercase("plain"), Cow::Borrowed("plain")));
        assert_eq!(lowercase_chars("MiXeD"), "mixed");
    }

    #[test]
    fn query_terms_owned_in_one_buffer_are_the_terms() {
        let analyzer = Analyzer::new(Language::English);
        for query in [
            "running runners ran quickly",
            "自然言語処理 and Rust语言",
            "a the of",
            "",
            "Straße STRASSE café cafe\u{301} repeat repeat repeat",
        ] {
            let terms = analyzer.query(query);
            let owned = QueryTerms::new(&terms);
            assert_eq!(owned.get(), terms, "{query:?}");
            assert!(owned.terms().eq(terms.iter().map(|q| q.term.as_ref())));
        }
        // Words and terms of any length, empty ones included.
        let odd = [
            ("", "x", 1),
            ("ab", "", 2),
            ("", "", 3),
            ("términ", "語", 4),
        ];
        let terms: Vec<QueryTerm<'_>> = odd
            .iter()
            .map(|&(term, word, count)| QueryTerm {
                term: term.into(),
                word: word.into(),
                count,
            })
            .collect();
        assert_eq!(QueryTerms::new(&terms).get(), terms);
    }

    #[test]
    fn language_available_agrees_with_the_stemmers_compiled_in() {
        for l in Language::ALL {
            let stems = stemmer_algorithm(l).is_some();
            assert_eq!(l.available(), l == Language::None || stems, "{l:?}");
            let config = crate::data::config::Config {
                language: Some(l),
                ..Default::default()
            };
            assert_eq!(config.check_language().is_ok(), l.available());
        }
    }

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
        let text = "Running revenues of the RUNNING stores";
        let (terms, vocabulary) = recorded(&a, text);
        assert_eq!(terms, a.terms(text));
        assert_eq!(vocabulary.word_term("running"), Some("run"));
        let q = "running revenues stored";
        let with = a.query_with(q, |w| vocabulary.word_term(w));
        assert_eq!(with, a.query(q));
    }

    /// `text`'s terms as [`Analyzer::terms_at_recording`] numbers them, spelled out, and the
    /// vocabulary it recorded.
    fn recorded(a: &Analyzer, text: &str) -> (Vec<String>, Vocabulary) {
        let (mut numbers, mut positions, mut vocabulary) =
            (Vec::new(), Vec::new(), Vocabulary::default());
        a.terms_at_recording(text, &mut 0, &mut numbers, &mut positions, &mut vocabulary);
        let terms = numbers
            .iter()
            .map(|&n| vocabulary.term(n).unwrap().to_string())
            .collect();
        (terms, vocabulary)
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
    fn each_cjk_character_is_a_token_for_chunk_sizes() {
        assert_eq!(token_count("two words"), 2);
        assert_eq!(token_count("  naïve café  "), 2);
        assert_eq!(token_count("自然语言处理"), 6);
        // Seven characters, the full stop (punctuation, not CJK) and `ok`.
        assert_eq!(token_count("天気は晴れです。 ok"), 9);
        let spans: Vec<&str> = token_spans("abc漢字def ghi")
            .map(|(s, e)| &"abc漢字def ghi"[s..e])
            .collect();
        assert_eq!(spans, ["abc", "漢", "字", "def", "ghi"]);
    }

    #[test]
    fn cjk_runs_become_overlapping_bigrams() {
        let a = Analyzer::new(Language::English);
        assert_eq!(
            a.terms("自然语言处理"),
            ["自然", "然语", "语言", "言处", "处理"]
        );
        // Kanji and kana in one run are bigrammed across the script change, as Lucene does.
        assert_eq!(
            a.terms("天気は晴れです。"),
            ["天気", "気は", "は晴", "晴れ", "れで", "です"]
        );
    }

    #[test]
    fn a_one_character_cjk_run_is_a_unigram() {
        let a = Analyzer::new(Language::None);
        assert_eq!(a.terms("雨。明日は雪"), ["雨", "明日", "日は", "は雪"]);
    }

    #[test]
    fn cjk_and_other_letters_are_split_where_they_meet() {
        let w: Vec<_> = words("Rust语言2024年 café東京").collect();
        assert_eq!(
            w,
            [
                (0, "Rust"),
                (4, "语言"),
                (10, "2024"),
                (14, "年"),
                (18, "café"),
                (23, "東京")
            ]
        );
        let a = Analyzer::new(Language::English);
        assert_eq!(
            a.terms("Rust语言的所有权"),
            ["rust", "语言", "言的", "的所", "所有", "有权"]
        );
    }

    #[test]
    fn token_spans_point_at_the_raw_text() {
        let text = "See 天気は晴れ!";
        for t in tokens(text) {
            assert_eq!(&text[t.start..t.end()], t.text);
        }
        let spans: Vec<_> = tokens(text).map(|t| (t.start, t.text, t.cjk)).collect();
        assert_eq!(
            spans,
            [
                (0, "See", false),
                (4, "天気", true),
                (7, "気は", true),
                (10, "は晴", true),
                (13, "晴れ", true)
            ]
        );
    }

    #[test]
    fn halfwidth_and_decomposed_kana_meet_their_composed_forms() {
        let a = Analyzer::new(Language::None);
        assert_eq!(a.terms("ｶﾞｲﾄﾞ"), a.terms("ガイド"));
        assert_eq!(a.terms("か\u{3099}く"), a.terms("がく"));
        assert_eq!(a.terms("か\u{3099}く"), ["がく"]);
    }

    #[test]
    fn hangul_is_bigrammed_and_decomposed_syllables_count_once() {
        let a = Analyzer::new(Language::None);
        assert_eq!(a.terms("자연어 처리는"), ["자연", "연어", "처리", "리는"]);
        let nfd: String = "한국".nfd().collect();
        assert_eq!(nfd.chars().count(), 6);
        assert_eq!(a.terms(&nfd), ["한국"]);
    }

    #[test]
    fn cjk_query_terms_are_bigrams_counted_like_words() {
        let a = Analyzer::new(Language::English);
        let q = a.query("自然语言 the 自然 Running");
        let terms: Vec<_> = q
            .iter()
            .map(|t| (t.term.as_ref(), t.word.as_ref(), t.count))
            .collect();
        assert_eq!(
            terms,
            [
                ("自然", "自然", 2),
                ("然语", "然语", 1),
                ("语言", "语言", 1),
                ("run", "running", 1)
            ]
        );
    }

    #[test]
    fn cjk_terms_are_not_recorded_as_surface_words() {
        let a = Analyzer::new(Language::English);
        let (terms, vocabulary) = recorded(&a, "Running 天気 晴");
        assert_eq!(terms, ["run", "天気", "晴"]);
        assert_eq!(vocabulary.word_count(), 1);
    }

    #[test]
    fn a_cjk_character_keeps_the_marks_that_extend_it() {
        // A variation selector (an ideographic variant), a voiced sound mark, halfwidth ﾞ.
        let w = "葛\u{E0100}か\u{3099}ｶﾞ";
        let chars: Vec<_> = cjk_chars(10, w).collect();
        assert_eq!(chars, [(10, "葛\u{E0100}"), (17, "か\u{3099}"), (23, "ｶﾞ")]);
        let t: Vec<_> = tokens(w).map(|t| t.text).collect();
        assert_eq!(t, ["葛\u{E0100}か\u{3099}", "か\u{3099}ｶﾞ"]);
    }

    proptest::proptest! {
        /// Where the CJK characters of [`cjk_chars`] break, extended grapheme clusters do (the
        /// oracle), on text of kanji, kana, Hangul syllables and the marks that extend them.
        #[test]
        fn cjk_characters_are_grapheme_clusters(
            text in "[一二語葛あかアカｶｱ가각\u{3099}\u{309A}\u{FF9E}\u{FE00}\u{E0100}]{1,12}",
        ) {
            use unicode_segmentation::UnicodeSegmentation;
            let ours: Vec<_> = cjk_chars(0, &text).collect();
            let clusters: Vec<_> = text.grapheme_indices(true).collect();
            proptest::prop_assert_eq!(ours, clusters);
        }
    }

    proptest::proptest! {
        /// [`ascii_words`] gives the words [`words`] gives, on ASCII text of any length (words
        /// across and at the ends of its groups of eight bytes, the last group cut short).
        #[test]
        fn ascii_words_are_the_words_of_ascii_text(text in "[a-zA-Z09 ./:@\\[`{\\-\t\n\x0b]{0,40}") {
            let ours: Vec<_> = ascii_words(&text).collect();
            let want: Vec<_> = words(&text).map(|(s, w)| (s, s + w.len())).collect();
            proptest::prop_assert_eq!(ours, want);
        }
    }

    /// [`words`] as it was before CJK segmentation: the oracle for text without CJK.
    fn words_before_cjk(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            let word_char = c.is_alphanumeric() || crate::text::marks::is_combining_mark(c);
            if word_char {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                out.push((s, &text[s..i]));
            }
        }
        out
    }

    /// [`words`] as it read every character, before its ASCII shortcut.
    fn words_by_char(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut start: Option<(usize, bool)> = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            let mark = crate::text::marks::is_combining_mark(c);
            if !(c.is_alphanumeric() || mark) {
                if let Some((s, _)) = start.take() {
                    out.push((s, &text[s..i]));
                }
                continue;
            }
            let cjk = !mark && is_cjk(c);
            match start {
                None => start = Some((i, cjk)),
                Some((s, was)) if was != cjk && !mark => {
                    out.push((s, &text[s..i]));
                    start = Some((i, cjk));
                }
                Some(_) => {}
            }
        }
        out
    }

    #[test]
    fn alphanumeric_bits_mark_each_ascii_letter_and_digit_in_any_of_eight_places() {
        for b in 0u8..0x80 {
            for at in 0..8 {
                let mut eight = [b' '; 8];
                eight[at] = b;
                let want = if b.is_ascii_alphanumeric() {
                    0x80 << (8 * at)
                } else {
                    0
                };
                assert_eq!(
                    alphanumeric_bits(u64::from_le_bytes(eight)),
                    want,
                    "{b:#x} at {at}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_ascii_shortcut_splits_words_as_reading_every_character_does(
            text in "[a-zA-Z09 _.,'\\-\n\u{301}\u{3099}éß語言かなｶﾞ한국Ω١٢]{0,40}",
        ) {
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), words_by_char(&text));
        }

        /// Eight bytes at a time: every ASCII byte (the ones either side of `0-9`, `A-Z` and
        /// `a-z` among them), runs longer than eight, and non-ASCII bytes in any place of an
        /// eight.
        #[test]
        fn eight_bytes_at_a_time_split_words_as_reading_every_character_does(
            text in "([\\x00-\\x7f]{0,20}|[/09:@AZ\\[`az{]{1,12}|[é語\u{301}ß])*",
        ) {
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), words_by_char(&text));
        }

        #[test]
        fn text_without_cjk_splits_into_the_words_it_did_before(text in "\\PC{0,40}") {
            proptest::prop_assume!(!text.chars().any(is_cjk));
            let before = words_before_cjk(&text);
            proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), before.clone());
            let tokens: Vec<_> = tokens(&text).map(|t| (t.start, t.text)).collect();
            proptest::prop_assert_eq!(tokens, before);
        }
    }

    #[test]
    fn quotes_pair_ascii_and_typographic_and_an_unclosed_one_is_ignored() {
        assert_eq!(quoted(r#""a b" c "d""#), ["a b", "d"]);
        assert_eq!(quoted("“a b” c"), ["a b"]);
        assert_eq!(quoted(r#"“a b" c"#), ["a b"]);
        assert_eq!(quoted(r#"a "b c"#), Vec::<&str>::new());
        assert_eq!(quoted("a ” b"), Vec::<&str>::new());
        assert_eq!(quoted(r#""" x"#), [""]);
    }

    #[test]
    fn phrase_offsets_count_stopwords_and_cjk_bigrams() {
        let a = Analyzer::new(Language::English);
        let p = a.phrase_with("the net of Revenues", |_| None);
        let p: Vec<_> = p.iter().map(|(t, o)| (t.as_ref(), *o)).collect();
        assert_eq!(p, [("net", 0), ("revenu", 2)]);
        let p = a.phrase_with("自然语言", |_| None);
        let p: Vec<_> = p.iter().map(|(t, o)| (t.as_ref(), *o)).collect();
        assert_eq!(p, [("自然", 0), ("然语", 1), ("语言", 2)]);
        assert!(a.phrase_with("of the", |_| None).is_empty());
    }

    #[test]
    fn positions_count_every_token_and_match_the_terms() {
        let a = Analyzer::new(Language::English);
        let (mut numbers, mut positions, mut vocabulary) =
            (Vec::new(), Vec::new(), Vocabulary::default());
        let mut at = 10;
        let text = "Net of the revenue 语言处理";
        a.terms_at_recording(text, &mut at, &mut numbers, &mut positions, &mut vocabulary);
        let terms: Vec<&str> = numbers
            .iter()
            .map(|&n| vocabulary.term(n).unwrap())
            .collect();
        assert_eq!(terms, a.terms(text));
        assert_eq!(positions, [10, 13, 14, 15, 16]);
        assert_eq!(at, 17);
    }

    #[test]
    fn stopword_list_is_loaded() {
        let a = Analyzer::new(Language::English);
        assert!(a.is_stopword("the") && a.is_stopword("t") && !a.is_stopword("revenue"));
        assert!(!Analyzer::new(Language::German).is_stopword("the"));
    }

    #[test]
    fn every_stemmed_language_drops_its_own_stopwords() {
        for (language, word) in [
            (Language::French, "les"),
            (Language::German, "und"),
            (Language::Spanish, "para"),
            (Language::Italian, "della"),
            (Language::Portuguese, "não"),
            (Language::Dutch, "een"),
            (Language::Swedish, "och"),
            (Language::Norwegian, "ikke"),
            (Language::Danish, "og"),
            (Language::Finnish, "että"),
            (Language::Russian, "и"),
        ] {
            let a = Analyzer::new(language);
            assert!(a.is_stopword(word), "{language:?}: {word}");
            assert_eq!(
                a.term(&word.to_uppercase()),
                None,
                "{language:?}: {word} in capitals"
            );
            assert!(!a.is_stopword("the"), "{language:?} has English stopwords");
        }
        assert!(!Analyzer::new(Language::None).is_stopword("the"));
    }
}
