//! Issue 9: hostile inputs, one table. Each row is one bad input as a new user (or an attacker)
//! would give it, with the coded error or the defined outcome it must get: never a panic, a
//! hang or a silent wrong answer. A failed write leaves the index, and a failed save the file
//! on disk, byte-identical.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wikidex::cite::Cited;
use wikidex::{Index, IndexBuilder, Page, Session, TraverseOptions, WriteOptions};

/// What one input did, as a short comparable string:
/// `err:<code>` the call failed with that code; `skipped:<code>` the build went on and
/// reported the file; `warning` it was indexed with a warning; `ok` it was accepted.
type Outcome = String;

fn err(e: &wikidex::Error) -> Outcome {
    format!("err:{}", e.code())
}

/// Builds an index from `files` and reports the first skip, else a warning, else `ok`.
fn build_outcome(files: &[(&str, Vec<u8>)]) -> Outcome {
    let mut b = IndexBuilder::new(Default::default()).expect("builder");
    for (path, bytes) in files {
        if let Err(e) = b.add_file(path, bytes) {
            return err(&e);
        }
    }
    match b.build() {
        Err(e) => err(&e),
        Ok((index, report)) => {
            // Whatever was indexed must survive the blob round trip.
            let bytes = index.to_bytes().expect("encode");
            Index::from_bytes(&bytes).expect("a built index always loads again");
            if let Some(s) = report.skipped.first() {
                format!("skipped:{}", s.code)
            } else if !report.warnings.is_empty() {
                "warning".into()
            } else {
                "ok".into()
            }
        }
    }
}

fn file(path: &'static str, text: impl Into<Vec<u8>>) -> Outcome {
    build_outcome(&[(path, text.into())])
}

/// A small wiki the write and read rows run against.
fn base() -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file(
        "global/revenue.md",
        b"---\nsummary: Money in.\n---\nRevenue is recognized monthly in USD by the finance team.",
    )
    .unwrap();
    b.add_file(
        "global/churn.md",
        b"Churn is the share of accounts lost. See [[revenue]].",
    )
    .unwrap();
    b.add_file(
        "raw/log.txt",
        b"The pod was OOM-killed three times and the nightly job failed at 03:31 UTC.",
    )
    .unwrap();
    b.build().unwrap().0
}

/// Upserts into a session over the base index; a failed write must leave its index
/// byte-identical.
fn upsert(path: &str, text: &str) -> Outcome {
    let session = Session::new(base());
    let before = session.to_bytes().unwrap();
    match session.upsert_page(path, text, &WriteOptions::default()) {
        Ok(r) if r.warnings.is_empty() => "ok".into(),
        Ok(_) => "warning".into(),
        Err(e) => {
            assert_eq!(
                session.to_bytes().unwrap(),
                before,
                "a failed upsert of {path} changed the index"
            );
            err(&e)
        }
    }
}

/// A valid page to break one field of.
fn page() -> Page {
    wikidex::page::parse("global/p.md", "---\ntitle: P\n---\nBody text é.\n")
        .unwrap()
        .page
}

fn add_page(p: Page) -> Outcome {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    match b.add_page(p) {
        Err(e) => err(&e),
        Ok(()) => {
            let (index, _) = b.build().unwrap();
            Index::from_bytes(&index.to_bytes().unwrap()).unwrap();
            "ok".into()
        }
    }
}

fn verify(answer: &str, cited: &[Cited], offered: &[String]) -> Outcome {
    match base().verify(answer, cited, offered) {
        Ok(_) => "ok".into(),
        Err(e) => err(&e),
    }
}

fn support(answer: &str) -> Outcome {
    match base().uncited_support(answer) {
        Ok(_) => "ok".into(),
        Err(e) => err(&e),
    }
}

fn blob(bytes: &[u8]) -> Outcome {
    match Index::from_bytes(bytes) {
        Ok(_) => "ok".into(),
        Err(e) => err(&e),
    }
}

fn resolve(files: &[(String, String)], key: &str) -> Outcome {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in files {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let (index, _) = b.build().unwrap();
    match index.resolve(key, None) {
        Ok(Some(_)) => "ok".into(),
        Ok(None) => "none".into(),
        Err(e) => err(&e),
    }
}

/// Frontmatter whose anchors each name the one before `fan` times, `levels` deep.
fn alias_bomb(levels: usize, fan: usize) -> String {
    let names: Vec<String> = (0..levels)
        .map(|i| match u8::try_from(i) {
            Ok(i) if i < 26 => char::from(b'a' + i).to_string(),
            _ => format!("a{i}"),
        })
        .collect();
    let mut y = format!(
        "{}: &{} [{}]\n",
        names[0],
        names[0],
        vec!["lol"; fan].join(",")
    );
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); fan].join(",");
        y.push_str(&format!("{}: &{} [{refs}]\n", w[1], w[1]));
    }
    format!("---\n{y}---\nbody\n")
}

fn nested(open: &str, close: &str, depth: usize) -> String {
    format!(
        "---\nx: {}1{}\n---\nbody\n",
        open.repeat(depth),
        close.repeat(depth)
    )
}

fn nested_maps(depth: usize) -> String {
    format!(
        "---\nx: {}1{}\n---\nbody\n",
        "{a: ".repeat(depth),
        "}".repeat(depth)
    )
}

/// `n` lines `- [[pageN]]` (an ordinary index page).
fn link_lines(n: usize) -> String {
    (0..n).map(|i| format!("- [[page{i}]]\n")).collect()
}

/// `n` links on one line.
fn links_one_line(n: usize) -> String {
    (0..n).map(|i| format!("[[page{i}]] ")).collect()
}

/// An answer citing `n` distinct (made-up) chunk ids.
fn ids_answer(n: usize) -> String {
    (0..n).map(|i| format!("Claim [p{i}::chunk_0]. ")).collect()
}

fn redirect_chain(hops: usize, with_start: bool) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = (1..=hops)
        .map(|n| {
            (
                format!("p{n}.md"),
                format!("---\nredirect_from: [p{}]\n---\nx", n - 1),
            )
        })
        .collect();
    if with_start {
        files.push(("p0.md".into(), "x".into()));
    }
    files
}

fn blob_bytes() -> Vec<u8> {
    base().to_bytes().unwrap()
}

/// One hostile input: its name, how to run it, and the outcome expected.
type Row<'a> = (&'a str, Box<dyn Fn() -> Outcome + 'a>, &'a str);

#[test]
fn every_hostile_input_gets_its_coded_error_or_defined_outcome() {
    let s = |x: &str| x.to_string();
    let mut bad_key = page();
    bad_key.key = String::new();
    let rows: Vec<Row> = vec![
        // Frontmatter that explodes or nests.
        (
            "alias bomb, 9 levels of 9 (~300 bytes)",
            Box::new(|| file("global/bomb.md", alias_bomb(9, 9))),
            "skipped:invalid_page",
        ),
        (
            "alias bomb, 8 levels of 8 (~275 bytes)",
            Box::new(|| file("global/bomb.md", alias_bomb(8, 8))),
            "skipped:invalid_page",
        ),
        (
            "alias bomb, 30 levels of 2 (linear text, 2^30 nodes)",
            Box::new(|| file("global/bomb.md", alias_bomb(30, 2))),
            "skipped:invalid_page",
        ),
        (
            "alias bomb in a raw-looking page key",
            Box::new(|| file("user/eve/bomb.md", alias_bomb(9, 9))),
            "skipped:invalid_page",
        ),
        (
            "one alias of a small anchor",
            Box::new(|| file("global/a.md", "---\nbase: &b {x: 1}\nother: *b\n---\nok")),
            "ok",
        ),
        (
            "unknown field nested 127 lists deep",
            Box::new(|| file("global/deep.md", nested("[", "]", 127))),
            "skipped:invalid_page",
        ),
        (
            "unknown field nested 127 mappings deep",
            Box::new(|| file("global/deep.md", nested_maps(127))),
            "skipped:invalid_page",
        ),
        (
            "unknown field nested 32 deep (one past the limit with the top mapping)",
            Box::new(|| file("global/deep.md", nested("[", "]", 32))),
            "skipped:invalid_page",
        ),
        (
            "unknown field nested 31 deep (at the limit)",
            Box::new(|| file("global/deep.md", nested("[", "]", 31))),
            "ok",
        ),
        (
            "unknown field nested 10,000 deep",
            Box::new(|| file("global/deep.md", nested("[", "]", 10_000))),
            "skipped:invalid_page",
        ),
        (
            "frontmatter over 256 KiB",
            Box::new(|| {
                file(
                    "global/big.md",
                    format!("---\nx: \"{}\"\n---\n", "a".repeat(300 * 1024)),
                )
            }),
            "skipped:invalid_page",
        ),
        (
            "broken YAML",
            Box::new(|| file("global/bad.md", "---\ntags: [a, b\n---\nx")),
            "skipped:invalid_page",
        ),
        (
            "frontmatter that is a list",
            Box::new(|| file("global/list.md", "---\n- a\n- b\n---\nx")),
            "skipped:invalid_page",
        ),
        (
            "frontmatter that is a scalar",
            Box::new(|| file("global/scalar.md", "---\njust words\n---\nx")),
            "skipped:invalid_page",
        ),
        (
            "a tab-indented block",
            Box::new(|| file("global/tab.md", "---\na:\n\t- b\n---\nx")),
            "skipped:invalid_page",
        ),
        (
            "an undefined alias",
            Box::new(|| file("global/alias.md", "---\na: *nothing\n---\nx")),
            "skipped:invalid_page",
        ),
        // Fences.
        (
            "first line `---` never closed (a rule)",
            Box::new(|| file("global/rule.md", "---\nSome text under a rule.\n")),
            "warning",
        ),
        (
            "only `---`",
            Box::new(|| file("global/rule.md", "---")),
            "warning",
        ),
        (
            "byte-order mark, then an unclosed `---`",
            Box::new(|| file("global/rule.md", "\u{feff}---\ntext")),
            "warning",
        ),
        (
            "empty frontmatter",
            Box::new(|| file("global/empty.md", "---\n---\n")),
            "ok",
        ),
        // Bytes and names.
        (
            "invalid UTF-8",
            Box::new(|| file("global/bin.md", b"ok\n\xff\xfe".to_vec())),
            "skipped:invalid_page",
        ),
        (
            "invalid UTF-8 raw document",
            Box::new(|| file("raw/bin.txt", b"\xc3\x28".to_vec())),
            "skipped:invalid_page",
        ),
        (
            "a file name with no key",
            Box::new(|| file("global/ .md", "x")),
            "skipped:invalid_page",
        ),
        (
            "NUL and control bytes in the body",
            Box::new(|| file("global/ctl.md", "a\u{0}b\u{1b}[2J\u{7f}\u{9b}c")),
            "ok",
        ),
        (
            "terminal escapes in the title",
            Box::new(|| {
                file(
                    "global/t.md",
                    "---\ntitle: \"\\e]0;pwned\\a\\e[2J\"\n---\nx",
                )
            }),
            "ok",
        ),
        ("empty file", Box::new(|| file("global/empty.md", "")), "ok"),
        (
            "Revenue.md and revenue.md in one scope",
            Box::new(|| {
                build_outcome(&[
                    ("global/revenue.md", b"a".to_vec()),
                    ("global/Revenue.md", b"b".to_vec()),
                ])
            }),
            "skipped:duplicate_key",
        ),
        // Relations.
        (
            "relation confidence `high`",
            Box::new(|| {
                file(
                    "global/r.md",
                    "---\nrelations:\n  - {target: a, confidence: high}\n  - {target: b}\n---\n",
                )
            }),
            "warning",
        ),
        (
            "relation confidence 1e309",
            Box::new(|| {
                file(
                    "global/r.md",
                    "---\nrelations:\n  - {target: a, confidence: 1e309}\n---\n",
                )
            }),
            "warning",
        ),
        (
            "relation confidence -1",
            Box::new(|| {
                file(
                    "global/r.md",
                    "---\nrelations:\n  - {target: a, confidence: -1}\n---\n",
                )
            }),
            "warning",
        ),
        (
            "relation confidence .nan",
            Box::new(|| {
                file(
                    "global/r.md",
                    "---\nrelations:\n  - {target: a, confidence: .nan}\n---\n",
                )
            }),
            "warning",
        ),
        (
            "relation without a target",
            Box::new(|| file("global/r.md", "---\nrelations:\n  - {type: causes}\n---\n")),
            "warning",
        ),
        (
            "relations that are a number",
            Box::new(|| file("global/r.md", "---\nrelations: 5\n---\n")),
            "warning",
        ),
        // Links: quadratic before issue 9.
        (
            "5,000 link lines",
            Box::new(|| file("global/index.md", link_lines(5_000))),
            "ok",
        ),
        (
            "20,000 link lines",
            Box::new(|| file("global/index.md", link_lines(20_000))),
            "ok",
        ),
        (
            "100,000 links on one line",
            Box::new(|| file("global/index.md", links_one_line(100_000))),
            "ok",
        ),
        // Pages built by hand.
        (
            "add_page: body_start past the end",
            Box::new(|| {
                let mut p = page();
                p.body_start = 10_000;
                add_page(p)
            }),
            "err:invalid_page",
        ),
        (
            "add_page: body_start inside a character",
            Box::new(|| {
                let mut p = page();
                p.body_start = p.text.find('é').unwrap() as u32 + 1;
                add_page(p)
            }),
            "err:invalid_page",
        ),
        (
            "add_page: empty key",
            Box::new(move || add_page(bad_key.clone())),
            "err:invalid_page",
        ),
        (
            "add_page: key with `/`",
            Box::new(|| {
                let mut p = page();
                p.key = s("a/b");
                add_page(p)
            }),
            "err:invalid_page",
        ),
        (
            "add_page: key not normalized",
            Box::new(|| {
                let mut p = page();
                p.key = s("Big Page");
                add_page(p)
            }),
            "err:invalid_page",
        ),
        (
            "add_page: unknown fields 200 levels deep",
            Box::new(|| {
                let mut p = page();
                let mut v = serde_json::json!(1);
                for _ in 0..200 {
                    v = serde_json::json!([v]);
                }
                p.extra.0.insert(s("deep"), v);
                add_page(p)
            }),
            "err:invalid_page",
        ),
        (
            "add_page: a valid page",
            Box::new(|| add_page(page())),
            "ok",
        ),
        // Writes.
        (
            "upsert: alias bomb",
            Box::new(|| upsert("global/bomb.md", &alias_bomb(9, 9))),
            "err:invalid_page",
        ),
        (
            "upsert: 127 levels",
            Box::new(|| upsert("global/deep.md", &nested("[", "]", 127))),
            "err:invalid_page",
        ),
        (
            "upsert: broken YAML",
            Box::new(|| upsert("global/bad.md", "---\na: [\n---\n")),
            "err:invalid_page",
        ),
        (
            "upsert: into raw/",
            Box::new(|| upsert("raw/log.txt", "new text")),
            "err:immutable_chunk",
        ),
        (
            "upsert: a dangling link",
            Box::new(|| upsert("global/x.md", "See [[nowhere]].")),
            "err:dangling_links",
        ),
        (
            "upsert: one bad relation among good ones",
            Box::new(|| {
                upsert("global/x.md", "---\nrelations:\n  - {target: revenue}\n  - {target: churn, confidence: high}\n---\nx")
            }),
            "warning",
        ),
        // Answers.
        (
            "verify: a 2 MiB answer",
            Box::new(|| verify(&"word ".repeat(400_000), &[], &[])),
            "err:too_large",
        ),
        (
            "verify: a 20 MB answer",
            Box::new(|| verify(&"x".repeat(20_000_000), &[], &[])),
            "err:too_large",
        ),
        (
            "verify: 60,000 cited ids",
            Box::new(|| {
                verify(
                    "a",
                    &(0..60_000)
                        .map(|i| Cited::id(format!("p{i}::chunk_0")))
                        .collect::<Vec<_>>(),
                    &[],
                )
            }),
            "err:too_large",
        ),
        (
            "verify: 60,000 offered ids",
            Box::new(|| {
                verify(
                    "a",
                    &[],
                    &(0..60_000)
                        .map(|i| format!("p{i}::chunk_0"))
                        .collect::<Vec<_>>(),
                )
            }),
            "err:too_large",
        ),
        (
            "verify: 20,000 distinct cited ids",
            Box::new(|| {
                verify(
                    &ids_answer(20_000),
                    &(0..20_000)
                        .map(|i| Cited::id(format!("p{i}::chunk_0")))
                        .collect::<Vec<_>>(),
                    &[],
                )
            }),
            "ok",
        ),
        (
            "verify: the same id 50,000 times",
            Box::new(|| verify("x", &vec![Cited::id("revenue::chunk_0"); 50_000], &[])),
            "ok",
        ),
        (
            "verify: a 1 MiB answer quoting a chunk",
            Box::new(|| {
                verify(
                    &"Revenue is recognized monthly in USD by the finance team. ".repeat(17_000),
                    &[Cited::id("revenue::chunk_0")],
                    &[],
                )
            }),
            "ok",
        ),
        (
            "verify: empty answer, empty citations",
            Box::new(|| verify("", &[], &[])),
            "ok",
        ),
        (
            "verify: ids that are not ids",
            Box::new(|| {
                verify(
                    "x",
                    &[
                        Cited::id(""),
                        Cited::id("::chunk_"),
                        Cited::id("a::chunk_99999999999999999999"),
                    ],
                    &[],
                )
            }),
            "ok",
        ),
        (
            "support: a 2 MiB answer",
            Box::new(|| support(&"word ".repeat(400_000))),
            "err:too_large",
        ),
        (
            "support: 20,000 ids in one answer",
            Box::new(|| support(&ids_answer(20_000))),
            "ok",
        ),
        (
            "support: 20,000 ids in one sentence",
            Box::new(|| {
                support(
                    &(0..20_000)
                        .map(|i| format!("p{i}::chunk_0 "))
                        .collect::<String>(),
                )
            }),
            "ok",
        ),
        // Blobs.
        // The contract (tests/vectors/blob_errors.json): no bytes is a truncated header.
        ("blob: empty", Box::new(|| blob(b"")), "err:corrupt_index"),
        (
            "blob: foreign bytes",
            Box::new(|| blob(b"PK\x03\x04 a zip file")),
            "err:not_an_index",
        ),
        (
            "blob: truncated",
            Box::new(|| {
                let b = blob_bytes();
                blob(&b[..b.len() / 2])
            }),
            "err:corrupt_index",
        ),
        (
            "blob: one flipped payload byte",
            Box::new(|| {
                let mut b = blob_bytes();
                let n = b.len() - 5;
                b[n] ^= 0x40;
                blob(&b)
            }),
            "err:corrupt_index",
        ),
        // Graph.
        (
            "resolve: an old key 20 redirects away",
            Box::new(|| resolve(&redirect_chain(20, false), "p0")),
            "err:invalid_page",
        ),
        (
            "resolve: an old key 16 redirects away",
            Box::new(|| resolve(&redirect_chain(16, false), "p0")),
            "ok",
        ),
        (
            "resolve: an unknown key",
            Box::new(|| resolve(&redirect_chain(2, true), "zzz")),
            "none",
        ),
        (
            "neighbors: unknown seed (an empty graph, not page 0)",
            Box::new(|| {
                let g = base()
                    .neighbors(&["nope"], &TraverseOptions::default())
                    .unwrap();
                assert!(g.nodes.is_empty());
                format!("unknown:{}", g.unknown_seeds.join(","))
            }),
            "unknown:nope",
        ),
        (
            "neighbors: a 20-hop chain as the seed",
            Box::new(|| {
                let mut b = IndexBuilder::new(Default::default()).unwrap();
                for (p, t) in redirect_chain(20, false) {
                    b.add_file(&p, t.as_bytes()).unwrap();
                }
                let (index, _) = b.build().unwrap();
                match index.neighbors(&["p0"], &TraverseOptions::default()) {
                    Ok(_) => s("ok"),
                    Err(e) => err(&e),
                }
            }),
            "err:invalid_page",
        ),
        (
            "lint: a 20-hop chain",
            Box::new(|| {
                let mut b = IndexBuilder::new(Default::default()).unwrap();
                for (p, t) in redirect_chain(20, true) {
                    b.add_file(&p, t.as_bytes()).unwrap();
                }
                let (index, _) = b.build().unwrap();
                let report = index.lint();
                let codes: Vec<&str> = report
                    .issues
                    .iter()
                    .map(|i| i.code.as_str())
                    .filter(|c| c.starts_with("redirect_t"))
                    .collect();
                format!("lint:{}", codes.first().copied().unwrap_or("none"))
            }),
            "lint:redirect_too_long",
        ),
        // Queries.
        (
            "search: a 1 MB query",
            Box::new(|| {
                let r = base()
                    .search(&"revenue ".repeat(125_000), &Default::default())
                    .unwrap();
                assert!(r.truncated);
                s("ok")
            }),
            "ok",
        ),
        (
            "search: control characters only",
            Box::new(|| {
                base()
                    .search("\u{0}\u{1b}[2J\u{7}", &Default::default())
                    .unwrap();
                s("ok")
            }),
            "ok",
        ),
    ];
    assert!(rows.len() >= 50, "the table holds {} inputs", rows.len());
    let mut failures = Vec::new();
    for (name, run, expected) in &rows {
        let started = Instant::now();
        let got = run();
        let took = started.elapsed();
        // A hang guard, not a benchmark: every row ran for minutes or hours before.
        if took > Duration::from_secs(20) {
            failures.push(format!("{name}: took {took:?}"));
        }
        if got != *expected {
            failures.push(format!("{name}: expected {expected}, got {got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn yaml_alias_bomb_is_an_invalid_page_in_bounded_time() {
    let text = alias_bomb(9, 9);
    assert!(text.len() < 400, "{} bytes", text.len());
    let started = Instant::now();
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file("global/bomb.md", text.as_bytes()).unwrap();
    b.add_file("global/fine.md", b"Still indexed.").unwrap();
    let (index, report) = b.build().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.skipped[0].path, "global/bomb.md");
    assert!(report.skipped[0].reason.contains("aliases"));
    assert_eq!(index.pages().len(), 1, "the build goes on without the page");
}

#[test]
fn a_bad_relation_is_reported_by_index_and_reason_and_the_good_ones_kept() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file("global/a.md", b"a").unwrap();
    b.add_file("global/b.md", b"b").unwrap();
    b.add_file(
        "global/r.md",
        b"---\nrelations:\n  - {target: a, type: causes}\n  - {target: b, confidence: high}\n  - {target: b, type: feeds, confidence: 0.4}\n---\n",
    )
    .unwrap();
    let (index, report) = b.build().unwrap();
    let kinds: Vec<String> = index
        .edges_from("r", None)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["causes", "feeds"]);
    assert_eq!(report.warnings.len(), 1);
    let w = &report.warnings[0].message;
    assert!(w.contains("relations[1]") && w.contains("high"), "{w}");
}

#[test]
fn an_index_page_of_many_links_gets_evidence_for_each() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_file("global/index.md", link_lines(20_000).as_bytes())
        .unwrap();
    let (index, _) = b.build().unwrap();
    let edges = index.edges_from("index", None).unwrap();
    assert_eq!(edges.len(), 20_000);
    assert_eq!(edges[7].evidence.as_deref(), Some("- [[page7]]"));
    assert!(edges.iter().all(|e| e.chunk.is_some()));
}

#[test]
fn verify_with_thousands_of_ids_still_classifies_each() {
    let index = base();
    let mut cited: Vec<Cited> = (0..20_000)
        .map(|i| Cited::id(format!("p{i}::chunk_0")))
        .collect();
    cited.push(Cited::id("revenue::chunk_0"));
    let answer = format!(
        "{} Revenue is recognized monthly in USD by the finance team.",
        ids_answer(20_000)
    );
    let v = index.verify(&answer, &cited, &[]).unwrap();
    assert_eq!(v.citations.len(), 20_001);
    assert_eq!(v.citations[0].status.name(), "unknown");
    assert_eq!(v.citations[20_000].status.name(), "quote");
}

#[test]
fn check_answer_merges_the_ids_written_in_the_answer_in_linear_time() {
    let index = base();
    // 50,000 distinct ids written in the answer: the most `check_answer` accepts. Merging
    // them with a scan per id (quadratic) took seconds; a set takes milliseconds.
    let answer: String = (0..50_000).map(|i| format!("[p{i}::chunk_0]")).collect();
    let started = Instant::now();
    let check = index.check_answer(&answer, &[], &[]).unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(check.verification.citations.len(), 50_000);
    let over: String = (0..50_001).map(|i| format!("[p{i}::chunk_0]")).collect();
    let err = index.check_answer(&over, &[], &[]).unwrap_err();
    assert_eq!(err.code(), "too_large");
}

// ---- the file system ----

fn temp(name: &str) -> PathBuf {
    // Under Cargo's folder for integration tests' files (`target/tmp`), replaced each run.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("wikidex-hostile-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn a_read_only_target_is_refused_and_left_byte_identical() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("readonly");
    let path = dir.join("index.wdx");
    std::fs::write(&path, b"old bytes").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = base().save(&path).unwrap_err();
    assert_eq!(err.code(), "io");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"old bytes");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444);
    assert_eq!(entries(&dir), ["index.wdx"], "no temporary file is left");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_save_into_a_missing_folder_fails_and_leaves_nothing() {
    let dir = temp("missing");
    let err = base().save(&dir.join("no/such/index.wdx")).unwrap_err();
    assert_eq!(err.code(), "io");
    assert!(entries(&dir).is_empty());
    let err = base().save(&dir).unwrap_err();
    assert_eq!(
        err.code(),
        "invalid_argument",
        "a folder is not a file path"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_save_through_a_symlink_replaces_the_target_and_keeps_the_link() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("link");
    std::fs::create_dir_all(dir.join("real")).unwrap();
    let target = dir.join("real/index.wdx");
    std::fs::write(&target, b"WIKIDEX\0old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.join("index.wdx");
    std::os::unix::fs::symlink("real/index.wdx", &link).unwrap();
    let index = base();
    index.save(&link).unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), index.to_bytes().unwrap());
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "the replaced file keeps its permissions");
    assert_eq!(entries(&dir.join("real")), ["index.wdx"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn concurrent_saves_to_one_path_do_not_share_a_temporary_file() {
    let dir = temp("concurrent");
    let path = dir.join("index.wdx");
    let index = base();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..5 {
                    index.save(&path).unwrap();
                }
            });
        }
    });
    assert_eq!(std::fs::read(&path).unwrap(), index.to_bytes().unwrap());
    assert_eq!(entries(&dir), ["index.wdx"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stale_temporary_files_of_a_killed_save_are_removed_and_fresh_ones_kept() {
    let dir = temp("stale");
    let stale = dir.join(".index.wdx.tmp-1-0-0");
    let fresh = dir.join(".index.wdx.tmp-2-0-0");
    let other = dir.join(".other.wdx.tmp-1-0-0");
    for p in [&stale, &fresh, &other] {
        std::fs::write(p, vec![0u8; 1024]).unwrap();
    }
    let two_hours_ago = std::time::SystemTime::now() - Duration::from_secs(7200);
    for p in [&stale, &other] {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(two_hours_ago)
            .unwrap();
    }
    base().save(&dir.join("index.wdx")).unwrap();
    assert_eq!(
        entries(&dir),
        [".index.wdx.tmp-2-0-0", ".other.wdx.tmp-1-0-0", "index.wdx"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_wiki_root_are_not_read_unless_allowed_and_lint_reports_them() {
    let dir = temp("symlinks");
    let wiki = dir.join("wiki");
    std::fs::create_dir_all(wiki.join("global")).unwrap();
    std::fs::create_dir_all(wiki.join("raw")).unwrap();
    std::fs::write(dir.join("secret.md"), "API_TOKEN=hunter2").unwrap();
    std::fs::write(wiki.join("global/real.md"), "A real page.").unwrap();
    std::os::unix::fs::symlink(dir.join("secret.md"), wiki.join("global/env.md")).unwrap();
    std::os::unix::fs::symlink(dir.join("secret.md"), wiki.join("raw/shadow.txt")).unwrap();
    std::os::unix::fs::symlink("real.md", wiki.join("global/alias.md")).unwrap();
    std::os::unix::fs::symlink(&dir, wiki.join("global/up")).unwrap();

    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.add_dir(&wiki).unwrap();
    let (index, report) = b.build().unwrap();
    let keys: Vec<&str> = index.pages().iter().map(|p| p.key.as_str()).collect();
    assert_eq!(keys, ["alias", "real"], "a link inside the root is read");
    assert!(index.raw_documents().is_empty());
    let outside: Vec<(&str, &str)> = report
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.code.as_str()))
        .collect();
    assert_eq!(
        outside,
        [
            ("global/env.md", "outside_root"),
            ("raw/shadow.txt", "outside_root")
        ]
    );
    let blob = index.to_bytes().unwrap();
    assert!(!blob.windows(7).any(|w| w == b"hunter2"));
    // Lint reports what it did not read, as warnings, and a broken page as an error.
    std::fs::write(wiki.join("global/bomb.md"), alias_bomb(9, 9)).unwrap();
    let lint = Index::lint_dir(&wiki, None, false).unwrap();
    let found: Vec<(&str, &str, Option<&str>)> = lint
        .issues
        .iter()
        .filter(|i| i.code != "orphan" && i.code != "no_summary")
        .map(|i| (i.page_id.as_str(), i.code.as_str(), i.target.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            ("global/bomb.md", "skipped_file", Some("invalid_page")),
            ("global/env.md", "outside_root", None),
            ("raw/shadow.txt", "outside_root", None),
        ]
    );
    assert_eq!(lint.errors, 1);
    std::fs::remove_file(wiki.join("global/bomb.md")).unwrap();

    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.follow_links_outside_root(true);
    b.add_dir(&wiki).unwrap();
    let (index, report) = b.build().unwrap();
    assert!(report.skipped.is_empty());
    assert!(index.page("env", None).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn an_unreadable_subfolder_is_skipped_and_reported_and_the_build_goes_on() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("unreadable");
    std::fs::create_dir_all(dir.join("global/locked")).unwrap();
    std::fs::write(dir.join("global/ok.md"), "fine").unwrap();
    std::fs::write(dir.join("global/locked/x.md"), "hidden").unwrap();
    let locked = dir.join("global/locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let unreadable = std::fs::read_dir(&locked).is_err();
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    let added = b.add_dir(&dir);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    added.unwrap();
    let (index, report) = b.build().unwrap();
    assert!(index.page("ok", None).is_ok());
    if unreadable {
        assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
        assert_eq!(report.skipped[0].path, "global/locked");
        assert_eq!(report.skipped[0].code, "io");
    } else {
        // Running as root: permissions do not stop reading, so there is nothing to skip.
        assert!(index.page("x", None).is_ok());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
