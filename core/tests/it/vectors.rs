//! The Rust runner of the cross-language vectors in `tests/vectors/` (see its README).
//!
//! Each vector file holds a small wiki (`files`), an optional `config`, optional stored
//! `vectors`, and `cases`. Every case names one core call (`op`, the function's name) and its
//! arguments (the function's parameter names); the runner makes that one call and projects the
//! record it returns the way every binding's runner must: offsets become the substrings they
//! point at, so the same expectation holds in Rust (bytes), Python (code points) and JavaScript
//! (UTF-16 units). This runner checks every case in all three offset units, through a
//! [`Session`] (what every binding wraps) set to each unit. With
//! `WIKIDEX_BLESS=1` it writes the results into `expect` instead: Rust alone writes
//! expectations; the bindings only read them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use wikidex::{
    Cited, Config, Error, Index, IndexBuilder, OffsetUnit, Scope, SearchOptions, Session,
    TraverseOptions, VectorEncoding, WriteOptions,
};

/// Relative tolerance for floats (scores may differ in the last bits between targets whose
/// `ln` differs, e.g. native and wasm).
const FLOAT_TOLERANCE: f64 = 1e-5;

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

/// A failed call: its code and details (what a caller acts on).
fn error_json(e: &Error) -> Value {
    json!({ "error": e.code(), "details": e.details() })
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
    let (mut index, report) = builder.build().expect("build");
    if let Some(v) = vector.get("vectors") {
        let values: Vec<Vec<f32>> = serde_json::from_value(v["values"].clone()).expect("values");
        let encoding = VectorEncoding::parse(v["encoding"].as_str().unwrap_or("f32")).unwrap();
        index = index
            .with_vectors(
                v["model_id"].as_str().expect("model_id"),
                v["fingerprint"].as_str().expect("fingerprint"),
                &values,
                encoding,
            )
            .expect("with_vectors");
    }
    (index, report)
}

/// `text[start..end]` with offsets counted in `unit`, as the surface of that unit slices.
pub(crate) fn slice(text: &str, start: usize, end: usize, unit: OffsetUnit) -> String {
    match unit {
        OffsetUnit::Byte => text.get(start..end).expect("byte span").to_string(),
        OffsetUnit::Char => text.chars().skip(start).take(end - start).collect(),
        _ => {
            let units: Vec<u16> = text.encode_utf16().collect();
            String::from_utf16(&units[start..end]).expect("utf-16 span")
        }
    }
}

fn arg<T: serde::de::DeserializeOwned>(case: &Value, name: &str) -> T {
    serde_json::from_value(case[name].clone()).unwrap_or_else(|e| panic!("argument {name}: {e}"))
}

fn opt_arg<T: serde::de::DeserializeOwned + Default>(case: &Value, name: &str) -> T {
    case.get(name).map_or_else(T::default, |v| {
        serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("argument {name}: {e}"))
    })
}

fn scope_arg(case: &Value) -> Option<Scope> {
    case.get("scope")
        .and_then(Value::as_str)
        .map(|s| Scope::parse(s).expect("scope"))
}

fn project_search(session: &Session, r: &wikidex::SearchResults) -> Value {
    let unit = session.offset_unit();
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
            v["snippet"] = json!(s.text);
            let marked: Vec<String> = s
                .highlights
                .iter()
                .map(|m| slice(&s.text, m.start as usize, m.end as usize, unit))
                .collect();
            v["highlighted"] = json!(marked);
            // The snippet's offset points at its first word in the page body.
            let body = session
                .page_record(&h.page_id, None)
                .expect("hit page")
                .body;
            let at = match unit {
                OffsetUnit::Byte => body.len(),
                OffsetUnit::Char => body.chars().count(),
                _ => body.encode_utf16().count(),
            };
            let first = s.text.split(' ').next().unwrap_or("");
            let n = match unit {
                OffsetUnit::Byte => first.len(),
                OffsetUnit::Char => first.chars().count(),
                _ => first.encode_utf16().count(),
            };
            let from = s.offset as usize;
            v["at_offset"] = json!(slice(&body, from, (from + n).min(at), unit));
        }
        if let Some(e) = &h.explain {
            v["explain"] = json!(e
                .lexical
                .iter()
                .map(|t| json!({"term": t.term, "tf": t.tf, "df": t.df, "score": t.score}))
                .collect::<Vec<_>>());
        }
        v
    };
    let mut out = json!({
        "terms": r.terms,
        "truncated": r.truncated,
        "lanes": r.lanes.iter().map(|l| (l.lane.name().to_string(), json!(l.status.name()))).collect::<Map<_, _>>(),
        "hits": r.hits.iter().map(hit).collect::<Vec<_>>(),
        "always": r.always.iter().map(hit).collect::<Vec<_>>(),
    });
    // Only when asked for (`options.facets`), so the other cases keep their shape.
    if let Some(f) = &r.facets {
        out["facets"] = json!(f);
    }
    // Only for a query that quotes a phrase.
    if let Some(p) = &r.phrases {
        out["phrases"] = json!(p);
    }
    out
}

fn project_verification(session: &Session, answer: &str, v: &wikidex::Verification) -> Value {
    let unit = session.offset_unit();
    json!({
        "passed": v.passed,
        "citations": v.citations.iter().map(|c| json!({
            "id": c.id,
            "status": c.status.name(),
            "quoted": c.quote.map(|q| slice(answer, q.answer_start, q.answer_end, unit)),
            "quoted_in_chunk": c.quote.map(|q| {
                let text = session.chunk(&c.id).expect("quoted chunk").text;
                slice(&text, q.chunk_start, q.chunk_end, unit)
            }),
        })).collect::<Vec<_>>(),
    })
}

fn project_support(answer: &str, s: &wikidex::Support, unit: OffsetUnit) -> Value {
    let rows = |v: &[wikidex::SentenceSupport]| {
        v.iter()
            .map(|s| {
                json!({
                    "text": s.text,
                    "at_span": slice(answer, s.start, s.end, unit),
                    "best_chunk": s.best_chunk,
                })
            })
            .collect::<Vec<_>>()
    };
    json!({"uncited": rows(&s.uncited), "unsupported": rows(&s.unsupported)})
}

/// Runs one case (one core call) on `session` and returns its result as the vectors spell it.
fn run_case(session: &Session, case: &Value) -> Value {
    let unit = session.offset_unit();
    let index = session.index();
    let report = session.build_report().expect("a session over a build");
    let op = case["op"].as_str().expect("case op");
    let result = match op {
        "build_report" => Ok(json!({
            "pages": report.pages,
            "chunks": report.chunks,
            "skipped": report.skipped.iter().map(|s| json!({"path": s.path, "code": s.code, "line": s.line})).collect::<Vec<_>>(),
        })),
        "search" => {
            let opts: SearchOptions = opt_arg(case, "options");
            session
                .search(case["query"].as_str().expect("query"), &opts)
                .map(|r| project_search(session, &r))
        }
        "page_record" => session
            .page_record(case["key"].as_str().expect("key"), scope_arg(case).as_ref())
            .map(|p| {
                json!({
                    "id": p.id,
                    "title": p.title,
                    "summary": p.summary,
                    "scope": p.scope,
                    "tags": p.tags,
                    "type": p.kind,
                    "refs": p.refs,
                    "links": p.links,
                    "usage_mode": p.usage_mode,
                    "extra": p.extra,
                    "body": p.body,
                    "chunks": p.chunks.iter().map(|c| json!({
                        "id": c.id,
                        "hash": c.hash,
                        "text": slice(&p.body, c.start as usize, c.end as usize, unit),
                    })).collect::<Vec<_>>(),
                    "resolved_from": p.resolved_from,
                })
            }),
        "chunk" => session
            .chunk(case["id"].as_str().expect("id"))
            .map(|c| json!({"id": c.id, "hash": c.hash, "text": c.text, "raw": c.raw, "lines": [c.line_start, c.line_end], "headings": c.headings, "table_header": c.table_header})),
        "from_bytes" => {
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
            Index::from_bytes(&bytes).map(|i| json!({"pages": i.pages().len()}))
        }
        "lint" => {
            let r = session.lint();
            assert_eq!(r, index.lint_with_build(&report));
            Ok(json!({
                "errors": r.errors,
                "warnings": r.warnings,
                "issues": r.issues.iter().map(|i| json!({"page_id": i.page_id, "code": i.code, "target": i.target, "severity": i.severity})).collect::<Vec<_>>(),
            }))
        }
        "neighbors" => {
            let opts: TraverseOptions = opt_arg(case, "options");
            let seeds: Vec<String> = arg(case, "seeds");
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            index.neighbors(&seeds, &opts).map(|g| json!({
                "seeds": g.seeds,
                "unknown_seeds": g.unknown_seeds,
                "nodes": g.nodes.iter().map(|n| json!({"id": n.id, "depth": n.depth, "confidence": n.confidence, "via": n.via, "sources": n.sources.iter().map(|p| &p.chunk).collect::<Vec<_>>()})).collect::<Vec<_>>(),
                "edges": g.edges.iter().map(|e| json!({"from": e.from, "to": e.to, "type": e.kind, "confidence": e.confidence, "evidence": e.evidence, "chunk": e.chunk})).collect::<Vec<_>>(),
                "chain": g.chain,
                "truncated": g.truncated,
            }))
        }
        "verify" | "check_answer" => {
            let cited: Vec<Cited> = arg(case, "cited");
            let offered: Vec<String> = opt_arg(case, "offered");
            let answer = case["answer"].as_str().expect("answer");
            if op == "verify" {
                session
                    .verify(answer, &cited, &offered)
                    .map(|v| project_verification(session, answer, &v))
            } else {
                session.check_answer(answer, &cited, &offered).map(|c| {
                    json!({
                        "verification": project_verification(session, answer, &c.verification),
                        "support": project_support(answer, &c.support, unit),
                    })
                })
            }
        }
        "uncited_support" => {
            let answer = case["answer"].as_str().expect("answer");
            session
                .uncited_support(answer)
                .map(|s| project_support(answer, &s, unit))
        }
        "call_tool" => {
            // Each case is a turn of its own: no drill-down counted from an earlier case.
            session.reset_turn();
            session
                .call_tool(
                    case["tool"].as_str().expect("tool"),
                    &case["args"].to_string(),
                )
                .map(|r| json!({"text": r.text, "data": r.data}))
        }
        "parse_headers" => Ok(json!(wikidex::cite::parse_headers(
            case["text"].as_str().expect("text")
        ))),
        "pointers" => index
            .pointers(case["key"].as_str().expect("key"), scope_arg(case).as_ref())
            .map(|p| {
                json!(p
                    .iter()
                    .map(|p| json!({"chunk": p.chunk, "weight": p.weight}))
                    .collect::<Vec<_>>())
            }),
        // Writes run on a copy of the session; `unchanged` says whether its index's bytes
        // survived.
        "upsert_page" | "delete_page" | "rename_page" => {
            let copy = session.copy();
            let before = copy.to_bytes().expect("encode");
            let r = match op {
                "upsert_page" => {
                    let opts: WriteOptions = opt_arg(case, "options");
                    copy.upsert_page(
                        case["path"].as_str().expect("path"),
                        case["text"].as_str().expect("text"),
                        &opts,
                    )
                    .map(|r| json!({"page_id": r.page_id, "replaced": r.replaced, "chunks": r.chunks, "dangling": r.dangling}))
                }
                "delete_page" => copy
                    .delete_page(case["key"].as_str().expect("key"), scope_arg(case).as_ref())
                    .map(|r| json!({"page": r.page.id(), "broken": r.broken})),
                _ => copy
                    .rename_page(
                        case["key"].as_str().expect("key"),
                        scope_arg(case).as_ref(),
                        case["new_key"].as_str().expect("new_key"),
                    )
                    .map(|r| json!({"from": r.from, "to": r.to, "path": r.path, "text": r.text})),
            };
            let unchanged = copy.to_bytes().expect("encode") == before;
            assert_eq!(
                session.to_bytes().expect("encode"),
                index.to_bytes().expect("encode"),
                "a write to a copy leaves the session as it was"
            );
            let mut v = r.unwrap_or_else(|e| error_json(&e));
            v["unchanged"] = json!(unchanged);
            Ok(v)
        }
        other => panic!("unknown vector op `{other}`"),
    };
    result.unwrap_or_else(|e| error_json(&e))
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
fn every_vector_case_matches_its_expectation_in_every_offset_unit() {
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
        let units = if bless {
            vec![OffsetUnit::Byte]
        } else {
            vec![OffsetUnit::Byte, OffsetUnit::Char, OffsetUnit::Utf16]
        };
        for unit in units {
            let session = Session::from_build((index.clone(), report.clone()));
            session.set_offset_unit(unit);
            let list = vector["cases"].as_array_mut().expect("cases");
            for case in list.iter_mut() {
                cases += 1;
                let actual = run_case(&session, case);
                if bless {
                    case["expect"] = actual;
                } else if !case.get("expect").is_some_and(|e| same(e, &actual)) {
                    failures.push(format!(
                        "{} / {} ({}):\n  expected {}\n  actual   {}",
                        path.file_name().unwrap_or_default().to_string_lossy(),
                        case["name"],
                        unit.name(),
                        case.get("expect").unwrap_or(&Value::Null),
                        actual
                    ));
                }
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
