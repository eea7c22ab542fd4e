//! Discovered tool schemas: `$REASONIX_HOME/cache/mcp/<identity>.json`,
//! one file per connection identity (the hex of
//! [`super::ServerSpec::identity`]). A server whose identity has a cache
//! file does not connect to be listed: it connects on demand at its first
//! call. A file that does not parse, or names another identity, is ignored
//! (and rewritten at the next discovery); it is never trusted partly.

use std::path::{Path, PathBuf};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};

use crate::home::ReasonixHome;
use crate::runtime::session_state::write_atomically;

const VERSION: u32 = 1;

/// What discovery found, as cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedSchema {
    pub version: u32,
    pub identity: String,
    pub server: String,
    pub plugin: String,
    pub tools: Vec<Tool>,
    #[serde(default)]
    pub prompts: usize,
    #[serde(default)]
    pub resources: usize,
}

pub fn cache_dir(home: &ReasonixHome) -> PathBuf {
    home.cache_dir().join("mcp")
}

fn file_for(dir: &Path, identity: &str) -> PathBuf {
    let hex = identity.strip_prefix("sha256:").unwrap_or(identity);
    dir.join(format!("{hex}.json"))
}

/// The cached schema of `identity`, if a usable one exists.
pub fn read(dir: &Path, identity: &str) -> Option<CachedSchema> {
    let bytes = std::fs::read(file_for(dir, identity)).ok()?;
    let cached: CachedSchema = serde_json::from_slice(&bytes)
        .map_err(|e| tracing::debug!("ignoring MCP schema cache for {identity}: {e}"))
        .ok()?;
    (cached.version == VERSION && cached.identity == identity).then_some(cached)
}

/// Store what discovery found (atomically).
pub fn write(
    dir: &Path,
    identity: &str,
    server: &str,
    plugin: &str,
    tools: &[Tool],
    prompts: usize,
    resources: usize,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let cached = CachedSchema {
        version: VERSION,
        identity: identity.to_owned(),
        server: server.to_owned(),
        plugin: plugin.to_owned(),
        tools: tools.to_vec(),
        prompts,
        resources,
    };
    let bytes = serde_json::to_vec(&cached).map_err(|e| e.to_string())?;
    write_atomically(&file_for(dir, identity), &bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_serves_only_its_identity() {
        let dir = tempfile::tempdir().unwrap();
        let tool: Tool = serde_json::from_value(serde_json::json!({
            "name": "echo", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}
        }))
        .unwrap();
        write(
            dir.path(),
            "sha256:ab",
            "s",
            "p",
            std::slice::from_ref(&tool),
            1,
            0,
        )
        .unwrap();
        let got = read(dir.path(), "sha256:ab").unwrap();
        assert_eq!(got.tools, vec![tool]);
        assert!(read(dir.path(), "sha256:cd").is_none());
        std::fs::write(dir.path().join("ab.json"), b"{}").unwrap();
        assert!(read(dir.path(), "sha256:ab").is_none());
    }
}
