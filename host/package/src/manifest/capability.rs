//! `requires` / `provides`: capability references (EXTENSION_PROTOCOL_V2.md §14).

use std::collections::BTreeSet;

use serde_json::Value;

use super::issue::{IssueKind, Issues};
use super::reader::{index, json_type, strict_object};

/// One entry of `requires` or `provides`, trimmed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapabilityRef {
    pub namespace: String,
    pub kind: String,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_hash: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

impl CapabilityRef {
    /// `namespace/kind/id`.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.namespace, self.kind, self.id)
    }
}

/// Kinds whose provided capabilities must pin a `schemaHash`.
pub const SCHEMA_HASH_KINDS: [&str; 5] = ["provider", "tool", "ui", "uiaction", "browser"];

const FIELDS: [&str; 7] = [
    "namespace",
    "kind",
    "id",
    "version",
    "versionRange",
    "schemaHash",
    "optional",
];

/// Read `requires` (as requirements) or `provides` (as provided capabilities).
pub(crate) fn read_refs(
    issues: &mut Issues,
    value: &Value,
    path: &str,
    as_requirement: bool,
) -> Vec<CapabilityRef> {
    let Value::Array(items) = value else {
        issues.push(
            path,
            IssueKind::WrongType,
            format!("{path} must be an array (got {})", json_type(value)),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let at = index(path, i);
        let Some(obj) = strict_object(issues, item, &at, &FIELDS) else {
            continue;
        };
        let text = |issues: &mut Issues, key| obj.trimmed(issues, key);
        let r = CapabilityRef {
            namespace: text(issues, "namespace").unwrap_or_default(),
            kind: text(issues, "kind").unwrap_or_default(),
            id: text(issues, "id").unwrap_or_default(),
            version: text(issues, "version"),
            version_range: text(issues, "versionRange"),
            schema_hash: text(issues, "schemaHash"),
            optional: obj.bool(issues, "optional").unwrap_or(false),
        };
        let key = r.key();
        let key_ok = [&r.namespace, &r.kind, &r.id]
            .iter()
            .all(|p| !p.is_empty() && !p.chars().any(char::is_whitespace));
        if !key_ok {
            issues.push(
                &at,
                IssueKind::InvalidValue,
                format!(
                    "{at}: invalid capability key \"{key}\": namespace, kind and id must be non-empty and contain no whitespace"
                ),
            );
        }
        if let Some(v) = &r.version
            && !valid_semver(v)
        {
            issues.push(
                &at,
                IssueKind::InvalidValue,
                format!("{at}: capability {key} has an invalid version \"{v}\" (want semver)"),
            );
        }
        if as_requirement {
            if let Some(range) = &r.version_range
                && !valid_range(range)
            {
                issues.push(
                    &at,
                    IssueKind::InvalidValue,
                    format!(
                        "{at}: capability {key} has an invalid versionRange \"{range}\" (want comma-joined clauses like >=1.0.0,<2.0.0)"
                    ),
                );
            }
        } else {
            if r.version.is_none() {
                issues.push(
                    &at,
                    IssueKind::Required,
                    format!("{at}: provided capability {key} needs a semver version"),
                );
            }
            if SCHEMA_HASH_KINDS.contains(&r.kind.as_str()) && r.schema_hash.is_none() {
                issues.push(
                    &at,
                    IssueKind::Required,
                    format!(
                        "{at}: provided capability {key} of kind {} needs a schemaHash",
                        r.kind
                    ),
                );
            }
            if key_ok && !seen.insert(key.clone()) {
                issues.push(
                    &at,
                    IssueKind::Duplicate,
                    format!("{at}: duplicate capability {key}"),
                );
            }
        }
        out.push(r);
    }
    out
}

/// Semantic version, `v` prefix allowed: `MAJOR.MINOR.PATCH[-pre][+build]`.
pub fn valid_semver(v: &str) -> bool {
    let v = v.strip_prefix('v').unwrap_or(v);
    let (rest, build) = match v.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (v, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let numeric = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
    };
    let idents = |s: &str, numeric_rule: bool| {
        s.split('.').all(|id| {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && (!numeric_rule || !id.bytes().all(|b| b.is_ascii_digit()) || numeric(id))
        })
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        && pre.is_none_or(|p| idents(p, true))
        && build.is_none_or(|b| idents(b, false))
}

/// Comma-joined clauses `>=`, `>`, `<=`, `<`, `=`/`==` or a bare version; empty matches all.
pub fn valid_range(range: &str) -> bool {
    if range.trim().is_empty() {
        return true;
    }
    range.split(',').all(|clause| {
        let c = clause.trim();
        let v = [">=", "<=", "==", ">", "<", "="]
            .iter()
            .find_map(|op| c.strip_prefix(op))
            .unwrap_or(c)
            .trim();
        valid_semver(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_rules() {
        for ok in [
            "1.0.0",
            "v2.3.4",
            "0.0.0",
            "1.2.3-rc.1",
            "1.2.3+build.5",
            "1.2.3-alpha-1+x",
        ] {
            assert!(valid_semver(ok), "{ok}");
        }
        for bad in [
            "", "1", "1.2", "1.2.3.4", "01.2.3", "1.2.x", "1.2.3-", "1.2.3-01", "vv1.2.3",
        ] {
            assert!(!valid_semver(bad), "{bad}");
        }
    }

    #[test]
    fn range_rules() {
        for ok in [
            "",
            ">=1.0.0",
            ">=1.0.0, <2.0.0",
            "=1.2.3",
            "==1.2.3",
            "1.2.3",
            "<v2.0.0",
        ] {
            assert!(valid_range(ok), "{ok}");
        }
        for bad in [">=", ">=1.0", "1.0.0,", "~1.0.0", "^1.0.0"] {
            assert!(!valid_range(bad), "{bad}");
        }
    }
}
