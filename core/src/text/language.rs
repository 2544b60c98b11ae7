//! Which language a page is written in: its prose (the Markdown's text without code blocks,
//! inline code, HTML, link targets and words that look like identifiers, paths or URLs)
//! given to [whatlang](https://docs.rs/whatlang)'s trigram detector. A build counts the pages
//! of each language ([`LanguageMix`]); the default model and analysis language follow the
//! count ([`crate::embed::choose`] and [`Language::for_mix`](crate::Language::for_mix)).
//!
//! A page with little prose (under [`MIN_LETTERS`] letters once the rest is left out; a
//! Chinese or Japanese character counts as [`CJK_WEIGHT`] letters, about a word) or whose
//! best guess is not clearly ahead of the next ([`MIN_CONFIDENCE`]) is not guessed at: it is
//! counted as undetected. Only the first [`MAX_PROSE_CHARS`] characters of prose are read,
//! so a long page costs no more than a short one (30-55 µs a page on CACM's and Cranfield's
//! abstracts: whatlang scores every language of the script, from its trigram profiles turned
//! inside out in the workspace's copy, `vendor/whatlang`).
//!
//! ```
//! use wikidex::language::detect;
//! assert_eq!(detect("Die Datenbank wird jede Nacht gesichert, und die Sicherungen werden dreißig Tage lang aufbewahrt."), Some("deu"));
//! assert_eq!(detect("```sh\nmake test\n```\nSee `make`."), None);
//! ```

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};

use crate::data::record::LanguageMix;
use crate::text::analyze::is_cjk;
use crate::text::page::Page;

/// Fewest letters of prose a page needs for its language to be detected: below it, trigram
/// statistics guess (whatlang is unreliable on a line or two).
pub const MIN_LETTERS: usize = 60;
/// What a Han, kana or Hangul character counts for against [`MIN_LETTERS`]: about a word.
pub const CJK_WEIGHT: usize = 3;
/// Lowest detector confidence (0..=1: how far the best language's score is ahead of the
/// second's) a guess needs to count.
pub const MIN_CONFIDENCE: f64 = 0.9;
/// Characters of prose read per page.
pub const MAX_PROSE_CHARS: usize = 1000;

/// The ISO 639-3 code of the language `markdown` is written in (`eng`, `deu`, `rus`, `cmn`,
/// `jpn`...), or `None` when it has too little prose or the guess is unsure (see the module
/// docs).
pub fn detect(markdown: &str) -> Option<&'static str> {
    let text = prose(markdown);
    let letters: usize = text
        .chars()
        .filter(|c| c.is_alphabetic())
        .map(|c| if is_cjk(c) { CJK_WEIGHT } else { 1 })
        .sum();
    if letters < MIN_LETTERS {
        return None;
    }
    let info = whatlang::detect(&text)?;
    (info.confidence() >= MIN_CONFIDENCE).then(|| info.lang().code())
}

/// The language of a page: its body's ([`detect`]), the frontmatter left out.
pub fn detect_page(page: &Page) -> Option<&'static str> {
    detect(page.body())
}

/// The language mix of `pages` ([`detect_page`] on each). Detection is most of a large
/// build's analysis time, and each page's is its own, so the pages are shared out over the
/// cores (one after another on wasm); the count does not depend on the order.
pub fn mix<'a>(pages: impl IntoIterator<Item = &'a Page>) -> LanguageMix {
    let pages: Vec<&Page> = pages.into_iter().collect();
    // A share too small is not worth a thread.
    let threads = crate::data::parallel::threads_for(pages.len(), 256);
    LanguageMix::count(crate::data::parallel::map(&pages, threads, |p| {
        detect_page(p)
    }))
}

/// The prose of a Markdown text, at most [`MAX_PROSE_CHARS`] characters: its text events
/// outside code blocks, autolinks and HTML, one word at a time, leaving out the words that
/// are not prose (see [`is_word`]).
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    let mut code = 0usize;
    let mut autolink = 0usize;
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES);
    for event in parser {
        match event {
            Event::Start(Tag::CodeBlock(_)) => code += 1,
            Event::End(TagEnd::CodeBlock) => code = code.saturating_sub(1),
            Event::Start(Tag::Link {
                link_type: LinkType::Autolink | LinkType::Email,
                ..
            }) => autolink += 1,
            Event::End(TagEnd::Link) => autolink = autolink.saturating_sub(1),
            Event::Text(t) if code == 0 && autolink == 0 => {
                for word in t.split_whitespace().filter(|w| is_word(w)) {
                    out.push_str(word);
                    out.push(' ');
                    chars += word.chars().count() + 1;
                }
                if chars >= MAX_PROSE_CHARS {
                    break;
                }
            }
            Event::SoftBreak | Event::HardBreak | Event::End(_)
                if !out.ends_with(' ') && !out.is_empty() =>
            {
                out.push(' ');
            }
            _ => {}
        }
    }
    out
}

/// Whether `word` reads as prose: not a URL, path, identifier, wiki link or number (none of
/// `/ \ _ : @ = < > { } [ ] | #` inside, and not all digits and punctuation).
fn is_word(word: &str) -> bool {
    let trimmed = word.trim_matches(|c: char| !c.is_alphanumeric());
    !trimmed.is_empty()
        && !trimmed.contains([
            '/', '\\', '_', ':', '@', '=', '<', '>', '{', '}', '[', ']', '|', '#',
        ])
        && trimmed.chars().any(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_leaves_out_code_links_and_identifiers() {
        let md = "Run `cargo test` first.\n\n```rust\nfn main() {}\n```\n\nSee <https://example.com/x> and [the guide](docs/guide.md), [[runbook_oncall]], src/lib.rs, 2024.";
        let text = prose(md);
        let words: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(words, ["Run", "first.", "See", "and", "the", "guide"]);
    }

    #[test]
    fn languages_of_plain_prose_are_detected() {
        let cases = [
            ("The database is backed up every night, and the backups are kept for thirty days before they are deleted.", "eng"),
            ("Die Datenbank wird jede Nacht gesichert, und die Sicherungen werden dreißig Tage lang aufbewahrt.", "deu"),
            ("База данных копируется каждую ночь, а резервные копии хранятся тридцать дней, после чего удаляются.", "rus"),
            ("数据库每天晚上都会备份，备份文件保存三十天，然后自动删除。所有服务的日志也按同样的规则保存。", "cmn"),
            ("データベースは毎晩バックアップされ、バックアップは三十日間保存されたあと削除されます。", "jpn"),
        ];
        for (text, code) in cases {
            assert_eq!(detect(text), Some(code), "{text}");
        }
    }

    #[test]
    fn short_or_code_only_pages_are_undetected() {
        assert_eq!(detect("Revenue, monthly."), None);
        assert_eq!(detect("数据库备份。"), None);
        let code =
            "```python\nfor page in pages:\n    print(page.title, page.summary, page.tags)\n```\n";
        assert_eq!(detect(&code.repeat(10)), None);
    }

    #[test]
    fn a_changed_mix_is_the_count_of_the_pages_after_the_change() {
        let before = [Some("deu"), Some("eng"), None, Some("rus")];
        let after = [Some("eng"), None, Some("cmn"), Some("eng")];
        let changed = LanguageMix::count(before)
            .changed([Some("deu"), Some("rus")], [Some("cmn"), Some("eng")]);
        assert_eq!(changed, LanguageMix::count(after));
        assert_eq!(changed.pages("deu"), 0);
        assert!(changed.languages.iter().all(|l| l.pages > 0), "{changed:?}");
    }

    #[test]
    fn the_mix_counts_pages_and_breaks_ties_toward_english() {
        let mix = LanguageMix::count([Some("deu"), Some("eng"), None, Some("deu"), Some("eng")]);
        assert_eq!(mix.detected(), 4);
        assert_eq!(mix.undetected, 1);
        assert_eq!(mix.main().unwrap().language, "eng");
        assert!((mix.other_share() - 0.5).abs() < 1e-9);
        assert_eq!(mix.describe(), "German 2, English 2, undetected 1");
    }
}
