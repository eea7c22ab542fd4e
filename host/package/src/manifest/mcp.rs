//! MCP server entries (`mcpServers.<name>`, `contributes.mcpServers.<name>`).
//! Keys are snake_case, as upstream's on-disk form; `autoStart` is unknown.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::issue::{IssueKind, Issues};
use super::reader::{child, strict_object};
use super::valid_plugin_name;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct McpServerEntry {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub server_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_start: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
    /// One call at a time to this server.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub serial: bool,
}

impl McpServerEntry {
    /// `stdio`, `http` or `sse`: `type` mapped (`streamable-http` → http,
    /// `local` → stdio), or inferred from `url` when absent.
    pub fn transport(&self) -> Option<&'static str> {
        match self
            .server_type
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("") => Some(if self.url.is_some() { "http" } else { "stdio" }),
            Some("stdio") | Some("local") => Some("stdio"),
            Some("http") | Some("streamable-http") => Some("http"),
            Some("sse") => Some("sse"),
            Some(_) => None,
        }
    }
}

const FIELDS: [&str; 13] = [
    "type",
    "command",
    "args",
    "env",
    "url",
    "headers",
    "auto_start",
    "tier",
    "load",
    "display_name",
    "description",
    "imported",
    "serial",
];

pub(crate) fn read_server_map(
    issues: &mut Issues,
    map: &Map<String, Value>,
    path: &str,
) -> BTreeMap<String, McpServerEntry> {
    let mut out = BTreeMap::new();
    for (name, value) in map {
        let at = child(path, name);
        if !valid_plugin_name(name) {
            issues.push(
                &at,
                IssueKind::InvalidValue,
                format!("invalid MCP server name \"{name}\""),
            );
        }
        let Some(obj) = strict_object(issues, value, &at, &FIELDS) else {
            continue;
        };
        let entry = McpServerEntry {
            server_type: obj.trimmed(issues, "type"),
            command: obj.trimmed(issues, "command"),
            args: obj.str_list(issues, "args").unwrap_or_default(),
            env: obj.str_map(issues, "env").unwrap_or_default(),
            url: obj.trimmed(issues, "url"),
            headers: obj.str_map(issues, "headers").unwrap_or_default(),
            auto_start: obj.bool(issues, "auto_start"),
            tier: obj.trimmed(issues, "tier"),
            load: obj.trimmed(issues, "load"),
            display_name: obj.trimmed(issues, "display_name"),
            description: obj.trimmed(issues, "description"),
            imported: obj.bool(issues, "imported").unwrap_or(false),
            serial: obj.bool(issues, "serial").unwrap_or(false),
        };
        match entry.transport() {
            None => issues.push(
                &child(&at, "type"),
                IssueKind::InvalidValue,
                format!(
                    "{at}: unsupported MCP transport \"{}\" (use stdio, http or sse)",
                    entry.server_type.as_deref().unwrap_or_default()
                ),
            ),
            Some("stdio") if entry.command.is_none() => issues.push(
                &child(&at, "command"),
                IssueKind::Required,
                format!("{at}: a stdio MCP server needs a command"),
            ),
            Some(t @ ("http" | "sse")) if entry.url.is_none() => issues.push(
                &child(&at, "url"),
                IssueKind::Required,
                format!("{at}: an {t} MCP server needs a url"),
            ),
            _ => {}
        }
        out.insert(name.clone(), entry);
    }
    out
}
