//! Integration tests: one binary, a module per topic.

mod blob;
mod check;
mod chunk_ids;
mod cjk;
mod dates;
mod embed;
mod facets;
mod fuzz_replay;
mod hostile;
mod layers;
mod limit;
mod model_vectors;
mod oracle;
mod phrase;
mod prompts;
mod querylog;
mod robustness;
mod sync;
mod tools;
mod typo;
mod vectors;
mod wikis;
