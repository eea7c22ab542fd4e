//! JSON exactly as Go's `encoding/json` writes it, so digests and plan IDs
//! agree byte for byte with upstream Reasonix.
//!
//! serde_json already matches Go for struct field order, sorted `BTreeMap`
//! keys and control-character escapes (`\b \f \n \r \t`, else `\u00xx`
//! lowercase). What Go adds is HTML-safe escaping: `<`, `>`, `&` become
//! `\u003c`, `\u003e`, `\u0026`, and U+2028/U+2029 become `\u2028`/`\u2029`.
//! Those characters can only occur inside string literals of the output, so
//! rewriting them after serialisation is exact.
use serde::Serialize;

/// `json.Marshal(v)` (compact).
pub fn marshal<T: Serialize + ?Sized>(value: &T) -> String {
    // Serialising our own plain data types cannot fail (no non-string map keys).
    let raw = serde_json::to_string(value).unwrap_or_default();
    html_escape(&raw)
}

/// `json.MarshalIndent(v, "", "  ")` of a generic document: object keys
/// sorted, numbers in Go's float64 spelling.
pub fn marshal_indent_value(value: &serde_json::Value) -> String {
    let mut out = String::new();
    write_value(value, 0, &mut out);
    out
}

/// Apply Go's HTML-safe escapes to already-serialised JSON text.
pub fn html_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for ch in json.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// A Go JSON string literal for raw bytes: invalid UTF-8 bytes become
/// `\ufffd` one per byte, exactly as Go's encoder replaces them.
pub fn string_from_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        let valid = serde_json::to_string(chunk.valid()).unwrap_or_default();
        out.push_str(&html_escape(&valid[1..valid.len() - 1]));
        for _ in chunk.invalid() {
            out.push_str("\\ufffd");
        }
    }
    out.push('"');
    out
}

fn write_value(value: &serde_json::Value, depth: usize, out: &mut String) {
    use serde_json::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => out.push_str(&marshal(s)),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(depth + 1, out);
                write_value(item, depth + 1, out);
            }
            newline(depth, out);
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(depth + 1, out);
                out.push_str(&marshal(key.as_str()));
                out.push_str(": ");
                write_value(&map[key.as_str()], depth + 1, out);
            }
            newline(depth, out);
            out.push('}');
        }
    }
}

fn newline(depth: usize, out: &mut String) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// Go decodes every JSON number into a float64 and prints it with
/// `strconv.FormatFloat(f, 'f', -1, 64)`, switching to exponent form below
/// 1e-6 and from 1e21.
fn go_number(n: &serde_json::Number) -> String {
    let Some(f) = n.as_f64() else {
        return n.to_string();
    };
    if !f.is_finite() {
        return n.to_string();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Rust: "1e-7" / "1.5e21"; Go: "1e-07"→cleaned to "1e-7", "1.5e+21".
        let s = format!("{f:e}");
        return match s.split_once('e') {
            Some((mant, exp)) if !exp.starts_with('-') => format!("{mant}e+{exp}"),
            _ => s,
        };
    }
    // Display for f64 is the shortest round-trip form without an exponent,
    // and prints integral values without a fraction, as Go does.
    format!("{f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_characters_are_escaped_like_go() {
        assert_eq!(marshal("a<b>&c"), r#""a\u003cb\u003e\u0026c""#);
        assert_eq!(marshal("\u{2028}\u{2029}"), r#""\u2028\u2029""#);
        assert_eq!(
            marshal("\u{8}\u{c}\n\r\t\u{1}\u{7f}"),
            "\"\\b\\f\\n\\r\\t\\u0001\u{7f}\""
        );
        assert_eq!(marshal("é\"\\"), "\"é\\\"\\\\\"");
    }

    #[test]
    fn invalid_utf8_becomes_one_replacement_escape_per_byte() {
        assert_eq!(
            string_from_bytes(b"a\xe2\x82A<"),
            r#""a\ufffd\ufffdA\u003c""#
        );
    }

    #[test]
    fn indented_values_sort_keys_and_format_numbers() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"b":[1.0,2.5,1e-7,1e21,-3],"a":{},"c":[],"d":"<"}"#).unwrap();
        assert_eq!(
            marshal_indent_value(&v),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2.5,\n    1e-7,\n    1e+21,\n    -3\n  ],\n  \"c\": [],\n  \"d\": \"\\u003c\"\n}"
        );
    }
}
