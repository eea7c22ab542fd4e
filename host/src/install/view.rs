//! The view of one installed package that frontends render: the rows of
//! Studio's `GET /plugins` (PLUGIN_PACKAGES §a.13), plus what `plugin show`
//! adds (state, commit, tree digest, argument hints, theme ids).
//!
//! A row whose tree no longer parses is still a row, with `error` set: it is
//! installed, and it is what the user came to fix. Warnings are the
//! package's own, then the theme reader's (§a.12, disabled packages
//! included), then the hooks that cannot run on this machine.
use std::path::Path;

use reasonix_package::{LoadedPackage, SkippedCapability};
use serde::Serialize;

use super::installed::Installed;
use super::plan::{RuntimePlanInfo, manifest_kind_str, runtime_info};

/// One skill, agent, command, prompt or theme a package contributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemView {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How the user invokes it: `/<plugin>:<name>`, `/<plugin>:agent:<name>`,
    /// or a theme's id `plugin:<plugin>:<theme>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
    /// Skills: `inline` or `subagent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_as: Option<String>,
    /// Commands and prompts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// Themes: the file, relative to the package root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Themes: why the theme reader refuses it (it is not offered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookView {
    pub event: String,
    #[serde(rename = "match", skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An MCP server entry. Only what a reader needs to recognise it: no
/// arguments, environment or headers (they carry credentials).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub transport: String,
    /// Masked (`reasonix_package::mask`), like every display of an entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub env: std::collections::BTreeMap<String, String>,
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
    pub auto_start: bool,
    pub serial: bool,
}

/// One installed package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginView {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The resolved root directory.
    pub root: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_kind: Option<String>,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// `enabled`, `disabled`, or the registry's status (`disabled_incompatible`).
    pub state: String,
    /// `copy` or `link`.
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_digest: Option<String>,
    /// `full`, `partial` or `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedCapability>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<ItemView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<ItemView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<ItemView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<ItemView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub themes: Vec<ItemView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookView>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerView>,
    /// The code-extension runtime: `fullTrust` for a native sidecar, a
    /// `sandbox` block for a wasm component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimePlanInfo>,
    /// A Claude Code mod (FULL TRUST): its events and `$` calls read from
    /// the module's syntax tree, and what could not be listed.
    #[serde(rename = "mod", skip_serializing_if = "Option::is_none")]
    pub mod_preview: Option<reasonix_package::mods::preview::ModPreview>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn item(name: &str, description: &Option<String>) -> ItemView {
    ItemView {
        name: name.to_string(),
        description: description.clone().filter(|d| !d.is_empty()),
        invocation: None,
        run_as: None,
        argument_hint: None,
        path: None,
        rejected: None,
    }
}

/// The view of one installed package.
pub fn plugin_view(installed: &Installed) -> PluginView {
    let e = &installed.entry;
    let mut view = PluginView {
        name: e.name.clone(),
        version: e.version.clone().filter(|v| !v.is_empty()),
        description: e.description.clone().filter(|d| !d.is_empty()),
        source: e.source.clone().filter(|s| !s.is_empty()),
        root: installed.root.to_string_lossy().into_owned(),
        manifest_kind: e.manifest_kind.clone(),
        enabled: e.enabled,
        status: e.status.clone().filter(|s| !s.is_empty()),
        status_reason: e.status_reason.clone().filter(|s| !s.is_empty()),
        state: installed.state(),
        mode: if e.is_link() { "link" } else { "copy" }.into(),
        commit: e.commit.clone(),
        tree_digest: e.tree_digest.clone(),
        compatibility: None,
        skipped: Vec::new(),
        skills: Vec::new(),
        agents: Vec::new(),
        commands: Vec::new(),
        prompts: Vec::new(),
        themes: Vec::new(),
        hooks: Vec::new(),
        mcp_servers: Vec::new(),
        runtime: None,
        mod_preview: None,
        warnings: Vec::new(),
        error: None,
    };
    let pkg = match &installed.package {
        Ok(pkg) => pkg,
        Err(err) => {
            view.error = Some(err.clone());
            return view;
        }
    };
    let plugin = &e.name;
    let inv = &pkg.inventory;
    view.manifest_kind = Some(manifest_kind_str(pkg.kind).into());
    view.version = view.version.or_else(|| pkg.version.clone());
    view.description = view.description.or_else(|| pkg.description.clone());
    view.compatibility = Some(
        match pkg.compatibility.status {
            reasonix_package::CompatibilityStatus::Full => "full",
            reasonix_package::CompatibilityStatus::Partial => "partial",
            reasonix_package::CompatibilityStatus::None => "none",
        }
        .into(),
    );
    view.skipped = pkg.compatibility.skipped.clone();
    view.skills = inv
        .skills
        .iter()
        .map(|s| ItemView {
            invocation: Some(format!("/{plugin}:{}", s.name)),
            run_as: Some(s.run_as.clone()),
            ..item(&s.name, &s.description)
        })
        .collect();
    view.agents = inv
        .agents
        .iter()
        .map(|a| ItemView {
            invocation: Some(format!("/{plugin}:agent:{}", a.name)),
            ..item(&a.name, &a.description)
        })
        .collect();
    let commands = |list: &[reasonix_package::Command]| -> Vec<ItemView> {
        list.iter()
            .map(|c| ItemView {
                invocation: Some(format!("/{plugin}:{}", c.name)),
                argument_hint: c.argument_hint.clone().filter(|h| !h.is_empty()),
                ..item(&c.name, &c.description)
            })
            .collect()
    };
    view.commands = commands(&inv.commands);
    view.prompts = commands(&inv.prompts);
    view.themes = inv
        .themes
        .iter()
        .map(|t| ItemView {
            invocation: Some(format!("plugin:{plugin}:{}", t.name)),
            path: Some(t.path.clone()),
            rejected: reasonix_package::themes::check(&installed.root, t).rejected,
            ..item(&t.name, &None)
        })
        .collect();
    view.hooks = inv
        .hooks
        .iter()
        .map(|h| HookView {
            event: h.event.clone(),
            matcher: h.matcher.clone().filter(|m| !m.is_empty()),
            command: h.command.clone(),
            context_file: h.context_file.clone(),
            description: h.description.clone(),
        })
        .collect();
    view.mcp_servers = inv
        .mcp_servers
        .iter()
        .map(|m| {
            let shown = m.display();
            McpServerView {
                name: m.name.clone(),
                display_name: m.display_name.clone(),
                description: m.description.clone(),
                transport: m.transport.clone(),
                command: shown.command,
                args: shown.args,
                url: shown.url,
                env: shown.env,
                headers: shown.headers,
                auto_start: m.auto_start,
                serial: m.serial,
            }
        })
        .collect();
    view.runtime = runtime_info(pkg);
    view.mod_preview = super::plan::mod_preview(pkg);
    view.warnings = pkg.warnings.clone();
    view.warnings.extend(theme_warnings(&installed.root, pkg));
    for issue in crate::hooks::check_hook_runtime(pkg) {
        view.warnings.push(if issue.prerequisite {
            format!("{} hook cannot run here: {}", issue.event, issue.message)
        } else {
            format!("{} hook: {}", issue.event, issue.message)
        });
    }
    view
}

/// Warnings for declared themes the theme reader rejects or whose color
/// tokens it drops (§a.12, `reasonix_package::themes`). They never change a
/// verdict; paths are relative to the package root.
pub fn theme_warnings(root: &Path, pkg: &LoadedPackage) -> Vec<String> {
    let mut out = Vec::new();
    for theme in &pkg.inventory.themes {
        let check = reasonix_package::themes::check(root, theme);
        if let Some(why) = check.rejected {
            out.push(format!("theme {}: rejected: {why}", theme.path));
        }
        for dropped in check.dropped {
            out.push(format!("theme {}: {dropped}", theme.path));
        }
    }
    out
}
