//! Phrase queries (issue 14): text in double quotes must occur as a phrase. A hit that holds
//! every phrase ranks above every hit that does not, in each lane and fused; the phrase's words
//! are still searched as words, so the other pages come after. Positions are stored in the blob
//! (format v6) unless the configuration turns them off; an index without them searches the
//! words and says so.

use wikidex::{
    ChunkConfig, Config, Index, IndexBuilder, Lane, SearchOptions, SearchResults, NO_POSITIONS,
};

/// `words` is about net revenue many times over without the phrase; `phrase` says it once.
const WIKI: &[(&str, &str)] = &[
    (
        "global/words.md",
        "# Words\n\nRevenue grew. The net effect on revenue was small; net of fees, revenue \
         and net income rose. Revenue, net.",
    ),
    (
        "global/phrase.md",
        "# Phrase\n\nThe report gives net revenue for the quarter, among many other figures \
         about the company and its several divisions and regions.",
    ),
    (
        "global/gap.md",
        "# Gap\n\nCost of sales fell. Cost in sales is a typo. Cost sales is not the phrase.",
    ),
    (
        "global/other.md",
        "# Other\n\nNothing about money here at all.",
    ),
];

fn build_with(config: Config, files: &[(&str, &str)]) -> Index {
    let mut b = IndexBuilder::new(config).unwrap();
    b.file_times(false);
    for (path, text) in files {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

fn build(files: &[(&str, &str)]) -> Index {
    build_with(Config::default(), files)
}

fn search(index: &Index, query: &str, lanes: Option<&[Lane]>) -> SearchResults {
    let opts = SearchOptions {
        lanes: lanes.map(<[Lane]>::to_vec),
        ..Default::default()
    };
    index.search(query, &opts).unwrap()
}

fn keys(r: &SearchResults) -> Vec<&str> {
    r.hits.iter().map(|h| h.key.as_str()).collect()
}

#[test]
fn a_page_with_the_phrase_ranks_above_pages_with_only_its_words_in_every_lane() {
    let index = build(WIKI);
    // Without quotes the page that repeats the words wins.
    assert_eq!(keys(&search(&index, "net revenue", None))[0], "words");
    for lanes in [
        None,
        Some(&[Lane::Lexical][..]),
        Some(&[Lane::Token][..]),
        Some(&[Lane::Lexical, Lane::Token][..]),
    ] {
        let r = search(&index, "\"net revenue\"", lanes);
        assert_eq!(keys(&r), ["phrase", "words"], "lanes {lanes:?}");
        let p = r.phrases.as_ref().expect("a phrase report");
        assert_eq!(p.phrases, ["net revenue"]);
        assert_eq!(p.matched, 1);
        assert_eq!(p.reason, None);
        // `rank` gives the same order.
        let opts = SearchOptions {
            lanes: lanes.map(<[Lane]>::to_vec),
            ..Default::default()
        };
        let ranked = index.rank("\"net revenue\"", &opts).unwrap();
        assert_eq!(index.pages()[ranked[0].page].key, "phrase");
    }
    // Typographic quotes too, and other words beside the phrase.
    let r = search(&index, "quarterly “net revenue” figures", None);
    assert_eq!(keys(&r)[0], "phrase");
    assert_eq!(r.phrases.unwrap().matched, 1);
}

#[test]
fn chunk_hits_that_hold_the_phrase_come_first() {
    let index = build(WIKI);
    let opts = SearchOptions {
        chunks: true,
        ..Default::default()
    };
    let r = index.search("\"net revenue\"", &opts).unwrap();
    assert_eq!(r.hits[0].chunk, "phrase::chunk_0");
    assert_eq!(r.phrases.unwrap().matched, 1);
}

#[test]
fn a_query_without_the_phrase_anywhere_keeps_the_word_order() {
    let index = build(WIKI);
    let r = search(&index, "\"fees income\"", None);
    assert_eq!(keys(&r), keys(&search(&index, "fees income", None)));
    assert_eq!(r.phrases.unwrap().matched, 0);
}

#[test]
fn every_phrase_of_the_query_must_be_held() {
    let index = build(WIKI);
    let r = search(&index, "\"net revenue\" \"cost of sales\"", None);
    let p = r.phrases.as_ref().unwrap();
    assert_eq!(p.phrases, ["net revenue", "cost of sales"]);
    assert_eq!(p.matched, 0, "no page holds both");
}

#[test]
fn a_stopword_in_a_phrase_is_a_gap_of_one_word() {
    let files = [
        ("global/of.md", "Cost of sales fell this year."),
        ("global/in.md", "Cost in sales rose this year."),
        (
            "global/none.md",
            "Cost sales cost sales cost sales, and sales cost.",
        ),
        ("global/two.md", "Cost of the sales, cost of the sales."),
    ];
    let index = build(&files);
    let r = search(&index, "\"cost of sales\"", None);
    let held: Vec<&str> = keys(&r)[..r.phrases.as_ref().unwrap().matched].to_vec();
    let mut held = held;
    held.sort_unstable();
    // `of` stands for any one word: `in` fills the gap too; no gap, or two words, do not.
    assert_eq!(held, ["in", "of"]);
    assert_eq!(keys(&r).len(), 4);
    // Stopwords around the phrase are dropped.
    let r = search(&index, "\"the cost of sales\"", None);
    assert_eq!(r.phrases.unwrap().matched, 2);
}

#[test]
fn a_phrase_does_not_match_across_two_fields() {
    // The title ends with `net`, the body starts with `revenue`.
    let files = [
        (
            "global/a.md",
            "---\ntitle: Figures net\n---\nrevenue is reported monthly.",
        ),
        (
            "global/b.md",
            "---\ntitle: Net revenue\n---\nReported monthly.",
        ),
    ];
    let index = build(&files);
    let r = search(&index, "\"net revenue\"", None);
    assert_eq!(r.phrases.as_ref().unwrap().matched, 1);
    assert_eq!(keys(&r)[0], "b", "the title holds the phrase");
}

#[test]
fn a_quoted_cjk_run_matches_its_bigrams_in_order() {
    let files = [
        ("global/nlp.md", "自然语言处理是人工智能的一个领域。"),
        // Both bigrams of the query's ends, often, but never `然语`.
        ("global/apart.md", "自然 语言 自然 语言 自然 语言 自然 语言"),
    ];
    let index = build(&files);
    assert_eq!(keys(&search(&index, "自然 语言", None))[0], "apart");
    let r = search(&index, "\"自然语言\"", None);
    assert_eq!(keys(&r)[0], "nlp");
    assert_eq!(r.phrases.unwrap().matched, 1);
}

#[test]
fn a_page_hit_shows_a_chunk_that_holds_the_phrase() {
    let config = Config {
        chunk: ChunkConfig {
            max_tokens: 16,
            overlap_tokens: 0,
        },
        ..Default::default()
    };
    let page = "Net income and revenue, revenue and net income, net and revenue again.\n\n\
                Filler words about the weather and the seasons in the north.\n\n\
                The table gives net revenue by region for the year.";
    let index = build_with(
        config,
        &[("global/long.md", page), ("global/x.md", "Other text.")],
    );
    assert!(index.chunks_of("long", None).unwrap().len() >= 3);
    // Without quotes, the chunk that repeats the words is shown.
    assert_eq!(
        search(&index, "net revenue", None).hits[0].chunk,
        "long::chunk_0"
    );
    for lanes in [None, Some(&[Lane::Lexical][..]), Some(&[Lane::Token][..])] {
        let r = search(&index, "\"net revenue\"", lanes);
        assert_eq!(r.hits[0].key, "long");
        let shown = index.chunk(&r.hits[0].chunk).unwrap();
        assert!(
            shown.text.contains("net revenue"),
            "lanes {lanes:?}: {}",
            shown.text
        );
    }
}

#[test]
fn an_unmatched_quote_is_ignored() {
    let index = build(WIKI);
    let r = search(&index, "\"net revenue", None);
    assert!(r.phrases.is_none());
    assert_eq!(keys(&r), keys(&search(&index, "net revenue", None)));
    // A quoted phrase of stopwords only is no phrase.
    assert!(search(&index, "revenue \"of the\"", None).phrases.is_none());
}

#[test]
fn quoted_words_get_no_typo_matches() {
    let index = build(WIKI);
    assert!(!search(&index, "revenuue", None).hits.is_empty());
    let r = search(&index, "\"revenuue\"", Some(&[Lane::Lexical]));
    assert!(r.hits.is_empty(), "{:?}", keys(&r));
    // The same word outside the quotes still gets them.
    let r = search(&index, "\"net revenuue\" revenuue", Some(&[Lane::Lexical]));
    assert!(!r.hits.is_empty());
}

#[test]
fn an_index_without_positions_searches_the_words_and_says_so() {
    let config = Config {
        positions: false,
        ..Default::default()
    };
    let without = build_with(config, WIKI);
    let with = build(WIKI);
    assert!(without.to_bytes().unwrap().len() < with.to_bytes().unwrap().len());
    let r = search(&without, "\"net revenue\"", None);
    let p = r.phrases.as_ref().unwrap();
    assert_eq!(p.reason.as_deref(), Some(NO_POSITIONS));
    assert_eq!(p.matched, 0);
    assert_eq!(keys(&r), keys(&search(&without, "net revenue", None)));
    // The setting is stored: a loaded copy and its writes keep it.
    let loaded = Index::from_bytes(&without.to_bytes().unwrap()).unwrap();
    assert!(!loaded.config().positions);
    let (loaded, _) = loaded
        .upsert_page("global/new.md", "net revenue", &Default::default(), None)
        .unwrap();
    let r = search(&loaded, "\"net revenue\"", None);
    assert_eq!(r.phrases.unwrap().reason.as_deref(), Some(NO_POSITIONS));
}

#[test]
fn positions_keep_the_blob_deterministic() {
    let a = build(WIKI).to_bytes().unwrap();
    let mut reversed = WIKI.to_vec();
    reversed.reverse();
    let b = build(&reversed).to_bytes().unwrap();
    assert!(a == b, "the same pages gave different bytes");
    // A write gives what a fresh build of the result gives.
    let (edited, _) = build(&WIKI[..3])
        .upsert_page(WIKI[3].0, WIKI[3].1, &Default::default(), None)
        .unwrap();
    assert!(
        edited.to_bytes().unwrap() == a,
        "an upsert differs from a build"
    );
    // And the blob round-trips.
    let loaded = Index::from_bytes(&a).unwrap();
    assert!(loaded.to_bytes().unwrap() == a);
    assert_eq!(keys(&search(&loaded, "\"net revenue\"", None))[0], "phrase");
}
