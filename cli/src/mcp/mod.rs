//! `wikidex mcp`: the core's agent tools ([`wikidex::tools`]) served over MCP on standard
//! input and output, with the official Rust SDK (rmcp).
//!
//! The server lists exactly the core's tools with their JSON Schemas, answers a call with the
//! tool's text and its structured JSON, and reports a failed call (bad arguments, a limit) as
//! a tool error (`isError`), so the model reads why and the server stays up. Its instructions
//! name the wiki's `always` pages. MCP has no turns: a `search` starts a new one, resetting the
//! drill-down count.
//!
//! Messages are lines of JSON on standard input and output, read and written by our own
//! transport ([`Stdio`]) rather than rmcp's, for three guarantees:
//!
//! - **Bounded work.** At most [`MAX_IN_FLIGHT`] requests are read and not yet answered; at
//!   that many the server stops reading its input until an answer is written. A client that
//!   pipelines thousands of requests, reading the answers or not, leaves the server's memory
//!   and thread count flat (the pipe fills and the client's writes wait).
//! - **Every line is answered or ignored on purpose.** A line over [`MAX_LINE_BYTES`](stdio::MAX_LINE_BYTES) gets an
//!   `Invalid Request` error with its `id` (`null` when none can be read); so does well-formed
//!   JSON that is not a message. Lines that are not JSON are ignored, as rmcp ignores them.
//! - **A clean end.** When the input closes, every request read before is answered, then the
//!   server exits with status 0 (also when it closes before any `initialize`).
//!
//! Served from a wiki folder, the index stays current: a thread polls the folder's
//! [`folder_stamp`] (one `stat` per file) and, when it moves, builds the next snapshot on the
//! current one (only changed files parsed, only new passages embedded) and swaps it in. A tool
//! call runs on the snapshot current when it starts, so no search sees half of a sync.

use std::io;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{QuitReason, RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use wikidex::{folder_stamp, BuildOptions, Error, Session};

use stdio::{Stdio, MAX_IN_FLIGHT};

mod stdio;

/// The MCP server over a session: its current index, model, query log and agent tools.
struct Server {
    session: Arc<Session>,
}

/// Keeping a served folder's index current.
pub struct Watch {
    /// The wiki folder.
    pub dir: PathBuf,
    /// The blob written after each sync (`--index`), if any.
    pub blob: Option<PathBuf>,
    /// Time between two looks at the folder.
    pub every: Duration,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wikidex", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.session.tool_instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .session
            .tool_definitions()
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
            self.session.reset_turn();
        }
        let session = Arc::clone(&self.session);
        // Searching and verifying are CPU work: off the runtime's thread.
        let outcome = tokio::task::spawn_blocking(move || session.call_tool(&name, &args))
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

/// Serves `session` on standard input and output until the client closes its input and every
/// request it sent is answered; with `watch`, keeps it current with a folder.
pub fn serve(session: Session, watch: Option<Watch>) -> Result<(), Error> {
    let io_error = |e: io::Error| Error::Io {
        path: "<stdio>".to_string(),
        source: e,
    };
    // Timers: rmcp times its drain of answers at shutdown (`tokio::time::timeout`), and a
    // runtime without them panicked there every time the input closed. The blocking pool runs
    // the tool calls, at most `MAX_IN_FLIGHT` at once; capped there too, a thread that finished
    // a call but is not idle yet cannot make the pool start another.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .max_blocking_threads(MAX_IN_FLIGHT)
        .build()
        .map_err(io_error)?;
    let server = Server {
        session: Arc::new(session),
    };
    if let Some(w) = watch {
        let session = Arc::clone(&server.session);
        std::thread::Builder::new()
            .name("wikidex-watch".into())
            .spawn(move || watch_folder(&w, &session))
            .map_err(io_error)?;
    }
    let transport = Stdio::start().map_err(io_error)?;
    runtime.block_on(async move {
        let running = match server.serve(transport).await {
            Ok(running) => running,
            // The input closed before an `initialize`: nothing was asked, nothing is owed.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(io_error(io::Error::other(e.to_string()))),
        };
        match running.waiting().await {
            Ok(QuitReason::JoinError(e)) | Err(e) => Err(io_error(io::Error::other(e.to_string()))),
            Ok(_) => Ok(()),
        }
    })
}

/// Polls `w.dir` and syncs `session` with it whenever its files change (writing `w.blob`,
/// if any). Runs until the process ends; a failed sync is reported and the previous index
/// kept.
fn watch_folder(w: &Watch, session: &Session) {
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
        let synced = session.sync_folder(
            &w.dir,
            w.blob.as_deref(),
            &BuildOptions::default(),
            &mut |_, _, _| ControlFlow::Continue(()),
        );
        match synced {
            Ok(Some(report)) => {
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
