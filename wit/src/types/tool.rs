//! Tool-call DTOs (generation B only).

use super::RawJson;
use crate::validate::{Validate, ValidationError, nonempty};
use serde::{Deserialize, Serialize};

/// `extension/tool/call` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolCallParams {
    pub name: String,
    /// Must be present; may be JSON `null` (kept as the raw text `null`).
    pub arguments: RawJson,
    pub timeout_millis: u64,
}

impl Validate for ToolCallParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("name", &self.name)
    }
}

/// `extension/tool/call` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolCallResult {
    /// What the model reads.
    pub content: String,
    /// The tool reports its own failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl Validate for ToolCallResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}
