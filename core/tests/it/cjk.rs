//! CJK segmentation (issue 14): Chinese, Japanese and Korean text, written without spaces
//! between words, is indexed and queried as overlapping character bigrams, so a word inside a
//! run of characters is found, not only a prefix of the run. The wiki is
//! `tests/fixtures/wikis/cjk` (a Japanese, a Chinese, a Korean, a mixed Latin + CJK and an
//! English page).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use wikidex::{Index, IndexBuilder, Lane, OffsetUnit, SearchOptions, SearchResults, Session};

use crate::vectors::slice;

fn wiki_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wikis/cjk")
}

fn build() -> Index {
    build_with(Default::default())
}

fn build_with(config: wikidex::Config) -> Index {
    let mut b = IndexBuilder::new(config).unwrap();
    // No file times: the bytes depend on the texts alone.
    b.file_times(false);
    b.add_dir(&wiki_dir()).unwrap();
    let (index, report) = b.build().unwrap();
    assert_eq!(report.pages, 5, "{report:?}");
    index
}

fn built() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(build)
}

fn search(index: &Index, query: &str, lanes: &[Lane]) -> SearchResults {
    let opts = SearchOptions {
        lanes: Some(lanes.to_vec()),
        ..Default::default()
    };
    index.search(query, &opts).unwrap()
}

fn keys(r: &SearchResults) -> Vec<&str> {
    r.hits.iter().map(|h| h.key.as_str()).collect()
}

/// Words from inside the runs of each page, with the page that must come first. None of them
/// is the start of its run (`晴れ` is inside `今日の東京は晴れです`), except where noted.
const WORDS: &[(&str, &str)] = &[
    ("天気", "天気"), // the title 今日の天気 and 機械学習で天気を予測 (also the key and a tag)
    ("晴れ", "天気"), // 今日の東京は晴れです
    ("学習", "天気"), // 機械学習
    ("東京", "天気"), // 今日の東京は
    ("予測", "天気"), // 天気を予測しています
    ("コンピューター", "天気"), // スーパーコンピューター
    ("自然语言处理", "nlp"), // the title, and the start of the body's first run
    ("计算机", "nlp"),
    ("人工智能", "nlp"),
    ("机器翻译", "nlp"),
    ("分词", "nlp"),     // 所以搜索引擎需要分词
    ("所有权", "mixed"), // Rust语言的所有权
];

#[test]
fn issue_14_cjk_words_inside_a_run_are_found_by_every_text_lane() {
    let index = built();
    for &(query, page) in WORDS {
        for lanes in [
            &[Lane::Lexical][..],
            &[Lane::Token],
            &[Lane::Lexical, Lane::Token],
        ] {
            let r = search(index, query, lanes);
            assert_eq!(
                keys(&r).first(),
                Some(&page),
                "{query} with {lanes:?}: {:?}",
                keys(&r)
            );
        }
    }
}

#[test]
fn a_chinese_word_is_not_found_in_unrelated_pages() {
    let r = search(built(), "机器翻译", &[Lane::Lexical, Lane::Token]);
    assert_eq!(keys(&r), ["nlp"]);
    // Chinese 学习 and Japanese 学習 are different characters.
    let r = search(built(), "学习", &[Lane::Lexical, Lane::Token]);
    assert_eq!(keys(&r), ["nlp"]);
}

#[test]
fn korean_words_are_found_inside_a_word_with_its_particle() {
    // 처리는: the word 처리 with the particle 는.
    let r = search(built(), "처리", &[Lane::Lexical]);
    assert_eq!(keys(&r), ["korean"]);
    let r = search(built(), "인공지능", &[Lane::Lexical]);
    assert_eq!(keys(&r), ["korean"]);
}

#[test]
fn cjk_query_terms_are_bigrams() {
    let r = search(built(), "自然语言处理", &[Lane::Lexical]);
    assert_eq!(r.terms, ["自然", "然语", "语言", "言处", "处理"]);
    let r = search(built(), "晴れ Tokyo", &[Lane::Lexical]);
    assert_eq!(r.terms, ["晴れ", "tokyo"]);
}

#[test]
fn mixed_latin_and_cjk_text_is_split_where_the_scripts_meet() {
    let index = built();
    // `Rust语言的所有权`, `wikidex支持中文搜索`, `2024年`: no space between the scripts.
    for query in ["rust", "wikidex", "语言", "中文搜索", "2024", "ownership"] {
        let r = search(index, query, &[Lane::Lexical]);
        assert_eq!(keys(&r).first(), Some(&"mixed"), "{query}: {:?}", keys(&r));
    }
    // English words stay whole and stemmed: `searching` meets `search`.
    let r = search(index, "searching", &[Lane::Lexical]);
    assert_eq!(keys(&r), ["mixed"]);
}

#[test]
fn english_pages_are_searched_as_before() {
    let r = search(built(), "rainy forecast", &[Lane::Lexical, Lane::Token]);
    assert_eq!(keys(&r), ["weather"]);
    assert_eq!(r.terms, ["raini", "forecast"]);
}

#[test]
fn search_as_you_type_finds_a_cjk_word_from_its_first_character() {
    // `晴` alone is no term of the index (it is only in the bigrams 晴れ and は晴); the token
    // lane matches it as the prefix of 晴れ.
    let r = search(built(), "晴", &[Lane::Token]);
    assert_eq!(keys(&r), ["天気"]);
    let snippet = r.hits[0].snippet.as_ref().unwrap();
    assert_eq!(crate::marked(snippet), ["晴れ"]);
}

/// The snippet substrings the highlights point at, with a session counting offsets in `unit`.
fn highlighted(index: &Index, query: &str, unit: OffsetUnit) -> Vec<String> {
    let session = Session::new(index.clone());
    session.set_offset_unit(unit);
    let opts = SearchOptions {
        lanes: Some(vec![Lane::Lexical, Lane::Token]),
        ..Default::default()
    };
    let r = session.search(query, &opts).unwrap();
    let snippet = r.hits[0].snippet.clone().unwrap();
    snippet
        .highlights
        .iter()
        .map(|h| slice(&snippet.text, h.start as usize, h.end as usize, unit))
        .collect()
}

#[test]
fn highlights_cover_the_cjk_words_in_every_offset_unit() {
    let index = built();
    for unit in [OffsetUnit::Byte, OffsetUnit::Char, OffsetUnit::Utf16] {
        assert_eq!(highlighted(index, "晴れ", unit), ["晴れ"], "{unit:?}");
        // The overlapping bigrams of a matched word make one highlight.
        assert_eq!(
            highlighted(index, "机器翻译", unit),
            ["机器翻译"],
            "{unit:?}"
        );
        assert_eq!(
            highlighted(index, "学習 天気", unit),
            ["天気", "学習", "天気"],
            "{unit:?}"
        );
        assert_eq!(
            highlighted(index, "所有权 rust", unit),
            ["Rust", "所有权"],
            "{unit:?}"
        );
    }
}

#[test]
fn a_snippet_of_a_long_cjk_run_is_cut_between_characters_around_the_match() {
    // 484 characters without a space or punctuation: one run.
    let filler = "甲乙丙丁".repeat(60);
    let text = format!("{filler}机器翻译{filler}\n");
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file("long.md", text.as_bytes()).unwrap();
    let (index, _) = b.build().unwrap();
    let r = search(&index, "机器翻译", &[Lane::Lexical]);
    let snippet = r.hits[0].snippet.as_ref().unwrap();
    let chars = snippet.text.chars().count();
    assert!((100..=150).contains(&chars), "{chars} characters");
    let [h] = snippet.highlights[..] else {
        panic!("{:?}", snippet.highlights)
    };
    assert_eq!(&snippet.text[h.start as usize..h.end as usize], "机器翻译");
    // The match is near the start, after a few characters of context.
    assert!((1..=40).contains(&h.start), "{h:?}");
    assert_eq!(
        &text[snippet.offset as usize..snippet.offset as usize + snippet.text.len()],
        snippet.text
    );
}

#[test]
fn a_build_with_cjk_text_gives_the_same_bytes_twice() {
    assert!(build().to_bytes().unwrap() == build().to_bytes().unwrap());
}

#[test]
fn a_long_chinese_page_is_cut_into_chunks_of_the_usual_size() {
    // 20 paragraphs of 200 characters, no spaces: one chunk when chunk sizes counted only
    // whitespace-separated words.
    let paragraph: String = "数据仓库每天夜间加载一次。"
        .chars()
        .cycle()
        .take(200)
        .collect();
    let mut body: Vec<String> = vec![paragraph; 20];
    body[17] = format!(
        "{}量子计算机。",
        &body[17][..body[17].len() - "量子计算机。".len()]
    );
    let text = body.join("\n\n");
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file("global/long.md", text.as_bytes()).unwrap();
    let index = b.build().unwrap().0;
    let chunks = index.chunks_of("long", None).unwrap();
    assert!(chunks.len() >= 20, "{} chunks", chunks.len());
    for c in &chunks {
        assert!(wikidex::analyze::token_count(&c.text) <= 200, "{}", c.text);
    }
    let r = search(&index, "量子计算机", &[Lane::Lexical]);
    let hit = &r.hits[0];
    assert!(index.chunk(&hit.chunk).unwrap().text.contains("量子计算机"));
}
