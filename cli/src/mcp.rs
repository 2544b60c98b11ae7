//! `wikidex mcp`: the core's agent tools ([`wikidex::tools`]) served over MCP on standard
//! input and output, with the official Rust SDK (rmcp).
//!
//! The server lists exactly the core's tools with their JSON Schemas, answers a call with the
//! tool's text and its structured JSON, and reports a failed call (bad arguments, a limit) as
//! a tool error (`isError`), so the model reads why and the server stays up. Its instructions
//! name the wiki's `always` pages. MCP has no turns: a `search` starts a new one, resetting the
//! drill-down count.
//!
//! Served from a wiki folder, the index stays current: a thread polls the folder's
//! [`folder_stamp`] (one `stat` per file) and, when it moves, builds the next snapshot on the
//! current one (only changed files parsed, only new passages embedded) and swaps it in. A tool
//! call runs on the snapshot current when it starts, so no search sees half of a sync.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use wikidex::{folder_stamp, Error, Index, IndexBuilder, QueryLog, SyncReport, Tools};

/// The MCP server over the current index snapshot.
struct Server {
    current: Arc<RwLock<Arc<Index>>>,
    tools: Arc<Tools>,
}

impl Server {
    fn snapshot(&self) -> Arc<Index> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Keeping a served folder's index current.
pub struct Watch {
    /// The wiki folder.
    pub dir: PathBuf,
    /// The blob written after each sync (`--index`), if any.
    pub blob: Option<PathBuf>,
    /// Time between two looks at the folder.
    pub every: Duration,
    /// The query log each new snapshot writes to, if any.
    pub log: Option<Arc<dyn QueryLog>>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wikidex", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.tools.instructions(&self.snapshot()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools
            .definitions()
            .into_iter()
            .map(|d| {
                let schema = match d.input_schema {
                    Value::Object(o) => o,
                    _ => serde_json::Map::new(),
                };
                Tool::new(d.name, d.description, schema)
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default()).to_string();
        if name == "search" {
            self.tools.reset_turn();
        }
        let (index, tools) = (self.snapshot(), Arc::clone(&self.tools));
        // Searching and verifying are CPU work: off the runtime's thread.
        let outcome = tokio::task::spawn_blocking(move || tools.call(&index, &name, &args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool call failed: {e}"), None))?;
        let mut result = match outcome {
            Ok(r) => {
                let mut res = CallToolResult::success(vec![ContentBlock::text(r.text)]);
                res.structured_content = Some(r.data);
                res
            }
            Err(e) => {
                let mut res = CallToolResult::error(vec![ContentBlock::text(format!(
                    "error[{}]: {e}",
                    e.code()
                ))]);
                res.structured_content = Some(json!({ "error": e.record() }));
                res
            }
        };
        result.meta = None;
        Ok(result.into())
    }
}

/// Serves `index` with `tools` on standard input and output until the client closes them;
/// with `watch`, keeps it current with a folder.
pub fn serve(index: Index, tools: Tools, watch: Option<Watch>) -> Result<(), Error> {
    let io_error = |e: std::io::Error| Error::Io {
        path: "<stdio>".to_string(),
        source: e,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(io_error)?;
    let server = Server {
        current: Arc::new(RwLock::new(Arc::new(index))),
        tools: Arc::new(tools),
    };
    if let Some(w) = watch {
        let current = Arc::clone(&server.current);
        std::thread::Builder::new()
            .name("wikidex-watch".into())
            .spawn(move || watch_folder(&w, &current))
            .map_err(io_error)?;
    }
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| io_error(std::io::Error::other(e.to_string())))?;
        running
            .waiting()
            .await
            .map_err(|e| io_error(std::io::Error::other(e.to_string())))?;
        Ok(())
    })
}

/// Polls `w.dir` and swaps a new snapshot into `current` whenever its files change. Runs
/// until the process ends; a failed sync is reported and the previous snapshot kept.
fn watch_folder(w: &Watch, current: &RwLock<Arc<Index>>) {
    let stamp = || folder_stamp(&w.dir, None, false);
    let mut last = stamp().ok();
    loop {
        std::thread::sleep(w.every);
        let now = match stamp() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("wikidex mcp: cannot read {}: {e}", w.dir.display());
                continue;
            }
        };
        if last == Some(now) {
            continue;
        }
        // The stamp is taken before the files are read: an edit during the sync moves it
        // again, and the next look syncs once more.
        last = Some(now);
        let snapshot = Arc::clone(&current.read().unwrap_or_else(|e| e.into_inner()));
        match resync(&snapshot, w) {
            Ok(Some((next, report))) => {
                *current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
                eprintln!(
                    "wikidex mcp: synced {}: {} added, {} changed, {} removed, {} embedded",
                    w.dir.display(),
                    report.added.len(),
                    report.changed.len(),
                    report.removed.len(),
                    report.embedded
                );
                for s in &report.build.skipped {
                    eprintln!("wikidex mcp: skipped {}: [{}] {}", s.path, s.code, s.reason);
                }
            }
            Ok(None) => {}
            Err(e) => eprintln!(
                "wikidex mcp: sync of {} failed, still serving the previous index: [{}] {e}",
                w.dir.display(),
                e.code()
            ),
        }
    }
}

/// The snapshot after `current` for the folder as it is now, written to `w.blob`; `None` when
/// nothing changed.
fn resync(current: &Index, w: &Watch) -> Result<Option<(Index, SyncReport)>, Error> {
    let mut b = IndexBuilder::new(current.config().clone())?;
    if let Some(e) = current.embedder() {
        b.embedder(Arc::clone(e));
    }
    b.previous(current);
    b.add_dir(&w.dir)?;
    let (mut next, report) = b.sync_with_progress(&mut |_, _, _| ControlFlow::Continue(()))?;
    if !report.has_changes() && report.embedded == 0 {
        return Ok(None);
    }
    if let Some(log) = &w.log {
        next.set_query_log(Some(Arc::clone(log)), "mcp");
    }
    if let Some(blob) = &w.blob {
        next.save(blob)?;
    }
    Ok(Some((next, report)))
}
