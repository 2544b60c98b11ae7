//! Index::search of a fixed index with any query and options, and the lookups that take a user's string.
//! The body is [`wikidex_fuzz::search`] (fuzz/src/lib.rs), shared with the replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wikidex_fuzz::search(data));
