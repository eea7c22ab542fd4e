//! Textual expansion of the plugin-root placeholders before launch, so
//! plugin-relative paths work whatever syntax the target shell has.

/// Placeholders, and whether the unbraced `$NAME` form needs a word boundary
/// after it (`$CLAUDE_PLUGIN_ROOTX` is a different variable).
const TOKENS: &[(&str, bool)] = &[
    ("${CLAUDE_PLUGIN_ROOT}", false),
    ("$CLAUDE_PLUGIN_ROOT", true),
    ("%CLAUDE_PLUGIN_ROOT%", false),
    ("${REASONIX_PLUGIN_ROOT}", false),
    ("$REASONIX_PLUGIN_ROOT", true),
    ("%REASONIX_PLUGIN_ROOT%", false),
];

/// Replace every placeholder spelling in `value` with `root`, in one left-to-
/// right scan (text inside `root` is never expanded again).
pub fn plugin_root(value: &str, root: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let rest = &value[i..];
        let token = TOKENS.iter().find_map(|(token, boundary)| {
            if !rest.starts_with(token) {
                return None;
            }
            let next = rest.as_bytes().get(token.len());
            if *boundary && next.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                return None;
            }
            Some(token.len())
        });
        match token {
            Some(len) => {
                out.push_str(root);
                i += len;
            }
            None => {
                let ch = rest.chars().next().unwrap_or_default();
                out.push(ch);
                i += ch.len_utf8().max(1);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_expands_once() {
        let r = "/p/$CLAUDE_PLUGIN_ROOT";
        assert_eq!(plugin_root("${CLAUDE_PLUGIN_ROOT}/a", r), format!("{r}/a"));
        assert_eq!(plugin_root("$CLAUDE_PLUGIN_ROOT/a", r), format!("{r}/a"));
        assert_eq!(plugin_root("%CLAUDE_PLUGIN_ROOT%\\a", r), format!("{r}\\a"));
        assert_eq!(plugin_root("${REASONIX_PLUGIN_ROOT}", r), r);
        assert_eq!(plugin_root("$REASONIX_PLUGIN_ROOT:x", r), format!("{r}:x"));
        assert_eq!(
            plugin_root("$CLAUDE_PLUGIN_ROOTX", r),
            "$CLAUDE_PLUGIN_ROOTX"
        );
        assert_eq!(plugin_root("é $HOME ✓", r), "é $HOME ✓");
    }
}
