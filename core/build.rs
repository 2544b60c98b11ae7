//! The stopword lists of the Snowball languages other than English (English has its own,
//! `src/text/stopwords_en.txt`): NLTK's lists as the stop-words crate ships them, written into
//! `$OUT_DIR/stopwords.rs` as one static slice per language (`STOPWORDS_DE`, ...), so that
//! `text::analyze` takes each only with its stemmer's feature.

use std::fmt::Write as _;

/// The analyzer's languages with a stemmer, by ISO 639-1 code (stop-words' codes).
const LANGUAGES: [&str; 11] = [
    "fr", "de", "es", "it", "pt", "nl", "sv", "no", "da", "fi", "ru",
];

fn main() {
    let mut code = String::new();
    for lang in LANGUAGES {
        let words = stop_words::lookup(lang)
            .unwrap_or_else(|| panic!("stop-words has no NLTK list for `{lang}`"));
        writeln!(
            code,
            "/// NLTK's stopwords for `{lang}` ({} words).",
            words.len()
        )
        .unwrap();
        writeln!(code, "#[allow(dead_code)]").unwrap();
        write!(
            code,
            "pub(crate) static STOPWORDS_{}: &[&str] = &[",
            lang.to_uppercase()
        )
        .unwrap();
        for w in words {
            write!(code, "{w:?},").unwrap();
        }
        code.push_str("];\n");
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("stopwords.rs");
    std::fs::write(out, code).unwrap();
}
