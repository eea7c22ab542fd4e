//! What the theme reader makes of a declared theme file. A `theme.json` pack
//! must be a JSON object; its `colors` tokens must be `#rgb`, `#rgba`,
//! `#rrggbb` or `#rrggbbaa`. A rejected theme never reaches the picker; a
//! dropped token just falls back to the base style. `plugin show`, `plugin
//! doctor` and `doctor capabilities` all report through here.

use std::path::Path;

use crate::Theme;

/// The verdict on one theme file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThemeCheck {
    /// Why the theme is not offered at all.
    pub rejected: Option<String>,
    /// Color tokens that are ignored, with the reason.
    pub dropped: Vec<String>,
}

/// Check `theme` (a path relative to the package `root`).
pub fn check(root: &Path, theme: &Theme) -> ThemeCheck {
    let mut out = ThemeCheck::default();
    let bytes = match std::fs::read(root.join(&theme.path)) {
        Ok(b) => b,
        Err(e) => {
            out.rejected = Some(format!("cannot be read: {e}"));
            return out;
        }
    };
    if !theme.path.ends_with("theme.json") {
        // `.reasonix-theme` files are passed to the renderer as they are.
        return out;
    }
    let value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            out.rejected = Some(format!("invalid JSON: {e}"));
            return out;
        }
    };
    let Some(obj) = value.as_object() else {
        out.rejected = Some("not a JSON object".into());
        return out;
    };
    match obj.get("colors") {
        None => {}
        Some(serde_json::Value::Object(colors)) => {
            for (token, v) in colors {
                if !v.as_str().is_some_and(is_hex_color) {
                    out.dropped.push(format!(
                        "token colors.{token} dropped: {v} is not a #rgb, #rrggbb or #rrggbbaa color"
                    ));
                }
            }
        }
        Some(_) => out
            .dropped
            .push("colors must be an object; dropped".to_string()),
    }
    out
}

fn is_hex_color(s: &str) -> bool {
    s.strip_prefix('#').is_some_and(|h| {
        matches!(h.len(), 3 | 4 | 6 | 8) && h.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme(root: &Path, rel: &str, body: &str) -> ThemeCheck {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, body).unwrap();
        check(
            root,
            &Theme {
                name: "t".into(),
                path: rel.into(),
            },
        )
    }

    #[test]
    fn verdicts() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(
            theme(root, "a/theme.json", r##"{"colors":{"bg":"#102030"}}"##),
            ThemeCheck::default()
        );
        let bad = theme(root, "b/theme.json", "{");
        assert!(bad.rejected.unwrap().starts_with("invalid JSON"));
        let arr = theme(root, "c/theme.json", "[]");
        assert_eq!(arr.rejected.as_deref(), Some("not a JSON object"));
        let dropped = theme(
            root,
            "d/theme.json",
            r##"{"colors":{"bg":"red","fg":"#fff"}}"##,
        );
        assert_eq!(dropped.rejected, None);
        assert_eq!(dropped.dropped.len(), 1);
        assert!(dropped.dropped[0].contains("colors.bg"));
        assert_eq!(
            theme(root, "e.reasonix-theme", "anything"),
            ThemeCheck::default()
        );
    }
}
