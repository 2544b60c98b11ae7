//! Facet counts over every matching page, and honest empty results.

use std::sync::Arc;

use wikidex::{
    Embedder, Index, IndexBuilder, SearchOptions, Session, VectorEncoding, NO_QUERY_TERMS,
};

const WIKI: &[(&str, &str)] = &[
    (
        "global/revenue.md",
        "---\ntype: metric\ntags: [finance, Metrics]\n---\nRevenue is recognized monthly.",
    ),
    (
        "global/arr.md",
        "---\ntype: metric\ntags: [finance, metrics, finance]\n---\nAnnual recurring revenue.",
    ),
    (
        "global/refunds.md",
        "---\ntype: runbook\ntags: [finance, ops]\n---\nRefunds lower revenue in their month.",
    ),
    (
        "global/oncall.md",
        "---\ntype: runbook\ntags: [ops]\n---\nPage the on-call engineer.",
    ),
    (
        "global/pii.md",
        "---\nusage_mode: always\ntags: [finance]\n---\nNever export revenue per customer with emails.",
    ),
    ("global/untyped.md", "Revenue notes without a type or tags."),
];

fn index() -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

fn facets_on() -> SearchOptions {
    SearchOptions {
        facets: true,
        ..Default::default()
    }
}

fn counts(v: &[wikidex::FacetCount]) -> Vec<(&str, usize)> {
    v.iter().map(|c| (c.value.as_str(), c.count)).collect()
}

#[test]
fn facets_count_every_matching_page_not_only_the_hits() {
    let index = index();
    let opts = SearchOptions {
        limit: Some(1),
        ..facets_on()
    };
    let r = index.search("revenue", &opts).unwrap();
    assert_eq!(r.hits.len(), 1);
    let f = r.facets.expect("facets asked for");
    // revenue, arr, refunds, untyped (the always page is not a match: it is not ranked).
    assert_eq!(f.pages, 4);
    // A tag counts once per page, whatever its case or repeats.
    assert_eq!(
        counts(&f.tags),
        [("finance", 3), ("metrics", 2), ("ops", 1)]
    );
    assert_eq!(counts(&f.types), [("metric", 2), ("runbook", 1)]);
}

#[test]
fn facets_follow_the_filters_and_the_typed_prefix() {
    let index = index();
    let opts = SearchOptions {
        types: vec!["runbook".into()],
        ..facets_on()
    };
    let f = index.search("revenue", &opts).unwrap().facets.unwrap();
    assert_eq!(f.pages, 1);
    assert_eq!(counts(&f.types), [("runbook", 1)]);
    // The last word is matched as a prefix, as the token lane does while typing.
    let f = index.search("reven", &facets_on()).unwrap().facets.unwrap();
    assert_eq!(f.pages, 4);
}

#[test]
fn facets_are_absent_unless_asked_for_and_empty_without_a_match() {
    let index = index();
    assert!(index
        .search("revenue", &SearchOptions::default())
        .unwrap()
        .facets
        .is_none());
    let f = index.search("zebra", &facets_on()).unwrap().facets.unwrap();
    assert_eq!((f.pages, f.tags.len(), f.types.len()), (0, 0, 0));
}

/// An embedder that maps every text to the same direction: without care, the semantic lane
/// would rank every page for any query.
struct Flat;

impl Embedder for Flat {
    fn model_id(&self) -> &str {
        "flat"
    }
    fn fingerprint(&self) -> &str {
        "flat-1"
    }
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, texts: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|_| vec![1.0, 0.5]).collect())
    }
}

#[test]
fn an_empty_or_all_stopword_query_returns_nothing_and_says_why() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.embedder(Arc::new(Flat))
        .vector_encoding(VectorEncoding::F32);
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let index = Session::new(b.build().unwrap().0);
    index.set_model(Some(Arc::new(Flat))).unwrap();
    for q in ["", "   ", "the of and", "?!"] {
        let r = index.search(q, &SearchOptions::default()).unwrap();
        assert!(r.hits.is_empty(), "{q:?} must find nothing");
        for l in &r.lanes {
            assert_eq!(l.status.name(), "skipped", "{q:?}: {:?}", l.lane);
            assert_eq!(l.status.reason(), Some(NO_QUERY_TERMS));
        }
    }
    // A word the wiki has still runs every lane, the semantic one included.
    let r = index.search("revenue", &SearchOptions::default()).unwrap();
    assert!(r.lanes.iter().all(|l| l.status.name() == "ok"));
    // A query vector given by the caller is a query, words or not.
    let opts = SearchOptions {
        query_vector: Some(vec![1.0, 0.5]),
        ..Default::default()
    };
    let r = index.search("", &opts).unwrap();
    assert!(!r.hits.is_empty());
}
