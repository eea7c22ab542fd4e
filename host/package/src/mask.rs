//! Credentials in MCP server entries: the one place that decides what of a
//! URL, an argument list, a header or an environment value is secret.
//!
//! Two uses share one walk over each field:
//! - **display** ([`McpServer::display`], [`mask_url`], [`mask_args`],
//!   [`mask_value`]): every secret becomes [`MASK`]. `plugin show`,
//!   `plugin doctor`, `mcp list`, `--json`, logs and errors print only this.
//! - **export** ([`Stripper`]): every secret becomes a `${VAR}` reference
//!   named after the server and the field, and the variable is reported as
//!   required, so an exported package carries no credential and works again
//!   once the variables are set (references are expanded at connect time).
//!
//! What counts as secret: URL userinfo; query and fragment values whose key
//! is secret-like ([`is_secret_key`]: `key`, `token`, `secret`, `password`,
//! `auth`, `sig`, …); a fragment that is not `key=value` pairs (opaque); a
//! final path segment shaped like a credential; `--token=…`-style argument
//! values and the value after a secret-like flag (`--api-key VALUE`); shell
//! scripts passed with `-c` that mention a secret; and every header and
//! environment value, except that pure `${VAR}` references (optionally after
//! an auth scheme word such as `Bearer`) are shown as written.

use std::collections::{BTreeMap, BTreeSet};

use crate::McpServer;

/// What a secret is replaced with in display.
pub const MASK: &str = "***";

/// Key fragments that make a query key, flag or assignment secret-like.
const SECRET_WORDS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "sig",
    "credential",
    "session",
    "cookie",
    "bearer",
    "jwt",
    "private",
    "cert",
];

/// Whether `key` (a query key, a flag name without dashes, an env name)
/// names a credential. Matching is by substring on the lowercased key, so
/// `api_key`, `X-Api-Key`, `access_token`, `client_secret`, `sig`,
/// `signature` and `Authorization` all count; the cost of a false positive
/// is a masked harmless value.
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// Decides what replaces one secret: [`MASK`] for display, a `${VAR}`
/// reference for export.
trait Replace {
    /// `field` names the secret (`url_userinfo`, the query key, the flag).
    fn replace(&mut self, field: &str, value: &str) -> String;
}

struct Display;

impl Replace for Display {
    fn replace(&mut self, _field: &str, _value: &str) -> String {
        MASK.to_owned()
    }
}

/// Export's replacement: `${<SCOPE>_<FIELD>}`, each variable remembered.
/// A value that already is a `${VAR}` reference stays and its variable is
/// reported.
pub struct Stripper<'a> {
    scope: &'a str,
    required: &'a mut BTreeSet<String>,
}

impl<'a> Stripper<'a> {
    /// `scope` is the server name (or empty outside `mcpServers`).
    pub fn new(scope: &'a str, required: &'a mut BTreeSet<String>) -> Self {
        Stripper { scope, required }
    }

    /// A URL with its credentials replaced by references.
    pub fn url(&mut self, url: &str) -> String {
        rewrite_url(url, self)
    }

    /// Arguments with credential values replaced by references.
    pub fn args(&mut self, command: Option<&str>, args: &[String]) -> Vec<String> {
        rewrite_args(command, args, self)
    }
}

impl Replace for Stripper<'_> {
    fn replace(&mut self, field: &str, value: &str) -> String {
        if let Some(existing) = whole_reference(value) {
            self.required.insert(existing.to_owned());
            return value.to_owned();
        }
        let var = env_var_name(if self.scope.trim().is_empty() {
            field.to_owned()
        } else {
            format!("{}_{field}", self.scope)
        });
        self.required.insert(var.clone());
        format!("${{{var}}}")
    }
}

/// An environment variable name made of `name`: upper-cased, every other
/// character `_`, trimmed of `_`; `SECRET` when nothing is left.
pub fn env_var_name(name: impl AsRef<str>) -> String {
    let upper: String = name
        .as_ref()
        .trim()
        .chars()
        .map(|c| {
            let mut up = c.to_uppercase();
            match (up.next(), up.next()) {
                (Some(u), None) if u.is_ascii_uppercase() || u.is_ascii_digit() => u,
                _ => '_',
            }
        })
        .collect();
    let name = upper.trim_matches('_');
    if name.is_empty() {
        "SECRET".into()
    } else {
        name.into()
    }
}

/// `${VAR}` or `$VAR` spanning the whole value → `VAR`.
pub fn whole_reference(value: &str) -> Option<&str> {
    let rest = value.trim().strip_prefix('$')?;
    let inner = match rest.strip_prefix('{') {
        Some(braced) => braced.strip_suffix('}')?,
        None => rest,
    };
    is_var_name(inner).then_some(inner)
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A URL for display: userinfo, secret query/fragment values, opaque
/// fragments and credential-shaped final path segments masked.
pub fn mask_url(url: &str) -> String {
    rewrite_url(url, &mut Display)
}

/// An argument list for display.
pub fn mask_args(command: Option<&str>, args: &[String]) -> Vec<String> {
    rewrite_args(command, args, &mut Display)
}

/// A header or environment value for display: `***` unless it is only
/// variable references (optionally after an auth scheme word), which name
/// what to set and hold no secret; a reference's `:-default` is masked.
pub fn mask_value(value: &str) -> String {
    let trimmed = value.trim();
    let (scheme, rest) = match trimmed.split_once(char::is_whitespace) {
        Some((word, rest))
            if ["bearer", "basic", "token"].contains(&word.to_ascii_lowercase().as_str()) =>
        {
            (Some(word), rest.trim())
        }
        _ => (None, trimmed),
    };
    match references_only(rest) {
        Some(shown) => match scheme {
            Some(word) => format!("{word} {shown}"),
            None => shown,
        },
        None => MASK.to_owned(),
    }
}

/// `${A}${B:-x}` → `${A}${B:-***}`; `None` when anything but references
/// (and whitespace) is present.
fn references_only(text: &str) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let after = rest.strip_prefix("${")?;
        let end = after.find('}')?;
        let body = &after[..end];
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        if !is_var_name(name) {
            return None;
        }
        out.push_str("${");
        out.push_str(name);
        if let Some(default) = default {
            out.push_str(":-");
            if !default.is_empty() {
                out.push_str(MASK);
            }
        }
        out.push('}');
        rest = after[end + 1..].trim_start();
    }
    Some(out)
}

fn rewrite_url(url: &str, replace: &mut dyn Replace) -> String {
    // Split off the fragment, then the query, then scheme://authority/path.
    let (before_fragment, fragment) = match url.split_once('#') {
        Some((head, fragment)) => (head, Some(fragment)),
        None => (url, None),
    };
    let (before_query, query) = match before_fragment.split_once('?') {
        Some((head, query)) => (head, Some(query)),
        None => (before_fragment, None),
    };
    let mut out = String::with_capacity(url.len());
    let (scheme, rest) = match before_query.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, before_query),
    };
    let (authority, path) = match scheme {
        Some(_) => match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        },
        None => ("", rest),
    };
    if let Some(scheme) = scheme {
        out.push_str(scheme);
        out.push_str("://");
    }
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            out.push_str(&replace.replace("url_userinfo", userinfo));
            out.push('@');
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    out.push_str(&rewrite_path(path, replace));
    if let Some(query) = query {
        out.push('?');
        out.push_str(&rewrite_pairs(query, '&', replace));
    }
    if let Some(fragment) = fragment {
        out.push('#');
        if fragment.is_empty() {
        } else if fragment.contains('=') {
            out.push_str(&rewrite_pairs(fragment, '&', replace));
        } else {
            out.push_str(&replace.replace("url_fragment", fragment));
        }
    }
    out
}

/// The last path segment is masked when it is shaped like a credential
/// (webhook-style URLs carry the secret there).
fn rewrite_path(path: &str, replace: &mut dyn Replace) -> String {
    let Some(slash) = path.rfind('/') else {
        return path.to_owned();
    };
    let last = &path[slash + 1..];
    if looks_like_credential(last) {
        format!("{}/{}", &path[..slash], replace.replace("url_path", last))
    } else {
        path.to_owned()
    }
}

/// At least 20 characters of `[A-Za-z0-9_-]` (or a `${VAR}` reference),
/// with letters and digits mixed: random tokens, not words or versions.
fn looks_like_credential(segment: &str) -> bool {
    if whole_reference(segment).is_some() {
        return true;
    }
    segment.len() >= 20
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && segment.chars().any(|c| c.is_ascii_digit())
        && segment.chars().any(|c| c.is_ascii_alphabetic())
}

fn rewrite_pairs(text: &str, separator: char, replace: &mut dyn Replace) -> String {
    text.split(separator)
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if is_secret_key(key) && !value.is_empty() => {
                format!("{key}={}", replace.replace(key, value))
            }
            _ => pair.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(&separator.to_string())
}

/// Interpreters whose `-c` argument is a script.
const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "cmd",
    "powershell",
    "pwsh",
];

fn rewrite_args(command: Option<&str>, args: &[String], replace: &mut dyn Replace) -> Vec<String> {
    let shell = command
        .map(|c| {
            let base = c
                .rsplit(['/', '\\'])
                .next()
                .unwrap_or(c)
                .to_ascii_lowercase();
            let stem = base.strip_suffix(".exe").unwrap_or(&base).to_owned();
            SHELLS.contains(&stem.as_str())
        })
        .unwrap_or(false);
    let mut out = Vec::with_capacity(args.len());
    let mut value_of: Option<String> = None;
    let mut script_next = false;
    for arg in args {
        if let Some(flag) = value_of.take() {
            out.push(replace.replace(&flag, arg));
            continue;
        }
        if script_next {
            script_next = false;
            if SECRET_WORDS
                .iter()
                .any(|w| arg.to_ascii_lowercase().contains(w))
                || arg.contains("://")
            {
                out.push(replace.replace("script", arg));
                continue;
            }
        }
        if shell
            && ["-c", "/c", "-command", "-encodedcommand"]
                .contains(&arg.to_ascii_lowercase().as_str())
        {
            script_next = true;
            out.push(arg.clone());
            continue;
        }
        if arg.contains("://") && !arg.starts_with('-') {
            out.push(rewrite_url(arg, replace));
            continue;
        }
        if let Some(stripped) = arg.strip_prefix('-') {
            let name = stripped.trim_start_matches('-');
            match name.split_once('=') {
                Some((flag, value)) if is_secret_key(flag) && !value.is_empty() => {
                    let prefix = &arg[..arg.len() - value.len()];
                    out.push(format!("{prefix}{}", replace.replace(flag, value)));
                }
                Some((_, value)) if value.contains("://") => {
                    let prefix = &arg[..arg.len() - value.len()];
                    out.push(format!("{prefix}{}", rewrite_url(value, replace)));
                }
                Some(_) => out.push(arg.clone()),
                None => {
                    if is_secret_key(name) && !name.is_empty() {
                        value_of = Some(name.to_owned());
                    }
                    out.push(arg.clone());
                }
            }
            continue;
        }
        // `KEY=value` assignments (env-style arguments).
        match arg.split_once('=') {
            Some((key, value)) if is_var_name(key) && is_secret_key(key) && !value.is_empty() => {
                out.push(format!("{key}={}", replace.replace(key, value)));
            }
            _ => out.push(arg.clone()),
        }
    }
    out
}

/// An MCP server entry as every display shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpDisplay {
    pub transport: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl McpDisplay {
    /// `command args…` or the URL, on one line.
    pub fn target(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => std::iter::once(command.clone())
                .chain(self.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(url)) => url.clone(),
            (None, None) => String::new(),
        }
    }
}

impl McpServer {
    /// The entry with every credential masked.
    pub fn display(&self) -> McpDisplay {
        McpDisplay {
            transport: self.transport.clone(),
            command: self.command.as_deref().map(|c| {
                // A command is a path or a name; a URL-shaped one is masked.
                if c.contains("://") {
                    mask_url(c)
                } else {
                    c.to_owned()
                }
            }),
            args: mask_args(self.command.as_deref(), &self.args),
            url: self.url.as_deref().map(mask_url),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), mask_value(v)))
                .collect(),
            headers: self
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), mask_value(v)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_userinfo_secret_queries_and_opaque_fragments() {
        assert_eq!(
            mask_url("https://user:pw@host.example/mcp?api_key=abc&page=2"),
            "https://***@host.example/mcp?api_key=***&page=2"
        );
        assert_eq!(
            mask_url("https://h/x?Token=t&sig=s&X-Amz-Signature=z&q=1#access_token=a&state=s"),
            "https://h/x?Token=***&sig=***&X-Amz-Signature=***&q=1#access_token=***&state=s"
        );
        assert_eq!(mask_url("https://h/p#opaque"), "https://h/p#***");
        assert_eq!(
            mask_url("https://hooks.example/services/T00/B00/Xq93kd83KdjE8s0dk3LsmA"),
            "https://hooks.example/services/T00/B00/***"
        );
        assert_eq!(
            mask_url("http://127.0.0.1:8080/mcp"),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(
            mask_url("https://mcp.context7.com/mcp"),
            "https://mcp.context7.com/mcp"
        );
        // A password with '@' in it still goes whole; '@' in a path is no
        // userinfo; odd input never panics.
        assert_eq!(mask_url("https://u:p@ss@h/"), "https://***@h/");
        assert_eq!(mask_url("https://h/p@x"), "https://h/p@x");
        assert_eq!(mask_url("ünï://ü:ß@ä/ö?é=ø"), "ünï://***@ä/ö?é=ø");
        for odd in ["", "?", "#", "://", "@", "a?b=c=d&&=", "x://@/"] {
            let _ = mask_url(odd);
        }
    }

    #[test]
    fn args_lose_flag_values_and_shell_secrets() {
        let args: Vec<String> = [
            "--token=abc",
            "--api-key",
            "k123",
            "--port",
            "80",
            "GITHUB_TOKEN=ghp_x",
            "https://u:p@h/?key=1",
            "--url=https://h/?auth=z",
            "plain",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            mask_args(Some("npx"), &args),
            vec![
                "--token=***",
                "--api-key",
                "***",
                "--port",
                "80",
                "GITHUB_TOKEN=***",
                "https://***@h/?key=***",
                "--url=https://h/?auth=***",
                "plain"
            ]
        );
        let script = vec!["-c".to_string(), "TOKEN=s3 node server.js".to_string()];
        assert_eq!(mask_args(Some("/bin/bash"), &script), vec!["-c", "***"]);
        let harmless = vec!["-c".to_string(), "node server.js".to_string()];
        assert_eq!(mask_args(Some("bash"), &harmless), harmless);
    }

    #[test]
    fn values_are_masked_but_references_shown() {
        assert_eq!(mask_value("Bearer abc"), "***");
        assert_eq!(mask_value("s3cret"), "***");
        assert_eq!(
            mask_value("Bearer ${GITHUB_TOKEN}"),
            "Bearer ${GITHUB_TOKEN}"
        );
        assert_eq!(mask_value("${CONTEXT7_API_KEY:-}"), "${CONTEXT7_API_KEY:-}");
        assert_eq!(mask_value("${A:-fallback}"), "${A:-***}");
        assert_eq!(mask_value("x${A}"), "***");
        assert_eq!(mask_value(""), "***");
    }

    #[test]
    fn export_replaces_with_references_and_reports_them() {
        let mut required = BTreeSet::new();
        let mut strip = Stripper::new("docs", &mut required);
        assert_eq!(
            strip.url("https://u:p@h/?api_key=abc&x=1"),
            "https://${DOCS_URL_USERINFO}@h/?api_key=${DOCS_API_KEY}&x=1"
        );
        assert_eq!(
            strip.args(
                Some("npx"),
                &["--token=t".into(), "--api-key".into(), "${MINE}".into()]
            ),
            vec!["--token=${DOCS_TOKEN}", "--api-key", "${MINE}"]
        );
        assert_eq!(
            required.into_iter().collect::<Vec<_>>(),
            vec!["DOCS_API_KEY", "DOCS_TOKEN", "DOCS_URL_USERINFO", "MINE"]
        );
    }

    #[test]
    fn server_display_masks_every_field() {
        let server = McpServer {
            name: "s".into(),
            transport: "http".into(),
            command: None,
            args: vec![],
            url: Some("https://user:pw@host/?api_key=k".into()),
            env: BTreeMap::from([("A".into(), "secret".into())]),
            headers: BTreeMap::from([("Authorization".into(), "Bearer tok".into())]),
            display_name: None,
            description: None,
            auto_start: false,
            load: None,
            imported: true,
            serial: false,
        };
        let shown = serde_json::to_string(&server.display()).unwrap();
        for secret in ["user", "pw", "=k", "secret", "tok"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }
}
