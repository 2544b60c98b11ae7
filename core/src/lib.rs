//! wikidex: an in-process retrieval engine for LLM-maintained Markdown wikis.
//!
//! A tour, bottom-up. The modules are layered: each imports only from its own layer or the
//! ones below (a test, `tests/it/layers.rs`, keeps it so), which is what lets every binding
//! be a thin shell over the front.
//!
//! 1. **Data**: [`Error`] (stable codes, details, records), [`Config`] and its parts,
//!    build records ([`BuildReport`]), [`offset`] units (bytes, chars, UTF-16), and
//!    [`file`](mod@file): only regular files are read, without blocking, with caps.
//! 2. **Text**: [`page`] parses the page contract (YAML frontmatter, keys, scopes, links);
//!    [`chunk`] splits pages into overlapping, stably identified chunks; [`analyze`]
//!    normalizes, segments (CJK into character bigrams), filters and stems text, the same
//!    way for chunks and queries; [`language`] tells which language a page is written in
//!    (a build's default model and analysis language follow the wiki's mix).
//! 3. **Structures** built from text: the inverted index (dictionary, posting lists, the
//!    surface words; stored in blocks a blob can load apart); [`lane`] ranks chunks in
//!    independent lanes (lexical BM25 over that index, semantic cosine, token overlap);
//!    [`embed`] turns text into vectors ([`OnnxEmbedder`] runs a local ONNX sentence model;
//!    or bring your own [`Embedder`]); [`fusion`] combines
//!    the lanes with weighted reciprocal rank fusion; [`graph`] holds the edges, their
//!    adjacency and link resolution (redirects, aliases); [`raw`] is the layer of immutable
//!    raw source documents pages are compiled from.
//! 4. **Codec**: [`blob`] stores all of it in one portable, checksummed blob.
//! 5. **Operations** over an immutable [`Index`]: search, [`traverse`] (neighbors,
//!    pointers, search with evidence), [`cite`] (verify an answer's citations against the
//!    pages and raw documents), [`lint`] (what to fix in a wiki), pure writes that return the
//!    next index ([`Index::upsert_page`], [`Index::delete_page`], [`Index::rename_page`]),
//!    [`tools`] for agents, and [`eval`] (retrieval quality on BEIR-layout collections).
//! 6. **Front**: what a caller holds. [`IndexBuilder`] and [`build`] (the build plan every front
//!    end shares, [`BuildOptions`]) make an index; a [`Session`] owns the current index
//!    ([`SharedIndex`] swaps snapshots between threads) and what a caller brings to it: the
//!    model, the offset unit, the query log, the agent tools, the build report. Every binding
//!    wraps a `Session`. Files are opened and saved atomically; [`sync_file`] keeps a blob in
//!    step with its folder.
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
// One `unsafe` block: `data::memory::give_back` (glibc's `malloc_trim`).
#![deny(unsafe_code)]

// The folders are the layers, bottom-up; each imports only from its own layer or the ones
// below (`tests/it/layers.rs` reads the folders and keeps it so).
pub mod blob; // the store: the one blob format
pub mod cite; // operations over an index: citations,
mod data; // plain data: errors, configuration, records, offsets, dates, options
pub mod embed; // structures: the model runner,
mod front;
pub mod graph; // the link graph,
mod index; // the index: its data, its embeddings, its pure writes
pub mod lane; // the lanes and their fusion
pub mod lint; // what to fix in a wiki,
mod postings; // the inverted index: dictionary, posting lists, surface words
mod search; // search (and search over a blob loaded in parts),
mod text; // the page contract, chunks, analysis, raw documents
pub mod traverse; // walking the graph // the front: session, build plan, builder, files, query log, tools, eval

// The concept modules keep their public paths whatever their folder.
pub use data::{date, offset, options};
pub use front::{eval, file, querylog, site, tools};
pub use lane::fusion;
pub use text::{analyze, chunk, language, page, raw};

pub use cite::{
    AnswerCheck, CitationHeader, CitationStatus, Cited, PromptBlock, QuoteSpan, SentenceSupport,
    Support, Verdict, Verification,
};
pub use data::config::Config;
pub use data::error::{Error, ErrorRecord, Result};
pub use data::offset::OffsetUnit;
pub use data::record::{
    BuildReport, BuildStage, LanguageMix, LanguagePages, Skipped, SyncReport, Warning,
    SKIPPED_OUTSIDE_ROOT,
};
pub use embed::{Embedder, PromptKind, Prompts};
#[cfg(feature = "embed")]
pub use embed::{OnnxEmbedder, OnnxOptions};
#[cfg(feature = "fs")]
pub use front::build::sync_file;
pub use front::build::{
    build, wiki_choices, BuildOptions, ModelChoice, Source, SyncRecord, WikiChoices,
};
pub use front::builder::IndexBuilder;
pub use front::eval::{Collection, Metrics};
pub use front::querylog::{Insights, LogEntry, QueryLog};
pub use front::session::Session;
pub use front::shared::SharedIndex;
pub use front::tools::{ToolDef, ToolLimits, ToolResult, Tools};
#[cfg(feature = "fs")]
pub use front::walk::{folder_files, folder_stamp};
pub use index::write::{DeleteReport, RenameReport, UpsertReport, WriteOptions};
pub use index::{Chunk, ChunkSpan, Index, PageRecord};
pub use lane::fusion::FusionConfig;
pub use lane::lexical::{Bm25Params, TermScore};
pub use lane::phrase::NO_POSITIONS;
pub use lane::semantic::{VectorEncoding, VectorSection};
pub use lane::{Lane, LaneStatus, StatusKind, NO_QUERY_TERMS};
pub use lint::{LintIssue, LintReport, Severity};
pub use search::ranged::RangedIndex;
pub use search::sharded::{
    over_bytes, Ask, Coordinator, HitsAsk, ShardAnswer, ShardHits, ShardQuery, ShardRanked,
    ShardReply, ShardRequest, ShardSearcher, ShardSummary, ShardedIndex,
};
pub use search::{
    AlwaysMode, Explanation, FacetCount, Facets, Found, Highlight, Hit, HitList, LaneHit,
    LaneReport, PhraseReport, Ranked, SearchOptions, SearchResults, Snippet, DEFAULT_LIMIT,
    MAX_LIMIT, MAX_RANK_THREADS,
};
pub use text::analyze::Language;
pub use text::chunk::ChunkConfig;
pub use text::page::{Extra, LinkSpan, Page, ParsedPage, Relation, Scope, SourceRef, UsageMode};
pub use text::raw::RawDoc;
pub use traverse::{
    Evidence, EvidenceOptions, GraphEdge, GraphNode, Pointer, Subgraph, SupportingChunk,
    TraverseOptions,
};

// An index is shared between threads by every binding (Python releases the GIL, Node runs
// searches on the libuv pool): keep it `Send + Sync`.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Index>();
    assert_send_sync::<IndexBuilder<'static>>();
    assert_send_sync::<SharedIndex>();
    assert_send_sync::<Session>();
};

/// The README's Rust examples, run as doc tests so the README stays true to the code.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The book's pages (`docs/`), run as doc tests like the README: their Rust examples stay true.
#[cfg(doctest)]
pub mod book {
    #[doc = include_str!("../../docs/benchmarks/browser-vs-pagefind.md")]
    pub struct BenchmarksBrowserVsPagefind;
    #[doc = include_str!("../../docs/benchmarks/docs-sites.md")]
    pub struct BenchmarksDocsSites;
    #[doc = include_str!("../../docs/benchmarks/models.md")]
    pub struct BenchmarksModels;
    #[doc = include_str!("../../docs/benchmarks/quality.md")]
    pub struct BenchmarksQuality;
    #[doc = include_str!("../../docs/benchmarks/speed.md")]
    pub struct BenchmarksSpeed;
    #[doc = include_str!("../../docs/concepts/agent-tools.md")]
    pub struct ConceptsAgentTools;
    #[doc = include_str!("../../docs/concepts/chunking.md")]
    pub struct ConceptsChunking;
    #[doc = include_str!("../../docs/concepts/citations.md")]
    pub struct ConceptsCitations;
    #[doc = include_str!("../../docs/concepts/contract.md")]
    pub struct ConceptsContract;
    #[doc = include_str!("../../docs/concepts/graph.md")]
    pub struct ConceptsGraph;
    #[doc = include_str!("../../docs/concepts/lanes-and-fusion.md")]
    pub struct ConceptsLanesAndFusion;
    #[doc = include_str!("../../docs/concepts/lint.md")]
    pub struct ConceptsLint;
    #[doc = include_str!("../../docs/concepts/page-contract.md")]
    pub struct ConceptsPageContract;
    #[doc = include_str!("../../docs/concepts/query-log.md")]
    pub struct ConceptsQueryLog;
    #[doc = include_str!("../../docs/concepts/typos-and-phrases.md")]
    pub struct ConceptsTyposAndPhrases;
    #[doc = include_str!("../../docs/design/blob-and-bindings.md")]
    pub struct DesignBlobAndBindings;
    #[doc = include_str!("../../docs/design/graph-citations-agents.md")]
    pub struct DesignGraphCitationsAgents;
    #[doc = include_str!("../../docs/design/index.md")]
    pub struct DesignIndex;
    #[doc = include_str!("../../docs/design/pages-and-chunks.md")]
    pub struct DesignPagesAndChunks;
    #[doc = include_str!("../../docs/design/search.md")]
    pub struct DesignSearch;
    #[doc = include_str!("../../docs/getting-started/browser.md")]
    pub struct GettingStartedBrowser;
    #[doc = include_str!("../../docs/getting-started/cli.md")]
    pub struct GettingStartedCli;
    #[doc = include_str!("../../docs/getting-started/mcp.md")]
    pub struct GettingStartedMcp;
    #[doc = include_str!("../../docs/getting-started/node.md")]
    pub struct GettingStartedNode;
    #[doc = include_str!("../../docs/getting-started/python.md")]
    pub struct GettingStartedPython;
    #[doc = include_str!("../../docs/getting-started/rust.md")]
    pub struct GettingStartedRust;
    #[doc = include_str!("../../docs/guides/choosing-a-model.md")]
    pub struct GuidesChoosingAModel;
    #[doc = include_str!("../../docs/guides/distributed.md")]
    pub struct GuidesDistributed;
    #[doc = include_str!("../../docs/guides/docs-site.md")]
    pub struct GuidesDocsSite;
    #[doc = include_str!("../../docs/guides/mcp-in-an-agent.md")]
    pub struct GuidesMcpInAnAgent;
    #[doc = include_str!("../../docs/guides/range-requests.md")]
    pub struct GuidesRangeRequests;
    #[doc = include_str!("../../docs/guides/sync.md")]
    pub struct GuidesSync;
    #[doc = include_str!("../../docs/index.md")]
    pub struct BookIndex;
    #[doc = include_str!("../../docs/reference/blob-format.md")]
    pub struct ReferenceBlobFormat;
    #[doc = include_str!("../../docs/reference/cli.md")]
    pub struct ReferenceCli;
    #[doc = include_str!("../../docs/reference/configuration.md")]
    pub struct ReferenceConfiguration;
    #[doc = include_str!("../../docs/reference/errors.md")]
    pub struct ReferenceErrors;
    #[doc = include_str!("../../docs/reference/fuzzing.md")]
    pub struct ReferenceFuzzing;
    #[doc = include_str!("../../docs/reference/search-options.md")]
    pub struct ReferenceSearchOptions;
    #[doc = include_str!("../../docs/status.md")]
    pub struct Status;
}
