//! The package model shared by every manifest kind.
//!
//! Field names here are the contract with the host crate; extend, don't rename.

use std::path::{Path, PathBuf};

/// Which manifest a package was read from. Lookup order is native, Codex, Claude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ManifestKind {
    Reasonix,
    Codex,
    Claude,
}

/// `full` / `partial` / `none` (PLUGIN_PACKAGES.md §a.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompatibilityStatus {
    Full,
    Partial,
    None,
}

/// An entry the package declares that could not be mapped, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SkippedCapability {
    pub capability: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Compatibility {
    pub status: CompatibilityStatus,
    /// In the order skills, commands, agents, hooks, mcp (only kinds with count > 0).
    pub mapped: Vec<String>,
    pub skipped: Vec<SkippedCapability>,
}

/// A plugin package as read from its root directory.
#[derive(Debug, Clone)]
pub struct LoadedPackage {
    /// The directory the package was read from (not canonicalised).
    pub root: PathBuf,
    pub kind: ManifestKind,
    /// Path of the manifest file, relative to `root` (e.g. `reasonix-plugin.json`).
    pub manifest_path: String,
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    pub homepage: Option<String>,
    pub repository: Option<String>,
    /// The strict native manifest; `None` for Codex and Claude packages.
    pub native: Option<crate::manifest::Manifest>,
    pub inventory: Inventory,
    pub compatibility: Compatibility,
    /// Non-fatal findings (missing declared paths, theme globs with no match…).
    pub warnings: Vec<String>,
}

/// What a package contributes, after merging and mapping.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Declared skill roots, relative to the package root, cleaned and sorted.
    pub skill_roots: Vec<String>,
    pub skills: Vec<Skill>,
    pub agent_roots: Vec<String>,
    pub agents: Vec<Agent>,
    pub command_roots: Vec<String>,
    pub commands: Vec<Command>,
    pub prompt_roots: Vec<String>,
    pub prompts: Vec<Command>,
    pub hooks: Vec<Hook>,
    pub mcp_servers: Vec<McpServer>,
    pub themes: Vec<Theme>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: Option<String>,
    /// `inline` or `subagent`.
    pub run_as: String,
    /// Path of the skill file relative to the package root.
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub name: String,
    pub description: Option<String>,
    pub model: Option<String>,
    /// Reasonix tool names (mapped from Claude names where needed).
    pub tools: Vec<String>,
    pub path: String,
}

/// A slash command or prompt template (`/<plugin>:<name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Namespaced with `:` for nested directories (`git:commit`).
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub path: String,
}

/// A lifecycle hook, in the form the hook runner executes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Hook {
    /// Event name (`SessionStart`, `PreToolUse`, …).
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `Some` (even empty) selects exec form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_file: Option<String>,
    /// Shell-form interpreter (`""`, `auto`, `bash`, `powershell`, `pwsh`, `cmd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Legacy spelling of shell form.
    #[serde(default)]
    pub shell_command: bool,
    #[serde(default, rename = "async")]
    pub is_async: bool,
    /// `claude` for imported Claude/Codex hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    /// The file the hook was declared in, relative to the package root.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct McpServer {
    /// Stable id (valid plugin-name form).
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub auto_start: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    pub imported: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    /// File stem, or the parent directory name for `theme.json`.
    pub name: String,
    pub path: String,
}

/// Why a package could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error(
        "{0}: no plugin manifest (looked for reasonix-plugin.json, .codex-plugin/plugin.json, .claude-plugin/plugin.json)"
    )]
    NoManifest(PathBuf),
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    /// A Codex/Claude manifest or package file that cannot be used at all
    /// (bad JSON, invalid plugin name, conflicting agent names, …).
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Read the package at `root`: native manifest first, then Codex, then Claude.
/// A manifest that exists but does not parse is an error; only a missing file
/// falls through to the next kind.
pub fn load_package(root: &Path) -> Result<LoadedPackage, PackageError> {
    let _ = root;
    Err(PackageError::NoManifest(root.to_path_buf()))
}
