//! The hit limit (DESIGN §3.1: clamped to `1..=100`, default 20), on a corpus where it is the
//! clamp that holds the answer to 100: 300 pages of two chunks all match the query, and the
//! three lanes disagree, so the union of their candidates is well over 100 chunks and pages.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use wikidex::{
    ChunkConfig, Config, Index, IndexBuilder, Lane, SearchOptions, DEFAULT_LIMIT, MAX_LIMIT,
    MAX_RANK_THREADS,
};

use crate::check;

const PAGES: usize = 300;
const DIM: usize = 8;

/// Pages of two paragraphs (too long to share a 16-token chunk), every one containing the
/// query word a different number of times among different fillers, with pseudo-random vectors
/// so the semantic lane's order owes nothing to the text.
fn corpus() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let config = Config {
            chunk: ChunkConfig {
                max_tokens: 16,
                overlap_tokens: 0,
            },
            ..Default::default()
        };
        let mut b = IndexBuilder::new(config).unwrap();
        for i in 0..PAGES {
            // 9 to 15 tokens each: never two in one chunk, never one split.
            let first = format!(
                "{}{}",
                "alpha ".repeat(1 + i % 5),
                "bravo ".repeat(8 + i % 3)
            );
            let second = format!("alpha charlie {}", "delta ".repeat(7 + i % 6));
            let text = format!("{}\n\n{}\n", first.trim(), second.trim());
            b.add_file(&format!("global/p{i:03}.md"), text.as_bytes())
                .unwrap();
        }
        let (index, report) = b.build().unwrap();
        assert_eq!(report.pages, PAGES);
        assert_eq!(index.chunk_count(), 2 * PAGES, "two chunks per page");
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let vectors: Vec<Vec<f32>> = (0..index.chunk_count())
            .map(|_| {
                (0..DIM)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                    })
                    .collect()
            })
            .collect();
        index
            .with_vectors("test", "test", &vectors, wikidex::VectorEncoding::F32)
            .unwrap()
    })
}

fn opts(limit: Option<usize>, chunks: bool) -> SearchOptions {
    SearchOptions {
        limit,
        chunks,
        snippets: false,
        query_vector: Some(vec![1.0; DIM]),
        ..Default::default()
    }
}

/// The ids each lane alone returns for `MAX_LIMIT` (its whole candidate list), merged.
fn union_of_lane_candidates(chunks: bool) -> BTreeSet<String> {
    let index = corpus();
    let mut all = BTreeSet::new();
    for lane in Lane::ALL {
        let o = SearchOptions {
            lanes: Some(vec![lane]),
            ..opts(Some(MAX_LIMIT), chunks)
        };
        let hits = check::search(index, "alpha", &o).hits;
        assert_eq!(hits.len(), MAX_LIMIT, "{lane:?} has a full candidate list");
        all.extend(
            hits.into_iter()
                .map(|h| if chunks { h.chunk } else { h.page_id }),
        );
    }
    all
}

#[test]
fn lanes_disagree_so_fusion_has_more_than_the_maximum_to_give() {
    for chunks in [false, true] {
        let n = union_of_lane_candidates(chunks).len();
        assert!(n > MAX_LIMIT, "chunks: {chunks}: only {n} candidates");
    }
}

#[test]
fn limit_above_the_maximum_returns_exactly_the_maximum() {
    let index = corpus();
    for chunks in [false, true] {
        let at_max = check::search(index, "alpha", &opts(Some(MAX_LIMIT), chunks));
        assert_eq!(at_max.hits.len(), MAX_LIMIT, "chunks: {chunks}");
        for limit in [MAX_LIMIT + 1, 10_000, usize::MAX] {
            let r = check::search(index, "alpha", &opts(Some(limit), chunks));
            assert_eq!(r.hits, at_max.hits, "limit {limit}, chunks: {chunks}");
        }
    }
}

#[test]
fn issue_26_limit_zero_is_invalid_argument_as_on_every_surface() {
    let index = corpus();
    for chunks in [false, true] {
        let err = index.search("alpha", &opts(Some(0), chunks)).unwrap_err();
        assert_eq!(err.code(), "invalid_argument", "chunks: {chunks}");
    }
}

#[test]
fn no_limit_means_the_default() {
    let index = corpus();
    for chunks in [false, true] {
        let default = check::search(index, "alpha", &opts(None, chunks));
        let twenty = check::search(index, "alpha", &opts(Some(DEFAULT_LIMIT), chunks));
        assert_eq!(default.hits.len(), DEFAULT_LIMIT, "chunks: {chunks}");
        assert_eq!(default.hits, twenty.hits, "chunks: {chunks}");
    }
}

#[test]
fn rank_many_answers_each_query_as_rank_does_on_any_thread_count() {
    let index = corpus();
    let queries = [
        "alpha",
        "bravo",
        "charlie delta",
        "nothing here",
        "delta",
        "alpha bravo",
        "",
        "charlie",
    ];
    let opts = SearchOptions {
        limit: Some(MAX_LIMIT),
        lanes: Some(vec![Lane::Lexical, Lane::Token]),
        ..Default::default()
    };
    let one_by_one: Vec<_> = queries
        .iter()
        .map(|q| index.rank(q, &opts).unwrap())
        .collect();
    assert!(one_by_one.iter().any(|r| r.len() == MAX_LIMIT) && one_by_one[3].is_empty());
    for threads in [
        Some(1),
        Some(3),
        Some(queries.len() + 5),
        Some(MAX_RANK_THREADS * 2),
        None,
    ] {
        let many = index.rank_many(&queries, &opts, threads).unwrap();
        assert_eq!(many, one_by_one, "threads {threads:?}");
    }
    assert!(index
        .rank_many::<&str>(&[], &opts, None)
        .unwrap()
        .is_empty());
}

#[test]
fn rank_many_refuses_zero_threads_a_query_vector_and_empty_lanes() {
    let index = corpus();
    let code = |opts: &SearchOptions, threads| {
        index
            .rank_many(&["alpha"], opts, threads)
            .unwrap_err()
            .code()
    };
    assert_eq!(code(&SearchOptions::default(), Some(0)), "invalid_argument");
    assert_eq!(code(&opts(None, false), None), "invalid_argument");
    let no_lanes = SearchOptions {
        lanes: Some(vec![]),
        ..Default::default()
    };
    assert_eq!(code(&no_lanes, Some(2)), "invalid_argument");
}
