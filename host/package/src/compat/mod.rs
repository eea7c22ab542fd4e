//! Claude (`.claude-plugin/plugin.json`) and Codex (`.codex-plugin/plugin.json`)
//! packages: read leniently, mapped onto Reasonix constructs, with every
//! entry that could not be mapped reported as skipped.
//!
//! Beyond upstream (PLUGIN_PACKAGES.md §e), shapes that real packages use but
//! upstream silently drops are mapped: the flat `.mcp.json` (no `mcpServers`
//! wrapper), the Codex `mcp_servers` wrapper, a root-level `hooks.json`, and
//! manifest `hooks` / `mcpServers` / `agents` fields (paths or inline
//! objects). Codex `commands/` and `agents/` directories, which the Codex
//! contract does not load by convention, are reported as skipped.

pub mod encoding;
pub mod hooks;
pub mod json;
pub mod mcp;
pub mod paths;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::inventory::{self, names};
use crate::{
    Compatibility, CompatibilityStatus, Hook, Inventory, LoadedPackage, ManifestKind, PackageError,
    SkippedCapability,
};

/// Manifest file of a Codex package.
pub const CODEX_MANIFEST: &str = ".codex-plugin/plugin.json";
/// Manifest file of a Claude package.
pub const CLAUDE_MANIFEST: &str = ".claude-plugin/plugin.json";

const CLAUDE_SETTINGS: &str = ".claude/settings.json";
const CLAUDE_HOOKS: &str = "hooks/hooks.json";
const ROOT_HOOKS: &str = "hooks.json";
const MCP_FILE: &str = ".mcp.json";
const CODEX_SESSION_START: &str = "hooks/session-start-codex";
const CLAUDE_INSTRUCTIONS: &str = "CLAUDE.md";
const APPS_FILE: &str = ".app.json";

/// Read a Codex or Claude package whose manifest is `manifest_path` (relative to `root`).
pub fn load(
    root: &Path,
    kind: ManifestKind,
    manifest_path: &str,
) -> Result<LoadedPackage, PackageError> {
    let manifest_file = root.join(manifest_path);
    let invalid = |message: String| PackageError::Invalid {
        path: manifest_file.clone(),
        message,
    };
    let doc = match json::read_file(&manifest_file) {
        Ok(Some(doc)) => doc,
        Ok(None) => {
            return Err(PackageError::Io {
                path: manifest_file.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        Err(e) => return Err(invalid(e)),
    };
    let Value::Object(manifest) = &doc else {
        return Err(invalid("manifest must be a JSON object".into()));
    };
    let text_field = |key: &str| -> Result<Option<String>, PackageError> {
        Ok(json::get_str(manifest, key)
            .map_err(invalid)?
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned))
    };
    let name = text_field("name")?.unwrap_or_default();
    if !names::is_valid_name(&name) {
        return Err(invalid(format!("invalid plugin name {name:?}")));
    }
    let version = text_field("version")?;
    let description = text_field("description")?;
    let homepage = text_field("homepage")?;
    let mut warnings = Vec::new();
    let repository = repository_field(manifest, &mut warnings);

    let skill_roots = paths::path_list(json::get(manifest, "skills"), "skills").map_err(invalid)?;
    let command_roots =
        paths::path_list(json::get(manifest, "commands"), "commands").map_err(invalid)?;
    let declared_agents = match json::get(manifest, "agents") {
        // A non-path `agents` value (Codex/Claude variants use objects) is not ours to read.
        Some(v) if v.is_string() || v.is_array() => {
            paths::path_list(Some(v), "agents").map_err(invalid)?
        }
        _ => Vec::new(),
    };

    let mut inventory = Inventory {
        skill_roots,
        command_roots,
        agent_roots: declared_agents,
        ..Default::default()
    };
    let mut skipped: Vec<SkippedCapability> = Vec::new();
    let mut hooks = hooks::HookSet::default();
    report_apps(root, manifest, manifest_path, &mut skipped);

    match kind {
        ManifestKind::Claude => apply_claude_conventions(root, &mut inventory),
        ManifestKind::Codex => {
            report_codex_conventions(root, &inventory, &mut skipped);
            codex_session_hooks(root, &name, &mut hooks);
        }
        ManifestKind::Reasonix => {
            return Err(invalid(
                "compat::load reads Codex and Claude manifests only".into(),
            ));
        }
    }
    for list in [
        &mut inventory.skill_roots,
        &mut inventory.command_roots,
        &mut inventory.agent_roots,
    ] {
        list.sort();
        list.dedup();
    }

    // Hook files: the two conventional ones, a root-level hooks.json, and
    // whatever the manifest's `hooks` field names or holds inline.
    let mut hook_files = vec![CLAUDE_SETTINGS.to_owned(), CLAUDE_HOOKS.to_owned()];
    if root.join(ROOT_HOOKS).is_file() {
        hook_files.push(ROOT_HOOKS.to_owned());
    }
    let mut inline_hooks = None;
    match json::get(manifest, "hooks") {
        Some(Value::Object(obj)) if !obj.is_empty() => inline_hooks = Some(obj.clone()),
        Some(v @ (Value::String(_) | Value::Array(_))) => {
            match paths::path_list(Some(v), "hooks") {
                Ok(list) => hook_files.extend(list),
                Err(e) => skipped.push(issue("hooks", manifest_path, e)),
            }
        }
        _ => {}
    }
    let mut read_files = Vec::new();
    for rel in hook_files {
        if read_files.contains(&rel) {
            continue;
        }
        read_files.push(rel.clone());
        match json::read_file(&root.join(&rel)) {
            Ok(None) if rel == CLAUDE_SETTINGS || rel == CLAUDE_HOOKS => {}
            Ok(None) => skipped.push(issue("hooks", &rel, "declared hook file does not exist")),
            Ok(Some(doc)) => {
                let had_hooks = hooks::import_document(&doc, &rel, &mut hooks, &mut skipped);
                if !had_hooks && rel != CLAUDE_SETTINGS && rel != CLAUDE_HOOKS {
                    skipped.push(issue(
                        "hooks",
                        &rel,
                        "no Claude \"hooks\" object in this file; nothing was imported",
                    ));
                }
            }
            Err(e) => skipped.push(issue("hooks", &rel, e)),
        }
    }
    if let Some(obj) = inline_hooks {
        // Inline hooks are the event map itself (Claude's plugin.json form).
        let doc = Value::Object(serde_json::Map::from_iter([(
            "hooks".to_owned(),
            Value::Object(obj),
        )]));
        hooks::import_document(&doc, manifest_path, &mut hooks, &mut skipped);
    }

    let mut servers = BTreeMap::new();
    import_mcp(
        root,
        manifest,
        manifest_path,
        &mut servers,
        &mut skipped,
        &mut warnings,
    );

    inventory.hooks = hooks.into_vec();
    inventory.mcp_servers = servers.into_values().collect();

    let discovery = inventory::discover(root, &mut inventory)?;
    warnings.extend(discovery.warnings);
    skipped.extend(discovery.skipped);

    let compatibility = compatibility_for(kind, &inventory, skipped);
    Ok(LoadedPackage {
        root: root.to_path_buf(),
        kind,
        manifest_path: manifest_path.to_owned(),
        name,
        version,
        description,
        homepage,
        repository,
        native: None,
        inventory,
        compatibility,
        warnings,
    })
}

fn issue(capability: &str, path: &str, reason: impl Into<String>) -> SkippedCapability {
    SkippedCapability {
        capability: capability.to_owned(),
        path: Some(path.to_owned()),
        reason: reason.into(),
    }
}

/// `repository` as a string, or the `url` of an npm-style `{type, url}` object.
fn repository_field(
    manifest: &serde_json::Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Option<String> {
    match json::get(manifest, "repository") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Some(Value::Object(obj)) => match json::get(obj, "url") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            _ => {
                warnings.push("repository: object without a \"url\" string; ignored".into());
                None
            }
        },
        None | Some(Value::Null) | Some(Value::String(_)) => None,
        Some(_) => {
            warnings.push("repository: not a string; ignored".into());
            None
        }
    }
}

/// Codex apps (`"apps": "./.app.json"`, ChatGPT app connectors) have no
/// Reasonix equivalent: say so instead of dropping them silently, so an
/// apps-only package reads `none` with a reason.
fn report_apps(
    root: &Path,
    manifest: &serde_json::Map<String, Value>,
    manifest_path: &str,
    skipped: &mut Vec<SkippedCapability>,
) {
    const WHY: &str = "apps are not supported: app connectors have no Reasonix equivalent";
    match json::get(manifest, "apps") {
        None | Some(Value::Null) => {
            if root.join(APPS_FILE).is_file() {
                skipped.push(issue("apps", APPS_FILE, WHY));
            }
        }
        Some(v @ (Value::String(_) | Value::Array(_))) => match paths::path_list(Some(v), "apps") {
            Ok(list) if !list.is_empty() => {
                for rel in list {
                    skipped.push(issue("apps", &rel, WHY));
                }
            }
            _ => skipped.push(issue("apps", manifest_path, WHY)),
        },
        Some(_) => skipped.push(issue("apps", manifest_path, WHY)),
    }
}

/// Claude's own auto-discovery: `skills/` and `.claude/skills/` when the
/// manifest declares no skills; `commands/`, `.claude/commands/` and
/// `agents/` whenever they hold something loadable.
fn apply_claude_conventions(root: &Path, inventory: &mut Inventory) {
    if inventory.skill_roots.is_empty() {
        for rel in ["skills", ".claude/skills"] {
            if dir_has_skill_dirs(&root.join(rel)) {
                inventory.skill_roots.push(rel.to_owned());
            }
        }
    }
    for rel in ["commands", ".claude/commands"] {
        if inventory::commands::dir_has_commands(root, rel) {
            inventory.command_roots.push(rel.to_owned());
        }
    }
    if dir_has_markdown(&root.join("agents")) {
        inventory.agent_roots.push("agents".to_owned());
    }
}

/// Codex packages get no convention fallbacks; what would have been picked up
/// by Claude's conventions is reported instead of silently dropped.
fn report_codex_conventions(
    root: &Path,
    inventory: &Inventory,
    skipped: &mut Vec<SkippedCapability>,
) {
    if inventory.command_roots.is_empty() {
        for rel in ["commands", ".claude/commands"] {
            if inventory::commands::dir_has_commands(root, rel) {
                skipped.push(issue(
                    "commands",
                    rel,
                    "Codex manifests do not load command directories by convention; declare it in the manifest's \"commands\" field to map it",
                ));
            }
        }
    }
    if inventory.agent_roots.is_empty() && dir_has_markdown(&root.join("agents")) {
        skipped.push(issue(
            "agents",
            "agents",
            "Codex manifests do not load agents/ by convention; declare it in the manifest's \"agents\" field to map it",
        ));
    }
}

/// `hooks/session-start-codex` and the root `CLAUDE.md` (Codex packages only).
fn codex_session_hooks(root: &Path, name: &str, hooks: &mut hooks::HookSet) {
    // In-tree links count as the files they name, exactly as the copier
    // materialises them: a plan read from the source and the re-count on
    // the copy must agree (a `CLAUDE.md -> AGENTS.md` link is common).
    let script = root.join(CODEX_SESSION_START);
    if crate::paths::is_in_tree_file(root, CODEX_SESSION_START) {
        hooks.add(Hook {
            event: "SessionStart".into(),
            matcher: None,
            command: Some(script.to_string_lossy().into_owned()),
            args: None,
            context_file: None,
            shell: None,
            shell_command: false,
            is_async: false,
            payload_format: None,
            description: Some(format!("Codex-compatible session start hook from {name}")),
            timeout_ms: None,
            cwd: Some(root.to_string_lossy().into_owned()),
            env: BTreeMap::new(),
            source: CODEX_SESSION_START.into(),
        });
    }
    if crate::paths::is_in_tree_file(root, CLAUDE_INSTRUCTIONS) {
        hooks.add(Hook {
            event: "SessionStart".into(),
            matcher: None,
            command: None,
            args: None,
            context_file: Some(CLAUDE_INSTRUCTIONS.into()),
            shell: None,
            shell_command: false,
            is_async: false,
            payload_format: None,
            description: Some(format!("Plugin CLAUDE.md startup context from {name}")),
            timeout_ms: None,
            cwd: Some(".".into()),
            env: BTreeMap::new(),
            source: CLAUDE_INSTRUCTIONS.into(),
        });
    }
}

/// `.mcp.json` in any of its shapes, plus the manifest's `mcpServers` field
/// (a path, a list of paths, or an inline server map).
fn import_mcp(
    root: &Path,
    manifest: &serde_json::Map<String, Value>,
    manifest_path: &str,
    servers: &mut BTreeMap<String, crate::McpServer>,
    skipped: &mut Vec<SkippedCapability>,
    warnings: &mut Vec<String>,
) {
    let mut files = vec![MCP_FILE.to_owned()];
    let mut inline = None;
    for key in ["mcpServers", "mcp_servers"] {
        match json::get(manifest, key) {
            Some(Value::Object(obj)) if !obj.is_empty() => inline = Some(obj.clone()),
            Some(v @ (Value::String(_) | Value::Array(_))) => {
                match paths::path_list(Some(v), key) {
                    Ok(list) => files.extend(list),
                    Err(e) => skipped.push(issue("mcp", manifest_path, e)),
                }
            }
            _ => {}
        }
    }
    let mut seen = Vec::new();
    for rel in files {
        if seen.contains(&rel) {
            continue;
        }
        seen.push(rel.clone());
        match json::read_file(&root.join(&rel)) {
            Ok(None) if rel == MCP_FILE => {}
            Ok(None) => skipped.push(issue("mcp", &rel, "declared MCP file does not exist")),
            Ok(Some(doc)) => match mcp::server_map(&doc) {
                Some((map, shape)) => {
                    match shape {
                        mcp::McpShape::Flat => warnings.push(format!(
                            "{rel}: servers declared at the top level without an \"mcpServers\" wrapper; imported as written"
                        )),
                        mcp::McpShape::CodexWrapped => warnings.push(format!(
                            "{rel}: servers declared under Codex's \"mcp_servers\" key; imported as written"
                        )),
                        mcp::McpShape::Wrapped => {}
                    }
                    mcp::import_servers(map, &rel, shape, servers, skipped);
                }
                None => {
                    if !matches!(&doc, Value::Object(o) if o.is_empty()) {
                        skipped.push(issue(
                            "mcp",
                            &rel,
                            "no MCP server map found (expected \"mcpServers\" or server objects)",
                        ));
                    }
                }
            },
            Err(e) => skipped.push(issue("mcp", &rel, e)),
        }
    }
    if let Some(obj) = inline {
        mcp::import_servers(
            &obj,
            manifest_path,
            mcp::McpShape::Wrapped,
            servers,
            skipped,
        );
    }
}

/// Whether `dir` holds at least one `<name>/SKILL.md`.
fn dir_has_skill_dirs(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.path().is_dir() && e.path().join("SKILL.md").is_file())
    })
}

fn dir_has_markdown(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(Result::ok).any(|e| {
            e.path().is_file()
                && e.path()
                    .extension()
                    .is_some_and(|x| x.eq_ignore_ascii_case("md"))
        })
    })
}

/// `mapped` lists the kinds with at least one entry, in the order skills,
/// commands, agents, hooks, mcp; `none` for a non-native package with nothing
/// mapped, `partial` when anything was skipped, else `full`.
pub fn compatibility_for(
    kind: ManifestKind,
    inventory: &Inventory,
    skipped: Vec<SkippedCapability>,
) -> Compatibility {
    let counts = [
        ("skills", inventory.skills.len()),
        (
            "commands",
            inventory.commands.len() + inventory.prompts.len(),
        ),
        ("agents", inventory.agents.len()),
        ("hooks", inventory.hooks.len()),
        ("mcp", inventory.mcp_servers.len()),
    ];
    let mapped: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, _)| (*k).to_owned())
        .collect();
    let status = if mapped.is_empty() && kind != ManifestKind::Reasonix {
        CompatibilityStatus::None
    } else if !skipped.is_empty() {
        CompatibilityStatus::Partial
    } else {
        CompatibilityStatus::Full
    };
    Compatibility {
        status,
        mapped,
        skipped,
    }
}

#[cfg(test)]
mod tests;
