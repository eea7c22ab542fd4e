//! Structured-UI DTOs.

use super::RawJson;
use crate::validate::{Validate, ValidationError, nonempty};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Values keyed by form field, each any JSON.
pub type UiValues = BTreeMap<String, RawJson>;

fn same_values(a: &UiValues, b: &UiValues) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && va.get() == vb.get())
}

/// `extension/ui/action` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIActionParams {
    pub action_id: String,
    pub session_id: String,
    pub generation: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, String>,
}

impl Validate for UIActionParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("actionId", &self.action_id)?;
        nonempty("sessionId", &self.session_id)
    }
}

/// `extension/ui/action` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIActionResult {
    pub accepted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Validate for UIActionResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/ui/submit` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UISubmitParams {
    pub surface_id: String,
    pub session_id: String,
    pub generation: u64,
    pub values: UiValues,
}

impl PartialEq for UISubmitParams {
    fn eq(&self, other: &Self) -> bool {
        self.surface_id == other.surface_id
            && self.session_id == other.session_id
            && self.generation == other.generation
            && same_values(&self.values, &other.values)
    }
}

impl Validate for UISubmitParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("surfaceId", &self.surface_id)?;
        nonempty("sessionId", &self.session_id)
    }
}

/// `extension/ui/submit` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UISubmitResult {
    pub accepted: bool,
}

impl Validate for UISubmitResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// Kinds of `host/ui/publish` surfaces (`panel` and `view` are B only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UISurfaceKind {
    Card,
    Form,
    Notification,
    Panel,
    Status,
    View,
}

/// `host/ui/publish` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIPublishParams {
    pub surface_id: String,
    pub session_id: String,
    pub generation: u64,
    pub kind: UISurfaceKind,
    /// Decoded by kind by the host's UI hub.
    pub payload: RawJson,
}

impl Validate for UIPublishParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("surfaceId", &self.surface_id)?;
        nonempty("sessionId", &self.session_id)
    }
}

/// `host/ui/publish` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIPublishResult {
    pub accepted: bool,
}

impl Validate for UIPublishResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// Kinds of `host/ui/request` prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UIRequestKind {
    Confirm,
    Input,
    Multiselect,
    Select,
}

/// `host/ui/request` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIRequestParams {
    pub surface_id: String,
    pub session_id: String,
    pub generation: u64,
    pub kind: UIRequestKind,
    /// A form payload.
    pub payload: RawJson,
}

impl Validate for UIRequestParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("surfaceId", &self.surface_id)?;
        nonempty("sessionId", &self.session_id)
    }
}

/// `host/ui/request` result. Nothing selected is `cancelled: true`, which is
/// distinct from empty values.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIRequestResult {
    pub cancelled: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: UiValues,
}

impl PartialEq for UIRequestResult {
    fn eq(&self, other: &Self) -> bool {
        self.cancelled == other.cancelled && same_values(&self.values, &other.values)
    }
}

impl Validate for UIRequestResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}
