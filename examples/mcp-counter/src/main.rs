//! `mcp-counter`: a stateful MCP server over stdio, written on rmcp.
//!
//! One counter lives in the process for as long as the session does:
//! `increment` adds to it (not read-only, not destructive), `get` reads it
//! (read-only), and `echo` returns its `text` argument (read-only; the
//! benchmark's tool). A client that keeps one session per server sees
//! `increment` then `get` agree; one that reconnects per call does not.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

#[derive(Clone, Default)]
struct Counter {
    value: Arc<AtomicI64>,
}

fn schema(value: Value) -> Arc<Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

fn tools() -> Vec<Tool> {
    let read_only = ToolAnnotations::from_raw(None, Some(true), None, None, None);
    let additive = ToolAnnotations::from_raw(None, Some(false), Some(false), None, None);
    vec![
        Tool::new(
            "increment",
            "Add `by` (default 1) to the counter and return the new value.",
            schema(json!({"type": "object", "properties": {"by": {"type": "integer"}}})),
        )
        .with_annotations(additive),
        Tool::new(
            "get",
            "Return the counter.",
            schema(json!({"type": "object", "properties": {}})),
        )
        .with_annotations(read_only.clone()),
        Tool::new(
            "echo",
            "Return `text` unchanged.",
            schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
        )
        .with_annotations(read_only),
    ]
}

impl ServerHandler for Counter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("mcp-counter", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let text = match request.name.as_ref() {
            "increment" => {
                let by = args.get("by").and_then(Value::as_i64).unwrap_or(1);
                (self.value.fetch_add(by, Ordering::SeqCst) + by).to_string()
            }
            "get" => self.value.load(Ordering::SeqCst).to_string(),
            "echo" => args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other:?}"),
                    None,
                ));
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let served = Counter::default()
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await;
    match served {
        Ok(service) => {
            let _ = service.waiting().await;
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcp-counter: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
