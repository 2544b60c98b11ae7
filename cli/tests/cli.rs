//! The `wikidex` binary end to end: exit codes, JSON shapes, coded errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

fn wikidex(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wikidex"))
        .args(args)
        .output()
        .expect("run wikidex")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Runs a command that must fail and returns its JSON error code.
fn error_code(args: &[&str]) -> String {
    let r = wikidex(args);
    assert_eq!(r.status.code(), Some(1), "{args:?} must exit 1");
    json(&r)["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A folder for test `name`'s files under Cargo's folder for integration tests' files
/// (`target/tmp`, which `cargo clean` empties), not the system's `/tmp`.
fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("wikidex-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `wikidex build <wiki> -o <out> --json [extra...]`.
fn build(wiki: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "build",
        wiki.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    wikidex(&args)
}

/// The example wiki built with the default model, once per test process: the tests that take
/// it only read it (a build embeds every chunk, seconds in a debug binary).
fn built_example() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = temp("example").join("wiki.wdx");
            let r = build(&repo().join("examples/wiki"), &out, &[]);
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            out
        })
        .clone()
}

#[test]
fn build_reports_pages_chunks_skipped_and_seconds() {
    let out = temp("build").join("w.wdx");
    let r = build(&repo().join("examples/wiki"), &out, &[]);
    assert!(r.status.success());
    let v = json(&r);
    assert_eq!(v["pages"], 42);
    assert!(v["chunks"].as_u64().unwrap() >= 42);
    assert_eq!(v["raw_documents"], 2);
    assert_eq!(v["skipped"][0]["code"], "duplicate_key");
    assert!(v["seconds"].as_f64().unwrap() >= 0.0);
    assert!(out.exists());
}

#[test]
fn build_skips_broken_yaml_and_strict_fails() {
    let wiki = repo().join("core/tests/fixtures/wikis/ktx/wiki");
    let out = temp("ktx").join("k.wdx");
    let r = build(&wiki, &out, &[]);
    assert!(r.status.success());
    let v = json(&r);
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0]["path"], "global/broken_yaml.md");
    assert_eq!(skipped[0]["code"], "invalid_page");
    assert!(skipped[0]["line"].as_u64().is_some());
    let r = build(&wiki, &out, &["--strict"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(json(&r)["error"]["code"], "invalid_page");
}

#[test]
fn search_json_hits_carry_key_path_snippet_and_lanes() {
    let blob = built_example();
    let r = wikidex(&[
        "search",
        blob.to_str().unwrap(),
        "why did the nightly job crash",
        "--json",
        "--always-separate",
        "--limit",
        "3",
    ]);
    assert!(r.status.success());
    let v = json(&r);
    assert_eq!(v["hits"][0]["key"], "answer_why_nightly_crashed_2024_03_12");
    let hit = &v["hits"][1];
    assert_eq!(hit["key"], "incident_2024_03_memory_leak");
    assert_eq!(hit["path"], "global/incident_2024_03_memory_leak.md");
    for field in ["title", "summary", "score", "chunk"] {
        assert!(!hit[field].is_null(), "{field}");
    }
    assert!(hit["snippet"]["text"].as_str().unwrap().len() > 20);
    assert!(!hit["snippet"]["highlights"].as_array().unwrap().is_empty());
    let lanes = hit["lanes"].as_array().unwrap();
    assert_eq!(lanes.len(), 3);
    assert_eq!(lanes[0]["lane"], "lexical");
    assert_eq!(lanes[0]["status"], "ok");
    assert!(lanes[0]["rank"].as_u64().is_some_and(|r| r <= 3));
    // The default model (`make models`) is found, so the blob has vectors and the query is
    // embedded.
    assert_eq!(lanes[1]["lane"], "semantic");
    assert_eq!(lanes[1]["status"], "ok");
    assert_eq!(v["hits"].as_array().unwrap().len(), 3);
}

#[test]
fn search_text_explains_each_lane() {
    let blob = built_example();
    let r = wikidex(&[
        "search",
        blob.to_str().unwrap(),
        "who to page for an outage",
        "--explain",
        "-n",
        "2",
    ]);
    assert!(r.status.success());
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("runbook_oncall"), "{text}");
    assert!(text.contains("fused = lexical"), "{text}");
    assert!(text.contains("bm25 "), "{text}");
    // The weight each lane got for this query, and the share of it the index reads.
    assert!(
        text.contains("  weights: lexical 1.5, semantic 2, token 0.75 (the index reads"),
        "{text}"
    );
}

#[test]
fn a_misspelled_word_finds_the_incident_pages_without_a_model() {
    // Typo tolerance (issue 14): `incidnet` is one swap from `incident`, in the lexical and
    // token lanes, no embeddings involved; `--no-typos` matches it exactly (nothing).
    let blob = built_example();
    let blob = blob.to_str().unwrap();
    let r = wikidex(&[
        "search",
        blob,
        "incidnet",
        "--lanes",
        "lexical,token",
        "--json",
    ]);
    assert!(r.status.success());
    let v = json(&r);
    let keys: Vec<&str> = v["hits"].as_array().unwrap()[..3]
        .iter()
        .map(|h| h["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"incident_2024_03_memory_leak"), "{keys:?}");
    assert!(keys[0].starts_with("incident_"), "{keys:?}");
    let r = wikidex(&[
        "search",
        blob,
        "incidnet",
        "--lanes",
        "lexical",
        "--explain",
        "-n",
        "1",
    ]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(text.contains("incidnet~incid (1 edit)"), "{text}");
    let r = wikidex(&[
        "search",
        blob,
        "incidnet",
        "--no-typos",
        "--lanes",
        "lexical,token",
        "--json",
    ]);
    assert!(r.status.success());
    assert!(json(&r)["hits"].as_array().unwrap().is_empty());
}

#[test]
fn search_filters_by_tag_type_and_scope() {
    let blob = built_example();
    let b = blob.to_str().unwrap();
    let v = json(&wikidex(&[
        "search",
        b,
        "revenue",
        "--tag",
        "finance",
        "--json",
        "--always-separate",
    ]));
    for hit in v["hits"].as_array().unwrap() {
        assert!(
            hit["tags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "finance"),
            "{hit}"
        );
    }
    let v = json(&wikidex(&[
        "search",
        b,
        "revenue",
        "--scope",
        "alice",
        "--json",
        "--always-separate",
    ]));
    let ids: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["page_id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"user/alice/revenue"), "{ids:?}");
    assert!(
        !ids.contains(&"revenue"),
        "alice's page shadows the global one: {ids:?}"
    );
}

#[test]
fn page_and_chunk_lookups_and_unknown_ids_exit_1() {
    let blob = built_example();
    let b = blob.to_str().unwrap();
    let r = wikidex(&["page", b, "revenue", "--json"]);
    assert!(r.status.success());
    let page = json(&r);
    assert_eq!(page["key"], "revenue");
    let first = page["chunks"][0]["id"].as_str().unwrap().to_string();
    let r = wikidex(&["chunk", b, &first, "--json"]);
    assert!(r.status.success());
    assert_eq!(json(&r)["id"], first.as_str());
    let r = wikidex(&["chunk", b, "revenue::chunk_999", "--json"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(json(&r)["error"]["code"], "unknown_chunk");
    let r = wikidex(&["page", b, "no_such_page"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("error[unknown_page]"));
}

#[test]
fn bad_input_gives_coded_errors_not_panics() {
    let dir = temp("bad");
    let junk = dir.join("junk.wdx");
    std::fs::write(&junk, b"definitely not an index").unwrap();
    let junk_s = junk.to_str().unwrap();
    assert_eq!(
        error_code(&["search", junk_s, "x", "--json"]),
        "not_an_index"
    );
    let missing = dir.join("missing.wdx");
    assert_eq!(
        error_code(&["search", missing.to_str().unwrap(), "x", "--json"]),
        "io"
    );
    let blob = built_example();
    let b = blob.to_str().unwrap();
    let r = wikidex(&["search", b, "x", "--limit", "0", "--json"]);
    assert_eq!(
        r.status.code(),
        Some(2),
        "an out-of-range --limit is a usage error"
    );
    assert_eq!(
        error_code(&["search", b, "x", "--lanes", "bm25", "--json"]),
        "invalid_argument"
    );
    let nowhere = dir.join("nowhere");
    let code = error_code(&["build", nowhere.to_str().unwrap(), "-o", junk_s, "--json"]);
    assert_eq!(code, "io");
    let beir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/beir-mini");
    let beir = beir.to_str().unwrap();
    for bad in ["token", "token=x", "bm25=1", "token=-1"] {
        assert_eq!(
            error_code(&["eval", beir, "--weight", bad, "--json"]),
            "invalid_argument",
            "{bad}"
        );
    }
    assert_eq!(
        error_code(&["eval", beir, "--rrf-k", "0", "--json"]),
        "invalid_argument"
    );
    let r = wikidex(&["frobnicate"]);
    assert_eq!(r.status.code(), Some(2), "usage errors exit 2");
}

#[test]
fn eval_reports_metrics_per_lane_and_fused() {
    let beir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/beir-mini");
    let r = wikidex(&["eval", beir.to_str().unwrap(), "--json"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v = json(&r);
    assert_eq!(v["collection"], "beir-mini");
    assert_eq!(
        v["queries"], 2,
        "only judged queries with text are evaluated"
    );
    for run in ["lexical", "semantic", "token", "fused"] {
        for metric in ["ndcg@10", "map", "recall@100", "query_seconds"] {
            let x = v["runs"][run][metric].as_f64().unwrap_or(-1.0);
            assert!(
                (0.0..=1.0).contains(&x) || metric == "query_seconds",
                "{run} {metric} = {x}"
            );
        }
    }
    assert_eq!(v["runs"]["lexical"]["recall@100"], 1.0);
    let r = wikidex(&[
        "eval",
        beir.to_str().unwrap(),
        "--weight",
        "token=0.25",
        "--rrf-k",
        "30",
        "--no-embed",
        "--json",
    ]);
    let v = json(&r);
    assert_eq!(v["config"]["fusion"]["token"], 0.25);
    assert_eq!(v["config"]["fusion"]["k"], 30.0);
    assert!(v["skipped"]["semantic"].is_string());
    let r = wikidex(&[
        "build",
        "--beir",
        beir.to_str().unwrap(),
        "-o",
        temp("beir").join("b.wdx").to_str().unwrap(),
        "--json",
    ]);
    let v = json(&r);
    assert_eq!(v["pages"], 4);
    assert_eq!(v["skipped"][0]["code"], "invalid_input");
    assert_eq!(v["skipped"][0]["line"], 5);
}

fn clean_wiki() -> PathBuf {
    repo().join("core/tests/fixtures/wikis/clean")
}

#[test]
fn lint_finds_exactly_the_planted_problems_and_exits_1() {
    let r = wikidex(&[
        "lint",
        repo().join("examples/wiki").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r.status.code(), Some(1));
    let v = json(&r);
    let mut found: Vec<(String, String)> = v["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["code"].as_str().unwrap().to_string(),
                i["page_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    let planted = [
        ("dangling_link", "runbook_backfill"),
        ("drifted_source", "incident_2024_03_memory_leak"),
        ("duplicate_key", "global/wiki_import/glossary.md"),
        ("links_archived", "decision_adopt_dbt"),
        ("links_stale", "exec_dashboard"),
        ("no_summary", "warehouse_costs"),
        ("orphan", "answer_why_nightly_crashed_2024_03_12"),
        ("redirect_chain", "kpi_glossary"),
        ("redirect_cycle", "metrics_faq"),
        ("unknown_source", "answer_why_nightly_crashed_2024_03_12"),
    ];
    let planted: Vec<(String, String)> = planted
        .iter()
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .collect();
    assert_eq!(found, planted);
    assert_eq!(v["errors"], 4);
}

#[test]
fn lint_of_a_clean_wiki_and_of_its_blob_exits_0() {
    let r = wikidex(&["lint", clean_wiki().to_str().unwrap()]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stdout)
    );
    let out = temp("clean").join("c.wdx");
    assert!(build(&clean_wiki(), &out, &[]).status.success());
    let r = wikidex(&["lint", out.to_str().unwrap(), "--json"]);
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(json(&r)["issues"], serde_json::json!([]));
}

#[test]
fn build_with_a_separate_raw_folder_indexes_it_as_raw() {
    let dir = temp("rawdir");
    let wiki = dir.join("wiki");
    std::fs::create_dir_all(wiki.join("global")).unwrap();
    std::fs::write(
        wiki.join("global/a.md"),
        "---\nsources: [raw/notes::chunk_0]\n---\nA page.",
    )
    .unwrap();
    let raw = dir.join("sources");
    std::fs::create_dir_all(&raw).unwrap();
    std::fs::write(raw.join("notes.txt"), "Raw notes about the outage.").unwrap();
    let out = dir.join("w.wdx");
    let r = build(&wiki, &out, &["--raw", raw.to_str().unwrap()]);
    assert_eq!(json(&r)["raw_documents"], 1);
    let r = wikidex(&[
        "chunk",
        out.to_str().unwrap(),
        "raw/notes::chunk_0",
        "--json",
    ]);
    assert_eq!(json(&r)["raw"], true);
}

#[test]
fn neighbors_prints_typed_edges_with_evidence() {
    let out = temp("nclean").join("c.wdx");
    assert!(build(&clean_wiki(), &out, &[]).status.success());
    let r = wikidex(&[
        "neighbors",
        out.to_str().unwrap(),
        "leak",
        "--depth",
        "1",
        "--json",
    ]);
    assert!(r.status.success());
    let v = json(&r);
    assert_eq!(
        v["chain"],
        serde_json::json!(["Memory leak --[causes]--> System crash"])
    );
    let causes = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "causes")
        .unwrap();
    assert_eq!(causes["chunk"], "raw/log::chunk_0");
    let r = wikidex(&["neighbors", out.to_str().unwrap(), "leak", "--depth", "3"]);
    assert_eq!(r.status.code(), Some(2));
    // Issue 9: as `page` and `chunk`, an unknown key is an error (it was an empty graph).
    assert_eq!(
        error_code(&["neighbors", out.to_str().unwrap(), "nothing", "--json"]),
        "unknown_page"
    );
}

#[test]
fn verify_passes_quotes_and_fails_fabricated_ids() {
    let dir = temp("verify");
    let out = dir.join("c.wdx");
    assert!(build(&clean_wiki(), &out, &[]).status.success());
    let answer = dir.join("answer.txt");
    std::fs::write(
        &answer,
        "The POD was OOM-killed   three times and the nightly job failed.",
    )
    .unwrap();
    let blob = out.to_str().unwrap();
    let ans = answer.to_str().unwrap();
    let r = wikidex(&[
        "verify",
        blob,
        "--answer",
        ans,
        "--cite",
        "raw/log::chunk_0",
        "--json",
    ]);
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(json(&r)["citations"][0]["status"], "quote");
    // The sentence that quotes the --cite chunk is cited, not reported as uncited.
    assert_eq!(json(&r)["support"]["uncited"], serde_json::json!([]));
    let r = wikidex(&[
        "verify",
        blob,
        "--answer",
        ans,
        "--cite",
        "raw/log::chunk_0,leak::chunk_5",
        "--offered",
        "crash::chunk_0",
        "--json",
    ]);
    assert_eq!(r.status.code(), Some(1));
    let v = json(&r);
    let statuses: Vec<&str> = v["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["none", "unknown", "uncited"]);
    let r = wikidex(&[
        "verify",
        blob,
        "--answer",
        ans,
        "--cite",
        "raw/log::chunk_0@0000",
        "--json",
    ]);
    assert_eq!(json(&r)["citations"][0]["status"], "drifted");
}

#[test]
fn search_prompt_block_lists_the_offered_chunks() {
    let blob = built_example();
    let r = wikidex(&[
        "search",
        blob.to_str().unwrap(),
        "why did the nightly job crash",
        "--prompt",
        "--json",
        "-n",
        "2",
    ]);
    assert!(r.status.success());
    let v = json(&r);
    assert!(v["text"].as_str().unwrap().starts_with("[page "));
    let offered: Vec<&str> = v["offered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"raw/slack_2024_03_12::chunk_0"),
        "{offered:?}"
    );
}

// ---- issue 9: hostile inputs at the command line ----

/// A small wiki in a fresh folder, built without embeddings (fast); returns (wiki, blob).
fn small_wiki(name: &str, files: &[(&str, &str)]) -> (PathBuf, PathBuf) {
    let dir = temp(name);
    let _ = std::fs::remove_dir_all(&dir);
    let wiki = dir.join("wiki");
    for (path, text) in files {
        let p = wiki.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let blob = dir.join("w.wdx");
    let r = build(&wiki, &blob, &["--no-embed"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
    (wiki, blob)
}

fn stdout(r: &Output) -> String {
    String::from_utf8_lossy(&r.stdout).into_owned()
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::process::Stdio;
    // A page bigger than a pipe's buffer, so the writer meets the closed end whatever the
    // timing.
    let big = "A line of text about revenue.\n".repeat(40_000);
    let (_, blob) = small_wiki("pipe", &[("global/big.md", big.as_str())]);
    let b = blob.to_str().unwrap();
    for args in [
        vec!["page", b, "big"],
        vec!["page", b, "big", "--json"],
        vec!["chunk", b, "big::chunk_0"],
        vec!["search", b, "revenue", "--json"],
        vec!["lint", b],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wikidex"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}");
        assert!(err.is_empty(), "{args:?} printed {err}");
    }
}

#[test]
fn control_characters_are_escaped_in_human_output_and_exact_in_json() {
    let title = "\u{1b}]0;pwned\u{7}\u{1b}[2J Title";
    let page = "---\ntitle: \"\\e]0;pwned\\a\\e[2J Title\"\nsummary: \"C1 \\u009b here\"\n---\nBody with \u{1b}[31mred\u{1b}[0m and DEL \u{7f}.\n";
    let (_, blob) = small_wiki("ctl", &[("global/evil.md", page)]);
    let b = blob.to_str().unwrap();
    for args in [
        vec!["page", b, "evil"],
        vec!["chunk", b, "evil::chunk_0"],
        vec!["search", b, "body red"],
        vec!["search", b, "body red", "--prompt"],
    ] {
        let r = wikidex(&args);
        assert!(r.status.success(), "{args:?}");
        let out = stdout(&r);
        assert!(
            !out.chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t')
                    || ('\u{80}'..='\u{9f}').contains(&c)),
            "{args:?} printed a raw control character: {out:?}"
        );
        assert!(out.contains("\\x1b"), "{args:?}: {out}");
    }
    let v = json(&wikidex(&["page", b, "evil", "--json"]));
    assert_eq!(v["title"], title, "JSON output stays exact");
    assert_eq!(v["summary"], "C1 \u{9b} here");
}

#[test]
fn neighbors_of_an_unknown_key_exits_1_with_unknown_page() {
    let (_, blob) = small_wiki(
        "nunknown",
        &[("global/a.md", "[[b]]"), ("global/b.md", "b")],
    );
    let r = wikidex(&["neighbors", blob.to_str().unwrap(), "nope"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("error[unknown_page]"));
    let r = wikidex(&["neighbors", blob.to_str().unwrap(), "a"]);
    assert!(r.status.success());
}

#[test]
fn an_unknown_scope_is_an_error_not_a_silent_global_search() {
    let (_, blob) = small_wiki(
        "scope",
        &[
            ("global/rev.md", "revenue"),
            ("user/alice/rev.md", "alice revenue"),
        ],
    );
    let b = blob.to_str().unwrap();
    for cmd in [
        vec!["search", b, "revenue", "--scope", "zed", "--json"],
        vec!["page", b, "rev", "--scope", "user/zed", "--json"],
        vec!["neighbors", b, "rev", "--scope", "zed", "--json"],
    ] {
        assert_eq!(error_code(&cmd), "invalid_argument", "{cmd:?}");
    }
    assert!(wikidex(&["search", b, "revenue", "--scope", "alice"])
        .status
        .success());
    assert!(wikidex(&["search", b, "revenue", "--scope", "global"])
        .status
        .success());
}

#[test]
fn a_dash_query_is_read_from_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let (_, blob) = small_wiki(
        "stdin",
        &[
            ("global/rev.md", "Revenue is recognized monthly."),
            ("global/x.md", "Other."),
        ],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_wikidex"))
        .args(["search", blob.to_str().unwrap(), "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"recognized revenue\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v = json(&out);
    assert_eq!(v["query"], "recognized revenue");
    assert_eq!(v["hits"][0]["key"], "rev");
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_wiki_root_is_not_indexed_unless_allowed() {
    let (wiki, _) = small_wiki("symlink", &[("global/real.md", "A real page.")]);
    let secret = wiki.parent().unwrap().join("secret.md");
    std::fs::write(&secret, "API_TOKEN=hunter2").unwrap();
    std::os::unix::fs::symlink(&secret, wiki.join("global/env.md")).unwrap();
    let out = wiki.parent().unwrap().join("s.wdx");
    let r = build(&wiki, &out, &["--no-embed"]);
    assert!(r.status.success());
    let v = json(&r);
    assert_eq!(v["pages"], 1);
    assert_eq!(v["skipped"][0]["path"], "global/env.md");
    assert_eq!(v["skipped"][0]["code"], "outside_root");
    assert!(!std::fs::read(&out)
        .unwrap()
        .windows(7)
        .any(|w| w == b"hunter2"));
    let r = wikidex(&["lint", wiki.to_str().unwrap(), "--json"]);
    assert!(!stdout(&r).contains("hunter2"));
    let r = build(&wiki, &out, &["--no-embed", "--follow-outside-root"]);
    assert_eq!(json(&r)["pages"], 2);
}

#[cfg(unix)]
#[test]
fn a_read_only_output_is_refused_and_a_symlinked_one_written_through() {
    use std::os::unix::fs::PermissionsExt;
    let (wiki, _) = small_wiki("readonly", &[("global/a.md", "alpha")]);
    let dir = wiki.parent().unwrap();
    let ro = dir.join("ro.wdx");
    std::fs::write(&ro, b"keep me").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let r = build(&wiki, &ro, &["--no-embed"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(json(&r)["error"]["code"], "io");
    assert_eq!(std::fs::read(&ro).unwrap(), b"keep me");
    assert_eq!(
        std::fs::metadata(&ro).unwrap().permissions().mode() & 0o777,
        0o444
    );
    let real = dir.join("real.wdx");
    std::fs::write(&real, b"").unwrap();
    let link = dir.join("link.wdx");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert!(build(&wiki, &link, &["--no-embed"]).status.success());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(wikidex(&["page", real.to_str().unwrap(), "a"])
        .status
        .success());
}

#[test]
fn hostile_pages_are_skipped_and_the_build_goes_on() {
    let mut bomb = String::from(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let bomb = format!("---\n{bomb}---\nbody\n");
    let deep = format!(
        "---\nx: {}1{}\n---\nbody\n",
        "[".repeat(127),
        "]".repeat(127)
    );
    let (wiki, blob) = small_wiki(
        "hostile",
        &[
            ("global/bomb.md", bomb.as_str()),
            ("global/deep.md", deep.as_str()),
            ("global/rule.md", "---\ntext under a rule\n"),
            ("global/ok.md", "fine"),
        ],
    );
    let r = build(&wiki, &blob, &["--no-embed"]);
    let v = json(&r);
    let skipped: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["global/bomb.md", "global/deep.md"]);
    assert_eq!(v["pages"], 2, "the rule page is kept, with a warning");
    assert_eq!(v["warnings"][0]["path"], "global/rule.md");
    // Strict fails, and the good blob at -o is left as it was.
    let before = std::fs::read(&blob).unwrap();
    let r = build(&wiki, &blob, &["--no-embed", "--strict"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(std::fs::read(&blob).unwrap(), before);
    assert!(wikidex(&["search", blob.to_str().unwrap(), "fine"])
        .status
        .success());
}

#[test]
fn verify_refuses_a_huge_answer_with_too_large() {
    let (_, blob) = small_wiki("huge", &[("global/a.md", "alpha")]);
    let answer = blob.parent().unwrap().join("answer.txt");
    std::fs::write(&answer, "word ".repeat(4_000_000)).unwrap();
    let code = error_code(&[
        "verify",
        blob.to_str().unwrap(),
        "--answer",
        answer.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, "too_large");
}

#[test]
fn beir_skip_lines_name_the_line_once() {
    let dir = temp("beirskip");
    std::fs::write(
        dir.join("corpus.jsonl"),
        "{\"_id\": \"d1\", \"text\": \"one\"}\nnot json\n",
    )
    .unwrap();
    let out = dir.join("b.wdx");
    let r = wikidex(&[
        "build",
        dir.to_str().unwrap(),
        "--beir",
        "--no-embed",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success());
    let text = stdout(&r);
    assert!(
        text.contains("skipped corpus.jsonl:2: [invalid_input]"),
        "{text}"
    );
}

#[test]
fn a_max_length_above_the_model_positions_is_a_model_error_at_load() {
    let model = repo().join("models/all-MiniLM-L6-v2");
    if !model.join("model.onnx").is_file() {
        eprintln!("skipped: no model at {}", model.display());
        return;
    }
    let r = wikidex(&[
        "embed",
        "hello",
        "--model",
        model.to_str().unwrap(),
        "--max-length",
        "1024",
        "--json",
    ]);
    assert_eq!(r.status.code(), Some(1));
    let v = json(&r);
    assert_eq!(v["error"]["code"], "model");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("512"), "{message}");
}

#[test]
fn tool_runs_one_agent_tool_and_lists_the_definitions() {
    let blob = built_example();
    let b = blob.to_str().unwrap();
    let r = wikidex(&[
        "tool",
        b,
        "search",
        r#"{"query": "who do I page for an outage", "limit": 2}"#,
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains("[page runbook_oncall · chunk runbook_oncall::chunk_0 · score "),
        "{text}"
    );
    let r = wikidex(&[
        "tool",
        b,
        "read_chunks",
        r#"{"ids": ["fake::chunk_1"]}"#,
        "--json",
    ]);
    assert_eq!(json(&r)["data"]["unknown"][0], "fake::chunk_1");
    let defs = json(&wikidex(&["tool", b]));
    assert_eq!(defs.as_array().map(Vec::len), Some(5));
    assert_eq!(
        error_code(&["tool", b, "search", r#"{"query": 1}"#, "--json"]),
        "invalid_argument"
    );
    assert_eq!(
        error_code(&["tool", b, "nope", "--json"]),
        "invalid_argument"
    );
}

#[test]
fn insights_lists_the_zero_result_queries_of_a_logged_session() {
    // With the default model: nonsense is below the semantic lane's floor, so it finds nothing
    // in any lane (issue 14). Real words the wiki lacks ("nonexistent gizmo") are still closer
    // to some page than nonsense, so the semantic lane answers them.
    let blob = temp("insights").join("wiki.wdx");
    let r = build(&repo().join("examples/wiki"), &blob, &[]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let b = blob.to_str().unwrap();
    let log = temp("insights").join("queries.jsonl");
    let _ = std::fs::remove_file(&log);
    let l = log.to_str().unwrap();
    for q in [
        "revenue recognition",
        "xqzvbnm plorkish",
        "the of and",
        "XQZVBNM plorkish",
    ] {
        let r = wikidex(&["search", b, q, "--log", l]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let r = wikidex(&[
        "tool",
        b,
        "search",
        r#"{"query": "zorblatt quinxy"}"#,
        "--log",
        l,
    ]);
    assert!(r.status.success());
    let answer = temp("insights").join("answer.txt");
    std::fs::write(&answer, "Nightly failed [made_up::chunk_0].").unwrap();
    wikidex(&[
        "verify",
        b,
        "--answer",
        answer.to_str().unwrap(),
        "--log",
        l,
    ]);

    let r = json(&wikidex(&["insights", l, "--index", b, "--json"]));
    assert_eq!(
        (r["searches"].as_u64(), r["verifies"].as_u64()),
        (Some(5), Some(1))
    );
    let gaps: Vec<(String, u64)> = r["zero_result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["key"].as_str().unwrap().to_string(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        gaps,
        [
            ("xqzvbnm plorkish".to_string(), 2),
            ("the of and".to_string(), 1),
            ("zorblatt quinxy".to_string(), 1)
        ]
    );
    assert_eq!(r["unknown_share"], 1.0);
    let text = String::from_utf8_lossy(&wikidex(&["insights", l]).stdout).to_string();
    assert!(
        text.contains("queries with no results (content gaps):"),
        "{text}"
    );
    assert!(text.contains("xqzvbnm plorkish"), "{text}");
}

/// Copies `src` (a folder tree) to `dst`.
fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

#[test]
fn sync_builds_once_then_only_what_changed() {
    let dir = temp("sync");
    let wiki = dir.join("wiki");
    copy_tree(&repo().join("examples/wiki"), &wiki);
    let blob = dir.join("wiki.wdx");
    let (w, b) = (wiki.to_str().unwrap(), blob.to_str().unwrap());
    let sync = || json(&wikidex(&["sync", w, "-o", b, "--no-embed", "--json"]));
    let first = sync();
    assert!(first["full"].as_str().unwrap().contains("no index"));
    assert_eq!(first["written"], true);
    let pages = first["pages"].as_u64().unwrap();
    let again = sync();
    assert_eq!(again["full"], Value::Null);
    assert_eq!(again["written"], false);
    assert_eq!(
        again["unchanged"].as_u64().unwrap(),
        first["added"].as_array().unwrap().len() as u64
    );

    let page = wiki.join("global/active_accounts.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("{text}\nAlso counted: zebras.\n")).unwrap();
    std::fs::remove_file(wiki.join("global/churn_rate.md")).unwrap();
    let third = sync();
    assert_eq!(
        third["changed"],
        serde_json::json!(["global/active_accounts.md"])
    );
    assert_eq!(
        third["removed"],
        serde_json::json!(["global/churn_rate.md"])
    );
    assert_eq!(third["pages"].as_u64().unwrap(), pages - 1);
    assert_eq!(third["written"], true);
    let hits = json(&wikidex(&["search", b, "zebras", "--json"]));
    assert_eq!(hits["hits"][0]["key"], "active_accounts");

    // A file that is not a blob this build reads is never replaced (issue 26).
    std::fs::write(&blob, b"not a blob").unwrap();
    let r = wikidex(&["sync", w, "-o", b, "--no-embed", "--json"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(json(&r)["error"]["code"], "invalid_argument");
    assert_eq!(std::fs::read(&blob).unwrap(), b"not a blob");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `build` writes the one blob format (1), which `sync` keeps; a blob of a format this build
/// does not read (here: the next one) is refused and left as it is, never replaced.
#[test]
fn sync_keeps_the_format_and_never_replaces_a_blob_of_another_format() {
    let dir = temp("format");
    let wiki = dir.join("wiki");
    copy_tree(&repo().join("examples/wiki"), &wiki);
    let blob = dir.join("w.wdx");
    let r = build(&wiki, &blob, &["--no-embed", "--no-file-times"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let version = |p: &Path| std::fs::read(p).unwrap()[8..12].to_vec();
    assert_eq!(version(&blob), 1u32.to_le_bytes());
    let page = wiki.join("global/active_accounts.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("{text}\nAlso counted: zebras.\n")).unwrap();
    let (w, b) = (wiki.to_str().unwrap(), blob.to_str().unwrap());
    let r = json(&wikidex(&["sync", w, "-o", b, "--no-embed", "--json"]));
    assert_eq!(r["written"], true);
    assert_eq!(version(&blob), 1u32.to_le_bytes());
    let hits = json(&wikidex(&["search", b, "zebras", "--json"]));
    assert_eq!(hits["hits"][0]["key"], "active_accounts");
    // The same blob labelled format 2: not read, so not replaced.
    let mut other = std::fs::read(&blob).unwrap();
    other[8..12].copy_from_slice(&2u32.to_le_bytes());
    std::fs::write(&blob, &other).unwrap();
    let r = wikidex(&["sync", w, "-o", b, "--no-embed", "--json"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(json(&r)["error"]["code"], "invalid_argument");
    assert_eq!(std::fs::read(&blob).unwrap(), other);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 15: an index built with multilingual-e5-small answers a German query, and `search`
/// finds the model under models/ by the id stored in the index (no --model).
#[test]
fn a_multilingual_index_answers_in_german_and_search_finds_its_model() {
    let model = repo().join("models/multilingual-e5-small");
    if !model.join("model-int8.onnx").is_file() {
        eprintln!("skipped: no model at {}", model.display());
        return;
    }
    let dir = temp("e5");
    let blob = dir.join("e5.wdx");
    let wiki = repo().join("examples/wiki");
    let r = wikidex(&[
        "build",
        wiki.to_str().unwrap(),
        "-o",
        blob.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--onnx",
        "model-int8.onnx",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let r = wikidex(&[
        "search",
        blob.to_str().unwrap(),
        "Wer hat Rufbereitschaft?",
        "--lanes",
        "semantic",
        "-n",
        "1",
        "--json",
    ]);
    let v = json(&r);
    assert_eq!(v["lanes"][1]["lane"], "semantic", "{v}");
    assert_eq!(v["lanes"][1]["status"], "ok", "{v}");
    assert_eq!(v["hits"][0]["page_id"], "runbook_oncall", "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn build_stores_file_times_for_the_date_filters_unless_told_not_to() {
    let dir = temp("file-times");
    let wiki = dir.join("wiki");
    std::fs::create_dir_all(wiki.join("global")).unwrap();
    let page = wiki.join("global/undated.md");
    std::fs::write(&page, "The nightly job runs at 03:00.").unwrap();
    let set_time = |secs: u64| {
        std::fs::File::options()
            .write(true)
            .open(&page)
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    };
    set_time(1_738_555_506); // 2025-02-03T04:05:06Z
    let blob = dir.join("a.wdx");
    assert!(build(&wiki, &blob, &[]).status.success());
    let hits = |since: &str| {
        let out = wikidex(&[
            "search",
            blob.to_str().unwrap(),
            "nightly",
            "--since",
            since,
            "--json",
        ]);
        json(&out)["hits"].as_array().unwrap().clone()
    };
    let found = hits("2025-02-01");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["date"], "2025-02-03T04:05:06Z");
    assert!(hits("2025-03-01").is_empty());
    // Without file times the blob depends on the texts alone: the same bytes after a touch.
    let first = dir.join("b.wdx");
    let second = dir.join("c.wdx");
    assert!(build(&wiki, &first, &["--no-file-times"]).status.success());
    set_time(1_700_000_000);
    assert!(build(&wiki, &second, &["--no-file-times"]).status.success());
    assert_eq!(
        std::fs::read(&first).unwrap(),
        std::fs::read(&second).unwrap()
    );
    assert!(hits("2025-02-01").len() == 1, "the first blob is unchanged");
    let out = wikidex(&[
        "search",
        first.to_str().unwrap(),
        "nightly",
        "--since",
        "2000-01-01",
        "--json",
    ]);
    assert!(json(&out)["hits"].as_array().unwrap().is_empty());
}

// ---- issue 26: hardening, round two ----

/// Runs `wikidex` with `args` and standard input closed, and fails the test (killing it) if
/// it has not ended within `seconds`: a command that would block on a FIFO fails, not hangs.
fn wikidex_within(args: &[&str], seconds: u64) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wikidex"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run wikidex");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("wikidex {args:?} did not end within {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

#[test]
fn issue_26_outputs_that_are_not_regular_files_are_refused_and_left_alone() {
    let (wiki, _) = small_wiki("fifo-out", &[("global/a.md", "alpha")]);
    let dir = wiki.parent().unwrap();
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let link = dir.join("link.wdx");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let w = wiki.to_str().unwrap();
    for target in [&fifo, &link] {
        let t = target.to_str().unwrap();
        for args in [
            vec!["build", w, "-o", t, "--no-embed", "--json"],
            vec!["sync", w, "-o", t, "--no-embed", "--json"],
            vec!["mcp", w, "--index", t, "--no-embed"],
        ] {
            let r = wikidex_within(&args, 60);
            assert_eq!(r.status.code(), Some(1), "{args:?}");
            let said = format!("{}{}", stdout(&r), String::from_utf8_lossy(&r.stderr));
            assert!(said.contains("invalid_argument") || said.contains("not a regular file"));
            assert!(said.contains("FIFO"), "{args:?}: {said}");
            assert!(is_fifo(&fifo), "{args:?} left the FIFO as it was");
        }
    }
}

#[test]
fn issue_26_sync_replaces_only_a_blob_it_reads() {
    let (wiki, blob) = small_wiki("sync-foreign", &[("global/a.md", "alpha")]);
    let dir = wiki.parent().unwrap();
    let w = wiki.to_str().unwrap();
    // A page of the wiki, a note, and a blob of a newer format.
    let page = wiki.join("global/a.md");
    let note = dir.join("notes.txt");
    std::fs::write(&note, "my notes").unwrap();
    let newer = dir.join("newer.wdx");
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[8..12].copy_from_slice(&999u32.to_le_bytes());
    std::fs::write(&newer, &bytes).unwrap();
    for target in [&page, &note, &newer] {
        let before = std::fs::read(target).unwrap();
        let t = target.to_str().unwrap();
        for args in [
            vec!["sync", w, "-o", t, "--no-embed", "--json"],
            vec!["mcp", w, "--index", t, "--no-embed"],
        ] {
            let r = wikidex_within(&args, 60);
            assert_eq!(r.status.code(), Some(1), "{args:?}");
            assert_eq!(std::fs::read(target).unwrap(), before, "{args:?}");
        }
    }
    assert_eq!(
        error_code(&[
            "sync",
            w,
            "-o",
            newer.to_str().unwrap(),
            "--no-embed",
            "--json"
        ]),
        "invalid_argument"
    );
    // `build -o` replaces a blob of any version, or nothing, but not a note.
    assert_eq!(
        error_code(&[
            "build",
            w,
            "-o",
            note.to_str().unwrap(),
            "--no-embed",
            "--json"
        ]),
        "invalid_argument"
    );
    assert!(build(&wiki, &newer, &["--no-embed"]).status.success());
}

#[test]
fn issue_26_special_files_are_refused_as_blobs_answers_and_logs_without_blocking() {
    let (_, blob) = small_wiki("special-in", &[("global/a.md", "alpha")]);
    let dir = blob.parent().unwrap();
    let fifo = dir.join("in.fifo");
    mkfifo(&fifo);
    let b = blob.to_str().unwrap();
    for special in [fifo.to_str().unwrap(), "/dev/zero"] {
        for args in [
            vec!["search", special, "alpha", "--json"],
            vec![
                "verify",
                b,
                "--answer",
                special,
                "--cite",
                "a::chunk_0",
                "--json",
            ],
            vec!["insights", special, "--json"],
            vec!["mcp", special],
        ] {
            let r = wikidex_within(&args, 60);
            assert_eq!(r.status.code(), Some(1), "{args:?}");
            let said = format!("{}{}", stdout(&r), String::from_utf8_lossy(&r.stderr));
            assert!(said.contains("not a regular file"), "{args:?}: {said}");
        }
    }
}

/// A blob's header is read before the rest: a huge file that is not a blob is refused after
/// reading 56 bytes (here a sparse 64 GiB file, which no machine here could read whole).
#[test]
fn issue_26_a_huge_foreign_file_is_refused_on_its_header() {
    let dir = temp("sparse");
    let sparse = dir.join("sparse.wdx");
    let f = std::fs::File::create(&sparse).unwrap();
    f.set_len(64 << 30).unwrap();
    drop(f);
    let r = wikidex_within(&["search", sparse.to_str().unwrap(), "x", "--json"], 60);
    assert_eq!(json(&r)["error"]["code"], "not_an_index");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn issue_26_a_long_output_name_and_a_killed_saves_leftover() {
    let (wiki, _) = small_wiki("long-name", &[("global/a.md", "alpha")]);
    let dir = wiki.parent().unwrap();
    let long = dir.join(format!("{}.wdx", "n".repeat(246)));
    assert!(build(&wiki, &long, &["--no-embed"]).status.success());
    // What a save killed with SIGKILL leaves: its temporary file, unlocked, some time ago.
    let blob = dir.join("w.wdx");
    let left = dir.join(".w.wdx.tmp-4000000-0-0");
    let f = std::fs::File::create(&left).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(30))
        .unwrap();
    drop(f);
    std::fs::write(wiki.join("global/b.md"), "bravo").unwrap();
    let r = wikidex(&[
        "sync",
        wiki.to_str().unwrap(),
        "-o",
        blob.to_str().unwrap(),
        "--no-embed",
        "--json",
    ]);
    assert_eq!(json(&r)["written"], true);
    assert!(
        !left.exists(),
        "the next save removes what a killed one left"
    );
}

#[test]
fn issue_26_a_beir_id_with_a_slash_skips_its_line_only() {
    let dir = temp("beir-slash");
    std::fs::write(
        dir.join("corpus.jsonl"),
        "{\"_id\": \"d1\", \"text\": \"one\"}\n{\"_id\": \"a/b\", \"text\": \"two\"}\n",
    )
    .unwrap();
    let out = dir.join("b.wdx");
    let r = build(&dir, &out, &["--beir", "--no-embed"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stdout));
    let v = json(&r);
    assert_eq!(v["pages"], 1);
    assert_eq!(v["skipped"][0]["code"], "invalid_input");
    assert_eq!(v["skipped"][0]["line"], 2);
    assert!(build(&dir, &out, &["--beir", "--no-embed", "--strict"])
        .status
        .code()
        .is_some_and(|c| c == 1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn issue_26_chunk_help_shows_the_chunk_id_whole() {
    let help = stdout(&wikidex(&["chunk", "--help"]));
    assert!(help.contains("`PAGE::chunk_N`"), "{help}");
}

/// A docs folder as a site generator reads it: `index.md` in two folders, a `user/` folder
/// (a folder like any other in a docs site, not a scope), a page with its own permalink.
fn docs_folder() -> PathBuf {
    let src = temp("docs-src");
    let write = |path: &str, text: &str| {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("index.md", "# Home\n\nWelcome to the widget docs.\n");
    write("guide/index.md", "# Guide\n\nThe guide to widgets.\n");
    write(
        "guide/install.md",
        "# Installing\n\nIntro.\n\n## Install on Linux\n\nRun the frobnicator installer with sudo.\n",
    );
    write(
        "user/settings.md",
        "---\ntags: [config]\n---\n# Settings\n\nThe colour setting.\n",
    );
    write(
        "about.md",
        "---\npermalink: /about-us/\n---\n# About\n\nWho made the widgets.\n",
    );
    src
}

#[test]
fn site_writes_a_bundle_that_links_hits_to_the_built_pages() {
    let src = docs_folder();
    let out = temp("docs-site");
    std::fs::write(out.join("index.html"), "<!doctype html><title>mine</title>").unwrap();
    let r = wikidex(&[
        "site",
        src.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--layout",
        "mkdocs",
        "--json",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let report = json(&r);
    let bundle = out.join("wikidex");
    let site: Value =
        serde_json::from_slice(&std::fs::read(bundle.join("site.json")).unwrap()).unwrap();
    assert_eq!(report["site"], site);
    assert_eq!(site["pages"], 5, "{site}");
    assert_eq!(site["root"], "../");
    assert_eq!(site["tags"], serde_json::json!(["config"]));
    assert_eq!(site["links"]["layout"], "mkdocs");
    assert_eq!(site["links"]["pages"]["about.md"], "/about-us/");
    for f in [
        "wikidex.wdx",
        "site.json",
        "wikidex_wasm.js",
        "wikidex_wasm_bg.wasm",
        "ranged.js",
        "ui.js",
        "ui.css",
        "worker.js",
    ] {
        assert!(bundle.join(f).is_file(), "{f} missing from the bundle");
    }
    let blob = std::fs::read(bundle.join("wikidex.wdx")).unwrap();
    assert_eq!(
        site["head_end"],
        wikidex::RangedIndex::head_end(&blob).unwrap()
    );
    // The author's page is as it was; nothing but the bundle was written.
    assert_eq!(
        std::fs::read_to_string(out.join("index.html")).unwrap(),
        "<!doctype html><title>mine</title>"
    );
    let mut top: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    top.sort();
    assert_eq!(top, ["index.html", "wikidex"]);
    // Keys from whole paths: both index pages are there, and `user/` is no scope.
    let s = wikidex(&[
        "search",
        bundle.join("wikidex.wdx").to_str().unwrap(),
        "frobnicator installer",
        "--json",
    ]);
    let hits = json(&s)["hits"].clone();
    assert_eq!(hits[0]["page_id"], "guide.install");
    assert_eq!(hits[0]["path"], "guide/install.md");
    let ids = wikidex(&[
        "search",
        bundle.join("wikidex.wdx").to_str().unwrap(),
        "colour setting",
        "--json",
    ]);
    assert_eq!(json(&ids)["hits"][0]["page_id"], "user.settings");
    // Built again: the bundle is replaced in place.
    let again = wikidex(&[
        "site",
        src.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--layout",
        "mkdocs",
        "--json",
    ]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn site_with_a_model_adds_what_the_semantic_toggle_loads_and_drops_it_without() {
    let minilm = repo().join("models/all-MiniLM-L6-v2");
    if !minilm.join("model-int8.onnx").is_file() {
        eprintln!("skipped: no model at {}", minilm.display());
        return;
    }
    // The int8 model as its package ships it: a folder with model.onnx and tokenizer.json.
    let model = temp("site-model");
    std::os::unix::fs::symlink(minilm.join("model-int8.onnx"), model.join("model.onnx")).unwrap();
    std::os::unix::fs::symlink(minilm.join("tokenizer.json"), model.join("tokenizer.json"))
        .unwrap();
    let src = docs_folder();
    let out = temp("docs-site-model");
    let site = |extra: &[&str]| {
        let mut args = vec![
            "site",
            src.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--layout",
            "mkdocs",
            "--json",
        ];
        args.extend(extra);
        let r = wikidex(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        json(&r)
    };
    let report = site(&["--model", model.to_str().unwrap()]);
    let bundle = out.join("wikidex");
    let semantic = &report["site"]["semantic"];
    assert_eq!(semantic["dim"], 384, "{semantic}");
    assert_eq!(semantic["module"], "semantic/wikidex_wasm.js");
    let mut bytes = 0;
    for f in [
        "model.onnx",
        "tokenizer.json",
        "wikidex_wasm.js",
        "wikidex_wasm_bg.wasm",
    ] {
        let path = bundle.join("semantic").join(f);
        assert!(path.is_file(), "{f} missing from the bundle");
        bytes += std::fs::metadata(&path).unwrap().len();
    }
    assert_eq!(semantic["bytes"], bytes);
    assert_eq!(
        std::fs::read(bundle.join(semantic["onnx"].as_str().unwrap())).unwrap(),
        std::fs::read(minilm.join("model-int8.onnx")).unwrap()
    );
    // The blob holds the pages' vectors: a search with the model runs the semantic lane.
    let blob = bundle.join("wikidex.wdx");
    let s = wikidex(&[
        "search",
        blob.to_str().unwrap(),
        "installing it",
        "--model",
        model.to_str().unwrap(),
        "--json",
    ]);
    let lanes = json(&s)["lanes"].clone();
    let semantic_lane = lanes
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["lane"] == "semantic")
        .unwrap();
    assert_eq!(semantic_lane["status"], "ok", "{lanes}");
    // Written again without a model: no semantic lane, and none of its files left behind.
    let report = site(&[]);
    assert!(report["site"].get("semantic").is_none(), "{report}");
    assert!(!bundle.join("semantic").exists());
    // A folder without a model is a coded error naming the file it lacks, as `build --model`'s.
    let err = wikidex(&[
        "site",
        src.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--layout",
        "mkdocs",
        "--model",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(err.status.code(), Some(1));
    let e = json(&err)["error"].clone();
    assert_eq!(e["code"], "io", "{e}");
    assert!(e["message"].as_str().unwrap().contains("model.onnx"), "{e}");
}

#[test]
fn site_refuses_what_it_cannot_do_with_coded_errors() {
    let src = docs_folder();
    let out = temp("docs-site-errors");
    let (s, o) = (src.to_str().unwrap(), out.to_str().unwrap());
    assert_eq!(
        error_code(&["site", s, "--out", o, "--json"]),
        "invalid_argument"
    );
    assert_eq!(
        error_code(&["site", s, "--out", o, "--layout", "jekyll", "--json"]),
        "invalid_argument"
    );
    assert_eq!(
        error_code(&["site", s, "--out", o, "--url-pattern", "/docs/", "--json"]),
        "invalid_argument"
    );
    assert_eq!(
        error_code(&[
            "site",
            s,
            "--out",
            o,
            "--layout",
            "hugo",
            "--bundle-dir",
            "../up",
            "--json"
        ]),
        "invalid_argument"
    );
    // A folder of the author's own is never written into.
    std::fs::create_dir_all(out.join("assets")).unwrap();
    std::fs::write(out.join("assets/app.js"), "mine").unwrap();
    assert_eq!(
        error_code(&[
            "site",
            s,
            "--out",
            o,
            "--layout",
            "hugo",
            "--bundle-dir",
            "assets",
            "--json"
        ]),
        "invalid_argument"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("assets/app.js")).unwrap(),
        "mine"
    );
    // A pattern: the URL rule the site uses instead of a layout's.
    let r = wikidex(&[
        "site",
        s,
        "--out",
        o,
        "--url-pattern",
        "/docs/{path}.html",
        "--bundle-dir",
        "search",
        "--json",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(json(&r)["site"]["links"]["pattern"], "/docs/{path}.html");
}

/// Issue 32: the analysis language follows a German wiki unless `--language` names one, and
/// the report says which and why.
#[test]
fn issue_32_a_german_wiki_is_analyzed_as_german_unless_told() {
    let dir = temp("german");
    let wiki = dir.join("wiki");
    std::fs::create_dir_all(wiki.join("global")).unwrap();
    std::fs::write(
        wiki.join("global/sicherung.md"),
        "# Sicherung\n\nDie Datenbank wird jede Nacht um zwei Uhr gesichert, und die Sicherungen werden dreißig Tage lang aufbewahrt, bevor sie gelöscht werden.",
    )
    .unwrap();
    std::fs::write(
        wiki.join("global/urlaub.md"),
        "# Urlaub\n\nUrlaub wird mindestens zwei Wochen vorher im Kalender eingetragen und von der Teamleitung bestätigt; Krankheitstage meldet man am selben Morgen.",
    )
    .unwrap();
    let out = dir.join("w.wdx");
    let v = json(&build(&wiki, &out, &["--no-embed"]));
    assert_eq!(v["language"], "german");
    assert_eq!(v["languages"]["languages"][0]["language"], "deu");
    assert!(v["language_reason"]
        .as_str()
        .unwrap()
        .starts_with("german: the main language"));
    let v = json(&build(
        &wiki,
        &out,
        &["--no-embed", "--language", "english"],
    ));
    assert_eq!(v["language"], "english");
    assert_eq!(v["language_reason"], Value::Null);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Copies the example wiki's files whose index (in sorted order) `keep` accepts into `to`.
fn copy_example(to: &Path, keep: impl Fn(usize) -> bool) {
    let root = repo().join("examples/wiki");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    for (_, rel) in files.iter().enumerate().filter(|(i, _)| keep(*i)) {
        std::fs::create_dir_all(to.join(rel).parent().unwrap()).unwrap();
        std::fs::copy(root.join(rel), to.join(rel)).unwrap();
    }
}

#[test]
fn merge_of_shards_built_apart_is_the_blob_of_one_build() {
    let dir = temp("merge");
    let flags = ["--no-embed", "--no-file-times"];
    copy_example(&dir.join("whole"), |_| true);
    let whole = dir.join("whole.wdx");
    assert!(build(&dir.join("whole"), &whole, &flags).status.success());
    let mut shards = Vec::new();
    for s in 0..3 {
        let folder = dir.join(format!("shard{s}"));
        copy_example(&folder, |i| i % 3 == s);
        let out = dir.join(format!("shard{s}.wdx"));
        let r = build(&folder, &out, &flags);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        shards.push(out.to_str().unwrap().to_string());
    }
    let merged = dir.join("merged.wdx");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(String::as_str));
    args.extend(["-o", merged.to_str().unwrap(), "--json"]);
    args.extend(flags);
    let r = wikidex(&args);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(json(&r)["pages"], 42);
    assert!(std::fs::read(&merged).unwrap() == std::fs::read(&whole).unwrap());
    // A shard that is not an index is refused by its code, and nothing is written.
    let junk = dir.join("junk.wdx");
    std::fs::write(&junk, "not an index").unwrap();
    let out = dir.join("never.wdx");
    assert_eq!(
        error_code(&[
            "merge",
            junk.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--json"
        ]),
        "not_an_index"
    );
    assert!(!out.exists());
}

#[test]
fn a_search_read_in_parts_prints_what_a_whole_load_prints() {
    // Without `--log` or `--prompt`, `search` reads only the parts of the blob it needs; with
    // `--log` it loads the whole index into a session. The two must print the same, in JSON
    // and in text.
    let dir = temp("parts");
    let blob = dir.join("wiki.wdx");
    let r = build(&repo().join("examples/wiki"), &blob, &["--no-embed"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let b = blob.to_str().unwrap();
    let log = dir.join("log.jsonl");
    let cases: [&[&str]; 7] = [
        &["revenue churn"],
        &["revenue", "--json", "--explain", "--facets"],
        &["incdent postmortem", "--json", "--chunks", "--limit", "3"],
        &["revenue", "--scope", "alice", "--json", "--always-first"],
        &["revenue", "--tag", "finance", "--json", "--no-typos"],
        &["\"net revenue\"", "--lanes", "lexical,token", "--explain"],
        &[
            "on-call",
            "--type",
            "runbook",
            "--json",
            "--since",
            "2020-01-01",
        ],
    ];
    same_in_parts(&blob, &log, &cases);
    // An unknown scope is refused on both paths.
    assert_eq!(
        error_code(&["search", b, "revenue", "--scope", "nobody", "--json"]),
        "invalid_argument"
    );
}

/// Runs `search BLOB` with each case's arguments read in parts, then with `--log` (a whole
/// load into a session), and checks that both succeed and print the same.
fn same_in_parts(blob: &Path, log: &Path, cases: &[&[&str]]) {
    let (b, l) = (blob.to_str().unwrap(), log.to_str().unwrap());
    for &case in cases {
        let mut args = vec!["search", b];
        args.extend_from_slice(case);
        let parts = wikidex(&args);
        assert!(
            parts.status.success(),
            "{case:?}: {}",
            String::from_utf8_lossy(&parts.stderr)
        );
        args.extend_from_slice(&["--log", l]);
        let whole = wikidex(&args);
        assert!(
            whole.status.success(),
            "{case:?}: {}",
            String::from_utf8_lossy(&whole.stderr)
        );
        assert_eq!(stdout(&parts), stdout(&whole), "{case:?}");
        assert_eq!(
            String::from_utf8_lossy(&parts.stderr),
            String::from_utf8_lossy(&whole.stderr),
            "{case:?}"
        );
        assert!(!stdout(&parts).is_empty(), "{case:?}");
    }
}

#[test]
fn a_semantic_search_read_in_parts_prints_what_a_whole_load_prints() {
    // A blob with vectors: the model (found by the id stored in the blob) embeds the query,
    // and the search reads the vectors' section with the other parts it needs.
    let blob = built_example();
    let log = blob.with_file_name("log.jsonl");
    let cases: [&[&str]; 4] = [
        &["why did the nightly job crash", "--json", "--explain"],
        &["who to page for an outage", "--lanes", "semantic", "--json"],
        &["revenue", "--explain", "-n", "3"],
        &["xqzvbnm plorkish", "--json"],
    ];
    same_in_parts(&blob, &log, &cases);
    let r = wikidex(&[
        "search",
        blob.to_str().unwrap(),
        "who to page for an outage",
        "--json",
    ]);
    assert_eq!(json(&r)["lanes"][1]["status"], "ok");
    // Another model named on the command line is refused on both paths.
    let e5 = repo().join("models/multilingual-e5-small");
    if e5.join("tokenizer.json").is_file() {
        for extra in [&[][..], &["--log", log.to_str().unwrap()][..]] {
            let mut args = vec![
                "search",
                blob.to_str().unwrap(),
                "outage",
                "--json",
                "--model",
                e5.to_str().unwrap(),
            ];
            args.extend_from_slice(extra);
            assert_eq!(error_code(&args), "model_mismatch", "{extra:?}");
        }
    }
}
