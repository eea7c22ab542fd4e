//! MCP servers from installed plugins, live.
//!
//! The [`McpHub`] owns every declared server of the enabled plugins and at
//! most one live session per server, shared by every call (a stateful
//! server keeps its state between calls). It is free of CLI concerns; the
//! `reasonix mcp` commands, the turn harness and the session all drive it
//! through this API:
//!
//! ```text
//! McpHub::from_home(&home, HubOptions::new(guard)) -> Result<McpHub, McpError>
//! McpHub::new(&home, servers: Vec<ServerSpec>, options) -> McpHub
//! hub.reload().await -> Result<(), McpError>          // registry changed
//! hub.servers() -> Vec<ServerStatus>                  // masked, for listings
//! hub.set_enabled(id, bool) -> Result<plugin, McpError>
//! hub.connect(id).await -> Result<Vec<McpTool>, McpError>   // explicit connect
//! hub.discover().await -> Vec<(id, McpError)>         // enabled, uncached servers
//! hub.catalog() -> Vec<McpTool>                       // live or cached tools
//! hub.resolve("mcp__s__t") -> Option<(server, tool)>
//! hub.prepare(server, tool).await -> Result<Prepared, McpError>
//! hub.dispatch(prepared, arguments).await -> Result<McpCallResult, McpError>
//! hub.close().await                                   // every process group dies
//! ```
//!
//! Lifecycle of a server: declared (in an enabled plugin) → enabled (the
//! user's `mcp enable`, else the entry's `auto_start`; imported servers
//! default to off) or explicitly connected for the session → connected
//! (`initialize`, `notifications/initialized`, `tools/list`, and
//! `prompts/list` / `resources/list` when offered) → calls. The schema
//! found is cached under `$REASONIX_HOME/cache/mcp/` by connection
//! identity; a server with a cached schema connects at its first call.
//! Connect budget 30 s, call budget 5 min ([`HubOptions`] makes both
//! injectable), results over 8 MiB refused, a lost session rebuilt once
//! with a replay only for `readOnlyHint: true` tools, `serial: true`
//! servers take one call at a time. Stdio servers run in their own process
//! group behind the sidecar guard: no process outlives the hub.
//!
//! The model reaches these tools through the stable capability proxy
//! ([`crate::proxy`]), never through new provider-visible tools.

pub mod cache;
pub mod config;
mod connection;
pub mod error;
pub mod hub;
pub mod sse;
pub mod state;

pub use config::ServerSpec;
pub use error::McpError;
pub use hub::{
    CALL_TIMEOUT, CONNECT_TIMEOUT, HubOptions, MAX_RESULT_BYTES, McpCallResult, McpHub, McpTool,
    Prepared, Recovery, ServerState, ServerStatus, capability_name,
};
