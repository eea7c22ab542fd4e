//! Instruction documents (`REASONIX.md`, `AGENTS.md`, `CLAUDE.md`) that
//! apply to a workspace, in ascending specificity: the user's global ones in
//! the Reasonix home, then the ancestor chain from the enclosing repository
//! root down, then the workspace's own, then its `*.local.md` variants. A
//! file reached twice (a symlink) is listed once.

use std::path::{Path, PathBuf};

/// Names recognised in every directory, in load order.
pub const DOC_NAMES: [&str; 3] = ["REASONIX.md", "AGENTS.md", "CLAUDE.md"];
/// Workspace-local variants, loaded last.
pub const LOCAL_DOC_NAMES: [&str; 3] = ["REASONIX.local.md", "AGENTS.local.md", "CLAUDE.local.md"];

/// One document found, before display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundDoc {
    pub path: PathBuf,
    /// `user`, `ancestor`, `project` or `local`.
    pub scope: &'static str,
    /// Directories between the document and the workspace (0 for the workspace's own).
    pub depth: usize,
}

/// Every instruction document for `workspace`, in load order.
pub fn discover(workspace: &Path, reasonix_home: &Path) -> Vec<FoundDoc> {
    let mut found = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut add = |dir: &Path, names: &[&str], scope: &'static str, depth: usize| {
        for name in names {
            let path = dir.join(name);
            if !path.is_file() {
                continue;
            }
            let identity = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&identity) {
                continue;
            }
            seen.push(identity);
            found.push(FoundDoc { path, scope, depth });
        }
    };
    add(reasonix_home, &DOC_NAMES, "user", 0);
    // The ancestor chain stops at the enclosing repository root: above it
    // lie other people's directories, not this project's guidance.
    let ancestors: Vec<&Path> = workspace.ancestors().skip(1).collect();
    if let Some(top) = ancestors.iter().position(|d| d.join(".git").exists()) {
        for (i, dir) in ancestors[..=top].iter().enumerate().rev() {
            add(dir, &DOC_NAMES, "ancestor", i + 1);
        }
    }
    add(workspace, &DOC_NAMES, "project", 0);
    add(workspace, &LOCAL_DOC_NAMES, "local", 0);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_order_and_symlink_identity() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let home = root.join("rxhome");
        let repo = root.join("repo");
        let ws = repo.join("pkg/app");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        for p in [
            root.join("AGENTS.md"), // above the repository: ignored
            home.join("REASONIX.md"),
            repo.join("AGENTS.md"),
            repo.join("pkg/CLAUDE.md"),
            ws.join("AGENTS.md"),
            ws.join("CLAUDE.local.md"),
        ] {
            std::fs::write(&p, "x").unwrap();
        }
        std::os::unix::fs::symlink("AGENTS.md", ws.join("CLAUDE.md")).unwrap();
        let got: Vec<(String, &str, usize)> = discover(&ws, &home)
            .into_iter()
            .map(|d| {
                (
                    d.path.strip_prefix(root).unwrap().display().to_string(),
                    d.scope,
                    d.depth,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("rxhome/REASONIX.md".to_owned(), "user", 0),
                ("repo/AGENTS.md".to_owned(), "ancestor", 2),
                ("repo/pkg/CLAUDE.md".to_owned(), "ancestor", 1),
                ("repo/pkg/app/AGENTS.md".to_owned(), "project", 0),
                ("repo/pkg/app/CLAUDE.local.md".to_owned(), "local", 0),
            ]
        );
    }
}
