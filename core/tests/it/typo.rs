//! Typo tolerance (issue 14, DESIGN §3.1): a query word the index does not know matches the
//! words of the text one edit away (words of 5 to 8 characters) or two (9 or more), below exact
//! matches, in the lexical and token lanes; `SearchOptions::typos: false` turns it off.

use std::sync::OnceLock;

use wikidex::lane::typo::{MAX_TYPO_EXPANSIONS, TYPO_DISCOUNT};
use wikidex::{Config, Index, IndexBuilder, Lane, Language, SearchOptions, SearchResults};

use crate::check;

const WIKI: &[(&str, &str)] = &[
    (
        "global/incident.md",
        "---\ntitle: Incident response\nsummary: What to do when production is down.\n---\n\
         During an incident, call the on-call engineer, then write a postmortem.",
    ),
    (
        "global/accountant.md",
        "---\ntitle: Month end\n---\nAsk the accountant before closing the books.",
    ),
    (
        "global/accountancy.md",
        "---\ntitle: Finance team\n---\nThe accountancy team owns the ledger.",
    ),
    (
        "global/revenue.md",
        "---\ntitle: Revenue\n---\nRevenue is recognized monthly when an invoice is paid.",
    ),
];

fn wiki() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        for (path, text) in WIKI {
            b.add_file(path, text.as_bytes()).unwrap();
        }
        b.build().unwrap().0
    })
}

/// Each lane that typo tolerance applies to alone, then both fused (no model: the index has no
/// vectors, so the default search fuses lexical and token).
fn lane_options() -> Vec<(&'static str, SearchOptions)> {
    let only = |lane| SearchOptions {
        lanes: Some(vec![lane]),
        ..Default::default()
    };
    vec![
        ("lexical", only(Lane::Lexical)),
        ("token", only(Lane::Token)),
        ("fused", SearchOptions::default()),
    ]
}

fn keys(r: &SearchResults) -> Vec<&str> {
    r.hits.iter().map(|h| h.key.as_str()).collect()
}

#[test]
fn incidnet_finds_the_incident_page() {
    for (lanes, opts) in lane_options() {
        let r = check::search(wiki(), "incidnet", &opts);
        assert_eq!(keys(&r), ["incident"], "{lanes}");
        // The snippet marks the word the typo was taken for.
        let snippet = r.hits[0].snippet.as_ref().unwrap();
        assert_eq!(crate::marked(snippet), ["incident"], "{lanes}");
    }
}

#[test]
fn a_word_typed_so_far_completes_with_a_typo() {
    // The last word is matched as a prefix of the words of the text (`incidn` → `incident`),
    // in the token lane; the lexical lane takes whole words only (`incidn` is two edits from
    // `incident`, `inciden` one).
    for q in ["incidn", "inciden", "incidnt"] {
        for (lanes, opts) in lane_options() {
            let r = check::search(wiki(), q, &opts);
            if lanes == "lexical" && q == "incidn" {
                assert!(r.hits.is_empty());
            } else {
                assert_eq!(keys(&r), ["incident"], "{lanes}: {q}");
            }
        }
    }
    // A word typed so far that a term completes is not expanded: `accou` → `account`.
    let opts = SearchOptions {
        lanes: Some(vec![Lane::Token]),
        explain: true,
        ..Default::default()
    };
    let r = check::search(wiki(), "accou", &opts);
    assert_eq!(keys(&r), ["accountancy", "accountant"]);
}

#[test]
fn explain_names_the_term_a_typo_was_taken_for() {
    let opts = SearchOptions {
        lanes: Some(vec![Lane::Lexical]),
        explain: true,
        ..Default::default()
    };
    let r = check::search(wiki(), "incidnet postmortem", &opts);
    let hit = &r.hits[0];
    let terms = &hit.explain.as_ref().unwrap().lexical;
    let typo = terms.iter().find(|t| t.term == "incidnet").unwrap();
    assert_eq!(typo.matched.as_deref(), Some("incid"));
    assert_eq!(typo.edits, 1);
    assert_eq!(typo.weight, TYPO_DISCOUNT);
    assert!(typo.tf > 0 && typo.score > 0.0);
    let exact = terms.iter().find(|t| t.term == "postmortem").unwrap();
    assert_eq!((exact.matched.as_deref(), exact.edits), (None, 0));
    // The entries still add up to the lane's score.
    let sum: f32 = terms.iter().map(|t| t.score).sum();
    let lexical = hit.lanes.iter().find(|l| l.lane == Lane::Lexical).unwrap();
    assert!((sum - lexical.score.unwrap()).abs() < 1e-5);
}

/// An index of `files` with stemming off (so each word is its own term).
fn unstemmed(files: &[(&str, &str)]) -> Index {
    let config = Config {
        language: Some(Language::None),
        ..Default::default()
    };
    let mut b = IndexBuilder::new(config).unwrap();
    for (path, text) in files {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

#[test]
fn exact_match_ranks_before_typo_matches() {
    // A word the index contains is taken as written: the page with `incident` is not matched
    // by `incidnet` once a page contains that spelling, nor the other way round.
    let mut files = WIKI.to_vec();
    files.push(("global/draft.md", "Notes on the incidnet of May."));
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (path, text) in &files {
        b.add_file(path, text.as_bytes()).unwrap();
    }
    let index = b.build().unwrap().0;
    for (lanes, opts) in lane_options() {
        // (The token lane also matches the last word as a prefix: `incid` → `incidnet`.)
        let r = check::search(&index, "incident", &opts);
        assert_eq!(keys(&r)[0], "incident", "{lanes}");
        if lanes == "lexical" {
            assert_eq!(keys(&r), ["incident"]);
        }
        assert_eq!(
            keys(&check::search(&index, "incidnet", &opts)),
            ["draft"],
            "{lanes}"
        );
    }
    // Typo matches rank nearest first: `accountanx` is one edit from `accountant`, two from
    // `accountancy`.
    let index = unstemmed(&[
        ("global/a.md", "Ask the accountant."),
        ("global/b.md", "Ask the accountancy."),
    ]);
    for (lanes, opts) in lane_options() {
        let r = check::search(&index, "accountanx", &opts);
        assert_eq!(keys(&r), ["a", "b"], "{lanes}");
        assert!(r.hits[0].score > r.hits[1].score, "{lanes}");
    }
    // A page matching one query word exactly outranks a page matching the other only through
    // a typo, all else equal (the typo's discount).
    let index = unstemmed(&[
        ("global/a.md", "The ledger closes."),
        ("global/b.md", "The invoice closes."),
    ]);
    for (lanes, opts) in lane_options() {
        let r = check::search(&index, "ledgr invoice", &opts);
        assert_eq!(keys(&r), ["b", "a"], "{lanes}");
        assert!(r.hits[0].score > r.hits[1].score, "{lanes}");
    }
}

#[test]
fn short_words_are_matched_exactly() {
    for (lanes, opts) in lane_options() {
        // Four letters, one swap from `call`: exact only.
        assert!(
            check::search(wiki(), "clal", &opts).hits.is_empty(),
            "{lanes}"
        );
        // Five letters, one swap from `write`: matched.
        assert_eq!(keys(&check::search(wiki(), "wrtie", &opts)), ["incident"]);
        // Five letters, one edit from the four-letter `call`: a short word is matched exactly
        // whichever side it is on.
        assert!(
            check::search(wiki(), "calll", &opts).hits.is_empty(),
            "{lanes}"
        );
        // Eight letters, two edits from `incident`: not matched; nine, two edits from
        // `postmortem`: matched.
        assert!(
            check::search(wiki(), "ixcidenx", &opts).hits.is_empty(),
            "{lanes}"
        );
        assert_eq!(
            keys(&check::search(wiki(), "pstmortex", &opts)),
            ["incident"]
        );
        // The first letter is never a typo.
        assert!(
            check::search(wiki(), "oncident", &opts).hits.is_empty(),
            "{lanes}"
        );
    }
}

#[test]
fn typos_off_gives_the_exact_results() {
    for (lanes, opts) in lane_options() {
        let off = SearchOptions {
            typos: false,
            ..opts.clone()
        };
        assert!(
            check::search(wiki(), "incidnet", &off).hits.is_empty(),
            "{lanes}"
        );
        // A query whose words the index knows gets the same answer either way.
        for q in [
            "incident postmortem",
            "accountancy ledger",
            "revenue invoice",
            "acc",
        ] {
            assert_eq!(
                check::search(wiki(), q, &opts),
                check::search(wiki(), q, &off),
                "{lanes}: {q}"
            );
        }
    }
    // The option is a serde field: bindings pass `{"typos": false}`.
    let off: SearchOptions = serde_json::from_str(r#"{"typos": false}"#).unwrap();
    assert!(!off.typos);
    assert!(SearchOptions::default().typos);
}

#[test]
fn typo_expansions_per_word_are_bounded() {
    // Twenty pages, each with its own word one edit from the query word.
    let files: Vec<(String, String)> = ('a'..='t')
        .map(|c| (format!("global/z{c}.md"), format!("The zorbla{c} module.")))
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let index = unstemmed(&files);
    let explain = SearchOptions {
        explain: true,
        ..Default::default()
    };
    for (lanes, opts) in lane_options() {
        let r = check::search(&index, "zorblax", &opts);
        assert_eq!(r.hits.len(), MAX_TYPO_EXPANSIONS, "{lanes}");
    }
    let r = check::search(&index, "zorblax", &explain);
    let mut matched: Vec<String> = r
        .hits
        .iter()
        .filter_map(|h| h.explain.as_ref()?.lexical[0].matched.clone())
        .collect();
    matched.sort();
    // Equally near and equally frequent: the first in dictionary order.
    let first: Vec<String> = ('a'..='h').map(|c| format!("zorbla{c}")).collect();
    assert_eq!(matched, first);
}

#[test]
fn words_with_digits_are_matched_exactly() {
    // `x86_64` and `x86_65`, `ipv4` and `ipv6`: a code or a number is not a typo.
    let index = unstemmed(&[
        ("global/a.md", "Builds for build2024 and release2024 only."),
        ("global/b.md", "Ship the release notes."),
    ]);
    for (lanes, opts) in lane_options() {
        for q in ["build2025", "release2025", "releas2024"] {
            assert!(
                check::search(&index, q, &opts).hits.is_empty(),
                "{lanes}: {q}"
            );
        }
        // A word without a digit is expanded (`relaese` → `release`; in the token lane, as
        // the last word, also to the words starting with `release`, `release2024` among them,
        // ranked below).
        let r = check::search(&index, "relaese", &opts);
        assert_eq!(keys(&r)[0], "b", "{lanes}");
        if lanes == "lexical" {
            assert_eq!(keys(&r), ["b"]);
        }
    }
}

#[test]
fn a_known_word_is_never_expanded() {
    // `ledger` is in the index: `ledgers` (one edit away) is not taken for it, however much
    // more often it occurs.
    let index = unstemmed(&[
        ("global/a.md", "The ledger."),
        ("global/b.md", "Ledgers, ledgers and ledgers."),
    ]);
    let opts = SearchOptions {
        lanes: Some(vec![Lane::Lexical]),
        explain: true,
        ..Default::default()
    };
    let r = check::search(&index, "ledger", &opts);
    assert_eq!(keys(&r), ["a"]);
    let terms = &r.hits[0].explain.as_ref().unwrap().lexical;
    assert_eq!(terms.len(), 1);
    assert_eq!((terms[0].matched.as_deref(), terms[0].edits), (None, 0));
    // In a query with an unknown word, the known word still matches only itself.
    let r = check::search(&index, "ledger balanse", &opts);
    assert_eq!(keys(&r), ["a"]);
}

#[test]
fn cjk_bigrams_are_not_typos() {
    // CJK text is matched by character bigrams; a bigram the index lacks is not taken for a
    // neighbouring one (typo tolerance is for words of five letters or more).
    let index = unstemmed(&[("global/a.md", "東京の天気は晴れです。")]);
    for (lanes, opts) in lane_options() {
        assert!(
            check::search(&index, "大阪の雨", &opts).hits.is_empty(),
            "{lanes}"
        );
    }
}
