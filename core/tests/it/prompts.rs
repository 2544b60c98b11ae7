//! Prompts (issue 15): a model's query and passage prompts go before the texts an index has it
//! embed, are read from a model folder as sentence-transformers reads them, and are stored in
//! the blob (format v5) so queries on a loaded index are embedded as its chunks were.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use wikidex::{
    Embedder, Index, IndexBuilder, Lane, OnnxEmbedder, OnnxOptions, PromptKind, Prompts,
    SearchOptions, Session, VectorEncoding, WriteOptions,
};

const WIKI: &[(&str, &str)] = &[
    (
        "global/oncall.md",
        "# On-call\n\nPage the on-call engineer when production is down.",
    ),
    (
        "global/revenue.md",
        "# Revenue\n\nRevenue is recognized monthly.",
    ),
];

fn e5_prompts() -> Prompts {
    Prompts {
        query: "query: ".into(),
        passage: "passage: ".into(),
    }
}

/// An embedder with prompts that records every text it is given.
/// One of the nonsense queries a build embeds to measure the semantic floor (with or without
/// a query prompt).
pub(crate) fn is_floor_probe(text: &str) -> bool {
    let text = text.strip_prefix("query: ").unwrap_or(text);
    wikidex::lane::semantic::floor_probes()
        .iter()
        .any(|p| p == text)
}

struct Recording {
    prompts: Prompts,
    texts: Mutex<Vec<String>>,
}

impl Recording {
    fn new(prompts: Prompts) -> Arc<Recording> {
        Arc::new(Recording {
            prompts,
            texts: Mutex::new(Vec::new()),
        })
    }
    /// The texts embedded, less the nonsense queries the build measures the floor with.
    fn seen(&self) -> Vec<String> {
        let texts = self.texts.lock().unwrap();
        texts
            .iter()
            .filter(|t| !is_floor_probe(t))
            .cloned()
            .collect()
    }
}

impl Embedder for Recording {
    fn model_id(&self) -> &str {
        "recording"
    }
    fn fingerprint(&self) -> &str {
        "recording-1"
    }
    fn dim(&self) -> usize {
        2
    }
    fn embed(&self, texts: &[&str]) -> wikidex::Result<Vec<Vec<f32>>> {
        self.texts
            .lock()
            .unwrap()
            .extend(texts.iter().map(|t| t.to_string()));
        Ok(texts
            .iter()
            .map(|t| vec![t.len() as f32, 1.0 + t.matches('e').count() as f32])
            .collect())
    }
    fn prompts(&self) -> &Prompts {
        &self.prompts
    }
}

fn build(e: Arc<Recording>) -> Index {
    let mut b = IndexBuilder::new(Default::default()).unwrap();
    b.embedder(e).vector_encoding(VectorEncoding::F32);
    for (p, t) in WIKI {
        b.add_file(p, t.as_bytes()).unwrap();
    }
    b.build().unwrap().0
}

/// A session over [`build`]'s index with `e` as its model.
fn session(e: Arc<Recording>) -> Session {
    let session = Session::new(build(Arc::clone(&e)));
    session.set_model(Some(e)).unwrap();
    session
}

fn semantic_only() -> SearchOptions {
    SearchOptions {
        lanes: Some(vec![Lane::Semantic]),
        ..SearchOptions::default()
    }
}

#[test]
fn a_model_s_prompts_go_before_every_passage_and_query() {
    let e = Recording::new(e5_prompts());
    let session = session(Arc::clone(&e));
    let index = session.index();
    let passages = e.seen();
    assert_eq!(passages.len(), index.passages().len());
    for (seen, passage) in passages.iter().zip(index.passages()) {
        assert!(seen.starts_with("passage: "), "{seen:?}");
        assert!(index
            .passages()
            .contains(&seen["passage: ".len()..].to_string()));
        assert!(!passage.starts_with("passage: "));
    }
    assert_eq!(index.vectors().unwrap().prompts, e5_prompts());
    // The floor's nonsense queries are queries too.
    assert!(e
        .texts
        .lock()
        .unwrap()
        .contains(&"query: xqzvbnm plorkish".to_string()));
    session.search("who is on call", &semantic_only()).unwrap();
    assert_eq!(e.seen().last().unwrap(), "query: who is on call");
}

#[test]
fn without_prompts_the_texts_are_embedded_as_they_are() {
    let e = Recording::new(Prompts::NONE);
    let session = session(Arc::clone(&e));
    let index = session.index();
    let mut seen = e.seen();
    seen.sort();
    let mut passages = index.passages();
    passages.sort();
    assert_eq!(seen, passages);
    session.search("who is on call", &semantic_only()).unwrap();
    assert_eq!(e.seen().last().unwrap(), "who is on call");
    assert!(index.vectors().unwrap().prompts.is_empty());
}

#[test]
fn the_blob_keeps_the_prompts_and_queries_use_the_stored_ones() {
    let bytes = build(Recording::new(e5_prompts())).to_bytes().unwrap();
    let index = Index::from_bytes(&bytes).unwrap();
    assert_eq!(index.vectors().unwrap().prompts, e5_prompts());
    assert_eq!(index.to_bytes().unwrap(), bytes);
    let session = Session::new(index);
    // The same weights configured with other prompts: the index's own still apply to queries.
    let other = Recording::new(Prompts {
        query: "search_query: ".into(),
        passage: String::new(),
    });
    session
        .set_model(Some(Arc::clone(&other) as Arc<dyn Embedder>))
        .unwrap();
    session.search("who is on call", &semantic_only()).unwrap();
    assert_eq!(other.seen(), ["query: who is on call"]);
}

#[test]
fn page_writes_embed_new_chunks_after_the_stored_passage_prompt() {
    let bytes = build(Recording::new(e5_prompts())).to_bytes().unwrap();
    let index = Index::from_bytes(&bytes).unwrap();
    let e = Recording::new(e5_prompts());
    let (index, _) = index
        .upsert_page(
            "global/retention.md",
            "# Retention\n\nRecords are kept seven years.",
            &WriteOptions::default(),
            Some(e.as_ref()),
        )
        .unwrap();
    assert_eq!(
        e.seen(),
        ["passage: # Retention\n\nRecords are kept seven years."]
    );
    assert_eq!(index.vectors().unwrap().prompts, e5_prompts());
}

#[test]
fn a_rebuild_reuses_vectors_only_when_the_prompts_are_the_same() {
    let previous = build(Recording::new(e5_prompts()));
    let rebuild = |e: Arc<Recording>| {
        let mut b = IndexBuilder::new(Default::default()).unwrap();
        b.embedder(e).previous(&previous);
        for (p, t) in WIKI {
            b.add_file(p, t.as_bytes()).unwrap();
        }
        b.build().unwrap()
    };
    let same = Recording::new(e5_prompts());
    rebuild(Arc::clone(&same));
    assert!(same.seen().is_empty(), "{:?}", same.seen());
    let other = Recording::new(Prompts::NONE);
    rebuild(Arc::clone(&other));
    assert_eq!(other.seen().len(), previous.passages().len());
}

#[test]
fn embed_as_puts_the_prompt_of_its_kind_first() {
    let e = Recording::new(e5_prompts());
    e.embed_as(&["a", "b"], Some(PromptKind::Query)).unwrap();
    e.embed_as(&["c"], Some(PromptKind::Passage)).unwrap();
    assert_eq!(e.seen(), ["query: a", "query: b", "passage: c"]);
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A model folder holding MiniLM's int8 model and tokenizer, and `config`, if given, as its
/// `config_sentence_transformers.json`.
fn model_folder(tag: &str, config: Option<&str>) -> PathBuf {
    let src = root().join("models/all-MiniLM-L6-v2");
    assert!(
        src.join("model-int8.onnx").is_file(),
        "{} is missing: run `make models` (scripts/fetch-model.sh) first",
        src.display()
    );
    let dir = crate::blob::temp_dir(tag);
    std::fs::copy(src.join("model-int8.onnx"), dir.join("model.onnx")).unwrap();
    std::fs::copy(src.join("tokenizer.json"), dir.join("tokenizer.json")).unwrap();
    if let Some(c) = config {
        std::fs::write(dir.join("config_sentence_transformers.json"), c).unwrap();
    }
    dir
}

#[test]
fn a_model_folder_s_prompts_are_read_as_sentence_transformers_reads_them() {
    let cases: &[(Option<&str>, Prompts)] = &[
        (None, Prompts::NONE),
        (Some(r#"{"__version__": {}}"#), Prompts::NONE),
        (
            Some(r#"{"prompts": {"query": "query: ", "passage": "passage: "}}"#),
            e5_prompts(),
        ),
        (
            Some(r#"{"prompts": {"query": "q: ", "document": "d: ", "other": "x"}}"#),
            Prompts {
                query: "q: ".into(),
                passage: "d: ".into(),
            },
        ),
    ];
    for (i, (config, want)) in cases.iter().enumerate() {
        let dir = model_folder(&format!("prompts-{i}"), *config);
        let e = OnnxEmbedder::from_dir(&dir, OnnxOptions::default()).unwrap();
        assert_eq!(e.prompts(), want, "{config:?}");
        let given = Prompts {
            query: "given: ".into(),
            passage: String::new(),
        };
        let options = OnnxOptions {
            prompts: Some(given.clone()),
            ..OnnxOptions::default()
        };
        assert_eq!(
            OnnxEmbedder::from_dir(&dir, options).unwrap().prompts(),
            &given
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let dir = model_folder("prompts-bad", Some(r#"{"prompts": {"query": 3}}"#));
    let err = OnnxEmbedder::from_dir(&dir, OnnxOptions::default()).unwrap_err();
    assert_eq!(err.code(), "model", "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_e5_folder_asks_for_query_and_passage_prompts() {
    let dir = root().join("models/multilingual-e5-small");
    let text = std::fs::read_to_string(dir.join("config_sentence_transformers.json"))
        .unwrap_or_else(|e| panic!("{}: {e}: run `make models` first", dir.display()));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["prompts"]["query"], "query: ");
    assert_eq!(json["prompts"]["passage"], "passage: ");
}
