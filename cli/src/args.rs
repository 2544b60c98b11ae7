//! The command line: [`Cli`], its [`Command`]s and each command's arguments (clap derive).
//! The doc comments are the `--help` text.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use wikidex::{
    BuildOptions, Config, Embedder, Error, Language, ModelChoice, ToolLimits, VectorEncoding,
};

use crate::model::ModelArgs;

#[derive(Parser)]
#[command(
    name = "wikidex",
    version,
    about = "Retrieval for LLM-maintained wikis: build an index blob, search it, inspect it."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Build an index blob from a wiki folder (or a BEIR corpus with --beir); files under the
    /// wiki's raw/ folder (or --raw DIR) are indexed as raw source documents.
    Build(BuildArgs),
    /// Merge shards (index blobs built each from part of a wiki's files, with the same options)
    /// into the index one build of all the files gives: pages as the shards indexed them, each
    /// passage's vector kept when the model is the shards' (nothing is embedded again), the
    /// lexical index, graph and semantic floor made again over all pages.
    Merge(MergeArgs),
    /// Bring an index blob up to date with its wiki folder: only files added or changed since
    /// the blob was written are parsed, only new passages embedded (a missing or unreadable
    /// blob means one full build).
    Sync(SyncArgs),
    /// Add search to a static docs site: index the Markdown sources its generator reads and
    /// write the search bundle (the index, the browser module, the search UI) into the built
    /// site's folder, under wikidex/. Nothing else in the site is touched; add the UI to a
    /// page with `<script type="module" src="/wikidex/ui.js"></script><wikidex-search></wikidex-search>`.
    Site(SiteArgs),
    /// Search an index.
    Search(SearchArgs),
    /// Show one page by key.
    Page(PageArgs),
    /// Show one chunk by id.
    Chunk(ChunkArgs),
    /// Measure retrieval quality on a BEIR-layout collection, per lane and fused.
    Eval(EvalArgs),
    /// Embed texts with the model and print the vectors (or time a whole corpus).
    Embed(EmbedArgs),
    /// Lint a wiki folder or an index: dangling links, orphans, redirects, drift, ... Exits 1
    /// when an error-severity finding exists.
    Lint(LintArgs),
    /// Walk the page graph from a page (depth <= 2) and print the subgraph with its evidence.
    Neighbors(NeighborsArgs),
    /// Verify an answer's citations against an index. Exits 1 when a citation is unknown or
    /// drifted.
    Verify(VerifyArgs),
    /// Serve the agent tools (search, read_pages, read_chunks, neighbors, verify) over MCP on
    /// standard input and output, from an index blob or a wiki folder.
    Mcp(McpArgs),
    /// Run one agent tool (as `mcp` serves it) and print its text, or `--json` its result;
    /// without a tool name, list the tools with their argument schemas (JSON).
    Tool(ToolArgs),
    /// Read a query log (`--log`): the queries that found nothing (the content gaps), the
    /// most frequent queries, the most and never cited pages and chunks, and the share of
    /// drifted or unknown citations.
    Insights(InsightsArgs),
}

#[derive(Args)]
pub(crate) struct InsightsArgs {
    /// The query log (JSON Lines).
    pub(crate) log: PathBuf,
    /// The index the log is about: lists its pages that were never cited.
    #[arg(long)]
    pub(crate) index: Option<PathBuf>,
    /// Entries per list.
    #[arg(long, default_value_t = 10)]
    pub(crate) top: usize,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The agent tools' limits.
#[derive(Args)]
pub(crate) struct ToolLimitArgs {
    /// Most hits a search returns.
    #[arg(long, default_value_t = 10)]
    pub(crate) max_results: usize,
    /// Most drill-down calls (read_pages, read_chunks, neighbors) per turn; over MCP a
    /// search starts a new turn.
    #[arg(long, default_value_t = 20)]
    pub(crate) max_drilldowns: usize,
    /// Most characters of a tool result's text.
    #[arg(long, default_value_t = 8000)]
    pub(crate) max_chars: usize,
}

impl ToolLimitArgs {
    pub(crate) fn limits(&self) -> ToolLimits {
        ToolLimits {
            max_results: self.max_results,
            max_drilldowns: self.max_drilldowns,
            max_chars: self.max_chars,
        }
    }
}

#[derive(Args)]
pub(crate) struct McpArgs {
    /// An index blob, or a wiki folder (indexed at start, then kept current).
    pub(crate) source: PathBuf,
    /// For a wiki folder: keep its index in this blob. At start only the files changed since
    /// the blob was written are re-indexed (as `wikidex sync`); it is written after each sync.
    #[arg(long, value_name = "BLOB")]
    pub(crate) index: Option<PathBuf>,
    /// For a wiki folder: seconds between two looks for edited, added, renamed or deleted
    /// files (polling; 0: do not watch; at most 86400, a day).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub(crate) watch: f64,
    #[command(flatten)]
    pub(crate) embed: EmbedBuildArgs,
    #[command(flatten)]
    pub(crate) limits: ToolLimitArgs,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct ToolArgs {
    /// The index blob.
    pub(crate) index: PathBuf,
    /// The tool: search, read_pages, read_chunks, neighbors or verify.
    pub(crate) name: Option<String>,
    /// Its arguments as a JSON object, or `-` for standard input.
    #[arg(default_value = "{}")]
    pub(crate) args: String,
    #[command(flatten)]
    pub(crate) embed: EmbedBuildArgs,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) limits: ToolLimitArgs,
    /// Print the result as JSON (`text` and `data`).
    #[arg(long)]
    pub(crate) json: bool,
}

/// How `build` and `eval` embed chunks.
#[derive(Args)]
pub(crate) struct EmbedBuildArgs {
    #[command(flatten)]
    pub(crate) model: ModelArgs,
    /// Build without embeddings (lexical and token lanes only), even when a model is present.
    #[arg(long, conflicts_with_all = ["model", "onnx"])]
    pub(crate) no_embed: bool,
    /// How to store the vectors: f32, or int8 (a quarter of the size).
    #[arg(long, default_value = "f32", value_name = "f32|int8")]
    pub(crate) vectors: String,
}

impl EmbedBuildArgs {
    /// The model a build embeds with: none with `--no-embed`, else as
    /// [`ModelArgs::load_for_build`].
    pub(crate) fn model_choice(&self, quiet: bool) -> Result<ModelChoice, Error> {
        if self.no_embed {
            return Ok(ModelChoice::Off);
        }
        self.model.load_for_build(quiet)
    }

    /// The model a sync embeds with, loaded before the folder is read: none with
    /// `--no-embed`, else as [`ModelArgs::load_default`].
    pub(crate) fn embedder(&self, quiet: bool) -> Result<Option<Arc<dyn Embedder>>, Error> {
        if self.no_embed {
            return Ok(None);
        }
        Ok(match self.model.load_default(quiet)? {
            ModelChoice::Given(m) => Some(m),
            _ => None,
        })
    }

    /// The build options these flags and `config` give.
    pub(crate) fn options(&self, config: Config) -> Result<BuildOptions, Error> {
        Ok(BuildOptions {
            config,
            vectors: VectorEncoding::parse(&self.vectors)?,
            ..BuildOptions::default()
        })
    }
}

#[derive(Args)]
pub(crate) struct EmbedArgs {
    /// Texts to embed (one vector each).
    #[arg(required_unless_present = "corpus")]
    pub(crate) texts: Vec<String>,
    /// Instead of texts: embed every document of a BEIR corpus (title + " " + text) and
    /// report sequences, tokens and seconds (model load excluded), for benchmarks.
    #[arg(long, value_name = "DIR", conflicts_with = "texts")]
    pub(crate) corpus: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) model: ModelArgs,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct LintArgs {
    /// A wiki folder (built in memory, with its raw/ folder) or an index blob.
    pub(crate) path: PathBuf,
    /// A folder of raw source documents (as the wiki's raw/ folder), for a wiki folder.
    #[arg(long)]
    pub(crate) raw: Option<PathBuf>,
    /// Read files whose symbolic links lead outside the wiki folder (by default they are
    /// skipped and reported as `outside_root`).
    #[arg(long)]
    pub(crate) follow_outside_root: bool,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct NeighborsArgs {
    /// The index blob.
    pub(crate) index: PathBuf,
    /// The seed page key (repeat the command's --seed for more).
    pub(crate) key: String,
    /// More seed keys.
    #[arg(long = "seed")]
    pub(crate) seeds: Vec<String>,
    /// Depth, 0..=2.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=2))]
    pub(crate) depth: u32,
    /// Only follow connections at least this confident (0..=1).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) min_confidence: f32,
    /// Most nodes returned (1..=1000).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub(crate) max_nodes: u16,
    /// Resolve the seeds as this scope.
    #[arg(long)]
    pub(crate) scope: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct VerifyArgs {
    /// The index blob.
    pub(crate) index: PathBuf,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    /// The answer text: a file, or `-` for standard input.
    #[arg(long)]
    pub(crate) answer: String,
    /// Cited chunk ids, comma-separated; `id@hash` carries the hash the model saw.
    #[arg(long, value_delimiter = ',')]
    pub(crate) cite: Vec<String>,
    /// Chunk ids the model was offered (shown in its prompt), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub(crate) offered: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct ConfigArgs {
    /// BM25 term-frequency saturation k1 (0..=10).
    #[arg(long)]
    pub(crate) k1: Option<f32>,
    /// BM25 length normalization b (0..=1).
    #[arg(long)]
    pub(crate) b: Option<f32>,
    /// Analysis language (english, french, german, ..., none). Default: the wiki's main
    /// language when the analyzer stems it, else english (the build report says which).
    #[arg(long)]
    pub(crate) language: Option<String>,
    /// Chunk size in tokens (16..=4096).
    #[arg(long)]
    pub(crate) chunk_tokens: Option<u32>,
    /// Tokens of overlap between chunks (below chunk-tokens / 2).
    #[arg(long)]
    pub(crate) overlap_tokens: Option<u32>,
    /// A lane's fusion weight, as LANE=WEIGHT (repeatable; 0..=100), e.g. `token=0.5`.
    #[arg(long = "weight", value_name = "LANE=WEIGHT")]
    pub(crate) weights: Vec<String>,
    /// The RRF constant k (1..=1000).
    #[arg(long)]
    pub(crate) rrf_k: Option<f32>,
    /// Store no term positions (`Config::positions` off): a smaller blob; a quoted phrase is
    /// then searched as its words, and the results say so.
    #[arg(long)]
    pub(crate) no_positions: bool,
}

impl ConfigArgs {
    /// Whether only query-time (fusion) settings are given.
    pub(crate) fn only_fusion(&self) -> bool {
        self.k1.is_none()
            && self.b.is_none()
            && self.language.is_none()
            && self.chunk_tokens.is_none()
            && self.overlap_tokens.is_none()
            && !self.no_positions
    }

    pub(crate) fn config(&self) -> Result<Config, Error> {
        let mut c = Config::default();
        if let Some(k1) = self.k1 {
            c.bm25.k1 = k1;
        }
        if let Some(b) = self.b {
            c.bm25.b = b;
        }
        if let Some(l) = &self.language {
            c.language = Some(Language::parse(l)?);
        }
        if let Some(n) = self.chunk_tokens {
            c.chunk.max_tokens = n;
        }
        if let Some(n) = self.overlap_tokens {
            c.chunk.overlap_tokens = n;
        }
        c.positions = !self.no_positions;
        if let Some(k) = self.rrf_k {
            c.fusion.k = k;
        }
        for w in &self.weights {
            c.fusion.apply_setting(w)?;
        }
        c.validate()?;
        Ok(c)
    }
}

#[derive(Args)]
pub(crate) struct SiteArgs {
    /// The folder of Markdown sources the site's generator reads (MkDocs' docs/, mdBook's
    /// src/, Docusaurus' docs/, Hugo's content/, a VitePress root). Every Markdown file is a
    /// page, keyed by its path.
    pub(crate) src: PathBuf,
    /// The built site's folder (MkDocs' site/, mdBook's book/, build/, public/, dist/).
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// The site's generator, whose rules map a source file to its page's URL and a heading to
    /// its anchor: mkdocs, mdbook, docusaurus, vitepress or hugo.
    #[arg(long)]
    pub(crate) layout: Option<String>,
    /// A URL pattern instead of the layout's rule: `{path}` is the source path without its
    /// extension, e.g. `/docs/{path}.html`. Frontmatter `permalink` still wins.
    #[arg(long)]
    pub(crate) url_pattern: Option<String>,
    /// How headings become anchors, when not the layout's: github, mkdocs, mdbook or vitepress.
    #[arg(long)]
    pub(crate) anchors: Option<String>,
    /// The bundle's folder inside --out (default wikidex).
    #[arg(long)]
    pub(crate) bundle_dir: Option<String>,
    /// A model folder (tokenizer.json and its ONNX file): the pages are embedded with it, and
    /// the bundle gets the model and the browser's model runner for the search box's semantic
    /// toggle (about 4.5 MB gzipped plus the model, loaded only when a reader turns it on).
    /// Without it, the bundle searches with the lexical lanes.
    #[arg(long)]
    pub(crate) model: Option<PathBuf>,
    /// Fail on the first page that cannot be used instead of skipping and reporting it.
    #[arg(long)]
    pub(crate) strict: bool,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    /// Print a JSON report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct BuildArgs {
    /// The wiki folder (or, with --beir, a BEIR folder holding corpus.jsonl).
    pub(crate) dir: PathBuf,
    /// Where to write the index blob. Written atomically; only a missing or empty file or an
    /// index blob is replaced (a read-only file, a FIFO, a device or a file of other content is
    /// refused); a symbolic link is followed (the file it names is replaced, the link stays).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Read a BEIR-layout corpus.jsonl: each document becomes a page (`_id` is its key).
    #[arg(long)]
    pub(crate) beir: bool,
    /// Fail on the first page that cannot be used instead of skipping and reporting it.
    #[arg(long)]
    pub(crate) strict: bool,
    /// A folder of raw source documents, indexed as the wiki's raw/ folder.
    #[arg(long)]
    pub(crate) raw: Option<PathBuf>,
    /// Read files whose symbolic links lead outside the wiki folder (by default they are
    /// skipped and reported as `outside_root`).
    #[arg(long)]
    pub(crate) follow_outside_root: bool,
    /// Do not store the page files' modification times (the date filters' fallback for pages
    /// without a frontmatter date): the blob then depends only on the files' paths and texts.
    #[arg(long)]
    pub(crate) no_file_times: bool,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    #[command(flatten)]
    pub(crate) embed: EmbedBuildArgs,
    /// Print a JSON report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct MergeArgs {
    /// The shards: index blobs built each from part of a wiki's files.
    #[arg(required = true)]
    pub(crate) shards: Vec<PathBuf>,
    /// Where to write the merged index blob (atomically, as `build -o`).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Fail on a page key found in two shards instead of keeping the one with the smaller path.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Do not keep the shards' page modification times (as `build --no-file-times`).
    #[arg(long)]
    pub(crate) no_file_times: bool,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    #[command(flatten)]
    pub(crate) embed: EmbedBuildArgs,
    /// Print a JSON report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct SyncArgs {
    /// The wiki folder.
    pub(crate) dir: PathBuf,
    /// The index blob to bring up to date (and to write; atomically, as `build -o`). Its
    /// configuration and vector encoding are kept. A missing file is built; anything else
    /// there must be a blob this version reads (it is never replaced otherwise).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// A folder of raw source documents, indexed as the wiki's raw/ folder.
    #[arg(long)]
    pub(crate) raw: Option<PathBuf>,
    /// Read files whose symbolic links lead outside the wiki folder.
    #[arg(long)]
    pub(crate) follow_outside_root: bool,
    /// Do not store the page files' modification times (as `build --no-file-times`).
    #[arg(long)]
    pub(crate) no_file_times: bool,
    #[command(flatten)]
    pub(crate) embed: EmbedBuildArgs,
    /// Print a JSON report.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct SearchArgs {
    /// The index blob.
    pub(crate) index: PathBuf,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    /// The query, or `-` to read it from standard input.
    pub(crate) query: String,
    /// Number of hits: at least 1; more than 100 is taken as 100, as on every surface.
    #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) limit: u16,
    /// Only pages with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    pub(crate) tags: Vec<String>,
    /// Only pages of this type (repeatable: any of them).
    #[arg(long = "type")]
    pub(crate) types: Vec<String>,
    /// Search as this scope: `global`, or a user name (`alice` or `user/alice`).
    #[arg(long)]
    pub(crate) scope: Option<String>,
    /// Only pages with this usage mode (always, auto; repeatable).
    #[arg(long = "usage-mode")]
    pub(crate) usage_modes: Vec<String>,
    /// Lanes to run, comma-separated (lexical,semantic,token). Default: all available.
    #[arg(long)]
    pub(crate) lanes: Option<String>,
    /// Return chunk hits instead of one hit per page.
    #[arg(long)]
    pub(crate) chunks: bool,
    /// Put `usage_mode: always` pages first among the hits instead of in their own list
    /// (either way they take no slot of `--limit`).
    #[arg(long, conflicts_with = "always_separate")]
    pub(crate) always_first: bool,
    /// `usage_mode: always` pages in their own list (the default; kept for old scripts).
    #[arg(long, hide = true)]
    pub(crate) always_separate: bool,
    /// Explain each hit: per-term BM25 contributions and per-lane fusion shares.
    #[arg(long)]
    pub(crate) explain: bool,
    /// Match every word exactly: no typo tolerance (by default a word the index does not know
    /// also matches the words one or two edits away, below exact matches).
    #[arg(long)]
    pub(crate) no_typos: bool,
    /// Count the tags and types of every page that matches the query, not only of the hits.
    #[arg(long)]
    pub(crate) facets: bool,
    /// Only pages dated on or after this (2024-03-12 or 2024-03-12T09:30:00Z; a page's date is
    /// its frontmatter's `updated`, `last_updated` or `date`).
    #[arg(long, value_name = "DATE")]
    pub(crate) since: Option<String>,
    /// Only pages dated on or before this (a date alone includes the whole day).
    #[arg(long, value_name = "DATE")]
    pub(crate) until: Option<String>,
    #[command(flatten)]
    pub(crate) model: ModelArgs,
    /// Print a prompt block for an agent (citation headers, chunk text, source pointers) and
    /// the offered chunk ids, instead of the hit list.
    #[arg(long)]
    pub(crate) prompt: bool,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct PageArgs {
    /// The index blob.
    pub(crate) index: PathBuf,
    /// The page key.
    pub(crate) key: String,
    /// Look the key up as this scope (a user's page shadows the global one).
    #[arg(long)]
    pub(crate) scope: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct ChunkArgs {
    /// The index blob.
    pub(crate) index: PathBuf,
    // Not `{n}` in a help text: clap reads it as a line break.
    /// The chunk id (`PAGE::chunk_N`, as `oncall::chunk_0`).
    pub(crate) id: String,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args)]
pub(crate) struct EvalArgs {
    /// A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.
    pub(crate) dir: PathBuf,
    /// Lanes to evaluate, comma-separated; each alone, then fused. Default: all.
    #[arg(long)]
    pub(crate) lanes: Option<String>,
    /// Run each query loop this many times and report the fastest (1..=100).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) repeat: u32,
    /// Evaluate this prebuilt index of the collection (`wikidex build --beir`) instead of
    /// building one: only --weight and --rrf-k then apply (fusion is a query-time setting).
    #[arg(long, value_name = "FILE")]
    pub(crate) index: Option<PathBuf>,
    /// Run the queries without typo tolerance (every word matched exactly).
    #[arg(long)]
    pub(crate) no_typos: bool,
    #[command(flatten)]
    pub(crate) config: ConfigArgs,
    #[command(flatten)]
    pub(crate) embed: EmbedBuildArgs,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
