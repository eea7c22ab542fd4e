//! A small, forgiving reader for the YAML-ish frontmatter of skill, command
//! and agent Markdown files.
//!
//! Real files are not always valid YAML (multi-line descriptions with blank
//! lines and `<example>` blocks, unquoted colons), so this reads `key: value`
//! lines, treats anything else as a continuation of the previous value, and
//! understands inline `[a, b]` lists, `- item` lists and `|`/`>` block
//! scalars. Keys are lower-cased. It never fails: text without a frontmatter
//! block yields no fields.

use std::collections::BTreeMap;

/// Frontmatter fields and the Markdown body after the closing `---`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    pub fields: BTreeMap<String, String>,
    pub body: String,
}

impl Frontmatter {
    /// The trimmed value of `key` (lower-case), if present and non-empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }
}

/// Split `text` into frontmatter fields and body.
pub fn parse(text: &str) -> Frontmatter {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let normalized = text.replace("\r\n", "\n");
    let mut lines = normalized.split('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "---" => {}
        _ => {
            return Frontmatter {
                fields: BTreeMap::new(),
                body: normalized,
            };
        }
    }
    let mut header = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        header.push(line);
    }
    if !closed {
        // An unterminated block is not frontmatter; keep the text as body.
        return Frontmatter {
            fields: BTreeMap::new(),
            body: normalized,
        };
    }
    let body = lines.collect::<Vec<_>>().join("\n");
    Frontmatter {
        fields: parse_fields(&header),
        body,
    }
}

enum Pending {
    /// Value given on the key line; continuation lines are appended with `\n`.
    Inline,
    /// Empty value on the key line: indented `- item` lines form a list.
    Empty,
    /// `|` keeps newlines, `>` folds them into spaces.
    Block { folded: bool },
}

fn parse_fields(header: &[&str]) -> BTreeMap<String, String> {
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<(String, Pending, Vec<String>)> = None;

    let finish = |fields: &mut BTreeMap<String, String>, entry: (String, Pending, Vec<String>)| {
        let (key, pending, parts) = entry;
        let value = match pending {
            Pending::Inline => parts.join("\n"),
            Pending::Empty => {
                let items: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| p.trim().strip_prefix('-').map(str::trim))
                    .collect();
                if items.is_empty() {
                    parts.join("\n").trim().to_owned()
                } else {
                    format!("[{}]", items.join(", "))
                }
            }
            Pending::Block { folded } => {
                let sep = if folded { " " } else { "\n" };
                parts.iter().map(|p| p.trim()).collect::<Vec<_>>().join(sep)
            }
        };
        fields.entry(key).or_insert_with(|| unquote(value.trim()));
    };

    for line in header {
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if !indented && let Some((key, value)) = split_key_line(line) {
            if let Some(entry) = current.take() {
                finish(&mut fields, entry);
            }
            let value = value.trim();
            let pending = match value {
                "" => Pending::Empty,
                "|" | "|-" | "|+" => Pending::Block { folded: false },
                ">" | ">-" | ">+" => Pending::Block { folded: true },
                _ => Pending::Inline,
            };
            let parts = match pending {
                Pending::Inline => vec![value.to_owned()],
                _ => Vec::new(),
            };
            current = Some((key.to_ascii_lowercase(), pending, parts));
            continue;
        }
        if let Some((_, _, parts)) = current.as_mut() {
            parts.push((*line).to_owned());
        }
    }
    if let Some(entry) = current.take() {
        finish(&mut fields, entry);
    }
    fields
}

/// `key: value` where key is a plain identifier (letters, digits, `_`, `-`).
fn split_key_line(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let rest = &line[colon + 1..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    Some((key, rest))
}

fn unquote(value: &str) -> String {
    let bytes = value.as_bytes();
    if bytes.len() >= 2
        && ((bytes[0] == b'"' && bytes[bytes.len() - 1] == b'"')
            || (bytes[0] == b'\'' && bytes[bytes.len() - 1] == b'\''))
    {
        return value[1..value.len() - 1].to_owned();
    }
    value.to_owned()
}

/// Split a list value: `a, b`, `[a, "b"]`; quotes are stripped, empties dropped.
pub fn split_list(raw: &str) -> Vec<String> {
    let mut raw = raw.trim();
    if raw.starts_with('[') && raw.ends_with(']') && raw.len() >= 2 {
        raw = raw[1..raw.len() - 1].trim();
    }
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    // Commas inside `Bash(git add:*, …)` parentheses do not split.
    for (i, c) in raw.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                push_item(&mut out, &raw[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    push_item(&mut out, &raw[start..]);
    out
}

fn push_item(out: &mut Vec<String>, item: &str) {
    let item = item.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    if !item.is_empty() {
        out.push(item.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_plain_quoted_and_list_fields() {
        let fm = parse(
            "---\nname: code-architect\ndescription: \"Quoted: value\"\ntools: Glob, Grep\nModel: sonnet\n---\nBody\n",
        );
        assert_eq!(fm.get("name"), Some("code-architect"));
        assert_eq!(fm.get("description"), Some("Quoted: value"));
        assert_eq!(fm.get("model"), Some("sonnet"));
        assert_eq!(split_list(fm.get("tools").unwrap()), ["Glob", "Grep"]);
        assert_eq!(fm.body, "Body\n");
    }

    #[test]
    fn continuation_lines_belong_to_the_previous_key() {
        let fm = parse(
            "---\nname: a\ndescription: Use this agent when\n\n<example>\nuser: \"hi\"\n</example>\n\nmodel: inherit\ntools: [\"Read\", \"Grep\"]\n---\n",
        );
        assert!(fm.get("description").unwrap().contains("<example>"));
        // `user: "hi"` looks like a key line; first value per key wins, so the
        // real keys are unaffected.
        assert_eq!(fm.get("model"), Some("inherit"));
        assert_eq!(split_list(fm.get("tools").unwrap()), ["Read", "Grep"]);
    }

    #[test]
    fn dash_lists_and_block_scalars() {
        let fm = parse("---\ntools:\n  - Read\n  - Bash\ndescription: >\n  folded\n  text\n---\n");
        assert_eq!(fm.get("tools"), Some("[Read, Bash]"));
        assert_eq!(fm.get("description"), Some("folded text"));
    }

    #[test]
    fn no_or_unterminated_frontmatter_is_all_body() {
        assert!(parse("# Title\n").fields.is_empty());
        let fm = parse("---\nname: x\n");
        assert!(fm.fields.is_empty());
        assert_eq!(fm.body, "---\nname: x\n");
        assert!(parse("").fields.is_empty());
        assert!(parse("---").fields.is_empty());
    }

    #[test]
    fn list_items_keep_parenthesised_commas() {
        assert_eq!(
            split_list("Bash(git add:*), Read"),
            ["Bash(git add:*)", "Read"]
        );
    }
}
