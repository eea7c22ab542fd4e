//! Why an MCP operation failed. Every message is redacted and free of
//! control characters; each variant has a stable code for `--json`.

use std::time::Duration;

use crate::runtime::redaction::clean_text;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error(
        "unknown MCP server {0:?}; `reasonix mcp list` shows the servers of the enabled plugins"
    )]
    UnknownServer(String),
    #[error(
        "MCP server {id:?} is disabled; enable it with `reasonix mcp enable {id}` (or connect it for this session)"
    )]
    Disabled { id: String },
    #[error("MCP server {id:?} cannot be used: {why}")]
    Conflict { id: String, why: String },
    #[error("MCP server configuration: {0}")]
    Config(String),
    #[error("connecting failed: {0}")]
    Connect(String),
    #[error("{what} timed out after {}", human(*after))]
    Timeout { what: String, after: Duration },
    #[error("the server closed the connection{}", tail(.0))]
    ConnectionLost(Option<String>),
    #[error("the server answered with an error: {0}")]
    Rejected(String),
    #[error("the server broke the protocol: {0}")]
    Protocol(String),
    #[error("the result of {tool:?} is {} bytes, over the {} MiB limit; it was refused (ask for less, e.g. a narrower query or a page)", bytes, limit >> 20)]
    TooLarge {
        tool: String,
        bytes: usize,
        limit: usize,
    },
    #[error("MCP server {id:?} does not offer a tool {tool:?} (it offers {offered})")]
    UnknownTool {
        id: String,
        tool: String,
        offered: String,
    },
    #[error("{0}")]
    State(String),
}

fn human(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{} s", d.as_secs())
    }
}

fn tail(stderr: &Option<String>) -> String {
    match stderr {
        Some(text) if !text.is_empty() => {
            let last: Vec<&str> = text.lines().rev().take(5).collect();
            let lines: Vec<&str> = last.into_iter().rev().collect();
            format!("; its stderr ended with:\n{}", lines.join("\n"))
        }
        _ => String::new(),
    }
}

impl McpError {
    /// Stable code for `--json` and logs.
    pub fn code(&self) -> &'static str {
        match self {
            McpError::UnknownServer(_) => "mcp.unknown_server",
            McpError::Disabled { .. } => "mcp.disabled",
            McpError::Conflict { .. } => "mcp.conflict",
            McpError::Config(_) => "mcp.config",
            McpError::Connect(_) => "mcp.start_failed",
            McpError::Timeout { .. } => "mcp.timeout",
            McpError::ConnectionLost(_) => "mcp.connection_lost",
            McpError::Rejected(_) => "mcp.rejected",
            McpError::Protocol(_) => "mcp.protocol",
            McpError::TooLarge { .. } => "mcp.result_too_large",
            McpError::UnknownTool { .. } => "mcp.unknown_tool",
            McpError::State(_) => "mcp.state",
        }
    }

    /// The connection is gone: a rebuild may help.
    pub fn is_connection_lost(&self) -> bool {
        matches!(self, McpError::ConnectionLost(_))
    }

    pub(crate) fn from_init(message: &str, stderr: Option<String>) -> McpError {
        let stderr = stderr.filter(|s| !s.is_empty());
        let base = clean_text(message);
        match stderr {
            Some(text) => McpError::Connect(format!("{base}{}", tail(&Some(text)))),
            None => McpError::Connect(base),
        }
    }

    pub(crate) fn from_service(error: &rmcp::ServiceError, stderr: Option<String>) -> McpError {
        use rmcp::ServiceError as E;
        match error {
            E::McpError(data) => McpError::Rejected(clean_text(&format!(
                "{} (code {})",
                data.message, data.code.0
            ))),
            E::TransportClosed | E::TransportSend(_) => {
                McpError::ConnectionLost(stderr.map(|s| clean_text(&s)).filter(|s| !s.is_empty()))
            }
            E::Timeout { timeout } => McpError::Timeout {
                what: "the request".into(),
                after: *timeout,
            },
            E::UnexpectedResponse => {
                McpError::Protocol("the response does not match the request".into())
            }
            other => McpError::Protocol(clean_text(&other.to_string())),
        }
    }
}
