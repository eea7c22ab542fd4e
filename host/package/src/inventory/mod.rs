//! Discovery of skills, commands, prompts and agents inside a package's
//! declared roots. Every manifest kind goes through [`discover`]: the native
//! loader declares roots explicitly, the Claude/Codex mapping fills them from
//! conventions first.

pub mod agents;
pub mod commands;
pub mod frontmatter;
pub mod names;
pub mod skills;
pub mod tools;

use std::path::Path;

pub use commands::render_template;

use crate::{Inventory, PackageError, SkippedCapability};

/// What discovery found besides the inventory itself.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Files that were skipped (invalid names, unreadable files, duplicates).
    pub warnings: Vec<String>,
    /// Entries that were only partly mapped (agent tools with no equivalent).
    pub skipped: Vec<SkippedCapability>,
}

/// Fill `inventory.skills`, `commands`, `prompts` and `agents` from
/// `skill_roots`, `command_roots`, `prompt_roots` and `agent_roots` (paths
/// relative to `root`). Missing roots contribute nothing; an agent name
/// declared by two files is an error.
pub fn discover(root: &Path, inventory: &mut Inventory) -> Result<Discovery, PackageError> {
    let mut discovery = Discovery::default();
    inventory.skills = skills::discover(root, &inventory.skill_roots, &mut discovery.warnings);
    inventory.commands =
        commands::discover(root, &inventory.command_roots, &mut discovery.warnings);
    inventory.prompts = commands::discover(root, &inventory.prompt_roots, &mut discovery.warnings);
    inventory.agents = agents::discover(root, &inventory.agent_roots, &mut discovery)?;
    Ok(discovery)
}

/// `a` + `/` + `b` for package-relative paths (`.` is the root itself).
pub(crate) fn join_rel(a: &str, b: &str) -> String {
    if a.is_empty() || a == "." {
        b.to_owned()
    } else {
        format!("{}/{b}", a.trim_end_matches('/'))
    }
}

/// Whether a file name ends in `.md` (any case).
pub(crate) fn is_markdown(name: &str) -> bool {
    Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// The file name of `rel` without its extension (lossy UTF-8).
pub(crate) fn file_stem(rel: &str) -> String {
    Path::new(rel)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The entry names of a directory (lossy UTF-8), sorted; `None` when it
/// cannot be read. Unreadable entries are left out: discovery skips what it
/// cannot see rather than failing the package.
pub(crate) fn sorted_entry_names(dir: &Path) -> Option<Vec<String>> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Some(names)
}

/// Read a Markdown file relative to `root`, decoding legacy encodings.
pub(crate) fn read_markdown(root: &Path, rel: &str) -> Result<String, String> {
    crate::compat::encoding::read_text(&root.join(rel)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(root: &Path, rel: &str, body: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, body).unwrap();
    }

    #[test]
    fn skill_layouts_and_run_as() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "skills/alpha/SKILL.md", "---\ndescription: A\n---\n");
        write(
            root,
            "skills/beta/SKILL.md",
            "---\nname: renamed\ncontext: fork\n---\n",
        );
        write(
            root,
            "skills/gamma/SKILL.md",
            "---\nname: Not Valid\nagent: x\n---\n",
        );
        // The SKILL.md dir stops recursion: nested files are part of the skill.
        write(root, "skills/alpha/extra.md", "not a skill");
        write(
            root,
            "skills/group/deep/delta/SKILL.md",
            "---\nrunAs: subagent\n---\n",
        );
        write(root, "skills/loose.md", "---\ndescription: loose\n---\n");
        write(root, "skills/assets/ignored/SKILL.md", "");
        write(root, "skills/node_modules/x/SKILL.md", "");
        write(root, "skills/.hidden/SKILL.md", "");
        write(root, "skills/a/b/c/d/e/f/too-deep/SKILL.md", "");
        write(root, "single.md", "---\nname: single-file\n---\n");
        let mut inv = Inventory {
            skill_roots: vec!["skills".into(), "single.md".into()],
            ..Default::default()
        };
        let d = discover(root, &mut inv).unwrap();
        let got: Vec<_> = inv
            .skills
            .iter()
            .map(|s| (s.name.as_str(), s.run_as.as_str(), s.path.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("alpha", "inline", "skills/alpha/SKILL.md"),
                ("renamed", "subagent", "skills/beta/SKILL.md"),
                ("gamma", "subagent", "skills/gamma/SKILL.md"),
                ("delta", "subagent", "skills/group/deep/delta/SKILL.md"),
                ("loose", "inline", "skills/loose.md"),
                ("single-file", "inline", "single.md"),
            ]
        );
        assert_eq!(inv.skills[0].description.as_deref(), Some("A"));
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_skill_dirs_are_visited_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "skills/real/one/SKILL.md", "");
        std::os::unix::fs::symlink(root.join("skills/real"), root.join("skills/link")).unwrap();
        let mut inv = Inventory {
            skill_roots: vec!["skills".into()],
            ..Default::default()
        };
        discover(root, &mut inv).unwrap();
        assert_eq!(inv.skills.len(), 1);
        assert_eq!(inv.skills[0].path, "skills/link/one/SKILL.md");
    }

    #[test]
    fn agents_map_models_and_tools_and_reject_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "agents/explorer.md",
            "---\nname: explorer\nmodel: sonnet\ntools: Glob, Read, WebSearch, KillShell, mcp__gh__*\n---\n",
        );
        write(
            root,
            "agents/pinned.md",
            "---\nmodel: deepseek-chat\ntools: [\"Bash\"]\n---\n",
        );
        write(root, "agents/nested/ignored.md", "");
        let mut inv = Inventory {
            agent_roots: vec!["agents".into()],
            ..Default::default()
        };
        let d = discover(root, &mut inv).unwrap();
        assert_eq!(inv.agents.len(), 2);
        let explorer = &inv.agents[0];
        assert_eq!(explorer.model, None);
        assert_eq!(
            explorer.tools,
            ["glob", "read_file", "kill_shell", "mcp__gh__*"]
        );
        assert_eq!(inv.agents[1].model.as_deref(), Some("deepseek-chat"));
        assert_eq!(inv.agents[1].tools, ["bash"]);
        assert_eq!(d.skipped.len(), 1);
        assert!(d.skipped[0].reason.contains("WebSearch"));

        write(root, "more/other.md", "---\nname: explorer\n---\n");
        inv.agent_roots.push("more".into());
        let err = discover(root, &mut inv).unwrap_err().to_string();
        assert!(
            err.contains("agent name \"explorer\" is declared by both"),
            "{err}"
        );
    }
}
