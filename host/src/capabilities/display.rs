//! What a capability report may show of a path or a message: paths as
//! `<workspace>/…`, `~/…` or `<external>/basename` (never a user name or a
//! full outside path), free text with credentials redacted, whitespace
//! collapsed and at most [`MAX_TEXT_CHARS`] characters.

use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

/// Longest free text a report carries (after redaction).
pub const MAX_TEXT_CHARS: usize = 400;

/// Rewrites paths and text against one workspace root and user home.
#[derive(Debug, Clone)]
pub struct PathDisplay {
    workspace: Vec<PathBuf>,
    home: Vec<PathBuf>,
}

/// The lexical absolute form and, when it differs, the resolved one, so a
/// path spelled either way is recognised.
fn spellings(p: &Path) -> Vec<PathBuf> {
    let lexical = clean(&std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    let mut out = vec![lexical.clone()];
    if let Ok(real) = std::fs::canonicalize(&lexical)
        && real != lexical
    {
        out.push(real);
    }
    out
}

fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn joined(prefix: &str, rel: &Path) -> String {
    let rel: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if rel.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}/{}", rel.join("/"))
    }
}

impl PathDisplay {
    pub fn new(workspace: &Path, user_home: Option<&Path>) -> Self {
        Self {
            workspace: spellings(workspace),
            home: user_home.map(spellings).unwrap_or_default(),
        }
    }

    /// `<workspace>/…` under the workspace, `~/…` under the user home,
    /// `<external>/basename` anywhere else.
    pub fn path(&self, p: &Path) -> String {
        let candidates = if p.is_absolute() {
            spellings(p)
        } else {
            // Relative paths are relative to the workspace.
            spellings(&self.workspace[0].join(p))
        };
        for c in &candidates {
            for w in &self.workspace {
                if let Ok(rel) = c.strip_prefix(w) {
                    return joined("<workspace>", rel);
                }
            }
        }
        for c in &candidates {
            for h in &self.home {
                if let Ok(rel) = c.strip_prefix(h) {
                    return joined("~", rel);
                }
            }
        }
        let base = candidates[0]
            .file_name()
            .map(|b| b.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("<external>/{base}")
    }

    /// A command as the report shows it: only its first word, displayed as a
    /// path when it is one (arguments may carry credentials).
    pub fn command(&self, command: &str) -> String {
        let command = command.trim_start();
        // The first word, which a shell would unquote.
        let first = match command.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let rest = &command[1..];
                rest.split(q).next().unwrap_or_default()
            }
            _ => command.split_whitespace().next().unwrap_or_default(),
        };
        if Path::new(first).is_absolute() {
            self.path(Path::new(first))
        } else {
            self.text(first)
        }
    }

    /// Free text (an error, a warning, a description) made safe to show.
    pub fn text(&self, s: &str) -> String {
        sanitize(s, Some(self))
    }
}

static URL_USERINFO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@").expect("valid"));
static URL_QUERY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s?#]+)[?#][^\s]*").expect("valid")
});
static BEARER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?i)\bbearer\s+[^\s"',;]+"#).expect("valid"));
static PATH_VAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(PATH|path)=[^\s;,]+").expect("valid"));

/// Collapse whitespace, drop control characters, redact credentials (the
/// project's redactor, short bearer tokens, URL user info and queries,
/// `PATH=` values), rewrite absolute paths, then cut at [`MAX_TEXT_CHARS`].
pub fn sanitize(s: &str, paths: Option<&PathDisplay>) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let cleaned = crate::runtime::redaction::clean_text(&one_line);
    let cleaned = URL_USERINFO.replace_all(&cleaned, "$1<redacted>@");
    let cleaned = URL_QUERY.replace_all(&cleaned, "$1");
    let cleaned = BEARER.replace_all(&cleaned, "Bearer <redacted>");
    let cleaned = PATH_VAR.replace_all(&cleaned, "$1=<redacted>");
    let text = match paths {
        Some(p) => rewrite_paths(&cleaned, p),
        None => cleaned.into_owned(),
    };
    truncate(&text)
}

fn truncate(s: &str) -> String {
    if s.chars().count() <= MAX_TEXT_CHARS {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(MAX_TEXT_CHARS).collect();
    out.push('…');
    out
}

/// Replace every absolute path token (one starting with `/` at a word
/// boundary) by its display form; URLs are left to the URL rules.
fn rewrite_paths(s: &str, paths: &PathDisplay) -> String {
    const BOUNDARY: &[char] = &[' ', '"', '\'', '(', '[', '=', ',', '`'];
    const END: &[char] = &[' ', '"', '\'', ')', ']', ',', ';', '`'];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        let at_boundary = prev.is_none_or(|p| BOUNDARY.contains(&p) || p == ':');
        if c == '/' && at_boundary && !out.ends_with(':') {
            let end = rest.find(END).unwrap_or(rest.len());
            let token = rest[..end].trim_end_matches(['.', ':']);
            if token.len() > 1 {
                out.push_str(&paths.path(Path::new(token)));
                rest = &rest[token.len()..];
                prev = token.chars().last();
                continue;
            }
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disp() -> PathDisplay {
        PathDisplay::new(Path::new("/work/space"), Some(Path::new("/home/u")))
    }

    #[test]
    fn paths_are_relative_to_workspace_or_home_or_external() {
        let d = disp();
        assert_eq!(d.path(Path::new("/work/space")), "<workspace>");
        assert_eq!(
            d.path(Path::new("/work/space/a/b.md")),
            "<workspace>/a/b.md"
        );
        assert_eq!(d.path(Path::new("a/../c.md")), "<workspace>/c.md");
        assert_eq!(
            d.path(Path::new("/home/u/.reasonix/plugins/x")),
            "~/.reasonix/plugins/x"
        );
        assert_eq!(d.path(Path::new("/home/u")), "~");
        assert_eq!(d.path(Path::new("/opt/secret/tool")), "<external>/tool");
        assert_eq!(
            d.command("/opt/bin/server --token abc"),
            "<external>/server"
        );
        assert_eq!(d.command("npx -y @scope/pkg"), "npx");
        assert_eq!(
            d.command("\"/opt/my tools/run.cmd\" session-start"),
            "<external>/run.cmd"
        );
        assert_eq!(d.command("'/home/u/x/run' a"), "~/x/run");
    }

    #[test]
    fn text_is_redacted_rewritten_and_cut() {
        let d = disp();
        let t = d.text(
            "failed: open /home/u/.ssh/id_rsa and /work/space/x.json\n\tAuthorization: Bearer abc https://user:pw@api.example.com/v1?api_key=123 PATH=/usr/bin:/opt",
        );
        assert_eq!(
            t,
            "failed: open ~/.ssh/id_rsa and <workspace>/x.json Authorization: Bearer <redacted> https://<redacted>@api.example.com/v1 PATH=<redacted>"
        );
        assert!(
            !d.text(r#"{"apiKey": "sk-live-1234567890abcdef"}"#)
                .contains("sk-live")
        );
        assert_eq!(
            d.text("relative skills/a/SKILL.md stays"),
            "relative skills/a/SKILL.md stays"
        );
        assert_eq!(d.text("esc\u{1b}[2Jape"), "esc[2Jape");
        let long = "é".repeat(1000);
        let cut = d.text(&long);
        assert_eq!(cut.chars().count(), MAX_TEXT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
