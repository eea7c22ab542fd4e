//! One problem found in a manifest, and the error that carries all of them.

use std::fmt;

/// What kind of problem an issue is. Each apiVersion failure has its own
/// variant so callers (migration, doctor) can act on the identity of the
/// error instead of matching its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IssueKind {
    /// The bytes are not JSON at all.
    InvalidJson,
    /// The manifest document is not a JSON object.
    NotAnObject,
    /// `apiVersion` is absent (a legacy, pre-extension manifest).
    MissingApiVersion,
    /// `apiVersion` is present but not a string.
    ApiVersionNotString,
    /// `apiVersion` is a string other than `reasonix.io/plugin/v2`.
    UnsupportedApiVersion { found: String },
    /// A key the schema does not define.
    UnknownField { field: String },
    /// A value of the wrong JSON type.
    WrongType,
    /// A required value is missing or blank.
    Required,
    /// A value has the right type but breaks a rule.
    InvalidValue,
    /// The same key declared twice where keys must be unique.
    Duplicate,
    /// Legacy top-level and `contributes` declarations disagree.
    Conflict,
    /// A declared path is absolute or leaves the plugin root lexically.
    PathNotRelative,
    /// A declared path exists but resolves outside the plugin root.
    SymlinkEscape,
    /// A theme entry that is not a regular file (directory, dangling link…).
    NotRegularFile,
}

/// One problem, with the field path it concerns (`runtime.args[1]`,
/// `contributes.skills[0].paht`; empty for the document itself) and the full
/// human-readable message in upstream's wording.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ManifestIssue {
    pub path: String,
    #[serde(skip)]
    pub kind: IssueKind,
    pub message: String,
}

impl fmt::Display for ManifestIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Every problem found in a manifest, each naming its field path. Never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    pub issues: Vec<ManifestIssue>,
}

impl ManifestError {
    pub fn new(issues: Vec<ManifestIssue>) -> Self {
        debug_assert!(!issues.is_empty());
        ManifestError { issues }
    }

    /// True when the manifest lacks `apiVersion` (the case `migrate` handles).
    pub fn is_missing_api_version(&self) -> bool {
        self.issues
            .iter()
            .any(|i| i.kind == IssueKind::MissingApiVersion)
    }

    /// True when any issue has the given kind.
    pub fn has(&self, kind: &IssueKind) -> bool {
        self.issues.iter().any(|i| &i.kind == kind)
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, issue) in self.issues.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{issue}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ManifestError {}

/// Collects issues while a manifest is walked.
#[derive(Debug, Default)]
pub(crate) struct Issues {
    pub(crate) list: Vec<ManifestIssue>,
}

impl Issues {
    pub(crate) fn push(&mut self, path: &str, kind: IssueKind, message: impl Into<String>) {
        self.list.push(ManifestIssue {
            path: path.to_string(),
            kind,
            message: message.into(),
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}
