//! Text embeddings for the semantic lane (DESIGN §3): the [`Embedder`] trait, and
//! [`OnnxEmbedder`] (feature `embed`), which runs any sentence-transformers style ONNX model
//! locally with tract and tokenizes with the model's own `tokenizer.json`.
//!
//! No network, no API key: the model is a file the caller points at. The same code builds for
//! wasm (tokenization uses the pure-Rust regex engine; tract runs single-threaded there).

use crate::error::Result;

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

#[cfg(feature = "embed")]
mod fast_add;
#[cfg(feature = "embed")]
mod onnx;
#[cfg(feature = "embed")]
pub use onnx::{model_file_for_id, OnnxEmbedder, OnnxOptions, MODEL_FILE, TOKENIZER_FILE};
