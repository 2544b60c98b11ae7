//! Fusion weights that follow the query: the lexical and token lanes drop out of fusion when
//! the index cannot read enough of the query (`wikidex::lane::evidence`), and say so.

use wikidex::lane::evidence::MIN_KNOWN_SHARE;
use wikidex::{Index, IndexBuilder, Lane, SearchOptions, VectorEncoding};

const WIKI: &[(&str, &str)] = &[
    (
        "global/oncall.md",
        "---\ntitle: On-call rotation\n---\nThe engineer holding the pager this week answers \
         alerts at night.",
    ),
    (
        "global/revenue.md",
        "---\ntitle: Revenue\n---\nRevenue is recognized when an invoice is paid.",
    ),
    (
        "global/travel.md",
        "---\ntitle: Travel\n---\nA night in a hotel on a business trip is paid up to a limit.",
    ),
];

/// The wiki with a toy embedding: one axis per page (oncall, revenue, travel).
fn index() -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let vectors: Vec<Vec<f32>> = (0..3)
        .map(|i| (0..3).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    b.build()
        .unwrap()
        .0
        .with_vectors("toy", "toy-1", &vectors, VectorEncoding::F32)
        .unwrap()
}

/// The query's vector points at the on-call page.
fn towards_oncall() -> SearchOptions {
    SearchOptions {
        query_vector: Some(vec![1.0, 0.0, 0.2]),
        ..Default::default()
    }
}

fn report(r: &wikidex::SearchResults, lane: Lane) -> &wikidex::LaneReport {
    r.lanes.iter().find(|l| l.lane == lane).unwrap()
}

#[test]
fn word_lanes_drop_out_when_the_index_cannot_read_the_query() {
    let index = index();
    // German: only "night" is a word of the index, and it leads the word lanes to the
    // travel page; the semantic lane knows the query is about the pager.
    let r = index
        .search("Wer hält nachts Bereitschaft night", &towards_oncall())
        .unwrap();
    for lane in [Lane::Lexical, Lane::Token] {
        let l = report(&r, lane);
        assert_eq!(l.status.name(), "ok");
        assert!(l.candidates > 0, "{lane:?} still ran");
        assert_eq!(l.weight, 0.0, "{lane:?}");
        assert!(l.known.unwrap() < MIN_KNOWN_SHARE, "{:?}", l.known);
    }
    let semantic = report(&r, Lane::Semantic);
    assert_eq!((semantic.weight, semantic.known), (2.0, None));
    let keys: Vec<&str> = r.hits.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(
        keys,
        ["oncall", "travel", "revenue"],
        "the semantic lane's order"
    );
    // The lanes' ranks are still shown; a lane with weight 0 adds nothing.
    let ranked = r
        .hits
        .iter()
        .flat_map(|h| &h.lanes)
        .find(|l| l.lane == Lane::Lexical && l.rank.is_some())
        .unwrap();
    assert_eq!(ranked.contribution, Some(0.0));
}

#[test]
fn word_lanes_keep_their_weights_for_a_query_the_index_reads() {
    let index = index();
    let r = index
        .search("hotel night business trip", &towards_oncall())
        .unwrap();
    assert_eq!(report(&r, Lane::Lexical).weight, 1.5);
    assert_eq!(report(&r, Lane::Token).weight, 0.75);
    assert_eq!(report(&r, Lane::Lexical).known, Some(1.0));
    assert_eq!(
        r.hits[0].key, "travel",
        "two lanes outvote the semantic lane"
    );
}

#[test]
fn without_the_semantic_lane_the_word_lanes_keep_their_weights() {
    let index = index();
    // No query vector: the semantic lane is skipped, and the word lanes are all there is.
    let r = index
        .search(
            "Wer hält nachts Bereitschaft night",
            &SearchOptions::default(),
        )
        .unwrap();
    assert_eq!(report(&r, Lane::Semantic).status.name(), "skipped");
    let lexical = report(&r, Lane::Lexical);
    assert_eq!((lexical.weight, lexical.known), (1.5, None));
    let mut keys: Vec<&str> = r.hits.iter().map(|h| h.key.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["oncall", "travel"], "the pages that say night");
}

#[test]
fn a_typo_or_the_word_being_typed_counts_as_read_at_its_credit() {
    let index = index();
    // `invoise` is one edit from `invoice`, `recog` the start of `recognized`: each is read
    // at the credit the token lane gives it, a half.
    for query in ["invoise", "recog"] {
        let r = index.search(query, &towards_oncall()).unwrap();
        let known = report(&r, Lane::Lexical).known.unwrap();
        assert!((known - 0.5).abs() < 1e-6, "{query}: {known}");
    }
    let r = index.search("zzqxv", &towards_oncall()).unwrap();
    assert_eq!(report(&r, Lane::Token).known, Some(0.0));
}
