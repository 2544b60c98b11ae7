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
//! Its searches ([`ShardedIndex::search`]) are one index's too, record for record: after the
//! fusion, each shard makes the records of the hits it holds (their fields, snippets and
//! explanations) with the query as the wiki's dictionary analyzed it, and gives its `always`
//! pages and facet counts, which are merged in the wiki's page order.
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

use std::sync::Arc;

use crate::data::error::Result;
use crate::data::parallel;
use crate::embed::Embedder;
use crate::index::Index;
use crate::text::page::Page;

use super::{SearchOptions, SearchResults};
use crate::data::offset::OffsetUnit;

mod parts;

pub use parts::{
    over_bytes, Ask, Coordinator, HitsAsk, ShardAnswer, ShardHits, ShardQuery, ShardRanked,
    ShardReply, ShardRequest, ShardSearcher, ShardSummary,
};

/// Indexes of parts of one wiki searched as one (see the module docs): a [`Coordinator`] and
/// a [`ShardSearcher`] per shard, in one process.
pub struct ShardedIndex {
    shards: Vec<Arc<Index>>,
    searchers: Vec<ShardSearcher>,
    coordinator: Coordinator,
    unit: OffsetUnit,
}

impl std::fmt::Debug for ShardedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedIndex")
            .field("shards", &self.shards.len())
            .field("pages", &self.page_count())
            .field("chunks", &self.chunk_count())
            .finish_non_exhaustive()
    }
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
    /// come from different models (or some without vectors), or the same page in two shards;
    /// what `model` returns when it fails to embed the floor's probes.
    pub fn new(shards: Vec<Arc<Index>>, model: Option<Arc<dyn Embedder>>) -> Result<ShardedIndex> {
        let searchers: Vec<ShardSearcher> = (shards.iter())
            .map(|s| ShardSearcher::new(Arc::clone(s)))
            .collect();
        let summaries = searchers.iter().map(ShardSearcher::summary).collect();
        let coordinator = Coordinator::new(summaries, model, &mut in_process(&searchers, false))?;
        Ok(ShardedIndex {
            shards,
            searchers,
            coordinator,
            unit: OffsetUnit::default(),
        })
    }

    /// Sets how the records [`ShardedIndex::search`] returns count offsets (default
    /// [`OffsetUnit::Byte`]; see [`crate::data::offset`]).
    pub fn set_offset_unit(&mut self, unit: OffsetUnit) {
        self.unit = unit;
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
        self.coordinator.page_count()
    }

    /// Number of chunks over every shard.
    pub fn chunk_count(&self) -> usize {
        self.coordinator.chunk_count()
    }

    /// Ranks the wiki's chunks as [`Index::rank`] ranks those of one index of all its pages:
    /// the same pages and chunks in the same order with the same scores.
    ///
    /// # Errors
    /// As [`Index::rank`].
    pub fn rank(&self, query: &str, opts: &SearchOptions) -> Result<Vec<ShardRanked>> {
        (self.coordinator).rank(query, opts, &mut in_process(&self.searchers, self.spread()))
    }

    /// Searches the wiki as [`Index::search`] searches one index of all its pages: the same
    /// results, record for record (hits with their snippets, lanes and explanations, the
    /// `always` pages, facets and phrases), each hit's record made by the shard holding it.
    ///
    /// # Errors
    /// As [`Index::search`].
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
        let ask = &mut in_process(&self.searchers, self.spread());
        (self.coordinator).search(query, opts, self.unit, ask)
    }

    /// Verifies an answer's citations as [`Index::verify`] does over one index of every
    /// shard's pages, the same verdicts in the same order: each cited or offered id read from
    /// the shard holding its chunk or page, the quote spans in the unit set by
    /// [`ShardedIndex::set_offset_unit`].
    ///
    /// # Errors
    /// As [`Index::verify`].
    pub fn verify(
        &self,
        answer: &str,
        cited: &[crate::cite::Cited],
        offered: &[String],
    ) -> Result<crate::cite::Verification> {
        crate::cite::verify_over(self, answer, cited, offered, self.unit)
    }

    /// The answer's sentences that a chunk supports but that cite nothing, and those no chunk
    /// supports, as [`Index::uncited_support`] finds them over one index of every shard's
    /// chunks: each sentence's best support is the best of the shards' (the most terms
    /// shared, then the first in the wiki's order of chunks).
    ///
    /// # Errors
    /// As [`Index::uncited_support`].
    pub fn uncited_support(&self, answer: &str) -> Result<crate::cite::Support> {
        crate::cite::uncited_support_over(self, answer, self.unit)
    }

    /// [`ShardedIndex::verify`] and [`ShardedIndex::uncited_support`] in one call, as
    /// [`Index::check_answer`] gives them over one index of every shard's pages.
    ///
    /// # Errors
    /// As [`Index::check_answer`].
    pub fn check_answer(
        &self,
        answer: &str,
        cited: &[crate::cite::Cited],
        offered: &[String],
    ) -> Result<crate::cite::AnswerCheck> {
        crate::cite::check_answer_over(self, answer, cited, offered, self.unit)
    }

    /// Whether a query's shards are asked on every core at once: from as many chunks as one
    /// index runs its word lanes apart from ([`super::lanes_apart`]).
    fn spread(&self) -> bool {
        super::lanes_apart(self.chunk_count())
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
        parallel::map(queries, threads, |q| self.rank(q.as_ref(), opts))
            .into_iter()
            .collect()
    }
}

/// A page, a chunk or a raw document is in one shard: the first that has it answers.
impl crate::cite::CitedLookup for ShardedIndex {
    fn cited_chunk(&self, id: &str) -> Option<crate::index::Chunk> {
        self.shards.iter().find_map(|s| s.cited_chunk(id))
    }

    fn cited_page(&self, id: &str) -> Option<String> {
        // The page one index would name: the least of how each shard names one, then the
        // first in the wiki's page order.
        (self.shards.iter())
            .filter_map(|s| (s.page_named(id)).map(|(how, i)| (how, &s.pages()[i as usize])))
            .min_by(|(a, p), (b, q)| (a, &p.scope, &p.key).cmp(&(b, &q.scope, &q.key)))
            .map(|(_, p)| p.id())
    }

    fn terms_of(&self, text: &str) -> std::collections::HashSet<String> {
        // Every shard analyzes as the others do (`ShardedIndex::new` checks their settings).
        self.shards[0].terms_of(text)
    }

    fn best_support(&self, terms: &std::collections::HashSet<String>) -> Option<(String, usize)> {
        crate::cite::best_support_over(&self.shards, terms)
    }
}

/// The [`Ask`] of shards in this process: each request to its searcher, the shards spread over
/// the cores when `spread`.
fn in_process(
    searchers: &[ShardSearcher],
    spread: bool,
) -> impl FnMut(&[ShardRequest]) -> Result<Vec<ShardReply>> + '_ {
    move |requests: &[ShardRequest]| {
        let asked: Vec<(&ShardSearcher, &ShardRequest)> = searchers.iter().zip(requests).collect();
        let threads = if spread { parallel::cores() } else { 1 };
        Ok(parallel::map(&asked, threads, |(s, r)| s.reply(r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, IndexBuilder, Lane};

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
        // Tag 3 is tag 1 spelt otherwise: a facet counts both, as the first page writes it.
        let tags: Vec<String> = (tags.iter())
            .map(|&t| if t == 3 { "T1".into() } else { format!("t{t}") })
            .collect();
        // Some pages are always shown, and some have a type.
        let usage = if key % 9 == 4 {
            "usage_mode: always\n"
        } else {
            ""
        };
        let kind = ["", "type: note\n", "type: Note\n"][*key as usize % 3];
        let mut text = format!(
            "---\ntitle: Page {key}\ntags: [{}]\n{usage}{kind}---\n",
            tags.join(", ")
        );
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
            proptest::collection::vec(0u8..4, 0..3),
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
                (proptest::collection::vec(0usize..20, 1..4), 0u8..6, 0u8..8, 1usize..12, 0usize..1000),
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
            // The same shards apart, every request and reply crossing as bytes.
            let apart: Vec<ShardSearcher> =
                shards.iter().map(|s| ShardSearcher::new(Arc::clone(s))).collect();
            let mut ask = over_bytes(|requests: Vec<Vec<u8>>| {
                Ok(apart.iter().zip(requests).map(|(s, r)| s.reply_bytes(&r)).collect())
            });
            let summaries: Vec<ShardSummary> = (apart.iter())
                .map(|s| ShardSummary::from_bytes(&s.summary().to_bytes()).unwrap())
                .collect();
            let coordinator = Coordinator::new(summaries, model.clone(), &mut ask).unwrap();
            let mut many = ShardedIndex::new(shards, model.clone()).unwrap();
            many.set_offset_unit(OffsetUnit::Char);
            let caller = crate::index::Caller { model: model.as_deref(), unit: OffsetUnit::Char };
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
                    6 => {
                        opts.explain = true;
                        opts.facets = true;
                    }
                    7 => opts.always = crate::AlwaysMode::First,
                    _ => {}
                }
                // The whole answer, record for record: hits with snippets, lanes and
                // explanations, the `always` pages, facets and phrases.
                let results = one.search_checked(&query, &opts, None, caller).unwrap();
                let together = many.search(&query, &opts).unwrap();
                proptest::prop_assert_eq!(&together, &results, "search: query {:?}, options {:?}", query, opts_kind);
                let far = coordinator.search(&query, &opts, OffsetUnit::Char, &mut ask).unwrap();
                proptest::prop_assert_eq!(&far, &results, "search apart: query {:?}, options {:?}", query, opts_kind);
                let expected = whole(&one, &one.rank_with(&query, &opts, model.as_deref()).unwrap());
                let got = sharded(&many, &many.rank(&query, &opts).unwrap());
                let far: Vec<(String, String, u32)> = (coordinator.rank(&query, &opts, &mut ask).unwrap().iter())
                    .map(|r| (r.page_id.clone(), many.shards()[r.shard].chunk_id(r.chunk as u32), r.score.to_bits()))
                    .collect();
                proptest::prop_assert_eq!(&far, &got, "apart: query {:?}, options {:?}", query, opts_kind);
                // The query asked in a batch beside others (one with no terms: no lane runs).
                let batch = [query.as_str(), "", words[0]];
                let apart = coordinator.rank_many(&batch, &opts, &mut ask).unwrap();
                for (q, ranked) in batch.iter().zip(&apart) {
                    let alone = coordinator.rank(q, &opts, &mut ask).unwrap();
                    proptest::prop_assert_eq!(ranked, &alone, "batch: query {:?}, options {:?}", q, opts_kind);
                }
                found += usize::from(!expected.is_empty());
                proptest::prop_assert_eq!(got, expected, "query {:?}, options {:?}", query, opts_kind);
            }
            // An answer's citations are verified as one index verifies them: quotes of two
            // pages, their chunks, pages named by key, a chunk and a page no shard has, a hash
            // the model saw that is not the chunk's, and what was offered.
            let (_, _, _, first) = &pages[deal[0] % pages.len()];
            let (_, _, _, second) = &pages[deal[1] % pages.len()];
            let quoted = |words: &[u8]| -> String {
                words.iter().map(|&w| WORDS[w as usize % WORDS.len()]).collect::<Vec<_>>().join(" ")
            };
            let answer = format!("As the wiki says: {}. And: {}.", quoted(&first[0]), quoted(&second[0]));
            let id = |(user, key, _, _): &PageSpec| match user {
                Some(u) => format!("user/u{u}/k{key}"),
                None => format!("k{key}"),
            };
            let mut cited: Vec<crate::cite::Cited> = Vec::new();
            for (i, spec) in pages.iter().enumerate().take(6) {
                cited.push(crate::cite::Cited::id(format!("{}::chunk_{}", id(spec), i % 2)));
            }
            cited.push(crate::cite::Cited::id(id(&pages[deal[2] % pages.len()])));
            // A key as a person writes it, which may name a user's page only.
            for (_, key, _, _) in pages.iter().take(3) {
                cited.push(crate::cite::Cited::id(format!("K{key}")));
            }
            cited.push(crate::cite::Cited::parse(&format!("{}::chunk_0@{}", id(&pages[0]), "0".repeat(32))));
            cited.push(crate::cite::Cited::id("k99::chunk_0"));
            cited.push(crate::cite::Cited::id("k99"));
            let offered: Vec<String> = match deal[3] % 3 {
                0 => Vec::new(),
                _ => pages.iter().skip(1).take(4).map(|spec| format!("{}::chunk_0", id(spec))).collect(),
            };
            let verified = one.verify_in(&answer, &cited, &offered, OffsetUnit::Char).unwrap();
            proptest::prop_assert_eq!(many.verify(&answer, &cited, &offered).unwrap(), verified);
            // The whole check: the ids written in the answer, and each sentence's best support.
            let answer = format!("{answer} See {}::chunk_0. {}.", id(&pages[1 % pages.len()]), quoted(&second[second.len() - 1]));
            let checked = one.check_answer_in(&answer, &cited, &offered, OffsetUnit::Char).unwrap();
            proptest::prop_assert_eq!(many.check_answer(&answer, &cited, &offered).unwrap(), checked);
            // A case whose queries find next to nothing proves little (its pages can be all
            // `always` pages or miss every word): it does not count, and proptest fails the
            // run if such cases are common (its limit on rejected cases).
            proptest::prop_assume!(found >= 2, "fewer than two queries found hits");
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
    fn shards_apart_refuse_what_does_not_fit() {
        let a = ("global/a.md".to_string(), "Revenue and churn.".to_string());
        let b = ("global/b.md".to_string(), "Churn.".to_string());
        let apart = [
            ShardSearcher::new(build(&[&a], false)),
            ShardSearcher::new(build(&[&b], false)),
        ];
        let summaries = || apart.iter().map(ShardSearcher::summary).collect::<Vec<_>>();
        let mut ask = over_bytes(|requests: Vec<Vec<u8>>| {
            Ok(apart
                .iter()
                .zip(requests)
                .map(|(s, r)| s.reply_bytes(&r))
                .collect())
        });
        let opts = SearchOptions::default();
        // Another version of wikidex on one side.
        let mut old = serde_json::to_value(apart[1].summary()).unwrap();
        old["version"] = "0.0.0".into();
        let old: ShardSummary = serde_json::from_value(old).unwrap();
        let err = Coordinator::new(vec![apart[0].summary(), old], None, &mut ask).unwrap_err();
        assert!(
            err.to_string().contains("shard 1 runs wikidex 0.0.0"),
            "{err}"
        );
        assert_eq!(
            ShardRequest::from_bytes(b"{}").unwrap_err().code(),
            "invalid_argument"
        );
        let wiki = Coordinator::new(summaries(), None, &mut ask).unwrap();
        assert_eq!(
            (wiki.page_count(), wiki.chunk_count(), wiki.shard_count()),
            (2, 2, 2)
        );
        // A coordinator made again prepares the shards again.
        let wiki = Coordinator::new(summaries(), None, &mut ask).unwrap();
        let mut asked = Vec::new();
        let hits = (wiki.rank("churn", &opts, &mut |r: &[ShardRequest]| {
            asked.push(ShardRequest::from_bytes(&r[0].to_bytes())?);
            ask(r)
        }))
        .unwrap();
        assert_eq!(hits.len(), 2);
        // A shard asked before it has the wiki's statistics says so.
        let early = ShardSearcher::new(Arc::clone(apart[0].index())).reply(&asked[0]);
        assert!(matches!(&early, ShardReply::Unprepared), "{early:?}");
        // Replies that do not answer the request, or too few of them.
        let mut wrong = |_: &[ShardRequest]| Ok(vec![ShardReply::Prepared, ShardReply::Prepared]);
        let err = wiki.rank("churn", &opts, &mut wrong).unwrap_err();
        assert!(err.to_string().contains("not the one asked for"), "{err}");
        let mut failing = |_: &[ShardRequest]| {
            let failed = ShardReply::Failed {
                code: "corrupt".into(),
                message: "bad bytes".into(),
            };
            Ok(vec![failed, ShardReply::Prepared])
        };
        let err = wiki.rank("churn", &opts, &mut failing).unwrap_err();
        assert!(
            err.to_string()
                .contains("shard 0 failed (corrupt): bad bytes"),
            "{err}"
        );
        let mut short = |_: &[ShardRequest]| Ok(vec![ShardReply::Prepared]);
        let err = wiki.rank("churn", &opts, &mut short).unwrap_err();
        assert!(err.to_string().contains("1 replies from 2 shards"), "{err}");
    }

    #[test]
    fn a_shard_started_again_is_given_the_statistics_again() {
        let a = ("global/a.md".to_string(), "Revenue and churn.".to_string());
        let b = (
            "global/b.md".to_string(),
            "Churn, monthly churn.".to_string(),
        );
        let c = ("global/c.md".to_string(), "Monthly revenue.".to_string());
        let (one, two) = (build(&[&a], false), build(&[&b], false));
        let apart = std::cell::RefCell::new(vec![
            ShardSearcher::new(Arc::clone(&one)),
            ShardSearcher::new(Arc::clone(&two)),
        ]);
        let mut ask = over_bytes(|requests: Vec<Vec<u8>>| {
            Ok((apart.borrow().iter().zip(requests))
                .map(|(s, r)| s.reply_bytes(&r))
                .collect())
        });
        let summaries = apart.borrow().iter().map(ShardSearcher::summary).collect();
        let wiki = Coordinator::new(summaries, None, &mut ask).unwrap();
        let opts = SearchOptions::default();
        let before = wiki.rank("churn revenue", &opts, &mut ask).unwrap();
        assert_eq!(before.len(), 2);
        // Shard 1 started again over the same index: it has no statistics until given them.
        apart.borrow_mut()[1] = ShardSearcher::new(Arc::clone(&two));
        assert_eq!(wiki.rank("churn revenue", &opts, &mut ask).unwrap(), before);
        let batch = wiki.rank_many(&["churn", "revenue"], &opts, &mut ask);
        assert_eq!(batch.unwrap().len(), 2);
        // Started again over other pages: refused, not ranked with the wiki's old statistics.
        apart.borrow_mut()[1] = ShardSearcher::new(build(&[&b, &c], false));
        let err = wiki.rank("churn revenue", &opts, &mut ask).unwrap_err();
        assert!(
            err.to_string()
                .contains("not the one the coordinator was made over"),
            "{err}"
        );
        // A shard that forgets what it is given: an error, not a loop.
        let mut forgets = |requests: &[ShardRequest]| {
            Ok((requests.iter())
                .map(|r| match r {
                    ShardRequest::Prepare { .. } => ShardReply::Prepared,
                    _ => ShardReply::Unprepared,
                })
                .collect())
        };
        let err = wiki.rank("churn", &opts, &mut forgets).unwrap_err();
        assert!(err.to_string().contains("does not keep"), "{err}");
    }

    #[test]
    fn queries_in_a_batch_take_one_round() {
        let a = ("global/a.md".to_string(), "Revenue and churn.".to_string());
        let b = ("user/ann/a.md".to_string(), "Churn, monthly.".to_string());
        let c = ("global/c.md".to_string(), "Monthly revenue.".to_string());
        let apart = [
            ShardSearcher::new(build(&[&a, &c], false)),
            ShardSearcher::new(build(&[&b], false)),
        ];
        let rounds = std::cell::Cell::new(0);
        let mut ask = over_bytes(|requests: Vec<Vec<u8>>| {
            rounds.set(rounds.get() + 1);
            Ok(apart
                .iter()
                .zip(requests)
                .map(|(s, r)| s.reply_bytes(&r))
                .collect())
        });
        let summaries = apart.iter().map(ShardSearcher::summary).collect();
        let wiki = Coordinator::new(summaries, None, &mut ask).unwrap();
        let queries = ["churn", "monthly revenue", "", "zeta", "revenue"];
        for (opts, asked) in [
            (SearchOptions::default(), 1),
            // A user's pages hide global ones of the same key: one more round, for the batch.
            (
                SearchOptions {
                    scope: Some(crate::Scope::User("ann".into())),
                    ..Default::default()
                },
                2,
            ),
        ] {
            rounds.set(0);
            let batch = wiki.rank_many(&queries, &opts, &mut ask).unwrap();
            assert_eq!(rounds.get(), asked);
            let ids = |r: &[ShardRanked]| r.iter().map(|r| r.page_id.clone()).collect::<Vec<_>>();
            for (q, ranked) in queries.iter().zip(&batch) {
                assert_eq!(ranked, &wiki.rank(q, &opts, &mut ask).unwrap());
            }
            assert_eq!(batch[2], Vec::new());
            let mut churn = ids(&batch[0]);
            churn.sort();
            let scoped = opts.scope.is_some();
            assert_eq!(
                churn,
                if scoped {
                    vec!["user/ann/a"]
                } else {
                    vec!["a", "user/ann/a"]
                }
            );
        }
        // No query, no round.
        rounds.set(0);
        let none: [&str; 0] = [];
        assert!(wiki
            .rank_many(&none, &SearchOptions::default(), &mut ask)
            .unwrap()
            .is_empty());
        assert_eq!(rounds.get(), 0);
    }

    /// A citation is read where its chunk, page or raw document is, and a bare key names the
    /// first page of that key in the wiki's order (not in the shards' order), as in one index.
    #[test]
    fn citations_are_verified_where_their_pages_are() {
        let file = |path: &str, text: &str| (path.to_string(), text.to_string());
        let ann = file("user/ann/x.md", "Ann keeps the revenue ledger every month.");
        let bob = file("user/bob/x.md", "Bob keeps the churn ledger every quarter.");
        let raw = file(
            "raw/call.md",
            "The call notes say churn rose in the spring quarter.",
        );
        let global = file(
            "global/y.md",
            "Revenue is recognized monthly by the finance team.",
        );
        let one = build(&[&ann, &bob, &raw, &global], false);
        // Bob's page in the first shard, Ann's in the second: the wiki's order is Ann's first.
        let many = ShardedIndex::new(
            vec![build(&[&bob, &global], false), build(&[&ann, &raw], false)],
            None,
        )
        .unwrap();
        let answer = "The call notes say churn rose in the spring quarter, and revenue is \
            recognized monthly by the finance team.";
        let cited: Vec<crate::cite::Cited> = [
            "X",
            "user/bob/x",
            "raw/call::chunk_0",
            "y::chunk_0",
            "user/ann/x::chunk_0",
            "nowhere::chunk_0",
        ]
        .into_iter()
        .map(crate::cite::Cited::id)
        .collect();
        let offered = vec!["user/bob/x::chunk_0".to_string()];
        let v = one.verify(answer, &cited, &offered).unwrap();
        let names: Vec<(&str, Option<&str>)> = (v.citations.iter())
            .map(|c| (c.status.name(), c.page_id.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("none", Some("user/ann/x")),
                ("none", Some("user/bob/x")),
                ("none", Some("raw/call")),
                ("none", Some("y")),
                ("none", Some("user/ann/x")),
                ("unknown", None),
                ("uncited", Some("user/bob/x")),
            ]
        );
        assert_eq!(many.verify(answer, &cited, &offered).unwrap(), v);
        // Offered nothing, the quotes are quotes.
        let v = one.verify(answer, &cited, &[]).unwrap();
        assert_eq!(v.citations[2].status.name(), "quote");
        assert_eq!(v.citations[3].status.name(), "quote");
        assert_eq!(many.verify(answer, &cited, &[]).unwrap(), v);
    }

    /// A sentence two chunks support as well is the first's in the wiki's order, whichever
    /// shard comes first: a page's chunk before a raw document's, page `a` before page `b`.
    #[test]
    fn an_answers_support_is_the_first_chunk_in_the_wikis_order() {
        let text = "The nightly pipeline pages the on-call engineer after midnight.";
        let file = |path: &str| (path.to_string(), text.to_string());
        let (a, b, raw) = (file("global/a.md"), file("global/b.md"), file("raw/log.md"));
        let other = (
            "global/c.md".to_string(),
            "Revenue is recognized monthly.".to_string(),
        );
        let one = build(&[&a, &b, &raw, &other], false);
        let deals = [
            (vec![&raw, &b], vec![&a, &other]),
            (vec![&b, &other], vec![&raw, &a]),
            (vec![&raw], vec![&b, &a, &other]),
        ];
        let answer = format!(
            "{text} Revenue is recognized monthly [c::chunk_0]. Quantum widgets oscillate beneath purple glaciers."
        );
        let expected = one.check_answer(&answer, &[], &[]).unwrap();
        assert_eq!(
            expected.support.uncited[0].best_chunk.as_deref(),
            Some("a::chunk_0")
        );
        assert_eq!(expected.support.unsupported.len(), 1);
        for (first, second) in deals {
            let many =
                ShardedIndex::new(vec![build(&first, false), build(&second, false)], None).unwrap();
            assert_eq!(many.check_answer(&answer, &[], &[]).unwrap(), expected);
            assert_eq!(
                many.uncited_support(&answer).unwrap(),
                one.uncited_support(&answer).unwrap()
            );
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
        let hit = many
            .rank("churn", &SearchOptions::default())
            .unwrap()
            .remove(0);
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
