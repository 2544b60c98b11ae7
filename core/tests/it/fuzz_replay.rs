//! The fuzz corpora, replayed without cargo-fuzz: every file of `fuzz/corpus/<target>/` and of
//! `fuzz/regressions/<target>/` goes through the same body the libFuzzer binary runs
//! (`fuzz/src/lib.rs`, included below), and a panic fails the test.
//!
//! A crash the fuzzer found and that is not fixed yet is pinned in `fuzz/regressions/` and
//! listed in `fuzz/regressions/OPEN.md` (a line `` - `<target>/<file>`: why ``): the replay
//! skips it, without running it (it may hang or exhaust memory), and prints the list.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/lib.rs"]
mod targets;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// `target/file` of every regression listed in `fuzz/regressions/OPEN.md`.
fn open_regressions() -> BTreeSet<String> {
    let Ok(text) = fs::read_to_string(fuzz_dir().join("regressions/OPEN.md")) else {
        return BTreeSet::new();
    };
    text.lines()
        .filter_map(|line| line.trim_start().strip_prefix("- `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_string())
        .collect()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("corpus entry readable").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every corpus and regression file of `target` through `body`; fails with the list of
/// files that panicked.
fn replay(target: &str, body: fn(&[u8])) {
    let corpus = files_in(&fuzz_dir().join("corpus").join(target));
    assert!(!corpus.is_empty(), "no corpus for fuzz target {target}");
    let open = open_regressions();
    let mut skipped = Vec::new();
    let mut runs = Vec::new();
    for file in files_in(&fuzz_dir().join("regressions").join(target)) {
        let name = format!("{target}/{}", file.file_name().unwrap().to_string_lossy());
        if open.contains(&name) {
            skipped.push(name);
        } else {
            runs.push(file);
        }
    }
    if !skipped.is_empty() {
        eprintln!(
            "fuzz target {target}: {} known-open regression(s) skipped, see fuzz/regressions/OPEN.md: {}",
            skipped.len(),
            skipped.join(", ")
        );
    }
    let mut panicked = Vec::new();
    for file in corpus.iter().chain(&runs) {
        let bytes = fs::read(file).expect("corpus file readable");
        if panic::catch_unwind(AssertUnwindSafe(|| body(&bytes))).is_err() {
            panicked.push(file.display().to_string());
        }
    }
    assert!(
        panicked.is_empty(),
        "fuzz target {target} panicked on {} of {} inputs (the panic messages are above):\n{}",
        panicked.len(),
        corpus.len() + runs.len(),
        panicked.join("\n")
    );
}

#[test]
fn fuzz_blob_corpus_replays_without_a_panic() {
    replay("blob", targets::blob);
}

#[test]
fn fuzz_page_corpus_replays_without_a_panic() {
    replay("page", targets::page);
}

#[test]
fn fuzz_search_corpus_replays_without_a_panic() {
    replay("search", targets::search);
}

#[test]
fn fuzz_verify_corpus_replays_without_a_panic() {
    replay("verify", targets::verify);
}

#[test]
fn fuzz_headers_corpus_replays_without_a_panic() {
    replay("headers", targets::headers);
}

#[test]
fn fuzz_open_regressions_exist() {
    for name in open_regressions() {
        assert!(
            fuzz_dir().join("regressions").join(&name).is_file(),
            "fuzz/regressions/OPEN.md lists {name}, which is not in fuzz/regressions/"
        );
    }
}
