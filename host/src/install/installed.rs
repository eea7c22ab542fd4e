//! Installed packages as the registry names them, each read from its root.
//! An entry whose root is missing is excluded with a repair warning; one
//! whose tree no longer parses is kept, marked `disabled_incompatible`.
use std::path::PathBuf;

use reasonix_package::{LoadedPackage, load_package};

use super::error::{ErrorCode, InstallError, InstallResult};
use super::publish::recover;
use crate::home::ReasonixHome;
use crate::registry::{PluginRegistry, RegistryEntry};

#[derive(Debug)]
pub struct Installed {
    pub entry: RegistryEntry,
    pub root: PathBuf,
    /// The package read from `root`, or why it could not be read.
    pub package: Result<LoadedPackage, String>,
}

impl Installed {
    /// `enabled`, `disabled`, the registry's `status`, or `disabled_incompatible`.
    pub fn state(&self) -> String {
        if let Some(status) = self.entry.status.as_ref().filter(|s| !s.is_empty()) {
            return status.clone();
        }
        if self.entry.enabled && self.package.is_err() {
            return "disabled_incompatible".into();
        }
        if self.entry.enabled {
            "enabled".into()
        } else {
            "disabled".into()
        }
    }
}

impl Installed {
    /// What the package contributes, on one line (the fifth column of `plugin
    /// list`): counts of what it has, then its runtime flagged `FULL TRUST`
    /// (native sidecar) or `SANDBOXED` (wasm component) with the tools it
    /// serves, e.g. `1 skills / 2 hooks / FULL TRUST runtime (tools: greet)`.
    pub fn summary(&self) -> String {
        let pkg = match &self.package {
            Ok(p) => p,
            Err(e) => return format!("invalid: {}", e.replace('\n', "; ")),
        };
        let c = super::plan::Counts::of(pkg);
        let mut parts: Vec<String> = [
            (c.skills, "skills"),
            (c.commands, "commands"),
            (c.prompts, "prompts"),
            (c.agents, "agents"),
            (c.hooks, "hooks"),
            (c.mcp, "MCP"),
            (c.themes, "themes"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if let Some(rt) = super::plan::runtime_info(pkg) {
            let trust = if rt.sandbox.is_some() {
                "SANDBOXED runtime"
            } else {
                "FULL TRUST runtime"
            };
            parts.push(if rt.tools.is_empty() {
                trust.to_owned()
            } else {
                format!("{trust} (tools: {})", rt.tools.join(", "))
            });
        }
        if let Some(module) = &pkg.inventory.module {
            parts.push(format!("FULL TRUST Claude Code mod ({})", module.path));
        }
        if parts.is_empty() {
            "no exported capabilities".into()
        } else {
            parts.join(" / ")
        }
    }
}

fn repair_hint(name: &str) -> String {
    format!(
        "Repair with `reasonix plugin install <source> --name {name} --replace --yes`, or `reasonix plugin remove {name} --yes`"
    )
}

/// Recover interrupted publications, then read every registered package.
pub fn installed_packages(home: &ReasonixHome) -> InstallResult<(Vec<Installed>, Vec<String>)> {
    let mut warnings = recover(home)?;
    let mut registry = PluginRegistry::load(home)?;
    mark_incompatible(home, &mut registry);
    let mut out = Vec::new();
    for entry in registry.plugins {
        let root = match home.checked_root(&entry.root) {
            Ok(root) => root,
            Err(why) => {
                warnings.push(format!(
                    "plugin {}: {why}; it is excluded. {}",
                    entry.name,
                    repair_hint(&entry.name)
                ));
                continue;
            }
        };
        if !root.is_dir() {
            warnings.push(format!(
                "plugin {}: registered root {} is missing or not a directory; it is excluded. {}",
                entry.name,
                root.display(),
                repair_hint(&entry.name)
            ));
            continue;
        }
        let package = load_package(&root).map_err(|e| e.to_string());
        if let Err(e) = &package {
            warnings.push(format!(
                "plugin {}: {e}; it is not loaded. {}",
                entry.name,
                repair_hint(&entry.name)
            ));
        }
        out.push(Installed {
            entry,
            root,
            package,
        });
    }
    out.sort_by(|a, b| a.entry.name.cmp(&b.entry.name));
    Ok((out, warnings))
}

const INCOMPATIBLE: &str = "disabled_incompatible";

/// An enabled entry whose tree no longer parses is marked
/// `disabled_incompatible` (with the reason); the mark is cleared once it
/// parses again. Written back only when something changed.
fn mark_incompatible(home: &ReasonixHome, registry: &mut PluginRegistry) {
    let mut changed = false;
    for entry in &mut registry.plugins {
        changed |= update_status(home, entry);
    }
    if !changed {
        return;
    }
    // Re-read under the lock so a concurrent writer's update is kept.
    let Ok(_lock) = crate::registry::RegistryLock::acquire(home) else {
        return;
    };
    let Ok(mut fresh) = PluginRegistry::load(home) else {
        return;
    };
    let mut changed = false;
    for entry in &mut fresh.plugins {
        changed |= update_status(home, entry);
    }
    if changed {
        // Best effort: a read-only home still lists correctly.
        let _ = fresh.save(home, None);
    }
    *registry = fresh;
}

/// Set or clear the incompatible mark on one entry; true when it changed.
fn update_status(home: &ReasonixHome, entry: &mut RegistryEntry) -> bool {
    let Ok(root) = home.checked_root(&entry.root) else {
        return false;
    };
    if !root.is_dir() {
        return false;
    }
    let marked = entry.status.as_deref() == Some(INCOMPATIBLE);
    match load_package(&root) {
        Err(e) if entry.enabled && !marked => {
            entry.status = Some(INCOMPATIBLE.into());
            entry.status_reason = Some(e.to_string());
            true
        }
        Ok(_) if marked => {
            entry.status = None;
            entry.status_reason = None;
            true
        }
        _ => false,
    }
}

/// One installed package by name (including an unreadable one).
pub fn find_installed(
    home: &ReasonixHome,
    name: &str,
) -> InstallResult<(Option<Installed>, Vec<String>)> {
    let (all, warnings) = installed_packages(home)?;
    let found = all.into_iter().find(|i| i.entry.name == name);
    if found.is_none()
        && let Some(entry) = PluginRegistry::load(home)?.get(name)
    {
        if let Err(why) = home.checked_root(&entry.root) {
            return Err(InstallError::new(
                ErrorCode::UnsafePath,
                format!("plugin {name:?}: {why}"),
            )
            .with_next(repair_hint(name)));
        }
        return Err(InstallError::new(
            ErrorCode::MissingRoot,
            format!(
                "plugin {name:?} is registered but its root {} is missing or not a directory",
                home.resolve_root(&entry.root).display()
            ),
        )
        .with_next(repair_hint(name)));
    }
    Ok((found, warnings))
}
