//! Package-relative path lists as Claude/Codex manifests spell them.

use serde_json::Value;

/// Clean a manifest path the same way on every OS: trim, `\` → `/`, reject
/// absolute, drive-letter and UNC paths and anything escaping the root,
/// resolve `.`/`..` lexically. The package root itself is `.`.
pub fn clean_relative(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err("plugin path is required".into());
    }
    let normalized = trimmed.replace('\\', "/");
    let bytes = normalized.as_bytes();
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if normalized.starts_with('/') || drive {
        return Err(format!(
            "plugin path {trimmed:?} must be relative and stay inside the plugin root"
        ));
    }
    let mut parts: Vec<&str> = Vec::new();
    for segment in normalized.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!(
                        "plugin path {trimmed:?} must be relative and stay inside the plugin root"
                    ));
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        Ok(".".into())
    } else {
        Ok(parts.join("/"))
    }
}

/// A path field: a string, an array of strings, or an array of `{"path": …}`
/// objects. Returns cleaned paths in declaration order, without duplicates.
pub fn path_list(value: Option<&Value>, field: &str) -> Result<Vec<String>, String> {
    let raw: Vec<String> = match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => out.push(s.clone()),
                    Value::Object(obj) => match super::json::get(obj, "path") {
                        Some(Value::String(s)) => out.push(s.clone()),
                        _ => return Err(format!("{field}[{i}].path must be a string")),
                    },
                    _ => {
                        return Err(format!(
                            "{field} must be a path string, string array, or object array"
                        ));
                    }
                }
            }
            out
        }
        Some(_) => {
            return Err(format!(
                "{field} must be a path string, string array, or object array"
            ));
        }
    };
    let mut out: Vec<String> = Vec::new();
    for p in raw {
        let cleaned = clean_relative(&p).map_err(|e| format!("{field}: {e}"))?;
        if !out.contains(&cleaned) {
            out.push(cleaned);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cleaning() {
        assert_eq!(clean_relative("./skills/").unwrap(), "skills");
        assert_eq!(clean_relative("a\\b\\..\\c").unwrap(), "a/c");
        assert_eq!(clean_relative("./").unwrap(), ".");
        for bad in [
            "/etc/passwd",
            "C:\\x",
            "C:/x",
            "\\\\server\\share",
            "..",
            "a/../../b",
            " ",
        ] {
            assert!(clean_relative(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn list_shapes() {
        assert_eq!(
            path_list(Some(&json!("./skills/")), "skills").unwrap(),
            ["skills"]
        );
        assert_eq!(
            path_list(Some(&json!(["a", {"path": "b"}, "./a"])), "skills").unwrap(),
            ["a", "b"]
        );
        assert!(
            path_list(Some(&json!(3)), "skills")
                .unwrap_err()
                .contains("skills must be")
        );
        assert!(path_list(Some(&json!(["/abs"])), "skills").is_err());
        assert!(path_list(None, "skills").unwrap().is_empty());
    }
}
