//! GitHub source URLs (§a.1): `git:github.com/<o>/<r>`, `https://github.com/<o>/<r>[.git]`
//! and `…/tree/<ref>[/<subdir>]`, validated exactly as upstream does.

/// A parsed GitHub plugin source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHubSource {
    pub owner: String,
    pub repo: String,
    /// Branch, tag or full 40-hex commit from `/tree/<ref>`; empty for the default branch.
    pub reference: String,
    /// Subdirectory inside the repository (slash-separated), possibly empty.
    pub path: String,
}

impl GitHubSource {
    /// Is the ref a full commit SHA (pinned source)?
    pub fn is_pinned(&self) -> bool {
        is_full_sha(&self.reference)
    }
}

/// `^[0-9a-fA-F]{40}$`
pub fn is_full_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `git:github.com/…` is spelled `https://github.com/…` before planning.
pub fn normalize_git_prefix(source: &str) -> String {
    match source.strip_prefix("git:github.com/") {
        Some(rest) => format!("https://github.com/{rest}"),
        None => source.to_string(),
    }
}

/// Does `source` look like a URL (so it is never read as a local path)?
pub fn looks_like_url(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://") || lower.contains("://")
}

fn has_unsafe_chars(s: &str) -> bool {
    s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Owner segment: `[A-Za-z0-9._-]+`, not dot-only.
fn is_package_segment(s: &str) -> bool {
    is_package_name(s) && !s.trim_matches('.').is_empty()
}

fn is_package_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parse a GitHub repository URL; `None` when it is not one upstream accepts.
pub fn parse_github_source(source: &str) -> Option<GitHubSource> {
    if has_unsafe_chars(source) {
        return None;
    }
    let (scheme, rest) = source.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    if rest.contains('?') || rest.contains('#') {
        return None;
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.contains('@') || authority.contains(':') {
        return None;
    }
    if !authority.eq_ignore_ascii_case("github.com") {
        return None;
    }
    let trimmed = path.strip_prefix('/')?;
    if trimmed.contains("//") {
        return None;
    }
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    if trimmed.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for escaped in trimmed.split('/') {
        let part = percent_decode(escaped)?;
        if part.is_empty()
            || part == "."
            || part == ".."
            || part.contains('/')
            || part.contains('\\')
            || has_unsafe_chars(&part)
        {
            return None;
        }
        parts.push(part);
    }
    if parts.len() < 2 || !is_package_segment(&parts[0]) {
        return None;
    }
    let repo = parts[1]
        .strip_suffix(".git")
        .unwrap_or(&parts[1])
        .to_string();
    // GitHub allows a leading dot (".github"); only dot-only names are refused.
    if !is_package_name(&repo) || repo.trim_matches('.').is_empty() {
        return None;
    }
    let mut out = GitHubSource {
        owner: parts[0].clone(),
        repo,
        reference: String::new(),
        path: String::new(),
    };
    if parts.len() == 2 {
        return Some(out);
    }
    if parts.len() < 4 || parts[2] != "tree" {
        return None;
    }
    out.reference = parts[3].clone();
    out.path = parts[4..].join("/");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gh(o: &str, r: &str, reference: &str, path: &str) -> Option<GitHubSource> {
        Some(GitHubSource {
            owner: o.into(),
            repo: r.into(),
            reference: reference.into(),
            path: path.into(),
        })
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(
            parse_github_source("https://github.com/o/r"),
            gh("o", "r", "", "")
        );
        assert_eq!(
            parse_github_source("https://GitHub.com/o/r.git/"),
            gh("o", "r", "", "")
        );
        assert_eq!(
            parse_github_source("http://github.com/o/.github"),
            gh("o", ".github", "", "")
        );
        assert_eq!(
            parse_github_source("https://github.com/o/r/tree/main/plugins/x"),
            gh("o", "r", "main", "plugins/x")
        );
        assert_eq!(
            parse_github_source("https://github.com/o/r/tree/v%201"),
            None,
            "a decoded space is unsafe"
        );
        assert_eq!(
            normalize_git_prefix("git:github.com/obra/superpowers"),
            "https://github.com/obra/superpowers"
        );
    }

    #[test]
    fn refused_forms() {
        for bad in [
            "ftp://github.com/o/r",
            "https://gitlab.com/o/r",
            "https://user@github.com/o/r",
            "https://github.com:443/o/r",
            "https://github.com/o/r?x=1",
            "https://github.com/o/r#frag",
            "https://github.com/o r/x",
            "https://github.com/o//r",
            "https://github.com/o/./r",
            "https://github.com/o/../r",
            "https://github.com/../r",
            "https://github.com/o",
            "https://github.com/",
            "https://github.com/.../r",
            "https://github.com/o/...git",
            "https://github.com/o/r/blob/main/x",
            "https://github.com/o/r/tree",
            "https://github.com/o/r/tree/main/a%2Fb",
            "https://github.com/o/r/tree/main/a%5Cb",
            "https://github.com/o/r/tree/main/%zz",
            "https://github.com/o%21/r",
        ] {
            assert_eq!(parse_github_source(bad), None, "{bad}");
        }
    }

    #[test]
    fn full_sha_pins() {
        let sha = "0123456789abcdef0123456789ABCDEF01234567";
        assert!(is_full_sha(sha));
        assert!(!is_full_sha(&sha[..39]));
        let src = parse_github_source(&format!("https://github.com/o/r/tree/{sha}")).unwrap();
        assert!(src.is_pinned());
    }
}
