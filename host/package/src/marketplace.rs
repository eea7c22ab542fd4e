//! Plugin marketplaces: Claude's `.claude-plugin/marketplace.json` and
//! Codex's `.agents/plugins/marketplace.json`. Parsing, validation and entry
//! selection.
//!
//! A marketplace lists plugins with a source each. Relative sources (a path
//! string, or Codex's `{"source": "local", "path": …}`) live in the same
//! repository; `url` sources name another GitHub repository pinned to a full
//! commit; `git-subdir` sources name a directory inside another GitHub
//! repository. Entries are judged as upstream judges Claude marketplaces:
//!
//! - an entry with an empty or invalid name is skipped with a warning;
//! - a source this implementation cannot install (an external URL string, an
//!   npm object, `strict: false`, a Codex entry marked `NOT_AVAILABLE`) is
//!   skipped with a warning naming the entry and the reason;
//! - a relative source that escapes the marketplace (or names its root) and a
//!   duplicated name refuse the whole plan;
//! - a selected entry (`--name`) that would be skipped is an error instead.
//!
//! Unlike upstream, the 64-entry cap bounds bulk installs only: `--name`
//! selects one entry of a larger marketplace (the official Claude and Codex
//! catalogues list 180–290 plugins).

use std::path::Path;

use serde_json::Value;

use crate::compat::{json, paths};
use crate::inventory::names::is_valid_name;

/// Path of a Claude marketplace file inside a repository or directory.
pub const MARKETPLACE_PATH: &str = ".claude-plugin/marketplace.json";
/// Path of a Codex marketplace file inside a repository or directory.
pub const CODEX_MARKETPLACE_PATH: &str = ".agents/plugins/marketplace.json";

/// Most plugins one bulk install may expand to.
pub const MAX_ENTRIES: usize = 64;

/// Most names an error message lists before it just counts the rest.
pub const MAX_LISTED_NAMES: usize = 10;

/// Which marketplace file a catalogue was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Claude,
    Codex,
}

impl Format {
    /// The marketplace file, relative to the marketplace root.
    pub fn path(self) -> &'static str {
        match self {
            Format::Claude => MARKETPLACE_PATH,
            Format::Codex => CODEX_MARKETPLACE_PATH,
        }
    }

    /// `Claude` / `Codex`, as warnings spell it.
    pub fn label(self) -> &'static str {
        match self {
            Format::Claude => "Claude",
            Format::Codex => "Codex",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    pub name: String,
    pub format: Format,
    /// `metadata.pluginRoot` (Claude only), cleaned lexically; may contain `..`
    /// as long as every joined source stays inside the marketplace.
    pub plugin_root: Option<String>,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The entry's name, trimmed; possibly empty or invalid (judged at selection).
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
    /// A source this implementation cannot install, and why: skipped in a
    /// bulk install, an error when selected.
    Unsupported(String),
    /// A broken relative source (absolute, escaping, the root itself):
    /// refuses any plan that includes the entry.
    Invalid(String),
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
    #[error("{file}: {path}: {message}")]
    Invalid {
        file: &'static str,
        path: String,
        message: String,
    },
    #[error("marketplace {marketplace:?} has no plugin named {name:?} (it lists {available})")]
    NoSuchEntry {
        marketplace: String,
        name: String,
        /// A sample of the names (see [`sample_names`]).
        available: String,
    },
    #[error("marketplace plugin {name:?} cannot be installed: {reason}")]
    Unsupported { name: String, reason: String },
    #[error("marketplace plugin {name:?}: {reason}")]
    InvalidEntry { name: String, reason: String },
    #[error(
        "marketplace {marketplace:?} lists {count} plugins, more than the {max} one install may expand to; select one with --name (it lists {sample})"
    )]
    TooManyEntries {
        marketplace: String,
        count: usize,
        max: usize,
        sample: String,
    },
}

/// The entries to install (sorted by name), and a warning for each entry a
/// bulk install skipped (sorted, deduplicated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub entries: Vec<Entry>,
    pub skipped: Vec<String>,
}

/// At most [`MAX_LISTED_NAMES`] names and how many there are in all:
/// `a, b, c` or `286 plugins: a, b, …, j and 276 more`.
pub fn sample_names<S: AsRef<str>>(names: &[S], noun: &str) -> String {
    let shown: Vec<&str> = names
        .iter()
        .take(MAX_LISTED_NAMES)
        .map(AsRef::as_ref)
        .collect();
    if names.len() <= MAX_LISTED_NAMES {
        return shown.join(", ");
    }
    format!(
        "{} {noun}: {} and {} more",
        names.len(),
        shown.join(", "),
        names.len() - MAX_LISTED_NAMES
    )
}

/// Read the marketplace at `dir`: `.claude-plugin/marketplace.json` (upstream's
/// format) first, then `.agents/plugins/marketplace.json`; `Ok(None)` when
/// there is neither.
pub fn read(dir: &Path) -> Result<Option<Marketplace>, MarketplaceError> {
    for format in [Format::Claude, Format::Codex] {
        match json::read_file(&dir.join(format.path())) {
            Ok(None) => continue,
            Ok(Some(doc)) => return parse_value(&doc, format).map(Some),
            Err(message) => {
                return Err(MarketplaceError::Invalid {
                    file: format.path(),
                    path: "(file)".into(),
                    message,
                });
            }
        }
    }
    Ok(None)
}

/// Which marketplace file `dir` holds, if any (the one [`read`] would use).
pub fn format_at(dir: &Path) -> Option<Format> {
    [Format::Claude, Format::Codex]
        .into_iter()
        .find(|f| dir.join(f.path()).is_file())
}

/// Parse and validate Claude marketplace JSON text.
pub fn parse(text: &str) -> Result<Marketplace, MarketplaceError> {
    parse_as(text, Format::Claude)
}

/// Parse and validate marketplace JSON text of the given format.
pub fn parse_as(text: &str, format: Format) -> Result<Marketplace, MarketplaceError> {
    let doc: Value = serde_json::from_str(text).map_err(|e| MarketplaceError::Invalid {
        file: format.path(),
        path: "(file)".into(),
        message: e.to_string(),
    })?;
    parse_value(&doc, format)
}

fn parse_value(doc: &Value, format: Format) -> Result<Marketplace, MarketplaceError> {
    let invalid = |path: String, message: &str| MarketplaceError::Invalid {
        file: format.path(),
        path,
        message: message.to_owned(),
    };
    let Value::Object(top) = doc else {
        return Err(invalid("(file)".into(), "must be a JSON object"));
    };
    let name = match json::get(top, "name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        _ => return Err(invalid("name".into(), "required non-empty string")),
    };
    let plugin_root = match (format, json::get(top, "metadata")) {
        (Format::Claude, Some(Value::Object(meta))) => match json::get(meta, "pluginRoot") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => {
                Some(clean_lexically(s).map_err(|e| invalid("metadata.pluginRoot".into(), &e))?)
            }
            Some(_) => return Err(invalid("metadata.pluginRoot".into(), "must be a string")),
        },
        _ => None,
    };
    let plugins = match json::get(top, "plugins") {
        Some(Value::Array(p)) if !p.is_empty() => p,
        _ => return Err(invalid("plugins".into(), "required non-empty array")),
    };
    let mut entries: Vec<Entry> = Vec::with_capacity(plugins.len());
    for (i, plugin) in plugins.iter().enumerate() {
        let at = format!("plugins[{i}]");
        let Value::Object(plugin) = plugin else {
            return Err(invalid(at, "must be an object"));
        };
        let entry_name = match json::get(plugin, "name") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.trim().to_owned(),
            Some(_) => return Err(invalid(format!("{at}.name"), "must be a string")),
        };
        let description = match json::get(plugin, "description") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            _ => None,
        };
        let source = entry_source(format, plugin_root.as_deref(), plugin);
        entries.push(Entry {
            name: entry_name,
            description,
            source,
        });
    }
    Ok(Marketplace {
        name,
        format,
        plugin_root,
        entries,
    })
}

fn entry_source(
    format: Format,
    plugin_root: Option<&str>,
    plugin: &serde_json::Map<String, Value>,
) -> EntrySource {
    if matches!(json::get(plugin, "strict"), Some(Value::Bool(false))) {
        return EntrySource::Unsupported(
            "\"strict\": false entries define the plugin inside the marketplace, which is not supported".into(),
        );
    }
    if format == Format::Codex
        && let Some(Value::Object(policy)) = json::get(plugin, "policy")
        && matches!(json::get(policy, "installation"), Some(Value::String(p)) if p == "NOT_AVAILABLE")
    {
        return EntrySource::Unsupported(
            "the marketplace marks it not available for install (policy.installation NOT_AVAILABLE)"
                .into(),
        );
    }
    match json::get(plugin, "source") {
        Some(Value::String(s)) => relative_source(s, plugin_root),
        Some(Value::Object(obj)) => {
            let kind = match json::get(obj, "source") {
                Some(Value::String(k)) => k.trim().to_owned(),
                _ => String::new(),
            };
            match kind.as_str() {
                "url" => url_source(obj),
                "git-subdir" => git_subdir_source(obj),
                // Codex's spelling of a path inside the marketplace.
                "local" if format == Format::Codex => match json::get(obj, "path") {
                    Some(Value::String(p)) => relative_source(p, None),
                    _ => EntrySource::Invalid("local source has no \"path\" string".into()),
                },
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

/// Lexical cleaning that keeps leading `..` (so the caller decides whether
/// the result escapes); refuses empty, absolute and drive paths.
fn clean_lexically(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err("is empty".into());
    }
    let normalized = trimmed.replace('\\', "/");
    let b = normalized.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if normalized.starts_with('/') || drive {
        return Err(format!(
            "{trimmed:?} must be a relative path inside the marketplace repository"
        ));
    }
    let mut parts: Vec<&str> = Vec::new();
    for segment in normalized.split('/') {
        match segment {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    Ok(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

/// A path string inside the marketplace (upstream's rules): external URLs are
/// unsupported; absolute paths, `..` escapes and the root itself are invalid.
fn relative_source(raw: &str, plugin_root: Option<&str>) -> EntrySource {
    let trimmed = raw.trim();
    if trimmed.contains("://") || trimmed.starts_with("git@") {
        return EntrySource::Unsupported(format!(
            "external source {trimmed:?} must use a pinned URL object"
        ));
    }
    let source = match clean_lexically(trimmed) {
        Ok(s) => s,
        Err(e) => return EntrySource::Invalid(format!("source {e}")),
    };
    let joined = match plugin_root {
        Some(root) if root != "." => format!("{root}/{source}"),
        _ => source,
    };
    match clean_lexically(&joined) {
        Ok(p) if p != "." && p != ".." && !p.starts_with("../") => EntrySource::Relative(p),
        _ => EntrySource::Invalid(format!(
            "source {trimmed:?} escapes or does not identify a plugin subdirectory"
        )),
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
    /// Choose what to install: the entry named `name`, or every installable
    /// entry (at most [`MAX_ENTRIES`] listed). Entries come back sorted by name.
    pub fn select(&self, name: Option<&str>) -> Result<Selection, MarketplaceError> {
        match name {
            Some(name) => self.select_one(name.trim()),
            None => self.select_all(),
        }
    }

    fn select_one(&self, name: &str) -> Result<Selection, MarketplaceError> {
        let mut matching = self.entries.iter().filter(|e| e.name == name);
        let Some(entry) = matching.next() else {
            let names: Vec<&str> = self
                .entries
                .iter()
                .map(|e| e.name.as_str())
                .filter(|n| is_valid_name(n))
                .collect();
            return Err(MarketplaceError::NoSuchEntry {
                marketplace: self.name.clone(),
                name: name.to_owned(),
                available: sample_names(&names, "plugins"),
            });
        };
        if matching.next().is_some() {
            return Err(self.duplicate(name));
        }
        if !is_valid_name(&entry.name) {
            return Err(MarketplaceError::InvalidEntry {
                name: entry.name.clone(),
                reason: "not a valid plugin name".into(),
            });
        }
        match &entry.source {
            EntrySource::Unsupported(reason) => Err(MarketplaceError::Unsupported {
                name: entry.name.clone(),
                reason: reason.clone(),
            }),
            EntrySource::Invalid(reason) => Err(MarketplaceError::InvalidEntry {
                name: entry.name.clone(),
                reason: reason.clone(),
            }),
            _ => Ok(Selection {
                entries: vec![entry.clone()],
                skipped: Vec::new(),
            }),
        }
    }

    fn select_all(&self) -> Result<Selection, MarketplaceError> {
        if self.entries.len() > MAX_ENTRIES {
            let names: Vec<&str> = self.entries.iter().map(|e| e.name.as_str()).collect();
            return Err(MarketplaceError::TooManyEntries {
                marketplace: self.name.clone(),
                count: self.entries.len(),
                max: MAX_ENTRIES,
                sample: sample_names(&names, "plugins"),
            });
        }
        let label = self.format.label();
        let mut entries: Vec<Entry> = Vec::new();
        let mut skipped = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for entry in &self.entries {
            if entry.name.is_empty() {
                skipped.push(format!(
                    "skipped {label} marketplace entry with an empty name"
                ));
                continue;
            }
            if !is_valid_name(&entry.name) {
                skipped.push(format!(
                    "skipped {label} marketplace plugin {:?}: not a valid plugin name",
                    entry.name
                ));
                continue;
            }
            if !seen.insert(entry.name.as_str()) {
                return Err(self.duplicate(&entry.name));
            }
            match &entry.source {
                EntrySource::Unsupported(reason) => skipped.push(format!(
                    "skipped {label} marketplace plugin {:?}: {reason}",
                    entry.name
                )),
                EntrySource::Invalid(reason) => {
                    return Err(MarketplaceError::InvalidEntry {
                        name: entry.name.clone(),
                        reason: reason.clone(),
                    });
                }
                _ => entries.push(entry.clone()),
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        skipped.sort();
        skipped.dedup();
        Ok(Selection { entries, skipped })
    }

    fn duplicate(&self, name: &str) -> MarketplaceError {
        MarketplaceError::Invalid {
            file: self.format.path(),
            path: "plugins".into(),
            message: format!("contains duplicate plugin name {name:?}"),
        }
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
        let e = market(r#"[{"name":7,"source":"a"}]"#).unwrap_err();
        assert!(e.to_string().contains("plugins[0].name"), "{e}");
        assert!(parse("{").is_err());
        let e = parse_as("[]", Format::Codex).unwrap_err();
        assert!(e.to_string().starts_with(CODEX_MARKETPLACE_PATH), "{e}");
    }

    #[test]
    fn bad_names_are_skipped_and_duplicates_refuse_the_plan() {
        let m = market(
            r#"[{"name":"bad name","source":"./x"},{"name":"","source":"./y"},
                {"name":"ok","source":"./ok"},{"source":"./z"}]"#,
        )
        .unwrap();
        let sel = m.select(None).unwrap();
        assert_eq!(sel.entries.len(), 1);
        assert_eq!(
            sel.skipped,
            [
                "skipped Claude marketplace entry with an empty name",
                "skipped Claude marketplace plugin \"bad name\": not a valid plugin name",
            ]
        );
        let e = m.select(Some("bad name")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "marketplace plugin \"bad name\": not a valid plugin name"
        );
        let m = market(
            r#"[{"name":"a","source":"a"},{"name":"a","source":"b"},{"name":"c","source":"c"}]"#,
        )
        .unwrap();
        let e = m.select(None).unwrap_err();
        assert!(e.to_string().contains("duplicate plugin name \"a\""), "{e}");
        assert!(m.select(Some("a")).is_err());
        assert_eq!(m.select(Some("c")).unwrap().entries[0].name, "c");
    }

    #[test]
    fn relative_sources() {
        let m = parse(
            r#"{"name":"m","metadata":{"pluginRoot":"./plugins"},"plugins":[
                {"name":"a","source":"./a"},{"name":"b","source":"b/"},
                {"name":"c","source":"/abs"},{"name":"d","source":"../../x"},
                {"name":"e","source":"."},{"name":"f","source":"https://x.example/r"},
                {"name":"g","source":"git@github.com:o/r.git"},{"name":"h","source":"C:\\x"},
                {"name":"i","source":"../i"}
            ]}"#,
        )
        .unwrap();
        let src = |n: &str| &m.entries.iter().find(|e| e.name == n).unwrap().source;
        assert_eq!(src("a"), &EntrySource::Relative("plugins/a".into()));
        assert_eq!(src("b"), &EntrySource::Relative("plugins/b".into()));
        // `plugins/../i` stays inside the marketplace; `.` under a
        // pluginRoot names the pluginRoot (upstream joins, then judges).
        assert_eq!(src("i"), &EntrySource::Relative("i".into()));
        assert_eq!(src("e"), &EntrySource::Relative("plugins".into()));
        for n in ["c", "d", "h"] {
            assert!(
                matches!(src(n), EntrySource::Invalid(_)),
                "{n}: {:?}",
                src(n)
            );
        }
        for n in ["f", "g"] {
            assert!(matches!(src(n), EntrySource::Unsupported(_)), "{n}");
        }
        let EntrySource::Invalid(why) = src("d") else {
            unreachable!()
        };
        assert_eq!(
            why,
            "source \"../../x\" escapes or does not identify a plugin subdirectory"
        );
        // An escaping entry refuses the bulk plan and its own selection, not
        // the selection of another entry.
        let e = m.select(None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "marketplace plugin \"c\": source \"/abs\" must be a relative path inside the marketplace repository"
        );
        assert!(
            m.select(Some("d"))
                .unwrap_err()
                .to_string()
                .contains("escapes")
        );
        assert_eq!(m.select(Some("a")).unwrap().entries.len(), 1);
        let m = market(r#"[{"name":"a","source":"./"}]"#).unwrap();
        assert!(matches!(m.entries[0].source, EntrySource::Invalid(_)));
    }

    #[test]
    fn codex_marketplaces() {
        let m = parse_as(
            r#"{"name":"openai-curated","interface":{"displayName":"Curated"},"plugins":[
                {"name":"zeta","source":{"source":"local","path":"./plugins/zeta"},"policy":{"installation":"AVAILABLE"},"category":"Coding"},
                {"name":"alpha","source":{"source":"local","path":"./plugins/alpha"}},
                {"name":"gone","source":{"source":"local","path":"./plugins/gone"},"policy":{"installation":"NOT_AVAILABLE"}},
                {"name":"out","source":{"source":"local","path":"../out"}},
                {"name":"bare","source":"./plugins/bare"},
                {"name":"nopath","source":{"source":"local"}}
            ]}"#,
            Format::Codex,
        )
        .unwrap();
        assert_eq!(m.format, Format::Codex);
        let src = |n: &str| &m.entries.iter().find(|e| e.name == n).unwrap().source;
        assert_eq!(src("zeta"), &EntrySource::Relative("plugins/zeta".into()));
        assert_eq!(src("bare"), &EntrySource::Relative("plugins/bare".into()));
        assert!(matches!(src("gone"), EntrySource::Unsupported(_)));
        assert!(matches!(src("out"), EntrySource::Invalid(_)));
        assert!(matches!(src("nopath"), EntrySource::Invalid(_)));
        let e = m.select(Some("gone")).unwrap_err();
        assert!(e.to_string().contains("NOT_AVAILABLE"), "{e}");
        let sel = m.select(Some("alpha")).unwrap();
        assert_eq!(sel.entries[0].name, "alpha");
        assert!(m.select(None).unwrap_err().to_string().contains("escapes"));
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
               {{"name":"l","source":{{"source":"local","path":"./l"}}}},
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
        // `local` objects are Codex's spelling; a Claude marketplace does not know them.
        for n in ["u2", "u3", "s4", "s5", "s6", "n", "l", "st"] {
            assert!(
                matches!(src(n), EntrySource::Unsupported(_)),
                "{n}: {:?}",
                src(n)
            );
        }
        let bulk = m.select(None).unwrap();
        let names: Vec<&str> = bulk.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["s", "s2", "s3", "u"], "sorted by name");
        assert_eq!(bulk.skipped.len(), 8);
        assert!(
            bulk.skipped
                .iter()
                .all(|w| w.starts_with("skipped Claude marketplace plugin \"")),
            "{:?}",
            bulk.skipped
        );
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
    fn the_cap_bounds_bulk_plans_only_and_messages_list_ten_names() {
        let plugins: Vec<String> = (0..65)
            .map(|i| format!(r#"{{"name":"p{i:02}","source":"./p{i}"}}"#))
            .collect();
        let m = market(&format!("[{}]", plugins.join(","))).unwrap();
        let e = m.select(None).unwrap_err();
        assert!(matches!(
            e,
            MarketplaceError::TooManyEntries { count: 65, .. }
        ));
        assert!(
            e.to_string()
                .ends_with("(it lists 65 plugins: p00, p01, p02, p03, p04, p05, p06, p07, p08, p09 and 55 more)"),
            "{e}"
        );
        assert_eq!(m.select(Some("p64")).unwrap().entries.len(), 1);
        let e = m.select(Some("nope")).unwrap_err().to_string();
        assert!(e.contains("and 55 more"), "{e}");
        assert!(!e.contains("p10"), "{e}");
        assert_eq!(sample_names(&["a", "b"], "plugins"), "a, b");
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
