//! Search: normalize the query, filter, rank in each lane, fuse, collapse chunks to
//! pages, add snippets and explanations.

mod filter;
mod found;
mod hits;
mod options;
pub mod ranged;
mod results;
pub mod sharded;

pub use found::{Found, HitList};
pub use options::{
    AlwaysMode, SearchOptions, DEFAULT_LIMIT, MAX_CANDIDATES, MAX_LIMIT, MAX_RANK_THREADS,
    SNIPPET_CHARS,
};
pub use results::{
    Explanation, FacetCount, Facets, Highlight, Hit, LaneHit, LaneReport, PhraseReport, Ranked,
    SearchResults, Snippet,
};

use std::borrow::Cow;
use std::collections::HashSet;

use crate::data::error::{Error, Result};
use crate::data::parallel;
use crate::embed::Embedder;
use crate::index::{Caller, Index};
use crate::lane::evidence;
use crate::lane::fusion::{self, Fused, LaneRanking};
use crate::lane::prune::PRUNE_LEXICAL_FROM;
use crate::lane::semantic::codes::Codes;
use crate::lane::typo::{self, Expansion};
use crate::lane::{semantic, token, Lane, LaneStatus, NOT_REQUESTED, NO_QUERY_TERMS};
use crate::text::analyze::{self, QueryTerm};

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

/// A query's quoted phrases, each with its terms and their offsets.
pub(crate) type Quoted<'a> = Vec<(&'a str, Vec<(Cow<'a, str>, u32)>)>;

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
    quoted: Quoted<'a>,
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

/// One index as one search reads it: the pages and chunks its filters let through, how its
/// lanes group chunks into pages, and the chunks that hold the query's quoted phrases
/// ([`Index::view`]).
pub(crate) struct View<'a> {
    pub(crate) index: &'a Index,
    /// Per page: may the search return it.
    pub(crate) page_ok: Cow<'a, [bool]>,
    /// Per chunk: may a lane return it (from `page_ok`).
    pub(crate) mask: Cow<'a, [bool]>,
    /// Whether a lane that scores only what it finds must read `mask` (some chunk is out).
    filtered: bool,
    /// Chunk → page, unless every page is one chunk (grouping would be the identity) or the
    /// search ranks chunks.
    pub(crate) groups: Option<&'a [u32]>,
    /// Per chunk: holds every quoted phrase and may be returned; `None` without phrases or
    /// positions.
    pub(crate) held: Option<Vec<bool>>,
}

impl View<'_> {
    /// The mask a lane that scores only what it finds reads, if it must.
    pub(crate) fn filter(&self) -> Option<&[bool]> {
        self.filtered.then_some(&self.mask[..])
    }

    /// Chunk → page and the page count, for a lane's page grouping.
    pub(crate) fn paged(&self) -> Option<(&[u32], usize)> {
        self.groups.map(|g| (g, self.index.data.pages.len()))
    }

    /// The chunks each lane ranks first ([`held_first`]): those that hold every phrase, if
    /// any does.
    pub(crate) fn first(&self) -> Option<&[bool]> {
        self.held.as_deref().filter(|h| h.contains(&true))
    }

    /// Whether chunk `c` holds every quoted phrase.
    pub(crate) fn holds(&self, c: u32) -> bool {
        self.held.as_ref().is_some_and(|h| h[c as usize])
    }
}

/// From this many chunks a search runs its two word lanes at once, the lexical lane on a thread
/// of its own: there both lanes prune ([`PRUNE_LEXICAL_FROM`]), keeping no buffer a chunk on the
/// thread they run on, and each takes hundreds of µs, against tens for a thread's start. The
/// crate's own tests count every index of a chunk or more as large, so both ways are tested:
/// its unit tests run the lanes apart, the integration tests and the bindings' one after the
/// other.
pub(crate) const LANES_APART_FROM: usize = if cfg!(test) { 1 } else { PRUNE_LEXICAL_FROM };

/// Whether a search over `chunks` chunks runs its word lanes (or its shards) at once
/// ([`LANES_APART_FROM`]).
pub(crate) fn lanes_apart(chunks: usize) -> bool {
    chunks >= LANES_APART_FROM
}

/// The terms the lexical lane scores for a query, each with its weight: each known query term
/// weighs its count in the query, and a typo match what its query term would, discounted per
/// edit (whole words only: no prefixes). As dictionary positions of the index that analyzed
/// the query (`known`, `typos`).
pub(crate) fn lexical_terms(
    qterms: &[QueryTerm<'_>],
    known: &[Option<usize>],
    typos: &[Expansion],
) -> Vec<(usize, f32)> {
    (known.iter().zip(qterms))
        .filter_map(|(t, q)| t.map(|t| (t, q.count as f32)))
        .chain(typos.iter().filter(|e| !e.prefix).map(|e| {
            let count = qterms[e.query].count as f32;
            (e.term, count * typo::discount(e.edits))
        }))
        .collect()
}

/// The threads a batch of queries with `opts` runs on: `threads` (`None`: the cores), at most
/// [`MAX_RANK_THREADS`].
///
/// # Errors
/// `invalid_argument` for `threads` 0, options that do not validate or hold a query vector
/// (one vector cannot stand for many queries).
pub(crate) fn batch_threads(opts: &SearchOptions, threads: Option<usize>) -> Result<usize> {
    opts.validate()?;
    if opts.query_vector.is_some() {
        return Err(Error::invalid_argument(
            "rank_many takes no query vector: one vector cannot stand for many queries",
        ));
    }
    let threads = match threads {
        Some(0) => return Err(Error::invalid_argument("threads must be at least 1")),
        Some(n) => n,
        None => crate::data::parallel::cores(),
    };
    Ok(threads.min(MAX_RANK_THREADS))
}

/// Runs each lane with `run`, in [`Lane::ALL`] order, unless `opts` does not ask for it or the
/// query has no searchable word and no vector (`no_terms`): a skipped lane says why. Returns
/// the rankings of the lanes that ran, with their fusion weights, and every lane's report.
///
/// # Errors
/// What `run` returns.
pub(crate) fn run_lanes(
    opts: &SearchOptions,
    no_terms: bool,
    fusion: crate::lane::fusion::FusionConfig,
    mut run: impl FnMut(Lane) -> Result<(LaneStatus, Vec<(u32, f32)>)>,
) -> Result<(Vec<LaneRanking>, Vec<LaneReport>)> {
    let (mut rankings, mut reports) = (Vec::new(), Vec::new());
    for lane in Lane::ALL {
        let (status, ranked) = if !opts.wants(lane) {
            (LaneStatus::skipped(NOT_REQUESTED), Vec::new())
        } else if no_terms {
            (LaneStatus::skipped(NO_QUERY_TERMS), Vec::new())
        } else {
            run(lane)?
        };
        reports.push(LaneReport {
            lane,
            status: status.clone(),
            candidates: ranked.len(),
            weight: fusion.weight(lane),
            known: None,
        });
        if status == LaneStatus::Ok {
            rankings.push(LaneRanking {
                lane,
                weight: fusion.weight(lane),
                ranked,
            });
        }
    }
    Ok((rankings, reports))
}

/// A lane's candidate: its chunk first.
pub(crate) trait Candidate: Copy {
    /// The chunk.
    fn chunk(&self) -> u32;
}

impl Candidate for (u32, f32) {
    fn chunk(&self) -> u32 {
        self.0
    }
}

impl Candidate for (u32, f32, u64) {
    fn chunk(&self) -> u32 {
        self.0
    }
}

/// One lane's `n` candidates with the chunks of `held` first: `rank(Some(held))` ranks those,
/// `rank(None)` every chunk the lane may return, and fills what the first leaves, each page
/// (with `groups`) or chunk once. Without `held`, `rank(None)`.
pub(crate) fn held_first<T: Candidate, E>(
    held: Option<&[bool]>,
    groups: Option<&[u32]>,
    n: usize,
    mut rank: impl FnMut(Option<&[bool]>) -> std::result::Result<Vec<T>, E>,
) -> std::result::Result<Vec<T>, E> {
    // One call site for `rank`, so the lane's search is not inlined twice.
    let mut out: Vec<T> = Vec::new();
    let mut taken: HashSet<u32> = HashSet::new();
    let key = |c: u32| groups.map_or(c, |g| g[c as usize]);
    for pass in [held, None] {
        let ranked = rank(pass)?;
        if pass.is_some() {
            if ranked.len() >= n {
                return Ok(ranked);
            }
            // Every chunk (or page) of `held` the lane scores is here: fewer than `n` came.
            taken.extend(ranked.iter().map(|c| key(c.chunk())));
            out = ranked;
        } else if out.is_empty() {
            return Ok(ranked);
        } else {
            out.extend(
                ranked
                    .into_iter()
                    .filter(|c| !taken.contains(&key(c.chunk()))),
            );
        }
    }
    out.truncate(n);
    Ok(out)
}

/// Fuses lane rankings of pages (each lane lists each page once, by its best chunk in that
/// lane), so a page gets the votes of every lane even when the lanes preferred different
/// chunks of it. The chunk shown for a page is the one from the lane that contributed most
/// to its fused score, among the chunks that hold the query's phrases (`held`) when a lane
/// chose one. `page_of`: a chunk's page; `page_order`: the order of two pages' ids.
pub(crate) fn fuse_pages(
    k: f32,
    rankings: &[LaneRanking],
    held: impl Fn(u32) -> bool,
    page_of: impl Fn(u32) -> u32,
    page_order: impl Fn(u32, u32) -> std::cmp::Ordering,
) -> Vec<Fused> {
    if let [_] = rankings {
        // One lane already lists each page once, best chunk first: its order is the fused
        // order.
        return fusion::rrf(k, rankings, |a, b| a.cmp(&b));
    }
    let by_page: Vec<LaneRanking> = rankings
        .iter()
        .map(|r| LaneRanking {
            lane: r.lane,
            weight: r.weight,
            ranked: r.ranked.iter().map(|&(c, s)| (page_of(c), s)).collect(),
        })
        .collect();
    let mut fused = fusion::rrf(k, &by_page, page_order);
    for f in &mut fused {
        // Ranks were computed over pages: point each lane's entry at that lane's chunk.
        for r in rankings {
            if let Some(at) = fusion::lane_rank_mut(f, r.lane) {
                if let Some(&(chunk, _)) = r.ranked.get(at.rank as usize - 1) {
                    at.chunk = chunk;
                }
            }
        }
        let any_held = rankings
            .iter()
            .any(|r| fusion::lane_rank(f, r.lane).is_some_and(|at| held(at.chunk)));
        let best = rankings
            .iter()
            .filter_map(|r| {
                let at = fusion::lane_rank(f, r.lane)?;
                Some((r.weight / (k + at.rank as f32), at.chunk))
            })
            .filter(|&(_, c)| !any_held || held(c))
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

/// Sets the lexical and token lanes' weights from the share of the query the index can read
/// (`known`, worked out only then: [`crate::lane::evidence::known_share`]), in `rankings` and
/// in their `reports`, when the semantic lane ran beside them.
pub(crate) fn weigh_known(
    known: impl FnOnce() -> f32,
    rankings: &mut [LaneRanking],
    reports: &mut [LaneReport],
) {
    if !rankings.iter().any(|r| r.lane == Lane::Semantic) {
        return;
    }
    let known = known();
    let factor = evidence::weight_factor(known);
    for r in rankings.iter_mut().filter(|r| r.lane != Lane::Semantic) {
        r.weight *= factor;
    }
    for report in reports.iter_mut() {
        if report.lane != Lane::Semantic && report.status == LaneStatus::Ok {
            report.weight *= factor;
            report.known = Some(known);
        }
    }
}

/// The order of two chunks' ids (`{page id}::{number}`, [`crate::text::chunk::chunk_id`]) from
/// whether they are of the same page, their numbers and, for two pages, the pages' ids.
pub(crate) fn chunk_id_order(
    same_page: bool,
    (a, b): (u32, u32),
    page_ids: impl FnOnce() -> (String, String),
) -> std::cmp::Ordering {
    if same_page {
        // Ids differ only in the number, compared as the id strings are.
        return a.to_string().cmp(&b.to_string());
    }
    let (a, b) = page_ids();
    format!("{a}::").cmp(&format!("{b}::"))
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
        Ok(Found::search(self, query, opts, reads, caller)?.results())
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
        let threads = batch_threads(opts, threads)?;
        crate::data::parallel::map(queries, threads, |q| {
            self.rank_with(q.as_ref(), opts, model)
        })
        .into_iter()
        .collect()
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
                    .get_or_init(|| typo::Dictionary::new(lexical.typo_words().iter()))
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
        crate::data::sort::sort_unstable(&mut postings);
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
        self.ranking_lanes(query, opts, reads, model, lanes_apart(self.chunk_count()))
    }

    /// [`Index::ranking`], the two word lanes run at once on two threads when `apart` (and
    /// both run, and [`parallel::may_spread`]): the same ranking either way.
    fn ranking_lanes<'a>(
        &'a self,
        query: &'a str,
        opts: &SearchOptions,
        reads: Option<&Reads<'_>>,
        model: Option<&dyn Embedder>,
        apart: bool,
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
        let view = self.view(opts, None, &quoted);
        let fusion_cfg = self.data.config.fusion;
        let no_terms = qterms.is_empty() && opts.query_vector.is_none();
        let lexical_lane = || {
            let weighted = lexical_terms(&qterms, &known, &typos);
            held_first(view.first(), view.groups, candidates, |first| {
                Ok::<_, Error>(self.scorer.search(
                    lexical,
                    &weighted,
                    first.or(view.filter()),
                    view.paged(),
                    candidates,
                ))
            })
        };
        let token_lane = || {
            let credits = token::credits(lexical, &qterms, &typos);
            held_first(view.first(), view.groups, candidates, |first| {
                Ok::<_, Error>(token::search(
                    lexical,
                    &credits,
                    first.unwrap_or(&view.mask),
                    view.paged(),
                    candidates,
                ))
            })
        };
        let mut token_ranked = None;
        let (mut rankings, mut reports) = run_lanes(opts, no_terms, fusion_cfg, |lane| {
            Ok(match lane {
                Lane::Lexical if opts.wants(Lane::Token) => {
                    // With `apart`, the lexical lane on a thread of its own while this one runs
                    // the token lane.
                    let (ranked, token) = parallel::beside(apart, lexical_lane, token_lane);
                    token_ranked = Some(token);
                    (LaneStatus::Ok, ranked?)
                }
                Lane::Lexical => (LaneStatus::Ok, lexical_lane()?),
                Lane::Token => (
                    LaneStatus::Ok,
                    token_ranked.take().unwrap_or_else(token_lane)?,
                ),
                Lane::Semantic => {
                    // The floor judges only queries none of whose words the index knows.
                    let unknown = known.iter().all(Option::is_none) && typos.is_empty();
                    self.semantic_lane((query, opts, model), &view, candidates, unknown)?
                }
            })
        })?;
        let known = || evidence::known_share(&self.data.lexical, &qterms, &typos);
        weigh_known(known, &mut rankings, &mut reports);
        let held = view.first();
        let mut fused: Vec<Fused> = if opts.chunks {
            fusion::rrf(fusion_cfg.k, &rankings, |a, b| self.cmp_chunk_ids(a, b))
        } else {
            self.fuse_pages(&rankings, held)
        };
        if let Some(held) = held {
            // Hits that hold every phrase first; a stable sort keeps the fused order in each.
            crate::data::sort::sort_by_key(&mut fused, |f| !held[f.chunk as usize]);
        }
        fused.truncate(limit);
        let picked = fused;
        let View {
            page_ok,
            mask,
            held,
            ..
        } = view;
        let phrases = (!quoted.is_empty()).then(|| Phrases {
            held,
            texts: quoted.iter().map(|(text, _)| *text).collect(),
        });
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
    /// its terms and their offsets ([`Analyzer::phrase_with`](crate::text::analyze::Analyzer::phrase_with)),
    /// the same phrase once.
    fn quoted_phrases<'q>(&'q self, query: &'q str) -> Quoted<'q> {
        let mut out: Quoted<'q> = Vec::new();
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
        view: &View<'_>,
        candidates: usize,
        unknown_words: bool,
    ) -> Result<(LaneStatus, Vec<(u32, f32)>)> {
        let Some(section) = &self.data.vectors else {
            return Ok((LaneStatus::skipped(semantic::NO_VECTORS), Vec::new()));
        };
        let q = match self.semantic_query(query, opts, model)? {
            Ok(q) => q,
            Err(status) => return Ok((status, Vec::new())),
        };
        let codes = self.vector_codes(section);
        let ranked = held_first(view.first(), view.groups, candidates, |first| {
            let mask = first.or(view.filter());
            Ok::<_, Error>(section.search(&q, mask, view.paged(), candidates, codes))
        })?;
        // Words the index does not know, and no closer to anything here than
        // nonsense is: no evidence at all, so no hits (the content-gap signal).
        if unknown_words && ranked.first().is_some_and(|&(_, s)| section.below_floor(s)) {
            return Ok((LaneStatus::skipped(semantic::BELOW_FLOOR), Vec::new()));
        }
        Ok((LaneStatus::Ok, ranked))
    }

    /// The binary codes of `section` (this index's vectors), made by the first semantic search
    /// ([`Codes::of`]: none for a small section).
    pub(crate) fn vector_codes(&self, section: &semantic::VectorSection) -> Option<&Codes> {
        self.codes.get_or_init(|| Codes::of(section)).as_ref()
    }

    /// How one search with `opts` reads this index ([`View`]): the pages and chunks its
    /// filters let through (with `shadowed`, the global pages hidden by a user's pages in a
    /// user scope; `None`: this index's own user pages decide), the lanes' page grouping, and
    /// the chunks that hold every one of the `quoted` phrases.
    pub(crate) fn view<'a>(
        &'a self,
        opts: &SearchOptions,
        shadowed: Option<&HashSet<&str>>,
        quoted: &Quoted<'_>,
    ) -> View<'a> {
        let (page_ok, mask, filtered) = if opts.has_filters() {
            let page_ok = match shadowed {
                Some(shadowed) => self.visible_pages_shadowed(opts, shadowed),
                None => self.visible_pages(opts),
            };
            let mask = self.chunk_mask(&page_ok);
            (Cow::Owned(page_ok), Cow::Owned(mask), true)
        } else {
            let unfiltered = self.unfiltered();
            (
                Cow::Borrowed(&unfiltered.pages[..]),
                Cow::Borrowed(&unfiltered.chunks[..]),
                !unfiltered.all,
            )
        };
        // Page hits: each lane ranks pages (by their best chunk), so `candidates` are that many
        // different pages and collapsing after fusion cannot leave fewer hits than the limit.
        // (When every page is one chunk, grouping is the identity and is skipped.)
        let groups = (!opts.chunks && self.chunk_page.len() != self.data.pages.len())
            .then_some(&self.chunk_page[..]);
        let lexical = &self.data.lexical;
        let held = (!quoted.is_empty())
            .then(|| {
                self.data.positions.as_ref().map(|p| {
                    let ids: Vec<Vec<(Option<usize>, u32)>> = quoted
                        .iter()
                        .map(|(_, terms)| {
                            terms.iter().map(|(t, o)| (lexical.lookup(t), *o)).collect()
                        })
                        .collect();
                    p.matching(lexical, &ids, &mask)
                })
            })
            .flatten();
        View {
            index: self,
            page_ok,
            mask,
            filtered,
            groups,
            held,
        }
    }

    /// The semantic lane's query vector (the caller's in the options, else `model`'s for the
    /// text), or the status the lane ends with without one: skipped when there is neither,
    /// failed when the embedder fails. An error for a malformed query vector.
    pub(crate) fn semantic_query(
        &self,
        query: &str,
        opts: &SearchOptions,
        model: Option<&dyn Embedder>,
    ) -> Result<std::result::Result<Vec<f32>, LaneStatus>> {
        match self.query_vector(query, opts.query_vector.as_deref(), model) {
            Ok(Some(q)) => Ok(Ok(q)),
            Ok(None) => Ok(Err(LaneStatus::skipped(semantic::NO_QUERY_VECTOR))),
            Err(e @ Error::InvalidArgument { .. }) => Err(e),
            Err(e) => Ok(Err(LaneStatus::failed(&e))),
        }
    }

    /// [`fuse_pages`] over this index's pages.
    fn fuse_pages(&self, rankings: &[LaneRanking], held: Option<&[bool]>) -> Vec<Fused> {
        let pages = &self.data.pages;
        fuse_pages(
            self.data.config.fusion.k,
            rankings,
            |c| held.is_some_and(|h| h[c as usize]),
            |c| self.chunk_page[c as usize],
            |a, b| pages[a as usize].id().cmp(&pages[b as usize].id()),
        )
    }

    fn cmp_chunk_ids(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (pa, pb) = (self.chunk_page[a as usize], self.chunk_page[b as usize]);
        let pages = &self.data.pages;
        chunk_id_order(
            pa == pb,
            (self.chunk_number(a), self.chunk_number(b)),
            || (pages[pa as usize].id(), pages[pb as usize].id()),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::{Config, IndexBuilder, Lane, SearchOptions};

    #[test]
    fn word_lanes_apart_rank_as_one_after_another() {
        let mut b = IndexBuilder::new(Config::default()).unwrap();
        let pages = [
            ("a.md", "# Boundary layers\n\nThe boundary layer of a flat plate.\n\n## Transition\n\nTransition to turbulence in the layer."),
            ("b.md", "# Heat\n\nHeat transfer near the leading edge of a plate, with a layer of \"boundary flow\"."),
            ("c.md", "---\ntags: [flow]\n---\n# Flow\n\nTurbulent flow and laminar flow; the transition point moves."),
        ];
        for (path, text) in pages {
            b.add_file(path, text.as_bytes()).unwrap();
        }
        let index = b.build().unwrap().0;
        let lanes = |names: &[Lane]| Some(names.to_vec());
        let cases = [
            ("boundary layer transition", SearchOptions::default()),
            ("boundry layr", SearchOptions::default()),
            ("\"boundary layer\" plate", SearchOptions::default()),
            (
                "flow",
                SearchOptions {
                    chunks: true,
                    ..SearchOptions::default()
                },
            ),
            (
                "trans plate",
                SearchOptions {
                    lanes: lanes(&[Lane::Lexical, Lane::Token]),
                    ..SearchOptions::default()
                },
            ),
            (
                "layer",
                SearchOptions {
                    lanes: lanes(&[Lane::Token]),
                    ..SearchOptions::default()
                },
            ),
            ("nothing here at all", SearchOptions::default()),
        ];
        for (query, opts) in cases {
            let one = index
                .ranking_lanes(query, &opts, None, None, false)
                .unwrap();
            let two = index.ranking_lanes(query, &opts, None, None, true).unwrap();
            assert_eq!(one.picked, two.picked, "{query}");
            assert_eq!(one.reports, two.reports, "{query}");
            if query.starts_with("boundary layer") {
                assert!(one.picked.len() >= 2, "the case ranks something");
            }
        }
    }
}
