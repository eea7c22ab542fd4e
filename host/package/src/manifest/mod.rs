//! The strict native manifest, `reasonix-plugin.json` with
//! `apiVersion: "reasonix.io/plugin/v2"` (PLUGIN_PACKAGES.md §a.7).
//!
//! [`Manifest::from_slice`] parses bytes to a `serde_json::Value` and walks it
//! with a schema-aware reader that reports every problem at once, each with
//! its field path, in upstream's wording (`runtime: json: unknown field
//! "intrcepts"`). It never touches the disk; the residency checks that follow
//! symlinks live in [`crate::paths`].

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

mod capability;
mod hooks;
mod issue;
mod mcp;
pub mod points;
mod reader;
mod runtime;

pub use capability::{CapabilityRef, SCHEMA_HASH_KINDS, valid_range, valid_semver};
pub use hooks::{HOOK_EVENTS, HOOK_SHELLS, HookEntry};
pub use issue::{IssueKind, ManifestError, ManifestIssue};
pub use mcp::McpServerEntry;
pub use runtime::{
    ExpandedCommand, MAX_TIMEOUT_MILLIS, PLUGIN_ROOT_VAR, PRIORITY_RANGE, RuntimeSpec,
    SANDBOX_DATA_CEILING_MIB, SANDBOX_MEMORY_CEILING_MIB, SandboxSpec, ToolSpec, valid_tool_name,
};

use issue::Issues;
use reader::{child, index, json_type, strict_object};

/// The manifest file name at a plugin root.
pub const MANIFEST_FILE: &str = "reasonix-plugin.json";

/// The only accepted `apiVersion`.
pub const API_VERSION: &str = "reasonix.io/plugin/v2";

/// A parsed and validated native manifest. Legacy top-level `skills`,
/// `commands`, `hooks` and `mcpServers` are already merged with
/// `contributes`; path lists are cleaned, deduplicated and sorted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
    pub requires: Vec<CapabilityRef>,
    pub provides: Vec<CapabilityRef>,
    pub skills: Vec<String>,
    pub agents: Vec<String>,
    pub commands: Vec<String>,
    pub prompts: Vec<String>,
    /// Plain paths or per-segment globs.
    pub themes: Vec<String>,
    /// Event → entries, legacy entries first.
    pub hooks: BTreeMap<String, Vec<HookEntry>>,
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
    pub runtime: Option<RuntimeSpec>,
}

const ROOT_FIELDS: [&str; 14] = [
    "apiVersion",
    "name",
    "version",
    "description",
    "homepage",
    "repository",
    "requires",
    "provides",
    "contributes",
    "runtime",
    "skills",
    "commands",
    "hooks",
    "mcpServers",
];

const CONTRIBUTES_FIELDS: [&str; 7] = [
    "skills",
    "agents",
    "commands",
    "prompts",
    "themes",
    "hooks",
    "mcpServers",
];

/// The plugin name rule `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$` (also MCP server keys).
pub use crate::inventory::names::is_valid_name as valid_plugin_name;

impl Manifest {
    /// Parse manifest bytes (UTF-8, an optional BOM is skipped).
    pub fn from_slice(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let (manifest, issues) = Manifest::parse_collecting(bytes);
        if issues.is_empty() {
            Ok(manifest)
        } else {
            Err(ManifestError::new(issues))
        }
    }

    /// Validate an already parsed JSON document.
    pub fn from_value(doc: &Value) -> Result<Manifest, ManifestError> {
        let mut issues = Issues::default();
        let manifest = read_manifest(&mut issues, doc);
        if issues.is_empty() {
            Ok(manifest)
        } else {
            Err(ManifestError::new(issues.list))
        }
    }

    /// Parse without failing: whatever could be read, plus every issue. The
    /// package loader uses the partial manifest to run the on-disk checks
    /// too, so one run reports all problems.
    pub fn parse_collecting(bytes: &[u8]) -> (Manifest, Vec<ManifestIssue>) {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut issues = Issues::default();
        let manifest = match serde_json::from_slice::<Value>(bytes) {
            Ok(doc) => read_manifest(&mut issues, &doc),
            Err(e) => {
                issues.push(
                    "",
                    IssueKind::InvalidJson,
                    format!("{MANIFEST_FILE}: invalid JSON: {e}"),
                );
                Manifest::default()
            }
        };
        (manifest, issues.list)
    }

    /// Number of hook entries across all events.
    pub fn hook_count(&self) -> usize {
        self.hooks.values().map(Vec::len).sum()
    }

    /// The manifest as a canonical v2 document (everything under
    /// `contributes`). Parsing it again yields an equal [`Manifest`].
    pub fn to_document(&self) -> Value {
        let mut doc = Map::new();
        doc.insert("apiVersion".into(), json!(API_VERSION));
        doc.insert("name".into(), json!(self.name));
        for (key, v) in [
            ("version", &self.version),
            ("description", &self.description),
            ("homepage", &self.homepage),
            ("repository", &self.repository),
        ] {
            if let Some(v) = v {
                doc.insert(key.into(), json!(v));
            }
        }
        if !self.requires.is_empty() {
            doc.insert("requires".into(), json!(self.requires));
        }
        if !self.provides.is_empty() {
            doc.insert("provides".into(), json!(self.provides));
        }
        let mut contributes = Map::new();
        for (key, list) in [
            ("skills", &self.skills),
            ("agents", &self.agents),
            ("commands", &self.commands),
            ("prompts", &self.prompts),
            ("themes", &self.themes),
        ] {
            if !list.is_empty() {
                contributes.insert(key.into(), json!(list));
            }
        }
        if !self.hooks.is_empty() {
            contributes.insert("hooks".into(), json!(self.hooks));
        }
        if !self.mcp_servers.is_empty() {
            contributes.insert("mcpServers".into(), json!(self.mcp_servers));
        }
        if !contributes.is_empty() {
            doc.insert("contributes".into(), Value::Object(contributes));
        }
        if let Some(rt) = &self.runtime {
            doc.insert("runtime".into(), json!(rt));
        }
        Value::Object(doc)
    }
}

fn read_manifest(issues: &mut Issues, doc: &Value) -> Manifest {
    let mut m = Manifest::default();
    let Value::Object(_) = doc else {
        issues.push(
            "",
            IssueKind::NotAnObject,
            format!(
                "{MANIFEST_FILE}: the manifest must be a JSON object (got {})",
                json_type(doc)
            ),
        );
        return m;
    };
    // apiVersion decides everything else, so its issue comes first.
    let mut unknown = Issues::default();
    let Some(root) = strict_object(&mut unknown, doc, "", &ROOT_FIELDS) else {
        return m;
    };
    check_api_version(issues, root.raw("apiVersion"));
    issues.list.append(&mut unknown.list);

    match root.trimmed(issues, "name") {
        None => issues.push(
            "name",
            IssueKind::Required,
            "name is required: a plugin name like \"my-plugin\"",
        ),
        Some(name) => {
            if !valid_plugin_name(&name) {
                issues.push(
                    "name",
                    IssueKind::InvalidValue,
                    format!(
                        "invalid plugin name \"{name}\" (want ^[a-zA-Z0-9][a-zA-Z0-9._-]{{0,63}}$)"
                    ),
                );
            }
            m.name = name;
        }
    }
    m.version = root.trimmed(issues, "version");
    m.description = root.trimmed(issues, "description");
    m.homepage = root.trimmed(issues, "homepage");
    m.repository = root.trimmed(issues, "repository");
    if let Some(v) = root.value("requires") {
        m.requires = capability::read_refs(issues, v, "requires", true);
    }
    if let Some(v) = root.value("provides") {
        m.provides = capability::read_refs(issues, v, "provides", false);
    }

    let legacy_skills = path_list(issues, root.value("skills"), "skills");
    let legacy_commands = path_list(issues, root.value("commands"), "commands");
    let legacy_hooks = root
        .map(issues, "hooks")
        .map(|h| hooks::read_hook_map(issues, h, "hooks"))
        .unwrap_or_default();
    let legacy_mcp = root
        .map(issues, "mcpServers")
        .map(|s| mcp::read_server_map(issues, s, "mcpServers"))
        .unwrap_or_default();

    let mut contrib_hooks = BTreeMap::new();
    let mut contrib_mcp = BTreeMap::new();
    if let Some(c) = root.value("contributes")
        && let Some(contributes) = strict_object(issues, c, "contributes", &CONTRIBUTES_FIELDS)
    {
        let list = |issues: &mut Issues, key: &str| {
            path_list(issues, contributes.value(key), &contributes.at(key))
        };
        m.skills = list(issues, "skills");
        m.agents = list(issues, "agents");
        m.commands = list(issues, "commands");
        m.prompts = list(issues, "prompts");
        m.themes = list(issues, "themes");
        for theme in &m.themes {
            if theme
                .split('/')
                .any(|seg| !crate::paths::valid_glob_segment(seg))
            {
                // The list is sorted by now, so no index: the message names the entry.
                issues.push(
                    "contributes.themes",
                    IssueKind::InvalidValue,
                    format!("invalid theme glob \"{theme}\": syntax error in pattern"),
                );
            }
        }
        if let Some(h) = contributes.map(issues, "hooks") {
            contrib_hooks = hooks::read_hook_map(issues, h, "contributes.hooks");
        }
        if let Some(s) = contributes.map(issues, "mcpServers") {
            contrib_mcp = mcp::read_server_map(issues, s, "contributes.mcpServers");
        }
    }
    m.skills = union_sorted(legacy_skills, std::mem::take(&mut m.skills));
    m.commands = union_sorted(legacy_commands, std::mem::take(&mut m.commands));
    m.hooks = merge_hooks(issues, legacy_hooks, contrib_hooks);
    m.mcp_servers = merge_servers(issues, legacy_mcp, contrib_mcp);

    if let Some(rt) = root.value("runtime") {
        m.runtime = runtime::read_runtime(issues, rt);
    }
    m
}

fn check_api_version(issues: &mut Issues, api_version: Option<&Value>) {
    match api_version {
        None | Some(Value::Null) => issues.push(
            "apiVersion",
            IssueKind::MissingApiVersion,
            format!("{MANIFEST_FILE}: missing apiVersion; native manifests must declare \"{API_VERSION}\""),
        ),
        Some(Value::String(s)) if s.trim() == API_VERSION => {}
        Some(Value::String(s)) => issues.push(
            "apiVersion",
            IssueKind::UnsupportedApiVersion { found: s.trim().to_string() },
            format!(
                "{MANIFEST_FILE}: unsupported apiVersion \"{}\": want exact {API_VERSION}",
                s.trim()
            ),
        ),
        Some(_) => issues.push(
            "apiVersion",
            IssueKind::ApiVersionNotString,
            format!("{MANIFEST_FILE}: apiVersion must be a string"),
        ),
    }
}

/// A path list in any of its three forms: `"dir"`, `["a","b"]`,
/// `[{"path":"a"}]` (object form strict). Cleaned, deduplicated, sorted.
fn path_list(issues: &mut Issues, value: Option<&Value>, path: &str) -> Vec<String> {
    let mut raw: Vec<(String, String)> = Vec::new();
    match value {
        None => return Vec::new(),
        Some(Value::String(s)) => raw.push((path.to_string(), s.clone())),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let at = index(path, i);
                match item {
                    Value::String(s) => raw.push((at, s.clone())),
                    Value::Object(_) => {
                        let before = issues.list.len();
                        if let Some(obj) = strict_object(issues, item, &at, &["path"]) {
                            let typo_only = issues.list.len() > before && !obj.has("path");
                            // `{"paht": "x"}`: the typo is the error; a second
                            // "path is required" would only repeat it.
                            if !typo_only {
                                raw.push((at, obj.str(issues, "path").unwrap_or_default()));
                            }
                        }
                    }
                    other => issues.push(
                        &at,
                        IssueKind::WrongType,
                        format!(
                            "{at} must be a path string or {{\"path\": …}} object (got {})",
                            json_type(other)
                        ),
                    ),
                }
            }
        }
        Some(other) => {
            issues.push(
                path,
                IssueKind::WrongType,
                format!(
                    "{path} must be a path string, string array, or object array (got {})",
                    json_type(other)
                ),
            );
            return Vec::new();
        }
    }
    let mut out = Vec::new();
    for (at, p) in raw {
        match crate::paths::clean_relative(&p) {
            Ok(clean) => out.push(clean),
            Err(e) => {
                let kind = match e {
                    crate::paths::PathRuleError::Blank => IssueKind::Required,
                    crate::paths::PathRuleError::Escapes(_) => IssueKind::PathNotRelative,
                };
                issues.push(&at, kind, format!("{at}: {e}"));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn union_sorted(mut a: Vec<String>, b: Vec<String>) -> Vec<String> {
    a.extend(b);
    a.sort();
    a.dedup();
    a
}

/// Union legacy `hooks` with `contributes.hooks`: identical entries collapse,
/// the same (event, command/contextFile) defined differently is an error.
fn merge_hooks(
    issues: &mut Issues,
    mut legacy: BTreeMap<String, Vec<HookEntry>>,
    contrib: BTreeMap<String, Vec<HookEntry>>,
) -> BTreeMap<String, Vec<HookEntry>> {
    for (event, entries) in contrib {
        for (i, hook) in entries.into_iter().enumerate() {
            let list = legacy.entry(event.clone()).or_default();
            match list.iter().find(|h| h.identity() == hook.identity()) {
                Some(existing) if *existing == hook => {}
                Some(_) => {
                    let what = hook
                        .command
                        .as_deref()
                        .or(hook.context_file.as_deref())
                        .unwrap_or_default();
                    issues.push(
                        &index(&child("contributes.hooks", &event), i),
                        IssueKind::Conflict,
                        format!(
                            "hook \"{what}\" (event {event}) is defined differently in hooks and contributes.hooks"
                        ),
                    );
                }
                None => list.push(hook),
            }
        }
    }
    legacy
}

fn merge_servers(
    issues: &mut Issues,
    mut legacy: BTreeMap<String, McpServerEntry>,
    contrib: BTreeMap<String, McpServerEntry>,
) -> BTreeMap<String, McpServerEntry> {
    for (name, server) in contrib {
        match legacy.get(&name) {
            Some(existing) if *existing == server => {}
            Some(_) => issues.push(
                &child("contributes.mcpServers", &name),
                IssueKind::Conflict,
                format!(
                    "MCP server \"{name}\" is defined differently in mcpServers and contributes.mcpServers"
                ),
            ),
            None => {
                legacy.insert(name, server);
            }
        }
    }
    legacy
}

impl std::str::FromStr for Manifest {
    type Err = ManifestError;

    fn from_str(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::from_slice(text.as_bytes())
    }
}

#[cfg(test)]
mod tests;
