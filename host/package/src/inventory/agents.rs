//! Agent profiles: flat `*.md` files in agent roots.

use std::collections::BTreeMap;
use std::path::Path;

use unicode_normalization::UnicodeNormalization;

use super::tools::{ToolMapping, map_agent_tool};
use super::{Discovery, frontmatter, is_markdown, join_rel, names, read_markdown};
use crate::{Agent, PackageError, SkippedCapability};

/// Claude model aliases: a Reasonix agent with one of these inherits the
/// session's active model instead of naming a provider model.
const MODEL_ALIASES: &[&str] = &["inherit", "sonnet", "opus", "haiku", "default"];

/// Discover agents in each root (a directory scanned flat, or one `.md` file).
/// The same agent name from two files is an error.
pub fn discover(
    root: &Path,
    roots: &[String],
    discovery: &mut Discovery,
) -> Result<Vec<Agent>, PackageError> {
    let mut files = Vec::new();
    for rel in roots {
        let abs = root.join(rel);
        if abs.is_file() {
            if is_markdown(rel) {
                files.push(rel.clone());
            }
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&abs) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| is_markdown(n))
            .collect();
        names.sort();
        files.extend(names.iter().map(|n| join_rel(rel, n)));
    }
    let mut by_name: BTreeMap<String, Agent> = BTreeMap::new();
    for rel in files {
        let Some(agent) = read_agent(root, &rel, discovery) else {
            continue;
        };
        if let Some(previous) = by_name.get(&agent.name) {
            if previous.path != agent.path {
                return Err(PackageError::Invalid {
                    path: root.join(&rel),
                    message: format!(
                        "agent name {:?} is declared by both {} and {}",
                        agent.name, previous.path, agent.path
                    ),
                });
            }
            continue;
        }
        by_name.insert(agent.name.clone(), agent);
    }
    Ok(by_name.into_values().collect())
}

fn read_agent(root: &Path, rel: &str, discovery: &mut Discovery) -> Option<Agent> {
    let stem = Path::new(rel)
        .file_stem()
        .map(|s| s.to_string_lossy().nfc().collect::<String>())
        .unwrap_or_default();
    if !names::is_valid_name(&stem) {
        discovery.warnings.push(format!(
            "{rel}: {stem:?} is not a valid agent name; skipped"
        ));
        return None;
    }
    let text = match read_markdown(root, rel) {
        Ok(text) => text,
        Err(reason) => {
            discovery.warnings.push(format!("{rel}: {reason}; skipped"));
            return None;
        }
    };
    let fm = frontmatter::parse(&text);
    let name = names::resolve_name(&stem, fm.get("name"));
    let model = fm
        .get("model")
        .filter(|m| !MODEL_ALIASES.contains(&m.to_ascii_lowercase().as_str()))
        .map(str::to_owned);
    let mut tools: Vec<String> = Vec::new();
    let mut unmapped = Vec::new();
    for entry in fm
        .get("tools")
        .map(frontmatter::split_list)
        .unwrap_or_default()
    {
        match map_agent_tool(&entry) {
            ToolMapping::Mapped(t) => {
                if !tools.contains(&t) {
                    tools.push(t);
                }
            }
            ToolMapping::Unmapped(t) => unmapped.push(t),
        }
    }
    if !unmapped.is_empty() {
        discovery.skipped.push(SkippedCapability {
            capability: "agents".into(),
            path: Some(rel.to_owned()),
            reason: format!(
                "agent {name:?} lists tools with no Reasonix equivalent ({}); it runs without them",
                unmapped.join(", ")
            ),
        });
    }
    Some(Agent {
        name,
        description: fm.get("description").map(str::to_owned),
        model,
        tools,
        path: rel.to_owned(),
    })
}
