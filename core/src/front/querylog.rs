//! The query log: what agents and people searched for and cited, and what a wiki lacks.
//!
//! Logging is off unless a session is given a log ([`crate::Session::set_query_log`]), with the name of
//! the surface it serves (`cli`, `mcp`, `python`, `node`, `browser`). Then every
//! search of the session ([`crate::Session::search`], its agent tools' and evidence searches too)
//! records a [`LogEntry`] (time, origin, query, filters, result count, top chunk ids, lane
//! statuses, milliseconds), and every citation check ([`crate::Session::verify`],
//! [`crate::Session::check_answer`]) records the citations' verdicts. A bare [`crate::Index`]
//! logs nothing. A log is anything that implements
//! [`QueryLog`]: [`JsonlLog`] appends JSON Lines from a background thread (the search only
//! hands the entry over, it never waits for the disk); a binding can pass a callback.
//!
//! [`insights`] reads entries back: the queries that found nothing (the content gaps), the
//! most frequent queries, the most cited and never cited pages and chunks, and the share of
//! drifted and unknown citations.
//!
//! On `wasm32-unknown-unknown` the standard library has no clock: entries there carry no
//! `time_ms` or `ms` (the fields are absent, not zero).

use std::collections::{BTreeMap, HashMap};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::cite::{CitationStatus, Verification};
use crate::index::Index;
use crate::search::{Found, SearchOptions};
use crate::text::chunk;

/// Hits whose chunk ids an entry keeps.
pub const LOGGED_TOP: usize = 10;

/// What was logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogKind {
    /// A search.
    Search,
    /// A citation check.
    Verify,
}

/// A citation's verdict, as logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedVerdict {
    /// The cited (or offered) chunk id.
    pub id: String,
    /// Its status (`quote`, `paraphrase`, `drifted`, `uncited`, `none`, `unknown`).
    pub status: CitationStatus,
}

/// One line of the query log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogEntry {
    /// When, in milliseconds since the Unix epoch (absent where there is no clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// The surface: `cli`, `mcp`, `python`, `node`, `browser`, ...
    pub origin: String,
    /// A search or a citation check.
    pub kind: LogKind,
    /// The query (searches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The filters and options that narrow a search (`tags`, `types`, `scope`, `lanes`,
    /// `limit`, and `typos: false`), only those set.
    #[serde(default)]
    pub filters: Value,
    /// Ranked hits returned (searches; the `always` pages a search adds are not counted), or
    /// citations checked (verify).
    pub results: usize,
    /// Chunk ids of the first ranked hits, at most [`LOGGED_TOP`].
    #[serde(default)]
    pub top: Vec<String>,
    /// Each lane's status: `ok`, `skipped` or `failed`.
    #[serde(default)]
    pub lanes: BTreeMap<String, String>,
    /// How long the call took (absent where there is no clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    /// The citations' verdicts (verify).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<LoggedVerdict>,
}

impl LogEntry {
    /// The entry of a search.
    pub fn search<I: Deref<Target = Index>>(
        origin: &str,
        opts: &SearchOptions,
        found: &Found<I>,
        clock: Stopwatch,
    ) -> LogEntry {
        let mut filters = serde_json::Map::new();
        if !opts.tags.is_empty() {
            filters.insert("tags".into(), json!(opts.tags));
        }
        if !opts.types.is_empty() {
            filters.insert("types".into(), json!(opts.types));
        }
        if let Some(s) = &opts.scope {
            filters.insert("scope".into(), json!(s.to_string()));
        }
        if let Some(l) = &opts.lanes {
            filters.insert(
                "lanes".into(),
                json!(l.iter().map(|l| l.name()).collect::<Vec<_>>()),
            );
        }
        if let Some(l) = opts.limit {
            filters.insert("limit".into(), json!(l));
        }
        if !opts.typos {
            filters.insert("typos".into(), json!(false));
        }
        LogEntry {
            time_ms: clock.started_ms,
            origin: origin.to_string(),
            kind: LogKind::Search,
            query: Some(found.query().to_string()),
            filters: Value::Object(filters),
            results: found.ranked_chunk_ids().len(),
            top: found.ranked_chunk_ids().take(LOGGED_TOP).collect(),
            lanes: {
                // Inserted one by one: `collect` into a map sorts first (a copy of std's sort
                // in the browser module for this one type).
                let mut lanes = BTreeMap::new();
                for l in found.lanes() {
                    lanes.insert(
                        l.lane.name().to_string(),
                        l.status.kind().name().to_string(),
                    );
                }
                lanes
            },
            ms: clock.elapsed_ms(),
            verdicts: Vec::new(),
        }
    }

    /// The entry of a citation check.
    pub fn verify(origin: &str, verification: &Verification, clock: Stopwatch) -> LogEntry {
        LogEntry {
            time_ms: clock.started_ms,
            origin: origin.to_string(),
            kind: LogKind::Verify,
            query: None,
            filters: Value::Object(serde_json::Map::new()),
            results: verification.citations.len(),
            top: Vec::new(),
            lanes: BTreeMap::new(),
            ms: clock.elapsed_ms(),
            verdicts: verification
                .citations
                .iter()
                .map(|v| LoggedVerdict {
                    id: v.id.clone(),
                    status: v.status,
                })
                .collect(),
        }
    }
}

/// Where entries go. Implementations must return quickly (hand the entry to a queue): a
/// search waits for `record`.
pub trait QueryLog: Send + Sync {
    /// Records one entry.
    fn record(&self, entry: &LogEntry);
}

/// A log a session writes to, with the surface's name.
#[derive(Clone)]
pub(crate) struct LogSink {
    pub log: Arc<dyn QueryLog>,
    pub origin: String,
}

impl LogSink {
    /// Records a search that started at `clock`.
    pub(crate) fn search<I: Deref<Target = Index>>(
        &self,
        opts: &SearchOptions,
        found: &Found<I>,
        clock: Stopwatch,
    ) {
        self.log
            .record(&LogEntry::search(&self.origin, opts, found, clock));
    }

    /// Records a citation check that started at `clock`.
    pub(crate) fn verify(&self, verification: &Verification, clock: Stopwatch) {
        self.log
            .record(&LogEntry::verify(&self.origin, verification, clock));
    }
}

impl std::fmt::Debug for LogSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "query log ({})", self.origin)
    }
}

/// When a call started and how long it took, where the platform has a clock.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    started_ms: Option<u64>,
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    started: std::time::Instant,
}

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Stopwatch {
        #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
        {
            let started_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .and_then(|d| u64::try_from(d.as_millis()).ok());
            Stopwatch {
                started_ms,
                started: std::time::Instant::now(),
            }
        }
        #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
        {
            Stopwatch { started_ms: None }
        }
    }

    /// Milliseconds since [`Stopwatch::start`].
    pub fn elapsed_ms(&self) -> Option<f64> {
        #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
        {
            Some(self.started.elapsed().as_secs_f64() * 1000.0)
        }
        #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
        {
            None
        }
    }
}

/// A JSON Lines file the entries are appended to, one per line, by a background thread.
#[cfg(feature = "fs")]
pub struct JsonlLog {
    sender: std::sync::Mutex<Option<std::sync::mpsc::Sender<LogEntry>>>,
    writer: std::sync::Mutex<Option<std::thread::JoinHandle<std::io::Result<()>>>>,
    path: std::path::PathBuf,
}

#[cfg(feature = "fs")]
impl JsonlLog {
    /// Opens `path` for appending (creating it) and starts the writer thread.
    ///
    /// # Errors
    /// [`crate::Error::Io`] if the file cannot be opened.
    pub fn open(path: &std::path::Path) -> crate::Result<JsonlLog> {
        use std::io::Write as _;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| crate::Error::io(path, e))?;
        let (sender, receiver) = std::sync::mpsc::channel::<LogEntry>();
        let writer = std::thread::Builder::new()
            .name("wikidex-query-log".into())
            .spawn(move || {
                let mut out = std::io::BufWriter::new(file);
                for entry in receiver {
                    let line = serde_json::to_string(&entry).map_err(std::io::Error::other)?;
                    out.write_all(line.as_bytes())?;
                    out.write_all(b"\n")?;
                    out.flush()?;
                }
                out.flush()
            })
            .map_err(|e| crate::Error::io(path, e))?;
        Ok(JsonlLog {
            sender: std::sync::Mutex::new(Some(sender)),
            writer: std::sync::Mutex::new(Some(writer)),
            path: path.to_path_buf(),
        })
    }

    /// Writes what is queued and stops the writer.
    ///
    /// # Errors
    /// [`crate::Error::Io`] with the first write error, if any (entries after it are lost).
    pub fn close(&self) -> crate::Result<()> {
        drop(self.sender.lock().ok().and_then(|mut g| g.take()));
        let writer = self.writer.lock().ok().and_then(|mut g| g.take());
        if let Some(writer) = writer {
            match writer.join() {
                Ok(result) => result.map_err(|e| crate::Error::io(&self.path, e))?,
                Err(_) => {
                    return Err(crate::Error::io(
                        &self.path,
                        std::io::Error::other("the query log's writer stopped"),
                    ))
                }
            }
        }
        Ok(())
    }
}

#[cfg(feature = "fs")]
impl QueryLog for JsonlLog {
    fn record(&self, entry: &LogEntry) {
        if let Ok(guard) = self.sender.lock() {
            if let Some(s) = guard.as_ref() {
                // A closed log drops the entry: logging never fails a search.
                let _ = s.send(entry.clone());
            }
        }
    }
}

#[cfg(feature = "fs")]
impl Drop for JsonlLog {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// A query or id with how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    /// The query (normalized: trimmed, lower case, single spaces) or the id.
    pub key: String,
    /// How often.
    pub count: usize,
}

/// What a query log shows ([`insights`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Insights {
    /// Searches logged.
    pub searches: usize,
    /// Citation checks logged.
    pub verifies: usize,
    /// Lines that were not log entries.
    pub bad_lines: usize,
    /// Queries that returned no hit, most frequent first: the content gaps.
    pub zero_result: Vec<Count>,
    /// The most frequent queries.
    pub frequent: Vec<Count>,
    /// The most cited pages (citations that name an existing chunk).
    pub cited_pages: Vec<Count>,
    /// The most cited chunks.
    pub cited_chunks: Vec<Count>,
    /// Pages of the index never cited (only when the index's pages were given).
    pub never_cited: Option<Vec<String>>,
    /// Citations checked (offered but uncited ids not counted).
    pub citations: usize,
    /// Share of those whose chunk had changed (`drifted`).
    pub drifted_share: f64,
    /// Share of those that named no chunk (`unknown`).
    pub unknown_share: f64,
}

/// Reads a JSON Lines log: the entries, and the number of lines that are not entries.
pub fn read_log(text: &str) -> (Vec<LogEntry>, usize) {
    let mut bad = 0;
    let entries = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).map_err(|_| bad += 1).ok())
        .collect();
    (entries, bad)
}

fn normalized(query: &str) -> String {
    crate::text::analyze::lowercase(&query.split_whitespace().collect::<Vec<_>>().join(" "))
        .into_owned()
}

fn top(counts: HashMap<String, usize>, n: usize) -> Vec<Count> {
    let mut v: Vec<Count> = counts
        .into_iter()
        .map(|(key, count)| Count { key, count })
        .collect();
    crate::data::sort::sort_by(&mut v, |a, b| {
        b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key))
    });
    v.truncate(n);
    v
}

/// Aggregates `entries`, keeping the `n` first of each list. With `pages` (the ids of every
/// page of the index), also lists the pages never cited.
pub fn insights(
    entries: &[LogEntry],
    bad_lines: usize,
    pages: Option<&[String]>,
    n: usize,
) -> Insights {
    let mut zero = HashMap::new();
    let mut frequent = HashMap::new();
    let mut cited_pages = HashMap::new();
    let mut cited_chunks = HashMap::new();
    let (mut searches, mut verifies, mut citations, mut drifted, mut unknown) = (0, 0, 0, 0, 0);
    for e in entries {
        match e.kind {
            LogKind::Search => {
                searches += 1;
                let q = normalized(e.query.as_deref().unwrap_or(""));
                *frequent.entry(q.clone()).or_insert(0) += 1;
                if e.results == 0 {
                    *zero.entry(q).or_insert(0) += 1;
                }
            }
            LogKind::Verify => {
                verifies += 1;
                for v in &e.verdicts {
                    match v.status {
                        CitationStatus::Uncited => continue,
                        CitationStatus::Unknown => unknown += 1,
                        CitationStatus::Drifted => drifted += 1,
                        _ => {}
                    }
                    citations += 1;
                    if v.status != CitationStatus::Unknown {
                        *cited_chunks.entry(v.id.clone()).or_insert(0) += 1;
                        let page = chunk::parse_chunk_id(&v.id).map_or(v.id.as_str(), |(p, _)| p);
                        *cited_pages.entry(page.to_string()).or_insert(0) += 1;
                    }
                }
            }
        }
    }
    let never_cited = pages.map(|all| {
        all.iter()
            .filter(|p| !cited_pages.contains_key(p.as_str()))
            .cloned()
            .collect()
    });
    let share = |k: usize| {
        if citations == 0 {
            0.0
        } else {
            k as f64 / citations as f64
        }
    };
    Insights {
        searches,
        verifies,
        bad_lines,
        zero_result: top(zero, n),
        frequent: top(frequent, n),
        cited_pages: top(cited_pages, n),
        cited_chunks: top(cited_chunks, n),
        never_cited,
        citations,
        drifted_share: share(drifted),
        unknown_share: share(unknown),
    }
}
