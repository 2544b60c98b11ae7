//! Text embeddings for the semantic lane: the [`Embedder`] trait, and
//! [`OnnxEmbedder`] (feature `embed`), which runs any sentence-transformers style ONNX model
//! locally with tract and tokenizes with the model's own `tokenizer.json`.
//!
//! Which model a build uses when the caller names none is one rule for every surface:
//! [`discover()`] (the caller's, else `$WIKIDEX_MODEL`, else an installed model package).
//!
//! No network, no API key: the model is a file the caller points at. The same code builds for
//! wasm (tokenization uses the pure-Rust regex engine; tract runs single-threaded there).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::data::error::Result;

/// What a model wants put before the texts it embeds, as sentence-transformers' `prompts` in
/// `config_sentence_transformers.json` (e5: `"query: "` and `"passage: "`). An index applies
/// them itself: the passage prompt before every chunk it embeds, the query prompt before every
/// query, and stores them with the vectors, so queries on a loaded index are embedded the way
/// its chunks were. Empty strings (the default, and MiniLM's case) put nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Prompts {
    /// Put before a query.
    pub query: String,
    /// Put before a passage (a chunk's text).
    pub passage: String,
}

/// Which of a model's [`Prompts`] a text gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptKind {
    /// A search query.
    Query,
    /// A passage: a chunk's text, embedded at build time.
    Passage,
}

impl PromptKind {
    /// `query` or `passage`.
    pub fn name(self) -> &'static str {
        match self {
            PromptKind::Query => "query",
            PromptKind::Passage => "passage",
        }
    }

    /// Parses `query` or `passage`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for anything else.
    pub fn parse(s: &str) -> Result<PromptKind> {
        match s {
            "query" => Ok(PromptKind::Query),
            "passage" => Ok(PromptKind::Passage),
            _ => Err(crate::Error::invalid_argument(format!(
                "unknown prompt `{s}`; expected query or passage"
            ))),
        }
    }
}

impl Prompts {
    /// No prompts.
    pub const NONE: Prompts = Prompts {
        query: String::new(),
        passage: String::new(),
    };

    /// Whether both prompts are empty.
    pub fn is_empty(&self) -> bool {
        self.query.is_empty() && self.passage.is_empty()
    }

    /// The prompt for `kind`.
    pub fn get(&self, kind: PromptKind) -> &str {
        match kind {
            PromptKind::Query => &self.query,
            PromptKind::Passage => &self.passage,
        }
    }

    /// `text` with the prompt for `kind` before it (borrowed when the prompt is empty).
    ///
    /// # Example
    /// ```
    /// # use wikidex::{PromptKind, Prompts};
    /// let e5 = Prompts { query: "query: ".into(), passage: "passage: ".into() };
    /// assert_eq!(e5.apply(PromptKind::Query, "who is on call"), "query: who is on call");
    /// assert_eq!(Prompts::NONE.apply(PromptKind::Passage, "text"), "text");
    /// ```
    pub fn apply<'a>(&self, kind: PromptKind, text: &'a str) -> Cow<'a, str> {
        match self.get(kind) {
            "" => Cow::Borrowed(text),
            prompt => Cow::Owned(format!("{prompt}{text}")),
        }
    }

    /// Each of `texts` after the prompt for `kind` (none: as they are), as [`Prompts::apply`].
    pub fn apply_all<'a>(&self, kind: Option<PromptKind>, texts: &[&'a str]) -> Vec<Cow<'a, str>> {
        texts
            .iter()
            .map(|&t| match kind {
                Some(kind) => self.apply(kind, t),
                None => Cow::Borrowed(t),
            })
            .collect()
    }
}

static NO_PROMPTS: Prompts = Prompts::NONE;

/// Turns texts into unit vectors. Implement it to bring your own model; [`OnnxEmbedder`]
/// is the built-in one.
pub trait Embedder: Send + Sync {
    /// A readable name of the model (e.g. `all-MiniLM-L6-v2`), stored in the index.
    fn model_id(&self) -> &str;
    /// Identifies the exact weights (e.g. a hash of the model file). An index built with one
    /// fingerprint refuses queries embedded with another.
    fn fingerprint(&self) -> &str;
    /// Dimension of every vector.
    fn dim(&self) -> usize;
    /// Embeds a batch of texts: one L2-normalized vector of [`Embedder::dim`] values per
    /// text, in order.
    ///
    /// # Errors
    /// Whatever stops the model from running ([`crate::Error::Model`] for the built-in one).
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// The prompts an index puts before the passages and queries it has this model embed
    /// ([`Embedder::embed`] itself puts nothing before a text). Default: none.
    fn prompts(&self) -> &Prompts {
        &NO_PROMPTS
    }
    /// Embeds texts as queries or passages: each after the prompt for `kind`
    /// ([`Embedder::prompts`]; `None`: no prompt), then as [`Embedder::embed`].
    ///
    /// # Errors
    /// As [`Embedder::embed`].
    fn embed_as(&self, texts: &[&str], kind: Option<PromptKind>) -> Result<Vec<Vec<f32>>> {
        let prompted = self.prompts().apply_all(kind, texts);
        let refs: Vec<&str> = prompted.iter().map(|t| t.as_ref()).collect();
        self.embed(&refs)
    }
}

/// Scales `v` to unit length in place (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

mod discover;
#[cfg(feature = "embed")]
mod fast_add;
#[cfg(feature = "embed")]
mod onnx;
pub use discover::{
    choose, discover, model_notice, semantic_off, Chosen, Found, Manifest, ModelSource, Surface,
    MANIFEST_FILE, MODEL_ENV, MODEL_NAMES, MODEL_PACKAGES, MULTILINGUAL_SHARE,
};
#[cfg(feature = "embed")]
pub use onnx::{
    model_file_for_id, LongTexts, OnnxEmbedder, OnnxOptions, EMBED_CONFIG_FILE, MODEL_FILE,
    TOKENIZER_FILE,
};
