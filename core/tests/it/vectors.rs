//! The Rust runner of the cross-language vectors in `tests/vectors/` (see its README).
//!
//! Each vector file holds a small wiki (`files`), an optional `config`, and `cases`. For every
//! case this runner computes the result the way every binding must, and compares it with the
//! case's `expect`. With `WIKIDEX_BLESS=1` it writes the results into `expect` instead: Rust
//! alone writes expectations; the bindings only read them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use wikidex::{Config, Error, Index, IndexBuilder, SearchOptions};

/// Relative tolerance for floats (scores may differ in the last bits between targets whose
/// `ln` differs, e.g. native and wasm).
const FLOAT_TOLERANCE: f64 = 1e-5;

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn error_json(e: &Error) -> Value {
    json!({ "error": e.code() })
}

fn build(vector: &Value) -> (Index, wikidex::BuildReport) {
    let config: Config = match vector.get("config") {
        Some(c) => serde_json::from_value(c.clone()).expect("vector config"),
        None => Config::default(),
    };
    let mut builder = IndexBuilder::new(config).expect("config");
    let files: BTreeMap<String, String> =
        serde_json::from_value(vector["files"].clone()).expect("vector files");
    for (path, text) in &files {
        builder.add_file(path, text.as_bytes()).expect("add file");
    }
    builder.build().expect("build")
}

/// Runs one case and returns its result as the vectors spell it.
fn run_case(index: &Index, report: &wikidex::BuildReport, case: &Value) -> Value {
    let op = case["op"].as_str().expect("case op");
    match op {
        "build_report" => json!({
            "pages": report.pages,
            "chunks": report.chunks,
            "skipped": report.skipped.iter().map(|s| json!({"path": s.path, "code": s.code, "line": s.line})).collect::<Vec<_>>(),
        }),
        "search" => {
            let opts: SearchOptions = match case.get("options") {
                Some(o) => serde_json::from_value(o.clone()).expect("search options"),
                None => SearchOptions::default(),
            };
            let query = case["query"].as_str().expect("query");
            match index.search(query, &opts) {
                Ok(r) => {
                    let hit = |h: &wikidex::Hit| {
                        let mut v = json!({
                            "page_id": h.page_id,
                            "chunk": h.chunk,
                            "score": h.score,
                        });
                        for l in &h.lanes {
                            if let Some(rank) = l.rank {
                                v[format!("{}_rank", l.lane.name())] = json!(rank);
                            }
                        }
                        if let Some(s) = &h.snippet {
                            let chars: Vec<char> = s.text.chars().collect();
                            let marked: Vec<String> = s
                                .highlights
                                .iter()
                                .map(|m| chars[m.start as usize..m.end as usize].iter().collect())
                                .collect();
                            v["highlighted"] = json!(marked);
                        }
                        v
                    };
                    json!({
                        "terms": r.terms,
                        "truncated": r.truncated,
                        "lanes": r.lanes.iter().map(|l| (l.lane.name().to_string(), json!(l.status.name()))).collect::<Map<_, _>>(),
                        "hits": r.hits.iter().map(hit).collect::<Vec<_>>(),
                        "always": r.always.iter().map(hit).collect::<Vec<_>>(),
                    })
                }
                Err(e) => error_json(&e),
            }
        }
        "page" => {
            let scope = case
                .get("scope")
                .and_then(Value::as_str)
                .map(|s| wikidex::Scope::parse(s).expect("scope"));
            match index.page(case["key"].as_str().expect("key"), scope.as_ref()) {
                Ok(p) => json!({
                    "id": p.id(),
                    "title": p.title,
                    "summary": p.summary,
                    "scope": p.scope,
                    "tags": p.tags,
                    "type": p.kind,
                    "refs": p.refs,
                    "links": p.links,
                    "usage_mode": p.usage_mode,
                    "extra": p.extra,
                }),
                Err(e) => error_json(&e),
            }
        }
        "chunk" => match index.chunk(case["id"].as_str().expect("id")) {
            Ok(c) => {
                json!({"id": c.id, "hash": c.hash, "text": c.text, "start": c.start, "end": c.end})
            }
            Err(e) => error_json(&e),
        },
        "load" => {
            let mut bytes = index.to_bytes().expect("encode");
            let m = &case["mutate"];
            if let Some(n) = m.get("truncate").and_then(Value::as_u64) {
                bytes.truncate(n as usize);
            }
            if let Some(i) = m.get("flip").and_then(Value::as_u64) {
                bytes[i as usize] ^= 0xff;
            }
            if let Some(v) = m.get("version").and_then(Value::as_u64) {
                bytes[8..12].copy_from_slice(&(v as u32).to_le_bytes());
            }
            if let Some(extra) = m.get("append").and_then(Value::as_u64) {
                bytes.extend(std::iter::repeat_n(0u8, extra as usize));
            }
            if let Some(text) = m.get("replace_utf8").and_then(Value::as_str) {
                bytes = text.as_bytes().to_vec();
            }
            match Index::from_bytes(&bytes) {
                Ok(i) => json!({"pages": i.pages().len()}),
                Err(e) => error_json(&e),
            }
        }
        "lint" => {
            let r = index.lint_with_build(report);
            json!({
                "errors": r.errors,
                "warnings": r.warnings,
                "issues": r.issues.iter().map(|i| json!({"page": i.page, "code": i.code, "target": i.target, "severity": i.severity})).collect::<Vec<_>>(),
            })
        }
        "neighbors" => {
            let opts: wikidex::TraverseOptions = match case.get("options") {
                Some(o) => serde_json::from_value(o.clone()).expect("traverse options"),
                None => Default::default(),
            };
            let seeds: Vec<String> = serde_json::from_value(case["seeds"].clone()).expect("seeds");
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            match index.neighbors(&seeds, &opts) {
                Ok(g) => json!({
                    "seeds": g.seeds,
                    "unknown_seeds": g.unknown_seeds,
                    "nodes": g.nodes.iter().map(|n| json!({"id": n.id, "depth": n.depth, "confidence": n.confidence, "via": n.via, "sources": n.sources.iter().map(|p| &p.chunk).collect::<Vec<_>>()})).collect::<Vec<_>>(),
                    "edges": g.edges.iter().map(|e| json!({"from": e.from, "to": e.to, "type": e.kind, "confidence": e.confidence, "evidence": e.evidence, "chunk": e.chunk})).collect::<Vec<_>>(),
                    "chain": g.chain,
                    "truncated": g.truncated,
                }),
                Err(e) => error_json(&e),
            }
        }
        "verify" => {
            let cited: Vec<wikidex::cite::Cited> =
                serde_json::from_value(case["cited"].clone()).expect("cited");
            let offered: Vec<String> = match case.get("offered") {
                Some(o) => serde_json::from_value(o.clone()).expect("offered"),
                None => Vec::new(),
            };
            let answer = case["answer"].as_str().expect("answer");
            let v = index.verify(answer, &cited, &offered).expect("verify");
            json!({
                "passed": v.passed,
                "citations": v.citations.iter().map(|c| json!({
                    "id": c.id,
                    "status": c.status.name(),
                    "quoted": c.quote.map(|q| &answer[q.answer_start..q.answer_end]),
                })).collect::<Vec<_>>(),
            })
        }
        "uncited_support" => {
            let s = index
                .uncited_support(case["answer"].as_str().expect("answer"))
                .expect("uncited_support");
            let rows = |v: &[wikidex::cite::SentenceSupport]| {
                v.iter()
                    .map(|s| json!({"text": s.text, "best_chunk": s.best_chunk}))
                    .collect::<Vec<_>>()
            };
            json!({"uncited": rows(&s.uncited), "unsupported": rows(&s.unsupported)})
        }
        "parse_headers" => json!(wikidex::cite::parse_headers(
            case["text"].as_str().expect("text")
        )),
        "pointers" => match index.pointers(case["key"].as_str().expect("key"), None) {
            Ok(p) => json!(p
                .iter()
                .map(|p| json!({"chunk": p.chunk, "weight": p.weight}))
                .collect::<Vec<_>>()),
            Err(e) => error_json(&e),
        },
        "upsert" => {
            let mut index = Index::from_bytes(&index.to_bytes().expect("encode")).expect("load");
            let before = index.to_bytes().expect("encode");
            let opts = wikidex::WriteOptions {
                allow_dangling: case
                    .get("allow_dangling")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            };
            let r = index.upsert_page_with(
                case["path"].as_str().expect("path"),
                case["text"].as_str().expect("text"),
                &opts,
            );
            let unchanged = index.to_bytes().expect("encode") == before;
            match r {
                Ok(r) => {
                    json!({"page": r.page, "replaced": r.replaced, "dangling": r.dangling, "unchanged": unchanged})
                }
                Err(Error::DanglingLinks { missing, .. }) => {
                    json!({"error": "dangling_links", "missing": missing, "unchanged": unchanged})
                }
                Err(e) => json!({"error": e.code(), "unchanged": unchanged}),
            }
        }
        "delete" => {
            let mut index = Index::from_bytes(&index.to_bytes().expect("encode")).expect("load");
            match index.delete_page(case["key"].as_str().expect("key"), None) {
                Ok(r) => json!({"page": r.page.id(), "broken": r.broken}),
                Err(e) => error_json(&e),
            }
        }
        other => panic!("unknown vector op `{other}`"),
    }
}

/// Equal, with relative tolerance for floats.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => {
                (x - y).abs() <= FLOAT_TOLERANCE * x.abs().max(y.abs()).max(1e-12)
            }
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn every_vector_case_matches_its_expectation() {
    let bless = std::env::var_os("WIKIDEX_BLESS").is_some_and(|v| v == "1");
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "expected vector files in tests/vectors");
    let mut failures = Vec::new();
    let mut cases = 0;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read vector");
        let mut vector: Value = serde_json::from_str(&text).expect("vector JSON");
        let (index, report) = build(&vector);
        let list = vector["cases"].as_array_mut().expect("cases");
        for case in list.iter_mut() {
            cases += 1;
            let actual = run_case(&index, &report, case);
            if bless {
                case["expect"] = actual;
            } else if !case.get("expect").is_some_and(|e| same(e, &actual)) {
                failures.push(format!(
                    "{} / {}:\n  expected {}\n  actual   {}",
                    path.file_name().unwrap_or_default().to_string_lossy(),
                    case["name"],
                    case.get("expect").unwrap_or(&Value::Null),
                    actual
                ));
            }
        }
        if bless {
            let out = serde_json::to_string_pretty(&vector).expect("serialize") + "\n";
            std::fs::write(&path, out).expect("write blessed vector");
        }
    }
    assert!(cases > 0);
    assert!(failures.is_empty(), "{} vector case(s) differ (WIKIDEX_BLESS=1 rewrites expectations after a deliberate change):\n{}", failures.len(), failures.join("\n"));
}
