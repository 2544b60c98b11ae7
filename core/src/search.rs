//! Search (DESIGN §3): normalize the query, filter, rank in each lane, fuse, collapse chunks to
//! pages, add snippets and explanations.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::analyze::{self, QueryTerm};
use crate::error::{Error, Result};
use crate::fusion::{self, Fused, LaneRanking};
use crate::index::Index;
use crate::lane::lexical::TermScore;
use crate::lane::{semantic, token, Lane, LaneStatus};
use crate::page::{Page, Scope, UsageMode};

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest number of hits a search returns.
pub const MAX_LIMIT: usize = 100;
/// Largest number of candidates a lane contributes to fusion.
pub const MAX_CANDIDATES: usize = 100;
/// Target snippet length in characters.
pub const SNIPPET_CHARS: usize = 150;

/// Where pages with `usage_mode: always` go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlwaysMode {
    /// Before the ranked hits (they count toward the limit).
    #[default]
    First,
    /// In [`SearchResults::always`], apart from the ranked hits.
    Separate,
}

/// How to search. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchOptions {
    /// Hits to return: default 20, clamped to `1..=100`.
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
    /// Where `always` pages go.
    pub always: AlwaysMode,
    /// Add per-term lexical explanations and per-lane fusion contributions to each hit.
    pub explain: bool,
    /// Add a snippet of the best chunk to each hit (default true).
    pub snippets: bool,
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
            always: AlwaysMode::First,
            explain: false,
            snippets: true,
        }
    }
}

/// A lane's part in one hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneHit {
    /// The lane.
    pub lane: Lane,
    /// `ok`, `skipped` or `failed` (for the query as a whole).
    pub status: String,
    /// 1-based rank of the hit's chunk in the lane, if the lane ranked it.
    pub rank: Option<u32>,
    /// The lane's own score for the chunk, if it ranked it.
    pub score: Option<f32>,
    /// This lane's share of the fused score: `weight / (k + rank)`.
    pub contribution: Option<f32>,
}

/// A query term found in a snippet, as character offsets into the snippet text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Highlight {
    /// First character (Unicode scalar value index) of the match.
    pub start: u32,
    /// One past the last character.
    pub end: u32,
}

/// A short excerpt of the best chunk around the query terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snippet {
    /// About 150 characters of the chunk, cut at word boundaries.
    pub text: String,
    /// Where query terms occur in `text`.
    pub highlights: Vec<Highlight>,
    /// Byte offset of `text` in the page's source.
    pub offset: u32,
}

/// Why a hit ranked where it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// Each query term's BM25 contribution in the best chunk.
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
    /// Excerpt of that chunk.
    pub snippet: Option<Snippet>,
    /// Per lane, in [`Lane::ALL`] order.
    pub lanes: Vec<LaneHit>,
    /// The page has `usage_mode: always`.
    pub always: bool,
    /// The page's `stale_since`, if any.
    pub stale_since: Option<String>,
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
    /// Ranked hits.
    pub hits: Vec<Hit>,
    /// `always` pages, with [`AlwaysMode::Separate`].
    pub always: Vec<Hit>,
}

impl Index {
    /// Searches the index.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a lane is asked for twice... never for an odd query: an
    /// empty or all-stopword query returns no hits.
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
        let limit = opts.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let candidates = (limit * 3).min(MAX_CANDIDATES);
        let max_chars = self.data.config.max_query_chars as usize;
        let (query, truncated) = match query.char_indices().nth(max_chars) {
            Some((cut, _)) => (&query[..cut], true),
            None => (query, false),
        };
        let qterms = self.analyzer.query(query);
        let terms: Vec<String> = qterms.iter().map(|q| q.term.clone()).collect();
        let page_ok = self.visible_pages(opts);
        let mask: Vec<bool> = self
            .chunk_page
            .iter()
            .map(|&p| page_ok[p as usize] && self.data.pages[p as usize].usage_mode != UsageMode::Always)
            .collect();

        let wanted = |lane: Lane| opts.lanes.as_ref().is_none_or(|l| l.contains(&lane));
        let fusion_cfg = self.data.config.fusion;
        let mut rankings = Vec::new();
        let mut reports = Vec::new();
        for lane in Lane::ALL {
            let (status, ranked) = if !wanted(lane) {
                (LaneStatus::Skipped("not requested".into()), Vec::new())
            } else {
                match lane {
                    Lane::Lexical => (
                        LaneStatus::Ok,
                        self.scorer.search(&self.data.lexical, &terms, &mask, candidates),
                    ),
                    Lane::Token => (
                        LaneStatus::Ok,
                        token::search(&self.data.lexical, &qterms, &mask, candidates),
                    ),
                    Lane::Semantic => {
                        (LaneStatus::Skipped(semantic::NO_VECTORS.into()), Vec::new())
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
        let fused = fusion::rrf(fusion_cfg.k, &rankings, |a, b| self.cmp_chunk_ids(a, b));
        let picked: Vec<&Fused> = if opts.chunks {
            fused.iter().take(limit).collect()
        } else {
            let mut seen = HashSet::new();
            fused
                .iter()
                .filter(|f| seen.insert(self.chunk_page[f.chunk as usize]))
                .take(limit)
                .collect()
        };
        let ctx = HitContext {
            index: self,
            qterms: &qterms,
            terms: &terms,
            reports: &reports,
            opts,
        };
        let mut hits: Vec<Hit> = picked.into_iter().map(|f| ctx.hit(f)).collect();
        let always: Vec<Hit> = self
            .data
            .pages
            .iter()
            .enumerate()
            .filter(|(i, p)| page_ok[*i] && p.usage_mode == UsageMode::Always)
            .map(|(i, _)| ctx.always_hit(i, &fused))
            .collect();
        let always = match opts.always {
            AlwaysMode::Separate => always,
            AlwaysMode::First => {
                let mut all = always;
                all.append(&mut hits);
                all.truncate(limit);
                hits = all;
                Vec::new()
            }
        };
        Ok(SearchResults {
            query: query.to_string(),
            truncated,
            terms,
            lanes: reports,
            hits,
            always,
        })
    }

    /// Per page: may this search return it? Applies lifecycle, usage mode, scope (with
    /// shadowing) and the tag and type filters.
    fn visible_pages(&self, opts: &SearchOptions) -> Vec<bool> {
        let pages = &self.data.pages;
        let lower = |v: &[String]| v.iter().map(|s| s.to_lowercase()).collect::<HashSet<_>>();
        let tags = lower(&opts.tags);
        let types = lower(&opts.types);
        let shadowed: HashSet<&str> = match &opts.scope {
            Some(Scope::User(name)) => pages
                .iter()
                .filter(|p| matches!(&p.scope, Scope::User(n) if n == name))
                .map(|p| p.key.as_str())
                .collect(),
            _ => HashSet::new(),
        };
        pages
            .iter()
            .map(|p| {
                let in_scope = match &opts.scope {
                    None => true,
                    Some(Scope::Global) => p.scope == Scope::Global,
                    Some(s @ Scope::User(_)) => {
                        p.scope == *s || (p.scope == Scope::Global && !shadowed.contains(p.key.as_str()))
                    }
                };
                let mode_ok = if opts.usage_modes.is_empty() {
                    p.usage_mode != UsageMode::Never
                } else {
                    p.usage_mode != UsageMode::Never && opts.usage_modes.contains(&p.usage_mode)
                };
                in_scope
                    && mode_ok
                    && !p.is_archived()
                    && (tags.is_empty() || p.tags.iter().any(|t| tags.contains(&t.to_lowercase())))
                    && (types.is_empty()
                        || p.kind.as_ref().is_some_and(|k| types.contains(&k.to_lowercase())))
            })
            .collect()
    }

    fn cmp_chunk_ids(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (pa, pb) = (self.chunk_page[a as usize], self.chunk_page[b as usize]);
        if pa == pb {
            // Same page: ids differ only in the ordinal, compared as the id strings are.
            let oa = (a - self.first_chunk[pa as usize]).to_string();
            let ob = (b - self.first_chunk[pb as usize]).to_string();
            return oa.cmp(&ob);
        }
        let (a, b) = (&self.data.pages[pa as usize], &self.data.pages[pb as usize]);
        format!("{}::", a.id()).cmp(&format!("{}::", b.id()))
    }
}

struct HitContext<'a> {
    index: &'a Index,
    qterms: &'a [QueryTerm],
    terms: &'a [String],
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
                    status: r.status.name().to_string(),
                    rank: at.map(|a| a.rank),
                    score: at.map(|a| a.score),
                    contribution: at.map(|a| r.weight / (fusion_cfg.k + a.rank as f32)),
                }
            })
            .collect();
        let mut hit = self.base(f.chunk, f.score, lanes);
        if self.opts.explain {
            hit.explain = Some(Explanation {
                lexical: self
                    .index
                    .scorer
                    .explain(&self.index.data.lexical, self.terms, f.chunk),
                k: fusion_cfg.k,
            });
        }
        hit
    }

    /// An `always` page: its fused entry if a lane matched it, else its first chunk, score 0.
    fn always_hit(&self, page: usize, fused: &[Fused]) -> Hit {
        let first = self.index.first_chunk[page];
        let end = self.index.first_chunk[page + 1];
        // Always pages are masked out of the lanes, so they have no fused entry; say so.
        debug_assert!(fused.iter().all(|f| !(first..end).contains(&f.chunk)));
        let lanes = self
            .reports
            .iter()
            .map(|r| LaneHit {
                lane: r.lane,
                status: r.status.name().to_string(),
                rank: None,
                score: None,
                contribution: None,
            })
            .collect();
        let best = self.best_chunk_by_terms(first, end);
        self.base(best, 0.0, lanes)
    }

    /// The chunk of `first..end` that contains the most query terms (the first on ties).
    fn best_chunk_by_terms(&self, first: u32, end: u32) -> u32 {
        let lexical = &self.index.data.lexical;
        let count = |c: u32| {
            self.terms
                .iter()
                .filter(|t| {
                    lexical
                        .lookup(t)
                        .is_some_and(|i| lexical.postings(i).0.binary_search(&c).is_ok())
                })
                .count()
        };
        (first..end).max_by_key(|&c| (count(c), std::cmp::Reverse(c))).unwrap_or(first)
    }

    fn base(&self, c: u32, score: f32, lanes: Vec<LaneHit>) -> Hit {
        let index = self.index;
        let p: &Page = &index.data.pages[index.chunk_page[c as usize] as usize];
        let chunk = index.chunk_at(c);
        let snippet = self
            .opts
            .snippets
            .then(|| snippet(index, self.qterms, &chunk.text, chunk.start));
        Hit {
            key: p.key.clone(),
            page_id: p.id(),
            scope: p.scope.clone(),
            path: p.path.clone(),
            title: p.title.clone(),
            summary: p.summary.clone(),
            kind: p.kind.clone(),
            tags: p.tags.clone(),
            score,
            chunk: chunk.id,
            chunk_hash: chunk.hash,
            snippet,
            lanes,
            always: p.usage_mode == UsageMode::Always,
            stale_since: p.stale_since.clone(),
            explain: None,
        }
    }
}

/// About [`SNIPPET_CHARS`] characters of `text` around the densest run of query terms, with
/// their character offsets. `base` is the text's byte offset in its page.
fn snippet(index: &Index, qterms: &[QueryTerm], text: &str, base: u32) -> Snippet {
    let terms: HashSet<&str> = qterms.iter().map(|q| q.term.as_str()).collect();
    let prefixes: Vec<&str> = qterms
        .iter()
        .map(|q| q.word.as_str())
        .filter(|w| w.chars().count() >= token::MIN_PREFIX_CHARS)
        .collect();
    let words: Vec<(usize, &str)> = analyze::words(text).collect();
    let matched: Vec<(usize, usize)> = words
        .iter()
        .filter(|(_, w)| {
            let norm = index.analyzer.normalize(w);
            index.analyzer.term(w).is_some_and(|t| terms.contains(t.as_str()))
                || prefixes.iter().any(|p| norm.starts_with(p))
        })
        .map(|&(s, w)| (s, s + w.len()))
        .collect();
    // Window start: the match that has the most other matches within SNIPPET_CHARS bytes
    // after it (bytes approximate characters well enough to choose a window).
    let mut start = 0;
    let mut best = 0;
    for (i, &(s, _)) in matched.iter().enumerate() {
        let n = matched[i..].iter().take_while(|&&(e, _)| e < s + SNIPPET_CHARS).count();
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
    let mut end = start;
    let mut chars = 0;
    for (i, c) in text[start..].char_indices() {
        if chars >= SNIPPET_CHARS {
            break;
        }
        chars += 1;
        end = start + i + c.len_utf8();
    }
    if end < text.len() {
        // Do not cut a word in half.
        if let Some(&(ws, _)) = words.iter().find(|&&(s, w)| s < end && s + w.len() > end) {
            if ws > start {
                end = ws;
            }
        }
    }
    let slice = &text[start..end];
    let trimmed_start = start + (slice.len() - slice.trim_start().len());
    let slice = slice.trim();
    let char_at = |byte: usize| text[trimmed_start..byte].chars().count() as u32;
    let highlights = matched
        .iter()
        .filter(|&&(s, e)| s >= trimmed_start && e <= trimmed_start + slice.len())
        .map(|&(s, e)| Highlight {
            start: char_at(s),
            end: char_at(e),
        })
        .collect();
    Snippet {
        text: slice.to_string(),
        highlights,
        offset: base + trimmed_start as u32,
    }
}

impl SearchOptions {
    /// Checks the options against what the index can do.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty lane list.
    pub fn validate(&self) -> Result<()> {
        if self.lanes.as_ref().is_some_and(Vec::is_empty) {
            return Err(Error::invalid_argument("lanes must not be empty"));
        }
        Ok(())
    }
}
