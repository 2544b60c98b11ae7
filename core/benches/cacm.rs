//! What is measured: building an index from the CACM corpus (3,204 documents); analyzing all
//! 52 judged CACM queries (normalize, stopwords, stem); ranking them with the lexical lane
//! alone (top 100 page positions: what `wikidex eval` and the bm25s comparison time); and
//! answering them as full hits with the lexical lane alone (top 100, no snippets), with the
//! default options (all lanes, top 20, snippets: what a user pays), and with
//! the token lane alone.
//!
//! Corpus: `../shared/data/cacm` in BEIR layout (override with `WIKIDEX_CACM=<dir>`).
//! Before timing, the bench checks the answer: lexical MAP must be at least 0.30.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wikidex::{eval, Index, IndexBuilder, Lane, SearchOptions};

fn cacm_dir() -> PathBuf {
    std::env::var_os("WIKIDEX_CACM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/cacm"))
}

fn build(dir: &std::path::Path) -> Index {
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

fn benches(c: &mut Criterion) {
    let dir = cacm_dir();
    let collection = eval::load_collection(&dir).expect("CACM queries and qrels");
    let index = build(&dir);

    // Check the answer before timing anything.
    let run: HashMap<String, Vec<String>> = collection
        .queries
        .iter()
        .map(|(q, text)| {
            let hits = index.search(text, &lexical_only()).expect("search").hits;
            (q.clone(), hits.into_iter().map(|h| h.key).collect())
        })
        .collect();
    let map = eval::evaluate(&collection, &run).map;
    assert!(
        map >= 0.30,
        "lexical MAP on CACM is {map}, expected >= 0.30"
    );

    let mut g = c.benchmark_group("cacm");
    g.sample_size(20);
    g.bench_function("build", |b| b.iter(|| black_box(build(&dir))));
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
    let analyzer = wikidex::analyze::Analyzer::new(index.config().language);
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
    g.bench_function(
        "query_token_top100",
        run_all(SearchOptions {
            lanes: Some(vec![Lane::Token]),
            ..lexical_only()
        }),
    );
    g.finish();
}

criterion_group!(cacm, benches);
criterion_main!(cacm);
