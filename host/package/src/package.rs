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
    /// A Claude Code mod's module (`hooks/hooks.json` `"modules"`).
    pub module: Option<crate::mods::ModModule>,
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
    /// Calls to this server run one at a time (`serial: true`): for stateful
    /// servers whose calls must not interleave.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub serial: bool,
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
    let io_err = |path: PathBuf| move |source| PackageError::Io { path, source };
    let meta = std::fs::metadata(root).map_err(io_err(root.to_path_buf()))?;
    if !meta.is_dir() {
        return Err(PackageError::Io {
            path: root.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
        });
    }
    let native = root.join(crate::manifest::MANIFEST_FILE);
    match std::fs::read(&native) {
        Ok(bytes) => return load_native(root, &bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(native)(e)),
    }
    for (kind, rel) in [
        (ManifestKind::Codex, CODEX_MANIFEST),
        (ManifestKind::Claude, CLAUDE_MANIFEST),
    ] {
        match std::fs::symlink_metadata(root.join(rel)) {
            Ok(_) => return crate::compat::load(root, kind, rel),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_err(root.join(rel))(e)),
        }
    }
    Err(PackageError::NoManifest(root.to_path_buf()))
}

/// Codex manifest path, relative to the plugin root.
pub const CODEX_MANIFEST: &str = ".codex-plugin/plugin.json";
/// Claude manifest path, relative to the plugin root.
pub const CLAUDE_MANIFEST: &str = ".claude-plugin/plugin.json";

/// A native package: strict parse, then the on-disk path rules; every
/// problem from both is reported together.
fn load_native(root: &Path, bytes: &[u8]) -> Result<LoadedPackage, PackageError> {
    use crate::manifest::{MANIFEST_FILE, Manifest, ManifestError};

    let (manifest, mut issues) = Manifest::parse_collecting(bytes);
    let report = crate::paths::check_manifest_paths(root, &manifest);
    issues.extend(report.issues);
    if !issues.is_empty() {
        return Err(PackageError::Manifest(ManifestError::new(issues)));
    }
    let hooks = manifest
        .hooks
        .iter()
        .flat_map(|(event, entries)| {
            entries.iter().map(move |h| Hook {
                event: event.clone(),
                matcher: h.matcher.clone(),
                command: h.command.clone(),
                args: h.args.clone(),
                context_file: h.context_file.clone(),
                shell: h.shell.clone(),
                shell_command: h.shell_command,
                is_async: h.is_async,
                payload_format: h.payload_format.clone(),
                description: h.description.clone(),
                timeout_ms: h.timeout,
                cwd: h.cwd.clone(),
                env: h.env.clone(),
                source: MANIFEST_FILE.to_string(),
            })
        })
        .collect();
    let mcp_servers = manifest
        .mcp_servers
        .iter()
        .map(|(name, s)| McpServer {
            name: name.clone(),
            // The parser refused unknown transports, so this is always set.
            transport: s.transport().unwrap_or("stdio").to_string(),
            command: s.command.clone(),
            args: s.args.clone(),
            url: s.url.clone(),
            env: s.env.clone(),
            headers: s.headers.clone(),
            display_name: s.display_name.clone(),
            description: s.description.clone(),
            // Opt-in: a server starts on its own only when the manifest says so.
            auto_start: s.auto_start.unwrap_or(false),
            load: s.load.clone(),
            imported: s.imported,
            serial: s.serial,
        })
        .collect();
    let mut inventory = Inventory {
        skill_roots: manifest.skills.clone(),
        agent_roots: manifest.agents.clone(),
        command_roots: manifest.commands.clone(),
        prompt_roots: manifest.prompts.clone(),
        hooks,
        mcp_servers,
        themes: report
            .themes
            .into_iter()
            .map(|t| Theme {
                name: t.name,
                path: t.path,
            })
            .collect(),
        ..Inventory::default()
    };
    // Skills, commands, prompts and agents inside the declared roots.
    let discovery = crate::inventory::discover(root, &mut inventory)?;
    let mut warnings = report.warnings;
    warnings.extend(
        manifest
            .hooks
            .keys()
            .filter(|event| !crate::manifest::HOOK_EVENTS.contains(&event.as_str()))
            .map(|event| format!("hooks.{event}: unknown event; these hooks will not run")),
    );
    warnings.extend(discovery.warnings);
    warnings.extend(
        discovery
            .skipped
            .into_iter()
            .map(|s| format!("{}: {}", s.path.unwrap_or_default(), s.reason)),
    );
    let compatibility = Compatibility {
        status: CompatibilityStatus::Full,
        mapped: native_mapped(&inventory),
        skipped: Vec::new(),
    };
    Ok(LoadedPackage {
        root: root.to_path_buf(),
        kind: ManifestKind::Reasonix,
        manifest_path: MANIFEST_FILE.to_string(),
        name: manifest.name.clone(),
        version: manifest.version.clone(),
        description: manifest.description.clone(),
        homepage: manifest.homepage.clone(),
        repository: manifest.repository.clone(),
        native: Some(manifest),
        inventory,
        compatibility,
        warnings,
    })
}

/// Mapped kinds of a native package, in the order skills, commands, agents,
/// hooks, mcp, each only when something of that kind was found (prompts are
/// commands-shaped and count as commands).
fn native_mapped(inv: &Inventory) -> Vec<String> {
    [
        ("skills", inv.skills.len()),
        ("commands", inv.commands.len() + inv.prompts.len()),
        ("agents", inv.agents.len()),
        ("hooks", inv.hooks.len()),
        ("mcp", inv.mcp_servers.len()),
    ]
    .into_iter()
    .filter(|(_, count)| *count > 0)
    .map(|(kind, _)| kind.to_string())
    .collect()
}
