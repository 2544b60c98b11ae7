//! Search: normalize the query, filter, rank in each lane, fuse, collapse chunks to
//! pages, add snippets and explanations.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::analyze::{self, QueryTerm};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::fusion::{self, Fused, LaneRanking};
use crate::lane::lexical::{Explained, TermScore};
use crate::lane::phrase::NO_POSITIONS;
use crate::lane::typo::{self, Expansion};
use crate::lane::{semantic, token, Lane, LaneStatus, StatusKind, NOT_REQUESTED, NO_QUERY_TERMS};
use crate::offset::OffsetUnit;
use crate::page::{Page, Scope, UsageMode};
use crate::snapshot::{Caller, Index, Unfiltered};

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest number of hits a search returns.
pub const MAX_LIMIT: usize = 100;
/// Largest number of candidates a lane contributes to fusion.
pub const MAX_CANDIDATES: usize = 100;
/// Target snippet length in characters.
pub const SNIPPET_CHARS: usize = 150;
/// The most threads [`Index::rank_many`] spreads one batch over.
pub const MAX_RANK_THREADS: usize = 64;

/// Where pages with `usage_mode: always` go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlwaysMode {
    /// Before the ranked hits, inline; they take no slot of the limit (up to `limit` ranked
    /// hits follow them).
    First,
    /// In [`SearchResults::always`], apart from the ranked hits (the default).
    #[default]
    Separate,
}

/// How to search. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchOptions {
    /// Hits to return: default 20, at least 1 (0 is [`Error::InvalidArgument`] on every
    /// surface); more than [`MAX_LIMIT`] is taken as [`MAX_LIMIT`].
    pub limit: Option<usize>,
    /// Lanes to run (`None`: every lane the index supports).
    pub lanes: Option<Vec<Lane>>,
    /// Keep pages with at least one of these tags (case-insensitive). Empty: no filter.
    pub tags: Vec<String>,
    /// Keep pages with one of these types (case-insensitive). Empty: no filter.
    pub types: Vec<String>,
    /// Search as this scope: a user scope sees its own pages and the global ones, its own
    /// shadowing global pages with the same key; `global` sees global pages only; `None` sees
    /// every page of every scope.
    pub scope: Option<Scope>,
    /// Keep pages with one of these usage modes. Empty: `auto` and `always` (pages with
    /// `never` are never returned, whatever this says).
    pub usage_modes: Vec<UsageMode>,
    /// Return chunk hits (several per page) instead of collapsing to the best chunk per page.
    pub chunks: bool,
    /// Where `always` pages go: apart in [`SearchResults::always`] (default) or first among
    /// the hits; either way they take no slot of `limit`.
    pub always: AlwaysMode,
    /// Add per-term lexical explanations and per-lane fusion contributions to each hit.
    pub explain: bool,
    /// Add a snippet of the best chunk to each hit (default true).
    pub snippets: bool,
    /// The query's embedding for the semantic lane, when the caller computes it (bring your
    /// own embeddings). `None`: the attached embedder embeds the query, if there is one.
    pub query_vector: Option<Vec<f32>>,
    /// Typo tolerance in the lexical and token lanes (default true): a query word the index
    /// does not know also matches the words of the text one edit away (words of 5 to 8
    /// characters) or two (9 or more), scored below an exact match; see
    /// [`crate::lane::typo`]. `false` matches every word exactly, as before typo tolerance.
    pub typos: bool,
    /// Count the `tags` and `type`s of every page that matches (see [`Facets`]) into
    /// [`SearchResults::facets`] (default false: it costs a pass over the query's postings).
    pub facets: bool,
    /// Keep pages dated on or after this (`2024-03-12`, or a date-time such as
    /// `2024-03-12T09:30:00Z`; see [`crate::date::parse`]). A page's date is its frontmatter's
    /// `updated`, `last_updated` or `date` ([`Page::date`]), else the modification time of
    /// its file when the build read it from a folder; a page with neither is left out when a
    /// date filter is set.
    pub since: Option<String>,
    /// Keep pages dated on or before this (a date alone includes the whole day).
    pub until: Option<String>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: None,
            lanes: None,
            tags: Vec::new(),
            types: Vec::new(),
            scope: None,
            usage_modes: Vec::new(),
            chunks: false,
            always: AlwaysMode::Separate,
            explain: false,
            snippets: true,
            query_vector: None,
            typos: true,
            facets: false,
            since: None,
            until: None,
        }
    }
}

/// A lane's part in one hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneHit {
    /// The lane.
    pub lane: Lane,
    /// `ok`, `skipped` or `failed` (for the query as a whole; the reason is in
    /// [`SearchResults::lanes`]).
    pub status: StatusKind,
    /// 1-based rank of the hit's chunk in the lane, if the lane ranked it.
    pub rank: Option<u32>,
    /// The lane's own score for the chunk, if it ranked it.
    pub score: Option<f32>,
    /// This lane's share of the fused score: `weight / (k + rank)`.
    pub contribution: Option<f32>,
    /// The chunk this lane scored, when it is not the hit's chunk (for page hits each lane
    /// ranks a page by its own best chunk). `None` means the hit's chunk, or no rank.
    pub chunk: Option<String>,
}

/// A query term found in a snippet, as offsets into the snippet text (in the index's
/// [`OffsetUnit`](crate::OffsetUnit): bytes in Rust, code points in Python, UTF-16 units in
/// JavaScript).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Highlight {
    /// Start of the match.
    pub start: u32,
    /// One past its end.
    pub end: u32,
}

/// A short excerpt of the best chunk around the query terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snippet {
    /// About 150 characters of the chunk, cut at word boundaries.
    pub text: String,
    /// Where query terms occur in `text`.
    pub highlights: Vec<Highlight>,
    /// Where the excerpt starts in the page's body (whitespace in `text` is collapsed, so
    /// only the start maps back), in the index's offset unit.
    pub offset: u32,
}

/// Why a hit ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// Each query term's BM25 contribution in the chunk the lexical lane scored (they add up
    /// to the lexical lane's score).
    pub lexical: Vec<TermScore>,
    /// The RRF constant used.
    pub k: f32,
}

/// One result: a page (or a chunk, with `chunks: true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// Page key.
    pub key: String,
    /// Page id (`key`, or `user/<name>/<key>`).
    pub page_id: String,
    /// The page's scope.
    pub scope: Scope,
    /// Source path relative to the wiki root.
    pub path: String,
    /// Page title.
    pub title: String,
    /// Page summary.
    pub summary: Option<String>,
    /// Page type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Page tags.
    pub tags: Vec<String>,
    /// Fused score (0 for an `always` page no lane matched).
    pub score: f32,
    /// Id of the best-matching chunk.
    pub chunk: String,
    /// Content hash of that chunk.
    pub chunk_hash: String,
    /// The chunk's first line in the page's file, 1-based (frontmatter included): cite
    /// `path:line_start`.
    pub line_start: u32,
    /// Its last line.
    pub line_end: u32,
    /// The headings the chunk sits under, outermost first.
    pub headings: Vec<String>,
    /// Excerpt of that chunk.
    pub snippet: Option<Snippet>,
    /// Per lane, in [`Lane::ALL`] order.
    pub lanes: Vec<LaneHit>,
    /// The page has `usage_mode: always`.
    pub always: bool,
    /// The page's `stale_since`, if any.
    pub stale_since: Option<String>,
    /// The page's date, the one the date filters read: as its frontmatter writes it
    /// ([`Page::date`]) when that is a date; else its file's modification time when the build
    /// read it from a folder (`2024-03-12T09:30:00Z`); else the frontmatter's text, if any.
    pub date: Option<String>,
    /// With `explain: true`.
    pub explain: Option<Explanation>,
}

/// How one lane did for the whole query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneReport {
    /// The lane.
    pub lane: Lane,
    /// Whether it ran.
    #[serde(flatten)]
    pub status: LaneStatus,
    /// Candidates it contributed to fusion.
    pub candidates: usize,
    /// Its fusion weight.
    pub weight: f32,
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    /// The query as searched (cut to the configured maximum length).
    pub query: String,
    /// Whether the query was cut.
    pub truncated: bool,
    /// The analyzed query terms.
    pub terms: Vec<String>,
    /// Per lane, in [`Lane::ALL`] order.
    pub lanes: Vec<LaneReport>,
    /// Ranked hits, at most `limit` (after the `always` pages with [`AlwaysMode::First`]).
    pub hits: Vec<Hit>,
    /// `always` pages, with [`AlwaysMode::Separate`].
    pub always: Vec<Hit>,
    /// With [`SearchOptions::facets`]: the tag and type counts of every matching page, not
    /// only of the hits returned.
    pub facets: Option<Facets>,
    /// When the query quotes a phrase (`"net revenue"`): how its phrases were searched. `None`
    /// for a query without one.
    pub phrases: Option<PhraseReport>,
}

/// How the quoted phrases of a query were searched. Text between double quotes (`"`, or the
/// typographic `“` `”`) is a phrase: its words must occur in that order, at those distances
/// (a stopword stands for any one word), within one field of a chunk (its text, or the
/// page's key, title, summary or a tag). A hit that holds every phrase ranks above every hit
/// that does not, in each lane and fused; within each group the usual order holds. The
/// phrases' words are searched as ordinary words too (without typo tolerance), so pages with
/// the words but not the phrase still come, after. A quote nothing closes is ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhraseReport {
    /// The phrases as quoted (those with a searchable word), in query order.
    pub phrases: Vec<String>,
    /// How many of the ranked hits hold every phrase: the first `matched` of them (after the
    /// `always` pages with [`AlwaysMode::First`]). For a page hit, its chunk is one that holds
    /// them whenever the page has one.
    pub matched: usize,
    /// Why the phrases were searched as their words only, if they were:
    /// [`NO_POSITIONS`](crate::NO_POSITIONS) for an index without term positions
    /// ([`Config::positions`](crate::Config::positions) off).
    pub reason: Option<String>,
}

/// Tag and type counts over every page that matches a query: a page (visible under the
/// search's filters, not an `always` page) with a chunk that holds one of the query's terms,
/// exactly or, as the token lane matches, as a prefix (the last word, and words the index does
/// not contain). The semantic lane does not count: it scores every page. Each page counts
/// once per tag (tags compared without case) and once for its type, so a search UI shows
/// "finance (4), ops (2)".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facets {
    /// Matching pages.
    pub pages: usize,
    /// Per tag: pages with it, most first (ties by tag).
    pub tags: Vec<FacetCount>,
    /// Per type: pages of it, most first (ties by type); pages without a type are not counted.
    pub types: Vec<FacetCount>,
}

/// One value of a facet and how many matching pages have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FacetCount {
    /// The tag or type.
    pub value: String,
    /// Matching pages with it.
    pub count: usize,
}

/// A ranked page (or chunk) before hydration, from [`Index::rank`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Position of the page in [`Index::pages`].
    pub page: usize,
    /// Position of the best chunk in the index's chunk table.
    pub chunk: usize,
    /// Fused score.
    pub score: f32,
}

/// What a search asks before it reads parts of the index a [`crate::RangedIndex`] may not have
/// loaded yet; an error from either stops the search.
pub(crate) struct Reads<'c> {
    /// Called with the query's terms (each with the word it came from) before any of them is
    /// looked up in the dictionary.
    pub words: &'c dyn Fn(&[QueryTerm<'_>]) -> Result<()>,
    /// Called with the query as the lanes read it, before any lane runs.
    pub terms: &'c dyn Fn(&Analyzed<'_>) -> Result<()>,
    /// Called with the pages (positions in [`Index::pages`]) whose records the results show,
    /// before they are read.
    pub pages: &'c dyn Fn(&[usize]) -> Result<()>,
}

/// A query as the lanes read it ([`Index::analyzed`]).
pub(crate) struct Analyzed<'a> {
    /// The query, cut to the configured length.
    query: &'a str,
    /// Whether it was cut.
    truncated: bool,
    qterms: Vec<QueryTerm<'a>>,
    /// Each query term's dictionary position, if the index has it.
    known: Vec<Option<usize>>,
    /// The quoted phrases with their terms and offsets.
    #[allow(clippy::type_complexity)]
    quoted: Vec<(&'a str, Vec<(Cow<'a, str>, u32)>)>,
    /// The terms typo tolerance took query terms for (and prefix expansions of the last).
    typos: Vec<Expansion>,
}

/// What ranking produced, before hits are hydrated.
struct Ranking<'a> {
    query: &'a str,
    truncated: bool,
    qterms: Vec<QueryTerm<'a>>,
    /// The terms typo tolerance took query terms for (empty with `typos: false`).
    typos: Vec<Expansion>,
    reports: Vec<LaneReport>,
    picked: Vec<Fused>,
    page_ok: Cow<'a, [bool]>,
    /// Per chunk: rankable under the search's filters (from `page_ok`).
    mask: Cow<'a, [bool]>,
    /// The query's phrases, if it quotes any.
    phrases: Option<Phrases<'a>>,
}

/// The quoted phrases of one query and the chunks that hold them.
struct Phrases<'a> {
    /// As quoted.
    texts: Vec<&'a str>,
    /// Per chunk: holds every phrase and is rankable; `None` when the index has no positions.
    held: Option<Vec<bool>>,
}

impl Phrases<'_> {
    /// The chunks to rank first, if any chunk holds every phrase.
    fn first(&self) -> Option<&[bool]> {
        self.held.as_deref().filter(|h| h.contains(&true))
    }
}

/// The chunks a lane may return (`filter`; `None`: every chunk) and those it ranks first
/// (`held`, see [`held_first`]).
#[derive(Clone, Copy)]
struct Allowed<'m> {
    filter: Option<&'m [bool]>,
    held: Option<&'m [bool]>,
}

/// One lane's `n` candidates with the chunks of `held` first: `rank(Some(held))` ranks those,
/// `rank(None)` every chunk the lane may return, and fills what the first leaves, each page
/// (with `groups`) or chunk once. Without `held`, `rank(None)`.
fn held_first<E>(
    held: Option<&[bool]>,
    groups: Option<&[u32]>,
    n: usize,
    mut rank: impl FnMut(Option<&[bool]>) -> std::result::Result<Vec<(u32, f32)>, E>,
) -> std::result::Result<Vec<(u32, f32)>, E> {
    // One call site for `rank`, so the lane's search is not inlined twice.
    let mut out: Vec<(u32, f32)> = Vec::new();
    let mut taken: HashSet<u32> = HashSet::new();
    let key = |c: u32| groups.map_or(c, |g| g[c as usize]);
    for pass in [held, None] {
        let ranked = rank(pass)?;
        if pass.is_some() {
            if ranked.len() >= n {
                return Ok(ranked);
            }
            // Every chunk (or page) of `held` the lane scores is here: fewer than `n` came.
            taken.extend(ranked.iter().map(|&(c, _)| key(c)));
            out = ranked;
        } else if out.is_empty() {
            return Ok(ranked);
        } else {
            out.extend(
                ranked
                    .into_iter()
                    .filter(|&(c, _)| !taken.contains(&key(c))),
            );
        }
    }
    out.truncate(n);
    Ok(out)
}

impl Index {
    /// Searches the index.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty lane list. Never for an odd query: an empty or
    /// all-stopword query returns no hits, every lane skipped with the reason
    /// [`NO_QUERY_TERMS`](crate::NO_QUERY_TERMS) (unless a query vector is given).
    ///
    /// # Example
    /// ```
    /// # use wikidex::{IndexBuilder, SearchOptions, Lane};
    /// # let mut b = IndexBuilder::new(Default::default())?;
    /// # b.add_file("global/revenue.md", b"Revenue is recognized monthly.")?;
    /// # let (index, _) = b.build()?;
    /// let opts = SearchOptions { lanes: Some(vec![Lane::Token]), ..Default::default() };
    /// let results = index.search("recog", &opts)?; // a prefix, as typed so far
    /// assert_eq!(results.hits[0].key, "revenue");
    /// assert_eq!(results.lanes[0].status.name(), "skipped"); // lexical was not asked for
    /// # Ok::<(), wikidex::Error>(())
    /// ```
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
        self.search_checked(query, opts, None, Caller::default())
    }

    /// [`Index::search`] for `caller`, asking `reads` (when given) before it reads the
    /// postings of the query's terms and the records of the pages it shows: an error from it
    /// is the search's ([`crate::RangedIndex`] says which parts are not loaded yet).
    pub(crate) fn search_checked(
        &self,
        query: &str,
        opts: &SearchOptions,
        reads: Option<&Reads<'_>>,
        caller: Caller<'_>,
    ) -> Result<SearchResults> {
        let r = self.ranking(query, opts, reads, caller.model)?;
        let always_pages: Vec<usize> = (0..self.data.pages.len())
            .filter(|&i| r.page_ok[i] && self.data.pages[i].usage_mode == UsageMode::Always)
            .collect();
        if let Some(reads) = reads {
            let shown: Vec<usize> = r
                .picked
                .iter()
                .map(|f| self.chunk_page[f.chunk as usize] as usize)
                .chain(always_pages.iter().copied())
                .collect();
            (reads.pages)(&shown)?;
        }
        let facets = opts
            .facets
            .then(|| self.facets(&r.qterms, &r.typos, &r.mask));
        let terms: Vec<String> = r.qterms.iter().map(|q| q.term.to_string()).collect();
        let held = r.phrases.as_ref().and_then(Phrases::first);
        let ctx = HitContext {
            index: self,
            unit: caller.unit,
            qterms: &r.qterms,
            typos: &r.typos,
            reports: &r.reports,
            opts,
        };
        let phrases = r.phrases.as_ref().map(|p| PhraseReport {
            phrases: p.texts.iter().map(|t| t.trim().to_string()).collect(),
            matched: held.map_or(0, |h| {
                r.picked.iter().take_while(|f| h[f.chunk as usize]).count()
            }),
            reason: p.held.is_none().then(|| NO_POSITIONS.to_string()),
        });
        let mut hits: Vec<Hit> = r.picked.iter().map(|f| ctx.hit(f)).collect();
        let always: Vec<Hit> = always_pages.iter().map(|&i| ctx.always_hit(i)).collect();
        // `picked` holds at most `limit` ranked hits and no `always` page, so inlining the
        // `always` pages never costs the caller a result.
        let always = match opts.always {
            AlwaysMode::Separate => always,
            AlwaysMode::First => {
                let mut all = always;
                all.append(&mut hits);
                hits = all;
                Vec::new()
            }
        };
        Ok(SearchResults {
            query: r.query.to_string(),
            truncated: r.truncated,
            terms,
            lanes: r.reports,
            hits,
            always,
            facets,
            phrases,
        })
    }

    /// The [`Facets`] of the pages whose chunks hold a query term (as the token lane matches
    /// them, typo matches included) among the chunks `mask` lets through.
    fn facets(&self, qterms: &[QueryTerm<'_>], typos: &[Expansion], mask: &[bool]) -> Facets {
        let mut matched = vec![false; self.data.pages.len()];
        for c in token::matching_chunks(&self.data.lexical, qterms, typos, mask) {
            matched[self.chunk_page[c as usize] as usize] = true;
        }
        let mut tags: HashMap<String, (String, usize)> = HashMap::new();
        let mut types: HashMap<String, (String, usize)> = HashMap::new();
        let mut pages = 0;
        for (p, page) in self.data.pages.iter().enumerate() {
            if !matched[p] {
                continue;
            }
            pages += 1;
            let mut seen: Vec<String> = Vec::new();
            for t in &page.tags {
                let folded = crate::analyze::lowercase(t).into_owned();
                if seen.contains(&folded) {
                    continue;
                }
                tags.entry(folded.clone())
                    .or_insert_with(|| (t.clone(), 0))
                    .1 += 1;
                seen.push(folded);
            }
            if let Some(k) = &page.kind {
                types
                    .entry(crate::analyze::lowercase(k).into_owned())
                    .or_insert_with(|| (k.clone(), 0))
                    .1 += 1;
            }
        }
        let sorted = |m: HashMap<String, (String, usize)>| {
            let mut v: Vec<FacetCount> = m
                .into_values()
                .map(|(value, count)| FacetCount { value, count })
                .collect();
            crate::sort::sort_by(&mut v, |a, b| {
                b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value))
            });
            v
        };
        Facets {
            pages,
            tags: sorted(tags),
            types: sorted(types),
        }
    }

    /// Ranks without hydrating hits: the same order as [`Index::search`]'s ranked hits (without
    /// `always` pages, snippets or explanations), as positions into [`Index::pages`] and the
    /// chunk table. For evaluation, benchmarks and callers that only need keys.
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn rank(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Ranked>> {
        self.rank_with(query, opts, None)
    }

    /// [`Index::rank`] with `model` to embed the query for the semantic lane.
    pub(crate) fn rank_with(
        &self,
        query: &str,
        opts: &SearchOptions,
        model: Option<&dyn Embedder>,
    ) -> Result<Vec<Ranked>> {
        Ok(self
            .ranking(query, opts, None, model)?
            .picked
            .iter()
            .map(|f| Ranked {
                page: self.chunk_page[f.chunk as usize] as usize,
                chunk: f.chunk as usize,
                score: f.score,
            })
            .collect())
    }

    /// [`Index::rank`] for many queries with one set of options, answers in query order. The
    /// queries are split into contiguous shares over `threads` threads (`None`: the cores
    /// available; at most [`MAX_RANK_THREADS`] and one per query); on wasm32 they run one
    /// after another. For evaluation and batch pipelines: one call instead of one per query.
    ///
    /// # Errors
    /// `invalid_argument` for `threads` 0 or a query vector in `opts` (one vector cannot
    /// stand for many queries); otherwise the first failing query's error, as [`Index::rank`].
    pub fn rank_many<Q: AsRef<str> + Sync>(
        &self,
        queries: &[Q],
        opts: &SearchOptions,
        threads: Option<usize>,
    ) -> Result<Vec<Vec<Ranked>>> {
        self.rank_many_with(queries, opts, threads, None)
    }

    /// [`Index::rank_many`] with `model` to embed the queries for the semantic lane.
    pub(crate) fn rank_many_with<Q: AsRef<str> + Sync>(
        &self,
        queries: &[Q],
        opts: &SearchOptions,
        threads: Option<usize>,
        model: Option<&dyn Embedder>,
    ) -> Result<Vec<Vec<Ranked>>> {
        opts.validate()?;
        if opts.query_vector.is_some() {
            return Err(Error::invalid_argument(
                "rank_many takes no query vector: one vector cannot stand for many queries",
            ));
        }
        let threads = match threads {
            Some(0) => return Err(Error::invalid_argument("threads must be at least 1")),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, usize::from),
        };
        let threads = if cfg!(target_arch = "wasm32") {
            1
        } else {
            threads.min(MAX_RANK_THREADS).min(queries.len()).max(1)
        };
        let rank_all = |part: &[Q]| -> Result<Vec<Vec<Ranked>>> {
            part.iter()
                .map(|q| self.rank_with(q.as_ref(), opts, model))
                .collect()
        };
        if threads == 1 {
            return rank_all(queries);
        }
        std::thread::scope(|s| {
            let shares: Vec<_> = queries
                .chunks(queries.len().div_ceil(threads))
                .map(|part| s.spawn(move || rank_all(part)))
                .collect();
            let mut out = Vec::with_capacity(queries.len());
            for share in shares {
                match share.join() {
                    Ok(ranked) => out.extend(ranked?),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            Ok(out)
        })
    }

    /// The query as the lanes read it: cut to the configured length, analyzed, its typo and
    /// prefix expansions, its quoted phrases. [`Reads::words`] is called with its
    /// terms before the dictionary is read (the surface table the analysis reads first is a
    /// cache of the stemmer: a word it lacks is stemmed to the same term).
    ///
    /// # Errors
    /// What [`Reads::words`] returns.
    pub(crate) fn analyzed<'a>(
        &'a self,
        query: &'a str,
        opts: &SearchOptions,
        reads: Option<&Reads<'_>>,
    ) -> Result<Analyzed<'a>> {
        let max_chars = self.data.config.max_query_chars as usize;
        let (query, truncated) = match query.char_indices().nth(max_chars) {
            Some((cut, _)) => (&query[..cut], true),
            None => (query, false),
        };
        let lexical = &self.data.lexical;
        let qterms = self.analyzer.query_with(query, |w| lexical.surface_term(w));
        if let Some(reads) = reads {
            (reads.words)(&qterms)?;
        }
        let known: Vec<Option<usize>> = qterms.iter().map(|q| lexical.lookup(&q.term)).collect();
        let quoted = self.quoted_phrases(query);
        let mut typos = if opts.typos {
            let dict = || {
                self.typo
                    .get_or_init(|| typo::Dictionary::new(lexical.typo_words()))
            };
            typo::expand(lexical, dict, &qterms, &known)
        } else {
            Vec::new()
        };
        if !quoted.is_empty() {
            // A word quoted every time it occurs is taken as written: no typo matches.
            let quoted_only: Vec<bool> = qterms
                .iter()
                .map(|q| {
                    let in_phrases = quoted
                        .iter()
                        .flat_map(|(_, terms)| terms)
                        .filter(|(t, _)| *t == q.term)
                        .count();
                    in_phrases >= q.count as usize
                })
                .collect();
            typos.retain(|e| !quoted_only[e.query]);
        }
        Ok(Analyzed {
            query,
            truncated,
            qterms,
            known,
            quoted,
            typos,
        })
    }

    /// The dictionary positions of the terms whose postings a search of `a` reads (every
    /// lane's and the facets': the query's terms, their typo and prefix expansions), and of
    /// those whose positions it reads (its phrases' terms).
    pub(crate) fn terms_read(&self, a: &Analyzed<'_>) -> (Vec<usize>, Vec<usize>) {
        let lexical = &self.data.lexical;
        let mut postings = Vec::new();
        for i in 0..a.qterms.len() {
            token::term_credits(lexical, &a.qterms, &a.typos, i, |t, _| postings.push(t));
        }
        let positions: Vec<usize> = a
            .quoted
            .iter()
            .flat_map(|(_, terms)| terms.iter().filter_map(|(t, _)| lexical.lookup(t)))
            .collect();
        postings.extend_from_slice(&positions);
        crate::sort::sort_unstable(&mut postings);
        postings.dedup();
        (postings, positions)
    }

    fn ranking<'a>(
        &'a self,
        query: &'a str,
        opts: &SearchOptions,
        reads: Option<&Reads<'_>>,
        model: Option<&dyn Embedder>,
    ) -> Result<Ranking<'a>> {
        opts.validate()?;
        let limit = opts.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let candidates = (limit * 3).min(MAX_CANDIDATES);
        let lexical = &self.data.lexical;
        let analyzed = self.analyzed(query, opts, reads)?;
        if let Some(reads) = reads {
            (reads.terms)(&analyzed)?;
        }
        let Analyzed {
            query,
            truncated,
            qterms,
            known,
            quoted,
            typos,
        } = analyzed;
        let (page_ok, mask): (Cow<'_, [bool]>, Cow<'_, [bool]>) = if opts.has_filters() {
            let page_ok = self.visible_pages(opts);
            let mask = self.chunk_mask(&page_ok);
            (Cow::Owned(page_ok), Cow::Owned(mask))
        } else {
            let unfiltered = self.unfiltered();
            (
                Cow::Borrowed(&unfiltered.pages[..]),
                Cow::Borrowed(&unfiltered.chunks[..]),
            )
        };
        // Page hits: each lane ranks pages (by their best chunk), so `candidates` are that many
        // different pages and collapsing after fusion cannot leave fewer hits than the limit.
        // (When every page is one chunk, grouping is the identity and is skipped.)
        let groups = (!opts.chunks && self.chunk_page.len() != self.data.pages.len())
            .then_some(&self.chunk_page[..]);
        let wanted = |lane: Lane| opts.lanes.as_ref().is_none_or(|l| l.contains(&lane));
        let phrases = (!quoted.is_empty()).then(|| Phrases {
            held: self.data.positions.as_ref().map(|p| {
                let ids: Vec<Vec<(Option<usize>, u32)>> = quoted
                    .iter()
                    .map(|(_, terms)| terms.iter().map(|(t, o)| (lexical.lookup(t), *o)).collect())
                    .collect();
                p.matching(lexical, &ids, &mask)
            }),
            texts: quoted.iter().map(|(text, _)| *text).collect(),
        });
        let held = phrases.as_ref().and_then(Phrases::first);
        let fusion_cfg = self.data.config.fusion;
        let mut rankings = Vec::new();
        let mut reports = Vec::new();
        let no_terms = qterms.is_empty() && opts.query_vector.is_none();
        for lane in Lane::ALL {
            let (status, ranked) = if !wanted(lane) {
                (LaneStatus::skipped(NOT_REQUESTED), Vec::new())
            } else if no_terms {
                (LaneStatus::skipped(NO_QUERY_TERMS), Vec::new())
            } else {
                match lane {
                    Lane::Lexical => {
                        // A typo match weighs what the query term would, discounted per edit;
                        // the lexical lane takes whole words only (no prefixes).
                        let weighted: Vec<(usize, f32)> = known
                            .iter()
                            .zip(&qterms)
                            .filter_map(|(t, q)| t.map(|t| (t, q.count as f32)))
                            .chain(typos.iter().filter(|e| !e.prefix).map(|e| {
                                let count = qterms[e.query].count as f32;
                                (e.term, count * typo::discount(e.edits))
                            }))
                            .collect();
                        let filter = (!self.unfiltered().all || opts.has_filters()).then_some(&mask[..]);
                        let ranked = held_first(held, groups, candidates, |first| {
                            Ok::<_, Error>(self.scorer.search(
                                &self.data.lexical,
                                &weighted,
                                first.or(filter),
                                groups.map(|g| (g, self.data.pages.len())),
                                candidates,
                            ))
                        })?;
                        (LaneStatus::Ok, ranked)
                    }
                    Lane::Token => (
                        LaneStatus::Ok,
                        held_first(held, groups, candidates, |first| {
                            Ok::<_, Error>(token::search(
                                &self.data.lexical,
                                &qterms,
                                &typos,
                                first.unwrap_or(&mask),
                                groups.map(|g| (g, self.data.pages.len())),
                                candidates,
                            ))
                        })?,
                    ),
                    Lane::Semantic => {
                        let filter = (!self.unfiltered().all || opts.has_filters()).then_some(&mask[..]);
                        // The floor judges only queries none of whose words the index knows.
                        let unknown = known.iter().all(Option::is_none) && typos.is_empty();
                        self.semantic_lane(
                            (query, opts, model),
                            Allowed { filter, held },
                            groups,
                            candidates,
                            unknown,
                        )?
                    }
                }
            };
            reports.push(LaneReport {
                lane,
                status: status.clone(),
                candidates: ranked.len(),
                weight: fusion_cfg.weight(lane),
            });
            if status == LaneStatus::Ok {
                rankings.push(LaneRanking {
                    lane,
                    weight: fusion_cfg.weight(lane),
                    ranked,
                });
            }
        }
        let mut fused: Vec<Fused> = if opts.chunks {
            fusion::rrf(fusion_cfg.k, &rankings, |a, b| self.cmp_chunk_ids(a, b))
        } else {
            self.fuse_pages(&rankings, held)
        };
        if let Some(held) = held {
            // Hits that hold every phrase first; a stable sort keeps the fused order in each.
            crate::sort::sort_by_key(&mut fused, |f| !held[f.chunk as usize]);
        }
        fused.truncate(limit);
        let picked = fused;
        Ok(Ranking {
            query,
            truncated,
            qterms,
            typos,
            reports,
            picked,
            page_ok,
            mask,
            phrases,
        })
    }

    /// The query's quoted phrases ([`analyze::quoted`]) that have a searchable word, each with
    /// its terms and their offsets ([`Analyzer::phrase_with`](crate::analyze::Analyzer::phrase_with)),
    /// the same phrase once.
    #[allow(clippy::type_complexity)]
    fn quoted_phrases<'q>(&'q self, query: &'q str) -> Vec<(&'q str, Vec<(Cow<'q, str>, u32)>)> {
        let mut out: Vec<(&str, Vec<(Cow<'_, str>, u32)>)> = Vec::new();
        if !query.contains(['"', '\u{201C}']) {
            return out;
        }
        let lexical = &self.data.lexical;
        for text in analyze::quoted(query) {
            let terms = self.analyzer.phrase_with(text, |w| lexical.surface_term(w));
            if !terms.is_empty() && !out.iter().any(|(_, t)| *t == terms) {
                out.push((text, terms));
            }
        }
        out
    }

    /// Runs the semantic lane for `query` (the caller's vector in the options, else `model`'s
    /// for the text): skipped without vectors or a query vector, failed when the embedder
    /// fails (search goes on with the other lanes), an error for a malformed query vector.
    fn semantic_lane(
        &self,
        (query, opts, model): (&str, &SearchOptions, Option<&dyn Embedder>),
        allowed: Allowed<'_>,
        groups: Option<&[u32]>,
        candidates: usize,
        unknown_words: bool,
    ) -> Result<(LaneStatus, Vec<(u32, f32)>)> {
        let Allowed { filter, held } = allowed;
        let Some(section) = &self.data.vectors else {
            return Ok((LaneStatus::skipped(semantic::NO_VECTORS), Vec::new()));
        };
        match self.query_vector(query, opts.query_vector.as_deref(), model) {
            Ok(Some(q)) => {
                let paged = groups.map(|g| (g, self.data.pages.len()));
                let ranked = held_first(held, groups, candidates, |first| {
                    Ok::<_, Error>(section.search(&q, first.or(filter), paged, candidates))
                })?;
                // Words the index does not know, and no closer to anything here than
                // nonsense is: no evidence at all, so no hits (the content-gap signal).
                if unknown_words && ranked.first().is_some_and(|&(_, s)| section.below_floor(s)) {
                    return Ok((LaneStatus::skipped(semantic::BELOW_FLOOR), Vec::new()));
                }
                Ok((LaneStatus::Ok, ranked))
            }
            Ok(None) => Ok((LaneStatus::skipped(semantic::NO_QUERY_VECTOR), Vec::new())),
            Err(e @ Error::InvalidArgument { .. }) => Err(e),
            Err(e) => Ok((LaneStatus::failed(&e), Vec::new())),
        }
    }

    /// Fuses lane rankings of pages (each lane lists each page once, by its best chunk in that
    /// lane), so a page gets the votes of every lane even when the lanes preferred different
    /// chunks of it. The chunk shown for a page is the one from the lane that contributed most
    /// to its fused score, among the chunks of `held` (that hold the query's phrases) when a lane
    /// chose one.
    fn fuse_pages(&self, rankings: &[LaneRanking], held: Option<&[bool]>) -> Vec<Fused> {
        if let [_] = rankings {
            // One lane already lists each page once, best chunk first: its order is the fused
            // order.
            return fusion::rrf(self.data.config.fusion.k, rankings, |a, b| a.cmp(&b));
        }
        let by_page: Vec<LaneRanking> = rankings
            .iter()
            .map(|r| LaneRanking {
                lane: r.lane,
                weight: r.weight,
                ranked: r
                    .ranked
                    .iter()
                    .map(|&(c, s)| (self.chunk_page[c as usize], s))
                    .collect(),
            })
            .collect();
        let k = self.data.config.fusion.k;
        let mut fused = fusion::rrf(k, &by_page, |a, b| {
            let (a, b) = (&self.data.pages[a as usize], &self.data.pages[b as usize]);
            a.id().cmp(&b.id())
        });
        for f in &mut fused {
            // Ranks were computed over pages: point each lane's entry at that lane's chunk.
            for r in rankings {
                if let Some(at) = fusion::lane_rank_mut(f, r.lane) {
                    if let Some(&(chunk, _)) = r.ranked.get(at.rank as usize - 1) {
                        at.chunk = chunk;
                    }
                }
            }
            let holds = |c: u32| held.is_some_and(|h| h[c as usize]);
            let any_held = rankings
                .iter()
                .any(|r| fusion::lane_rank(f, r.lane).is_some_and(|at| holds(at.chunk)));
            let best = rankings
                .iter()
                .filter_map(|r| {
                    let at = fusion::lane_rank(f, r.lane)?;
                    Some((r.weight / (k + at.rank as f32), at.chunk))
                })
                .filter(|&(_, c)| !any_held || holds(c))
                .fold(None::<(f32, u32)>, |best, (w, c)| match best {
                    Some((bw, _)) if bw >= w => best,
                    _ => Some((w, c)),
                });
            if let Some((_, chunk)) = best {
                f.chunk = chunk;
            }
        }
        fused
    }

    /// Per chunk: may a lane return it? Its page is visible and not an `always` page (those
    /// are placed by [`AlwaysMode`], not ranked).
    pub(crate) fn chunk_mask(&self, page_ok: &[bool]) -> Vec<bool> {
        self.chunk_page
            .iter()
            .map(|&p| {
                page_ok[p as usize] && self.data.pages[p as usize].usage_mode != UsageMode::Always
            })
            .collect()
    }

    /// What a search without filters may return, made on the first search.
    fn unfiltered(&self) -> &Unfiltered {
        self.unfiltered.get_or_init(|| {
            let pages = self.visible_pages(&SearchOptions::default());
            let chunks = self.chunk_mask(&pages);
            let all = chunks.iter().all(|&ok| ok);
            Unfiltered { pages, chunks, all }
        })
    }

    /// Per page: may this search return it? Applies lifecycle, usage mode, scope (with
    /// shadowing) and the tag and type filters.
    pub(crate) fn visible_pages(&self, opts: &SearchOptions) -> Vec<bool> {
        let pages = &self.data.pages;
        // `validate` has read them already: a bad value cannot reach here.
        let (since, until) = opts.date_range().unwrap_or((None, None));
        let dated = |p: usize| match (since, until) {
            (None, None) => true,
            _ => self.page_dates[p]
                .is_some_and(|d| since.is_none_or(|s| d >= s) && until.is_none_or(|u| d <= u)),
        };
        let lower = |v: &[String]| {
            v.iter()
                .map(|s| crate::analyze::lowercase(s).into_owned())
                .collect::<HashSet<_>>()
        };
        let tags = lower(&opts.tags);
        let types = lower(&opts.types);
        // A user's archived or `never` page no longer stands in for the global one.
        let shadowed: HashSet<&str> = match &opts.scope {
            Some(Scope::User(name)) => pages
                .iter()
                .filter(|p| matches!(&p.scope, Scope::User(n) if n == name))
                .filter(|p| !p.is_archived() && p.usage_mode != UsageMode::Never)
                .map(|p| p.key.as_str())
                .collect(),
            _ => HashSet::new(),
        };
        pages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let in_scope = match &opts.scope {
                    None => true,
                    Some(Scope::Global) => p.scope == Scope::Global,
                    Some(s @ Scope::User(_)) => {
                        p.scope == *s
                            || (p.scope == Scope::Global && !shadowed.contains(p.key.as_str()))
                    }
                };
                let mode_ok = if opts.usage_modes.is_empty() {
                    p.usage_mode != UsageMode::Never
                } else {
                    p.usage_mode != UsageMode::Never && opts.usage_modes.contains(&p.usage_mode)
                };
                in_scope
                    && mode_ok
                    && dated(i)
                    && !p.is_archived()
                    && (tags.is_empty()
                        || p.tags
                            .iter()
                            .any(|t| tags.contains(crate::analyze::lowercase(t).as_ref())))
                    && (types.is_empty()
                        || p.kind
                            .as_ref()
                            .is_some_and(|k| types.contains(crate::analyze::lowercase(k).as_ref())))
            })
            .collect()
    }

    fn cmp_chunk_ids(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (pa, pb) = (self.chunk_page[a as usize], self.chunk_page[b as usize]);
        if pa == pb {
            // Same page: ids differ only in the number, compared as the id strings are.
            let oa = self.chunk_number(a).to_string();
            let ob = self.chunk_number(b).to_string();
            return oa.cmp(&ob);
        }
        let (a, b) = (&self.data.pages[pa as usize], &self.data.pages[pb as usize]);
        format!("{}::", a.id()).cmp(&format!("{}::", b.id()))
    }
}

struct HitContext<'a> {
    index: &'a Index,
    /// The unit of the offsets in the hits.
    unit: OffsetUnit,
    qterms: &'a [QueryTerm<'a>],
    typos: &'a [Expansion],
    reports: &'a [LaneReport],
    opts: &'a SearchOptions,
}

impl HitContext<'_> {
    fn hit(&self, f: &Fused) -> Hit {
        let fusion_cfg = self.index.data.config.fusion;
        let lanes = self
            .reports
            .iter()
            .map(|r| {
                let at = fusion::lane_rank(f, r.lane);
                LaneHit {
                    lane: r.lane,
                    status: r.status.kind(),
                    rank: at.map(|a| a.rank),
                    score: at.map(|a| a.score),
                    contribution: at.map(|a| r.weight / (fusion_cfg.k + a.rank as f32)),
                    chunk: at
                        .map(|a| {
                            if a.chunk == f.chunk {
                                None
                            } else {
                                Some(self.index.chunk_id(a.chunk))
                            }
                        })
                        .unwrap_or(None),
                }
            })
            .collect();
        let mut hit = self.base(f.chunk, f.score, lanes);
        if self.opts.explain {
            // The lexical lane's own chunk of this page, so the terms add up to its score.
            let chunk = fusion::lane_rank(f, Lane::Lexical).map_or(f.chunk, |r| r.chunk);
            hit.explain = Some(Explanation {
                lexical: self.explain_lexical(chunk),
                k: fusion_cfg.k,
            });
        }
        hit
    }

    /// Each query term's part in chunk `c`'s lexical score: the term itself, or the terms typo
    /// tolerance took it for that the chunk contains (the term alone, with tf 0, when it
    /// contains none).
    fn explain_lexical(&self, c: u32) -> Vec<TermScore> {
        let lexical = &self.index.data.lexical;
        let scorer = &self.index.scorer;
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
    fn always_hit(&self, page: usize) -> Hit {
        let first = self.index.first_chunk[page];
        let end = self.index.first_chunk[page + 1];
        let lanes = self
            .reports
            .iter()
            .map(|r| LaneHit {
                lane: r.lane,
                status: r.status.kind(),
                rank: None,
                score: None,
                contribution: None,
                chunk: None,
            })
            .collect();
        let best = self.best_chunk_by_terms(first, end);
        self.base(best, 0.0, lanes)
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

    fn base(&self, c: u32, score: f32, lanes: Vec<LaneHit>) -> Hit {
        let index = self.index;
        let page_index = index.chunk_page[c as usize];
        let p: &Page = &index.data.pages[page_index as usize];
        let record = &index.data.chunks[c as usize];
        let snippet = self.opts.snippets.then(|| {
            let base = (record.start as usize).saturating_sub(p.body_start as usize);
            snippet(
                index,
                self.unit,
                self.qterms,
                self.typos,
                index.chunk_text(c),
                p.body(),
                base,
            )
        });
        let page_id = p.id();
        let (line_start, line_end) =
            crate::chunk::line_range(&p.text, record.start as usize, record.end as usize);
        Hit {
            line_start,
            line_end,
            headings: crate::chunk::heading_path(
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
            chunk_hash: record.hash.clone(),
            snippet,
            lanes,
            always: p.usage_mode == UsageMode::Always,
            stale_since: p.stale_since.clone(),
            date: hit_date(p, index.data.page_modified.get(page_index as usize)),
            explain: None,
        }
    }
}

/// The date a hit shows: the one the date filters read. The frontmatter's, as written, when
/// it parses; else the file's modification time; else the frontmatter's as written, if any.
fn hit_date(page: &Page, modified: Option<&Option<i64>>) -> Option<String> {
    let written = page.date();
    if written.is_some_and(|d| crate::date::parse(d, false).is_some()) {
        return written.map(str::to_string);
    }
    match modified.copied().flatten() {
        Some(t) => Some(crate::date::format(t)),
        None => written.map(str::to_string),
    }
}

/// About [`SNIPPET_CHARS`] characters of `text` around the densest run of query terms (and
/// the terms typo tolerance took them for), with their offsets in the index's unit. `text`
/// starts `base` bytes into `body`.
fn snippet(
    index: &Index,
    unit: OffsetUnit,
    qterms: &[QueryTerm<'_>],
    typos: &[Expansion],
    text: &str,
    body: &str,
    base: usize,
) -> Snippet {
    let lexical = &index.data.lexical;
    let terms: HashSet<&str> = qterms
        .iter()
        .map(|q| q.term.as_ref())
        .chain(typos.iter().map(|e| lexical.term(e.term)))
        .collect();
    let prefixes: Vec<&str> = (0..qterms.len())
        .flat_map(|i| token::prefixes(lexical.lookup(&qterms[i].term), i, qterms))
        .collect();
    // Where the snippet may be cut: between words, and between the characters of a CJK run
    // (which has no spaces).
    let mut words: Vec<(usize, &str)> = Vec::new();
    for (s, w) in analyze::words(text) {
        if w.starts_with(analyze::is_cjk) {
            words.extend(analyze::cjk_chars(s, w));
        } else {
            words.push((s, w));
        }
    }
    // Every word of indexed text is in the index's surface table, so its term is a look-up,
    // not a stemming; a CJK token's term is its normalized text.
    let mut matched: Vec<(usize, usize)> = Vec::new();
    for t in analyze::tokens(text) {
        let norm = index.analyzer.normalize(t.text);
        let term = if t.cjk {
            terms.contains(norm.as_ref())
        } else {
            match lexical.surface_term(&norm) {
                Some(t) => terms.contains(t),
                None => index
                    .analyzer
                    .term(t.text)
                    .is_some_and(|t| terms.contains(t.as_str())),
            }
        };
        if !(term || prefixes.iter().any(|p| norm.starts_with(p))) {
            continue;
        }
        // CJK bigrams overlap: matched neighbours make one highlight (`自然语言` for the
        // bigrams `自然 然语 语言`). Words never overlap.
        match matched.last_mut() {
            Some(last) if t.start < last.1 => last.1 = last.1.max(t.end()),
            _ => matched.push((t.start, t.end())),
        }
    }
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
    // Back up a few words for context, then cut at word boundaries.
    let lead = SNIPPET_CHARS / 5;
    if start > 0 {
        let floor = start.saturating_sub(lead);
        start = words
            .iter()
            .map(|&(s, _)| s)
            .find(|&s| s >= floor && s <= start)
            .unwrap_or(start);
    }
    let end = text[start..]
        .char_indices()
        .take(SNIPPET_CHARS)
        .last()
        .map_or(start, |(i, c)| start + i + c.len_utf8());
    // Do not cut a word in half.
    let end = match words.iter().find(|&&(s, w)| s < end && s + w.len() > end) {
        Some(&(ws, _)) if end < text.len() && ws > start => ws,
        _ => end,
    };
    // Collapse whitespace runs (newlines included) to one space; map highlights onto the
    // collapsed text.
    let slice = text[start..end].trim_end();
    let lead_ws = slice.len() - slice.trim_start().len();
    let from = start + lead_ws;
    let mut out = String::with_capacity(slice.len());
    let mut byte_pos: Vec<(usize, usize)> = Vec::new(); // (byte in text, byte in out)
    let mut in_space = false;
    for (i, c) in text[from..start + slice.len()].char_indices() {
        byte_pos.push((from + i, out.len()));
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    let to = start + slice.len();
    let at = |byte: usize| -> usize {
        if byte >= to {
            return out.len();
        }
        byte_pos
            .binary_search_by(|&(b, _)| b.cmp(&byte))
            .map_or_else(
                |i| byte_pos.get(i).map_or(out.len(), |p| p.1),
                |i| byte_pos[i].1,
            )
    };
    let highlights = matched
        .iter()
        .filter(|&&(s, e)| s >= from && e <= to)
        .map(|&(s, e)| Highlight {
            start: unit.convert_u32(&out, at(s)),
            end: unit.convert_u32(&out, at(e)),
        })
        .collect();
    Snippet {
        offset: unit.convert_u32(body, base + from),
        text: out,
        highlights,
    }
}

impl SearchOptions {
    /// Whether any filter is set (tags, types, scope, usage modes).
    fn has_filters(&self) -> bool {
        !self.tags.is_empty()
            || !self.types.is_empty()
            || self.scope.is_some()
            || !self.usage_modes.is_empty()
            || self.since.is_some()
            || self.until.is_some()
    }

    /// The date filters as Unix seconds: (`since`, `until`), each `None` when not set.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a value that is not a date.
    fn date_range(&self) -> Result<(Option<i64>, Option<i64>)> {
        let read = |name: &str, v: &Option<String>, end_of_day: bool| {
            v.as_deref()
                .map(|s| {
                    crate::date::parse(s, end_of_day).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "{name} must be a date (2024-03-12) or a date-time \
                             (2024-03-12T09:30:00Z), got {s:?}"
                        ))
                    })
                })
                .transpose()
        };
        Ok((
            read("since", &self.since, false)?,
            read("until", &self.until, true)?,
        ))
    }

    /// Checks the options against what the index can do.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a limit of 0, an empty lane list or a bad date.
    pub fn validate(&self) -> Result<()> {
        if self.limit == Some(0) {
            return Err(Error::invalid_argument(format!(
                "limit must be at least 1 (at most {MAX_LIMIT} hits are returned)"
            )));
        }
        self.date_range()?;
        if self.lanes.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::invalid_argument("lanes must not be empty"));
        }
        Ok(())
    }
}
