//! Name rules shared by plugins, skills, agents, commands and MCP server ids.

/// `^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$` — plugin, skill and agent names.
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The frontmatter `name` when it is a valid name, else the file-derived one.
pub fn resolve_name(stem: &str, declared: Option<&str>) -> String {
    match declared.map(str::trim) {
        Some(d) if is_valid_name(d) => d.to_owned(),
        _ => stem.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rule() {
        for ok in [
            "a",
            "superpowers",
            "agent-sdk-dev",
            "v1.2_x",
            &"a".repeat(64),
        ] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            ".a",
            "a b",
            "Writing Hookify Rules",
            "插件",
            &"a".repeat(65),
        ] {
            assert!(!is_valid_name(bad), "{bad}");
        }
        assert_eq!(
            resolve_name("writing-rules", Some("Writing Hookify Rules")),
            "writing-rules"
        );
        assert_eq!(resolve_name("dir", Some("declared")), "declared");
        assert_eq!(resolve_name("dir", None), "dir");
    }
}
