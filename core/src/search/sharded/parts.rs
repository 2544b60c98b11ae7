//! The two sides of a sharded search, for shards held apart from the caller (by Ray actors on
//! other machines, say): a [`ShardSearcher`] beside each shard's index answers requests, and
//! one [`Coordinator`] holds the wiki's dictionary, analyzes each query, asks every shard for
//! its best candidates in each lane and fuses them. The coordinator holds no page and no
//! posting: its memory is the wiki's dictionary.
//!
//! They talk in [`ShardRequest`]s and [`ShardReply`]s, which cross as bytes
//! ([`ShardRequest::to_bytes`], [`ShardReply::from_bytes`]) over whatever carries them; each
//! round sends one request to every shard and waits for every reply ([`Ask`]). Setting up
//! takes one round to give each shard the wiki's statistics (two with a model: the semantic
//! floor's probes go to every shard), given again to a shard started since (it answers
//! [`ShardReply::Unprepared`]; a shard whose pages or words changed refuses them); a query
//! takes one round (two when it is scoped to a
//! user, whose pages in one shard hide global pages in another), and so does a batch of
//! queries ([`Coordinator::rank_many`]), which each shard answers on its cores; a search with
//! its records ([`Coordinator::search`]) takes one round more, for the records. A
//! [`crate::ShardedIndex`] is
//! the two sides in one process, so its rankings, equal to one index's, are theirs.
//!
//! ```
//! # use std::sync::Arc;
//! # use wikidex::{IndexBuilder, SearchOptions};
//! use wikidex::{over_bytes, Coordinator, ShardSearcher};
//! let build = |path: &str, text: &str| {
//!     let mut b = IndexBuilder::new(Default::default())?;
//!     b.add_file(path, text.as_bytes())?;
//!     Ok::<_, wikidex::Error>(Arc::new(b.build()?.0))
//! };
//! // Each shard's searcher where its index is (another machine); bytes in, bytes out.
//! let shards = [
//!     ShardSearcher::new(build("global/revenue.md", "Revenue is recognized monthly.")?),
//!     ShardSearcher::new(build("global/churn.md", "Churn lowers monthly revenue.")?),
//! ];
//! let mut ask = over_bytes(|requests: Vec<Vec<u8>>| {
//!     Ok(shards.iter().zip(requests).map(|(s, r)| s.reply_bytes(&r)).collect())
//! });
//! let summaries = shards.iter().map(ShardSearcher::summary).collect();
//! let wiki = Coordinator::new(summaries, None, &mut ask)?;
//! let hits = wiki.rank("monthly revenue", &SearchOptions::default(), &mut ask)?;
//! assert_eq!(hits.len(), 2);
//! assert_eq!(hits[0].page_id, "revenue");
//! # Ok::<(), wikidex::Error>(())
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

use super::super::filter::sorted_counts;
use super::super::hits::{explained_chunk, lane_hits, HitContext};
use super::super::{
    chunk_id_order, fuse_pages, held_first, lexical_terms, run_lanes, weigh_known, AlwaysMode,
    Analyzed, Facets, Hit, LaneReport, PhraseReport, Quoted, SearchOptions, SearchResults, View,
};
use super::super::{DEFAULT_LIMIT, MAX_CANDIDATES, MAX_LIMIT};
use crate::blob::IndexData;
use crate::data::config::Config;
use crate::data::error::{Error, Result};
use crate::data::offset::OffsetUnit;
use crate::data::parallel;
use crate::embed::Embedder;
use crate::index::vectors::{floor_of, floor_probe_vectors};
use crate::index::Index;
use crate::lane::fusion::{self, Fused};
use crate::lane::lexical::{self, Bm25Scorer};
use crate::lane::phrase::NO_POSITIONS;
use crate::lane::semantic::{self, VectorSection};
use crate::lane::typo::Expansion;
use crate::lane::{evidence, token, Lane, LaneStatus};
use crate::postings::{LexicalIndex, Words};
use crate::text::analyze::QueryTerm;
use crate::text::page::{id_of, Scope};

/// What a shard tells the coordinator once ([`ShardSearcher::summary`]): the wikidex version,
/// its settings, its vectors' model (without the vectors), its dictionary (terms with their
/// document frequencies, surface words, chunk count, number of terms) and its pages' scopes
/// and keys. About the size of the shard's dictionary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardSummary {
    version: String,
    config: Config,
    vectors: Option<VectorSection>,
    words: Words,
    pages: Vec<(Scope, String)>,
}

/// What the coordinator asks a shard ([`ShardSearcher::reply`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ShardRequest {
    /// Score BM25 with the wiki's statistics: its chunk count, its number of terms over all
    /// chunks, and the wiki's document frequency of each of this shard's terms (in its
    /// dictionary's order). Answered [`ShardReply::Prepared`]; asked before the first query,
    /// and again of a shard that answers [`ShardReply::Unprepared`] (one started again).
    Prepare {
        /// [`ShardSummary::digest`] of the summary the coordinator was made with: a shard
        /// whose own differs (its pages or words changed) refuses.
        summary: String,
        /// Chunks in the wiki.
        chunks: u64,
        /// Terms over all the wiki's chunks.
        length: u64,
        /// Per term of this shard: the wiki's document frequency.
        dfs: Vec<u32>,
    },
    /// The best score of any of this shard's vectors for each of these unit query vectors
    /// (the semantic floor's probes). Answered [`ShardReply::Best`].
    Probe {
        /// The probes.
        vectors: Vec<Vec<f32>>,
    },
    /// The keys of this shard's pages of the user `options` scopes the search to that hide
    /// the global pages of the same keys. Answered [`ShardReply::Shadowed`].
    Shadowed {
        /// The search's options.
        options: SearchOptions,
    },
    /// The records of a search's hits this shard holds, its `always` pages and its facet
    /// counts. Answered [`ShardReply::Hits`].
    Hits(HitsAsk),
    /// Queries with one set of options: each one's candidates in each lane, answered on the
    /// shard's cores. Answered [`ShardReply::Answers`], in the queries' order.
    Queries {
        /// The filters (the query vector left out: it is each query's `semantic`).
        options: SearchOptions,
        /// Keys of user pages in other shards that hide global pages in this one.
        shadowed: Vec<String>,
        /// How many candidates each lane keeps.
        candidates: usize,
        /// The queries.
        queries: Vec<ShardQuery>,
    },
}

/// One query as every shard runs it: what each lane scores, analyzed against the wiki's
/// dictionary.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardQuery {
    /// Per quoted phrase: its terms with their offsets.
    phrases: Vec<Vec<(String, u32)>>,
    /// The lexical lane's terms with their weights, if it runs.
    lexical: Option<Vec<(String, f32)>>,
    /// The token lane's credits per query term, if it runs.
    token: Option<Vec<Vec<(String, f32)>>>,
    /// The semantic lane's query vector, if it runs.
    semantic: Option<Vec<f32>>,
}

/// A shard's reply to a [`ShardRequest`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ShardReply {
    /// Statistics taken.
    Prepared,
    /// Per probe: the best score of the shard's vectors (`None`: the shard has none).
    Best {
        /// The scores.
        scores: Vec<Option<f32>>,
    },
    /// The keys of the shard's user pages that hide global ones.
    Shadowed {
        /// The keys.
        keys: Vec<String>,
    },
    /// Each query's candidates, in the order asked.
    Answers(Vec<ShardAnswer>),
    /// The records a [`ShardRequest::Hits`] asked for.
    Hits(ShardHits),
    /// Queries asked of a shard that has not been given the wiki's statistics (a shard
    /// started again since the coordinator prepared it): the coordinator prepares it again
    /// and asks once more.
    Unprepared,
    /// The request failed, with the error's code and message.
    Failed {
        /// [`Error::code`].
        code: String,
        /// The error's message.
        message: String,
    },
}

/// A shard's candidates for one query: per lane (lexical, token, semantic; empty for a lane
/// the query does not run), its best chunks, each with what orders it among every shard's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardAnswer {
    pages: Vec<AnswerPage>,
    lanes: [Vec<Candidate>; 3],
}

/// A page of a [`ShardAnswer`]'s candidates.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AnswerPage {
    /// Its position in the shard's pages.
    page: u32,
    scope: Scope,
    key: String,
    /// Its first chunk in the shard's chunk table.
    first: u32,
}

/// One chunk a lane of a shard ranks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Candidate {
    /// In the shard's chunk table.
    chunk: u32,
    /// Its page, in the answer's `pages`.
    page: u32,
    score: f32,
    /// Its place among equal scores (the token lane's), larger first.
    tie: u64,
    /// Holds every quoted phrase.
    held: bool,
    /// Its number in its page (the chunk id's).
    number: u32,
}

/// What a shard makes a search's records from ([`ShardRequest::Hits`]): the query as the
/// wiki's dictionary analyzed it, and the ranked hits the shard holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HitsAsk {
    /// The search's options (its filters, snippets, explanations, facets and `always` mode;
    /// the query vector left out).
    options: SearchOptions,
    /// What the records' offsets count.
    unit: OffsetUnit,
    /// Keys of user pages in other shards that hide global pages in this one.
    shadowed: Vec<String>,
    /// The query's terms: the term, its word, its count in the query, and whether the wiki's
    /// dictionary holds it (which decides the prefixes a snippet matches).
    terms: Vec<(String, String, u32, bool)>,
    /// What typo tolerance took the query's terms for: the query term, the term, the edits,
    /// a prefix match.
    typos: Vec<(u32, String, u8, bool)>,
    /// With facets: the terms whose chunks' pages are counted (those the token lane credits).
    facet_terms: Option<Vec<String>>,
    /// The ranked hits this shard holds, best first: each one's chunk, and the chunk its
    /// explanation reads (the lexical lane's of its page).
    hits: Vec<(u32, u32)>,
}

/// A shard's records of a search ([`ShardReply::Hits`]): its ranked hits in the order asked
/// (their score and lanes left for the coordinator, which fused them), its `always` pages the
/// search's filters keep in page order, and its facet counts when asked for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardHits {
    hits: Vec<Hit>,
    always: Vec<Hit>,
    facets: Option<ShardFacets>,
}

/// A shard's facet counts: the pages its search matched, and per facet value (folded to lower
/// case) as the first of its pages with the value writes it, how many of its pages have it,
/// and that page.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ShardFacets {
    pages: usize,
    tags: Vec<FacetValue>,
    types: Vec<FacetValue>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FacetValue {
    folded: String,
    value: String,
    count: usize,
    /// The first page with it: its scope and key.
    first: (Scope, String),
}

macro_rules! bytes {
    ($($t:ty, $what:literal;)*) => {$(
        impl $t {
            /// The message as bytes (postcard, as the blob's sections: a reply is about a
            /// fifth of its JSON's size), for whatever carries it to the other side.
            pub fn to_bytes(&self) -> Vec<u8> {
                postcard::to_allocvec(self).expect("a shard message serializes")
            }

            /// The message from [`to_bytes`](Self::to_bytes)'s bytes (of the same wikidex
            /// version: the coordinator checks each shard's).
            ///
            /// # Errors
            /// `invalid_argument` for bytes that are not such a message.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
                postcard::from_bytes(bytes).map_err(|e| {
                    Error::invalid_argument(format!(concat!("not ", $what, ": {}"), e))
                })
            }
        }
    )*};
}

bytes! {
    ShardSummary, "a shard summary";
    ShardRequest, "a shard request";
    ShardReply, "a shard reply";
}

impl ShardSummary {
    /// Pages in the shard.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The BLAKE3 hash of its bytes, in hex: the same for the summaries of two searchers of
    /// one index, whatever made them.
    pub fn digest(&self) -> String {
        blake3::hash(&self.to_bytes()).to_hex().to_string()
    }
}

/// A shard's side of a sharded search: its index, and the wiki's BM25 statistics once a
/// coordinator has given them (a later [`ShardRequest::Prepare`] replaces them: a coordinator
/// made again over the same shards prepares them again).
pub struct ShardSearcher {
    index: Arc<Index>,
    scorer: RwLock<Option<Arc<Bm25Scorer>>>,
}

impl std::fmt::Debug for ShardSearcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardSearcher")
            .field("pages", &self.index.pages().len())
            .field("prepared", &self.scorer().is_some())
            .finish_non_exhaustive()
    }
}

impl ShardSearcher {
    /// The searcher of one shard's index.
    pub fn new(index: Arc<Index>) -> ShardSearcher {
        ShardSearcher {
            index,
            scorer: RwLock::new(None),
        }
    }

    fn scorer(&self) -> Option<Arc<Bm25Scorer>> {
        let scorer = self.scorer.read().unwrap_or_else(|e| e.into_inner());
        scorer.as_ref().map(Arc::clone)
    }

    /// The shard's index.
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// What the coordinator needs of this shard ([`Coordinator::new`]).
    pub fn summary(&self) -> ShardSummary {
        let data = &self.index.data;
        ShardSummary {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            config: data.config.clone(),
            vectors: data.vectors.as_ref().map(VectorSection::without_rows),
            words: data.lexical.words(),
            pages: (self.index.pages().iter())
                .map(|p| (p.scope.clone(), p.key.clone()))
                .collect(),
        }
    }

    /// The reply to `request`; a request that fails is [`ShardReply::Failed`].
    pub fn reply(&self, request: &ShardRequest) -> ShardReply {
        self.replied(request)
            .unwrap_or_else(|e| ShardReply::Failed {
                code: e.code().to_owned(),
                message: e.to_string(),
            })
    }

    /// [`ShardSearcher::reply`] from and to bytes; bytes that are not a request are
    /// [`ShardReply::Failed`].
    pub fn reply_bytes(&self, request: &[u8]) -> Vec<u8> {
        let reply = match ShardRequest::from_bytes(request) {
            Ok(request) => self.reply(&request),
            Err(e) => ShardReply::Failed {
                code: e.code().to_owned(),
                message: e.to_string(),
            },
        };
        reply.to_bytes()
    }

    fn replied(&self, request: &ShardRequest) -> Result<ShardReply> {
        let index = &*self.index;
        Ok(match request {
            ShardRequest::Prepare {
                summary,
                chunks,
                length,
                dfs,
            } => {
                if *summary != self.summary().digest() {
                    return Err(Error::invalid_argument(
                        "this shard is not the one the coordinator was made over (its pages or \
                         words changed)",
                    ));
                }
                let lexical = &index.data.lexical;
                if dfs.len() != lexical.term_count() {
                    return Err(Error::invalid_argument(format!(
                        "{} document frequencies for a shard of {} terms",
                        dfs.len(),
                        lexical.term_count()
                    )));
                }
                let chunks = usize::try_from(*chunks)
                    .map_err(|_| Error::invalid_argument("too many chunks"))?;
                let scorer = Bm25Scorer::for_shard(
                    lexical,
                    index.data.config.bm25,
                    (chunks, *length),
                    dfs.clone(),
                );
                *self.scorer.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(scorer));
                ShardReply::Prepared
            }
            ShardRequest::Probe { vectors } => ShardReply::Best {
                scores: (vectors.iter())
                    .map(|q| {
                        let section = index.data.vectors.as_ref()?;
                        if q.len() != section.dim as usize {
                            return None;
                        }
                        section.best_score(q)
                    })
                    .collect(),
            },
            ShardRequest::Shadowed { options } => ShardReply::Shadowed {
                keys: (index.shadowed(options).into_iter())
                    .map(str::to_owned)
                    .collect(),
            },
            ShardRequest::Hits(ask) => {
                let Some(scorer) = self.scorer() else {
                    return Ok(ShardReply::Unprepared);
                };
                ask.options.validate()?;
                ShardReply::Hits(self.hits(&scorer, ask)?)
            }
            ShardRequest::Queries {
                options,
                shadowed,
                candidates,
                queries,
            } => {
                let Some(scorer) = self.scorer() else {
                    return Ok(ShardReply::Unprepared);
                };
                options.validate()?;
                if *candidates > MAX_CANDIDATES {
                    return Err(Error::invalid_argument(format!(
                        "at most {MAX_CANDIDATES} candidates a lane"
                    )));
                }
                let shadowed: HashSet<&str> = shadowed.iter().map(String::as_str).collect();
                let threads = parallel::cores();
                let answers = parallel::map(queries, threads, |q| {
                    self.answer(&scorer, options, &shadowed, *candidates, q)
                });
                ShardReply::Answers(answers.into_iter().collect::<Result<_>>()?)
            }
        })
    }

    /// This shard's candidates for `q` in each lane it runs, as [`Index`] ranks them within one
    /// index: the chunks holding every phrase first, then by score (and the token lane's
    /// ties).
    fn answer(
        &self,
        scorer: &Bm25Scorer,
        options: &SearchOptions,
        shadowed: &HashSet<&str>,
        n: usize,
        q: &ShardQuery,
    ) -> Result<ShardAnswer> {
        let index = &*self.index;
        let quoted: Quoted<'_> = (q.phrases.iter())
            .map(|terms| {
                let terms = (terms.iter())
                    .map(|(t, o)| (Cow::Borrowed(t.as_str()), *o))
                    .collect();
                ("", terms)
            })
            .collect();
        let v = index.view(options, Some(shadowed), &quoted);
        let lexical = &index.data.lexical;
        let local = |terms: &[(String, f32)]| -> Vec<(usize, f32)> {
            (terms.iter())
                .filter_map(|(t, w)| Some((lexical.lookup(t)?, *w)))
                .collect()
        };
        let ranked = |rank: &(dyn Fn(Option<&[bool]>) -> Vec<Tied> + Sync)| {
            let Ok(list) =
                held_first::<_, std::convert::Infallible>(v.first(), v.groups, n, |first| {
                    Ok(rank(first))
                });
            list
        };
        let lexical_lane = || {
            let terms = local(q.lexical.as_deref().unwrap_or_default());
            ranked(&|first| {
                untied(scorer.search(lexical, &terms, first.or(v.filter()), v.paged(), n))
            })
        };
        let token_lane = || {
            let credits: token::Credits =
                (q.token.iter().flatten()).map(|unit| local(unit)).collect();
            ranked(&|first| {
                token::search_tied(lexical, &credits, first.unwrap_or(&v.mask), v.paged(), n)
            })
        };
        let mut lanes: [Vec<Tied>; 3] = Default::default();
        match (q.lexical.is_some(), q.token.is_some()) {
            (true, true) => {
                // As one index runs them: apart from as many chunks on.
                let apart = crate::search::lanes_apart(index.chunk_count());
                (lanes[0], lanes[1]) = parallel::beside(apart, lexical_lane, token_lane);
            }
            (true, false) => lanes[0] = lexical_lane(),
            (false, true) => lanes[1] = token_lane(),
            (false, false) => {}
        }
        if let (Some(vector), Some(section)) = (&q.semantic, &index.data.vectors) {
            if vector.len() != section.dim as usize {
                return Err(Error::invalid_argument(format!(
                    "a query vector of {} values for vectors of {}",
                    vector.len(),
                    section.dim
                )));
            }
            let codes = index.vector_codes(section);
            lanes[2] = ranked(&|first| {
                untied(section.search(vector, first.or(v.filter()), v.paged(), n, codes))
            });
        }
        Ok(self.candidates(&v, lanes))
    }

    /// The records `ask` asks for, made as one index makes them: the hits' fields and
    /// snippets from this shard's pages, their explanations with the wiki's statistics.
    fn hits(&self, scorer: &Bm25Scorer, ask: &HitsAsk) -> Result<ShardHits> {
        let index = &*self.index;
        let lexical = &index.data.lexical;
        let qterms: Vec<QueryTerm<'_>> = (ask.terms.iter())
            .map(|(term, word, count, _)| QueryTerm {
                term: Cow::Borrowed(term),
                word: Cow::Borrowed(word),
                count: *count,
            })
            .collect();
        let known: Vec<bool> = ask.terms.iter().map(|t| t.3).collect();
        let mut typos = Vec::with_capacity(ask.typos.len());
        for (query, term, edits, prefix) in &ask.typos {
            if *query as usize >= qterms.len() {
                return Err(Error::invalid_argument(format!(
                    "a typo match of query term {query} of {}",
                    qterms.len()
                )));
            }
            // A term this shard lacks is in none of its chunks: nothing to match or explain.
            if let Some(t) = lexical.lookup(term) {
                typos.push(Expansion {
                    query: *query as usize,
                    term: t,
                    edits: *edits,
                    prefix: *prefix,
                });
            }
        }
        let chunks = index.chunk_page.len();
        if let Some(&(c, e)) =
            (ask.hits.iter()).find(|(c, e)| *c as usize >= chunks || *e as usize >= chunks)
        {
            return Err(Error::invalid_argument(format!(
                "chunk {} of a shard of {chunks} chunks",
                c.max(e)
            )));
        }
        let shadowed: HashSet<&str> = ask.shadowed.iter().map(String::as_str).collect();
        let v = index.view(&ask.options, Some(&shadowed), &Vec::new());
        let match_terms = std::sync::OnceLock::new();
        let ctx = HitContext {
            index,
            scorer,
            known: Some(&known),
            unit: ask.unit,
            qterms,
            typos: &typos,
            reports: &[],
            snippets: ask.options.snippets,
            explain: ask.options.explain,
            positions: index.data.positions.as_ref(),
            match_terms: &match_terms,
            matcher: Default::default(),
        };
        let hits = (ask.hits.iter())
            .map(|&(c, explained)| ctx.ranked_hit(c, 0.0, Vec::new(), explained))
            .collect();
        let always = (index.unfiltered().always.iter())
            .filter(|&&p| v.page_ok[p])
            .map(|&p| ctx.always_hit(p))
            .collect();
        let facets = ask.facet_terms.as_ref().map(|terms| {
            let terms = terms.iter().filter_map(|t| lexical.lookup(t));
            let tally = index.facet_tally(&token::chunks_holding(lexical, terms, &v.mask));
            let values = |counts: std::collections::HashMap<String, (String, usize, u32)>| {
                (counts.into_iter())
                    .map(|(folded, (value, count, p))| {
                        let page = &index.pages()[p as usize];
                        FacetValue {
                            folded,
                            value,
                            count,
                            first: (page.scope.clone(), page.key.clone()),
                        }
                    })
                    .collect()
            };
            ShardFacets {
                pages: tally.pages,
                tags: values(tally.tags),
                types: values(tally.types),
            }
        });
        Ok(ShardHits {
            hits,
            always,
            facets,
        })
    }

    /// The lanes' ranked chunks as an answer's candidates, with their pages.
    fn candidates(&self, v: &View<'_>, lanes: [Vec<Tied>; 3]) -> ShardAnswer {
        let index = &*self.index;
        let mut pages: Vec<AnswerPage> = Vec::new();
        let mut at: rustc_hash::FxHashMap<u32, u32> = Default::default();
        let lanes = lanes.map(|ranked| {
            (ranked.into_iter())
                .map(|(chunk, score, tie)| {
                    let page = index.chunk_page[chunk as usize];
                    let slot = *at.entry(page).or_insert_with(|| {
                        let p = &index.pages()[page as usize];
                        pages.push(AnswerPage {
                            page,
                            scope: p.scope.clone(),
                            key: p.key.clone(),
                            first: index.first_chunk[page as usize],
                        });
                        pages.len() as u32 - 1
                    });
                    Candidate {
                        chunk,
                        page: slot,
                        score,
                        tie,
                        held: v.holds(chunk),
                        number: index.chunk_number(chunk),
                    }
                })
                .collect()
        });
        ShardAnswer { pages, lanes }
    }
}

/// A lane's ranked chunk: the chunk, its score, its place among equal scores (larger first).
type Tied = (u32, f32, u64);

/// A lane's candidates without a place among equal scores: their chunk order alone breaks ties.
fn untied(ranked: Vec<(u32, f32)>) -> Vec<Tied> {
    ranked.into_iter().map(|(c, s)| (c, s, 0)).collect()
}

/// One round of a sharded search: `requests[s]` goes to shard `s`, and the replies come back
/// in shard order. An error stops the setup or the query that asked.
pub type Ask<'a> = dyn FnMut(&[ShardRequest]) -> Result<Vec<ShardReply>> + 'a;

/// An [`Ask`] over `f`, which carries each shard's request as bytes and returns each shard's
/// reply as bytes ([`ShardSearcher::reply_bytes`] on the other side).
pub fn over_bytes<'a>(
    mut f: impl FnMut(Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> + 'a,
) -> impl FnMut(&[ShardRequest]) -> Result<Vec<ShardReply>> + 'a {
    move |requests: &[ShardRequest]| {
        let sent = requests.iter().map(ShardRequest::to_bytes).collect();
        f(sent)?
            .iter()
            .map(|bytes| ShardReply::from_bytes(bytes))
            .collect()
    }
}

/// One ranked hit of a sharded search: which shard holds it, where, its fused score and its
/// page's id.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardRanked {
    /// The shard (its position in the shards [`crate::ShardedIndex::new`] or the summaries
    /// [`Coordinator::new`] took).
    pub shard: usize,
    /// Position of the page in that shard's [`Index::pages`].
    pub page: usize,
    /// Position of the best chunk in that shard's chunk table.
    pub chunk: usize,
    /// Fused score.
    pub score: f32,
    /// The page's id ([`crate::Page::id`]).
    pub page_id: String,
}

/// The coordinator of a sharded search: the wiki's dictionary and semantic floor, and the
/// model that embeds queries (see the module docs).
pub struct Coordinator {
    /// The wiki's dictionary, as an index without pages the query analysis reads
    /// ([`LexicalIndex::union`]), with the vectors' model and the wiki's floor.
    wiki: Index,
    shards: usize,
    pages: usize,
    model: Option<Arc<dyn Embedder>>,
    /// Per shard: the request that gives it the wiki's statistics, kept to give them again to
    /// a shard started again.
    prepare: Vec<ShardRequest>,
}

impl std::fmt::Debug for Coordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinator")
            .field("shards", &self.shards)
            .field("pages", &self.pages)
            .field("chunks", &self.chunk_count())
            .finish_non_exhaustive()
    }
}

impl Coordinator {
    /// The coordinator of the shards `summaries` describe, in that order: it checks that
    /// they are parts of one wiki, and asks each (`ask`) to take the wiki's statistics; with
    /// `model` (the one their vectors were made with, which embeds text queries), it measures
    /// the semantic floor over every shard's vectors (without, the highest of the shards'
    /// floors).
    ///
    /// # Errors
    /// `invalid_argument` for no shards, a shard of another wikidex version, shards built with
    /// different settings or whose vectors come from different models (or some without
    /// vectors), the same page in two shards, a dictionary that does not hold together, or a
    /// reply that failed or is not the one asked for; what `ask` returns; what `model`
    /// returns when it fails to embed the floor's probes.
    pub fn new(
        summaries: Vec<ShardSummary>,
        model: Option<Arc<dyn Embedder>>,
        ask: &mut Ask<'_>,
    ) -> Result<Coordinator> {
        let Some(first) = summaries.first() else {
            return Err(Error::invalid_argument(
                "a sharded index needs at least one shard",
            ));
        };
        let model_of =
            |s: &ShardSummary| (s.vectors.as_ref()).map(|v| (v.fingerprint.clone(), v.dim));
        for (s, summary) in summaries.iter().enumerate() {
            if summary.version != env!("CARGO_PKG_VERSION") {
                return Err(Error::invalid_argument(format!(
                    "shard {s} runs wikidex {}, this coordinator {}",
                    summary.version,
                    env!("CARGO_PKG_VERSION")
                )));
            }
            if summary.config != first.config {
                return Err(Error::invalid_argument(format!(
                    "shard {s} was built with other settings than shard 0"
                )));
            }
            if model_of(summary) != model_of(first) {
                return Err(Error::invalid_argument(format!(
                    "shard {s}'s vectors are not from shard 0's model (or one has none)"
                )));
            }
        }
        let pages = distinct_pages(&summaries)?;
        let words: Vec<&Words> = summaries.iter().map(|s| &s.words).collect();
        let (lexical, length, dfs) = LexicalIndex::union(&words)?;
        let chunks = lexical.chunk_count() as u64;
        let prepare: Vec<ShardRequest> = (summaries.iter().zip(dfs))
            .map(|(summary, dfs)| ShardRequest::Prepare {
                summary: summary.digest(),
                chunks,
                length,
                dfs,
            })
            .collect();
        for (s, reply) in replies(ask, &prepare, summaries.len())? {
            if !matches!(reply, ShardReply::Prepared) {
                return Err(unexpected(s));
            }
        }
        let vectors = match (&first.vectors, model.as_deref()) {
            (None, _) => None,
            (Some(section), Some(model)) => {
                let probes = floor_probe_vectors(section, model)?;
                let request = ShardRequest::Probe {
                    vectors: probes.clone(),
                };
                let mut best: Vec<Option<f32>> = vec![None; probes.len()];
                for (s, reply) in replies(ask, &vec![request; summaries.len()], summaries.len())? {
                    let ShardReply::Best { scores } = reply else {
                        return Err(unexpected(s));
                    };
                    if scores.len() != best.len() {
                        return Err(unexpected(s));
                    }
                    for (b, x) in best.iter_mut().zip(scores) {
                        *b = match (*b, x) {
                            (Some(b), Some(x)) => Some(b.max(x)),
                            (b, x) => b.or(x),
                        };
                    }
                }
                let best: Vec<f32> = best.into_iter().flatten().collect();
                Some(section.clone().with_floor(floor_of(&best)))
            }
            (Some(section), None) => {
                let floor = (summaries.iter())
                    .filter_map(|s| s.vectors.as_ref().map(|v| v.floor))
                    .fold(0.0, f32::max);
                Some(section.clone().with_floor(floor))
            }
        };
        let wiki = Index::from_data(IndexData {
            config: first.config.clone(),
            languages: Default::default(),
            pages: Vec::new(),
            chunks: Vec::new(),
            lexical,
            vectors,
            graph: Default::default(),
            raw: Default::default(),
            chunk_numbers: Vec::new(),
            page_modified: Vec::new(),
            positions: None,
        });
        Ok(Coordinator {
            wiki,
            shards: summaries.len(),
            pages,
            model,
            prepare,
        })
    }

    /// Number of shards.
    pub fn shard_count(&self) -> usize {
        self.shards
    }

    /// Number of pages over every shard.
    pub fn page_count(&self) -> usize {
        self.pages
    }

    /// Number of chunks over every shard.
    pub fn chunk_count(&self) -> usize {
        self.wiki.data.lexical.chunk_count()
    }

    /// Ranks the wiki's chunks as [`Index::rank`] ranks those of one index of all the shards'
    /// pages: the same pages and chunks in the same order with the same scores. `ask` carries
    /// the query to every shard (one round; two for a search scoped to a user).
    ///
    /// # Errors
    /// As [`Index::rank`]; `invalid_argument` for a reply that failed or is not the one asked
    /// for; what `ask` returns.
    pub fn rank(
        &self,
        query: &str,
        opts: &SearchOptions,
        ask: &mut Ask<'_>,
    ) -> Result<Vec<ShardRanked>> {
        let mut ranked = self.rank_many(&[query], opts, ask)?;
        Ok(ranked.pop().unwrap_or_default())
    }

    /// [`Coordinator::rank`] for many queries with one set of options, answers in query order:
    /// one round for all of them (two for a search scoped to a user), each shard answering
    /// them on its cores. A caller bounds a round's messages by the queries it gives at once
    /// (each shard's reply holds about `3 × limit` candidates a lane and a query).
    ///
    /// # Errors
    /// As [`Coordinator::rank`]: the first query's error that fails, else the round's.
    pub fn rank_many<Q: AsRef<str>>(
        &self,
        queries: &[Q],
        opts: &SearchOptions,
        ask: &mut Ask<'_>,
    ) -> Result<Vec<Vec<ShardRanked>>> {
        opts.validate()?;
        let (limit, candidates) = limits(opts);
        let mut plans = (queries.iter())
            .map(|q| self.plan(q.as_ref(), opts))
            .collect::<Result<Vec<Plan<'_>>>>()?;
        let shadowed = if plans.iter().any(|p| p.query.is_some()) {
            self.shadowed(opts, ask)?
        } else {
            Vec::new()
        };
        let tables = self.tables(&mut plans, opts, &shadowed, candidates, ask)?;
        (plans.iter().zip(tables))
            .map(|(plan, mut table)| {
                let (fused, _) = self.fused(plan, &mut table, opts, limit, candidates)?;
                Ok(fused.iter().map(|f| table.ranked(f)).collect())
            })
            .collect()
    }

    /// Searches the wiki as [`Index::search`] searches one index of all the shards' pages:
    /// the same results, record for record (the `always` pages, facets, snippets and
    /// explanations too), with offsets in `unit`. `ask` carries two rounds (three for a search
    /// scoped to a user): the query, then the records of the hits each shard holds.
    ///
    /// # Errors
    /// As [`Coordinator::rank`].
    pub fn search(
        &self,
        query: &str,
        opts: &SearchOptions,
        unit: OffsetUnit,
        ask: &mut Ask<'_>,
    ) -> Result<SearchResults> {
        opts.validate()?;
        let (limit, candidates) = limits(opts);
        let mut plans = vec![self.plan(query, opts)?];
        let shadowed = self.shadowed(opts, ask)?;
        let mut table = (self.tables(&mut plans, opts, &shadowed, candidates, ask)?)
            .pop()
            .unwrap_or_default();
        let plan = &plans[0];
        let (fused, reports) = self.fused(plan, &mut table, opts, limit, candidates)?;
        let a = &plan.analyzed;
        let wiki = &self.wiki.data.lexical;
        let facet_terms = opts.facets.then(|| {
            (token::credited_terms(wiki, &a.qterms, &a.typos).into_iter())
                .map(|t| wiki.term(t).to_owned())
                .collect()
        });
        let base = HitsAsk {
            options: SearchOptions {
                query_vector: None,
                ..opts.clone()
            },
            unit,
            shadowed,
            terms: (a.qterms.iter())
                .map(|q| {
                    let known = wiki.lookup(&q.term).is_some();
                    (q.term.to_string(), q.word.to_string(), q.count, known)
                })
                .collect(),
            typos: (a.typos.iter())
                .map(|e| {
                    (
                        e.query as u32,
                        wiki.term(e.term).to_owned(),
                        e.edits,
                        e.prefix,
                    )
                })
                .collect(),
            facet_terms,
            hits: Vec::new(),
        };
        let mut asks = vec![base; self.shards];
        for f in &fused {
            let slot = &table.slots[f.chunk as usize];
            let explained = &table.slots[explained_chunk(f) as usize];
            if explained.shard != slot.shard {
                return Err(unexpected(slot.shard as usize));
            }
            asks[slot.shard as usize]
                .hits
                .push((slot.chunk, explained.chunk));
        }
        let asked: Vec<usize> = asks.iter().map(|a| a.hits.len()).collect();
        let requests: Vec<ShardRequest> = asks.into_iter().map(ShardRequest::Hits).collect();
        let mut shards = Vec::with_capacity(self.shards);
        for (s, reply) in self.round(ask, &requests)? {
            match reply {
                ShardReply::Hits(hits)
                    if hits.hits.len() == asked[s] && hits.facets.is_some() == opts.facets =>
                {
                    shards.push(hits);
                }
                _ => return Err(unexpected(s)),
            }
        }
        let k = self.wiki.data.config.fusion.k;
        let lanes = |f| lane_hits(&reports, k, f, |c| table.chunk_id(c));
        let mut made: Vec<std::vec::IntoIter<Hit>> = (shards.iter_mut())
            .map(|s| std::mem::take(&mut s.hits).into_iter())
            .collect();
        let mut ranked = Vec::with_capacity(fused.len());
        for f in &fused {
            let s = table.slots[f.chunk as usize].shard as usize;
            let mut hit = made[s].next().ok_or_else(|| unexpected(s))?;
            hit.score = f.score;
            hit.lanes = lanes(Some(f));
            if let Some(e) = &mut hit.explain {
                for t in &mut e.lexical {
                    // The wiki's document frequency, which a shard lacking the term cannot give.
                    let term = t.matched.as_deref().unwrap_or(&t.term);
                    let df = wiki.lookup(term).map_or(0, |at| wiki.df(at));
                    t.df = u32::try_from(df).unwrap_or(u32::MAX);
                    t.idf = if df == 0 { 0.0 } else { lexical::idf(wiki, df) };
                }
            }
            ranked.push(hit);
        }
        let mut always: Vec<Hit> = (shards.iter_mut())
            .flat_map(|s| std::mem::take(&mut s.always))
            .map(|mut hit| {
                hit.lanes = lanes(None);
                hit
            })
            .collect();
        crate::data::sort::sort_by(&mut always, |a, b| {
            (&a.scope, &a.key).cmp(&(&b.scope, &b.key))
        });
        let facets = opts.facets.then(|| merged_facets(&shards));
        let phrases = (!a.quoted.is_empty()).then(|| PhraseReport {
            phrases: a.quoted.iter().map(|(t, _)| t.trim().to_string()).collect(),
            matched: (fused.iter())
                .take_while(|f| table.slots[f.chunk as usize].held)
                .count(),
            reason: (!self.wiki.data.config.positions).then(|| NO_POSITIONS.to_string()),
        });
        let (hits, always) = if opts.always == AlwaysMode::First {
            (always.into_iter().chain(ranked).collect(), Vec::new())
        } else {
            (ranked, always)
        };
        Ok(SearchResults {
            query: a.query.to_string(),
            truncated: a.truncated,
            terms: a.qterms.iter().map(|q| q.term.to_string()).collect(),
            lanes: reports,
            hits,
            always,
            facets,
            phrases,
        })
    }

    /// Each planned query's candidates from every shard (one round for all the queries
    /// asked), with `shadowed` the keys of user pages hiding global ones in other shards.
    fn tables(
        &self,
        plans: &mut [Plan<'_>],
        opts: &SearchOptions,
        shadowed: &[String],
        candidates: usize,
        ask: &mut Ask<'_>,
    ) -> Result<Vec<Table>> {
        let asked: Vec<usize> = (0..plans.len())
            .filter(|&q| plans[q].query.is_some())
            .collect();
        let mut tables: Vec<Table> = plans.iter().map(|_| Table::default()).collect();
        if asked.is_empty() {
            return Ok(tables);
        }
        let request = ShardRequest::Queries {
            options: SearchOptions {
                query_vector: None,
                ..opts.clone()
            },
            shadowed: shadowed.to_vec(),
            candidates,
            queries: (asked.iter())
                .filter_map(|&q| plans[q].query.take())
                .collect(),
        };
        for (s, reply) in self.round(ask, &vec![request; self.shards])? {
            let ShardReply::Answers(answers) = reply else {
                return Err(unexpected(s));
            };
            if answers.len() != asked.len() {
                return Err(unexpected(s));
            }
            for (&q, answer) in asked.iter().zip(answers) {
                tables[q].add(s, answer)?;
            }
        }
        Ok(tables)
    }

    /// A round of queries: a shard that answers [`ShardReply::Unprepared`] (started again
    /// since this coordinator prepared it) is given the wiki's statistics again, every shard
    /// once more, and the round asked again, once.
    fn round(
        &self,
        ask: &mut Ask<'_>,
        requests: &[ShardRequest],
    ) -> Result<impl Iterator<Item = (usize, ShardReply)>> {
        let unprepared = |replies: &[ShardReply]| {
            (replies.iter()).position(|r| matches!(r, ShardReply::Unprepared))
        };
        let first: Vec<ShardReply> = replies(ask, requests, self.shards)?
            .map(|(_, r)| r)
            .collect();
        if unprepared(&first).is_none() {
            return Ok(first.into_iter().enumerate());
        }
        for (s, reply) in replies(ask, &self.prepare, self.shards)? {
            if !matches!(reply, ShardReply::Prepared) {
                return Err(unexpected(s));
            }
        }
        let second: Vec<ShardReply> = replies(ask, requests, self.shards)?
            .map(|(_, r)| r)
            .collect();
        if let Some(s) = unprepared(&second) {
            return Err(Error::invalid_argument(format!(
                "shard {s} does not keep the wiki's statistics it is given"
            )));
        }
        Ok(second.into_iter().enumerate())
    }

    /// `query` analyzed against the wiki's dictionary, and what each shard's lanes score for
    /// it (`None` when no lane runs).
    fn plan<'q>(&'q self, query: &'q str, opts: &SearchOptions) -> Result<Plan<'q>> {
        let analyzed = self.wiki.analyzed(query, opts, None)?;
        let wiki = &self.wiki.data.lexical;
        let no_terms = analyzed.qterms.is_empty() && opts.query_vector.is_none();
        let runs = |lane: Lane| opts.wants(lane) && !no_terms;
        let named = |terms: Vec<(usize, f32)>| -> Vec<(String, f32)> {
            (terms.into_iter())
                .map(|(t, w)| (wiki.term(t).to_owned(), w))
                .collect()
        };
        let lexical = runs(Lane::Lexical).then(|| {
            named(lexical_terms(
                &analyzed.qterms,
                &analyzed.known,
                &analyzed.typos,
            ))
        });
        let token = runs(Lane::Token).then(|| {
            (token::credits(wiki, &analyzed.qterms, &analyzed.typos).into_iter())
                .map(named)
                .collect()
        });
        let semantic = if !runs(Lane::Semantic) {
            None
        } else if self.wiki.data.vectors.is_none() {
            Some(Err(LaneStatus::skipped(semantic::NO_VECTORS)))
        } else {
            Some(
                self.wiki
                    .semantic_query(query, opts, self.model.as_deref())?,
            )
        };
        let vector = semantic.as_ref().and_then(|s| s.as_ref().ok().cloned());
        let query =
            (lexical.is_some() || token.is_some() || vector.is_some()).then(|| ShardQuery {
                phrases: (analyzed.quoted.iter())
                    .map(|(_, terms)| terms.iter().map(|(t, o)| (t.to_string(), *o)).collect())
                    .collect(),
                lexical,
                token,
                semantic: vector,
            });
        Ok(Plan {
            analyzed,
            no_terms,
            semantic,
            query,
        })
    }

    /// A query's ranked hits from every shard's candidates (`table`): its lanes merged, then
    /// fused as one index fuses them; with the lanes' reports.
    fn fused(
        &self,
        plan: &Plan<'_>,
        table: &mut Table,
        opts: &SearchOptions,
        limit: usize,
        candidates: usize,
    ) -> Result<(Vec<Fused>, Vec<LaneReport>)> {
        let Plan {
            analyzed,
            no_terms,
            semantic,
            ..
        } = plan;
        let no_terms = *no_terms;
        let wiki = &self.wiki.data.lexical;
        let fusion_cfg = self.wiki.data.config.fusion;
        let (mut rankings, mut reports) = run_lanes(opts, no_terms, fusion_cfg, |lane| {
            Ok(match lane {
                Lane::Lexical => (LaneStatus::Ok, table.merged(0, candidates)),
                Lane::Token => (LaneStatus::Ok, table.merged(1, candidates)),
                Lane::Semantic => match &semantic {
                    Some(Err(status)) => (status.clone(), Vec::new()),
                    _ => {
                        let ranked = table.merged(2, candidates);
                        let unknown =
                            analyzed.known.iter().all(Option::is_none) && analyzed.typos.is_empty();
                        let floor = self.wiki.data.vectors.as_ref().map_or(0.0, |v| v.floor);
                        if unknown
                            && (ranked.first()).is_some_and(|&(_, s)| semantic::below(floor, s))
                        {
                            (LaneStatus::skipped(semantic::BELOW_FLOOR), Vec::new())
                        } else {
                            (LaneStatus::Ok, ranked)
                        }
                    }
                },
            })
        })?;
        let known = || evidence::known_share(wiki, &analyzed.qterms, &analyzed.typos);
        weigh_known(known, &mut rankings, &mut reports);
        let held = |c: u32| table.slots[c as usize].held;
        let mut fused: Vec<Fused> = if opts.chunks {
            fusion::rrf(fusion_cfg.k, &rankings, |a, b| table.cmp_chunk_ids(a, b))
        } else {
            fuse_pages(
                fusion_cfg.k,
                &rankings,
                held,
                |c| table.slots[c as usize].page,
                |a, b| {
                    table.pages[a as usize]
                        .id()
                        .cmp(table.pages[b as usize].id())
                },
            )
        };
        // Hits that hold every phrase first; a stable sort keeps the fused order in each.
        crate::data::sort::sort_by_key(&mut fused, |f| !held(f.chunk));
        fused.truncate(limit);
        Ok((fused, reports))
    }

    /// The keys of the user pages that hide global pages of the same keys in a search with
    /// `opts`, over every shard (a round only for a search scoped to a user).
    fn shadowed(&self, opts: &SearchOptions, ask: &mut Ask<'_>) -> Result<Vec<String>> {
        if !matches!(opts.scope, Some(Scope::User(_))) {
            return Ok(Vec::new());
        }
        let request = ShardRequest::Shadowed {
            options: SearchOptions {
                query_vector: None,
                ..opts.clone()
            },
        };
        let mut keys = Vec::new();
        for (s, reply) in replies(ask, &vec![request; self.shards], self.shards)? {
            let ShardReply::Shadowed { keys: more } = reply else {
                return Err(unexpected(s));
            };
            keys.extend(more);
        }
        crate::data::sort::sort_unstable(&mut keys);
        keys.dedup();
        Ok(keys)
    }
}

/// One query of a [`Coordinator::rank_many`], analyzed: what fusing its shards' candidates
/// reads, and what it asks of them until it is asked.
struct Plan<'q> {
    analyzed: Analyzed<'q>,
    /// Neither a term nor a query vector: no lane runs.
    no_terms: bool,
    /// The semantic lane's query vector, or why it does not run (`None`: not asked for).
    semantic: Option<std::result::Result<Vec<f32>, LaneStatus>>,
    query: Option<ShardQuery>,
}

/// A search's hits and the candidates each lane keeps, as one index takes them from `opts`.
fn limits(opts: &SearchOptions) -> (usize, usize) {
    let limit = opts.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    (limit, (limit * 3).min(MAX_CANDIDATES))
}

/// The wiki's facets from every shard's counts: each value counted over every shard and
/// written as the first page (in the wiki's page order) with it writes it.
fn merged_facets(shards: &[ShardHits]) -> Facets {
    type Merged<'a> = std::collections::HashMap<&'a str, (&'a FacetValue, usize)>;
    fn add<'a>(merged: &mut Merged<'a>, values: &'a [FacetValue]) {
        for v in values {
            let e = merged.entry(&v.folded).or_insert((v, 0));
            e.1 += v.count;
            if v.first < e.0.first {
                e.0 = v;
            }
        }
    }
    let (mut pages, mut tags, mut types) = (0, Merged::default(), Merged::default());
    for f in shards.iter().filter_map(|s| s.facets.as_ref()) {
        pages += f.pages;
        add(&mut tags, &f.tags);
        add(&mut types, &f.types);
    }
    let sorted =
        |m: Merged<'_>| sorted_counts(m.into_values().map(|(v, count)| (v.value.clone(), count)));
    Facets {
        pages,
        tags: sorted(tags),
        types: sorted(types),
    }
}

/// Every page's scope and key over `summaries`, checked distinct: their number.
fn distinct_pages(summaries: &[ShardSummary]) -> Result<usize> {
    let mut pages: Vec<(&Scope, &str, usize)> = (summaries.iter().enumerate())
        .flat_map(|(s, summary)| {
            (summary.pages.iter()).map(move |(scope, key)| (scope, key.as_str(), s))
        })
        .collect();
    crate::data::sort::sort_unstable(&mut pages);
    if let Some(w) = pages
        .windows(2)
        .find(|w| (w[0].0, w[0].1) == (w[1].0, w[1].1))
    {
        return Err(Error::invalid_argument(format!(
            "page {} is in shard {} and in shard {}",
            id_of(w[0].0, w[0].1),
            w[0].2,
            w[1].2
        )));
    }
    Ok(pages.len())
}

/// One round: `requests` through `ask`, each reply with its shard, a failed one an error.
fn replies(
    ask: &mut Ask<'_>,
    requests: &[ShardRequest],
    shards: usize,
) -> Result<impl Iterator<Item = (usize, ShardReply)>> {
    let replies = ask(requests)?;
    if replies.len() != shards {
        return Err(Error::invalid_argument(format!(
            "{} replies from {shards} shards",
            replies.len()
        )));
    }
    for (s, reply) in replies.iter().enumerate() {
        if let ShardReply::Failed { code, message } = reply {
            return Err(Error::invalid_argument(format!(
                "shard {s} failed ({code}): {message}"
            )));
        }
    }
    Ok(replies.into_iter().enumerate())
}

fn unexpected(s: usize) -> Error {
    Error::invalid_argument(format!("shard {s}'s reply is not the one asked for"))
}

/// Every shard's candidates of one query, each chunk once, with what orders them as one
/// index would.
#[derive(Default)]
struct Table {
    slots: Vec<Slot>,
    pages: Vec<PageSlot>,
    /// Per lane: (holds the phrases, score, place among equal scores, slot).
    lanes: [Vec<(bool, f32, u64, u32)>; 3],
    at: rustc_hash::FxHashMap<(u32, u32), u32>,
}

struct Slot {
    shard: u32,
    chunk: u32,
    /// In the table's `pages`.
    page: u32,
    /// Its place in its page (the wiki's chunk order within a page).
    in_page: u32,
    number: u32,
    held: bool,
}

struct PageSlot {
    page: u32,
    scope: Scope,
    key: String,
    /// Made when first asked for: most pages of an answer are not among the hits.
    id: std::cell::OnceCell<String>,
}

impl PageSlot {
    fn id(&self) -> &str {
        self.id.get_or_init(|| id_of(&self.scope, &self.key))
    }
}

impl Table {
    /// Shard `s`'s answer.
    fn add(&mut self, s: usize, answer: ShardAnswer) -> Result<()> {
        let shard = s as u32;
        let base = self.pages.len() as u32;
        let broken =
            || Error::invalid_argument(format!("shard {s}'s answer does not hold together"));
        let firsts: Vec<u32> = answer.pages.iter().map(|p| p.first).collect();
        self.pages
            .extend(answer.pages.into_iter().map(|p| PageSlot {
                page: p.page,
                scope: p.scope,
                key: p.key,
                id: Default::default(),
            }));
        for (lane, candidates) in self.lanes.iter_mut().zip(answer.lanes) {
            for c in candidates {
                let first = *firsts.get(c.page as usize).ok_or_else(broken)?;
                let in_page = c.chunk.checked_sub(first).ok_or_else(broken)?;
                let slots = &mut self.slots;
                let slot = *self.at.entry((shard, c.chunk)).or_insert_with(|| {
                    slots.push(Slot {
                        shard,
                        chunk: c.chunk,
                        page: base + c.page,
                        in_page,
                        number: c.number,
                        held: c.held,
                    });
                    slots.len() as u32 - 1
                });
                lane.push((c.held, c.score, c.tie, slot));
            }
        }
        Ok(())
    }

    /// Lane `l`'s best `n` candidates over every shard, in the order one index ranks them:
    /// the chunks holding the query's phrases first, then by score, place among equal
    /// scores, and the chunk's place in the wiki (its page in canonical order, then its
    /// place in the page).
    fn merged(&mut self, l: usize, n: usize) -> Vec<(u32, f32)> {
        let (slots, pages) = (&self.slots, &self.pages);
        let place = |slot: u32| {
            let slot = &slots[slot as usize];
            let page = &pages[slot.page as usize];
            ((&page.scope, page.key.as_str()), slot.in_page)
        };
        // No two candidates compare equal: each chunk is a lane's candidate once.
        let order = |a: &(bool, f32, u64, u32), b: &(bool, f32, u64, u32)| {
            (b.0.cmp(&a.0))
                .then_with(|| b.1.total_cmp(&a.1))
                .then_with(|| b.2.cmp(&a.2))
                .then_with(|| place(a.3).cmp(&place(b.3)))
        };
        let all = &mut self.lanes[l];
        let n = n.min(all.len());
        crate::data::sort::sort_first(all, n, order);
        all[..n]
            .iter()
            .map(|&(_, score, _, c)| (c, score))
            .collect()
    }

    /// The [`ShardRanked`] of fused hit `f`.
    fn ranked(&self, f: &Fused) -> ShardRanked {
        let slot = &self.slots[f.chunk as usize];
        let page = &self.pages[slot.page as usize];
        ShardRanked {
            shard: slot.shard as usize,
            page: page.page as usize,
            chunk: slot.chunk as usize,
            score: f.score,
            page_id: page.id().to_owned(),
        }
    }

    /// The id of the chunk in slot `c`.
    fn chunk_id(&self, c: u32) -> String {
        let slot = &self.slots[c as usize];
        crate::text::chunk::chunk_id(self.pages[slot.page as usize].id(), slot.number as usize)
    }

    /// [`Index`]'s order of chunk ids, over the table's slots.
    fn cmp_chunk_ids(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (a, b) = (&self.slots[a as usize], &self.slots[b as usize]);
        chunk_id_order(a.page == b.page, (a.number, b.number), || {
            (
                self.pages[a.page as usize].id().to_owned(),
                self.pages[b.page as usize].id().to_owned(),
            )
        })
    }
}
