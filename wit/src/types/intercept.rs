//! Interception and observation DTOs.

use super::{RawJson, present_raw};
use crate::points::HookPoint;
use crate::validate::{Validate, ValidationError, at_least, nonempty, sha256_hex, validate_list};
use serde::{Deserialize, Serialize};

/// The descriptor of a field moved into a content reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExternalizedField {
    pub json_pointer: String,
    pub content_ref: String,
    pub total_bytes: u64,
    pub sha256: String,
}

impl Validate for ExternalizedField {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("jsonPointer", &self.json_pointer)?;
        nonempty("contentRef", &self.content_ref)?;
        sha256_hex("sha256", &self.sha256)
    }
}

/// `extension/intercept` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InterceptParams {
    pub event: HookPoint,
    pub seq: u64,
    /// The point's payload; JSON `null` when externalised.
    pub payload: RawJson,
    pub timeout_millis: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub externalized: Vec<ExternalizedField>,
}

impl Validate for InterceptParams {
    fn validate(&self) -> Result<(), ValidationError> {
        at_least("seq", self.seq, 1)?;
        validate_list("externalized", &self.externalized)
    }
}

/// An interceptor's ruling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Continue,
    Block,
    Replace,
    /// Legal only at `permission.decision`.
    Allow,
    /// Legal only at `permission.decision`.
    Deny,
}

impl Decision {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::Block => "block",
            Decision::Replace => "replace",
            Decision::Allow => "allow",
            Decision::Deny => "deny",
        }
    }
}

/// `extension/intercept` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InterceptResult {
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `Some("null")` for an explicit null (externalised replacement),
    /// `None` when absent.
    #[serde(
        default,
        deserialize_with = "present_raw",
        skip_serializing_if = "Option::is_none"
    )]
    pub replacement: Option<RawJson>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub externalized: Vec<ExternalizedField>,
}

impl Validate for InterceptResult {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_list("externalized", &self.externalized)
    }
}

/// `extension/event` params (fire-and-forget observation).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EventParams {
    pub event: HookPoint,
    /// The point's payload; JSON `null` when externalised.
    pub payload: RawJson,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub externalized: Vec<ExternalizedField>,
}

impl Validate for EventParams {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_list("externalized", &self.externalized)
    }
}
