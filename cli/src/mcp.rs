//! `wikidex mcp`: the core's agent tools ([`wikidex::tools`]) served over MCP on standard
//! input and output, with the official Rust SDK (rmcp).
//!
//! The server lists exactly the core's tools with their JSON Schemas, answers a call with the
//! tool's text and its structured JSON, and reports a failed call (bad arguments, a limit) as
//! a tool error (`isError`), so the model reads why and the server stays up. Its instructions
//! name the wiki's `always` pages. MCP has no turns: a `search` starts a new one, resetting the
//! drill-down count.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use wikidex::{Error, Index, Tools};

/// The MCP server over one index snapshot.
struct Server {
    index: Arc<Index>,
    tools: Arc<Tools>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wikidex", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.tools.instructions(&self.index))
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
        let (index, tools) = (Arc::clone(&self.index), Arc::clone(&self.tools));
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

/// Serves `index` with `tools` on standard input and output until the client closes them.
pub fn serve(index: Index, tools: Tools) -> Result<(), Error> {
    let io_error = |e: std::io::Error| Error::Io {
        path: "<stdio>".to_string(),
        source: e,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(io_error)?;
    let server = Server {
        index: Arc::new(index),
        tools: Arc::new(tools),
    };
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
