//! Index::verify and Index::uncited_support with any answer and cited or offered ids.
//! The body is [`wikidex_fuzz::verify`] (fuzz/src/lib.rs), shared with the replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wikidex_fuzz::verify(data));
