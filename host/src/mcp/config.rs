//! Which MCP servers exist: the `mcpServers` of the enabled installed
//! plugins, each with the identity its connections and cached schemas are
//! keyed by, and the expansion of `${VAR}` references at connect time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use reasonix_package::McpServer;
use sha2::{Digest, Sha256};

use crate::home::ReasonixHome;
use crate::install::installed::installed_packages;

/// One declared server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The server id (its key in `mcpServers`, or the imported id); the
    /// `<server>` of `mcp__<server>__<tool>`.
    pub id: String,
    pub plugin: String,
    pub plugin_root: PathBuf,
    /// The installed tree's digest (absent for links): a changed package is
    /// a new identity, so its tools are discovered again.
    pub tree_digest: Option<String>,
    pub server: McpServer,
    /// Set when another enabled plugin declared the same id first.
    pub conflict: Option<String>,
}

impl ServerSpec {
    /// The connection identity: sha256 over the plugin, its root and tree
    /// digest, and the declared launch fields (transport, command, args,
    /// env, url, headers, unexpanded). Connections and the schema cache are
    /// keyed by it; anything that could change what answers changes it.
    pub fn identity(&self) -> String {
        let s = &self.server;
        let declared = reasonix_package::compat::mcp::identity_json(
            &s.transport,
            s.command.as_deref().unwrap_or_default(),
            &s.args,
            &s.env,
            s.url.as_deref().unwrap_or_default(),
            &s.headers,
        );
        let mut hasher = Sha256::new();
        for part in [
            self.plugin.as_str(),
            &self.plugin_root.to_string_lossy(),
            self.tree_digest.as_deref().unwrap_or_default(),
            &self.id,
            &declared,
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0u8]);
        }
        format!("sha256:{}", hex::encode(hasher.finalize()))
    }
}

/// The servers of every enabled installed plugin, sorted by id. A second
/// plugin declaring an id already taken keeps its entry, marked with a
/// conflict, and never connects.
pub fn servers_from_home(home: &ReasonixHome) -> Result<Vec<ServerSpec>, String> {
    let (installed, _warnings) = installed_packages(home).map_err(|e| e.to_string())?;
    let mut out: Vec<ServerSpec> = Vec::new();
    for entry in installed {
        if entry.state() != "enabled" {
            continue;
        }
        let Ok(package) = entry.package else { continue };
        for server in package.inventory.mcp_servers {
            let conflict = out
                .iter()
                .find(|s| s.id == server.name && s.conflict.is_none())
                .map(|s| {
                    format!(
                        "plugin {:?} already declares an MCP server {:?}",
                        s.plugin, s.id
                    )
                });
            out.push(ServerSpec {
                id: server.name.clone(),
                plugin: entry.entry.name.clone(),
                plugin_root: entry.root.clone(),
                tree_digest: entry.entry.tree_digest.clone(),
                server,
                conflict,
            });
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id).then(a.plugin.cmp(&b.plugin)));
    Ok(out)
}

/// A `${VAR}` the environment does not set, named for the error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "environment variable {var} is not set (needed by the server's {field}); set it, or give a default as ${{{var}:-default}}"
)]
pub struct MissingVar {
    pub var: String,
    pub field: String,
}

/// Values for `${VAR}` references: the process environment, with the plugin
/// root variables set.
pub struct Expander<'a> {
    pub env: &'a (dyn Fn(&str) -> Option<String> + Send + Sync),
    pub plugin_root: &'a Path,
}

impl Expander<'_> {
    /// Expand `${VAR}` and `${VAR:-default}` in `text`; `${CLAUDE_PLUGIN_ROOT}`
    /// and `${REASONIX_PLUGIN_ROOT}` are the plugin root. Anything else with
    /// a `$` stays as written.
    pub fn expand(&self, text: &str, field: &str) -> Result<String, MissingVar> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                return Ok(out);
            };
            let body = &after[..end];
            let (name, default) = match body.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (body, None),
            };
            if !is_var_name(name) {
                out.push_str("${");
                out.push_str(body);
                out.push('}');
            } else if name == "CLAUDE_PLUGIN_ROOT" || name == "REASONIX_PLUGIN_ROOT" {
                out.push_str(&self.plugin_root.to_string_lossy());
            } else {
                match ((self.env)(name).filter(|v| !v.is_empty()), default) {
                    (Some(value), _) => out.push_str(&value),
                    (None, Some(default)) => out.push_str(default),
                    (None, None) => {
                        return Err(MissingVar {
                            var: name.to_owned(),
                            field: field.to_owned(),
                        });
                    }
                }
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    pub fn expand_map(
        &self,
        map: &BTreeMap<String, String>,
        field: &str,
    ) -> Result<BTreeMap<String, String>, MissingVar> {
        map.iter()
            .map(|(k, v)| Ok((k.clone(), self.expand(v, &format!("{field}.{k}"))?)))
            .collect()
    }
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where `${VAR}` values come from (the process environment in production).
pub type EnvLookup = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The process environment as an expander lookup.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_expand_with_defaults_and_roots() {
        let env = |name: &str| (name == "TOKEN").then(|| "t0k".to_string());
        let x = Expander {
            env: &env,
            plugin_root: Path::new("/p"),
        };
        assert_eq!(x.expand("Bearer ${TOKEN}", "h").unwrap(), "Bearer t0k");
        assert_eq!(x.expand("${NOPE:-}", "h").unwrap(), "");
        assert_eq!(x.expand("${NOPE:-d}x", "h").unwrap(), "dx");
        assert_eq!(
            x.expand("${CLAUDE_PLUGIN_ROOT}/bin", "c").unwrap(),
            "/p/bin"
        );
        assert_eq!(
            x.expand("$HOME ${1x} ${open", "a").unwrap(),
            "$HOME ${1x} ${open"
        );
        let err = x.expand("${MISSING}", "headers.Authorization").unwrap_err();
        assert_eq!(err.var, "MISSING");
        assert!(err.to_string().contains("headers.Authorization"), "{err}");
    }

    #[test]
    fn identity_follows_the_declaration() {
        let server = McpServer {
            name: "s".into(),
            transport: "stdio".into(),
            command: Some("node".into()),
            args: vec!["a.js".into()],
            url: None,
            env: BTreeMap::new(),
            headers: BTreeMap::new(),
            display_name: None,
            description: None,
            auto_start: false,
            load: None,
            imported: false,
            serial: false,
        };
        let spec = ServerSpec {
            id: "s".into(),
            plugin: "p".into(),
            plugin_root: "/r".into(),
            tree_digest: None,
            server,
            conflict: None,
        };
        let mut other = spec.clone();
        assert_eq!(spec.identity(), other.identity());
        other.server.args.push("--x".into());
        assert_ne!(spec.identity(), other.identity());
        let mut moved = spec.clone();
        moved.tree_digest = Some("sha256:1".into());
        assert_ne!(spec.identity(), moved.identity());
        // Enablement and serial are not part of what answers.
        let mut serial = spec.clone();
        serial.server.serial = true;
        serial.server.auto_start = true;
        assert_eq!(spec.identity(), serial.identity());
    }
}
