//! Slow, obvious oracles for the fast paths, compared by property tests (STYLE: Tests): BM25
//! as the formula reads, weighted RRF by its definition, and the chunker's invariants. Each
//! shrunk failure is pinned below its property as a named test.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use wikidex::analyze::{Analyzer, Language};
use wikidex::chunk::{split, ChunkConfig, Span};
use wikidex::fusion::{lane_rank, rrf, Fused, LaneRanking};
use wikidex::{Index, IndexBuilder, Lane, SearchOptions};

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Shrunk failures are pinned as named tests instead of files beside the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// BM25

/// The document alphabet: twelve words that are not stopwords and stem to distinct terms.
const WORDS: [&str; 12] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima",
];

/// Query words: the alphabet, a stopword, a word no document has, and page keys (which the
/// engine indexes with every chunk, as it does titles).
const QUERY_WORDS: [&str; 18] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "the", "zulu", "d0", "d1", "d2", "d10",
];

/// A corpus: one body per page `global/d{i}.md`.
fn body(words: &[usize]) -> String {
    words
        .iter()
        .map(|&w| WORDS[w])
        .collect::<Vec<_>>()
        .join(" ")
}

fn build(bodies: &[String]) -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (i, text) in bodies.iter().enumerate() {
        b.add_file(&format!("global/d{i}.md"), text.as_bytes())
            .unwrap();
    }
    let (index, report) = b.build().unwrap();
    assert_eq!(report.pages, bodies.len());
    assert_eq!(
        index.chunk_count(),
        bodies.len(),
        "every body is short enough for one chunk"
    );
    index
}

/// BM25 as the formula reads, in f64: each page is one chunk indexed as key + title + body
/// (a page without frontmatter or heading has its key as title, and no summary or tags), the
/// documents in the engine's page order (by key, as strings). Returns `(key, score)` of every
/// document containing a query term, best first, ties in page order.
fn oracle_bm25(bodies: &[String], query: &str, k1: f64, b: f64) -> Vec<(String, f64)> {
    let analyzer = Analyzer::new(Language::English);
    let mut docs: Vec<(String, Vec<String>)> = bodies
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let key = format!("d{i}");
            let terms = analyzer.terms(&format!("{key} {key} {text}"));
            (key, terms)
        })
        .collect();
    docs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut qterms: Vec<(String, f64)> = Vec::new();
    for t in analyzer.terms(query) {
        match qterms.iter_mut().find(|(q, _)| *q == t) {
            Some((_, n)) => *n += 1.0,
            None => qterms.push((t, 1.0)),
        }
    }
    let n = docs.len() as f64;
    let avgdl = docs.iter().map(|(_, t)| t.len() as f64).sum::<f64>() / n;
    let df = |term: &str| {
        docs.iter()
            .filter(|(_, t)| t.iter().any(|x| x == term))
            .count() as f64
    };
    let mut scored: Vec<(usize, f64)> = Vec::new();
    for (d, (_, terms)) in docs.iter().enumerate() {
        let dl = terms.len() as f64;
        let mut score = 0.0;
        let mut matched = false;
        for (q, weight) in &qterms {
            let tf = terms.iter().filter(|x| *x == q).count() as f64;
            if tf == 0.0 {
                continue;
            }
            matched = true;
            let df = df(q);
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            score += weight * idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avgdl));
        }
        if matched {
            scored.push((d, score));
        }
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored
        .into_iter()
        .map(|(d, s)| (docs[d].0.clone(), s))
        .collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
}

/// Compares the lexical lane's top 10 with the oracle's: the same pages in the same order
/// (pages whose oracle scores are within float noise of each other may swap), each with the
/// oracle's score within 1e-4 relative, and exact ties in page order.
fn check_bm25(bodies: &[String], query: &str) -> Result<(), String> {
    let index = build(bodies);
    let opts = SearchOptions {
        lanes: Some(vec![Lane::Lexical]),
        limit: Some(10),
        snippets: false,
        ..Default::default()
    };
    let ranked = index.rank(query, &opts).map_err(|e| e.to_string())?;
    let hits = index.search(query, &opts).map_err(|e| e.to_string())?.hits;
    let ranked_keys: Vec<&str> = ranked
        .iter()
        .map(|r| index.pages()[r.page].key.as_str())
        .collect();
    let hit_keys: Vec<&str> = hits.iter().map(|h| h.key.as_str()).collect();
    if ranked_keys != hit_keys {
        return Err(format!(
            "rank() {ranked_keys:?} differs from search() {hit_keys:?}"
        ));
    }
    let engine: Vec<(&str, f64, usize)> = hits
        .iter()
        .zip(&ranked)
        .map(|(h, r)| {
            let lexical = h
                .lanes
                .iter()
                .find(|l| l.lane == Lane::Lexical)
                .and_then(|l| l.score);
            (
                h.key.as_str(),
                f64::from(lexical.expect("the lexical lane scored the hit")),
                r.chunk,
            )
        })
        .collect();
    let bm25 = index.config().bm25;
    let oracle = oracle_bm25(bodies, query, f64::from(bm25.k1), f64::from(bm25.b));
    let oracle_score: HashMap<&str, f64> = oracle.iter().map(|(k, s)| (k.as_str(), *s)).collect();
    let top: Vec<&(String, f64)> = oracle.iter().take(10).collect();
    if engine.len() != top.len() {
        return Err(format!("engine returned {engine:?}, oracle {top:?}"));
    }
    for (i, ((key, score, _), (okey, oscore))) in engine.iter().zip(&top).enumerate() {
        let Some(&expected) = oracle_score.get(key) else {
            return Err(format!(
                "rank {i}: {key} matches no query term; oracle {top:?}"
            ));
        };
        if !close(*score, expected, 1e-4) {
            return Err(format!("rank {i}: {key} scored {score}, oracle {expected}"));
        }
        if key != okey && !close(expected, *oscore, 1e-5) {
            return Err(format!("rank {i}: engine {engine:?}\noracle {top:?}"));
        }
    }
    for w in engine.windows(2) {
        if w[0].1 == w[1].1 && w[0].2 > w[1].2 {
            return Err(format!("tie not in chunk order: {engine:?}"));
        }
    }
    Ok(())
}

fn bodies() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::collection::vec(0..WORDS.len(), 0..=40), 1..=30)
        .prop_map(|docs| docs.iter().map(|d| body(d)).collect())
}

fn query() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&QUERY_WORDS[..]), 1..=6).prop_map(|w| w.join(" "))
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn lexical_lane_matches_naive_bm25(bodies in bodies(), query in query()) {
        if let Err(e) = check_bm25(&bodies, &query) {
            prop_assert!(false, "query {:?}: {}", query, e);
        }
    }
}

#[test]
fn lexical_lane_matches_naive_bm25_on_a_fixed_corpus() {
    let bodies: Vec<String> = [
        "alpha alpha bravo",
        "alpha charlie charlie charlie delta echo foxtrot",
        "bravo",
        "",
        "golf hotel india juliet kilo lima alpha",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for q in [
        "alpha",
        "alpha alpha bravo",
        "charlie the zulu",
        "d3",
        "lima d1 alpha",
    ] {
        check_bm25(&bodies, q).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
}

#[test]
fn lexical_lane_breaks_exact_ties_in_page_order() {
    // d0, d1, d10, d11 and d2 hold the same words: equal scores, returned in key order.
    let bodies: Vec<String> = (0..12)
        .map(|i| if i % 3 == 2 { "bravo" } else { "alpha bravo" }.to_string())
        .collect();
    check_bm25(&bodies, "alpha").unwrap();
}

#[test]
fn repeated_query_words_weigh_their_term_by_the_count() {
    let bodies: Vec<String> = ["alpha golf", "bravo golf", "alpha bravo bravo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    check_bm25(&bodies, "alpha bravo bravo bravo").unwrap();
}

// ---------------------------------------------------------------------------------------------
// RRF

/// A fused result as the oracle spells it: chunk, fused score, per lane (in [`Lane::ALL`]
/// order) its rank and lane score.
type FusedRow = (u32, f32, Vec<Option<(u32, f32)>>);

/// Weighted RRF by its definition (DESIGN §3.3–3.4): each lane adds `weight / (k + rank)`,
/// summed in lane order; order by fused score, then lanes matched, then id.
fn naive_rrf(k: f32, lanes: &[LaneRanking]) -> Vec<FusedRow> {
    let chunks: BTreeSet<u32> = lanes
        .iter()
        .flat_map(|l| l.ranked.iter().map(|r| r.0))
        .collect();
    let single = lanes.len() == 1;
    let mut out: Vec<FusedRow> = chunks
        .into_iter()
        .map(|c| {
            let mut score = 0.0f32;
            let mut per_lane = vec![None; Lane::ALL.len()];
            for lane in lanes {
                if let Some(i) = lane.ranked.iter().position(|r| r.0 == c) {
                    let rank = i as u32 + 1;
                    score += lane.weight / (k + rank as f32);
                    let slot = Lane::ALL.iter().position(|l| *l == lane.lane).unwrap();
                    per_lane[slot] = Some((rank, lane.ranked[i].1));
                }
            }
            (c, score, per_lane)
        })
        .collect();
    let matched = |r: &[Option<(u32, f32)>]| r.iter().filter(|x| x.is_some()).count();
    if single {
        // One lane: nothing to combine, its own order stands (whatever its weight).
        let rank = |r: &FusedRow| r.2.iter().flatten().map(|x| x.0).min().unwrap_or(u32::MAX);
        out.sort_by_key(rank);
        return out;
    }
    out.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| matched(&b.2).cmp(&matched(&a.2)))
            .then_with(|| a.0.cmp(&b.0))
    });
    out
}

fn fused_view(f: &[Fused]) -> Vec<FusedRow> {
    f.iter()
        .map(|f| {
            let ranks = Lane::ALL
                .iter()
                .map(|&l| lane_rank(f, l).map(|r| (r.rank, r.score)))
                .collect();
            (f.chunk, f.score, ranks)
        })
        .collect()
}

fn check_rrf(k: f32, lanes: &[LaneRanking]) -> Result<(), String> {
    let got = fused_view(&rrf(k, lanes, |a: u32, b: u32| a.cmp(&b)));
    let want = naive_rrf(k, lanes);
    if got.len() != want.len() {
        return Err(format!(
            "{} fused results, expected {}",
            got.len(),
            want.len()
        ));
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if g.0 != w.0 || g.1.to_bits() != w.1.to_bits() || g.2 != w.2 {
            return Err(format!(
                "position {i}: got {g:?}, expected {w:?}\ngot {got:?}\nexpected {want:?}"
            ));
        }
    }
    // The definition in exact arithmetic agrees with the f32 sums.
    for (c, score, ranks) in &want {
        let exact: f64 = lanes
            .iter()
            .filter_map(|l| {
                let slot = Lane::ALL.iter().position(|x| *x == l.lane).unwrap();
                ranks[slot].map(|(r, _)| f64::from(l.weight) / (f64::from(k) + f64::from(r)))
            })
            .sum();
        if !close(f64::from(*score), exact, 1e-5) && exact > 1e-30 {
            return Err(format!("chunk {c}: fused {score}, exact {exact}"));
        }
    }
    Ok(())
}

fn weight() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(0.0f32),
        Just(0.75f32),
        Just(1.5f32),
        Just(2.0f32),
        0.0f32..=100.0
    ]
}

fn rrf_k() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(60.0f32),
        Just(1.0f32),
        Just(1000.0f32),
        1.0f32..=1000.0
    ]
}

/// A lane's ranking: distinct chunk ids (from a small range, so lanes overlap), best first,
/// with arbitrary lane scores.
fn ranked() -> impl Strategy<Value = Vec<(u32, f32)>> {
    prop::collection::vec((0u32..30, 0.0f32..10.0), 0..25).prop_map(|v| {
        let mut seen = BTreeSet::new();
        v.into_iter().filter(|(c, _)| seen.insert(*c)).collect()
    })
}

/// One to three distinct lanes, in any order.
fn lanes(zero_weights: bool) -> impl Strategy<Value = Vec<LaneRanking>> {
    let lane_order = Just(Lane::ALL.to_vec()).prop_shuffle();
    let w = if zero_weights {
        Just(0.0f32).boxed()
    } else {
        weight().boxed()
    };
    (
        lane_order,
        1usize..=3,
        prop::collection::vec((w, ranked()), 3),
    )
        .prop_map(|(order, n, parts)| {
            order
                .into_iter()
                .take(n)
                .zip(parts)
                .map(|(lane, (weight, ranked))| LaneRanking {
                    lane,
                    weight,
                    ranked,
                })
                .collect()
        })
}

fn single_lane() -> impl Strategy<Value = Vec<LaneRanking>> {
    (prop::sample::select(Lane::ALL.to_vec()), weight(), ranked()).prop_map(
        |(lane, weight, ranked)| {
            vec![LaneRanking {
                lane,
                weight,
                ranked,
            }]
        },
    )
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn rrf_matches_its_definition(k in rrf_k(), lanes in lanes(false)) {
        if let Err(e) = check_rrf(k, &lanes) {
            prop_assert!(false, "k {} lanes {:?}: {}", k, lanes, e);
        }
    }

    #[test]
    fn rrf_of_one_lane_matches_its_definition(k in rrf_k(), lanes in single_lane()) {
        if let Err(e) = check_rrf(k, &lanes) {
            prop_assert!(false, "k {} lanes {:?}: {}", k, lanes, e);
        }
    }

    #[test]
    fn rrf_with_zero_weights_matches_its_definition(k in rrf_k(), lanes in lanes(true)) {
        if let Err(e) = check_rrf(k, &lanes) {
            prop_assert!(false, "k {} lanes {:?}: {}", k, lanes, e);
        }
    }
}

fn lane(lane: Lane, weight: f32, chunks: &[u32]) -> LaneRanking {
    LaneRanking {
        lane,
        weight,
        ranked: chunks.iter().map(|&c| (c, 1.0)).collect(),
    }
}

#[test]
fn rrf_of_no_lanes_is_empty() {
    assert!(rrf(60.0, &[], |a: u32, b: u32| a.cmp(&b)).is_empty());
}

#[test]
fn rrf_of_one_zero_weight_lane_keeps_the_lane_order() {
    check_rrf(60.0, &[lane(Lane::Token, 0.0, &[5, 2, 9])]).unwrap();
    let f = rrf(
        60.0,
        &[lane(Lane::Token, 0.0, &[5, 2, 9])],
        |a: u32, b: u32| a.cmp(&b),
    );
    assert_eq!(f.iter().map(|f| f.chunk).collect::<Vec<_>>(), [5, 2, 9]);
}

#[test]
fn rrf_ties_between_lanes_of_equal_weight_and_rank_go_to_the_lower_id() {
    check_rrf(
        60.0,
        &[
            lane(Lane::Lexical, 1.0, &[7, 3]),
            lane(Lane::Token, 1.0, &[3, 7]),
        ],
    )
    .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Chunker

/// Words, including multi-byte ones, a zero-width space inside a word, abbreviations and
/// numbers with dots (sentence-boundary edge cases).
const CHUNK_WORDS: [&str; 20] = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "revenue",
    "churn",
    "naïve",
    "日本語",
    "Ωmega",
    "e\u{301}cole",
    "zero\u{200b}width",
    "U.S.",
    "1.5",
    "etc.)",
    "x.Y",
    "\"quoted\"",
    "**bold**",
    "`code`",
    "[[link]]",
];

const WORD_SEPARATORS: [&str; 6] = [" ", " ", " ", "\t", "\u{a0}", "\u{3000}"];
const SENTENCE_ENDS: [&str; 5] = [".", "?", "!", "", "。"];
const PARAGRAPH_SEPARATORS: [&str; 6] = [
    "\n\n",
    "\n\n",
    "\n\n\n",
    "\n \n",
    "\r\n\r\n",
    "\n\u{3000}\n",
];

fn sentence() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            (
                prop::sample::select(&CHUNK_WORDS[..]),
                prop::sample::select(&WORD_SEPARATORS[..]),
            ),
            1..=25,
        ),
        prop::sample::select(&SENTENCE_ENDS[..]),
    )
        .prop_map(|(words, end)| {
            let mut s = String::new();
            for (i, (w, sep)) in words.iter().enumerate() {
                if i > 0 {
                    s.push_str(sep);
                }
                s.push_str(w);
            }
            s.push_str(end);
            s
        })
}

/// A block: a paragraph of sentences (some with soft line breaks), a heading, a fenced code
/// block with a blank line inside, or a list.
fn block() -> impl Strategy<Value = String> {
    let paragraph = prop::collection::vec((sentence(), prop::bool::weighted(0.2)), 1..=10)
        .prop_map(|s| {
            let mut p = String::new();
            for (i, (sentence, newline)) in s.iter().enumerate() {
                if i > 0 {
                    p.push_str(if *newline { "\n" } else { " " });
                }
                p.push_str(sentence);
            }
            p
        });
    prop_oneof![
        6 => paragraph,
        2 => (1usize..=3, sentence()).prop_map(|(n, s)| format!("{} {s}", "#".repeat(n))),
        1 => (sentence(), sentence()).prop_map(|(a, b)| format!("```sql\n{a}\n\n{b}\n```")),
        1 => prop::collection::vec(sentence(), 1..=5).prop_map(|items| items.iter().map(|i| format!("- {i}")).collect::<Vec<_>>().join("\n")),
    ]
}

fn page_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(&["", "", "\n", "  ", "\n\n"][..]),
        prop::collection::vec(
            (block(), prop::sample::select(&PARAGRAPH_SEPARATORS[..])),
            0..=12,
        ),
        prop::sample::select(&["", "\n", "\n\n  "][..]),
    )
        .prop_map(|(lead, blocks, tail)| {
            let mut t = lead.to_string();
            for (i, (b, sep)) in blocks.iter().enumerate() {
                if i > 0 {
                    t.push_str(sep);
                }
                t.push_str(b);
            }
            t.push_str(tail);
            t
        })
}

fn chunk_config() -> impl Strategy<Value = ChunkConfig> {
    (16u32..=80).prop_flat_map(|max| {
        (0..=(max - 1) / 2).prop_map(move |overlap| ChunkConfig {
            max_tokens: max,
            overlap_tokens: overlap,
        })
    })
}

fn tokens(s: &str) -> usize {
    s.split_whitespace().count()
}

fn check_chunks(text: &str, cfg: &ChunkConfig) -> Result<Vec<Span>, String> {
    assert!(cfg.validate().is_ok());
    let spans = split(text, cfg);
    if spans.is_empty() {
        return Err("no chunks".into());
    }
    for s in &spans {
        if s.start > s.end || s.end > text.len() || text.get(s.start..s.end).is_none() {
            return Err(format!(
                "span {s:?} is not a slice of the {}-byte text",
                text.len()
            ));
        }
    }
    Ok(spans)
}

fn texts<'a>(text: &'a str, spans: &[Span]) -> Vec<&'a str> {
    spans.iter().map(|s| &text[s.start..s.end]).collect()
}

/// The first non-whitespace byte no span covers, if any.
fn uncovered(text: &str, spans: &[Span]) -> Option<usize> {
    let mut covered = vec![false; text.len()];
    for s in spans {
        covered[s.start..s.end].iter_mut().for_each(|c| *c = true);
    }
    text.char_indices()
        .find(|&(i, c)| !c.is_whitespace() && !covered[i])
        .map(|(i, _)| i)
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn chunker_returns_at_least_one_chunk_of_slices_of_the_text(text in page_text(), cfg in chunk_config()) {
        let r = check_chunks(&text, &cfg);
        prop_assert!(r.is_ok(), "{:?}: {:?}", text, r);
    }

    #[test]
    fn chunker_never_exceeds_max_tokens(text in page_text(), cfg in chunk_config()) {
        let spans = check_chunks(&text, &cfg).unwrap();
        for t in texts(&text, &spans) {
            prop_assert!(tokens(t) <= cfg.max_tokens as usize, "{} tokens > {:?} in {:?}\nof {:?}", tokens(t), cfg, t, text);
        }
    }

    #[test]
    fn chunker_starts_strictly_increase_and_ends_never_decrease(text in page_text(), cfg in chunk_config()) {
        let spans = check_chunks(&text, &cfg).unwrap();
        for w in spans.windows(2) {
            prop_assert!(w[0].start < w[1].start && w[0].end <= w[1].end, "{:?} then {:?} in {:?}", w[0], w[1], text);
        }
    }

    #[test]
    fn chunker_covers_every_non_whitespace_byte(text in page_text(), cfg in chunk_config()) {
        let spans = check_chunks(&text, &cfg).unwrap();
        let gap = uncovered(&text, &spans);
        prop_assert!(gap.is_none(), "byte {:?} uncovered by {:?} in {:?}", gap, spans, text);
    }

    #[test]
    fn chunker_overlap_never_exceeds_the_configured_tokens(text in page_text(), cfg in chunk_config()) {
        let spans = check_chunks(&text, &cfg).unwrap();
        for w in spans.windows(2) {
            let shared = if w[1].start < w[0].end { tokens(&text[w[1].start..w[0].end]) } else { 0 };
            prop_assert!(shared <= cfg.overlap_tokens as usize, "{} shared tokens > {:?}: {:?} {:?} in {:?}", shared, cfg, w[0], w[1], text);
        }
    }

    #[test]
    fn chunker_is_deterministic(text in page_text(), cfg in chunk_config()) {
        prop_assert_eq!(split(&text, &cfg), split(&text, &cfg));
    }
}

#[test]
fn chunker_gives_an_empty_page_one_empty_chunk() {
    for text in ["", "\n", " \n\u{3000}\n\t"] {
        let spans = split(text, &ChunkConfig::default());
        assert_eq!(spans.len(), 1, "{text:?}");
        assert!(text[spans[0].start..spans[0].end].trim().is_empty());
    }
}

#[test]
fn chunker_cuts_one_huge_sentence_at_token_boundaries() {
    let text = vec!["naïve"; 1000].join(" ");
    let cfg = ChunkConfig {
        max_tokens: 16,
        overlap_tokens: 4,
    };
    let spans = check_chunks(&text, &cfg).unwrap();
    assert!(texts(&text, &spans).iter().all(|t| tokens(t) <= 16));
    assert_eq!(uncovered(&text, &spans), None);
}

/// Used to keep the oracle's document order honest: pages are ordered by key as strings.
#[test]
fn pages_are_ordered_by_key_as_strings() {
    let bodies: Vec<String> = (0..12).map(|_| String::new()).collect();
    let index = build(&bodies);
    let keys: Vec<&str> = index.pages().iter().map(|p| p.key.as_str()).collect();
    let mut sorted: BTreeMap<&str, ()> = BTreeMap::new();
    keys.iter().for_each(|k| {
        sorted.insert(k, ());
    });
    assert_eq!(keys, sorted.keys().copied().collect::<Vec<_>>());
    assert_eq!(
        keys.iter()
            .filter(|k| k.cmp(&&"d2") == Ordering::Less)
            .count(),
        4
    );
}
