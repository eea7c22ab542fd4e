//! Claude plugin marketplaces (`.claude-plugin/marketplace.json`): parsing,
//! validation and entry selection.
//!
//! A marketplace lists plugins with a source each. Relative string sources
//! live in the same repository; `url` sources name another GitHub repository
//! pinned to a full commit; `git-subdir` sources name a directory inside
//! another GitHub repository. Anything else is kept as an unsupported entry:
//! skipped (with its reason) when installing the whole marketplace, an error
//! when selected by name.
//!
//! Unlike upstream, selection happens before the entry limit is applied, so a
//! single plugin of a large marketplace can still be installed by name.

use std::path::Path;

use serde_json::Value;

use crate::compat::{json, paths};
use crate::inventory::names::is_valid_name;

/// Path of the marketplace file inside a repository or directory.
pub const MARKETPLACE_PATH: &str = ".claude-plugin/marketplace.json";

/// Most plugins one install may expand to.
pub const MAX_ENTRIES: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    pub name: String,
    /// `metadata.pluginRoot`, cleaned (prefix of relative sources).
    pub plugin_root: Option<String>,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub description: Option<String>,
    pub source: EntrySource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntrySource {
    /// A directory of the marketplace's own tree (cleaned, `pluginRoot` applied).
    Relative(String),
    /// Another GitHub repository pinned at `sha`; `path` is an optional subdirectory.
    Url {
        url: String,
        owner: String,
        repo: String,
        sha: String,
        path: Option<String>,
    },
    /// A directory inside another GitHub repository; `sha` wins over `git_ref`;
    /// with neither, the default branch is used.
    GitSubdir {
        url: String,
        owner: String,
        repo: String,
        path: String,
        git_ref: Option<String>,
        sha: Option<String>,
    },
    /// A source this implementation cannot install, and why.
    Unsupported(String),
}

impl EntrySource {
    /// `https://github.com/<o>/<r>/tree/<rev>[/<path>]` for remote sources whose
    /// revision is known without a network round trip.
    pub fn tree_url(&self) -> Option<String> {
        let (owner, repo, rev, path) = match self {
            EntrySource::Url {
                owner,
                repo,
                sha,
                path,
                ..
            } => (owner, repo, sha.as_str(), path.as_deref()),
            EntrySource::GitSubdir {
                owner,
                repo,
                path,
                git_ref,
                sha,
                ..
            } => {
                let rev = sha.as_deref().or(git_ref.as_deref())?;
                (owner, repo, rev, Some(path.as_str()))
            }
            _ => return None,
        };
        let mut url = format!("https://github.com/{owner}/{repo}/tree/{rev}");
        if let Some(p) = path.filter(|p| *p != ".") {
            url.push('/');
            url.push_str(p);
        }
        Some(url)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MarketplaceError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("marketplace {marketplace:?} has no plugin named {name:?} (available: {available})")]
    NoSuchEntry {
        marketplace: String,
        name: String,
        available: String,
    },
    #[error("marketplace plugin {name:?} cannot be installed: {reason}")]
    Unsupported { name: String, reason: String },
    #[error(
        "marketplace {marketplace:?} lists {count} plugins, more than the {max} one install may expand to; select one with --name"
    )]
    TooManyEntries {
        marketplace: String,
        count: usize,
        max: usize,
    },
}

/// The entries to install, and the ones skipped in a bulk install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub entries: Vec<Entry>,
    /// `(entry name, reason)` for every unsupported entry left out.
    pub skipped: Vec<(String, String)>,
}

/// Read `<dir>/.claude-plugin/marketplace.json`; `Ok(None)` when there is none.
pub fn read(dir: &Path) -> Result<Option<Marketplace>, MarketplaceError> {
    let path = dir.join(MARKETPLACE_PATH);
    match json::read_file(&path) {
        Ok(None) => Ok(None),
        Ok(Some(doc)) => parse_value(&doc).map(Some),
        Err(message) => Err(MarketplaceError::Invalid {
            path: MARKETPLACE_PATH.into(),
            message,
        }),
    }
}

/// Parse and validate marketplace JSON text.
pub fn parse(text: &str) -> Result<Marketplace, MarketplaceError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| MarketplaceError::Invalid {
        path: MARKETPLACE_PATH.into(),
        message: e.to_string(),
    })?;
    parse_value(&doc)
}

fn invalid(path: impl Into<String>, message: impl Into<String>) -> MarketplaceError {
    MarketplaceError::Invalid {
        path: path.into(),
        message: message.into(),
    }
}

fn parse_value(doc: &Value) -> Result<Marketplace, MarketplaceError> {
    let Value::Object(top) = doc else {
        return Err(invalid(MARKETPLACE_PATH, "must be a JSON object"));
    };
    let name = match json::get(top, "name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        _ => return Err(invalid("name", "required non-empty string")),
    };
    let plugin_root = match json::get(top, "metadata") {
        Some(Value::Object(meta)) => match json::get(meta, "pluginRoot") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => {
                Some(paths::clean_relative(s).map_err(|e| invalid("metadata.pluginRoot", e))?)
            }
            Some(_) => return Err(invalid("metadata.pluginRoot", "must be a string")),
        },
        _ => None,
    };
    let plugins = match json::get(top, "plugins") {
        Some(Value::Array(p)) if !p.is_empty() => p,
        _ => return Err(invalid("plugins", "required non-empty array")),
    };
    let mut entries: Vec<Entry> = Vec::with_capacity(plugins.len());
    for (i, plugin) in plugins.iter().enumerate() {
        let at = format!("plugins[{i}]");
        let Value::Object(plugin) = plugin else {
            return Err(invalid(at, "must be an object"));
        };
        let entry_name = match json::get(plugin, "name") {
            Some(Value::String(s)) if is_valid_name(s.trim()) => s.trim().to_owned(),
            Some(Value::String(s)) => {
                return Err(invalid(
                    format!("{at}.name"),
                    format!("invalid plugin name {s:?}"),
                ));
            }
            _ => return Err(invalid(format!("{at}.name"), "required string")),
        };
        if entries.iter().any(|e| e.name == entry_name) {
            return Err(invalid(
                format!("{at}.name"),
                format!("duplicate plugin name {entry_name:?}"),
            ));
        }
        let description = match json::get(plugin, "description") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            _ => None,
        };
        let source = entry_source(json::get(plugin, "source"), plugin_root.as_deref(), plugin);
        entries.push(Entry {
            name: entry_name,
            description,
            source,
        });
    }
    Ok(Marketplace {
        name,
        plugin_root,
        entries,
    })
}

fn entry_source(
    source: Option<&Value>,
    plugin_root: Option<&str>,
    plugin: &serde_json::Map<String, Value>,
) -> EntrySource {
    if matches!(json::get(plugin, "strict"), Some(Value::Bool(false))) {
        return EntrySource::Unsupported(
            "\"strict\": false entries define the plugin inside the marketplace, which is not supported".into(),
        );
    }
    match source {
        Some(Value::String(s)) => relative_source(s, plugin_root),
        Some(Value::Object(obj)) => {
            let kind = match json::get(obj, "source") {
                Some(Value::String(k)) => k.trim().to_owned(),
                _ => String::new(),
            };
            match kind.as_str() {
                "url" => url_source(obj),
                "git-subdir" => git_subdir_source(obj),
                "" => EntrySource::Unsupported("source object has no \"source\" kind".into()),
                other => EntrySource::Unsupported(format!(
                    "source kind {other:?} is not supported (use a relative path, \"url\" or \"git-subdir\")"
                )),
            }
        }
        None | Some(Value::Null) => EntrySource::Unsupported("entry has no source".into()),
        Some(_) => EntrySource::Unsupported("source must be a string or an object".into()),
    }
}

fn relative_source(raw: &str, plugin_root: Option<&str>) -> EntrySource {
    let trimmed = raw.trim();
    if trimmed.contains("://") || trimmed.starts_with("git@") {
        return EntrySource::Unsupported(format!(
            "external source {trimmed:?} is not a path inside this marketplace"
        ));
    }
    match paths::clean_relative(trimmed) {
        Ok(p) if p == "." => {
            return EntrySource::Unsupported(format!(
                "source {trimmed:?} names the marketplace root itself"
            ));
        }
        Err(e) => return EntrySource::Unsupported(format!("source {trimmed:?}: {e}")),
        Ok(_) => {}
    }
    let joined = match plugin_root {
        Some(root) if root != "." => format!("{root}/{trimmed}"),
        _ => trimmed.to_owned(),
    };
    match paths::clean_relative(&joined) {
        Ok(p) if p == "." => EntrySource::Unsupported(format!(
            "source {trimmed:?} names the marketplace root itself"
        )),
        Ok(p) => EntrySource::Relative(p),
        Err(e) => EntrySource::Unsupported(format!("source {trimmed:?}: {e}")),
    }
}

fn string_field(obj: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    match json::get(obj, key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        _ => None,
    }
}

fn url_source(obj: &serde_json::Map<String, Value>) -> EntrySource {
    let Some(url) = string_field(obj, "url") else {
        return EntrySource::Unsupported("url source has no \"url\"".into());
    };
    let (owner, repo) = match github_repo(&url) {
        Ok(v) => v,
        Err(e) => return EntrySource::Unsupported(e),
    };
    let Some(sha) = string_field(obj, "sha").filter(|s| is_full_sha(s)) else {
        return EntrySource::Unsupported(
            "url source must be pinned to a full 40-hex commit \"sha\"".into(),
        );
    };
    let path = match string_field(obj, "path") {
        None => None,
        Some(p) => match paths::clean_relative(&p) {
            Ok(p) if p == "." => None,
            Ok(p) => Some(p),
            Err(e) => return EntrySource::Unsupported(format!("url source path: {e}")),
        },
    };
    EntrySource::Url {
        url,
        owner,
        repo,
        sha: sha.to_ascii_lowercase(),
        path,
    }
}

fn git_subdir_source(obj: &serde_json::Map<String, Value>) -> EntrySource {
    let Some(url) = string_field(obj, "url") else {
        return EntrySource::Unsupported("git-subdir source has no \"url\"".into());
    };
    let (owner, repo) = match github_repo(&url) {
        Ok(v) => v,
        Err(e) => return EntrySource::Unsupported(e),
    };
    let path = match string_field(obj, "path").map(|p| paths::clean_relative(&p)) {
        Some(Ok(p)) if p != "." => p,
        Some(Err(e)) => return EntrySource::Unsupported(format!("git-subdir path: {e}")),
        _ => {
            return EntrySource::Unsupported(
                "git-subdir source needs a relative \"path\" below the repository root".into(),
            );
        }
    };
    let sha = match string_field(obj, "sha") {
        None => None,
        Some(s) if is_full_sha(&s) => Some(s.to_ascii_lowercase()),
        Some(s) => {
            return EntrySource::Unsupported(format!(
                "git-subdir sha {s:?} is not a full 40-hex commit"
            ));
        }
    };
    let git_ref = match string_field(obj, "ref") {
        None => None,
        Some(r) => match check_ref_format(&r) {
            Ok(()) => Some(r),
            Err(e) => return EntrySource::Unsupported(format!("git-subdir ref {r:?}: {e}")),
        },
    };
    EntrySource::GitSubdir {
        url,
        owner,
        repo,
        path,
        git_ref,
        sha,
    }
}

/// Whether `s` is a full 40-hex commit id.
pub fn is_full_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `(owner, repo)` of a GitHub repository URL: `http(s)://github.com/<o>/<r>[.git][/]`,
/// no userinfo, port, query, fragment or whitespace.
pub fn github_repo(url: &str) -> Result<(String, String), String> {
    let bad = |why: &str| format!("{url:?} is not a GitHub repository URL ({why})");
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("whitespace or control characters"));
    }
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| bad("scheme must be http or https"))?;
    if rest.contains('?') || rest.contains('#') {
        return Err(bad("query or fragment"));
    }
    let (host, path) = rest
        .split_once('/')
        .ok_or_else(|| bad("no repository path"))?;
    if host.contains('@') {
        return Err(bad("userinfo"));
    }
    if host.contains(':') {
        return Err(bad("port"));
    }
    if !host.eq_ignore_ascii_case("github.com") {
        return Err(bad("host must be github.com"));
    }
    let path = path.strip_suffix('/').unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    if segments.len() != 2 {
        return Err(bad("expected /<owner>/<repo>"));
    }
    let owner = segments[0];
    let repo = segments[1].strip_suffix(".git").unwrap_or(segments[1]);
    let npm_like = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            && !s.bytes().all(|b| b == b'.')
    };
    if !npm_like(owner) || owner.starts_with('.') {
        return Err(bad("invalid owner"));
    }
    if !npm_like(repo) {
        return Err(bad("invalid repository name"));
    }
    Ok((owner.to_owned(), repo.to_owned()))
}

/// `git check-ref-format --allow-onelevel`, plus "must not start with `-`".
pub fn check_ref_format(r: &str) -> Result<(), String> {
    if r.starts_with('-') {
        return Err("must not start with '-'".into());
    }
    if r.is_empty() || r == "@" {
        return Err("empty or \"@\"".into());
    }
    if r.starts_with('/') || r.ends_with('/') || r.contains("//") {
        return Err("bad '/' placement".into());
    }
    if r.ends_with('.') || r.contains("..") || r.contains("@{") {
        return Err("contains '..', '@{' or ends with '.'".into());
    }
    if r.chars()
        .any(|c| c.is_control() || matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return Err("contains a forbidden character".into());
    }
    for component in r.split('/') {
        if component.starts_with('.') || component.ends_with(".lock") {
            return Err("a component starts with '.' or ends with '.lock'".into());
        }
    }
    Ok(())
}

impl Marketplace {
    /// Choose what to install: the entry named `name`, or every supported
    /// entry. The entry limit applies to what was selected.
    pub fn select(&self, name: Option<&str>) -> Result<Selection, MarketplaceError> {
        let selection = match name {
            Some(name) => {
                let entry = self
                    .entries
                    .iter()
                    .find(|e| e.name == name)
                    .ok_or_else(|| MarketplaceError::NoSuchEntry {
                        marketplace: self.name.clone(),
                        name: name.to_owned(),
                        available: self
                            .entries
                            .iter()
                            .map(|e| e.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })?;
                if let EntrySource::Unsupported(reason) = &entry.source {
                    return Err(MarketplaceError::Unsupported {
                        name: entry.name.clone(),
                        reason: reason.clone(),
                    });
                }
                Selection {
                    entries: vec![entry.clone()],
                    skipped: Vec::new(),
                }
            }
            None => {
                let (supported, unsupported): (Vec<&Entry>, Vec<&Entry>) = self
                    .entries
                    .iter()
                    .partition(|e| !matches!(e.source, EntrySource::Unsupported(_)));
                Selection {
                    entries: supported.into_iter().cloned().collect(),
                    skipped: unsupported
                        .into_iter()
                        .map(|e| match &e.source {
                            EntrySource::Unsupported(r) => (e.name.clone(), r.clone()),
                            _ => unreachable!("partitioned on Unsupported"),
                        })
                        .collect(),
                }
            }
        };
        let count = selection.entries.len() + selection.skipped.len();
        if count > MAX_ENTRIES {
            return Err(MarketplaceError::TooManyEntries {
                marketplace: self.name.clone(),
                count,
                max: MAX_ENTRIES,
            });
        }
        Ok(selection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "30287f5e3f122a646d1ac5ca3ab96e130c52a3ad";

    fn market(plugins: &str) -> Result<Marketplace, MarketplaceError> {
        parse(&format!(r#"{{"name":"m","plugins":{plugins}}}"#))
    }

    #[test]
    fn structure_is_validated() {
        assert!(parse(r#"{"plugins":[{"name":"a","source":"a"}]}"#).is_err());
        assert!(parse(r#"{"name":"m","plugins":[]}"#).is_err());
        let e = market(r#"[{"name":"bad name","source":"a"}]"#).unwrap_err();
        assert!(e.to_string().contains("plugins[0].name"), "{e}");
        let e = market(r#"[{"name":"a","source":"a"},{"name":"a","source":"b"}]"#).unwrap_err();
        assert!(e.to_string().contains("duplicate plugin name"), "{e}");
        assert!(parse("{").is_err());
    }

    #[test]
    fn relative_sources() {
        let m = parse(
            r#"{"name":"m","metadata":{"pluginRoot":"./plugins"},"plugins":[
                {"name":"a","source":"./a"},{"name":"b","source":"b/"},
                {"name":"c","source":"/abs"},{"name":"d","source":"../../x"},
                {"name":"e","source":"."},{"name":"f","source":"https://x.example/r"},
                {"name":"g","source":"git@github.com:o/r.git"},{"name":"h","source":"C:\\x"}
            ]}"#,
        )
        .unwrap();
        let got: Vec<_> = m.entries.iter().map(|e| &e.source).collect();
        assert_eq!(got[0], &EntrySource::Relative("plugins/a".into()));
        assert_eq!(got[1], &EntrySource::Relative("plugins/b".into()));
        for (i, e) in got.iter().enumerate().skip(2) {
            assert!(matches!(e, EntrySource::Unsupported(_)), "{i}: {e:?}");
        }
        let m = market(r#"[{"name":"a","source":"./"}]"#).unwrap();
        assert!(matches!(m.entries[0].source, EntrySource::Unsupported(_)));
    }

    #[test]
    fn object_sources() {
        let m = market(&format!(
            r#"[{{"name":"u","source":{{"source":"url","url":"https://github.com/o/r.git","sha":"{SHA}"}}}},
               {{"name":"u2","source":{{"source":"url","url":"https://github.com/o/r"}}}},
               {{"name":"u3","source":{{"source":"url","url":"https://gitlab.com/o/r","sha":"{SHA}"}}}},
               {{"name":"s","source":{{"source":"git-subdir","url":"https://github.com/o/r","path":"plugins/x","ref":"v1.5.5","sha":"{SHA}"}}}},
               {{"name":"s2","source":{{"source":"git-subdir","url":"https://github.com/o/r","path":"x","ref":"main"}}}},
               {{"name":"s3","source":{{"source":"git-subdir","url":"https://github.com/o/r","path":"x"}}}},
               {{"name":"s4","source":{{"source":"git-subdir","url":"https://github.com/o/r","path":"x","ref":"-x"}}}},
               {{"name":"s5","source":{{"source":"git-subdir","url":"https://github.com/o/r","path":"x","sha":"abc"}}}},
               {{"name":"s6","source":{{"source":"git-subdir","url":"https://github.com/o/r","path":"../x"}}}},
               {{"name":"n","source":{{"source":"npm","package":"x"}}}},
               {{"name":"st","strict":false,"source":"./st"}}]"#
        ))
        .unwrap();
        let src = |n: &str| &m.entries.iter().find(|e| e.name == n).unwrap().source;
        assert_eq!(
            src("u").tree_url().unwrap(),
            format!("https://github.com/o/r/tree/{SHA}")
        );
        assert_eq!(
            src("s").tree_url().unwrap(),
            format!("https://github.com/o/r/tree/{SHA}/plugins/x")
        );
        assert_eq!(
            src("s2").tree_url().unwrap(),
            "https://github.com/o/r/tree/main/x"
        );
        assert!(matches!(
            src("s3"),
            EntrySource::GitSubdir {
                git_ref: None,
                sha: None,
                ..
            }
        ));
        assert_eq!(src("s3").tree_url(), None);
        for n in ["u2", "u3", "s4", "s5", "s6", "n", "st"] {
            assert!(
                matches!(src(n), EntrySource::Unsupported(_)),
                "{n}: {:?}",
                src(n)
            );
        }
        let bulk = m.select(None).unwrap();
        assert_eq!(bulk.entries.len(), 4);
        assert_eq!(bulk.skipped.len(), 7);
        assert!(matches!(
            m.select(Some("n")),
            Err(MarketplaceError::Unsupported { .. })
        ));
        assert!(matches!(
            m.select(Some("missing")),
            Err(MarketplaceError::NoSuchEntry { .. })
        ));
        assert_eq!(m.select(Some("s")).unwrap().entries[0].name, "s");
    }

    #[test]
    fn limit_applies_after_selection() {
        let plugins: Vec<String> = (0..65)
            .map(|i| format!(r#"{{"name":"p{i}","source":"./p{i}"}}"#))
            .collect();
        let m = market(&format!("[{}]", plugins.join(","))).unwrap();
        assert!(matches!(
            m.select(None),
            Err(MarketplaceError::TooManyEntries { count: 65, .. })
        ));
        assert_eq!(m.select(Some("p64")).unwrap().entries.len(), 1);
    }

    #[test]
    fn github_urls_and_refs() {
        assert!(github_repo("https://github.com/o/r").is_ok());
        assert!(github_repo("https://GitHub.com/o/r.git").is_ok());
        for bad in [
            "ftp://github.com/o/r",
            "https://user@github.com/o/r",
            "https://github.com:443/o/r",
            "https://github.com/o/r?x",
            "https://github.com/o",
            "https://github.com/o/r/tree/main",
            "https://github.com/../r",
            "https://github.com/o/r x",
        ] {
            assert!(github_repo(bad).is_err(), "{bad}");
        }
        for ok in ["main", "v1.5.5", "feature/x", "release-2026"] {
            assert!(check_ref_format(ok).is_ok(), "{ok}");
        }
        for bad in [
            "-x", "a..b", "a b", "a~1", "x.lock", ".hidden", "a/", "@", "a@{1}", "a//b",
        ] {
            assert!(check_ref_format(bad).is_err(), "{bad}");
        }
    }
}
