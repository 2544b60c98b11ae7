//! [`Config`]: the whole configuration of an index (plain data, stored in the blob).

use serde::{Deserialize, Serialize};

use crate::analyze::Language;
use crate::chunk::ChunkConfig;
use crate::error::{Error, Result};
use crate::fusion::FusionConfig;
use crate::lane::lexical::Bm25Params;

/// The whole configuration of an index; stored in the blob, so a loaded index searches the way
/// it was built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Chunk sizes.
    pub chunk: ChunkConfig,
    /// Analysis language (stemmer and stopwords).
    pub language: Language,
    /// BM25 parameters of the lexical lane.
    pub bm25: Bm25Params,
    /// RRF constant and lane weights.
    pub fusion: FusionConfig,
    /// Longest query, in characters (default 1,000); longer queries are cut and the result says
    /// so.
    pub max_query_chars: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            chunk: ChunkConfig::default(),
            language: Language::English,
            bm25: Bm25Params::default(),
            fusion: FusionConfig::default(),
            max_query_chars: 1000,
        }
    }
}

impl Config {
    /// Checks every value's documented range.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first value out of range.
    pub fn validate(&self) -> Result<()> {
        ChunkConfig::validate(&self.chunk)?;
        self.bm25.validate()?;
        self.fusion.validate()?;
        if self.max_query_chars == 0 {
            return Err(Error::invalid_argument(
                "max_query_chars must be at least 1",
            ));
        }
        Ok(())
    }
}
