//! Integration tests: one binary, a module per topic.

mod blob;
mod embed;
mod fuzz_replay;
mod oracle;
mod robustness;
mod vectors;
mod wikis;
