//! cite::parse_headers on any text.
//! The body is [`wikidex_fuzz::headers`] (fuzz/src/lib.rs), shared with the replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wikidex_fuzz::headers(data));
