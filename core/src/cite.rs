//! Citation verification and the citation header format.
//!
//! [`Index::verify`] classifies each chunk an answer cites, and each chunk the model was
//! offered but did not cite. Rules, checked in this order for a cited id:
//! - `unknown`: no chunk has this id and no page has this key (a fabricated id never passes);
//! - `drifted`: the citation carries the hash the model saw, and the chunk's current hash
//!   differs (checked before `none`: a hash proves the model saw the chunk);
//! - `none`: the id names a page, not a chunk, or (when `offered` is not empty) neither the
//!   chunk nor any other chunk of its page or raw document was offered: the page was never
//!   drilled into, so the model cannot have read what it cites;
//! - `quote`: the answer contains a run of at least [`QUOTE_MIN_WORDS`] consecutive words of
//!   the chunk (or the whole chunk, if it is shorter), compared word by word after Unicode
//!   normalization and lowercasing, so whitespace, case, punctuation and Markdown markup do
//!   not matter; the verdict gives the matched span's byte offsets in the answer and in the
//!   chunk text;
//! - `paraphrase`: otherwise.
//!
//! An offered id that is not cited is `uncited` (or `unknown` if no chunk has it). Verdicts
//! come in the order of `cited` (duplicates removed), then of `offered`.
//!
//! [`Index::uncited_support`] looks at the answer sentence by sentence: a sentence whose
//! content terms (stemmed, stopwords dropped) are at least [`SUPPORT_THRESHOLD`] contained in
//! one chunk is *supported* by it; supported sentences that cite no chunk id, and sentences
//! supported by no chunk, are reported.
//!
//! **Limits.** Both take an answer of at most [`MAX_ANSWER_BYTES`] and at most
//! [`MAX_CITATIONS`] cited (and offered) ids, else [`Error::TooLarge`]. Within them the work is
//! linear: verification reads the answer once (a suffix automaton of its words finds every
//! cited chunk's longest shared run in one pass over that chunk), and support looks each
//! sentence's terms up in a term → chunk table made once per index.
//!
//! The header format, one line per hit in a prompt ([`format_header`], [`parse_headers`]):
//! `[page <key> · chunk <id> · score <s>] <title>`.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::data::error::{Error, Result};
use crate::data::offset::OffsetUnit;
use crate::index::{Chunk, Index, TermTable};
use crate::search::SearchResults;
use crate::text::analyze;
use crate::text::chunk;
use crate::text::page::Scope;

/// Fewest consecutive words that make a quote (unless the whole chunk is shorter).
pub const QUOTE_MIN_WORDS: usize = 8;
/// Share of a sentence's content terms a chunk must contain to support it.
pub const SUPPORT_THRESHOLD: f32 = 0.6;
/// Sentences with fewer content terms than this are too short to judge and are skipped.
pub const MIN_SENTENCE_TERMS: usize = 3;
/// Longest answer [`Index::verify`] and [`Index::uncited_support`] accept, in bytes (1 MiB).
pub const MAX_ANSWER_BYTES: usize = 1 << 20;
/// Most cited ids, and most offered ids, [`Index::verify`] accepts.
pub const MAX_CITATIONS: usize = 50_000;

/// A citation as the model gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cited {
    /// A chunk id (or a page key).
    pub id: String,
    /// The content hash of the chunk the model saw, when known.
    pub hash: Option<String>,
}

impl Cited {
    /// A citation of `id` without a hash.
    pub fn id(id: impl Into<String>) -> Cited {
        Cited {
            id: id.into(),
            hash: None,
        }
    }

    /// Parses `id` or `id@hash`.
    pub fn parse(s: &str) -> Cited {
        match s.trim().rsplit_once('@') {
            Some((id, hash)) if !hash.is_empty() => Cited {
                id: id.to_string(),
                hash: Some(hash.to_string()),
            },
            _ => Cited::id(s.trim()),
        }
    }
}

/// The verdict on one citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CitationStatus {
    /// A verbatim span of the chunk is in the answer.
    Quote,
    /// The chunk exists and is unchanged; no verbatim span.
    Paraphrase,
    /// The chunk changed since the model saw it.
    Drifted,
    /// Offered to the model, not cited.
    Uncited,
    /// Cited, but its page was never drilled into.
    None,
    /// No such chunk.
    Unknown,
}

impl CitationStatus {
    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            CitationStatus::Quote => "quote",
            CitationStatus::Paraphrase => "paraphrase",
            CitationStatus::Drifted => "drifted",
            CitationStatus::Uncited => "uncited",
            CitationStatus::None => "none",
            CitationStatus::Unknown => "unknown",
        }
    }
}

/// Where a quote is: offsets in the answer and in the chunk's text, in the session's
/// [`OffsetUnit`] ([`find_quote`] itself counts bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoteSpan {
    /// Start in the answer.
    pub answer_start: usize,
    /// End in the answer (exclusive).
    pub answer_end: usize,
    /// Start in the chunk text.
    pub chunk_start: usize,
    /// End in the chunk text (exclusive).
    pub chunk_end: usize,
    /// Words matched.
    pub words: usize,
}

/// One citation's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The id as cited or offered.
    pub id: String,
    /// The verdict.
    pub status: CitationStatus,
    /// The id of the page (or raw document) the chunk belongs to, when it exists.
    pub page_id: Option<String>,
    /// The chunk's current hash, when it exists.
    pub hash: Option<String>,
    /// The matched span, for a quote.
    pub quote: Option<QuoteSpan>,
}

/// What [`Index::verify`] returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// One verdict per cited id, then per offered-but-not-cited id.
    pub citations: Vec<Verdict>,
    /// No citation is `unknown` or `drifted`.
    pub passed: bool,
}

/// An answer sentence, with what supports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SentenceSupport {
    /// Where the sentence starts in the answer (in the index's offset unit).
    pub start: usize,
    /// End (exclusive).
    pub end: usize,
    /// The sentence, trimmed.
    pub text: String,
    /// Chunk ids the sentence cites.
    pub cites: Vec<String>,
    /// The chunk that contains most of its terms, if any contains one.
    pub best_chunk: Option<String>,
    /// The share of its content terms that chunk contains.
    pub score: f32,
}

/// What [`Index::uncited_support`] returns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Support {
    /// Sentences a chunk supports that cite nothing.
    pub uncited: Vec<SentenceSupport>,
    /// Sentences no chunk supports (cited or not).
    pub unsupported: Vec<SentenceSupport>,
}

/// What [`Index::check_answer`] returns: the citation verdicts and the sentence support.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerCheck {
    /// The verdicts on the ids given and the ids the answer itself cites.
    pub verification: Verification,
    /// Sentences supported but citing nothing (a sentence whose best chunk is one of the
    /// cited ids counts as citing it) and sentences nothing supports.
    pub support: Support,
}

/// A parsed citation header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CitationHeader {
    /// The page's id.
    pub page_id: String,
    /// The chunk id.
    pub chunk: String,
    /// The score, when given and a number.
    pub score: Option<f32>,
    /// The title (the rest of the line).
    pub title: String,
}

/// A prompt block for an agent's context (see [`Index::prompt_block`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptBlock {
    /// The text to put in the prompt.
    pub text: String,
    /// Every chunk id the block shows, in order: pass it as `offered` to [`Index::verify`].
    pub offered: Vec<String>,
}

/// The header line for a hit: `[page <key> · chunk <id> · score <s>] <title>` (score with 4
/// decimals).
///
/// # Example
/// ```
/// let h = wikidex::cite::format_header("revenue", "revenue::chunk_0", 0.0325, "Revenue");
/// assert_eq!(h, "[page revenue · chunk revenue::chunk_0 · score 0.0325] Revenue");
/// let parsed = wikidex::cite::parse_headers(&h);
/// assert_eq!(parsed[0].chunk, "revenue::chunk_0");
/// ```
pub fn format_header(key: &str, chunk: &str, score: f32, title: &str) -> String {
    format!("[page {key} · chunk {chunk} · score {score:.4}] {title}")
}

/// Every citation header in `text`, in order. Fields may be separated by `·` or `|`; the
/// score is optional; malformed brackets are skipped.
pub fn parse_headers(text: &str) -> Vec<CitationHeader> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(open) = rest.find("[page ") {
            let after = &rest[open + 1..];
            let Some(close) = after.find(']') else { break };
            let inside = &after[..close];
            let tail = &after[close + 1..];
            let title_end = tail.find("[page ").unwrap_or(tail.len());
            let mut page = None;
            let mut chunk = None;
            let mut score = None;
            for field in inside.split(['·', '|']) {
                let field = field.trim();
                if let Some(v) = field.strip_prefix("page ") {
                    page = Some(v.trim().to_string());
                } else if let Some(v) = field.strip_prefix("chunk ") {
                    chunk = Some(v.trim().to_string());
                } else if let Some(v) = field.strip_prefix("score ") {
                    score = v.trim().parse::<f32>().ok().filter(|s| s.is_finite());
                }
            }
            if let (Some(page), Some(chunk)) = (page, chunk) {
                out.push(CitationHeader {
                    page_id: page,
                    chunk,
                    score,
                    title: tail[..title_end].trim().to_string(),
                });
            }
            rest = &tail[title_end..];
        }
    }
    out
}

/// Chunk ids written anywhere in `text` (`<page>::chunk_<n>`, inside brackets or not), in
/// order, without duplicates.
pub fn cited_ids(text: &str) -> Vec<String> {
    id_spans(text).0
}

/// The chunk ids written in `text` (as [`cited_ids`]) and `text` with every place one is
/// written blanked out, in one pass.
fn id_spans(text: &str) -> (Vec<String>, String) {
    let mut out: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut plain = String::with_capacity(text.len());
    let mut pos = 0;
    for token in text.split(|c: char| c.is_whitespace() || "[](),;·|\"'`<>".contains(c)) {
        let start = token.as_ptr() as usize - text.as_ptr() as usize;
        let token = token.trim_end_matches(['.', ':', '!', '?']);
        if chunk::parse_chunk_id(token).is_some() {
            plain.push_str(&text[pos..start]);
            plain.push(' ');
            pos = start + token.len();
            if seen.insert(token) {
                out.push(token.to_string());
            }
        }
    }
    plain.push_str(&text[pos..]);
    (out, plain)
}

/// Normalized words of `text` with their byte spans.
fn norm_words(text: &str) -> Vec<(usize, usize, String)> {
    analyze::words(text)
        .map(|(s, w)| {
            let n = analyze::lowercase_chars(&analyze::normalize_form(w, analyze::Form::Nfc))
                .into_owned();
            (s, s + w.len(), n)
        })
        .collect()
}

/// The words of an answer, numbered, with a suffix automaton over them: finds the longest run
/// of consecutive words any chunk shares with the answer in time linear in the chunk.
struct AnswerWords {
    words: Vec<(usize, usize, String)>,
    /// Word → number.
    ids: HashMap<String, u32>,
    states: Vec<State>,
}

/// A suffix automaton state: the longest string it stands for, its suffix link, the first end
/// position of its strings in the answer (a word index), and its transitions by word number.
struct State {
    len: usize,
    link: Option<usize>,
    first_end: usize,
    next: BTreeMap<u32, usize>,
}

impl AnswerWords {
    fn new(answer: &str) -> AnswerWords {
        let words = norm_words(answer);
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut states = vec![State {
            len: 0,
            link: None,
            first_end: 0,
            next: BTreeMap::new(),
        }];
        let mut last = 0;
        for (pos, (_, _, w)) in words.iter().enumerate() {
            let n = ids.len() as u32;
            let c = *ids.entry(w.clone()).or_insert(n);
            let cur = states.len();
            states.push(State {
                len: states[last].len + 1,
                link: None,
                first_end: pos,
                next: BTreeMap::new(),
            });
            let mut p = Some(last);
            while let Some(q) = p {
                if states[q].next.contains_key(&c) {
                    break;
                }
                states[q].next.insert(c, cur);
                p = states[q].link;
            }
            match p {
                None => states[cur].link = Some(0),
                Some(p) => {
                    let q = states[p].next[&c];
                    if states[p].len + 1 == states[q].len {
                        states[cur].link = Some(q);
                    } else {
                        let clone = states.len();
                        states.push(State {
                            len: states[p].len + 1,
                            link: states[q].link,
                            first_end: states[q].first_end,
                            next: states[q].next.clone(),
                        });
                        let mut p = Some(p);
                        while let Some(r) = p {
                            if states[r].next.get(&c) != Some(&q) {
                                break;
                            }
                            states[r].next.insert(c, clone);
                            p = states[r].link;
                        }
                        states[q].link = Some(clone);
                        states[cur].link = Some(clone);
                    }
                }
            }
            last = cur;
        }
        AnswerWords { words, ids, states }
    }

    /// The longest run of consecutive words shared by the answer and `chunk`: (length, end in
    /// the answer, end in the chunk), as word counts; the earliest in the answer on ties, then
    /// the earliest in the chunk.
    fn longest_common_run(&self, chunk: &[(usize, usize, String)]) -> (usize, usize, usize) {
        let mut best = (0, 0, 0);
        let (mut state, mut len) = (0usize, 0usize);
        for (j, (_, _, w)) in chunk.iter().enumerate() {
            let Some(&c) = self.ids.get(w) else {
                (state, len) = (0, 0);
                continue;
            };
            loop {
                if let Some(&next) = self.states[state].next.get(&c) {
                    state = next;
                    len += 1;
                    break;
                }
                match self.states[state].link {
                    Some(link) => {
                        state = link;
                        len = self.states[state].len;
                    }
                    None => {
                        len = 0;
                        break;
                    }
                }
            }
            if len == 0 {
                continue;
            }
            let end_a = self.states[state].first_end + 1;
            let candidate = (len, end_a, j + 1);
            if len > best.0 || (len == best.0 && end_a < best.1) {
                best = candidate;
            }
        }
        best
    }

    /// The quote span of `chunk_text` in the answer, if there is one (see the module docs).
    fn quote(&self, chunk_text: &str) -> Option<QuoteSpan> {
        let c = norm_words(chunk_text);
        if c.is_empty() {
            return None;
        }
        let (len, ai, ci) = self.longest_common_run(&c);
        let needed = QUOTE_MIN_WORDS.min(c.len());
        let a = &self.words;
        (len >= needed && len > 0).then(|| QuoteSpan {
            answer_start: a[ai - len].0,
            answer_end: a[ai - 1].1,
            chunk_start: c[ci - len].0,
            chunk_end: c[ci - 1].1,
            words: len,
        })
    }
}

/// The quote span of `chunk_text` in `answer`, if there is one (see the module docs).
pub fn find_quote(answer: &str, chunk_text: &str) -> Option<QuoteSpan> {
    AnswerWords::new(answer).quote(chunk_text)
}

/// The index's [`TermTable`]: every wiki and raw chunk's content terms.
fn term_table(index: &Index) -> TermTable {
    {
        let mut postings: HashMap<String, Vec<u32>> = HashMap::new();
        let mut add = |c: u32, text: &str| {
            let terms: HashSet<String> = index.analyzer.terms(text).into_iter().collect();
            for t in terms {
                postings.entry(t).or_default().push(c);
            }
        };
        let wiki = index.chunk_count() as u32;
        for c in 0..wiki {
            add(c, index.chunk_text(c));
        }
        for c in 0..index.raw_chunk_count() as u32 {
            add(wiki + c, &index.raw_chunk_at(c, OffsetUnit::Byte).text);
        }
        TermTable { postings }
    }
}

fn check_answer(answer: &str) -> Result<()> {
    if answer.len() > MAX_ANSWER_BYTES {
        return Err(Error::too_large(
            "answer bytes",
            MAX_ANSWER_BYTES,
            answer.len(),
        ));
    }
    Ok(())
}

impl Index {
    /// Verifies an answer's citations (the rules are in the
    /// [module docs](crate::cite)).
    ///
    /// # Example
    /// ```
    /// # use wikidex::{IndexBuilder, cite::Cited};
    /// # let mut b = IndexBuilder::new(Default::default())?;
    /// # b.add_file("global/oncall.md", b"Page the on-call engineer for any outage of the nightly pipeline.")?;
    /// # let (index, _) = b.build()?;
    /// let answer = "Per the runbook: PAGE the on-call engineer for any   outage of the nightly pipeline.";
    /// let v = index.verify(answer, &[Cited::id("oncall::chunk_0"), Cited::id("oncall::chunk_9")], &[])?;
    /// assert_eq!(v.citations[0].status.name(), "quote");
    /// assert_eq!(v.citations[1].status.name(), "unknown");
    /// assert!(!v.passed);
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::TooLarge`] for an answer over [`MAX_ANSWER_BYTES`], or more than
    /// [`MAX_CITATIONS`] cited or offered ids.
    pub fn verify(
        &self,
        answer: &str,
        cited: &[Cited],
        offered: &[String],
    ) -> Result<Verification> {
        self.verify_in(answer, cited, offered, OffsetUnit::Byte)
    }

    /// [`Index::verify`] with the quote spans in `unit`.
    pub(crate) fn verify_in(
        &self,
        answer: &str,
        cited: &[Cited],
        offered: &[String],
        unit: OffsetUnit,
    ) -> Result<Verification> {
        verify_over(self, answer, cited, offered, unit)
    }

    /// Answer sentences that a chunk supports but that cite nothing, and sentences no chunk
    /// supports (see the [module docs](crate::cite)). Compares with every wiki and raw chunk
    /// through a term table made once per index (O(total text), on the first call); each call
    /// then costs O(answer · chunks sharing a term with it).
    ///
    /// # Errors
    /// [`Error::TooLarge`] for an answer over [`MAX_ANSWER_BYTES`].
    pub fn uncited_support(&self, answer: &str) -> Result<Support> {
        self.uncited_support_in(answer, OffsetUnit::Byte)
    }

    /// [`Index::uncited_support`] with the sentence spans in `unit`.
    pub(crate) fn uncited_support_in(&self, answer: &str, unit: OffsetUnit) -> Result<Support> {
        uncited_support_over(self, answer, unit)
    }

    /// The chunk (at its place in the term table: the wiki's chunks, then the raw chunks)
    /// sharing most of `terms`, and how many it shares; the first in table order on ties.
    pub(crate) fn best_support_at(&self, terms: &HashSet<String>) -> Option<(u32, usize)> {
        let table = self.support.get_or_init(|| term_table(self));
        let mut shared: HashMap<u32, usize> = HashMap::new();
        for t in terms {
            for &c in table.postings.get(t).map_or(&[][..], Vec::as_slice) {
                *shared.entry(c).or_default() += 1;
            }
        }
        shared
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
    }

    /// The id of the chunk at place `c` of the term table.
    fn support_chunk_id(&self, c: u32) -> String {
        let wiki = self.chunk_count() as u32;
        if c < wiki {
            self.chunk_id(c)
        } else {
            self.raw_chunk_id(c - wiki)
        }
    }

    /// Where the chunk at place `c` of the term table comes in the wiki's order of chunks,
    /// whatever index holds it: a page's chunks by page (scope, key) and place in the page,
    /// then the raw documents' by id and place.
    fn support_order(&self, c: u32) -> (bool, Scope, String, u32) {
        let wiki = self.chunk_count() as u32;
        if c < wiki {
            let p = self.chunk_page[c as usize] as usize;
            let page = &self.pages()[p];
            (
                false,
                page.scope.clone(),
                page.key.clone(),
                c - self.first_chunk[p],
            )
        } else {
            let r = c - wiki;
            let d = self.data.raw.chunks[r as usize].page as usize;
            let id = self.data.raw.docs[d].id.clone();
            (true, Scope::Global, id, r - self.raw_first[d])
        }
    }

    /// Checks an answer the way an agent loop needs it, in one call: [`Index::verify`] over the
    /// ids given in `cited` plus every chunk id written in the answer itself (a fabricated id
    /// in the text is checked too), and [`Index::uncited_support`], where a sentence counts as
    /// cited when its best-supporting chunk is one of those cited ids or when it holds a quote
    /// of one (citations given apart from the text, as `wikidex verify --cite` takes them,
    /// cover the sentences they support).
    ///
    /// # Errors
    /// As [`Index::verify`] and [`Index::uncited_support`] ([`Error::TooLarge`](crate::Error)
    /// past their caps).
    pub fn check_answer(
        &self,
        answer: &str,
        cited: &[Cited],
        offered: &[String],
    ) -> crate::Result<AnswerCheck> {
        self.check_answer_in(answer, cited, offered, OffsetUnit::Byte)
    }

    /// [`Index::check_answer`] with the spans in `unit`.
    pub(crate) fn check_answer_in(
        &self,
        answer: &str,
        cited: &[Cited],
        offered: &[String],
        unit: OffsetUnit,
    ) -> crate::Result<AnswerCheck> {
        check_answer_over(self, answer, cited, offered, unit)
    }

    /// A compact block for an agent's context: per hit, its [citation header](format_header),
    /// its summary, where its best chunk is (`at: path:first-last (Heading > Sub)`), the
    /// chunk's text, and its `sources` pointers; plus the list of
    /// chunk ids shown (the `offered` list for [`Index::verify`]).
    pub fn prompt_block(&self, results: &SearchResults) -> PromptBlock {
        let mut text = String::new();
        let mut offered = Vec::new();
        for h in results.always.iter().chain(&results.hits) {
            text.push_str(&format_header(&h.page_id, &h.chunk, h.score, &h.title));
            text.push('\n');
            if let Some(s) = &h.summary {
                text.push_str("summary: ");
                text.push_str(s);
                text.push('\n');
            }
            if let Ok(c) = self.chunk(&h.chunk) {
                // Where a human finds it: `path:first-last`, and the section.
                text.push_str(&format!("at: {}:{}-{}", h.path, c.line_start, c.line_end));
                if !c.headings.is_empty() {
                    text.push_str(&format!(" ({})", c.headings.join(" > ")));
                }
                text.push('\n');
                if let Some(header) = &c.table_header {
                    // The chunk continues a table: its header first, so the rows read.
                    text.push_str(header);
                    text.push('\n');
                }
                text.push_str(c.text.trim());
                text.push('\n');
            }
            offered.push(h.chunk.clone());
            if let Some(p) = self.page_of_id(&h.page_id) {
                let pointers = self.pointers_of(p);
                if !pointers.is_empty() {
                    let list: Vec<String> = pointers
                        .iter()
                        .map(|p| format!("{} ({})", p.chunk, p.weight))
                        .collect();
                    text.push_str("sources: ");
                    text.push_str(&list.join(", "));
                    text.push('\n');
                    offered.extend(pointers.into_iter().map(|p| p.chunk));
                }
            }
            text.push('\n');
        }
        PromptBlock { text, offered }
    }
}

/// What the answer checks read of a wiki: the chunk a cited id names, the page a cited id names
/// when it is not a chunk's, a sentence's terms and its best-supporting chunk. One index answers
/// from itself; a sharded wiki from the shard holding the chunk or page, and the best support
/// of all the shards'.
pub(crate) trait CitedLookup {
    /// The chunk (a page's or a raw document's) with this id, if there is one.
    fn cited_chunk(&self, id: &str) -> Option<Chunk>;
    /// The id of the page this id names (a page id, else a global page's key), if one does.
    fn cited_page(&self, id: &str) -> Option<String>;
    /// The terms of `text` as the wiki analyzes them.
    fn terms_of(&self, text: &str) -> HashSet<String>;
    /// The id of the chunk (a page's or a raw document's) sharing most of `terms`, and how
    /// many it shares: the first in the wiki's order of chunks on ties.
    fn best_support(&self, terms: &HashSet<String>) -> Option<(String, usize)>;
}

impl CitedLookup for Index {
    fn cited_chunk(&self, id: &str) -> Option<Chunk> {
        self.chunk(id).ok()
    }

    fn cited_page(&self, id: &str) -> Option<String> {
        (self.page_named(id)).map(|(_, i)| self.pages()[i as usize].id())
    }

    fn terms_of(&self, text: &str) -> HashSet<String> {
        self.analyzer.terms(text).into_iter().collect()
    }

    fn best_support(&self, terms: &HashSet<String>) -> Option<(String, usize)> {
        (self.best_support_at(terms)).map(|(c, n)| (self.support_chunk_id(c), n))
    }
}

/// The chunk sharing most of `terms` over `shards`, as one index of all their chunks would
/// choose it (the most terms, then the first in the wiki's order of chunks), with how many
/// it shares.
pub(crate) fn best_support_over(
    shards: &[std::sync::Arc<Index>],
    terms: &HashSet<String>,
) -> Option<(String, usize)> {
    (shards.iter())
        .filter_map(|s| {
            s.best_support_at(terms)
                .map(|(c, n)| (n, s.support_order(c), s, c))
        })
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(&a.1)))
        .map(|(n, _, s, c)| (s.support_chunk_id(c), n))
}

/// [`Index::verify`] over `wiki`: one index, or every shard of a wiki
/// ([`crate::ShardedIndex::verify`]), with the quote spans in `unit`.
pub(crate) fn verify_over(
    wiki: &impl CitedLookup,
    answer: &str,
    cited: &[Cited],
    offered: &[String],
    unit: OffsetUnit,
) -> Result<Verification> {
    check_answer(answer)?;
    if cited.len() > MAX_CITATIONS {
        return Err(Error::too_large("cited ids", MAX_CITATIONS, cited.len()));
    }
    if offered.len() > MAX_CITATIONS {
        return Err(Error::too_large(
            "offered ids",
            MAX_CITATIONS,
            offered.len(),
        ));
    }
    let offered_set: HashSet<&str> = offered.iter().map(String::as_str).collect();
    let mut words: Option<AnswerWords> = None;
    let offered_docs: HashSet<&str> = offered
        .iter()
        .filter_map(|o| chunk::parse_chunk_id(o).map(|(d, _)| d))
        .collect();
    let mut seen = HashSet::new();
    let mut citations = Vec::new();
    for c in cited {
        if !seen.insert(c.id.as_str()) {
            continue;
        }
        citations.push(verdict(
            wiki,
            answer,
            &mut words,
            c,
            (&offered_set, &offered_docs),
            unit,
        ));
    }
    for o in offered {
        if !seen.insert(o.as_str()) {
            continue;
        }
        let v = match wiki.cited_chunk(o) {
            Some(ch) => Verdict {
                id: o.clone(),
                status: CitationStatus::Uncited,
                page_id: Some(ch.key_id()),
                hash: Some(ch.hash),
                quote: None,
            },
            None => unknown(o),
        };
        citations.push(v);
    }
    let passed = citations
        .iter()
        .all(|v| !matches!(v.status, CitationStatus::Unknown | CitationStatus::Drifted));
    Ok(Verification { citations, passed })
}

fn verdict(
    wiki: &impl CitedLookup,
    answer: &str,
    words: &mut Option<AnswerWords>,
    c: &Cited,
    (offered, offered_docs): (&HashSet<&str>, &HashSet<&str>),
    unit: OffsetUnit,
) -> Verdict {
    let Some(ch) = wiki.cited_chunk(&c.id) else {
        return match wiki.cited_page(&c.id) {
            Some(page_id) => Verdict {
                id: c.id.clone(),
                status: CitationStatus::None,
                page_id: Some(page_id),
                hash: None,
                quote: None,
            },
            None => unknown(&c.id),
        };
    };
    let page = ch.key_id();
    let mut v = Verdict {
        id: c.id.clone(),
        status: CitationStatus::Paraphrase,
        page_id: Some(page.clone()),
        hash: Some(ch.hash.clone()),
        quote: None,
    };
    // A hash means the model saw the chunk: an edit since is drift, whatever was offered.
    if c.hash.as_deref().is_some_and(|h| h != ch.hash) {
        v.status = CitationStatus::Drifted;
    } else if !offered.is_empty()
        && !offered.contains(c.id.as_str())
        && !offered_docs.contains(page.as_str())
    {
        v.status = CitationStatus::None;
    } else if let Some(q) = words
        .get_or_insert_with(|| AnswerWords::new(answer))
        .quote(&ch.text)
    {
        v.status = CitationStatus::Quote;
        v.quote = Some(QuoteSpan {
            answer_start: unit.convert(answer, q.answer_start),
            answer_end: unit.convert(answer, q.answer_end),
            chunk_start: unit.convert(&ch.text, q.chunk_start),
            chunk_end: unit.convert(&ch.text, q.chunk_end),
            words: q.words,
        });
    }
    v
}

/// [`Index::uncited_support`] over `wiki`: one index, or every shard of a wiki
/// ([`crate::ShardedIndex::uncited_support`]), with the sentence spans in `unit`.
pub(crate) fn uncited_support_over(
    wiki: &impl CitedLookup,
    answer: &str,
    unit: OffsetUnit,
) -> Result<Support> {
    check_answer(answer)?;
    let mut out = Support::default();
    for (start, sentence) in answer.split_sentence_bound_indices() {
        let (cites, plain) = id_spans(sentence);
        let terms = wiki.terms_of(&plain);
        if terms.len() < MIN_SENTENCE_TERMS {
            continue;
        }
        // The chunk sharing most terms; the first in the wiki's chunk order on ties.
        let best = wiki.best_support(&terms);
        let score = best
            .as_ref()
            .map_or(0.0, |(_, n)| *n as f32 / terms.len() as f32);
        let best_id = best.map(|(id, _)| id);
        let trimmed = sentence.trim();
        let lead = sentence.len() - sentence.trim_start().len();
        let s = SentenceSupport {
            start: unit.convert(answer, start + lead),
            end: unit.convert(answer, start + lead + trimmed.len()),
            text: trimmed.to_string(),
            cites: cites.clone(),
            best_chunk: best_id,
            score,
        };
        if score >= SUPPORT_THRESHOLD {
            if cites.is_empty() {
                out.uncited.push(s);
            }
        } else {
            out.unsupported.push(s);
        }
    }
    Ok(out)
}

/// [`Index::check_answer`] over `wiki`: one index, or every shard of a wiki
/// ([`crate::ShardedIndex::check_answer`]), with the spans in `unit`.
pub(crate) fn check_answer_over(
    wiki: &impl CitedLookup,
    answer: &str,
    cited: &[Cited],
    offered: &[String],
    unit: OffsetUnit,
) -> crate::Result<AnswerCheck> {
    check_answer(answer)?;
    let mut all: Vec<Cited> = cited.to_vec();
    let mut seen: HashSet<String> = cited.iter().map(|c| c.id.clone()).collect();
    for id in cited_ids(answer) {
        if seen.insert(id.to_string()) {
            all.push(Cited::id(id));
        }
    }
    let verification = verify_over(wiki, answer, &all, offered, unit)?;
    let mut support = uncited_support_over(wiki, answer, unit)?;
    // A sentence is cited when a cited chunk is its best support, or when a quote of a
    // cited chunk lies in it (spans are in the same offset unit).
    let quotes: Vec<(usize, usize)> = verification
        .citations
        .iter()
        .filter_map(|v| v.quote.map(|q| (q.answer_start, q.answer_end)))
        .collect();
    support.uncited.retain(|s| {
        let by_best = s
            .best_chunk
            .as_ref()
            .is_some_and(|b| all.iter().any(|c| &c.id == b));
        let quoted = quotes.iter().any(|&(a, b)| a < s.end && b > s.start);
        !by_best && !quoted
    });
    Ok(AnswerCheck {
        verification,
        support,
    })
}

fn unknown(id: &str) -> Verdict {
    Verdict {
        id: id.to_string(),
        status: CitationStatus::Unknown,
        page_id: None,
        hash: None,
        quote: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IndexBuilder;

    const LEAK: &str = "The segment_enricher pod was OOM-killed three times, and nightly_build failed at 03:31 UTC.";

    fn index() -> Index {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        b.add_file("raw/slack.md", LEAK.as_bytes()).unwrap();
        b.add_file("global/leak.md", b"---\nsummary: The leak.\nsources: [raw/slack::chunk_0]\n---\nA memory leak in segment_enricher crashed the nightly job.").unwrap();
        b.add_file("global/other.md", b"Revenue is recognized monthly in USD.")
            .unwrap();
        b.build().unwrap().0
    }

    fn statuses(v: &Verification) -> Vec<(&str, &str)> {
        v.citations
            .iter()
            .map(|c| (c.id.as_str(), c.status.name()))
            .collect()
    }

    #[test]
    fn a_verbatim_quote_survives_whitespace_and_case_changes() {
        let i = index();
        let answer = "Slack says: the SEGMENT_ENRICHER pod was\n  OOM-killed three times, and nightly_build failed.";
        let v = i
            .verify(answer, &[Cited::id("raw/slack::chunk_0")], &[])
            .unwrap();
        assert_eq!(statuses(&v), [("raw/slack::chunk_0", "quote")]);
        let q = v.citations[0].quote.unwrap();
        assert_eq!(
            &answer[q.answer_start..q.answer_end],
            "the SEGMENT_ENRICHER pod was\n  OOM-killed three times, and nightly_build failed"
        );
        assert_eq!(
            &LEAK[q.chunk_start..q.chunk_end],
            "The segment_enricher pod was OOM-killed three times, and nightly_build failed"
        );
    }

    #[test]
    fn fabricated_ids_are_unknown_and_edited_chunks_drifted() {
        let i = index();
        let v = i
            .verify(
                "It crashed.",
                &[
                    Cited::id("raw/slack::chunk_7"),
                    Cited::id("made_up::chunk_0"),
                    Cited::parse("global/leak::chunk_0"),
                    Cited::parse("leak::chunk_0@0123"),
                ],
                &[],
            )
            .unwrap();
        assert_eq!(
            statuses(&v),
            [
                ("raw/slack::chunk_7", "unknown"),
                ("made_up::chunk_0", "unknown"),
                ("global/leak::chunk_0", "unknown"),
                ("leak::chunk_0", "drifted"),
            ]
        );
        assert!(!v.passed);
    }

    #[test]
    fn paraphrase_uncited_and_none() {
        let i = index();
        let offered = vec!["leak::chunk_0".to_string(), "other::chunk_0".to_string()];
        let v = i
            .verify(
                "The job died because of a leak.",
                &[
                    Cited::id("leak::chunk_0"),
                    Cited::id("raw/slack::chunk_0"),
                    Cited::id("other"),
                ],
                &offered,
            )
            .unwrap();
        assert_eq!(
            statuses(&v),
            [
                ("leak::chunk_0", "paraphrase"),
                ("raw/slack::chunk_0", "none"),
                ("other", "none"),
                ("other::chunk_0", "uncited"),
            ]
        );
        assert!(v.passed);
    }

    #[test]
    fn a_citation_given_apart_from_the_answer_covers_the_sentence_it_supports() {
        let i = index();
        let answer = "As logged, the segment_enricher pod was OOM-killed three times, and \
                      nightly_build failed at 03:31 UTC.";
        // Alone, the sentence cites nothing in its text.
        assert_eq!(i.uncited_support(answer).unwrap().uncited.len(), 1);
        let checked = i
            .check_answer(answer, &[Cited::id("raw/slack::chunk_0")], &[])
            .unwrap();
        assert!(checked.support.uncited.is_empty());
        assert_eq!(
            checked.verification.citations[0].status,
            CitationStatus::Quote
        );
        // An id written in the answer is verified even when not given.
        let invented = format!("{answer} [made_up::chunk_0]");
        let checked = i.check_answer(&invented, &[], &[]).unwrap();
        assert_eq!(checked.verification.citations[0].id, "made_up::chunk_0");
        assert!(!checked.verification.passed);
    }

    #[test]
    fn uncited_support_finds_copied_and_invented_sentences() {
        let i = index();
        let answer = "The segment_enricher pod was OOM-killed three times. Revenue is recognized monthly [other::chunk_0]. Penguins invented jazz in Antarctica.";
        let s = i.uncited_support(answer).unwrap();
        assert_eq!(s.uncited.len(), 1);
        assert_eq!(
            s.uncited[0].best_chunk.as_deref(),
            Some("raw/slack::chunk_0")
        );
        assert_eq!(s.unsupported.len(), 1);
        assert!(s.unsupported[0].text.starts_with("Penguins"));
        assert_eq!(
            &answer[s.unsupported[0].start..s.unsupported[0].end],
            s.unsupported[0].text
        );
    }

    #[test]
    fn headers_round_trip_and_ids_are_found_in_text() {
        let h = format_header("leak", "leak::chunk_0", 0.5, "Memory leak");
        let two = format!("{h}\nbody\n[page a | chunk a::chunk_1] A title");
        let parsed = parse_headers(&two);
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].score, Some(0.5));
        assert_eq!(parsed[0].title, "Memory leak");
        assert_eq!(parsed[1].chunk, "a::chunk_1");
        assert_eq!(parsed[1].score, None);
        assert_eq!(
            cited_ids("see [leak::chunk_0], raw/x::chunk_2."),
            ["leak::chunk_0", "raw/x::chunk_2"]
        );
    }

    #[test]
    fn the_prompt_block_lists_hits_and_pointers_as_offered() {
        let i = index();
        let r = i.search("memory leak", &Default::default()).unwrap();
        let block = i.prompt_block(&r);
        assert!(block
            .text
            .starts_with("[page leak · chunk leak::chunk_0 · score "));
        assert!(block.text.contains("sources: raw/slack::chunk_0 (1)"));
        assert_eq!(block.offered[..2], ["leak::chunk_0", "raw/slack::chunk_0"]);
    }
}
