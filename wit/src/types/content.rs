//! Content-reference read DTOs.

use crate::validate::{Validate, ValidationError, nonempty, sha256_hex};
use serde::{Deserialize, Serialize};

/// `host/content/read` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContentReadParams {
    pub content_ref: String,
    pub offset: u64,
}

impl Validate for ContentReadParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("contentRef", &self.content_ref)
    }
}

/// Encodings of content chunks (only `utf8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContentEncoding {
    Utf8,
}

/// `host/content/read` result: one chunk of at most 256 KiB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContentReadResult {
    pub content_ref: String,
    pub offset: u64,
    pub data_base64: String,
    /// Present only when more remains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    pub total_bytes: u64,
    pub sha256: String,
    pub encoding: ContentEncoding,
}

impl Validate for ContentReadResult {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("contentRef", &self.content_ref)?;
        sha256_hex("sha256", &self.sha256)
    }
}
