//! What is measured: building an index from the CACM corpus (3,204 documents); loading its
//! blob whole (`Index::from_bytes`: what `wikidex search` and `Index.fromBytes` pay before a
//! first query); analyzing all
//! 52 judged CACM queries (normalize, stopwords, stem); ranking them with the lexical lane
//! alone (top 100 page positions: what `wikidex eval` and the bm25s comparison time); and
//! answering them as full hits with the lexical lane alone (top 100, no snippets), with the
//! default options (all lanes, top 20, snippets: what a user pays), and with
//! the token lane alone.
//!
//! Corpus: CACM in BEIR layout, from `WIKIDEX_CACM=<dir>` or else `shared/data/cacm` in the
//! nearest folder above this crate that has one (`../shared/data` of the repository, as in the
//! Makefile, whether the checkout is the main one or a worktree beside it).
//!
//! Before timing, each path's answer is checked: the build gives the documented page and chunk
//! counts and the same bytes every time; the load gives the index the blob was written from
//! (the same bytes again); query analysis gives the terms search reports; the
//! lexical, token and default runs score the README's figures ("Quality") within
//! [`TOLERANCE`]; and ranking gives the same pages as the lexical hits. `cargo test --benches`
//! runs these checks once without timing.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wikidex::eval::{self, Collection, Metrics};
use wikidex::{Index, IndexBuilder, Lane, SearchOptions};

/// How far a measured figure may be from the README's (which rounds to three decimals).
const TOLERANCE: f64 = 0.005;

/// The README's figures for CACM, as (nDCG@10, MAP, recall@100).
const README_LEXICAL: (f64, f64, f64) = (0.522, 0.361, 0.692);
const README_TOKEN: (f64, f64, f64) = (0.328, 0.194, 0.563);
/// "With only the lexical and token lanes (`--no-embed`), fusion scores ... CACM 0.450"
/// (nDCG@10; the bench's index has no vectors, so the default options fuse those two lanes).
const README_LEXICAL_AND_TOKEN_NDCG: f64 = 0.450;

/// CACM's size: "3,204 docs" and "CACM's 3,298 chunks" (README).
const CACM_PAGES: usize = 3_204;
const CACM_CHUNKS: usize = 3_298;

fn cacm_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WIKIDEX_CACM") {
        return PathBuf::from(dir);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/data/cacm"))
        .find(|d| d.join("corpus.jsonl").is_file())
        .unwrap_or_else(|| {
            panic!(
                "no shared/data/cacm above {}; set WIKIDEX_CACM=<dir> (BEIR layout)",
                here.display()
            )
        })
}

fn build(dir: &Path) -> Index {
    let mut b = IndexBuilder::new(Default::default()).expect("default config");
    b.add_beir_corpus(&dir.join("corpus.jsonl"))
        .expect("CACM corpus");
    b.build().expect("build").0
}

fn lexical_only() -> SearchOptions {
    SearchOptions {
        limit: Some(100),
        lanes: Some(vec![Lane::Lexical]),
        snippets: false,
        ..Default::default()
    }
}

fn token_only() -> SearchOptions {
    SearchOptions {
        lanes: Some(vec![Lane::Token]),
        ..lexical_only()
    }
}

/// Every query's hits (page keys, best first) with `opts`.
fn run(
    index: &Index,
    collection: &Collection,
    opts: &SearchOptions,
) -> HashMap<String, Vec<String>> {
    collection
        .queries
        .iter()
        .map(|(q, text)| {
            let hits = index.search(text, opts).expect("search").hits;
            (q.clone(), hits.into_iter().map(|h| h.key).collect())
        })
        .collect()
}

fn assert_figure(what: &str, got: f64, documented: f64) {
    assert!(
        (got - documented).abs() <= TOLERANCE,
        "{what} on CACM is {got:.4}, the README says {documented:.3}: fix the regression, or \
         update the README (and this bench) if the change is meant"
    );
}

fn assert_metrics(what: &str, m: &Metrics, (ndcg, map, recall): (f64, f64, f64)) {
    assert_figure(&format!("{what} nDCG@10"), m.ndcg_10, ndcg);
    assert_figure(&format!("{what} MAP"), m.map, map);
    assert_figure(&format!("{what} recall@100"), m.recall_100, recall);
}

/// Checks the answer of every path the bench times, the lexical hits being the reference.
fn check_answers(dir: &Path, index: &Index, collection: &Collection) {
    // build
    assert_eq!(index.pages().len(), CACM_PAGES, "pages");
    assert_eq!(index.chunk_count(), CACM_CHUNKS, "chunks");
    assert!(
        build(dir).to_bytes().unwrap() == index.to_bytes().unwrap(),
        "building CACM twice gave different bytes"
    );

    // load: the index the blob was written from.
    let bytes = index.to_bytes().unwrap();
    let loaded = Index::from_bytes(&bytes).expect("load");
    assert!(
        loaded.to_bytes().unwrap() == bytes,
        "a load changed the index"
    );

    // query_lexical_top100 (the reference), query_token_top100, query_default_top20
    let lexical = run(index, collection, &lexical_only());
    assert_metrics(
        "lexical",
        &eval::evaluate(collection, &lexical),
        README_LEXICAL,
    );
    let token = run(index, collection, &token_only());
    assert_metrics("token", &eval::evaluate(collection, &token), README_TOKEN);
    let default = SearchOptions::default();
    for (_, text) in &collection.queries {
        let r = index.search(text, &default).expect("search");
        let ran: Vec<&str> = r.lanes.iter().map(|l| l.status.name()).collect();
        assert_eq!(ran, ["ok", "skipped", "ok"], "lanes of the default search");
        assert_eq!(r.hits.len(), 20, "{text:?}: default limit");
        assert!(
            r.hits.iter().all(|h| h.snippet.is_some()),
            "{text:?}: snippets"
        );
    }
    // The README's figure is eval's: top 100 (each lane then contributes 100 candidates; the
    // default limit of 20 gives fusion 60, which moves a few top-10 places).
    let top100 = SearchOptions {
        limit: Some(100),
        ..SearchOptions::default()
    };
    let fused = eval::evaluate(collection, &run(index, collection, &top100));
    assert_figure(
        "lexical + token nDCG@10",
        fused.ndcg_10,
        README_LEXICAL_AND_TOKEN_NDCG,
    );

    // rank_lexical_top100: the same pages as the lexical hits.
    let pages = index.pages();
    for (q, text) in &collection.queries {
        let ranked: Vec<&str> = index
            .rank(text, &lexical_only())
            .expect("rank")
            .iter()
            .map(|r| pages[r.page].key.as_str())
            .collect();
        assert_eq!(ranked, lexical[q], "query {q}: rank() and search() differ");
    }

    // analyze_queries: the terms search reports.
    let analyzer = wikidex::analyze::Analyzer::new(index.config().language());
    for (_, text) in &collection.queries {
        let terms: Vec<String> = analyzer
            .query(text)
            .iter()
            .map(|q| q.term.to_string())
            .collect();
        let searched = index.search(text, &lexical_only()).expect("search").terms;
        assert_eq!(terms, searched, "{text:?}");
    }
}

fn benches(c: &mut Criterion) {
    let dir = cacm_dir();
    let collection = eval::load_collection(&dir).expect("CACM queries and qrels");
    let index = build(&dir);
    check_answers(&dir, &index, &collection);

    let mut g = c.benchmark_group("cacm");
    g.sample_size(20);
    g.bench_function("build", |b| b.iter(|| black_box(build(&dir))));
    let bytes = index.to_bytes().expect("encode");
    g.bench_function("load", |b| {
        b.iter(|| black_box(Index::from_bytes(&bytes).expect("load")))
    });
    g.throughput(Throughput::Elements(collection.queries.len() as u64));
    let queries: Vec<&str> = collection.queries.iter().map(|(_, t)| t.as_str()).collect();
    let queries = &queries;
    let index = &index;
    let run_all = |opts: SearchOptions| {
        move |b: &mut criterion::Bencher<'_>| {
            b.iter(|| {
                for q in queries {
                    black_box(index.search(q, &opts).expect("search"));
                }
            })
        }
    };
    let analyzer = wikidex::analyze::Analyzer::new(index.config().language());
    g.bench_function("analyze_queries", |b| {
        b.iter(|| {
            for q in queries {
                black_box(analyzer.query(q));
            }
        })
    });
    g.bench_function("rank_lexical_top100", |b| {
        b.iter(|| {
            for q in queries {
                black_box(index.rank(q, &lexical_only()).expect("rank"));
            }
        })
    });
    g.bench_function("query_lexical_top100", run_all(lexical_only()));
    g.bench_function("query_default_top20", run_all(SearchOptions::default()));
    g.bench_function("query_token_top100", run_all(token_only()));
    g.finish();
}

criterion_group!(cacm, benches);
criterion_main!(cacm);
