//! `reasonix plugin export`: an installed package packed as a `.zip` for
//! someone else's machine (§a.14), credentials stripped.
//!
//! Entries hang off one `<name>/` directory; `.git`, `.hg` and `.svn` never
//! travel; only regular files are packed (a symlink would dangle there or
//! smuggle a path off here); the archive is refused past 64 MiB rather than
//! truncated. In the five credential-bearing files every string under an
//! `env` or `headers` object becomes a `${VAR}` reference (inside
//! `mcpServers` named `<SERVER>_<FIELD>`), and so do, in MCP server entries,
//! what every display masks (`reasonix_package::mask`): URL userinfo and
//! secret query values, credential flag arguments. The variables the result
//! needs are reported (a Codex `bearer_token_env_var` among them). Other
//! files are packed byte for byte.
use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use reasonix_package::mask::{Stripper, env_var_name, whole_reference};
use serde_json::Value;

use crate::install::error::{ErrorCode, InstallError, InstallResult};
use crate::install::gojson;
use crate::install::listing::sorted_entries;
use crate::registry::is_valid_name;

/// Packed bytes are capped at 64 MiB.
pub const EXPORT_SIZE_LIMIT: u64 = 64 << 20;

const SKIP_DIRS: &[&str] = &[".git", ".hg", ".svn"];
const CREDENTIAL_FILES: &[&str] = &[
    "reasonix-plugin.json",
    ".codex-plugin/plugin.json",
    ".claude-plugin/plugin.json",
    ".mcp.json",
    ".claude/settings.json",
];

/// An export: the zip bytes and the environment variables it needs.
#[derive(Debug, Clone)]
pub struct Export {
    pub zip: Vec<u8>,
    pub required_env: Vec<String>,
    pub files: usize,
}

fn export_failed(msg: impl Into<String>) -> InstallError {
    InstallError::new(ErrorCode::Io, msg)
        .with_next("Fix the file named above (or remove it from the package), then export again.")
}

/// Pack the package rooted at `root` under the name `name`.
pub fn export_package(name: &str, root: &Path) -> InstallResult<Export> {
    if !is_valid_name(name) {
        return Err(InstallError::new(
            ErrorCode::InvalidName,
            format!("invalid plugin name {name:?}"),
        ));
    }
    // A linked install is a symlink to the author's directory: pack its target.
    let resolved = fs::canonicalize(root)
        .map_err(|e| export_failed(format!("cannot resolve {}: {e}", root.display())))?;
    let mut files = Vec::new();
    collect(&resolved, "", &mut files)?;

    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut required = BTreeSet::new();
    let mut total: u64 = 0;
    let too_big = || {
        InstallError::new(
            ErrorCode::LimitExceeded,
            format!(
                "plugin {name:?} exceeds the {} MB export limit",
                EXPORT_SIZE_LIMIT >> 20
            ),
        )
        .with_next("Remove large files (build outputs, vendored dependencies) from the package, then export again.")
    };
    for (rel, path) in &files {
        // Refuse before reading: an oversized file must not be loaded at all.
        let len = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if total + len > EXPORT_SIZE_LIMIT && !CREDENTIAL_FILES.contains(&rel.as_str()) {
            return Err(too_big());
        }
        let mut data = fs::read(path).map_err(|e| InstallError::io("read", path, e))?;
        if CREDENTIAL_FILES.contains(&rel.as_str()) {
            let (stripped, names) =
                strip_credentials(&data).map_err(|e| export_failed(format!("{rel}: {e}")))?;
            data = stripped;
            required.extend(names);
        }
        total += data.len() as u64;
        if total > EXPORT_SIZE_LIMIT {
            return Err(too_big());
        }
        let mode = fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0o644);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(mode);
        writer
            .start_file(format!("{name}/{rel}"), options)
            .and_then(|_| writer.write_all(&data).map_err(Into::into))
            .map_err(|e| export_failed(format!("zip {rel}: {e}")))?;
    }
    let cursor = writer
        .finish()
        .map_err(|e| export_failed(format!("zip: {e}")))?;
    Ok(Export {
        zip: cursor.into_inner(),
        required_env: required.into_iter().collect(),
        files: files.len(),
    })
}

/// Regular files under `dir` in lexical walk order, as (slash path, path).
fn collect(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, std::path::PathBuf)>,
) -> InstallResult<()> {
    let entries = sorted_entries(dir)?;
    for entry in entries {
        let file = entry.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            file.clone()
        } else {
            format!("{prefix}/{file}")
        };
        let kind = entry
            .file_type()
            .map_err(|e| InstallError::io("stat", &entry.path(), e))?;
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&file.as_str()) {
                collect(&entry.path(), &rel, out)?;
            }
        } else if kind.is_file() {
            out.push((rel, entry.path()));
        }
    }
    Ok(())
}

/// Rewrite every literal under `env`/`headers` into a `${VAR}` reference;
/// returns the re-serialised file (2-space indent, sorted keys, trailing
/// newline) and the variable names it now needs.
pub fn strip_credentials(raw: &[u8]) -> Result<(Vec<u8>, Vec<String>), String> {
    // UTF-8 (BOM stripped), UTF-16 (BOM or NUL pattern) or GB18030, as upstream.
    let text = reasonix_package::compat::encoding::decode(raw)?;
    let mut doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut required = BTreeSet::new();
    strip_node(&mut doc, "", &mut required);
    let mut out = gojson::marshal_indent_value(&doc);
    out.push('\n');
    Ok((out.into_bytes(), required.into_iter().collect()))
}

fn strip_node(node: &mut Value, scope: &str, required: &mut BTreeSet<String>) {
    match node {
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| strip_node(item, scope, required)),
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key.eq_ignore_ascii_case("mcpServers") || key.eq_ignore_ascii_case("mcp_servers")
                {
                    if let Value::Object(servers) = value {
                        for (server, def) in servers.iter_mut() {
                            strip_server(def, server, required);
                            strip_node(def, server, required);
                        }
                    }
                } else if key.eq_ignore_ascii_case("env") || key.eq_ignore_ascii_case("headers") {
                    if let Value::Object(fields) = value {
                        for (field, v) in fields.iter_mut() {
                            let Value::String(text) = v else { continue };
                            if let Some(existing) = env_reference(text.trim()) {
                                required.insert(existing);
                                continue;
                            }
                            let var = export_var_name(scope, field);
                            *v = Value::String(format!("${{{var}}}"));
                            required.insert(var);
                        }
                    }
                } else {
                    strip_node(value, scope, required);
                }
            }
        }
        _ => {}
    }
}

/// The credentials of one MCP server entry outside `env`/`headers`, which
/// `show` masks too: URL userinfo and secret query values, credential flag
/// arguments become `${VAR}` references; Codex's `bearer_token_env_var`
/// names a variable the package needs.
fn strip_server(def: &mut Value, server: &str, required: &mut BTreeSet<String>) {
    let Value::Object(fields) = def else { return };
    let command = fields
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut strip = Stripper::new(server, required);
    if let Some(Value::String(url)) = fields.get_mut("url") {
        *url = strip.url(url);
    }
    if let Some(Value::Array(items)) = fields.get_mut("args") {
        let args: Vec<String> = items
            .iter()
            .map(|a| a.as_str().unwrap_or_default().to_owned())
            .collect();
        if items.iter().all(Value::is_string) {
            *items = strip
                .args(command.as_deref(), &args)
                .into_iter()
                .map(Value::String)
                .collect();
        }
    }
    if let Some(var) = fields
        .get("bearer_token_env_var")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        required.insert(var.to_owned());
    }
}

/// `^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$` → the variable name.
fn env_reference(s: &str) -> Option<String> {
    whole_reference(s).map(str::to_owned)
}

fn export_var_name(scope: &str, field: &str) -> String {
    if scope.trim().is_empty() {
        env_var_name(field)
    } else {
        env_var_name(format!("{scope}_{field}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_become_references() {
        let raw = br#"{"mcpServers":{"docs":{"url":"https://x","headers":{"Authorization":"Bearer abc"},"env":{"TOKEN":"${DOCS_TOKEN}"}}},"runtime":{"env":{"api-key":"s3cret"}}}"#;
        let (out, names) = strip_credentials(raw).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r#""Authorization": "${DOCS_AUTHORIZATION}""#),
            "{text}"
        );
        assert!(text.contains(r#""TOKEN": "${DOCS_TOKEN}""#), "{text}");
        assert!(text.contains(r#""api-key": "${API_KEY}""#), "{text}");
        assert!(!text.contains("s3cret") && !text.contains("abc"));
        assert_eq!(names, vec!["API_KEY", "DOCS_AUTHORIZATION", "DOCS_TOKEN"]);
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn urls_args_and_bearer_variables_are_stripped_like_show_masks_them() {
        let raw = br#"{"mcpServers":{"docs":{"type":"http","url":"https://user:pw@h.example/mcp?api_key=abc&v=1","args":["--token=t0k","--port","1"]}},"mcp_servers":{"gh":{"url":"https://api.example/mcp","bearer_token_env_var":"GH_PAT"}}}"#;
        let (out, names) = strip_credentials(raw).unwrap();
        let text = String::from_utf8(out).unwrap();
        for secret in ["user:pw", "abc", "t0k"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(
            text.contains("https://${DOCS_URL_USERINFO}@h.example/mcp?api_key=${DOCS_API_KEY}"),
            "{text}"
        );
        assert!(text.contains("--token=${DOCS_TOKEN}"), "{text}");
        assert_eq!(
            names,
            vec!["DOCS_API_KEY", "DOCS_TOKEN", "DOCS_URL_USERINFO", "GH_PAT"]
        );
    }

    #[test]
    fn default_form_is_not_a_reference() {
        // `${VAR:-}` is not recognised, so it is rewritten (§d.3 context7).
        let raw =
            br#"{"mcpServers":{"context7":{"headers":{"Authorization":"${CONTEXT7_API_KEY:-}"}}}}"#;
        let (out, names) = strip_credentials(raw).unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .contains("${CONTEXT7_AUTHORIZATION}")
        );
        assert_eq!(names, vec!["CONTEXT7_AUTHORIZATION"]);
    }

    #[test]
    fn gb18030_is_decoded() {
        // {"env":{"名":"值"}} in GB18030.
        let raw: &[u8] = b"{\"env\":{\"\xc3\xfb\":\"\xd6\xb5\"}}";
        let (out, names) = strip_credentials(raw).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("\"名\": \"${SECRET}\""), "{text}");
        assert_eq!(names, vec!["SECRET"]);
    }

    #[test]
    fn utf16_and_bom_are_decoded() {
        let text = r#"{"env":{"k":"v"}}"#;
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(|u| u.to_le_bytes()));
        let (out, names) = strip_credentials(&le).unwrap();
        assert!(String::from_utf8(out).unwrap().contains("${K}"));
        assert_eq!(names, vec!["K"]);
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(text.as_bytes());
        assert!(strip_credentials(&bom).is_ok());
    }

    #[test]
    fn export_is_refused_past_64_mib_not_truncated() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("reasonix-plugin.json"), "{}").unwrap();
        fs::File::create(dir.path().join("big.bin"))
            .unwrap()
            .set_len(EXPORT_SIZE_LIMIT + 1)
            .unwrap();
        let err = export_package("p", dir.path()).unwrap_err();
        assert_eq!(err.code, ErrorCode::LimitExceeded);
        assert!(err.message.contains("64 MB"), "{err}");
        fs::File::create(dir.path().join("big.bin"))
            .unwrap()
            .set_len(1024)
            .unwrap();
        let ok = export_package("p", dir.path()).unwrap();
        assert_eq!(ok.files, 2);
        // Only regular files travel; VCS directories never do.
        fs::create_dir(dir.path().join(".svn")).unwrap();
        fs::write(dir.path().join(".svn/entries"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        assert_eq!(export_package("p", dir.path()).unwrap().files, 2);
    }

    #[test]
    fn var_names() {
        assert_eq!(env_var_name("x-api.key"), "X_API_KEY");
        assert_eq!(env_var_name("--"), "SECRET");
        assert_eq!(export_var_name("my srv", "Token"), "MY_SRV_TOKEN");
        assert_eq!(env_reference("$FOO"), Some("FOO".into()));
        assert_eq!(env_reference("${_F1}"), Some("_F1".into()));
        assert_eq!(env_reference("${1F}"), None);
        assert_eq!(env_reference("plain"), None);
    }
}
