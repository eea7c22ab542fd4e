//! Slash commands and prompt templates: discovery and argument substitution.

use std::collections::HashSet;
use std::path::Path;

use super::{
    file_stem, frontmatter, is_markdown, join_rel, names, read_markdown, sorted_entry_names,
};
use crate::Command;

/// Discover commands under each root: `.md` files, recursively; nested
/// directories namespace the name with `:` (`git/commit.md` → `git:commit`).
/// A root that is itself a `.md` file is one command. The first root to
/// define a name wins; later ones are reported in `warnings`.
pub fn discover(root: &Path, roots: &[String], warnings: &mut Vec<String>) -> Vec<Command> {
    let mut found = Vec::new();
    for rel in roots {
        let abs = root.join(rel);
        if abs.is_file() {
            if is_markdown(rel) {
                let stem = file_stem(rel);
                push_command(root, rel, vec![stem], &mut found, warnings);
            }
        } else if abs.is_dir() {
            walk(root, rel, &mut Vec::new(), 0, &mut found, warnings);
        }
    }
    let mut seen = HashSet::new();
    found.retain(|c: &Command| {
        if seen.insert(c.name.clone()) {
            true
        } else {
            warnings.push(format!(
                "command {:?} at {} duplicates an earlier command of the same name; ignored",
                c.name, c.path
            ));
            false
        }
    });
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Whether `dir` (relative to `root`) holds at least one loadable command.
pub fn dir_has_commands(root: &Path, rel: &str) -> bool {
    let mut ignored = Vec::new();
    !discover(root, &[rel.to_owned()], &mut ignored).is_empty()
}

/// Nesting deeper than this is not a command layout but a runaway tree.
const MAX_DEPTH: usize = 16;

fn walk(
    root: &Path,
    rel: &str,
    prefix: &mut Vec<String>,
    depth: usize,
    out: &mut Vec<Command>,
    warnings: &mut Vec<String>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(names) = sorted_entry_names(&root.join(rel)) else {
        return;
    };
    for name in names {
        if name.starts_with('.') {
            continue;
        }
        let child = join_rel(rel, &name);
        let abs = root.join(&child);
        if abs.is_dir() {
            prefix.push(name);
            walk(root, &child, prefix, depth + 1, out, warnings);
            prefix.pop();
        } else if abs.is_file() && is_markdown(&name) {
            let stem = file_stem(&name);
            let mut segments = prefix.clone();
            segments.push(stem);
            push_command(root, &child, segments, out, warnings);
        }
    }
}

fn push_command(
    root: &Path,
    rel: &str,
    segments: Vec<String>,
    out: &mut Vec<Command>,
    warnings: &mut Vec<String>,
) {
    if let Some(bad) = segments.iter().find(|s| !names::is_valid_name(s)) {
        warnings.push(format!(
            "{rel}: {bad:?} is not a valid command name segment; skipped"
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
    out.push(Command {
        name: segments.join(":"),
        description: fm.get("description").map(str::to_owned),
        argument_hint: fm.get("argument-hint").map(str::to_owned),
        path: rel.to_owned(),
    });
}

/// Render a command/prompt template: `$ARGUMENTS` is every argument joined by
/// a space, `$1..$N` the positional arguments (missing → empty), `$$` a
/// literal `$`. Any other `$` is kept as written.
pub fn render_template(template: &str, args: &[String]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(&args.join(" "));
            rest = tail;
        } else {
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            match after[..digits].parse::<usize>() {
                Ok(n) if n >= 1 => {
                    if let Some(arg) = args.get(n - 1) {
                        out.push_str(arg);
                    }
                    rest = &after[digits..];
                }
                _ => {
                    out.push('$');
                    rest = after;
                }
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn render_matches_upstream_semantics() {
        let a = args(&["one", "two words"]);
        assert_eq!(
            render_template("first=$1 second=$2", &a),
            "first=one second=two words"
        );
        assert_eq!(render_template("all: $ARGUMENTS", &a), "all: one two words");
        assert_eq!(render_template("cost $$5", &a), "cost $5");
        assert_eq!(render_template("missing [$3]", &a), "missing []");
        assert_eq!(render_template("$0 $HOME $", &a), "$0 $HOME $");
        assert_eq!(render_template("$10", &args(&["a"])), "");
        assert_eq!(render_template("$ARGUMENTS", &[]), "");
        assert_eq!(render_template("héllo $1 ✓", &args(&["é"])), "héllo é ✓");
    }

    #[test]
    fn nested_commands_are_namespaced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("commands/git/sub")).unwrap();
        std::fs::write(
            root.join("commands/git/commit.md"),
            "---\ndescription: Commit\nargument-hint: [msg]\n---\nbody $1",
        )
        .unwrap();
        std::fs::write(root.join("commands/git/sub/deep.md"), "deep").unwrap();
        std::fs::write(root.join("commands/top.md"), "top").unwrap();
        std::fs::write(root.join("commands/notes.txt"), "not a command").unwrap();
        std::fs::write(root.join("commands/.hidden.md"), "hidden").unwrap();
        let mut warnings = Vec::new();
        let cmds = discover(root, &["commands".into()], &mut warnings);
        let names: Vec<_> = cmds.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["git:commit", "git:sub:deep", "top"]);
        assert_eq!(cmds[0].description.as_deref(), Some("Commit"));
        assert_eq!(cmds[0].argument_hint.as_deref(), Some("[msg]"));
        assert_eq!(cmds[0].path, "commands/git/commit.md");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(dir_has_commands(root, "commands"));
        assert!(!dir_has_commands(root, "missing"));
    }
}
