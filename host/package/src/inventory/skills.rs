//! Skill discovery inside declared skill roots.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{
    file_stem, frontmatter, is_markdown, join_rel, names, read_markdown, sorted_entry_names,
};
use crate::Skill;

/// Directory nesting scanned below a skill root before giving up.
const MAX_DEPTH: usize = 5;

/// Discover the skills under each root (paths relative to `root`).
/// Files that are unreadable or have an invalid name are reported in `warnings`.
pub fn discover(root: &Path, roots: &[String], warnings: &mut Vec<String>) -> Vec<Skill> {
    let mut out = Vec::new();
    let mut seen_dirs = HashSet::new();
    for rel in roots {
        scan(root, rel, 0, &mut seen_dirs, &mut out, warnings);
    }
    let mut names = HashSet::new();
    out.retain(|skill: &Skill| {
        if names.insert(skill.name.clone()) {
            true
        } else {
            warnings.push(format!(
                "skill {:?} at {} duplicates an earlier skill of the same name; ignored",
                skill.name, skill.path
            ));
            false
        }
    });
    out
}

fn scan(
    root: &Path,
    rel: &str,
    depth: usize,
    seen_dirs: &mut HashSet<PathBuf>,
    out: &mut Vec<Skill>,
    warnings: &mut Vec<String>,
) {
    let abs = root.join(rel);
    // `metadata` follows symlinks: a symlinked skill dir is scanned (once).
    let Ok(meta) = std::fs::metadata(&abs) else {
        return;
    };
    if meta.is_file() {
        if is_markdown(rel) {
            let stem = file_stem(rel);
            push_skill(root, rel, &stem, out, warnings);
        }
        return;
    }
    if !meta.is_dir() {
        return;
    }
    let key = std::fs::canonicalize(&abs).unwrap_or(abs.clone());
    if !seen_dirs.insert(key) {
        return;
    }
    let skill_md = join_rel(rel, "SKILL.md");
    if root.join(&skill_md).is_file() {
        let dir_name = Path::new(rel)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        push_skill(root, &skill_md, &dir_name, out, warnings);
        return;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let Some(names) = sorted_entry_names(&abs) else {
        return;
    };
    for name in names {
        if skip_entry(&name) {
            continue;
        }
        let child = join_rel(rel, &name);
        let Ok(meta) = std::fs::metadata(root.join(&child)) else {
            continue;
        };
        if meta.is_dir() {
            scan(root, &child, depth + 1, seen_dirs, out, warnings);
        } else if meta.is_file() && is_markdown(&name) {
            let stem = file_stem(&name);
            push_skill(root, &child, &stem, out, warnings);
        }
    }
}

fn push_skill(
    root: &Path,
    rel: &str,
    stem: &str,
    out: &mut Vec<Skill>,
    warnings: &mut Vec<String>,
) {
    if !names::is_valid_name(stem) {
        warnings.push(format!(
            "{rel}: {stem:?} is not a valid skill name; skipped"
        ));
        return;
    }
    let text = match read_markdown(root, rel) {
        Ok(text) => text,
        Err(reason) => {
            warnings.push(format!("{rel}: {reason}; skipped"));
            return;
        }
    };
    let fm = frontmatter::parse(&text);
    out.push(Skill {
        name: names::resolve_name(stem, fm.get("name")),
        description: fm.get("description").map(str::to_owned),
        run_as: run_as(&fm).to_owned(),
        path: rel.to_owned(),
    });
}

/// `subagent` if frontmatter says `runAs: subagent`, `context: fork` or names an `agent`.
fn run_as(fm: &frontmatter::Frontmatter) -> &'static str {
    let subagent = fm.get("runas") == Some("subagent")
        || fm
            .get("context")
            .is_some_and(|c| c.eq_ignore_ascii_case("fork"))
        || fm.get("agent").is_some();
    if subagent { "subagent" } else { "inline" }
}

fn skip_entry(name: &str) -> bool {
    name.starts_with('.')
        || matches!(
            name.to_ascii_lowercase().as_str(),
            "assets" | "node_modules" | "references" | "scripts"
        )
}
