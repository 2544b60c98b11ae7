//! The model vector file, `tests/vectors/model/minilm-int8.json` (its `description` says what
//! a surface must give): the semantic lane with a real model, which every surface that runs
//! one checks against these native figures (Python, the Node addon, and the wasm module's full
//! build in Node and in Chromium). Rust writes it with `WIKIDEX_BLESS=1`; otherwise this checks that the native
//! model still gives what the file says, within the file's own tolerance.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wikidex::lane::semantic::dot;
use wikidex::{
    Embedder, Index, IndexBuilder, Lane, OnnxEmbedder, OnnxOptions, PromptKind, SearchOptions,
    Session, VectorEncoding,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn vector_path() -> PathBuf {
    root().join("tests/vectors/model/minilm-int8.json")
}

fn embedder(vector: &Value) -> OnnxEmbedder {
    let model = root().join(vector["model"].as_str().expect("model"));
    let tokenizer = root().join(vector["tokenizer"].as_str().expect("tokenizer"));
    assert!(
        model.is_file(),
        "{} is missing: run `make models` (scripts/fetch-model.sh) first",
        model.display()
    );
    let options = OnnxOptions {
        max_length: Some(vector["max_length"].as_u64().expect("max_length") as usize),
        ..OnnxOptions::default()
    };
    OnnxEmbedder::from_bytes(
        &std::fs::read(model).unwrap(),
        &std::fs::read(tokenizer).unwrap(),
        options,
    )
    .expect("model")
}

fn build(vector: &Value) -> Index {
    let files: BTreeMap<String, String> =
        serde_json::from_value(vector["files"].clone()).expect("files");
    let mut builder = IndexBuilder::new(wikidex::Config::default()).unwrap();
    for (path, text) in &files {
        builder.add_file(path, text.as_bytes()).unwrap();
    }
    builder.build().unwrap().0
}

/// The semantic lane's whole chunk ranking for `query`: `[{chunk, score}]`, score the cosine.
fn ranking(session: &Session, query: &str) -> Value {
    let opts = SearchOptions {
        lanes: Some(vec![Lane::Semantic]),
        chunks: true,
        limit: Some(wikidex::MAX_LIMIT),
        snippets: false,
        ..Default::default()
    };
    let results = session.search(query, &opts).unwrap();
    assert_eq!(results.lanes[1].status.name(), "ok", "{query}");
    let hits: Vec<Value> = results
        .hits
        .iter()
        .map(|h| {
            let lane = h.lanes.iter().find(|l| l.lane == Lane::Semantic).unwrap();
            json!({ "chunk": h.chunk, "score": lane.score.expect("a semantic score") })
        })
        .collect();
    assert_eq!(
        hits.len(),
        session.index().chunk_count(),
        "every chunk ranked"
    );
    Value::Array(hits)
}

fn floats(v: &Value) -> Vec<f32> {
    serde_json::from_value(v.clone()).expect("floats")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt())
}

/// The ranking `got` against the file's `want`: the same chunks, each cosine within `score`
/// of the file's, in the same order except that two chunks may swap when their cosines in the
/// file are within `score` (what the JavaScript runner checks too).
fn same_ranking(want: &Value, got: &Value, score: f32) -> Result<(), String> {
    let read = |v: &Value| -> Vec<(String, f32)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["chunk"].as_str().unwrap().to_string(),
                    h["score"].as_f64().unwrap() as f32,
                )
            })
            .collect()
    };
    let (want, got) = (read(want), read(got));
    if want.len() != got.len() {
        return Err(format!("{} hits, expected {}", got.len(), want.len()));
    }
    let want_score: BTreeMap<&str, f32> = want.iter().map(|(c, s)| (c.as_str(), *s)).collect();
    for (i, (chunk, s)) in got.iter().enumerate() {
        let w = *want_score
            .get(chunk.as_str())
            .ok_or_else(|| format!("unexpected chunk {chunk}"))?;
        if (w - s).abs() > score {
            return Err(format!("{chunk}: cosine {s}, expected {w}"));
        }
        let expected = &want[i];
        if expected.0 != *chunk && (expected.1 - w).abs() > score {
            return Err(format!(
                "rank {}: {chunk} ({w}), expected {} ({})",
                i + 1,
                expected.0,
                expected.1
            ));
        }
    }
    Ok(())
}

#[test]
fn model_vectors_match_the_native_model() {
    let bless = std::env::var_os("WIKIDEX_BLESS").is_some_and(|v| v == "1");
    let path = vector_path();
    let mut vector: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let model = std::sync::Arc::new(embedder(&vector));
    let tol_cos = vector["tolerance"]["cosine"].as_f64().unwrap() as f32;
    let tol_score = vector["tolerance"]["score"].as_f64().unwrap() as f32;

    let index = build(&vector);
    let passages = index.passages();
    let texts: Vec<&str> = passages.iter().map(String::as_str).collect();
    let passage_vectors = model.embed_as(&texts, Some(PromptKind::Passage)).unwrap();
    if bless {
        vector["vectors"] = json!({
            "model_id": model.model_id(),
            "fingerprint": model.fingerprint(),
            "encoding": "f32",
            "values": passage_vectors,
        });
        vector["passages"] = passages
            .iter()
            .zip(&passage_vectors)
            .map(|(t, v)| json!({ "text": t, "vector": v }))
            .collect();
    } else {
        let stored = &vector["passages"];
        assert_eq!(stored.as_array().unwrap().len(), passages.len());
        for (i, (p, v)) in passages.iter().zip(&passage_vectors).enumerate() {
            assert_eq!(stored[i]["text"].as_str().unwrap(), p);
            let c = cosine(&floats(&stored[i]["vector"]), v);
            assert!(c >= tol_cos, "passage {i}: cosine {c} to the file's");
        }
        assert_eq!(vector["vectors"]["fingerprint"], model.fingerprint());
    }
    let values: Vec<Vec<f32>> =
        serde_json::from_value(vector["vectors"]["values"].clone()).unwrap();
    let index = index
        .with_vectors(
            model.model_id(),
            model.fingerprint(),
            &values,
            VectorEncoding::F32,
        )
        .unwrap();
    let session = Session::new(index);
    session
        .set_model(Some(model.clone() as std::sync::Arc<dyn Embedder>))
        .unwrap();

    let mut failures = Vec::new();
    for case in vector["cases"].as_array_mut().unwrap() {
        let query = case["query"].as_str().unwrap().to_string();
        let qv = model.embed_as(&[&query], Some(PromptKind::Query)).unwrap();
        let got = json!({ "query_vector": qv[0], "hits": ranking(&session, &query) });
        if bless {
            case["expect"] = got;
            continue;
        }
        let want = &case["expect"];
        let c = cosine(&floats(&want["query_vector"]), &qv[0]);
        if c < tol_cos {
            failures.push(format!("{query}: query vector cosine {c}"));
        }
        if let Err(e) = same_ranking(&want["hits"], &got["hits"], tol_score) {
            failures.push(format!("{query}: {e}"));
        }
    }
    if bless {
        let out = serde_json::to_string_pretty(&vector).unwrap() + "\n";
        std::fs::write(&path, out).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The check above can fail: a ranking with two far-apart chunks swapped, or a cosine off by
/// more than the tolerance, is refused.
#[test]
fn model_vectors_refuse_a_different_ranking() {
    let want = json!([{ "chunk": "a", "score": 0.9 }, { "chunk": "b", "score": 0.5 }]);
    let swapped = json!([{ "chunk": "b", "score": 0.5 }, { "chunk": "a", "score": 0.9 }]);
    assert!(same_ranking(&want, &swapped, 0.002).is_err());
    let off = json!([{ "chunk": "a", "score": 0.8 }, { "chunk": "b", "score": 0.5 }]);
    assert!(same_ranking(&want, &off, 0.002).is_err());
    let close = json!([{ "chunk": "a", "score": 0.5005 }, { "chunk": "b", "score": 0.5 }]);
    let close_swapped = json!([{ "chunk": "b", "score": 0.5 }, { "chunk": "a", "score": 0.5005 }]);
    assert!(same_ranking(&close, &close_swapped, 0.002).is_ok());
    assert!(same_ranking(&want, &want, 0.002).is_ok());
}
