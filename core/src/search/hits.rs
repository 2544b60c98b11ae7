//! Hits made from ranked chunks: the page fields, the lane ranks, explanations, dates and
//! snippets with their highlights.

#[cfg(doc)]
use super::SearchOptions;
use super::{Explanation, Highlight, Hit, LaneHit, LaneReport, Snippet, SNIPPET_CHARS};
use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::OnceLock;

use crate::data::offset::OffsetUnit;
use crate::index::Index;
use crate::lane::fusion::{self, Fused};
use crate::lane::lexical::{Bm25Scorer, Explained, TermScore};
use crate::lane::phrase::Positions;
use crate::lane::typo::{self, Expansion};
use crate::lane::{token, Lane};
use crate::text::analyze::{self, BuildHash, QueryTerm};
use crate::text::chunk;
use crate::text::page::{Page, UsageMode};

pub(super) struct HitContext<'a> {
    pub(super) index: &'a Index,
    /// What explanations score by: the index's own scorer, or a shard's with its wiki's
    /// statistics.
    pub(super) scorer: &'a Bm25Scorer,
    /// Per query term: whether the dictionary the query was analyzed against holds it (a
    /// shard's hits: the wiki's, which decides the prefixes snippets match); `None`: this
    /// index's.
    pub(super) known: Option<&'a [bool]>,
    /// The unit of the offsets in the hits.
    pub(super) unit: OffsetUnit,
    pub(super) qterms: Vec<QueryTerm<'a>>,
    pub(super) typos: &'a [Expansion],
    pub(super) reports: &'a [LaneReport],
    /// Whether hits carry a snippet ([`SearchOptions::snippets`]).
    pub(super) snippets: bool,
    /// Whether hits carry an explanation ([`SearchOptions::explain`]).
    pub(super) explain: bool,
    /// The term positions of the whole index, which snippets match by; `None` for an index
    /// without them or one loaded in parts ([`crate::RangedIndex`]: only its phrase terms'
    /// positions are loaded), whose snippets match each word.
    pub(super) positions: Option<&'a Positions>,
    /// What the search's snippets match, made on its first snippet and kept by its
    /// [`Found`](super::Found) for the hits it makes later.
    pub(super) match_terms: &'a OnceLock<MatchTerms>,
    /// Made on this context's first snippet.
    pub(super) matcher: OnceCell<Matcher<'a>>,
}

impl<'a> HitContext<'a> {
    pub(super) fn hit(&self, f: &Fused) -> Hit {
        let k = self.index.data.config.fusion.k;
        let lanes = lane_hits(self.reports, k, Some(f), |c| self.index.chunk_id(c));
        self.ranked_hit(f.chunk, f.score, lanes, explained_chunk(f))
    }

    /// The hit of chunk `c`, ranked with `score` and `lanes`, its explanation (when asked for)
    /// of chunk `explained` (the lexical lane's chunk of its page).
    pub(super) fn ranked_hit(
        &self,
        c: u32,
        score: f32,
        lanes: Vec<LaneHit>,
        explained: u32,
    ) -> Hit {
        let mut hit = self.base(c, score, lanes);
        if self.explain {
            hit.explain = Some(Explanation {
                lexical: self.explain_lexical(explained),
                k: self.index.data.config.fusion.k,
            });
        }
        hit
    }

    /// Each query term's part in chunk `c`'s lexical score: the term itself, or the terms typo
    /// tolerance took it for that the chunk contains (the term alone, with tf 0, when it
    /// contains none).
    fn explain_lexical(&self, c: u32) -> Vec<TermScore> {
        let lexical = &self.index.data.lexical;
        let scorer = self.scorer;
        let mut out = Vec::new();
        for (i, q) in self.qterms.iter().enumerate() {
            let count = q.count as f32;
            let plain = Explained {
                term: &q.term,
                at: lexical.lookup(&q.term),
                weight: count,
                typo: None,
            };
            let typos: Vec<Explained<'_>> = self
                .typos
                .iter()
                .filter(|e| e.query == i && !e.prefix)
                .map(|e| Explained {
                    term: &q.term,
                    at: Some(e.term),
                    weight: count * typo::discount(e.edits),
                    typo: Some(e.edits),
                })
                .collect();
            let matched: Vec<TermScore> = scorer
                .explain_terms(lexical, &typos, c)
                .into_iter()
                .filter(|t| t.tf > 0)
                .collect();
            if matched.is_empty() {
                out.extend(scorer.explain_terms(lexical, &[plain], c));
            } else {
                out.extend(matched);
            }
        }
        out
    }

    /// An `always` page: not ranked by any lane (they are masked out), score 0, with the chunk
    /// that contains the most query terms.
    pub(super) fn always_hit(&self, page: usize) -> Hit {
        let lanes = lane_hits(self.reports, 0.0, None, |_| String::new());
        self.base(self.always_chunk(page), 0.0, lanes)
    }

    /// The chunk an `always` page's hit shows ([`HitContext::always_hit`]).
    pub(super) fn always_chunk(&self, page: usize) -> u32 {
        let first = self.index.first_chunk[page];
        let end = self.index.first_chunk[page + 1];
        self.best_chunk_by_terms(first, end)
    }

    /// The chunk of `first..end` that contains the most query terms (the first on ties).
    fn best_chunk_by_terms(&self, first: u32, end: u32) -> u32 {
        let lexical = &self.index.data.lexical;
        let has = |t: usize, c: u32| lexical.postings_of(t).0.binary_search(&c).is_ok();
        let count = |c: u32| {
            self.qterms
                .iter()
                .enumerate()
                .filter(|(i, q)| {
                    lexical.lookup(&q.term).is_some_and(|t| has(t, c))
                        || self.typos.iter().any(|e| e.query == *i && has(e.term, c))
                })
                .count()
        };
        (first..end)
            .max_by_key(|&c| (count(c), std::cmp::Reverse(c)))
            .unwrap_or(first)
    }

    /// The snippet of chunk `c`, whatever [`HitContext::snippets`] says.
    pub(super) fn snippet(&self, c: u32) -> Snippet {
        let index = self.index;
        let matcher = self.matcher.get_or_init(|| {
            let what = self.match_terms.get_or_init(|| {
                MatchTerms::new(
                    index,
                    (&self.qterms, self.known),
                    self.typos,
                    self.positions.is_some(),
                )
            });
            Matcher::new(what, self.positions)
        });
        snippet(index, self.unit, matcher, c)
    }

    fn base(&self, c: u32, score: f32, lanes: Vec<LaneHit>) -> Hit {
        let index = self.index;
        let page_index = index.chunk_page[c as usize];
        let p: &Page = &index.data.pages[page_index as usize];
        let record = &index.data.chunks[c as usize];
        let snippet = self.snippets.then(|| self.snippet(c));
        let page_id = p.id();
        let (line_start, line_end) =
            crate::text::chunk::line_range(&p.text, record.start as usize, record.end as usize);
        Hit {
            line_start,
            line_end,
            headings: crate::text::chunk::heading_path(
                &p.text,
                p.body_start as usize,
                record.start as usize,
            ),
            key: p.key.clone(),
            chunk: index.chunk_id(c),
            page_id,
            scope: p.scope.clone(),
            path: p.path.clone(),
            title: p.title.clone(),
            summary: p.summary.clone(),
            kind: p.kind.clone(),
            tags: p.tags.clone(),
            score,
            chunk_hash: index.chunk_hash(c).to_string(),
            snippet,
            lanes,
            always: p.usage_mode == UsageMode::Always,
            stale_since: p.stale_since.clone(),
            date: hit_date(p, index.data.page_modified.get(page_index as usize)),
            explain: None,
        }
    }
}

/// A hit's part of each lane in `reports` (RRF constant `k`): its rank, score and share of the
/// fused hit `f`, and the chunk the lane ranked when it is not the hit's (`chunk_id` names
/// it); no rank for an `always` page (`f` is `None`).
pub(super) fn lane_hits(
    reports: &[LaneReport],
    k: f32,
    f: Option<&Fused>,
    chunk_id: impl Fn(u32) -> String,
) -> Vec<LaneHit> {
    (reports.iter())
        .map(|r| {
            let at = f.and_then(|f| fusion::lane_rank(f, r.lane));
            LaneHit {
                lane: r.lane,
                status: r.status.kind(),
                rank: at.map(|a| a.rank),
                score: at.map(|a| a.score),
                contribution: at.map(|a| r.weight / (k + a.rank as f32)),
                chunk: (at.zip(f))
                    .filter(|(a, f)| a.chunk != f.chunk)
                    .map(|(a, _)| chunk_id(a.chunk)),
            }
        })
        .collect()
}

/// The chunk a fused hit's explanation reads: the lexical lane's own chunk of its page, so the
/// terms add up to that lane's score.
pub(super) fn explained_chunk(f: &Fused) -> u32 {
    fusion::lane_rank(f, Lane::Lexical).map_or(f.chunk, |r| r.chunk)
}

/// The date a hit shows: the one the date filters read. The frontmatter's, as written, when
/// it parses; else the file's modification time; else the frontmatter's as written, if any.
fn hit_date(page: &Page, modified: Option<&Option<i64>>) -> Option<String> {
    let written = page.date();
    if written.is_some_and(|d| crate::data::date::parse(d, false).is_some()) {
        return written.map(str::to_string);
    }
    match modified.copied().flatten() {
        Some(t) => Some(crate::data::date::format(t)),
        None => written.map(str::to_string),
    }
}

/// What a search's snippets match, made once per search (on its first snippet): the query's
/// terms and those typo tolerance took them for (as dictionary positions), and the prefixes
/// the token lane matches. A word matches when its term is one of those terms, or when it has
/// a term (it is not a stopword) and its normalized text starts with one of the prefixes.
///
/// With the index's term positions, a snippet finds its matches there: each term's
/// positions in the chunk, and for the prefixes the positions of the terms a word starting
/// with one may have ([`LexicalIndex::terms_of_prefix`]), each such word then checked. Else
/// (no positions, or a prefix that more than [`PREFIX_TERMS`] terms start with) it looks up
/// each word of the chunk ([`Matcher`]).
///
/// [`LexicalIndex::terms_of_prefix`]: crate::postings::LexicalIndex
pub(super) struct MatchTerms {
    /// Few (a query's terms), so a scan beats a set.
    terms: Vec<usize>,
    prefixes: Vec<String>,
    /// With positions to match by: the terms the prefixes' words may have (none of `terms`).
    prefixed: Option<Vec<usize>>,
}

impl MatchTerms {
    /// What a search of `qterms` matches (`known`: per term, whether the dictionary the query
    /// was analyzed against holds it; `None`: `index`'s).
    pub(super) fn new(
        index: &Index,
        (qterms, known): (&[QueryTerm<'_>], Option<&[bool]>),
        typos: &[Expansion],
        by_positions: bool,
    ) -> Self {
        let lexical = &index.data.lexical;
        let known =
            |i: usize| known.map_or_else(|| lexical.lookup(&qterms[i].term).is_some(), |k| k[i]);
        // A query term the index lacks is in no chunk: nothing to match.
        let terms: Vec<usize> = qterms
            .iter()
            .filter_map(|q| lexical.lookup(&q.term))
            .chain(typos.iter().map(|e| e.term))
            .collect();
        let prefixes: Vec<String> = (0..qterms.len())
            .flat_map(|i| token::prefixes(known(i), i, qterms))
            .map(str::to_string)
            .collect();
        let prefixed = by_positions
            .then(|| {
                let mut prefixed = Vec::new();
                for p in &prefixes {
                    prefixed.extend(lexical.terms_of_prefix(p, PREFIX_TERMS)?);
                }
                prefixed.sort_unstable();
                prefixed.dedup();
                prefixed.retain(|t| !terms.contains(t));
                Some(prefixed)
            })
            .flatten();
        MatchTerms {
            terms,
            prefixes,
            prefixed,
        }
    }

    /// Whether a token's normalized text starts with one of the prefixes.
    fn starts_with_prefix(&self, norm: &str) -> bool {
        self.prefixes.iter().any(|p| norm.starts_with(p.as_str()))
    }
}

/// A snippet maker over [`MatchTerms`]: the index's positions when it matches by them, else
/// each word's answer remembered for the other hits it makes.
pub(super) struct Matcher<'a> {
    what: &'a MatchTerms,
    /// The index's positions and the terms the prefixes' words may have.
    by_position: Option<(&'a Positions, &'a [usize])>,
    /// (raw token text, is a CJK token) → whether it matches.
    seen: RefCell<HashMap<(&'a str, bool), bool, BuildHash>>,
}

/// Where a snippet may be cut (a word or a CJK character: start and length in bytes), its
/// matches (start, end) in bytes of the chunk, the ordinals of the chunk's tokens that match
/// (with whether the match is exact, else to be checked against the prefixes), and one term's
/// positions: a thread's buffers for its snippets, kept between them for their memory (a
/// binding makes each hit's snippet in a call of its own).
type Scratch = (
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
    Vec<(u32, bool)>,
    Vec<u32>,
);

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// Distinct words a search's snippets meet, about, to size [`Matcher::seen`] once (on its
/// first word: a snippet matched by term positions never fills it) rather than grow it from
/// empty (ten hits of a few hundred words).
const SEEN_WORDS: usize = 1024;

/// The most terms a snippet looks up the positions of for one prefix (each a binary search in
/// its postings per hit); a shorter prefix is matched word by word.
const PREFIX_TERMS: usize = 64;

impl<'a> Matcher<'a> {
    fn new(what: &'a MatchTerms, positions: Option<&'a Positions>) -> Self {
        Matcher {
            what,
            by_position: positions.zip(what.prefixed.as_deref()),
            seen: RefCell::default(),
        }
    }

    /// Whether a token of indexed text matches (see [`Matcher`]), looked up.
    fn matches(&self, index: &Index, text: &'a str, cjk: bool) -> bool {
        if let Some(&m) = self.seen.borrow().get(&(text, cjk)) {
            return m;
        }
        let m = self.decide(index, text, cjk);
        let mut seen = self.seen.borrow_mut();
        if seen.capacity() == 0 {
            seen.reserve(SEEN_WORDS);
        }
        seen.insert((text, cjk), m);
        m
    }

    fn decide(&self, index: &Index, text: &str, cjk: bool) -> bool {
        let lexical = &index.data.lexical;
        // Every word of indexed text is in the index's surface table, so its term is a
        // look-up, not a stemming; a CJK token's term is its normalized text.
        let norm = index.analyzer.normalize(text);
        let term = if cjk {
            lexical.lookup(&norm)
        } else {
            lexical
                .surface_term_at(&norm)
                .or_else(|| index.analyzer.term(text).and_then(|t| lexical.lookup(&t)))
        };
        term.is_some_and(|t| self.what.terms.contains(&t) || self.what.starts_with_prefix(&norm))
    }
}

/// The position of the first token of chunk `c`'s own text (`text`, at byte `start` of the
/// page `page`): after the page's key, title and summary, and the header of the table the
/// chunk continues, which is indexed before it ([`chunk::indexed_texts`]).
fn first_position(page: &Page, start: usize, text: &str) -> u32 {
    let mut at = crate::lane::lexical::text_position(page);
    if text.lines().next().is_some_and(chunk::is_table_row) {
        if let Some(header) = chunk::table_header(&page.text, page.body_start as usize, start) {
            let tokens = analyze::tokens(&header).count();
            at = at.saturating_add(u32::try_from(tokens).unwrap_or(u32::MAX));
        }
    }
    at
}

/// One pass over the words of `text` from byte `from` (a word's start, or where an earlier
/// walk stopped): where a snippet may be cut, appended to `cuts` (each word's start and length,
/// and each character of a CJK run, which has no spaces), and `token(start, text, cjk)` for each
/// token in order, as [`analyze::tokens`] gives them (a word, or a CJK run's overlapping
/// bigrams). It stops after the word of the token for which `token` breaks, and returns where
/// it stopped: that word's end, else `text`'s.
fn walk<'a>(
    text: &'a str,
    from: usize,
    cuts: &mut Vec<(usize, usize)>,
    mut token: impl FnMut(usize, &'a str, bool) -> ControlFlow<()>,
) -> usize {
    if text[from..].is_ascii() {
        for (s, end) in analyze::ascii_words(&text[from..]) {
            let (s, end) = (from + s, from + end);
            cuts.push((s, end - s));
            if token(s, &text[s..end], false).is_break() {
                return end;
            }
        }
        return text.len();
    }
    for (s, w) in analyze::words(&text[from..]) {
        let (s, end) = (from + s, from + s + w.len());
        if !w.starts_with(analyze::is_cjk) {
            cuts.push((s, w.len()));
            if token(s, &text[s..end], false).is_break() {
                return end;
            }
            continue;
        }
        let first = cuts.len();
        cuts.extend(analyze::cjk_chars(s, &text[s..end]).map(|(c, t)| (c, t.len())));
        let chars = &cuts[first..];
        let flow = if let [(c, _)] = chars {
            token(*c, &text[*c..end], true)
        } else {
            (chars.windows(2)).try_for_each(|pair| {
                let ((a, _), (b, bn)) = (pair[0], pair[1]);
                token(a, &text[a..b + bn], true)
            })
        };
        if flow.is_break() {
            return end;
        }
    }
    text.len()
}

/// Adds the token `start..end` of a chunk to its matches. CJK bigrams overlap: matched
/// neighbours make one highlight (`自然语言` for the bigrams `自然 然语 语言`). Words never
/// overlap.
fn add_match(matched: &mut Vec<(usize, usize)>, start: usize, end: usize) {
    match matched.last_mut() {
        Some(last) if start < last.1 => last.1 = last.1.max(end),
        _ => matched.push((start, end)),
    }
}

/// About [`SNIPPET_CHARS`] characters of chunk `c`'s text around the densest run of query
/// terms (and the terms typo tolerance took them for), with their offsets in the index's
/// unit; its offset counts from the start of the page's body.
fn snippet<'a>(index: &'a Index, unit: OffsetUnit, matcher: &Matcher<'a>, c: u32) -> Snippet {
    crate::lane::with_reused(&SCRATCH, |scratch| {
        snippet_in(index, unit, matcher, c, scratch)
    })
}

/// [`snippet`] with this thread's buffers.
fn snippet_in<'a>(
    index: &'a Index,
    unit: OffsetUnit,
    matcher: &Matcher<'a>,
    c: u32,
    (words, matched, wanted, list): &mut Scratch,
) -> Snippet {
    let text = index.chunk_text(c);
    let record = &index.data.chunks[c as usize];
    let page = &index.data.pages[record.page as usize];
    matched.clear();
    words.clear();
    // How far the walk went: with positions, it stops at the last token they name.
    let walked = if let Some((positions, prefixed)) = &matcher.by_position {
        let lexical = &index.data.lexical;
        let first = first_position(page, record.start as usize, text);
        wanted.clear();
        let exact = matcher.what.terms.iter().map(|&t| (t, true));
        for (t, exact) in exact.chain(prefixed.iter().map(|&t| (t, false))) {
            if positions.of_chunk(lexical, t, c, list) {
                wanted.extend(
                    list.iter()
                        .filter_map(|p| p.checked_sub(first))
                        .map(|o| (o, exact)),
                );
            }
        }
        // By ordinal, an exact match before a prefix's candidate at the same token.
        wanted.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        wanted.dedup_by_key(|w| w.0);
        match wanted.last() {
            None => 0,
            Some(&(last, _)) => {
                let (mut ordinal, mut next) = (0u32, 0usize);
                walk(text, 0, words, |start, t, _| {
                    let i = ordinal;
                    ordinal += 1;
                    while wanted.get(next).is_some_and(|w| w.0 < i) {
                        next += 1;
                    }
                    match wanted.get(next) {
                        Some(&(o, exact))
                            if o == i
                                && (exact
                                    || matcher
                                        .what
                                        .starts_with_prefix(&index.analyzer.normalize(t))) =>
                        {
                            add_match(matched, start, start + t.len());
                        }
                        _ => {}
                    }
                    if i >= last {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                })
            }
        }
    } else {
        walk(text, 0, words, |start, t, cjk| {
            if matcher.matches(index, t, cjk) {
                add_match(matched, start, start + t.len());
            }
            ControlFlow::Continue(())
        })
    };
    // Window start: the match that has the most other matches within SNIPPET_CHARS bytes
    // after it (bytes approximate characters well enough to choose a window).
    let mut start = 0;
    let mut best = 0;
    for (i, &(s, _)) in matched.iter().enumerate() {
        let n = matched[i..]
            .iter()
            .take_while(|&&(e, _)| e < s + SNIPPET_CHARS)
            .count();
        if n > best {
            best = n;
            start = s;
        }
    }
    // Back up a few words for context, then cut at word boundaries (the cut points, ascending,
    // hold every word before the walk's stop, and the matches are before it).
    let lead = SNIPPET_CHARS / 5;
    if start > 0 {
        let floor = start.saturating_sub(lead);
        let at = words.partition_point(|&(s, _)| s < floor);
        start = words
            .get(at)
            .map(|&(s, _)| s)
            .filter(|&s| s <= start)
            .unwrap_or(start);
    }
    let end = window_end(text, start);
    // The cut points up to the window's end, where the matches' walk stopped before it.
    if walked < end {
        walk(text, walked, words, |s, _, _| {
            if s >= end {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
    }
    // Do not cut a word in half (cut points do not overlap: one word at most holds `end`).
    let before = words.partition_point(|&(s, _)| s < end);
    let end = match before.checked_sub(1).map(|i| words[i]) {
        Some((ws, n)) if ws + n > end && end < text.len() && ws > start => ws,
        _ => end,
    };
    // Collapse whitespace runs (newlines included) to one space; map highlights onto the
    // collapsed text, counting its units as it is written. A highlight's start or end maps
    // to where the character at (or after) it lands; one at the slice's end to the text's end.
    let slice = text[start..end].trim_end();
    let lead_ws = slice.len() - slice.trim_start().len();
    let from = start + lead_ws;
    let to = start + slice.len();
    let mut bounds = matched
        .iter()
        .filter(|&&(s, e)| s >= from && e <= to)
        .flat_map(|&(s, e)| [s, e])
        .peekable();
    // Each highlight's start waits here for its end.
    let (mut highlights, mut open) = (Vec::new(), None);
    let mut mark = |at: usize| {
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        match open.take() {
            None => open = Some(at),
            Some(start) => highlights.push(Highlight { start, end: at }),
        }
    };
    let shown = &text[from..to];
    let bytes = shown.as_bytes();
    let mut out = String::with_capacity(shown.len());
    let mut units = 0usize;
    let mut in_space = false;
    let mut i = 0;
    while i < bytes.len() {
        while bounds.next_if(|&b| b <= from + i).is_some() {
            mark(units);
        }
        // A run of ASCII characters that are not spaces, up to the next highlight's bound:
        // copied at once, a unit a character in every unit.
        let stop = bounds
            .peek()
            .map_or(bytes.len(), |&b| b - from)
            .min(bytes.len());
        let run = bytes[i..stop]
            .iter()
            .position(|&b| !b.is_ascii() || char::from(b).is_whitespace())
            .map_or(stop, |n| i + n);
        if run > i {
            out.push_str(&shown[i..run]);
            units += run - i;
            in_space = false;
            i = run;
            continue;
        }
        let ch = shown[i..].chars().next().unwrap_or(' ');
        i += ch.len_utf8();
        let put = if ch.is_whitespace() {
            let put = (!in_space).then_some(' ');
            in_space = true;
            put
        } else {
            in_space = false;
            Some(ch)
        };
        if let Some(put) = put {
            out.push(put);
            units += unit.units(put);
        }
    }
    bounds.for_each(|_| mark(units));
    Snippet {
        offset: unit.convert_u32(
            page.body(),
            (record.start as usize).saturating_sub(page.body_start as usize) + from,
        ),
        text: out,
        highlights,
    }
}

/// One past the last byte of the [`SNIPPET_CHARS`] characters of `text` from byte `start`
/// (its end when fewer are left).
fn window_end(text: &str, start: usize) -> usize {
    let rest = &text[start..];
    let n = rest.len().min(SNIPPET_CHARS);
    if rest.as_bytes()[..n].is_ascii() {
        return start + n;
    }
    rest.char_indices()
        .take(SNIPPET_CHARS)
        .last()
        .map_or(start, |(i, c)| start + i + c.len_utf8())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The snippet's one pass gives the tokens `analyze::tokens` gives, and cuts at each
        /// word and at each character of a CJK run.
        #[test]
        fn the_snippet_walk_gives_the_analyzers_tokens_and_the_cut_points(
            text in "[ab Éé.\u{301}\u{3099}語言処理かなｶﾞ한국]{0,24}",
        ) {
            let mut cuts = Vec::new();
            let mut got = Vec::new();
            walk(&text, 0, &mut cuts, |s, t, cjk| {
                got.push((s, t, cjk));
                ControlFlow::Continue(())
            });
            let want: Vec<(usize, &str, bool)> =
                analyze::tokens(&text).map(|t| (t.start, t.text, t.cjk)).collect();
            proptest::prop_assert_eq!(got, want);
            let mut want_cuts = Vec::new();
            for (s, w) in analyze::words(&text) {
                if w.starts_with(analyze::is_cjk) {
                    want_cuts.extend(analyze::cjk_chars(s, w).map(|(c, t)| (c, t.len())));
                } else {
                    want_cuts.push((s, w.len()));
                }
            }
            proptest::prop_assert_eq!(cuts, want_cuts);
        }
    }
}
