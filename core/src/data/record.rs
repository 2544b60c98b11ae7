//! Plain records the build reports (what was indexed, skipped and odd), shared by the builder
//! and lint.

use serde::{Deserialize, Serialize};

/// A file or record the build could not use, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Path relative to the wiki root; for a BEIR record, `corpus.jsonl` (with `line`) when the
    /// line is malformed, or `corpus.jsonl:<line>` for a duplicate id.
    pub path: String,
    /// 1-based line of the problem, when known.
    pub line: Option<u32>,
    /// The error code (`invalid_page`, `duplicate_key`, `io`, ...), or
    /// [`SKIPPED_OUTSIDE_ROOT`] for a symbolic link that leads out of the wiki root (not read).
    pub code: String,
    /// What was wrong.
    pub reason: String,
}

/// The [`Skipped::code`] of a file whose symbolic link leads outside the folder being indexed:
/// it is not read unless `IndexBuilder::follow_links_outside_root` allows it. Not an error
/// code: nothing failed.
pub const SKIPPED_OUTSIDE_ROOT: &str = "outside_root";

/// A problem in a page that did not stop it from being indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// Path relative to the wiki root.
    pub path: String,
    /// What was odd.
    pub message: String,
}

/// What a build did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildReport {
    /// Pages indexed.
    pub pages: usize,
    /// Chunks indexed.
    pub chunks: usize,
    /// Raw source documents indexed (see [`raw`](crate::text::raw)).
    pub raw_documents: usize,
    /// Their chunks.
    pub raw_chunks: usize,
    /// Files skipped, with reasons.
    pub skipped: Vec<Skipped>,
    /// Non-fatal problems in indexed pages.
    pub warnings: Vec<Warning>,
    /// When the build looked for the default model and found none: that the semantic lane
    /// is off and how to turn it on ([`crate::embed::semantic_off`]). `None` when a model
    /// embedded the chunks, or the caller asked for no model.
    #[serde(default)]
    pub semantic_off: Option<String>,
}

/// What a build on a previous index changed
/// ([`crate::IndexBuilder::sync_with_progress`], `wikidex sync`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncReport {
    /// Files indexed now and not before (sorted paths; without a previous index, every file
    /// indexed). A new file that fails to parse is only in `build.skipped`.
    pub added: Vec<String>,
    /// Files whose text differs from the one indexed before, read and parsed again (one that
    /// now fails to parse is also in `build.skipped`, and its page is gone).
    pub changed: Vec<String>,
    /// Files indexed before and not given now: deleted, or renamed (the new path is in
    /// `added`).
    pub removed: Vec<String>,
    /// Files whose text is the one indexed before: taken from the previous index unparsed.
    pub unchanged: usize,
    /// Chunks embedded by this build; every other chunk kept the vector stored for its
    /// passage.
    pub embedded: usize,
    /// The new index's counts, skipped files and warnings.
    pub build: BuildReport,
}

impl SyncReport {
    /// Whether anything was added, changed or removed.
    pub fn has_changes(&self) -> bool {
        !(self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty())
    }
}

/// What [`crate::IndexBuilder::build_with_progress`] is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildStage {
    /// Chunking and analyzing pages (counts pages).
    Pages,
    /// Embedding chunks (counts chunks).
    Embeddings,
}

impl BuildStage {
    /// The stage's name on every surface: `pages` or `embeddings`.
    pub fn as_str(self) -> &'static str {
        match self {
            BuildStage::Pages => "pages",
            BuildStage::Embeddings => "embeddings",
        }
    }
}
