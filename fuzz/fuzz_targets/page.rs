//! page::parse on any frontmatter + Markdown, then an index of 1-3 such pages built, searched, updated and saved.
//! The body is [`wikidex_fuzz::page`] (fuzz/src/lib.rs), shared with the replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wikidex_fuzz::page(data));
