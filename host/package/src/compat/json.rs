//! Lenient JSON access with Go `encoding/json` key semantics: an exact key
//! match wins, otherwise keys match case-insensitively. Unknown keys are
//! simply never looked at.

use serde_json::{Map, Value};

use super::encoding;
use std::path::Path;

/// Look up `key` in `obj`: exact match first, then ASCII-case-insensitive.
pub fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).or_else(|| {
        obj.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })
}

/// A string field; `Err` names the expected type when the value is not a string.
pub fn get_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match get(obj, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

pub fn get_bool(obj: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match get(obj, key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{key} must be a boolean")),
    }
}

/// A map of strings (`env`, `headers`); keys that are blank are dropped.
pub fn get_string_map(
    obj: &Map<String, Value>,
    key: &str,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut out = std::collections::BTreeMap::new();
    match get(obj, key) {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (k, v) in map {
                let Value::String(v) = v else {
                    return Err(format!("{key}.{k} must be a string"));
                };
                if !k.trim().is_empty() {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Some(_) => return Err(format!("{key} must be an object of strings")),
    }
    Ok(out)
}

/// A list of strings; `None` when the key is absent (presence matters for `args`).
pub fn get_string_list(obj: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, String> {
    match get(obj, key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err(format!("{key}[{i}] must be a string")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("{key} must be an array of strings")),
    }
}

/// Read and parse a JSON file (any supported text encoding).
/// `Ok(None)` when the file does not exist.
pub fn read_file(path: &Path) -> Result<Option<Value>, String> {
    let text = match encoding::read_text(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| e.to_string())
}
