//! `wikidex`: build, search, inspect and evaluate wiki indexes from the command line.
//!
//! Every command takes `--json` for machine-readable output. Exit codes: 0 success, 1 an error
//! (printed with its stable code), 2 a usage error. Output into a closed pipe ends the process
//! quietly, as Unix tools do. Human output shows control characters escaped (`\x1b`), since
//! titles, snippets and file names come from the wiki; JSON output is exact.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use wikidex::querylog::JsonlLog;
use wikidex::{
    eval, querylog, AlwaysMode, BuildOptions, BuildStage, Config, Embedder, Error, Hit, Index,
    Lane, Language, QueryLog, Scope, SearchOptions, SearchResults, Session, Source, Synced,
    ToolLimits, Tools, UsageMode, VectorEncoding,
};

mod mcp;
mod model;
use model::ModelArgs;

/// `println!` for human output: the line with control characters escaped (see [`clean`]).
macro_rules! say {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        println!("{}", clean(&format!($($arg)*)))
    };
}

/// `eprintln!` for human messages, escaped like [`say!`].
macro_rules! esay {
    ($($arg:tt)*) => {
        eprintln!("{}", clean(&format!($($arg)*)))
    };
}

/// `text` with the control characters a terminal would act on shown as escapes: C0 controls
/// other than newline and tab (ESC among them), DEL, and C1 controls. A page title like
/// `ESC[2J` would otherwise clear the user's screen, and `ESC]0;...BEL` retitle the window.
fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hostile_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_clean(&mut out, c);
    }
    Cow::Owned(out)
}

fn is_hostile_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || ('\u{80}'..='\u{9f}').contains(&c)
}

fn push_clean(out: &mut String, c: char) {
    use std::fmt::Write;
    if !is_hostile_control(c) {
        out.push(c);
    } else if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

#[derive(Parser)]
#[command(
    name = "wikidex",
    version,
    about = "Retrieval for LLM-maintained wikis: build an index blob, search it, inspect it."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build an index blob from a wiki folder (or a BEIR corpus with --beir); files under the
    /// wiki's raw/ folder (or --raw DIR) are indexed as raw source documents.
    Build(BuildArgs),
    /// Bring an index blob up to date with its wiki folder: only files added or changed since
    /// the blob was written are parsed, only new passages embedded (a missing or unreadable
    /// blob means one full build).
    Sync(SyncArgs),
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
struct InsightsArgs {
    /// The query log (JSON Lines).
    log: PathBuf,
    /// The index the log is about: lists its pages that were never cited.
    #[arg(long)]
    index: Option<PathBuf>,
    /// Entries per list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The agent tools' limits.
#[derive(Args)]
struct ToolLimitArgs {
    /// Most hits a search returns.
    #[arg(long, default_value_t = 10)]
    max_results: usize,
    /// Most drill-down calls (read_pages, read_chunks, neighbors) per turn; over MCP a
    /// search starts a new turn.
    #[arg(long, default_value_t = 20)]
    max_drilldowns: usize,
    /// Most characters of a tool result's text.
    #[arg(long, default_value_t = 8000)]
    max_chars: usize,
}

impl ToolLimitArgs {
    fn limits(&self) -> ToolLimits {
        ToolLimits {
            max_results: self.max_results,
            max_drilldowns: self.max_drilldowns,
            max_chars: self.max_chars,
        }
    }
}

#[derive(Args)]
struct McpArgs {
    /// An index blob, or a wiki folder (indexed at start, then kept current).
    source: PathBuf,
    /// For a wiki folder: keep its index in this blob. At start only the files changed since
    /// the blob was written are re-indexed (as `wikidex sync`); it is written after each sync.
    #[arg(long, value_name = "BLOB")]
    index: Option<PathBuf>,
    /// For a wiki folder: seconds between two looks for edited, added, renamed or deleted
    /// files (polling; 0: do not watch; at most 86400, a day).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    watch: f64,
    #[command(flatten)]
    embed: EmbedBuildArgs,
    #[command(flatten)]
    limits: ToolLimitArgs,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
}

#[derive(Args)]
struct ToolArgs {
    /// The index blob.
    index: PathBuf,
    /// The tool: search, read_pages, read_chunks, neighbors or verify.
    name: Option<String>,
    /// Its arguments as a JSON object, or `-` for standard input.
    #[arg(default_value = "{}")]
    args: String,
    #[command(flatten)]
    embed: EmbedBuildArgs,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    #[command(flatten)]
    limits: ToolLimitArgs,
    /// Print the result as JSON (`text` and `data`).
    #[arg(long)]
    json: bool,
}

/// How `build` and `eval` embed chunks.
#[derive(Args)]
struct EmbedBuildArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Build without embeddings (lexical and token lanes only), even when a model is present.
    #[arg(long, conflicts_with_all = ["model", "onnx"])]
    no_embed: bool,
    /// How to store the vectors: f32, or int8 (a quarter of the size).
    #[arg(long, default_value = "f32", value_name = "f32|int8")]
    vectors: String,
}

impl EmbedBuildArgs {
    fn embedder(&self, quiet: bool) -> Result<Option<Arc<dyn Embedder>>, Error> {
        if self.no_embed {
            return Ok(None);
        }
        self.model.load_for_build(quiet)
    }
}

#[derive(Args)]
struct EmbedArgs {
    /// Texts to embed (one vector each).
    #[arg(required_unless_present = "corpus")]
    texts: Vec<String>,
    /// Instead of texts: embed every document of a BEIR corpus (title + " " + text) and
    /// report sequences, tokens and seconds (model load excluded), for benchmarks.
    #[arg(long, value_name = "DIR", conflicts_with = "texts")]
    corpus: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct LintArgs {
    /// A wiki folder (built in memory, with its raw/ folder) or an index blob.
    path: PathBuf,
    /// A folder of raw source documents (as the wiki's raw/ folder), for a wiki folder.
    #[arg(long)]
    raw: Option<PathBuf>,
    /// Read files whose symbolic links lead outside the wiki folder (by default they are
    /// skipped and reported as `outside_root`).
    #[arg(long)]
    follow_outside_root: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct NeighborsArgs {
    /// The index blob.
    index: PathBuf,
    /// The seed page key (repeat the command's --seed for more).
    key: String,
    /// More seed keys.
    #[arg(long = "seed")]
    seeds: Vec<String>,
    /// Depth, 0..=2.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=2))]
    depth: u32,
    /// Only follow connections at least this confident (0..=1).
    #[arg(long, default_value_t = 0.0)]
    min_confidence: f32,
    /// Most nodes returned (1..=1000).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=1000))]
    max_nodes: u16,
    /// Resolve the seeds as this scope.
    #[arg(long)]
    scope: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct VerifyArgs {
    /// The index blob.
    index: PathBuf,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The answer text: a file, or `-` for standard input.
    #[arg(long)]
    answer: String,
    /// Cited chunk ids, comma-separated; `id@hash` carries the hash the model saw.
    #[arg(long, value_delimiter = ',')]
    cite: Vec<String>,
    /// Chunk ids the model was offered (shown in its prompt), comma-separated.
    #[arg(long, value_delimiter = ',')]
    offered: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ConfigArgs {
    /// BM25 term-frequency saturation k1 (0..=10).
    #[arg(long)]
    k1: Option<f32>,
    /// BM25 length normalization b (0..=1).
    #[arg(long)]
    b: Option<f32>,
    /// Analysis language (english, french, german, ..., none).
    #[arg(long)]
    language: Option<String>,
    /// Chunk size in tokens (16..=4096).
    #[arg(long)]
    chunk_tokens: Option<u32>,
    /// Tokens of overlap between chunks (below chunk-tokens / 2).
    #[arg(long)]
    overlap_tokens: Option<u32>,
    /// A lane's fusion weight, as LANE=WEIGHT (repeatable; 0..=100), e.g. `token=0.5`.
    #[arg(long = "weight", value_name = "LANE=WEIGHT")]
    weights: Vec<String>,
    /// The RRF constant k (1..=1000).
    #[arg(long)]
    rrf_k: Option<f32>,
    /// Store no term positions (`Config::positions` off): a smaller blob; a quoted phrase is
    /// then searched as its words, and the results say so.
    #[arg(long)]
    no_positions: bool,
}

impl ConfigArgs {
    /// Whether only query-time (fusion) settings are given.
    fn only_fusion(&self) -> bool {
        self.k1.is_none()
            && self.b.is_none()
            && self.language.is_none()
            && self.chunk_tokens.is_none()
            && self.overlap_tokens.is_none()
            && !self.no_positions
    }

    fn config(&self) -> Result<Config, Error> {
        let mut c = Config::default();
        if let Some(k1) = self.k1 {
            c.bm25.k1 = k1;
        }
        if let Some(b) = self.b {
            c.bm25.b = b;
        }
        if let Some(l) = &self.language {
            c.language = Language::parse(l)?;
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
struct BuildArgs {
    /// The wiki folder (or, with --beir, a BEIR folder holding corpus.jsonl).
    dir: PathBuf,
    /// Where to write the index blob. Written atomically; only a missing or empty file or an
    /// index blob is replaced (a read-only file, a FIFO, a device or a file of other content is
    /// refused); a symbolic link is followed (the file it names is replaced, the link stays).
    #[arg(short, long)]
    output: PathBuf,
    /// Read a BEIR-layout corpus.jsonl: each document becomes a page (`_id` is its key).
    #[arg(long)]
    beir: bool,
    /// Fail on the first page that cannot be used instead of skipping and reporting it.
    #[arg(long)]
    strict: bool,
    /// A folder of raw source documents, indexed as the wiki's raw/ folder.
    #[arg(long)]
    raw: Option<PathBuf>,
    /// Read files whose symbolic links lead outside the wiki folder (by default they are
    /// skipped and reported as `outside_root`).
    #[arg(long)]
    follow_outside_root: bool,
    /// Do not store the page files' modification times (the date filters' fallback for pages
    /// without a frontmatter date): the blob then depends only on the files' paths and texts.
    #[arg(long)]
    no_file_times: bool,
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    embed: EmbedBuildArgs,
    /// Print a JSON report.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct SyncArgs {
    /// The wiki folder.
    dir: PathBuf,
    /// The index blob to bring up to date (and to write; atomically, as `build -o`). Its
    /// configuration and vector encoding are kept. A missing file is built; anything else
    /// there must be a blob this version reads (it is never replaced otherwise).
    #[arg(short, long)]
    output: PathBuf,
    /// A folder of raw source documents, indexed as the wiki's raw/ folder.
    #[arg(long)]
    raw: Option<PathBuf>,
    /// Read files whose symbolic links lead outside the wiki folder.
    #[arg(long)]
    follow_outside_root: bool,
    /// Do not store the page files' modification times (as `build --no-file-times`).
    #[arg(long)]
    no_file_times: bool,
    #[command(flatten)]
    embed: EmbedBuildArgs,
    /// Print a JSON report.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct SearchArgs {
    /// The index blob.
    index: PathBuf,
    /// Append a line per search and citation check to this query log (JSON Lines; see
    /// `wikidex insights`).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// The query, or `-` to read it from standard input.
    query: String,
    /// Number of hits: at least 1; more than 100 is taken as 100, as on every surface.
    #[arg(short = 'n', long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
    limit: u16,
    /// Only pages with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Only pages of this type (repeatable: any of them).
    #[arg(long = "type")]
    types: Vec<String>,
    /// Search as this scope: `global`, or a user name (`alice` or `user/alice`).
    #[arg(long)]
    scope: Option<String>,
    /// Only pages with this usage mode (always, auto; repeatable).
    #[arg(long = "usage-mode")]
    usage_modes: Vec<String>,
    /// Lanes to run, comma-separated (lexical,semantic,token). Default: all available.
    #[arg(long)]
    lanes: Option<String>,
    /// Return chunk hits instead of one hit per page.
    #[arg(long)]
    chunks: bool,
    /// Put `usage_mode: always` pages first among the hits instead of in their own list
    /// (either way they take no slot of `--limit`).
    #[arg(long, conflicts_with = "always_separate")]
    always_first: bool,
    /// `usage_mode: always` pages in their own list (the default; kept for old scripts).
    #[arg(long, hide = true)]
    always_separate: bool,
    /// Explain each hit: per-term BM25 contributions and per-lane fusion shares.
    #[arg(long)]
    explain: bool,
    /// Match every word exactly: no typo tolerance (by default a word the index does not know
    /// also matches the words one or two edits away, below exact matches).
    #[arg(long)]
    no_typos: bool,
    /// Count the tags and types of every page that matches the query, not only of the hits.
    #[arg(long)]
    facets: bool,
    /// Only pages dated on or after this (2024-03-12 or 2024-03-12T09:30:00Z; a page's date is
    /// its frontmatter's `updated`, `last_updated` or `date`).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only pages dated on or before this (a date alone includes the whole day).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    #[command(flatten)]
    model: ModelArgs,
    /// Print a prompt block for an agent (citation headers, chunk text, source pointers) and
    /// the offered chunk ids, instead of the hit list.
    #[arg(long)]
    prompt: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct PageArgs {
    /// The index blob.
    index: PathBuf,
    /// The page key.
    key: String,
    /// Look the key up as this scope (a user's page shadows the global one).
    #[arg(long)]
    scope: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ChunkArgs {
    /// The index blob.
    index: PathBuf,
    // Not `{n}` in a help text: clap reads it as a line break.
    /// The chunk id (`PAGE::chunk_N`, as `oncall::chunk_0`).
    id: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct EvalArgs {
    /// A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/test.tsv.
    dir: PathBuf,
    /// Lanes to evaluate, comma-separated; each alone, then fused. Default: all.
    #[arg(long)]
    lanes: Option<String>,
    /// Run each query loop this many times and report the fastest (1..=100).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Evaluate this prebuilt index of the collection (`wikidex build --beir`) instead of
    /// building one: only --weight and --rrf-k then apply (fusion is a query-time setting).
    #[arg(long, value_name = "FILE")]
    index: Option<PathBuf>,
    /// Run the queries without typo tolerance (every word matched exactly).
    #[arg(long)]
    no_typos: bool,
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    embed: EmbedBuildArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The model runner allocates every operator's output afresh (up to 100 MB for a batch of
/// 256-token texts). glibc maps allocations over 128 KiB from the kernel and unmaps them when
/// freed, so each buffer was faulted in page by page on every batch, and two embedding threads
/// contended on the kernel's memory map for it (15% of the time on long texts, seen with
/// `perf`). Serving every allocation from the heap and keeping freed memory for reuse made
/// embedding long texts about 10% faster, for about 25% more peak memory.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only changes allocator tuning parameters; it is called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

/// Rust ignores SIGPIPE, so printing into a closed pipe (`wikidex search ... | head -1`) is an
/// error, and `println!` panics on it (exit 101). Restoring the default action ends the
/// process quietly instead, as `cat` or `grep` end.
#[cfg(unix)]
fn quiet_on_closed_pipe() {
    // SAFETY: resets one signal's disposition to its default before any other thread exists;
    // no handler code is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn quiet_on_closed_pipe() {}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    keep_freed_memory();
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Build(a) => a.json,
        Command::Sync(a) => a.json,
        Command::Search(a) => a.json,
        Command::Page(a) => a.json,
        Command::Chunk(a) => a.json,
        Command::Eval(a) => a.json,
        Command::Embed(a) => a.json,
        Command::Lint(a) => a.json,
        Command::Neighbors(a) => a.json,
        Command::Verify(a) => a.json,
        Command::Mcp(_) => false,
        Command::Tool(a) => a.json,
        Command::Insights(a) => a.json,
    };
    let result = match cli.command {
        Command::Build(a) => build(a),
        Command::Sync(a) => sync(a),
        Command::Search(a) => search(a),
        Command::Page(a) => page(a),
        Command::Chunk(a) => chunk(a),
        Command::Eval(a) => evaluate(a),
        Command::Embed(a) => embed(a),
        Command::Lint(a) => lint(a),
        Command::Neighbors(a) => neighbors(a),
        Command::Verify(a) => verify(a),
        Command::Mcp(a) => mcp(a),
        Command::Tool(a) => tool(a),
        Command::Insights(a) => insights(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if json {
                let v = json!({ "error": e.record() });
                println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                esay!("error[{}]: {}", e.code(), clean(&e.to_string()));
            }
            ExitCode::FAILURE
        }
    }
}

/// Longest query `search -` reads from standard input (the index cuts queries much shorter;
/// this only bounds what is read).
const MAX_STDIN_QUERY_BYTES: usize = 1 << 20;

/// Standard input as text, refused past `limit` bytes.
fn read_stdin(what: &str, limit: usize) -> Result<String, Error> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Io {
            path: "<stdin>".into(),
            source: e,
        })?;
    if bytes.len() > limit {
        return Err(Error::TooLarge {
            what: format!("{what} on standard input (bytes)"),
            limit: limit as u64,
            found: bytes.len() as u64,
        });
    }
    String::from_utf8(bytes).map_err(|e| Error::InvalidArgument {
        detail: format!("{what} on standard input is not UTF-8: {e}"),
    })
}

/// The `--scope` value, checked against the index: `global`, or a user scope that has pages
/// (a misspelled user name would otherwise quietly search as that empty scope, which sees
/// only the global pages).
fn scope_arg(index: &Index, scope: Option<&str>) -> Result<Option<Scope>, Error> {
    let Some(s) = scope else { return Ok(None) };
    let scope = Scope::parse(s)?;
    if scope != Scope::Global && !index.pages().iter().any(|p| p.scope == scope) {
        let mut known: Vec<String> = index.pages().iter().map(|p| p.scope.to_string()).collect();
        known.dedup();
        return Err(Error::InvalidArgument {
            detail: format!(
                "unknown scope `{scope}`: no page of the index is in it (scopes: {})",
                known.join(", ")
            ),
        });
    }
    Ok(Some(scope))
}

fn print_json(v: &impl serde::Serialize) {
    match serde_json::to_string_pretty(v) {
        Ok(s) => println!("{s}"),
        Err(e) => esay!("error: cannot print JSON: {e}"),
    }
}

fn progress_bar(len: u64, what: &str, quiet: bool) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if quiet || !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({eta})")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(what.to_string());
    bar
}

/// Runs `work` (a build) with progress bars for analysis and embedding (none when `quiet`).
fn with_progress<T>(
    quiet: bool,
    work: impl FnOnce(&mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>) -> T,
) -> T {
    let mut stage = BuildStage::Pages;
    let mut bar = progress_bar(0, "indexing", quiet);
    let out = work(&mut |s, done, total| {
        if s != stage {
            bar.finish_and_clear();
            bar = progress_bar(0, "embedding", quiet);
            stage = s;
        }
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        ControlFlow::Continue(())
    });
    bar.finish_and_clear();
    out
}

/// Builds a session over `source` with the model `embed` names (if any), with progress bars.
fn build_session(
    source: Source,
    options: &BuildOptions,
    embed: &EmbedBuildArgs,
    quiet: bool,
) -> Result<Session, Error> {
    let model = embed.embedder(quiet)?;
    with_progress(quiet, |progress| {
        Session::build(source, options, model, progress)
    })
}

impl EmbedBuildArgs {
    /// The build options these flags and `config` give.
    fn options(&self, config: Config) -> Result<BuildOptions, Error> {
        Ok(BuildOptions {
            config,
            vectors: VectorEncoding::parse(&self.vectors)?,
            ..BuildOptions::default()
        })
    }
}

/// The vector section's identity, for reports.
fn vectors_json(index: &Index) -> Value {
    index.vectors().map_or(Value::Null, |v| {
        json!({
            "model": v.model_id,
            "fingerprint": v.fingerprint,
            "dim": v.dim,
            "encoding": v.encoding().name(),
            "floor": v.floor,
        })
    })
}

fn build(a: BuildArgs) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let options = BuildOptions {
        strict: a.strict,
        raw: a.raw.clone(),
        follow_outside_root: a.follow_outside_root,
        file_times: !a.no_file_times,
        ..a.embed.options(a.config.config()?)?
    };
    let source = if a.beir {
        Source::Beir(a.dir.join("corpus.jsonl"))
    } else {
        Source::Folder(a.dir.clone())
    };
    let session = build_session(source, &options, &a.embed, a.json)?;
    let (index, report) = (session.index(), session.build_report().unwrap_or_default());
    index.save(&a.output)?;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&a.output).map(|m| m.len()).unwrap_or(0);
    if a.json {
        print_json(&json!({
            "output": a.output.display().to_string(),
            "pages": report.pages,
            "chunks": report.chunks,
            "embeddings": vectors_json(&index),
            "raw_documents": report.raw_documents,
            "raw_chunks": report.raw_chunks,
            "bytes": bytes,
            "skipped": report.skipped,
            "warnings": report.warnings,
            "seconds": seconds,
        }));
    } else {
        let raw = if report.raw_documents > 0 {
            format!(
                ", {} raw documents ({} chunks)",
                report.raw_documents, report.raw_chunks
            )
        } else {
            String::new()
        };
        say!(
            "built {}: {} pages, {} chunks{raw}, {} bytes in {:.2}s",
            a.output.display(),
            report.pages,
            report.chunks,
            bytes,
            seconds
        );
        match index.vectors() {
            Some(v) => say!(
                "  embeddings: {} ({} x {}, {}), semantic floor {:.3}",
                v.model_id,
                v.len(),
                v.dim,
                v.encoding().name(),
                v.floor
            ),
            None => say!("  embeddings: none (semantic lane unavailable)"),
        }
        print_problems(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// Brings the blob at `blob` up to date with `dir` ([`wikidex::sync_file`]), with progress
/// bars; a blob with embeddings and no model found is an error naming the flags.
fn sync_blob(
    dir: &Path,
    blob: &Path,
    options: &BuildOptions,
    embed: &EmbedBuildArgs,
    quiet: bool,
) -> Result<Synced, Error> {
    let model = embed.embedder(quiet)?;
    let synced = with_progress(quiet, |progress| {
        wikidex::sync_file(dir, blob, options, model, embed.no_embed, progress)
    });
    if let Ok(s) = &synced {
        if let (Some(why), false) = (&s.full, quiet) {
            esay!("note: {why}: indexed every file");
        }
    }
    synced.map_err(|e| match e {
        Error::NoEmbedder { detail } => Error::NoEmbedder {
            detail: format!("{detail} (pass --model DIR, or --no-embed to drop them)"),
        },
        e => e,
    })
}

fn sync(a: SyncArgs) -> Result<ExitCode, Error> {
    let started = Instant::now();
    let options = BuildOptions {
        raw: a.raw.clone(),
        follow_outside_root: a.follow_outside_root,
        file_times: !a.no_file_times,
        ..a.embed.options(Config::default())?
    };
    let synced = sync_blob(&a.dir, &a.output, &options, &a.embed, a.json)?;
    let Synced {
        index,
        report,
        full,
        written: write,
    } = synced;
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&a.output).map(|m| m.len()).unwrap_or(0);
    let b = &report.build;
    if a.json {
        print_json(&json!({
            "output": a.output.display().to_string(),
            "full": full,
            "written": write,
            "added": report.added,
            "changed": report.changed,
            "removed": report.removed,
            "unchanged": report.unchanged,
            "embedded": report.embedded,
            "pages": b.pages,
            "chunks": b.chunks,
            "embeddings": vectors_json(&index),
            "raw_documents": b.raw_documents,
            "raw_chunks": b.raw_chunks,
            "bytes": bytes,
            "skipped": b.skipped,
            "warnings": b.warnings,
            "seconds": seconds,
        }));
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if write { "synced" } else { "up to date:" };
    say!(
        "{verb} {}: {} added, {} changed, {} removed, {} unchanged; {} pages, {} chunks, {} embedded, {} bytes in {:.2}s",
        a.output.display(),
        report.added.len(),
        report.changed.len(),
        report.removed.len(),
        report.unchanged,
        b.pages,
        b.chunks,
        report.embedded,
        bytes,
        seconds
    );
    if full.is_none() {
        for (mark, paths) in [
            ("+", &report.added),
            ("~", &report.changed),
            ("-", &report.removed),
        ] {
            for p in paths {
                say!("  {mark} {}", clean(p));
            }
        }
    }
    print_problems(b);
    Ok(ExitCode::SUCCESS)
}

/// The files a build skipped and the warnings of the pages it parsed, one line each.
fn print_problems(report: &wikidex::BuildReport) {
    for s in &report.skipped {
        let line = s.line.map(|l| format!(":{l}")).unwrap_or_default();
        say!("  skipped {}{line}: [{}] {}", s.path, s.code, s.reason);
    }
    for w in &report.warnings {
        say!("  warning {}: {}", w.path, w.message);
    }
}

fn search(a: SearchArgs) -> Result<ExitCode, Error> {
    let session = Session::open(&a.index)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let lanes = a.lanes.as_deref().map(Lane::parse_list).transpose()?;
    // A lane that is not asked for costs nothing: the model loads only for the semantic lane.
    if wants(lanes.as_deref(), Lane::Semantic) {
        if let Some(note) = a.model.attach_for_search(&session)? {
            if !a.json {
                esay!("note: {note}");
            }
        }
    }
    let usage_modes = a
        .usage_modes
        .iter()
        .map(|m| UsageMode::parse(m))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = SearchOptions {
        limit: Some(usize::from(a.limit)),
        lanes,
        tags: a.tags,
        types: a.types,
        scope: scope_arg(&session.index(), a.scope.as_deref())?,
        usage_modes,
        chunks: a.chunks,
        always: if a.always_first {
            AlwaysMode::First
        } else {
            AlwaysMode::Separate
        },
        explain: a.explain,
        snippets: true,
        query_vector: None,
        typos: !a.no_typos,
        facets: a.facets,
        since: a.since,
        until: a.until,
    };
    let query = if a.query == "-" {
        read_stdin("the query", MAX_STDIN_QUERY_BYTES)?
    } else {
        a.query.clone()
    };
    let results = session.search(query.trim_end_matches(['\n', '\r']), &opts)?;
    close_log(log)?;
    if a.prompt {
        let block = session.index().prompt_block(&results);
        if a.json {
            print_json(&block);
        } else {
            print!("{}", clean(&block.text));
            say!("offered: {}", block.offered.join(","));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if a.json {
        print_json(&results);
    } else {
        print_results(&results, a.explain);
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a `--lanes` list (`None`: every lane) includes `lane`.
fn wants(lanes: Option<&[Lane]>, lane: Lane) -> bool {
    lanes.is_none_or(|l| l.contains(&lane))
}

fn print_results(r: &SearchResults, explain: bool) {
    let lanes: Vec<String> = r
        .lanes
        .iter()
        .map(|l| format!("{} {}", l.lane.name(), l.status.name()))
        .collect();
    let truncated = if r.truncated { " (query cut)" } else { "" };
    say!(
        "{} hit{} for \"{}\"{truncated}  [{}]",
        r.hits.len(),
        if r.hits.len() == 1 { "" } else { "s" },
        r.query,
        lanes.join(", ")
    );
    let reasons: Vec<&str> = r.lanes.iter().filter_map(|l| l.status.reason()).collect();
    if !reasons.is_empty() && reasons.iter().all(|&why| why == wikidex::NO_QUERY_TERMS) {
        say!("  note: {}", wikidex::NO_QUERY_TERMS);
    } else {
        for l in &r.lanes {
            if let Some(reason) = l.status.reason().filter(|_| l.status.name() != "ok") {
                if reason != wikidex::lane::NOT_REQUESTED {
                    say!(
                        "  note: {} lane {}: {reason}",
                        l.lane.name(),
                        l.status.name()
                    );
                }
            }
        }
    }
    if let Some(p) = &r.phrases {
        match &p.reason {
            Some(reason) => say!("  note: phrases: {reason}"),
            None => say!(
                "  phrases: {} hit{} hold{} \"{}\"",
                p.matched,
                if p.matched == 1 { "" } else { "s" },
                if p.matched == 1 { "s" } else { "" },
                p.phrases.join("\" and \"")
            ),
        }
    }
    let styled = std::io::stdout().is_terminal();
    for (i, hit) in r.hits.iter().enumerate() {
        say!();
        print_hit(i + 1, hit, explain, styled);
    }
    if !r.always.is_empty() {
        say!("\nalways:");
        for (i, hit) in r.always.iter().enumerate() {
            print_hit(i + 1, hit, explain, styled);
        }
    }
    if let Some(f) = &r.facets {
        let counts = |v: &[wikidex::FacetCount]| {
            v.iter()
                .map(|c| format!("{} ({})", c.value, c.count))
                .collect::<Vec<_>>()
                .join(", ")
        };
        say!("\nfacets over {} matching pages:", f.pages);
        say!("  tags: {}", counts(&f.tags));
        say!("  types: {}", counts(&f.types));
    }
}

fn print_hit(n: usize, hit: &Hit, explain: bool, styled: bool) {
    let mut flags = String::new();
    if hit.always {
        flags.push_str(" [always]");
    }
    if let Some(s) = &hit.stale_since {
        flags.push_str(&format!(" [stale since {s}]"));
    }
    say!("{n:>2}. {} — {}{flags}", hit.page_id, hit.title);
    say!(
        "    {}:{}-{} · {} · score {:.4}",
        hit.path,
        hit.line_start,
        hit.line_end,
        hit.chunk,
        hit.score
    );
    if !hit.headings.is_empty() {
        say!("    under {}", hit.headings.join(" > "));
    }
    if let Some(s) = &hit.summary {
        say!("    {s}");
    }
    if let Some(snip) = &hit.snippet {
        println!("    \"{}\"", mark(&snip.text, &snip.highlights, styled));
    }
    let lanes: Vec<String> = hit
        .lanes
        .iter()
        .map(|l| match (l.rank, l.score) {
            (Some(rank), Some(score)) => format!("{} #{rank} ({score:.3})", l.lane.name()),
            _ if l.status == wikidex::StatusKind::Ok => format!("{} —", l.lane.name()),
            _ => format!("{} {}", l.lane.name(), l.status.name()),
        })
        .collect();
    say!("    {}", lanes.join("  "));
    if explain {
        if let Some(ex) = &hit.explain {
            let shares: Vec<String> = hit
                .lanes
                .iter()
                .filter_map(|l| {
                    Some(format!(
                        "{} {:.4} (rank {})",
                        l.lane.name(),
                        l.contribution?,
                        l.rank?
                    ))
                })
                .collect();
            say!("    fused = {} (k = {})", shares.join(" + "), ex.k);
            for t in &ex.lexical {
                // A typo match names the term it was taken for: `incidnet~incid (1 edit)`.
                let term = match &t.matched {
                    Some(m) => format!(
                        "{}~{m} ({} edit{})",
                        t.term,
                        t.edits,
                        if t.edits == 1 { "" } else { "s" }
                    ),
                    None => t.term.clone(),
                };
                say!(
                    "    bm25 {:<14} tf {:>2}  df {:>5}  idf {:>6.3}  → {:.3}",
                    term,
                    t.tf,
                    t.df,
                    t.idf,
                    t.score
                );
            }
        }
    }
}

/// The snippet with highlighted terms: bold on a terminal, «guillemets» otherwise.
fn mark(text: &str, highlights: &[wikidex::Highlight], styled: bool) -> String {
    let (open, close) = if styled {
        ("\x1b[1m", "\x1b[0m")
    } else {
        ("«", "»")
    };
    let mut out = String::with_capacity(text.len() + highlights.len() * 8);
    let mut hl = highlights.iter().peekable();
    // Highlights are byte offsets (the Rust API's offset unit).
    for (i, c) in text.char_indices() {
        let i = i as u32;
        if hl.peek().is_some_and(|h| h.start == i) {
            out.push_str(open);
        }
        push_clean(&mut out, c);
        if let Some(h) = hl.peek() {
            if h.end == i + c.len_utf8() as u32 {
                out.push_str(close);
                hl.next();
            }
        }
    }
    out
}

fn page(a: PageArgs) -> Result<ExitCode, Error> {
    let index = Index::open(&a.index)?;
    let scope = scope_arg(&index, a.scope.as_deref())?;
    let page = index.page_record(&a.key, scope.as_ref())?;
    if a.json {
        print_json(&page);
    } else {
        say!("{} — {}", page.id, page.title);
        if let Some(from) = &page.resolved_from {
            say!("(asked as `{from}`: an old key or an alias of this page)");
        }
        say!(
            "path: {}  scope: {}  usage: {}",
            page.path,
            page.scope,
            page.usage_mode.as_str()
        );
        if let Some(s) = &page.summary {
            say!("summary: {s}");
        }
        let list = |name: &str, v: &[String]| {
            if !v.is_empty() {
                say!("{name}: {}", v.join(", "));
            }
        };
        list("tags", &page.tags);
        list("refs", &page.refs);
        list("links", &page.links);
        list("aliases", &page.aliases);
        say!(
            "chunks: {}",
            page.chunks
                .iter()
                .map(|c| c.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        say!("\n{}", page.body.trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

fn chunk(a: ChunkArgs) -> Result<ExitCode, Error> {
    let index = Index::open(&a.index)?;
    let chunk = index.chunk(&a.id)?;
    if a.json {
        print_json(&chunk);
    } else {
        say!(
            "{} ({} bytes {}..{}, hash {})",
            chunk.id,
            chunk.text.len(),
            chunk.start,
            chunk.end,
            chunk.hash
        );
        let under = if chunk.headings.is_empty() {
            String::new()
        } else {
            format!(", under {}", chunk.headings.join(" > "))
        };
        say!(
            "page: {} ({}:{}-{}{under})\n",
            chunk.key,
            chunk.path,
            chunk.line_start,
            chunk.line_end
        );
        if let Some(header) = &chunk.table_header {
            say!("(continues the table)\n{header}");
        }
        say!("{}", chunk.text);
    }
    Ok(ExitCode::SUCCESS)
}

fn evaluate(a: EvalArgs) -> Result<ExitCode, Error> {
    let config = a.config.config()?;
    let lanes = match &a.lanes {
        Some(l) => Lane::parse_list(l)?,
        None => Lane::ALL.to_vec(),
    };
    // The corpus is embedded (and the model loaded) only when the semantic lane is measured.
    let semantic = lanes.contains(&Lane::Semantic);
    let collection = eval::load_collection(&a.dir)?;
    let build_started = Instant::now();
    let (session, report) = match &a.index {
        Some(path) => {
            if !a.config.only_fusion() {
                return Err(Error::InvalidArgument {
                    detail: "with --index only --weight and --rrf-k apply (the index was \
                             built with its own analysis and chunking)"
                        .into(),
                });
            }
            let session = Session::open(path)?;
            session.set_fusion(config.fusion)?;
            if semantic && session.index().vectors().is_some() && !a.embed.no_embed {
                if let Some(note) = a.embed.model.attach_for_search(&session)? {
                    return Err(Error::InvalidArgument { detail: note });
                }
            }
            let report = wikidex::BuildReport {
                pages: session.index().pages().len(),
                chunks: session.index().chunk_count(),
                ..Default::default()
            };
            (session, report)
        }
        None => {
            let no_embed = EmbedBuildArgs {
                model: ModelArgs::default(),
                no_embed: true,
                vectors: "f32".into(),
            };
            let embed = if semantic { &a.embed } else { &no_embed };
            let source = Source::Beir(a.dir.join("corpus.jsonl"));
            let session = build_session(source, &embed.options(config.clone())?, embed, a.json)?;
            let report = session.build_report().unwrap_or_default();
            (session, report)
        }
    };
    let build_seconds = build_started.elapsed().as_secs_f64();
    let runs: Vec<(String, Vec<Lane>)> = lanes
        .iter()
        .map(|&l| (l.name().to_string(), vec![l]))
        .collect();
    let mut skipped = serde_json::Map::new();
    let mut results = serde_json::Map::new();
    let mut available = Vec::new();
    for (name, run_lanes) in &runs {
        let (metrics, seconds, status) =
            run_queries(&session, &collection, run_lanes, !a.no_typos, a.repeat)?;
        match status {
            Some(reason) => {
                skipped.insert(name.clone(), json!(reason));
            }
            None => {
                available.push(run_lanes[0]);
                results.insert(name.clone(), run_json(metrics, seconds));
            }
        }
    }
    if available.len() > 1 {
        let (metrics, seconds, _) =
            run_queries(&session, &collection, &available, !a.no_typos, a.repeat)?;
        results.insert("fused".into(), run_json(metrics, seconds));
    }
    let out = json!({
        "collection": collection.name,
        "queries": collection.queries.len(),
        "documents": report.pages,
        "chunks": report.chunks,
        "build_seconds": build_seconds,
        "config": session.config(),
        "typos": !a.no_typos,
        "embeddings": vectors_json(&session.index()),
        "runs": results,
        "skipped": skipped,
    });
    if a.json {
        print_json(&out);
    } else {
        say!(
            "{}: {} queries, {} documents ({} chunks), built in {:.2}s",
            collection.name,
            collection.queries.len(),
            report.pages,
            report.chunks,
            build_seconds
        );
        say!(
            "{:<10} {:>8} {:>8} {:>10} {:>9} {:>9}",
            "run",
            "nDCG@10",
            "MAP",
            "recall@100",
            "seconds",
            "q/s"
        );
        for (name, v) in &results {
            let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
            let qps = collection.queries.len() as f64 / f("query_seconds").max(1e-12);
            say!(
                "{name:<10} {:>8.4} {:>8.4} {:>10.4} {:>9.4} {:>9.0}",
                f("ndcg@10"),
                f("map"),
                f("recall@100"),
                f("query_seconds"),
                qps
            );
        }
        for (name, reason) in &skipped {
            say!(
                "{name:<10} skipped: {}",
                reason.as_str().unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_json(m: eval::Metrics, seconds: f64) -> Value {
    json!({"ndcg@10": m.ndcg_10, "map": m.map, "recall@100": m.recall_100, "query_seconds": seconds})
}

/// Runs every query with `lanes` (top 100 pages, ranking only: no hits are hydrated; typo
/// tolerance on or off) `repeat` times, keeps the fastest loop, and scores the run. Returns the reason instead of metrics
/// when a single lane is not available in this index.
fn run_queries(
    session: &Session,
    collection: &eval::Collection,
    lanes: &[Lane],
    typos: bool,
    repeat: u32,
) -> Result<(eval::Metrics, f64, Option<String>), Error> {
    let opts = SearchOptions {
        limit: Some(wikidex::MAX_LIMIT),
        lanes: Some(lanes.to_vec()),
        snippets: false,
        typos,
        ..SearchOptions::default()
    };
    if let [lane] = lanes {
        let status = session.lane_status(*lane);
        if let Some(reason) = status.reason() {
            return Ok((eval::Metrics::default(), 0.0, Some(reason.to_string())));
        }
    }
    let mut best = f64::INFINITY;
    let mut ranked: Vec<Vec<wikidex::Ranked>> = Vec::new();
    let index = session.index();
    for _ in 0..repeat {
        ranked.clear();
        let started = Instant::now();
        for (_, text) in &collection.queries {
            ranked.push(session.rank(text, &opts)?.1);
        }
        best = best.min(started.elapsed().as_secs_f64());
    }
    let pages = index.pages();
    let run: HashMap<String, Vec<String>> = collection
        .queries
        .iter()
        .zip(ranked)
        .map(|((qid, _), r)| {
            (
                qid.clone(),
                r.iter().map(|h| pages[h.page].key.clone()).collect(),
            )
        })
        .collect();
    Ok((eval::evaluate(collection, &run), best, None))
}

fn embed(a: EmbedArgs) -> Result<ExitCode, Error> {
    let model = a.model.load()?;
    if let Some(dir) = &a.corpus {
        let path = dir.join("corpus.jsonl");
        let text = wikidex::file::read_text_capped(&path, u64::MAX, "corpus bytes")?;
        let mut docs = Vec::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let (_, title, body) = eval::beir_doc(line).map_err(|reason| Error::InvalidInput {
                path: path.display().to_string(),
                line: Some(i as u32 + 1),
                reason,
            })?;
            docs.push(format!("{title} {body}"));
        }
        let texts: Vec<&str> = docs.iter().map(String::as_str).collect();
        let started = Instant::now();
        let vectors = model.embed(&texts)?;
        let seconds = started.elapsed().as_secs_f64();
        let tokens: usize = model.tokenize(&texts)?.iter().map(Vec::len).sum();
        let out = json!({
            "model": model.model_id(),
            "sequences": vectors.len(),
            "tokens": tokens,
            "seconds": seconds,
        });
        if a.json {
            print_json(&out);
        } else {
            say!(
                "{} sequences ({tokens} tokens) in {seconds:.2}s: {:.1} sequences/s",
                vectors.len(),
                vectors.len() as f64 / seconds.max(1e-9)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let texts: Vec<&str> = a.texts.iter().map(String::as_str).collect();
    let vectors = model.embed(&texts)?;
    if a.json {
        print_json(&json!({
            "model": model.model_id(),
            "fingerprint": model.fingerprint(),
            "dim": model.dim(),
            "vectors": vectors,
        }));
    } else {
        for v in &vectors {
            let cells: Vec<String> = v.iter().map(|x| format!("{x:.6}")).collect();
            say!("[{}]", cells.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn lint(a: LintArgs) -> Result<ExitCode, Error> {
    let report = if a.path.is_dir() {
        Index::lint_dir(&a.path, a.raw.as_deref(), a.follow_outside_root)?
    } else {
        Index::open(&a.path)?.lint()
    };
    if a.json {
        print_json(&report);
    } else {
        for i in &report.issues {
            let sev = match i.severity {
                wikidex::Severity::Error => "error",
                wikidex::Severity::Warning => "warning",
            };
            say!("{sev}[{}] {}: {}", i.code, i.page, i.message);
        }
        say!(
            "{} error{}, {} warning{}",
            report.errors,
            if report.errors == 1 { "" } else { "s" },
            report.warnings,
            if report.warnings == 1 { "" } else { "s" }
        );
    }
    Ok(if report.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn neighbors(a: NeighborsArgs) -> Result<ExitCode, Error> {
    let index = Index::open(&a.index)?;
    let opts = wikidex::TraverseOptions {
        depth: a.depth,
        min_confidence: a.min_confidence,
        max_nodes: usize::from(a.max_nodes),
        scope: scope_arg(&index, a.scope.as_deref())?,
    };
    let mut seeds: Vec<&str> = vec![a.key.as_str()];
    seeds.extend(a.seeds.iter().map(String::as_str));
    let g = index.neighbors(&seeds, &opts)?;
    // As `page` and `chunk` do: a key that names no page is an error, not an empty graph.
    if let Some(key) = g.unknown_seeds.first() {
        return Err(Error::UnknownPage { key: key.clone() });
    }
    if a.json {
        print_json(&g);
        return Ok(ExitCode::SUCCESS);
    }
    for s in &g.unknown_seeds {
        say!("unknown seed: {s}");
    }
    for n in &g.nodes {
        let stale = n
            .stale_since
            .as_deref()
            .map(|s| format!(" [stale since {s}]"))
            .unwrap_or_default();
        say!(
            "{}{} — {} (depth {}, confidence {:.2}){stale}",
            "  ".repeat(n.depth as usize),
            n.id,
            n.title,
            n.depth,
            n.confidence
        );
        for p in &n.sources {
            say!(
                "{}  source {} ({})",
                "  ".repeat(n.depth as usize),
                p.chunk,
                p.weight
            );
        }
    }
    if !g.chain.is_empty() {
        say!("\nevidence:");
        for line in &g.chain {
            say!("  {line}");
        }
    }
    let typed: Vec<&wikidex::GraphEdge> = g.edges.iter().filter(|e| e.evidence.is_some()).collect();
    if !typed.is_empty() {
        say!("\nedges:");
        for e in typed {
            let chunk = e
                .chunk
                .as_deref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            say!(
                "  {} --[{}]--> {} ({:.2}){chunk}: {}",
                e.from,
                e.kind,
                e.to,
                e.confidence,
                e.evidence.as_deref().unwrap_or_default()
            );
        }
    }
    if g.truncated {
        say!("\n(truncated to {} nodes)", g.nodes.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(a: VerifyArgs) -> Result<ExitCode, Error> {
    let session = Session::open(&a.index)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let answer = if a.answer == "-" {
        read_stdin("the answer", wikidex::cite::MAX_ANSWER_BYTES)?
    } else {
        wikidex::file::read_text_capped(
            Path::new(&a.answer),
            wikidex::cite::MAX_ANSWER_BYTES as u64,
            "answer bytes",
        )?
    };
    let cited: Vec<wikidex::cite::Cited> = a
        .cite
        .iter()
        .filter(|c| !c.trim().is_empty())
        .map(|c| wikidex::cite::Cited::parse(c))
        .collect();
    let offered: Vec<String> = a
        .offered
        .iter()
        .map(|o| o.trim().to_string())
        .filter(|o| !o.is_empty())
        .collect();
    let wikidex::AnswerCheck {
        verification: v,
        support,
    } = session.check_answer(&answer, &cited, &offered)?;
    close_log(log)?;
    if a.json {
        print_json(&json!({"citations": v.citations, "passed": v.passed, "support": support}));
    } else {
        for c in &v.citations {
            let span = c
                .quote
                .map(|q| format!(": \"{}\"", &answer[q.answer_start..q.answer_end]))
                .unwrap_or_default();
            say!("{:<10} {}{span}", c.status.name(), c.id);
        }
        for s in &support.uncited {
            say!(
                "uncited sentence (matches {}): {}",
                s.best_chunk.as_deref().unwrap_or("?"),
                s.text
            );
        }
        for s in &support.unsupported {
            say!("unsupported sentence: {}", s.text);
        }
        say!("{}", if v.passed { "passed" } else { "FAILED" });
    }
    Ok(if v.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Longest tool arguments `tool NAME -` reads from standard input.
const MAX_STDIN_ARGS_BYTES: usize = 4 << 20;

fn mcp(a: McpArgs) -> Result<ExitCode, Error> {
    /// Longest `--watch` period: a day.
    const MAX_WATCH_SECS: f64 = 86_400.0;
    let limits = a.limits.limits();
    let folder = a.source.is_dir();
    // `Duration::from_secs_f64` panics past about 1.8e19 seconds; a day between two looks is
    // already more than any use of watching.
    if !(0.0..=MAX_WATCH_SECS).contains(&a.watch) {
        return Err(Error::InvalidArgument {
            detail: format!(
                "--watch must be a number of seconds from 0 to {MAX_WATCH_SECS}; got {}",
                a.watch
            ),
        });
    }
    if a.index.is_some() && !folder {
        return Err(Error::InvalidArgument {
            detail: "--index keeps a served folder's index; the source is not a folder".into(),
        });
    }
    let options = a.embed.options(Config::default())?;
    let (session, skipped) = if folder {
        match &a.index {
            Some(blob) => {
                let s = sync_blob(&a.source, blob, &options, &a.embed, true)?;
                let session = Session::new(s.index);
                session.set_model(a.embed.embedder(true)?)?;
                (session, s.report.build.skipped)
            }
            None => {
                let source = Source::Folder(a.source.clone());
                let session = build_session(source, &options, &a.embed, true)?;
                let skipped = session.build_report().unwrap_or_default().skipped;
                (session, skipped)
            }
        }
    } else {
        let session = Session::open(&a.source)?;
        attach_model(&session, &a.embed)?;
        (session, Vec::new())
    };
    session.set_tool_limits(limits)?;
    for s in &skipped {
        esay!(
            "skipped {}: [{}] {}",
            clean(&s.path),
            s.code,
            clean(&s.reason)
        );
    }
    let log = attach_log(&session, a.log.as_deref(), "mcp")?;
    let watch = (folder && a.watch > 0.0).then(|| mcp::Watch {
        dir: a.source.clone(),
        blob: a.index.clone(),
        every: std::time::Duration::from_secs_f64(a.watch),
    });
    mcp::serve(session, watch)?;
    close_log(log)?;
    Ok(ExitCode::SUCCESS)
}

fn tool(a: ToolArgs) -> Result<ExitCode, Error> {
    let limits = a.limits.limits();
    let Some(name) = a.name.as_deref() else {
        print_json(&Tools::new(limits)?.definitions());
        return Ok(ExitCode::SUCCESS);
    };
    let session = Session::open(&a.index)?;
    session.set_tool_limits(limits)?;
    attach_model(&session, &a.embed)?;
    let log = attach_log(&session, a.log.as_deref(), "cli")?;
    let args = if a.args == "-" {
        read_stdin("the tool's arguments", MAX_STDIN_ARGS_BYTES)?
    } else {
        a.args.clone()
    };
    let result = session.call_tool(name, &args)?;
    close_log(log)?;
    if a.json {
        print_json(&result);
    } else {
        print!("{}", clean(&result.text));
        if !result.text.ends_with('\n') {
            say!();
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Logs `session`'s searches and citation checks to `path` (JSON Lines), as `origin`.
fn attach_log(
    session: &Session,
    path: Option<&Path>,
    origin: &str,
) -> Result<Option<Arc<JsonlLog>>, Error> {
    let Some(path) = path else {
        return Ok(None);
    };
    let log = Arc::new(JsonlLog::open(path)?);
    session.set_query_log(Some(Arc::clone(&log) as Arc<dyn QueryLog>), origin);
    Ok(Some(log))
}

/// Writes what the log has queued; reports a failed write.
fn close_log(log: Option<Arc<JsonlLog>>) -> Result<(), Error> {
    match log {
        Some(log) => log.close(),
        None => Ok(()),
    }
}

fn insights(a: InsightsArgs) -> Result<ExitCode, Error> {
    let text = wikidex::file::read_text_capped(&a.log, u64::MAX, "query log bytes")?;
    let (entries, bad) = querylog::read_log(&text);
    let pages: Option<Vec<String>> = match &a.index {
        Some(p) => Some(Index::open(p)?.pages().iter().map(|p| p.id()).collect()),
        None => None,
    };
    let r = querylog::insights(&entries, bad, pages.as_deref(), a.top.max(1));
    if a.json {
        print_json(&r);
        return Ok(ExitCode::SUCCESS);
    }
    say!(
        "{} searches, {} citation checks{}",
        r.searches,
        r.verifies,
        if r.bad_lines > 0 {
            format!(", {} lines that are not log entries", r.bad_lines)
        } else {
            String::new()
        }
    );
    let list = |title: &str, counts: &[querylog::Count]| {
        say!();
        say!("{title}:");
        if counts.is_empty() {
            say!("  (none)");
        }
        for c in counts {
            say!("  {:>5}  {}", c.count, clean(&c.key));
        }
    };
    list("queries with no results (content gaps)", &r.zero_result);
    list("most frequent queries", &r.frequent);
    list("most cited pages", &r.cited_pages);
    list("most cited chunks", &r.cited_chunks);
    if let Some(never) = &r.never_cited {
        say!();
        say!("pages never cited ({}):", never.len());
        for p in never.iter().take(a.top.max(1)) {
            say!("  {}", clean(p));
        }
        if never.len() > a.top.max(1) {
            say!(
                "  ... and {} more (--json lists all)",
                never.len() - a.top.max(1)
            );
        }
    }
    say!();
    say!(
        "citations checked: {}, drifted {:.1}%, unknown {:.1}%",
        r.citations,
        r.drifted_share * 100.0,
        r.unknown_share * 100.0
    );
    Ok(ExitCode::SUCCESS)
}

/// Sets the model `session`'s vectors were made with (unless `--no-embed`), for the
/// semantic lane of the agent tools' searches.
fn attach_model(session: &Session, embed: &EmbedBuildArgs) -> Result<(), Error> {
    if !embed.no_embed {
        if let Some(note) = embed.model.attach_for_search(session)? {
            esay!("note: {note}");
        }
    }
    Ok(())
}
