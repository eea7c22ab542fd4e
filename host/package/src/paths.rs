//! Path rules for declared plugin paths (PLUGIN_PACKAGES.md §a.8).
//!
//! Two layers: lexical checks that behave the same on every OS (a package
//! written on Windows must not smuggle a drive path past a Linux host), and
//! on-disk residency checks that follow symlinks and require every existing
//! declared path to stay inside the resolved plugin root.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::manifest::{IssueKind, Manifest, ManifestIssue};

/// Why a declared path was refused lexically.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRuleError {
    #[error("plugin path is required")]
    Blank,
    #[error("plugin path \"{0}\" must be relative and stay inside the plugin root")]
    Escapes(String),
}

/// Trim, turn `\` into `/`, refuse absolute (POSIX, host OS, `X:/` drive, UNC)
/// and `..` paths, and return the cleaned slash form (`.` for the root).
pub fn clean_relative(raw: &str) -> Result<String, PathRuleError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(PathRuleError::Blank);
    }
    let normalized = trimmed.replace('\\', "/");
    if is_absolute_anywhere(trimmed, &normalized) {
        return Err(PathRuleError::Escapes(trimmed.to_string()));
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in normalized.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathRuleError::Escapes(trimmed.to_string()));
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        Ok(".".to_string())
    } else {
        Ok(parts.join("/"))
    }
}

/// Absolute on this host, POSIX-absolute (which covers `\\server\share`
/// after slash normalisation) or a `X:/` drive path.
fn is_absolute_anywhere(trimmed: &str, normalized: &str) -> bool {
    let b = normalized.as_bytes();
    Path::new(trimmed).is_absolute()
        || normalized.starts_with('/')
        || (b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'/')
}

/// Whether a theme entry is a glob (any of `*?[`).
pub fn has_glob_meta(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Check one glob segment against Go's `path.Match` grammar.
pub fn valid_glob_segment(pattern: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '[' => match parse_class(&p, i + 1) {
                Some((_, _, next)) => i = next,
                None => return false,
            },
            '\\' => {
                if i + 1 >= p.len() {
                    return false;
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    true
}

/// Match one path segment with Go's `path.Match` semantics (`*` and `?`
/// never cross `/`; `[...]` classes with `^` negation, ranges and `\`
/// escapes). A malformed pattern matches nothing.
///
/// Iterative, backtracking only to the last `*`: every other element matches
/// exactly one character, so this is exact and linear in practice, whatever
/// the pattern a manifest brings.
pub fn glob_segment_matches(pattern: &str, name: &str) -> bool {
    if !valid_glob_segment(pattern) {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == '*' {
            while pi < p.len() && p[pi] == '*' {
                pi += 1;
            }
            star = Some((pi, ni));
            continue;
        }
        if pi < p.len()
            && let Some((true, next)) = match_one(&p, pi, n[ni])
        {
            pi = next;
            ni += 1;
            continue;
        }
        match star {
            // `*` never swallows a separator.
            Some((sp, sn)) if n[sn] != '/' => {
                star = Some((sp, sn + 1));
                pi = sp;
                ni = sn + 1;
            }
            _ => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether the single-character element at `p[pi]` (`?`, a class, an escape
/// or a literal) matches `c`, and the index after the element.
fn match_one(p: &[char], pi: usize, c: char) -> Option<(bool, usize)> {
    match p[pi] {
        '?' => Some((c != '/', pi + 1)),
        '[' => {
            let (negated, ranges, next) = parse_class(p, pi + 1)?;
            let inside = ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi);
            Some((c != '/' && inside != negated, next))
        }
        '\\' => p.get(pi + 1).map(|e| (*e == c, pi + 2)),
        '*' => None,
        lit => Some((lit == c, pi + 1)),
    }
}

/// Inclusive character ranges of a `[...]` class.
type Ranges = Vec<(char, char)>;

/// Parse a character class starting just after `[`: (negated, ranges, index after `]`).
fn parse_class(p: &[char], mut i: usize) -> Option<(bool, Ranges, usize)> {
    let mut negated = false;
    if i < p.len() && p[i] == '^' {
        negated = true;
        i += 1;
    }
    let mut ranges = Vec::new();
    loop {
        if i < p.len() && p[i] == ']' && !ranges.is_empty() {
            return Some((negated, ranges, i + 1));
        }
        let lo = class_char(p, &mut i)?;
        let mut hi = lo;
        if i < p.len() && p[i] == '-' {
            i += 1;
            hi = class_char(p, &mut i)?;
        }
        ranges.push((lo, hi));
    }
}

fn class_char(p: &[char], i: &mut usize) -> Option<char> {
    if *i >= p.len() || p[*i] == '-' || p[*i] == ']' {
        return None;
    }
    if p[*i] == '\\' {
        *i += 1;
        if *i >= p.len() {
            return None;
        }
    }
    let c = p[*i];
    *i += 1;
    Some(c)
}

/// A theme file resolved from the manifest's `themes` entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeFile {
    /// File stem, or the parent directory name for `theme.json`.
    pub name: String,
    /// Relative to the plugin root, slash-separated.
    pub path: String,
}

/// Whether `rel` names a regular file of the package at `root`: a plain file,
/// or a symlink that resolves to a regular file inside the package. This is
/// the copier's materialisation rule (PLUGIN_PACKAGES §a.6.1), so a package
/// read from its source and from its copy sees the same conventional files;
/// a link that leaves the package, dangles or names a directory does not count.
pub fn is_in_tree_file(root: &Path, rel: &str) -> bool {
    let path = root.join(rel);
    let Ok(meta) = fs::symlink_metadata(&path) else {
        return false;
    };
    if meta.is_file() {
        return true;
    }
    if !meta.file_type().is_symlink() {
        return false;
    }
    match (fs::canonicalize(root), fs::canonicalize(&path)) {
        (Ok(root), Ok(target)) => {
            target.starts_with(&root) && fs::metadata(&target).is_ok_and(|m| m.is_file())
        }
        _ => false,
    }
}

/// What the on-disk checks found.
#[derive(Debug, Default)]
pub struct PathReport {
    /// Missing declared paths, unmatched theme globs.
    pub warnings: Vec<String>,
    /// Symlink escapes, non-regular or unresolvable theme files.
    pub issues: Vec<ManifestIssue>,
    /// Every theme file the entries resolve to, deduplicated, sorted by name then path.
    pub themes: Vec<ThemeFile>,
}

/// Check every declared path of `manifest` against the tree at `root`.
pub fn check_manifest_paths(root: &Path, manifest: &Manifest) -> PathReport {
    let mut report = PathReport::default();
    let resolved_root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    for (kind, list) in [
        ("skills", &manifest.skills),
        ("agents", &manifest.agents),
        ("commands", &manifest.commands),
        ("prompts", &manifest.prompts),
    ] {
        for rel in list {
            check_residency(&mut report, root, &resolved_root, kind, rel);
        }
    }
    for entry in &manifest.themes {
        let candidates = if has_glob_meta(entry) {
            match glob_themes(root, entry) {
                Ok(found) if found.is_empty() => {
                    report
                        .warnings
                        .push(format!("theme glob \"{entry}\" matched no files"));
                    continue;
                }
                Ok(found) => found,
                Err(issue) => {
                    report.issues.push(issue);
                    continue;
                }
            }
        } else {
            match fs::symlink_metadata(root.join(entry)) {
                Ok(_) => vec![entry.clone()],
                Err(e) => {
                    report.warnings.push(missing_warning("themes", entry, &e));
                    continue;
                }
            }
        };
        for rel in candidates {
            match check_theme_file(root, &resolved_root, &rel, entry) {
                Ok(()) => {
                    if !report.themes.iter().any(|t| t.path == rel) {
                        report.themes.push(ThemeFile {
                            name: theme_name(&rel),
                            path: rel,
                        });
                    }
                }
                Err(issue) => report.issues.push(issue),
            }
        }
    }
    report
        .themes
        .sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.path.cmp(&b.path)));
    report
}

fn missing_warning(kind: &str, rel: &str, e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::NotFound {
        format!("{kind} path \"{rel}\" does not exist")
    } else {
        format!("{kind} path \"{rel}\" is not readable: {e}")
    }
}

fn check_residency(
    report: &mut PathReport,
    root: &Path,
    resolved_root: &Path,
    kind: &str,
    rel: &str,
) {
    let abs = root.join(rel);
    if let Err(e) = fs::symlink_metadata(&abs) {
        report.warnings.push(missing_warning(kind, rel, &e));
        return;
    }
    match fs::canonicalize(&abs) {
        Err(e) => report
            .warnings
            .push(format!("{kind} path \"{rel}\" cannot be resolved: {e}")),
        Ok(resolved) if !resolved.starts_with(resolved_root) => report.issues.push(ManifestIssue {
            path: kind.to_string(),
            kind: IssueKind::SymlinkEscape,
            message: format!("{kind} path \"{rel}\" escapes the plugin root through a symlink"),
        }),
        Ok(_) => {}
    }
}

fn check_theme_file(
    root: &Path,
    resolved_root: &Path,
    rel: &str,
    entry: &str,
) -> Result<(), ManifestIssue> {
    let issue = |kind, message: String| ManifestIssue {
        path: "themes".to_string(),
        kind,
        message,
    };
    let abs = root.join(rel);
    let resolved = fs::canonicalize(&abs).map_err(|e| {
        issue(
            IssueKind::NotRegularFile,
            format!("theme \"{entry}\" cannot be resolved: {rel}: {e}"),
        )
    })?;
    if !resolved.starts_with(resolved_root) {
        return Err(issue(
            IssueKind::SymlinkEscape,
            format!("theme \"{entry}\" escapes the plugin root through a symlink"),
        ));
    }
    let meta = fs::metadata(&resolved).map_err(|e| {
        issue(
            IssueKind::NotRegularFile,
            format!("theme \"{entry}\" is not readable: {e}"),
        )
    })?;
    if !meta.is_file() {
        return Err(issue(
            IssueKind::NotRegularFile,
            format!("theme \"{entry}\" is not a regular file"),
        ));
    }
    Ok(())
}

/// Expand a theme glob one segment at a time so the root itself is never read
/// as a pattern. Non-final candidates that are files are skipped (a README
/// beside theme directories is not an error); a dangling link where a
/// directory is needed is.
fn glob_themes(root: &Path, pattern: &str) -> Result<Vec<String>, ManifestIssue> {
    let segments: Vec<&str> = pattern.split('/').collect();
    let mut current: Vec<String> = vec![String::new()];
    for (pos, seg) in segments.iter().enumerate() {
        let last = pos + 1 == segments.len();
        let mut next = Vec::new();
        for base in &current {
            let mut add = |rel: String| next.push(rel);
            if has_glob_meta(seg) {
                let Ok(entries) = fs::read_dir(root.join(base)) else {
                    continue;
                };
                let mut names: Vec<String> = entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| glob_segment_matches(seg, name))
                    .collect();
                names.sort();
                for name in names {
                    add(join_rel(base, &name));
                }
            } else {
                add(join_rel(base, seg));
            }
        }
        current = Vec::new();
        for rel in next {
            let abs = root.join(&rel);
            if last {
                if fs::symlink_metadata(&abs).is_ok() {
                    current.push(rel);
                }
                continue;
            }
            match fs::metadata(&abs) {
                Ok(meta) if meta.is_dir() => current.push(rel),
                Ok(_) => {}
                Err(e) => {
                    if fs::symlink_metadata(&abs).is_ok() {
                        return Err(ManifestIssue {
                            path: "themes".to_string(),
                            kind: IssueKind::NotRegularFile,
                            message: format!("theme \"{pattern}\" cannot be resolved: {rel}: {e}"),
                        });
                    }
                }
            }
        }
    }
    current.sort();
    Ok(current)
}

fn join_rel(base: &str, name: &str) -> String {
    if base.is_empty() {
        name.to_string()
    } else {
        format!("{base}/{name}")
    }
}

/// File stem, or the parent directory name for a `theme.json`.
pub fn theme_name(rel: &str) -> String {
    let path = PathBuf::from(rel);
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if file == "theme.json"
        && let Some(parent) = path.parent().and_then(|p| p.file_name())
    {
        return parent.to_string_lossy().into_owned();
    }
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_and_refuses_portably() {
        assert_eq!(clean_relative(" ./skills/ ").unwrap(), "skills");
        assert_eq!(clean_relative("a\\b\\..\\c").unwrap(), "a/c");
        assert_eq!(clean_relative(".").unwrap(), ".");
        assert_eq!(clean_relative("  "), Err(PathRuleError::Blank));
        for bad in [
            "..",
            "../x",
            "a/../../x",
            "/etc/passwd",
            "C:\\Windows\\x",
            "c:/x",
            "\\\\server\\share\\x",
        ] {
            assert!(
                matches!(clean_relative(bad), Err(PathRuleError::Escapes(_))),
                "{bad} accepted"
            );
        }
        assert_eq!(
            clean_relative("../x").unwrap_err().to_string(),
            "plugin path \"../x\" must be relative and stay inside the plugin root"
        );
    }

    #[test]
    fn glob_segments_follow_path_match() {
        assert!(glob_segment_matches(
            "*.reasonix-theme",
            "neon.reasonix-theme"
        ));
        assert!(!glob_segment_matches("*.reasonix-theme", "neon.json"));
        assert!(glob_segment_matches("th?me", "theme"));
        assert!(glob_segment_matches("[a-c]x", "bx"));
        assert!(!glob_segment_matches("[^a-c]x", "bx"));
        assert!(glob_segment_matches("\\*", "*"));
        assert!(!glob_segment_matches("\\*", "a"));
        assert!(glob_segment_matches("*", ""));
        assert!(!glob_segment_matches("a*", "a/b"));
        assert!(glob_segment_matches("*a*b*c", "xxaxxbxxc"));
        assert!(!glob_segment_matches("*a*b*c", "xxaxxbxx"));
        assert!(glob_segment_matches("a*", "a"));
        assert!(glob_segment_matches("**x?", "abxy"));
        assert!(!glob_segment_matches("?", ""));
        // Adversarial patterns stay fast and never recurse.
        let many = "*a".repeat(20_000) + "b";
        assert!(!glob_segment_matches(&many, &"a".repeat(200)));
        for bad in ["[", "[]", "[-a]", "a\\", "[a-"] {
            assert!(!valid_glob_segment(bad), "{bad} valid");
        }
        assert!(!valid_glob_segment("[]a]"));
        assert!(valid_glob_segment("*.json"));
    }

    #[test]
    fn theme_names() {
        assert_eq!(theme_name("themes/dawn/theme.json"), "dawn");
        assert_eq!(theme_name("themes/neon.reasonix-theme"), "neon");
        assert_eq!(theme_name("theme.json"), "theme");
    }
}
