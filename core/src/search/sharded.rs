//! A wiki searched as several indexes (shards), each holding some of its pages: a wiki built in
//! shards (on a cluster, say) searched without merging them into one index first (a build from
//! [`Source::Indexes`](crate::Source::Indexes) merges them).
//!
//! Its rankings are the ones one index of all the pages gives, bit for bit:
//! - the query is analyzed against the wiki's dictionary: every shard's terms with their
//!   document frequencies summed, so typo and prefix expansions, the share of the query the
//!   wiki knows and the idf of each term are the whole wiki's;
//! - each shard scores its chunks with the wiki's statistics (chunk count, average length,
//!   document frequencies), so a chunk's BM25 score is the one the whole index gives it;
//! - each lane keeps the best candidates of every shard, merged in the order one index ranks
//!   them (score, the lane's tie rules, then the chunk's place in the wiki's page order);
//! - fusion runs once over the merged lanes, with the semantic lane's relevance floor
//!   measured over every shard's vectors.
//!
//! The semantic lane is exact while each shard scores every vector (below 50,000 vectors a
//! shard); above, each shard's binary codes choose the vectors it scores, as one index's do,
//! from a different set of rows, so its candidates may differ where scores nearly tie.
//!
//! ```
//! # use std::sync::Arc;
//! # use wikidex::{IndexBuilder, SearchOptions, ShardedIndex};
//! let build = |files: &[(&str, &str)]| {
//!     let mut b = IndexBuilder::new(Default::default())?;
//!     for (path, text) in files {
//!         b.add_file(path, text.as_bytes())?;
//!     }
//!     Ok::<_, wikidex::Error>(Arc::new(b.build()?.0))
//! };
//! let revenue = ("global/revenue.md", "Revenue is recognized monthly.");
//! let churn = ("global/churn.md", "Churn lowers monthly revenue.");
//! let whole = build(&[revenue, churn])?;
//! let sharded = ShardedIndex::new(vec![build(&[revenue])?, build(&[churn])?], None)?;
//! let opts = SearchOptions::default();
//! let one: Vec<(String, f32)> = (whole.rank("monthly revenue", &opts)?.iter())
//!     .map(|r| (whole.pages()[r.page].id(), r.score))
//!     .collect();
//! let both: Vec<(String, f32)> = (sharded.rank("monthly revenue", &opts)?.iter())
//!     .map(|r| (sharded.page(r).id(), r.score))
//!     .collect();
//! assert_eq!(both, one);
//! # Ok::<(), wikidex::Error>(())
//! ```

use std::collections::HashSet;
use std::sync::Arc;

use super::{
    chunk_id_order, fuse_pages, held_first, lexical_terms, run_lanes, SearchOptions, View,
};
use super::{DEFAULT_LIMIT, MAX_CANDIDATES, MAX_LIMIT};
use crate::blob::IndexData;
use crate::data::error::{Error, Result};
use crate::embed::Embedder;
use crate::index::Index;
use crate::lane::fusion::{self, Fused};
use crate::lane::lexical::Bm25Scorer;
use crate::lane::{semantic, token, Lane, LaneStatus};
use crate::postings::LexicalIndex;
use crate::text::page::{canonical, Page};

/// Indexes of parts of one wiki searched as one (see the module docs).
pub struct ShardedIndex {
    shards: Vec<Arc<Index>>,
    /// The wiki's dictionary, as an index without pages the query analysis reads
    /// ([`LexicalIndex::union`]).
    wiki: Index,
    /// Per shard: BM25 with the wiki's statistics.
    scorers: Vec<Bm25Scorer>,
    /// Per shard, per chunk of its table: the chunk's place in the wiki's chunk order (its
    /// pages in canonical order, each page's chunks in its shard's order).
    place: Vec<Vec<u32>>,
    /// Per place in the wiki's chunk order: the shard and the chunk there.
    at: Vec<(u32, u32)>,
    /// Per place in the wiki's chunk order: its page's place in the wiki's page order.
    chunk_page: Vec<u32>,
    /// Per place in the wiki's page order: the shard and the page there.
    pages: Vec<(u32, u32)>,
    /// The semantic lane's relevance floor over every shard's vectors (0: none).
    floor: f32,
    model: Option<Arc<dyn Embedder>>,
}

impl std::fmt::Debug for ShardedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedIndex")
            .field("shards", &self.shards.len())
            .field("pages", &self.pages.len())
            .field("chunks", &self.at.len())
            .finish_non_exhaustive()
    }
}

/// One ranked hit of a [`ShardedIndex`]: which shard holds it, and where.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShardRanked {
    /// The shard (its position in the list [`ShardedIndex::new`] took).
    pub shard: usize,
    /// Position of the page in that shard's [`Index::pages`].
    pub page: usize,
    /// Position of the best chunk in that shard's chunk table.
    pub chunk: usize,
    /// Fused score.
    pub score: f32,
}

impl ShardedIndex {
    /// Searches `shards` as one index of all their pages. `model` is the one their vectors
    /// were made with: it embeds text queries for the semantic lane and measures the lane's
    /// relevance floor over every shard's vectors; without it, only a query vector ranks
    /// semantically, and the floor is the highest of the shards' (0 when none has one, as for
    /// vectors the caller brought).
    ///
    /// # Errors
    /// `invalid_argument` for no shards, shards built with different settings or whose vectors
    /// come from different models (or some without vectors), the same page in two shards, or
    /// more than 4,294,967,295 chunks; what `model` returns when it fails to embed the floor's
    /// probes.
    pub fn new(shards: Vec<Arc<Index>>, model: Option<Arc<dyn Embedder>>) -> Result<ShardedIndex> {
        let Some(first) = shards.first() else {
            return Err(Error::invalid_argument(
                "a sharded index needs at least one shard",
            ));
        };
        fn model_of(i: &Index) -> Option<(&str, u32)> {
            (i.data.vectors.as_ref()).map(|v| (v.fingerprint.as_str(), v.dim))
        }
        for (s, shard) in shards.iter().enumerate().skip(1) {
            if shard.data.config != first.data.config {
                return Err(Error::invalid_argument(format!(
                    "shard {s} was built with other settings than shard 0"
                )));
            }
            if model_of(shard) != model_of(first) {
                return Err(Error::invalid_argument(format!(
                    "shard {s}'s vectors are not from shard 0's model (or one has none)"
                )));
            }
        }
        let pages = wiki_pages(&shards)?;
        let (mut place, mut at, mut chunk_page) = (Vec::new(), Vec::new(), Vec::new());
        for shard in &shards {
            place.push(vec![0u32; shard.chunk_page.len()]);
        }
        for (p, &(s, page)) in (0u32..).zip(&pages) {
            let shard = &shards[s as usize];
            let page = page as usize;
            for c in shard.first_chunk[page]..shard.first_chunk[page + 1] {
                let here = u32::try_from(at.len()).map_err(|_| {
                    Error::invalid_argument("a sharded index holds at most 2^32 - 1 chunks")
                })?;
                place[s as usize][c as usize] = here;
                at.push((s, c));
                chunk_page.push(p);
            }
        }
        let parts: Vec<&LexicalIndex> = shards.iter().map(|s| &s.data.lexical).collect();
        let (lexical, dfs) = LexicalIndex::union(&parts);
        let totals = (
            lexical.chunk_count(),
            lexical.lengths().iter().map(|&l| u64::from(l)).sum(),
        );
        let params = first.data.config.bm25;
        let scorers = (shards.iter().zip(dfs))
            .map(|(shard, dfs)| Bm25Scorer::for_shard(&shard.data.lexical, params, totals, dfs))
            .collect();
        let wiki = Index::from_data(IndexData {
            config: first.data.config.clone(),
            languages: Default::default(),
            pages: Vec::new(),
            chunks: Vec::new(),
            lexical,
            vectors: None,
            graph: Default::default(),
            raw: Default::default(),
            chunk_numbers: Vec::new(),
            page_modified: Vec::new(),
            positions: None,
        });
        let floor = match (&first.data.vectors, model.as_deref()) {
            (None, _) => 0.0,
            (Some(section), Some(model)) => {
                crate::index::vectors::measure_floor(section, model, |q| {
                    (shards.iter())
                        .filter_map(|s| {
                            s.data
                                .vectors
                                .as_ref()?
                                .search(q, None, None, 1, None)
                                .first()
                                .map(|&(_, x)| x)
                        })
                        .reduce(f32::max)
                })?
            }
            (Some(_), None) => (shards.iter())
                .filter_map(|s| s.data.vectors.as_ref().map(|v| v.floor))
                .fold(0.0, f32::max),
        };
        Ok(ShardedIndex {
            shards,
            wiki,
            scorers,
            place,
            at,
            chunk_page,
            pages,
            floor,
            model,
        })
    }

    /// The shards, in the order [`ShardedIndex::new`] took them.
    pub fn shards(&self) -> &[Arc<Index>] {
        &self.shards
    }

    /// The page of a hit.
    pub fn page(&self, hit: &ShardRanked) -> &Page {
        &self.shards[hit.shard].pages()[hit.page]
    }

    /// The shard holding the page with this id (`key` or `user/<name>/<key>`, as
    /// [`Page::id`] gives it), if one does: where to read a hit's page, chunks or links.
    pub fn shard_of(&self, page_id: &str) -> Option<usize> {
        self.shards
            .iter()
            .position(|s| s.page_by_id(page_id).is_some())
    }

    /// Number of pages over every shard.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Number of chunks over every shard.
    pub fn chunk_count(&self) -> usize {
        self.at.len()
    }

    /// Ranks the wiki's chunks as [`Index::rank`] ranks those of one index of all its pages:
    /// the same pages and chunks in the same order with the same scores.
    ///
    /// # Errors
    /// As [`Index::rank`].
    pub fn rank(&self, query: &str, opts: &SearchOptions) -> Result<Vec<ShardRanked>> {
        let picked = self.ranking(query, opts)?;
        Ok(picked
            .iter()
            .map(|f| {
                let (s, c) = self.at[f.chunk as usize];
                let shard = &self.shards[s as usize];
                ShardRanked {
                    shard: s as usize,
                    page: shard.chunk_page[c as usize] as usize,
                    chunk: c as usize,
                    score: f.score,
                }
            })
            .collect())
    }

    /// [`ShardedIndex::rank`] for many queries with one set of options, answers in query
    /// order, spread over `threads` threads as [`Index::rank_many`] spreads them.
    ///
    /// # Errors
    /// As [`Index::rank_many`].
    pub fn rank_many<Q: AsRef<str> + Sync>(
        &self,
        queries: &[Q],
        opts: &SearchOptions,
        threads: Option<usize>,
    ) -> Result<Vec<Vec<ShardRanked>>> {
        let threads = super::batch_threads(opts, threads)?;
        crate::data::parallel::map(queries, threads, |q| self.rank(q.as_ref(), opts))
            .into_iter()
            .collect()
    }

    /// What one index's ranking picks, over the wiki's chunk order.
    fn ranking(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Fused>> {
        opts.validate()?;
        let limit = opts.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let candidates = (limit * 3).min(MAX_CANDIDATES);
        let analyzed = self.wiki.analyzed(query, opts, None)?;
        let wiki = &self.wiki.data.lexical;
        let shadowed: HashSet<&str> = if opts.has_filters() {
            self.shards.iter().flat_map(|s| s.shadowed(opts)).collect()
        } else {
            HashSet::new()
        };
        let views: Vec<View<'_>> = (self.shards.iter())
            .map(|shard| shard.view(opts, Some(&shadowed), &analyzed.quoted))
            .collect();
        // The wiki's dictionary position of a term, as a shard's (`None`: the shard lacks it).
        let local = |v: &View<'_>, t: usize| v.index.data.lexical.lookup(wiki.term(t));
        let fusion_cfg = self.wiki.data.config.fusion;
        let no_terms = analyzed.qterms.is_empty() && opts.query_vector.is_none();
        let (mut rankings, mut reports) = run_lanes(opts, no_terms, fusion_cfg, |lane| {
            Ok(match lane {
                Lane::Lexical => {
                    let weighted =
                        lexical_terms(&analyzed.qterms, &analyzed.known, &analyzed.typos);
                    let ranked = self.lane(&views, candidates, |s, v, first| {
                        let terms: Vec<(usize, f32)> = (weighted.iter())
                            .filter_map(|&(t, w)| Some((local(v, t)?, w)))
                            .collect();
                        untied(self.scorers[s].search(
                            &v.index.data.lexical,
                            &terms,
                            first.or(v.filter()),
                            v.paged(),
                            candidates,
                        ))
                    });
                    (LaneStatus::Ok, ranked)
                }
                Lane::Token => {
                    let credits = token::credits(wiki, &analyzed.qterms, &analyzed.typos);
                    let ranked = self.lane(&views, candidates, |_, v, first| {
                        let credits: token::Credits = (credits.iter())
                            .map(|unit| {
                                (unit.iter())
                                    .filter_map(|&(t, w)| Some((local(v, t)?, w)))
                                    .collect()
                            })
                            .collect();
                        token::search_tied(
                            &v.index.data.lexical,
                            &credits,
                            first.unwrap_or(&v.mask),
                            v.paged(),
                            candidates,
                        )
                    });
                    (LaneStatus::Ok, ranked)
                }
                Lane::Semantic => self.semantic(query, opts, &analyzed, &views, candidates)?,
            })
        })?;
        self.wiki.adapt_weights(
            &analyzed.qterms,
            &analyzed.typos,
            &mut rankings,
            &mut reports,
        );
        let held = |c: u32| {
            let (s, local) = self.at[c as usize];
            views[s as usize].holds(local)
        };
        let mut fused: Vec<Fused> = if opts.chunks {
            fusion::rrf(fusion_cfg.k, &rankings, |a, b| self.cmp_chunk_ids(a, b))
        } else {
            fuse_pages(
                fusion_cfg.k,
                &rankings,
                held,
                |c| self.chunk_page[c as usize],
                |a, b| self.page_at(a).id().cmp(&self.page_at(b).id()),
            )
        };
        // Hits that hold every phrase first; a stable sort keeps the fused order in each.
        crate::data::sort::sort_by_key(&mut fused, |f| !held(f.chunk));
        fused.truncate(limit);
        Ok(fused)
    }

    /// The semantic lane over every shard, as [`Index`]'s runs it over one.
    fn semantic(
        &self,
        query: &str,
        opts: &SearchOptions,
        analyzed: &super::Analyzed<'_>,
        views: &[View<'_>],
        candidates: usize,
    ) -> Result<(LaneStatus, Vec<(u32, f32)>)> {
        let first = &self.shards[0];
        if first.data.vectors.is_none() {
            return Ok((LaneStatus::skipped(semantic::NO_VECTORS), Vec::new()));
        }
        let q = match first.semantic_query(query, opts, self.model.as_deref())? {
            Ok(q) => q,
            Err(status) => return Ok((status, Vec::new())),
        };
        let ranked = self.lane(views, candidates, |_, v, first| {
            let Some(section) = &v.index.data.vectors else {
                return Vec::new();
            };
            untied(section.search(
                &q,
                first.or(v.filter()),
                v.paged(),
                candidates,
                v.index.vector_codes(section),
            ))
        });
        let unknown = analyzed.known.iter().all(Option::is_none) && analyzed.typos.is_empty();
        if unknown
            && ranked
                .first()
                .is_some_and(|&(_, s)| semantic::below(self.floor, s))
        {
            return Ok((LaneStatus::skipped(semantic::BELOW_FLOOR), Vec::new()));
        }
        Ok((LaneStatus::Ok, ranked))
    }

    /// One lane's best `n` candidates over every shard, in one index's order ([`merged`]):
    /// `rank(s, view, first)` ranks shard `s`'s chunks (those of `first` only, when given),
    /// each with its place among equal scores, as [`held_first`] asks.
    ///
    /// [`merged`]: ShardedIndex::merged
    fn lane(
        &self,
        views: &[View<'_>],
        n: usize,
        rank: impl Fn(usize, &View<'_>, Option<&[bool]>) -> Vec<(u32, f32, u64)>,
    ) -> Vec<(u32, f32)> {
        let lists = (views.iter().enumerate())
            .map(|(s, v)| {
                let Ok(list) =
                    held_first::<_, std::convert::Infallible>(v.first(), v.groups, n, |first| {
                        Ok(rank(s, v, first))
                    });
                list
            })
            .collect();
        self.merged(views, lists, n)
    }

    /// One lane's candidates of every shard (`lists[s]`, each chunk with its score and its
    /// place among equal scores, best first) as one index ranks them: the chunks holding the
    /// query's phrases first, then by score, place among equal scores and
    /// place in the wiki; the best `n`, in the wiki's chunk order.
    fn merged(
        &self,
        views: &[View<'_>],
        lists: Vec<Vec<(u32, f32, u64)>>,
        n: usize,
    ) -> Vec<(u32, f32)> {
        let mut all: Vec<(bool, f32, u64, u32)> = (lists.into_iter().enumerate())
            .flat_map(|(s, list)| {
                let v = &views[s];
                list.into_iter()
                    .map(move |(c, score, tie)| (v.holds(c), score, tie, self.place[s][c as usize]))
            })
            .collect();
        crate::data::sort::sort_by(&mut all, |a, b| {
            (b.0.cmp(&a.0))
                .then_with(|| b.1.total_cmp(&a.1))
                .then_with(|| b.2.cmp(&a.2))
                .then_with(|| a.3.cmp(&b.3))
        });
        all.truncate(n);
        all.into_iter().map(|(_, score, _, c)| (c, score)).collect()
    }

    /// The page at place `p` of the wiki's page order.
    fn page_at(&self, p: u32) -> &Page {
        let (s, page) = self.pages[p as usize];
        &self.shards[s as usize].pages()[page as usize]
    }

    /// [`Index`]'s order of chunk ids, over the wiki's chunk order.
    fn cmp_chunk_ids(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let ((sa, ca), (sb, cb)) = (self.at[a as usize], self.at[b as usize]);
        let (pa, pb) = (self.chunk_page[a as usize], self.chunk_page[b as usize]);
        let number = |s: u32, c: u32| self.shards[s as usize].chunk_number(c);
        chunk_id_order(pa == pb, (number(sa, ca), number(sb, cb)), || {
            (self.page_at(pa).id(), self.page_at(pb).id())
        })
    }
}

/// A lane's candidates without a place among equal scores: their chunk order alone breaks ties.
fn untied(ranked: Vec<(u32, f32)>) -> Vec<(u32, f32, u64)> {
    ranked.into_iter().map(|(c, s)| (c, s, 0)).collect()
}

/// The wiki's pages in canonical order, each as its shard and its position there.
fn wiki_pages(shards: &[Arc<Index>]) -> Result<Vec<(u32, u32)>> {
    let mut pages: Vec<(u32, u32)> = Vec::new();
    for (s, shard) in (0u32..).zip(shards) {
        let n = u32::try_from(shard.pages().len())
            .map_err(|_| Error::invalid_argument("a shard holds at most 2^32 - 1 pages"))?;
        pages.extend((0..n).map(|p| (s, p)));
    }
    let page = |&(s, p): &(u32, u32)| &shards[s as usize].pages()[p as usize];
    crate::data::sort::sort_by(&mut pages, |a, b| canonical(page(a), page(b)));
    if let Some(w) = pages
        .windows(2)
        .find(|w| canonical(page(&w[0]), page(&w[1])).is_eq())
    {
        return Err(Error::invalid_argument(format!(
            "page {} is in shard {} and in shard {}",
            page(&w[0]).id(),
            w[0].0,
            w[1].0
        )));
    }
    Ok(pages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, IndexBuilder};

    /// A model of four dimensions from a text's letters: texts sharing letters score alike,
    /// so the semantic lane ties and near-ties often.
    struct Letters;

    impl Embedder for Letters {
        fn model_id(&self) -> &str {
            "letters"
        }
        fn fingerprint(&self) -> &str {
            "letters-1"
        }
        fn dim(&self) -> usize {
            4
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            Ok(texts
                .iter()
                .map(|t| {
                    let count = |c: char| t.matches(c).count() as f32;
                    let mut v = vec![count('a') + 1.0, count('e'), count('r'), count('o')];
                    crate::embed::normalize(&mut v);
                    v
                })
                .collect())
        }
    }

    const WORDS: [&str; 16] = [
        "revenue", "revenues", "review", "rev", "margin", "marginal", "churn", "cost", "costs",
        "alpha", "beta", "gamma", "delta", "monthly", "month", "zeta",
    ];

    /// A page: its scope's user (if any), its key, tags and sections of words.
    type PageSpec = (Option<u8>, u8, Vec<u8>, Vec<Vec<u8>>);

    fn file((user, key, tags, sections): &PageSpec) -> (String, String) {
        let path = match user {
            Some(u) => format!("user/u{u}/k{key}.md"),
            None => format!("global/k{key}.md"),
        };
        let tags: Vec<String> = tags.iter().map(|t| format!("t{t}")).collect();
        let mut text = format!("---\ntitle: Page {key}\ntags: [{}]\n---\n", tags.join(", "));
        for (i, words) in sections.iter().enumerate() {
            let words: Vec<&str> = words
                .iter()
                .map(|&w| WORDS[w as usize % WORDS.len()])
                .collect();
            text.push_str(&format!("\n## Part {i}\n\n{}.\n", words.join(" ")));
        }
        (path, text)
    }

    /// An index of `files`, analyzed in English whatever each part's pages (shards searched
    /// together must share their settings, the language included: see `wiki_choices`).
    fn build(files: &[&(String, String)], vectors: bool) -> Arc<Index> {
        let mut config = Config {
            language: Some(crate::Language::English),
            ..Config::default()
        };
        config.chunk.max_tokens = 16;
        config.chunk.overlap_tokens = 4;
        let mut b = IndexBuilder::new(config).unwrap();
        if vectors {
            b.embedder(Arc::new(Letters));
        }
        for (path, text) in files {
            b.add_file(path, text.as_bytes()).unwrap();
        }
        Arc::new(b.build().unwrap().0)
    }

    /// Each hit as its page id, its chunk's id and its score's bits.
    fn whole(index: &Index, ranked: &[crate::Ranked]) -> Vec<(String, String, u32)> {
        (ranked.iter())
            .map(|r| {
                (
                    index.pages()[r.page].id(),
                    index.chunk_id(r.chunk as u32),
                    r.score.to_bits(),
                )
            })
            .collect()
    }

    fn sharded(index: &ShardedIndex, ranked: &[ShardRanked]) -> Vec<(String, String, u32)> {
        (ranked.iter())
            .map(|r| {
                let shard = &index.shards()[r.shard];
                (
                    shard.pages()[r.page].id(),
                    shard.chunk_id(r.chunk as u32),
                    r.score.to_bits(),
                )
            })
            .collect()
    }

    fn page_spec() -> impl proptest::strategy::Strategy<Value = PageSpec> {
        (
            proptest::option::weighted(0.2, 0u8..2),
            0u8..40,
            proptest::collection::vec(0u8..3, 0..3),
            proptest::collection::vec(proptest::collection::vec(0u8..16, 1..30), 1..4),
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]

        /// A wiki dealt into shards ranks as one index of it: the same pages and chunks, in
        /// the same order, with the same scores to the bit, for words, typos, prefixes,
        /// phrases, filters, scopes, chunk hits and every lane.
        #[test]
        fn shards_rank_as_one_index(
            pages in proptest::collection::vec(page_spec(), 2..24),
            deal in proptest::collection::vec(0usize..4, 24),
            queries in proptest::collection::vec(
                (proptest::collection::vec(0usize..20, 1..4), 0u8..6, 0u8..6, 1usize..12, 0usize..1000),
                8,
            ),
        ) {
            let mut files: Vec<(String, String)> = pages.iter().map(file).collect();
            files.sort();
            files.dedup_by(|a, b| a.0 == b.0);
            let vectors = deal[23] % 2 == 0;
            let one = build(&files.iter().collect::<Vec<_>>(), vectors);
            let shards: Vec<Arc<Index>> = (0..4)
                .map(|s| files.iter().zip(&deal).filter(|(_, &d)| d == s).map(|(f, _)| f).collect::<Vec<_>>())
                .filter(|part| !part.is_empty())
                .map(|part| build(&part, vectors))
                .collect();
            let model: Option<Arc<dyn Embedder>> = vectors.then(|| Arc::new(Letters) as Arc<dyn Embedder>);
            let many = ShardedIndex::new(shards, model.clone()).unwrap();
            proptest::prop_assert_eq!(many.chunk_count(), one.chunk_count());
            // Misspelled and cut-short words beside the wiki's own.
            const ASKED: [&str; 4] = ["revenu", "chrun", "marg", "gamm"];
            let mut found = 0;
            for (words, form, opts_kind, limit, at) in &queries {
                let words: Vec<&str> = words
                    .iter()
                    .map(|&w| if w < WORDS.len() { WORDS[w] } else { ASKED[w - WORDS.len()] })
                    .collect();
                let query = match form {
                    0 => words.join(" "),
                    1 => format!("\"{}\"", words.join(" ")),
                    2 => format!("{} \"{}\"", words[0], words.join(" ")),
                    // Two words as a page has them, quoted, beside other words: the chunks
                    // holding the phrase rank first, above better scores.
                    3 | 4 => {
                        let (_, _, _, sections) = &pages[at % pages.len()];
                        let text = &sections[at % sections.len()];
                        let i = at % text.len();
                        let pair = [text[i], text[(i + 1) % text.len()]]
                            .map(|w| WORDS[w as usize % WORDS.len()]);
                        format!("{} \"{} {}\" {}", words.join(" "), pair[0], pair[1], words[0])
                    }
                    _ => words.join(" ").to_uppercase(),
                };
                let mut opts = SearchOptions { limit: Some(*limit), ..Default::default() };
                match opts_kind {
                    1 => opts.chunks = true,
                    2 => opts.tags = vec!["t1".into()],
                    3 => opts.scope = Some(crate::Scope::User("u0".into())),
                    4 => opts.typos = false,
                    5 => opts.lanes = Some(vec![Lane::Token, Lane::Semantic]),
                    _ => {}
                }
                let expected = whole(&one, &one.rank_with(&query, &opts, model.as_deref()).unwrap());
                let got = sharded(&many, &many.rank(&query, &opts).unwrap());
                found += usize::from(!expected.is_empty());
                proptest::prop_assert_eq!(got, expected, "query {:?}, options {:?}", query, opts_kind);
            }
            // Most queries find something (a test of empty answers would prove nothing).
            proptest::prop_assert!(found >= 2, "{} of {} queries found hits", found, queries.len());
        }
    }

    #[test]
    fn a_phrase_puts_its_chunks_first_across_shards() {
        let file = |key: &str, text: &str| (format!("global/{key}.md"), format!("{text}\n"));
        let holds = file(
            "holds",
            "alpha beta once, among other words: zeta delta cost month.",
        );
        let scores = file(
            "scores",
            "beta alpha gamma beta alpha gamma beta alpha gamma.",
        );
        let more = file("more", "gamma beta gamma alpha gamma beta.");
        let all = [&holds, &scores, &more];
        let one = build(&all, false);
        let many = ShardedIndex::new(
            vec![build(&[&holds], false), build(&[&scores, &more], false)],
            None,
        )
        .unwrap();
        let opts = SearchOptions::default();
        let ids = |q: &str| whole(&one, &one.rank(q, &opts).unwrap());
        // Without quotes the page holding the words in order is not first; quoted, it is.
        assert_ne!(ids("alpha beta gamma")[0].0, "holds");
        let quoted = "alpha beta gamma \"alpha beta\"";
        assert_eq!(ids(quoted)[0].0, "holds");
        assert_eq!(
            sharded(&many, &many.rank(quoted, &opts).unwrap()),
            ids(quoted)
        );
        for lanes in [vec![Lane::Lexical], vec![Lane::Token]] {
            let opts = SearchOptions {
                lanes: Some(lanes),
                chunks: true,
                ..Default::default()
            };
            let expected = whole(&one, &one.rank(quoted, &opts).unwrap());
            assert_eq!(expected[0].0, "holds");
            assert_eq!(sharded(&many, &many.rank(quoted, &opts).unwrap()), expected);
        }
    }

    #[test]
    fn a_page_is_found_in_its_shard() {
        let a = ("global/a.md".to_string(), "Revenue.".to_string());
        let b = ("user/ann/b.md".to_string(), "Churn.".to_string());
        let many = ShardedIndex::new(vec![build(&[&a], false), build(&[&b], false)], None).unwrap();
        assert_eq!(many.shard_of("a"), Some(0));
        assert_eq!(many.shard_of("user/ann/b"), Some(1));
        assert_eq!(many.shard_of("b"), None);
        let hit = many.rank("churn", &SearchOptions::default()).unwrap()[0];
        assert_eq!(many.shard_of(&many.page(&hit).id()), Some(hit.shard));
    }

    #[test]
    fn shards_must_agree_and_not_overlap() {
        let a = ("global/a.md".to_string(), "Revenue.".to_string());
        let b = ("global/b.md".to_string(), "Churn.".to_string());
        let code = |r: Result<ShardedIndex>| r.unwrap_err().code();
        assert_eq!(
            code(ShardedIndex::new(Vec::new(), None)),
            "invalid_argument"
        );
        let twice = vec![build(&[&a], false), build(&[&a, &b], false)];
        let err = ShardedIndex::new(twice, None).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        assert!(
            err.to_string()
                .contains("page a is in shard 0 and in shard 1"),
            "{err}"
        );
        let mixed = vec![build(&[&a], true), build(&[&b], false)];
        assert_eq!(code(ShardedIndex::new(mixed, None)), "invalid_argument");
        let mut other = IndexBuilder::new(Config::default()).unwrap();
        other.add_file(&b.0, b.1.as_bytes()).unwrap();
        let settings = vec![build(&[&a], false), Arc::new(other.build().unwrap().0)];
        assert_eq!(code(ShardedIndex::new(settings, None)), "invalid_argument");
    }
}
