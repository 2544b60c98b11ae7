//! The semantic lane's place in the index: the blob section that holds chunk embeddings.
//!
//! Not finished: no embedding model is wired in yet, so no index carries vectors and the lane
//! reports itself as skipped on every query. The section exists so the blob format already has
//! room for it and the loader already validates it.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Chunk embeddings stored in the blob, one unit vector per chunk, in chunk order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorSection {
    /// The model's id (e.g. `sentence-transformers/all-MiniLM-L6-v2`).
    pub model_id: String,
    /// Dimension of every vector.
    pub dim: u32,
    /// Fingerprint of the model file the vectors were computed with.
    pub fingerprint: String,
    /// `chunks x dim` values, row-major.
    pub values: Vec<f32>,
}

impl VectorSection {
    /// Checks the section holds exactly one vector per chunk.
    pub(crate) fn validate(&self, chunks: usize) -> Result<()> {
        let expected = (self.dim as usize).checked_mul(chunks);
        if self.dim == 0 || expected != Some(self.values.len()) {
            return Err(Error::corrupt(format!(
                "vector section holds {} values for {chunks} chunks of dimension {}",
                self.values.len(),
                self.dim
            )));
        }
        Ok(())
    }
}

/// Why the semantic lane did not run for an index without vectors.
pub(crate) const NO_VECTORS: &str =
    "this index has no embeddings (the semantic lane is not available yet)";
