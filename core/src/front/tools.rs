//! The agent's tools: one tool surface for every runtime (the MCP server, Python, Node, the
//! browser), so no agent writes its own.
//!
//! [`Tools::definitions`] gives each tool's name, description and the JSON Schema of its
//! arguments; [`Tools::call`] runs one on an index snapshot from its arguments as JSON and
//! returns a [`ToolResult`]: text for the model and the same result as structured JSON.
//!
//! | tool | arguments | result |
//! |---|---|---|
//! | `search` | `query`, `limit?`, `tags?`, `types?`, `scope?`, `since?`, `until?` | the `always` pages, then the hits, each as a [citation header](crate::cite::format_header) followed by its summary, best chunk and sources |
//! | `read_pages` | `keys`, `scope?` | each page's full body; keys that name no page are listed as unknown |
//! | `read_chunks` | `ids` | each chunk's text (page or raw chunk); ids that name no chunk are listed as unknown, so a fabricated id is visible |
//! | `neighbors` | `keys`, `depth?`, `min_confidence?` | the subgraph: nodes, edges with their evidence, the chain from the seeds |
//! | `verify` | `answer`, `cited?`, `offered?` | each citation's verdict, the ids written in the answer included, and the sentences that cite nothing or that nothing supports |
//!
//! **Limits** ([`ToolLimits`]): hits per search, drill-down calls (`read_pages`,
//! `read_chunks`, `neighbors`) per turn, and characters of a result's text (longer text is cut
//! at a character boundary and says how much was cut; the JSON is whole). The drill-down count
//! belongs to a [`Tools`] value, one per agent session; the caller resets it each turn with
//! [`Tools::reset_turn`]. A call past the limit is refused with `too_large`; a call that fails
//! does not count.
//!
//! Bad arguments (unknown tool, malformed JSON, a missing or unknown field, a wrong type) are
//! [`Error::InvalidArgument`], which an MCP server reports as a tool error.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::cite::Cited;
use crate::data::error::{Error, Result};
use crate::data::offset::OffsetUnit;
use crate::front::querylog::{LogSink, Stopwatch};
use crate::index::{Caller, Index};
use crate::search::{AlwaysMode, Found, SearchOptions, MAX_LIMIT};
use crate::text::page::Scope;
use crate::traverse::TraverseOptions;

/// The limits of a tool session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolLimits {
    /// Most hits a `search` returns (`1..=`[`MAX_LIMIT`]; default 10). A call's own `limit`
    /// is capped at it.
    pub max_results: usize,
    /// Most drill-down calls (`read_pages`, `read_chunks`, `neighbors`) per turn (at least 1;
    /// default 20).
    pub max_drilldowns: usize,
    /// Most characters of a result's text (at least 200; default 8000).
    pub max_chars: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_results: 10,
            max_drilldowns: 20,
            max_chars: 8000,
        }
    }
}

/// A tool's definition, as an MCP server lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// The tool's name (`search`, `read_pages`, ...).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub input_schema: Value,
}

/// What a tool call returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text for the model, at most [`ToolLimits::max_chars`] characters.
    pub text: String,
    /// The whole result as structured JSON.
    pub data: Value,
}

/// A tool session: the limits and this turn's count of drill-down calls. Share one between
/// threads freely (the count is atomic); use one per agent session.
#[derive(Debug)]
pub struct Tools {
    limits: ToolLimits,
    drilldowns: AtomicUsize,
}

impl Default for Tools {
    fn default() -> Self {
        Tools {
            limits: ToolLimits::default(),
            drilldowns: AtomicUsize::new(0),
        }
    }
}

/// The names of the tools, in the order [`Tools::definitions`] lists them.
pub const TOOL_NAMES: [&str; 5] = ["search", "read_pages", "read_chunks", "neighbors", "verify"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    limit: Option<usize>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    types: Vec<String>,
    scope: Option<String>,
    since: Option<String>,
    until: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadPagesArgs {
    keys: Vec<String>,
    scope: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadChunksArgs {
    ids: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NeighborsArgs {
    keys: Vec<String>,
    depth: Option<u32>,
    min_confidence: Option<f32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyArgs {
    answer: String,
    #[serde(default)]
    cited: Vec<String>,
    #[serde(default)]
    offered: Vec<String>,
}

/// Most keys or ids one `read_pages`, `read_chunks` or `neighbors` call takes.
pub const MAX_IDS_PER_CALL: usize = 50;

impl Tools {
    /// A session with these limits.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a limit out of range.
    pub fn new(limits: ToolLimits) -> Result<Tools> {
        if !(1..=MAX_LIMIT).contains(&limits.max_results) {
            return Err(Error::invalid_argument(format!(
                "max_results must be within 1..={MAX_LIMIT}"
            )));
        }
        if limits.max_drilldowns == 0 {
            return Err(Error::invalid_argument("max_drilldowns must be at least 1"));
        }
        if limits.max_chars < 200 {
            return Err(Error::invalid_argument("max_chars must be at least 200"));
        }
        Ok(Tools {
            limits,
            drilldowns: AtomicUsize::new(0),
        })
    }

    /// The session's limits.
    pub fn limits(&self) -> ToolLimits {
        self.limits
    }

    /// Drill-down calls made this turn.
    pub fn drilldowns(&self) -> usize {
        self.drilldowns.load(Ordering::Relaxed)
    }

    /// Starts a new turn: the drill-down count goes back to 0.
    pub fn reset_turn(&self) {
        self.drilldowns.store(0, Ordering::Relaxed);
    }

    /// Every tool's definition, in the order of [`TOOL_NAMES`].
    pub fn definitions(&self) -> Vec<ToolDef> {
        let l = self.limits;
        let ids = json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_IDS_PER_CALL});
        let scope = json!({"type": "string", "description": "`global` or `user/<name>`: look from this user's scope (their pages first, then the global ones)"});
        let def = |name: &str, description: String, properties: Value, required: &[&str]| ToolDef {
            name: name.to_string(),
            description,
            input_schema: json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }),
        };
        vec![
            def(
                "search",
                format!(
                    "Search the wiki. Returns the pages marked `always`, then up to {} hits, each \
                     as a citation header `[page <key> · chunk <id> · score <s>] <title>` followed \
                     by the page's summary, the text of its best chunk and its raw sources. Cite \
                     the chunk ids you use.",
                    l.max_results
                ),
                json!({
                    "query": {"type": "string", "description": "What to look for, in words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": l.max_results, "description": "Most hits"},
                    "tags": {"description": "Only pages with one of these tags", "type": "array", "items": {"type": "string"}},
                    "types": {"description": "Only pages of one of these types", "type": "array", "items": {"type": "string"}},
                    "scope": scope,
                    "since": {"type": "string", "description": "Only pages dated on or after this (2024-03-12, or 2024-03-12T09:30:00Z): the frontmatter's updated, last_updated or date"},
                    "until": {"type": "string", "description": "Only pages dated on or before this (a date alone includes the whole day)"},
                }),
                &["query"],
            ),
            def(
                "read_pages",
                format!(
                    "Read whole pages by key or id (at most {MAX_IDS_PER_CALL}). Keys that name \
                     no page are listed as unknown. Counts as a drill-down call ({} per turn).",
                    l.max_drilldowns
                ),
                json!({"keys": ids, "scope": scope}),
                &["keys"],
            ),
            def(
                "read_chunks",
                format!(
                    "Read chunks by id (`<page>::chunk_<n>`, or a raw source's \
                     `raw/<doc>::chunk_<n>`; at most {MAX_IDS_PER_CALL}). Ids that name no chunk \
                     are listed as unknown. Counts as a drill-down call ({} per turn).",
                    l.max_drilldowns
                ),
                json!({"ids": ids}),
                &["ids"],
            ),
            def(
                "neighbors",
                format!(
                    "The pages linked from these pages, to depth 2, with each link's type, \
                     confidence and evidence sentence, and the chain from the seeds. Counts as a \
                     drill-down call ({} per turn).",
                    l.max_drilldowns
                ),
                json!({
                    "keys": ids,
                    "depth": {"type": "integer", "minimum": 0, "maximum": crate::graph::MAX_DEPTH},
                    "min_confidence": {"type": "number", "minimum": 0, "maximum": 1},
                }),
                &["keys"],
            ),
            def(
                "verify",
                "Check an answer's citations: for each cited chunk id (and each id written in \
                 the answer), whether the answer quotes it, paraphrases it, or cites a chunk that \
                 changed or does not exist; and the sentences that cite nothing or that nothing \
                 supports."
                    .to_string(),
                json!({
                    "answer": {"type": "string"},
                    "cited": {"description": "Cited chunk ids (`id@hash` carries the hash you saw)", "type": "array", "items": {"type": "string"}},
                    "offered": {"description": "Chunk ids you were shown", "type": "array", "items": {"type": "string"}},
                }),
                &["answer"],
            ),
        ]
    }

    /// Runs tool `name` on `index` with `args` (a JSON object).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown tool or bad arguments; [`Error::TooLarge`]
    /// past the turn's drill-down calls; otherwise the error of the core call (an answer too
    /// large to verify, a depth out of range).
    pub fn call(&self, index: &Index, name: &str, args: &str) -> Result<ToolResult> {
        self.call_for(index, name, args, Caller::default(), None)
    }

    /// [`Tools::call`] for `caller` (its model embeds a search's query; its unit counts the
    /// offsets of a verification), logging searches and citation checks to `log`.
    pub(crate) fn call_for(
        &self,
        index: &Index,
        name: &str,
        args: &str,
        caller: Caller<'_>,
        log: Option<&LogSink>,
    ) -> Result<ToolResult> {
        let (text, data) = match name {
            "search" => self.search(index, parse(name, args)?, caller, log)?,
            "read_pages" => {
                let a: ReadPagesArgs = parse(name, args)?;
                check_ids(&a.keys)?;
                self.drill_down(|| read_pages(index, a))?
            }
            "read_chunks" => {
                let a: ReadChunksArgs = parse(name, args)?;
                check_ids(&a.ids)?;
                self.drill_down(|| Ok(read_chunks(index, a)))?
            }
            "neighbors" => {
                let a: NeighborsArgs = parse(name, args)?;
                check_ids(&a.keys)?;
                self.drill_down(|| neighbors(index, a))?
            }
            "verify" => verify(index, parse(name, args)?, caller.unit, log)?,
            _ => {
                return Err(Error::invalid_argument(format!(
                    "unknown tool `{name}` (tools: {})",
                    TOOL_NAMES.join(", ")
                )))
            }
        };
        Ok(ToolResult {
            text: cut(text, self.limits.max_chars),
            data,
        })
    }

    /// What an agent should always know about `index`: the pages marked `always`, as an MCP
    /// server's instructions give them (titles and summaries, one line each).
    pub fn instructions(&self, index: &Index) -> String {
        let mut text = String::from(
            "Tools over a wiki: `search` it, `read_pages` and `read_chunks` to drill in, \
             `neighbors` to follow its links, `verify` an answer's citations before giving it.",
        );
        let always: Vec<_> = index
            .pages()
            .iter()
            .filter(|p| {
                p.usage_mode == crate::text::page::UsageMode::Always && p.archived_since.is_none()
            })
            .collect();
        if !always.is_empty() {
            text.push_str("\n\nAlways relevant:\n");
            for p in always {
                let _ = write!(text, "- {} (`{}`)", p.title, p.id());
                if let Some(s) = &p.summary {
                    let _ = write!(text, ": {s}");
                }
                text.push('\n');
            }
        }
        cut(text, self.limits.max_chars)
    }

    /// Runs a drill-down call if the turn has calls left; only a call that succeeds counts.
    fn drill_down(&self, run: impl FnOnce() -> Result<(String, Value)>) -> Result<(String, Value)> {
        let made = self.drilldowns.load(Ordering::Relaxed);
        if made >= self.limits.max_drilldowns {
            return Err(Error::too_large(
                "drill-down calls this turn",
                self.limits.max_drilldowns,
                made + 1,
            ));
        }
        let out = run()?;
        self.drilldowns.fetch_add(1, Ordering::Relaxed);
        Ok(out)
    }

    fn search(
        &self,
        index: &Index,
        a: SearchArgs,
        caller: Caller<'_>,
        log: Option<&LogSink>,
    ) -> Result<(String, Value)> {
        let limit = a.limit.unwrap_or(self.limits.max_results);
        if limit == 0 {
            return Err(Error::invalid_argument("limit must be at least 1"));
        }
        let opts = SearchOptions {
            limit: Some(limit.min(self.limits.max_results)),
            tags: a.tags,
            types: a.types,
            scope: a.scope.as_deref().map(Scope::parse).transpose()?,
            since: a.since,
            until: a.until,
            always: AlwaysMode::Separate,
            snippets: false,
            ..SearchOptions::default()
        };
        let clock = Stopwatch::start();
        let found = Found::search(index, &a.query, &opts, None, caller)?;
        let results = found.results();
        if let Some(log) = log {
            log.search(&opts, &found, clock);
        }
        let block = index.prompt_block(&results);
        let hit = |h: &crate::search::Hit| json!({"page_id": h.page_id, "chunk": h.chunk, "score": h.score, "title": h.title, "summary": h.summary, "path": h.path, "lines": [h.line_start, h.line_end], "headings": h.headings});
        let data = json!({
            "query": results.query,
            "always": results.always.iter().map(hit).collect::<Vec<_>>(),
            "hits": results.hits.iter().map(hit).collect::<Vec<_>>(),
            "offered": block.offered,
            "lanes": results.lanes,
        });
        let text = if results.hits.is_empty() {
            let mut t = format!("No page matches `{}`.", a.query);
            if results.terms.is_empty() {
                t.push_str(" The query has no searchable words (only stop words or symbols).");
            }
            if !block.text.is_empty() {
                t.push_str("\n\nAlways relevant:\n\n");
                t.push_str(&block.text);
            }
            t
        } else {
            block.text
        };
        Ok((text, data))
    }
}

fn parse<T: DeserializeOwned>(tool: &str, args: &str) -> Result<T> {
    let args = if args.trim().is_empty() { "{}" } else { args };
    serde_json::from_str(args)
        .map_err(|e| Error::invalid_argument(format!("arguments of `{tool}`: {e}")))
}

fn check_ids(ids: &[String]) -> Result<()> {
    if ids.is_empty() {
        return Err(Error::invalid_argument("give at least one key or id"));
    }
    if ids.len() > MAX_IDS_PER_CALL {
        return Err(Error::too_large(
            "keys or ids in one call",
            MAX_IDS_PER_CALL,
            ids.len(),
        ));
    }
    Ok(())
}

fn read_pages(index: &Index, a: ReadPagesArgs) -> Result<(String, Value)> {
    let scope = a.scope.as_deref().map(Scope::parse).transpose()?;
    let mut text = String::new();
    let mut pages = Vec::new();
    let mut unknown = Vec::new();
    for key in &a.keys {
        match index.page_record(key, scope.as_ref()) {
            Ok(r) => {
                let _ = writeln!(text, "[page {}] {}", r.id, r.title);
                if let Some(from) = &r.resolved_from {
                    let _ = writeln!(
                        text,
                        "(asked as `{from}`: an old key or an alias of this page)"
                    );
                }
                if let Some(s) = &r.summary {
                    let _ = writeln!(text, "summary: {s}");
                }
                text.push_str(r.body.trim());
                text.push_str("\n\n");
                pages.push(json!({
                    "id": r.id, "title": r.title, "summary": r.summary, "path": r.path,
                    "body": r.body, "chunks": r.chunks.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
                    "resolved_from": r.resolved_from,
                }));
            }
            Err(Error::UnknownPage { .. }) => {
                let _ = writeln!(text, "[page {key}] unknown: no such page\n");
                unknown.push(key.clone());
            }
            Err(Error::InvalidPage { reason, .. }) => {
                let _ = writeln!(text, "[page {key}] unknown: {reason}\n");
                unknown.push(key.clone());
            }
            Err(e) => return Err(e),
        }
    }
    Ok((text, json!({"pages": pages, "unknown": unknown})))
}

fn read_chunks(index: &Index, a: ReadChunksArgs) -> (String, Value) {
    let mut text = String::new();
    let mut chunks = Vec::new();
    let mut unknown = Vec::new();
    for id in &a.ids {
        match index.chunk(id) {
            Ok(c) => {
                let _ = writeln!(text, "[chunk {}] page {} ({})", c.id, c.key, c.path);
                text.push_str(c.text.trim());
                text.push_str("\n\n");
                chunks.push(json!({"id": c.id, "page_id": c.key_id(), "path": c.path, "lines": [c.line_start, c.line_end], "headings": c.headings, "table_header": c.table_header, "hash": c.hash, "text": c.text, "raw": c.raw}));
            }
            Err(_) => {
                let _ = writeln!(text, "[chunk {id}] unknown: no such chunk\n");
                unknown.push(id.clone());
            }
        }
    }
    (text, json!({"chunks": chunks, "unknown": unknown}))
}

fn neighbors(index: &Index, a: NeighborsArgs) -> Result<(String, Value)> {
    let mut opts = TraverseOptions::default();
    if let Some(d) = a.depth {
        opts.depth = d;
    }
    if let Some(c) = a.min_confidence {
        opts.min_confidence = c;
    }
    let seeds: Vec<&str> = a.keys.iter().map(String::as_str).collect();
    let g = index.neighbors(&seeds, &opts)?;
    let mut text = String::new();
    for n in &g.nodes {
        let _ = write!(text, "[page {}] {} (depth {}", n.id, n.title, n.depth);
        if n.depth > 0 {
            let _ = write!(text, ", confidence {:.2}", n.confidence);
        }
        text.push(')');
        if let Some(s) = &n.summary {
            let _ = write!(text, ": {s}");
        }
        text.push('\n');
    }
    if !g.edges.is_empty() {
        text.push_str("\nlinks:\n");
        for e in &g.edges {
            let _ = write!(
                text,
                "- {} --[{}, {:.2}]--> {}",
                e.from, e.kind, e.confidence, e.to
            );
            if let Some(ev) = &e.evidence {
                let _ = write!(text, ": \"{ev}\"");
            }
            if let Some(c) = &e.chunk {
                let _ = write!(text, " (chunk {c})");
            }
            text.push('\n');
        }
    }
    if !g.chain.is_empty() {
        text.push_str("\nchains:\n");
        for c in &g.chain {
            let _ = writeln!(text, "- {c}");
        }
    }
    for s in &g.unknown_seeds {
        let _ = writeln!(text, "[page {s}] unknown: no such page");
    }
    let data = serde_json::to_value(&g).map_err(|e| Error::Encode {
        detail: e.to_string(),
    })?;
    Ok((text, data))
}

fn verify(
    index: &Index,
    a: VerifyArgs,
    unit: OffsetUnit,
    log: Option<&LogSink>,
) -> Result<(String, Value)> {
    let cited: Vec<Cited> = a.cited.iter().map(|c| Cited::parse(c)).collect();
    let clock = Stopwatch::start();
    let check = index.check_answer_in(&a.answer, &cited, &a.offered, unit)?;
    if let Some(log) = log {
        log.verify(&check.verification, clock);
    }
    let v = &check.verification;
    let mut text = format!(
        "{}\n",
        if v.passed {
            "passed: every citation names an existing, unchanged chunk"
        } else {
            "failed: a citation is unknown or drifted"
        }
    );
    for c in &v.citations {
        let status = serde_json::to_value(c.status)
            .ok()
            .and_then(|s| s.as_str().map(str::to_string))
            .unwrap_or_default();
        let _ = writeln!(text, "- {}: {status}", c.id);
    }
    for s in &check.support.uncited {
        let best = s.best_chunk.as_deref().unwrap_or("?");
        let _ = writeln!(text, "uncited (supported by {best}): \"{}\"", s.text.trim());
    }
    for s in &check.support.unsupported {
        let _ = writeln!(text, "unsupported: \"{}\"", s.text.trim());
    }
    let data = serde_json::to_value(&check).map_err(|e| Error::Encode {
        detail: e.to_string(),
    })?;
    Ok((text, data))
}

/// `text` cut to at most `max` characters, saying how many were cut.
fn cut(text: String, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text;
    }
    let note = format!("\n[… {} more characters cut]", count - (max - 40));
    let keep: String = text.chars().take(max - 40).collect();
    keep + &note
}
