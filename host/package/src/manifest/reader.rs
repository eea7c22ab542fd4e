//! A schema-aware strict reader over `serde_json::Value`.
//!
//! serde's `deny_unknown_fields` stops at the first error; a manifest author
//! wants every typo at once, each with its field path. So the manifest is
//! parsed to a `Value` and walked here, collecting issues instead of failing.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::MANIFEST_FILE;
use super::issue::{IssueKind, Issues};

/// `parent.key`, or `key` at the root.
pub(crate) fn child(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[i]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

/// How a container is named in an unknown-field message: the manifest file
/// for the root, the field path otherwise.
pub(crate) fn label(path: &str) -> &str {
    if path.is_empty() { MANIFEST_FILE } else { path }
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The fields of a strictly read object, keyed by their schema names.
pub(crate) struct Obj<'v> {
    pub(crate) path: String,
    fields: BTreeMap<&'static str, &'v Value>,
}

/// The object at `path`, with every key outside `allowed` reported in
/// upstream's strict-decoder wording (`<path>: json: unknown field "x"`).
///
/// Keys match the schema names case-insensitively, as Go's `encoding/json`
/// (upstream's decoder) does; an exact-case key wins over a folded one.
pub(crate) fn strict_object<'v>(
    issues: &mut Issues,
    value: &'v Value,
    path: &str,
    allowed: &[&'static str],
) -> Option<Obj<'v>> {
    let Value::Object(map) = value else {
        issues.push(
            path,
            IssueKind::WrongType,
            format!(
                "{} must be an object (got {})",
                label(path),
                json_type(value)
            ),
        );
        return None;
    };
    let mut fields = BTreeMap::new();
    for (key, v) in map {
        if let Some(name) = allowed.iter().find(|a| **a == key.as_str()) {
            fields.insert(*name, v);
        } else if let Some(name) = allowed.iter().find(|a| a.eq_ignore_ascii_case(key)) {
            fields.entry(*name).or_insert(v);
        } else {
            issues.push(
                &child(path, key),
                IssueKind::UnknownField { field: key.clone() },
                format!("{}: json: unknown field \"{}\"", label(path), key),
            );
        }
    }
    Some(Obj {
        path: path.to_string(),
        fields,
    })
}

fn wrong_type(issues: &mut Issues, path: &str, want: &str, got: &Value) {
    issues.push(
        path,
        IssueKind::WrongType,
        format!("{path} must be {want} (got {})", json_type(got)),
    );
}

impl<'v> Obj<'v> {
    /// The path of field `key` inside this object.
    pub(crate) fn at(&self, key: &str) -> String {
        child(&self.path, key)
    }

    /// Whether `key` was written at all (even as `null` or `[]`).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// The value as written, `null` included.
    pub(crate) fn raw(&self, key: &str) -> Option<&'v Value> {
        self.fields.get(key).copied()
    }

    /// A present, non-null value.
    pub(crate) fn value(&self, key: &str) -> Option<&'v Value> {
        self.fields.get(key).copied().filter(|v| !v.is_null())
    }

    pub(crate) fn str(&self, issues: &mut Issues, key: &str) -> Option<String> {
        let v = self.value(key)?;
        match v {
            Value::String(s) => Some(s.clone()),
            other => {
                wrong_type(issues, &self.at(key), "a string", other);
                None
            }
        }
    }

    /// A string, trimmed; blank counts as absent.
    pub(crate) fn trimmed(&self, issues: &mut Issues, key: &str) -> Option<String> {
        self.str(issues, key)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    pub(crate) fn bool(&self, issues: &mut Issues, key: &str) -> Option<bool> {
        let v = self.value(key)?;
        match v {
            Value::Bool(b) => Some(*b),
            other => {
                wrong_type(issues, &self.at(key), "a boolean", other);
                None
            }
        }
    }

    pub(crate) fn int(&self, issues: &mut Issues, key: &str) -> Option<i64> {
        let v = self.value(key)?;
        match v.as_i64() {
            Some(n) => Some(n),
            None => {
                wrong_type(issues, &self.at(key), "a 64-bit integer", v);
                None
            }
        }
    }

    pub(crate) fn str_list(&self, issues: &mut Issues, key: &str) -> Option<Vec<String>> {
        let v = self.value(key)?;
        let path = self.at(key);
        let Value::Array(items) = v else {
            wrong_type(issues, &path, "an array of strings", v);
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => out.push(s.clone()),
                other => wrong_type(issues, &index(&path, i), "a string", other),
            }
        }
        Some(out)
    }

    pub(crate) fn str_map(
        &self,
        issues: &mut Issues,
        key: &str,
    ) -> Option<BTreeMap<String, String>> {
        let v = self.value(key)?;
        let path = self.at(key);
        let Value::Object(entries) = v else {
            wrong_type(issues, &path, "an object of strings", v);
            return None;
        };
        let mut out = BTreeMap::new();
        for (k, item) in entries {
            match item {
                Value::String(s) => {
                    out.insert(k.clone(), s.clone());
                }
                other => wrong_type(issues, &child(&path, k), "a string", other),
            }
        }
        Some(out)
    }

    /// An object of user-chosen keys (hook events, MCP server names).
    pub(crate) fn map(&self, issues: &mut Issues, key: &str) -> Option<&'v Map<String, Value>> {
        let v = self.value(key)?;
        match v {
            Value::Object(m) => Some(m),
            other => {
                wrong_type(issues, &self.at(key), "an object", other);
                None
            }
        }
    }

    /// An array of values with their own sub-reader.
    pub(crate) fn array(&self, issues: &mut Issues, key: &str) -> Option<&'v Vec<Value>> {
        let v = self.value(key)?;
        match v {
            Value::Array(a) => Some(a),
            other => {
                wrong_type(issues, &self.at(key), "an array", other);
                None
            }
        }
    }
}
