//! Importing Claude/Codex MCP server declarations (`.mcp.json` and friends).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::json;
use crate::inventory::names::is_valid_name;
use crate::{McpServer, SkippedCapability};

/// Which wrapper a server map was found under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpShape {
    /// `{"mcpServers": {…}}` — the documented form.
    Wrapped,
    /// `{"mcp_servers": {…}}` — the Codex config spelling.
    CodexWrapped,
    /// `{"<name>": {…}, …}` — servers at the top level, no wrapper.
    Flat,
}

/// Find the server map inside an MCP document.
pub fn server_map(doc: &Value) -> Option<(&Map<String, Value>, McpShape)> {
    let Value::Object(top) = doc else {
        return None;
    };
    if let Some(v) = json::get(top, "mcpServers") {
        return v.as_object().map(|m| (m, McpShape::Wrapped));
    }
    if let Some(v) = json::get(top, "mcp_servers") {
        return v.as_object().map(|m| (m, McpShape::CodexWrapped));
    }
    // The flat form: every value that is an object is a server declaration.
    // `$schema`-style string keys are ignored, not treated as servers.
    if top.values().any(Value::is_object) {
        return Some((top, McpShape::Flat));
    }
    None
}

/// Import every server of `servers` (declared in `rel`) into `out`, keyed by id.
pub fn import_servers(
    servers: &Map<String, Value>,
    rel: &str,
    shape: McpShape,
    out: &mut BTreeMap<String, McpServer>,
    skipped: &mut Vec<SkippedCapability>,
) {
    let issue = |reason: String| SkippedCapability {
        capability: "mcp".into(),
        path: Some(rel.to_owned()),
        reason,
    };
    for (display_name, spec) in servers {
        let Value::Object(spec) = spec else {
            if shape != McpShape::Flat {
                skipped.push(issue(format!(
                    "MCP server {display_name:?} must be an object"
                )));
            }
            continue;
        };
        match import_server(display_name, spec) {
            Ok(server) => {
                if out.contains_key(&server.name) {
                    skipped.push(issue(format!(
                        "MCP server {display_name:?} maps to duplicate internal name {:?}",
                        server.name
                    )));
                } else {
                    out.insert(server.name.clone(), server);
                }
            }
            Err(reason) => skipped.push(issue(reason)),
        }
    }
}

fn import_server(display_name: &str, spec: &Map<String, Value>) -> Result<McpServer, String> {
    let bad = |e: String| format!("MCP server {display_name:?}: {e}");
    let declared_type = json::get_str(spec, "type").map_err(bad)?.unwrap_or("");
    let command = json::get_str(spec, "command")
        .map_err(bad)?
        .unwrap_or("")
        .trim();
    let url = json::get_str(spec, "url")
        .map_err(bad)?
        .unwrap_or("")
        .trim();
    let transport = match declared_type.trim().to_ascii_lowercase().as_str() {
        "streamable-http" => "http".to_owned(),
        "local" => "stdio".to_owned(),
        "" if !url.is_empty() => "http".to_owned(),
        "" => "stdio".to_owned(),
        other => other.to_owned(),
    };
    match transport.as_str() {
        "stdio" | "http" | "sse" => {}
        _ => {
            return Err(format!(
                "MCP server {display_name:?} has unsupported transport {declared_type:?}"
            ));
        }
    }
    if transport == "stdio" && command.is_empty() {
        return Err(format!("MCP server {display_name:?} has no command"));
    }
    if transport != "stdio" && url.is_empty() {
        return Err(format!("MCP server {display_name:?} has no URL"));
    }
    let args: Vec<String> = json::get_string_list(spec, "args")
        .map_err(bad)?
        .unwrap_or_default()
        .into_iter()
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .collect();
    let env = json::get_string_map(spec, "env").map_err(bad)?;
    let mut headers = json::get_string_map(spec, "headers").map_err(bad)?;
    // Codex names the variable that holds a bearer token; the connection
    // sends it as `Authorization: Bearer ${VAR}` (expanded at connect time),
    // which also makes export list the variable as required.
    let bearer_var = json::get_str(spec, "bearer_token_env_var")
        .map_err(bad)?
        .unwrap_or("")
        .trim();
    if !bearer_var.is_empty() {
        if !is_env_var_name(bearer_var) {
            return Err(format!(
                "MCP server {display_name:?}: bearer_token_env_var {bearer_var:?} is not an environment variable name"
            ));
        }
        if headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"))
        {
            return Err(format!(
                "MCP server {display_name:?} sets both bearer_token_env_var and an Authorization header"
            ));
        }
        headers.insert(
            "Authorization".to_owned(),
            format!("Bearer ${{{bearer_var}}}"),
        );
    }
    let serial = json::get_bool(spec, "serial").map_err(bad)?;
    let title = json::get_str(spec, "title")
        .map_err(bad)?
        .unwrap_or("")
        .trim();
    let description = json::get_str(spec, "description")
        .map_err(bad)?
        .unwrap_or("")
        .trim();
    let always_load = json::get_bool(spec, "alwaysLoad").map_err(bad)?;
    let identity = identity_json(&transport, command, &args, &env, url, &headers);
    let display = if title.is_empty() {
        display_name.trim()
    } else {
        title
    };
    Ok(McpServer {
        name: server_id(display_name, &identity),
        transport,
        command: (!command.is_empty()).then(|| command.to_owned()),
        args,
        url: (!url.is_empty()).then(|| url.to_owned()),
        env,
        headers,
        display_name: (!display.is_empty()).then(|| display.to_owned()),
        description: (!description.is_empty()).then(|| description.to_owned()),
        auto_start: false,
        load: always_load.then(|| "always".to_owned()),
        imported: true,
        serial,
    })
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The server's id: its name when that is a valid name, otherwise the name
/// reduced to `[A-Za-z0-9_-]` plus `_` and the FNV-1a 32 hash of the name and
/// the connection identity, at most 64 characters. Distinct connections that
/// share a display name thus get distinct, stable ids.
pub fn server_id(name: &str, identity_json: &str) -> String {
    let trimmed = name.trim();
    if is_valid_name(trimmed) {
        return trimmed.to_owned();
    }
    let mut base = String::new();
    let mut last_dash = false;
    for c in trimmed.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            base.push(c);
            last_dash = false;
        } else if !base.is_empty() && !last_dash {
            base.push('-');
            last_dash = true;
        }
    }
    let mut base = base.trim_matches(|c| c == '-' || c == '_').to_owned();
    if base.is_empty() {
        base = "server".into();
    }
    let mut hash: u32 = 0x811c_9dc5;
    for b in trimmed.bytes().chain(identity_json.bytes()) {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    let suffix = format!("_{hash:08x}");
    base.truncate(64 - suffix.len());
    base + &suffix
}

/// The identity JSON exactly as Go's `encoding/json` writes upstream's
/// identity struct (field order, `omitempty`, sorted maps, HTML escaping),
/// so ids match upstream byte for byte.
pub fn identity_json(
    transport: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> String {
    let mut out = String::from("{\"type\":");
    go_string(&mut out, transport);
    if !command.is_empty() {
        out.push_str(",\"command\":");
        go_string(&mut out, command);
    }
    if !args.is_empty() {
        out.push_str(",\"args\":[");
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            go_string(&mut out, a);
        }
        out.push(']');
    }
    go_map(&mut out, "env", env);
    if !url.is_empty() {
        out.push_str(",\"url\":");
        go_string(&mut out, url);
    }
    go_map(&mut out, "headers", headers);
    out.push('}');
    out
}

fn go_map(out: &mut String, key: &str, map: &BTreeMap<String, String>) {
    if map.is_empty() {
        return;
    }
    out.push_str(&format!(",\"{key}\":{{"));
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        go_string(out, k);
        out.push(':');
        go_string(out, v);
    }
    out.push('}');
}

/// Go's JSON string encoding: HTML-sensitive characters and U+2028/U+2029
/// become `\u` escapes.
fn go_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_kept_and_others_hashed() {
        assert_eq!(server_id("context7", "{}"), "context7");
        let id = server_id("文档 服务", "{\"type\":\"stdio\",\"command\":\"x\"}");
        assert!(id.starts_with("server_"), "{id}");
        assert_eq!(id.len(), "server_".len() + 8);
        let other = server_id("文档 服务", "{\"type\":\"stdio\",\"command\":\"y\"}");
        assert_ne!(id, other, "identity is part of the id");
        let mixed = server_id("My Server!", "{}");
        assert!(mixed.starts_with("My-Server_"), "{mixed}");
        let long = server_id(&format!("{} x", "a".repeat(80)), "{}");
        assert_eq!(long.len(), 64);
    }

    /// Expected values computed with Go's encoding/json + hash/fnv over
    /// upstream's identity struct.
    #[test]
    fn ids_match_upstream_byte_for_byte() {
        let none = BTreeMap::new();
        let a = identity_json("stdio", "node", &["server.js".into()], &none, "", &none);
        assert_eq!(
            a,
            r#"{"type":"stdio","command":"node","args":["server.js"]}"#
        );
        assert_eq!(server_id("本地", &a), "server_3e8c9e9d");
        let mut headers = BTreeMap::new();
        headers.insert("Z".to_owned(), "1".to_owned());
        headers.insert("A".to_owned(), "\u{2028}".to_owned());
        let b = identity_json(
            "http",
            "",
            &[],
            &none,
            "https://x.example/mcp?a=1&b=<2>",
            &headers,
        );
        assert_eq!(
            b,
            r#"{"type":"http","url":"https://x.example/mcp?a=1\u0026b=\u003c2\u003e","headers":{"A":"\u2028","Z":"1"}}"#
        );
        assert_eq!(server_id("文档 服务", &b), "server_a1037e69");
    }

    #[test]
    fn identity_is_go_shaped() {
        let mut env = BTreeMap::new();
        env.insert("B".to_owned(), "<&>".to_owned());
        env.insert("A".to_owned(), "1".to_owned());
        let got = identity_json("stdio", "npx", &["-y".into()], &env, "", &BTreeMap::new());
        assert_eq!(
            got,
            r#"{"type":"stdio","command":"npx","args":["-y"],"env":{"A":"1","B":"\u003c\u0026\u003e"}}"#
        );
    }
}
