//! Index::from_bytes on any bytes (optionally with a matching checksum), then a loaded index must work.
//! The body is [`wikidex_fuzz::blob`] (fuzz/src/lib.rs), shared with the replay test.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wikidex_fuzz::blob(data));
