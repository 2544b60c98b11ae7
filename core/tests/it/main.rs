//! Integration tests: one binary, a module per topic.

mod blob;
mod embed;
mod hostile;
mod oracle;
mod robustness;
mod vectors;
mod wikis;
