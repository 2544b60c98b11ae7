//! wikidex: an in-process retrieval engine for LLM-maintained Markdown wikis.
//!
//! A tour:
//! - [`page`] parses the page contract (YAML frontmatter, keys, scopes, links);
//! - [`chunk`] splits pages into overlapping, stably identified chunks;
//! - [`analyze`] normalizes, filters and stems text, the same way for chunks and queries;
//! - [`lane`] ranks chunks in independent lanes (lexical BM25, semantic cosine, token overlap);
//! - [`embed`] turns text into vectors for the semantic lane ([`OnnxEmbedder`] runs a local
//!   ONNX sentence model; or bring your own [`Embedder`]);
//! - [`fusion`] combines the lanes with weighted reciprocal rank fusion;
//! - [`Index`] ties it together: build from a folder ([`IndexBuilder`]), search, look up pages
//!   and chunks, update pages, and save or load the portable blob ([`blob`]);
//! - [`graph`] resolves links (redirects, aliases), keeps forward and backward adjacency, and
//!   walks the graph with evidence; [`lint`] finds what to fix in a wiki;
//! - [`raw`] is the layer of immutable raw source documents pages are compiled from, and
//!   [`cite`] verifies the citations of an answer against it and the pages;
//! - [`eval`] measures retrieval quality on BEIR-layout collections.
//!
//! ```
//! use wikidex::{Index, IndexBuilder, SearchOptions};
//! let mut builder = IndexBuilder::new(Default::default())?;
//! builder.add_file("global/oncall.md", b"---\ntitle: On-call\ntags: [ops]\n---\nPage the on-call engineer for outages.")?;
//! let (index, _report) = builder.build()?;
//! let bytes = index.to_bytes()?;
//! let index = Index::from_bytes(&bytes)?;
//! let results = index.search("who do I page for an outage?", &SearchOptions::default())?;
//! assert_eq!(results.hits[0].key, "oncall");
//! assert_eq!(results.hits[0].chunk, "oncall::chunk_0");
//! # Ok::<(), wikidex::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod analyze;
pub mod blob;
pub mod chunk;
pub mod cite;
mod config;
pub mod embed;
mod error;
pub mod eval;
pub mod fusion;
pub mod graph;
mod index;
pub mod lane;
pub mod lint;
pub mod offset;
pub mod page;
pub mod raw;
mod record;
mod search;
mod vectors;

pub use analyze::Language;
pub use chunk::ChunkConfig;
pub use cite::{
    AnswerCheck, CitationHeader, CitationStatus, Cited, PromptBlock, QuoteSpan, SentenceSupport,
    Support, Verdict, Verification,
};
pub use embed::Embedder;
#[cfg(feature = "embed")]
pub use embed::{OnnxEmbedder, OnnxOptions};
pub use error::{Error, ErrorRecord, Result};
pub use eval::{Collection, Metrics};
pub use fusion::FusionConfig;
pub use graph::{
    Evidence, EvidenceOptions, GraphEdge, GraphNode, Pointer, Subgraph, SupportingChunk,
    TraverseOptions,
};
pub use index::{
    BuildReport, BuildStage, Chunk, ChunkSpan, Config, DeleteReport, Index, IndexBuilder,
    PageRecord, RenameReport, SharedIndex, Skipped, UpsertReport, Warning, WriteOptions,
    SKIPPED_OUTSIDE_ROOT,
};
pub use lane::lexical::{Bm25Params, TermScore};
pub use lane::semantic::{VectorEncoding, VectorSection};
pub use lane::{Lane, LaneStatus, StatusKind};
pub use lint::{LintIssue, LintReport, Severity};
pub use offset::OffsetUnit;
pub use page::{Extra, LinkSpan, Page, ParsedPage, Relation, Scope, SourceRef, UsageMode};
pub use raw::RawDoc;
pub use search::{
    AlwaysMode, Explanation, Highlight, Hit, LaneHit, LaneReport, Ranked, SearchOptions,
    SearchResults, Snippet, DEFAULT_LIMIT, MAX_LIMIT,
};

// An index is shared between threads by every binding (Python releases the GIL, Node runs
// searches on the libuv pool): keep it `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Index>();
    assert_send_sync::<IndexBuilder>();
    assert_send_sync::<SharedIndex>();
};

/// The README's Rust examples, run as doc tests so the README stays true to the code.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
