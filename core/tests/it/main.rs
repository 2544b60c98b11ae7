//! Integration tests: one binary, a module per topic.

mod blob;
mod check;
mod chunk_ids;
mod cjk;
mod dates;
mod embed;
mod facets;
mod found;
mod fusion;
mod fuzz_replay;
mod hostile;
mod languages;
mod layers;
mod limit;
mod merge;
mod model_vectors;
mod oracle;
mod phrase;
mod prompts;
mod querylog;
mod ranged;
mod robustness;
mod sync;
mod tools;
mod typo;
mod vectors;
mod wikis;

/// The words a snippet highlights, sliced from its text (offsets in bytes, the default unit).
pub(crate) fn marked(snippet: &wikidex::Snippet) -> Vec<&str> {
    snippet
        .highlights
        .iter()
        .map(|h| &snippet.text[h.start as usize..h.end as usize])
        .collect()
}
