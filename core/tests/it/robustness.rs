//! No input makes the page parser, the builder or search panic (DESIGN: "never a panic"), and
//! whatever they return holds the invariants of its kind (`check`).

use std::sync::OnceLock;

use proptest::prelude::*;
use wikidex::{Index, IndexBuilder, Lane, Scope, SearchOptions};

use crate::check;

/// Text that looks like pages: frontmatter fences, YAML punctuation, Markdown and wiki-link
/// syntax, multi-byte characters and odd whitespace, in random order.
fn pageish() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "---\n",
        "...\n",
        "title: ",
        "tags: [",
        "]",
        "refs:\n  - ",
        "relations:\n  - {target: ",
        "confidence: ",
        "1.5",
        "-3",
        "null",
        "~",
        "&a ",
        "*a ",
        "!!binary ",
        "'",
        "\"",
        ": ",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        "# ",
        "## ",
        "```",
        "~~~",
        "[[",
        "]]",
        "|",
        "#",
        "![[",
        "](",
        ")",
        "%20",
        "%zz",
        "<!-- from: ",
        "-->",
        "é",
        "ß",
        "日本",
        "👩‍👩‍👧",
        "\u{feff}",
        "\u{0}",
        "\u{200b}",
        "word ",
        "Sentence. ",
        "usage_mode: always",
        "sources: [x::chunk_0]",
        "{",
        "}",
    ]);
    prop::collection::vec(pieces, 0..60).prop_map(|v| v.concat())
}

fn example() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        b.add_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/wiki"))
            .unwrap();
        b.build().unwrap().0
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parsing_any_page_text_returns_a_page_or_an_error(text in pageish(), name in "[a-zA-Z _.-]{0,12}") {
        let path = format!("global/{name}.md");
        match wikidex::page::parse(&path, &text) {
            Ok(parsed) => {
                let page = parsed.page;
                prop_assert_eq!(&page.key, &wikidex::page::key_from_path(&path));
                prop_assert!(!page.key.is_empty());
                prop_assert_eq!(&page.path, &path);
                prop_assert_eq!(&page.scope, &Scope::Global);
                prop_assert_eq!(&page.text, &text);
                let body_start = page.body_start as usize;
                prop_assert!(text.is_char_boundary(body_start) && body_start <= text.len());
                prop_assert!(text.ends_with(page.body()));
            }
            Err(e) => {
                prop_assert_eq!(e.code(), "invalid_page", "{}", e);
                let wikidex::Error::InvalidPage { path: p, line, .. } = &e else {
                    unreachable!("the code says invalid_page");
                };
                prop_assert_eq!(p, &path);
                // A line, when given, is a line of the text (or the one just past its end,
                // for an unterminated block).
                let lines = text.lines().count() as u32 + 1;
                prop_assert!(line.is_none_or(|l| (1..=lines).contains(&l)), "{} of {} lines", e, lines);
            }
        }
    }

    #[test]
    fn any_pages_build_and_search_without_panics_and_load_back_to_the_same_answers(
        pages in prop::collection::vec(pageish(), 1..6),
        query in pageish(),
    ) {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        for (i, text) in pages.iter().enumerate() {
            b.add_file(&format!("global/p{i}.md"), text.as_bytes()).unwrap();
        }
        let (index, report) = b.build().unwrap();
        prop_assert_eq!(report.pages + report.skipped.len(), pages.len());
        let bytes = index.to_bytes().unwrap();
        let loaded = Index::from_bytes(&bytes).unwrap();
        // What a load derives (chunk hashes and lengths, posting offsets) is what the build
        // had: the same chunks, the same answers, the same bytes saved again.
        prop_assert!(loaded.to_bytes().unwrap() == bytes);
        for page in index.pages() {
            prop_assert_eq!(index.chunks_of(&page.id(), None).unwrap(), loaded.chunks_of(&page.id(), None).unwrap());
        }
        for opts in [
            SearchOptions { explain: true, ..Default::default() },
            SearchOptions { chunks: true, limit: Some(3), ..Default::default() },
        ] {
            let built = check::search(&index, &query, &opts);
            prop_assert_eq!(check::search(&loaded, &query, &opts), built);
        }
    }

    #[test]
    fn any_query_on_the_example_wiki_returns_results(query in "\\PC{0,80}", prefix in "[a-z]{1,3}") {
        let index = example();
        for lanes in [None, Some(vec![Lane::Token]), Some(vec![Lane::Lexical])] {
            let opts = SearchOptions { lanes, explain: true, chunks: prefix.len() == 2, ..Default::default() };
            for query in [query.clone(), format!("{query} {prefix}")] {
                let r = check::search(index, &query, &opts);
                for hit in &r.hits {
                    let snippet = hit.snippet.as_ref().unwrap();
                    let text = &snippet.text;
                    prop_assert!(snippet.highlights.iter().all(|h| h.start < h.end
                        && text.get(h.start as usize..h.end as usize).is_some()));
                }
            }
        }
    }
}
