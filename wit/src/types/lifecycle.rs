//! Handshake, shutdown and resource-change DTOs.

use super::ProviderDescriptor;
use crate::validate::{Validate, ValidationError, nonempty, validate_list};
use serde::{Deserialize, Serialize};

/// A provided capability (`namespace/kind/id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CapabilityWire {
    pub namespace: String,
    pub kind: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_hash: Option<String>,
}

impl Validate for CapabilityWire {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("namespace", &self.namespace)?;
        nonempty("kind", &self.kind)?;
        nonempty("id", &self.id)
    }
}

/// A required capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RequirementWire {
    pub namespace: String,
    pub kind: String,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_range: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

impl Validate for RequirementWire {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("namespace", &self.namespace)?;
        nonempty("kind", &self.kind)?;
        nonempty("id", &self.id)
    }
}

/// The session a connection serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionContext {
    pub session_id: String,
    pub workspace_root: String,
    pub generation: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}

impl Validate for SessionContext {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("sessionId", &self.session_id)?;
        nonempty("workspaceRoot", &self.workspace_root)
    }
}

/// Which kind of UI the host has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UiHost {
    Tui,
    Desktop,
    Acp,
    Headless,
}

/// What the host offers the extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HostCapabilities {
    pub content_refs: bool,
    pub ui_host: UiHost,
    pub protocol_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency_schema_version: Option<u64>,
}

impl Validate for HostCapabilities {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("protocolVersion", &self.protocol_version)
    }
}

/// The manifest ceiling copied into `extension/initialize`. Empty lists are
/// omitted: an upstream-SDK sidecar rejects a `tools` member outright.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ManifestExpectation {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intercepts: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ui_actions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<RequirementWire>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<CapabilityWire>,
    /// Generation B only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl Validate for ManifestExpectation {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_list("requires", &self.requires)?;
        validate_list("provides", &self.provides)
    }
}

/// `extension/initialize` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: String,
    pub protocol_id: String,
    pub manifest: ManifestExpectation,
    pub session: SessionContext,
    pub capabilities: HostCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependency_schema_version: Option<u64>,
}

impl Validate for InitializeParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("protocolVersion", &self.protocol_version)?;
        nonempty("protocolId", &self.protocol_id)?;
        self.manifest.validate().map_err(|e| e.within("manifest"))?;
        self.session.validate().map_err(|e| e.within("session"))?;
        self.capabilities
            .validate()
            .map_err(|e| e.within("capabilities"))
    }
}

/// A UI action the sidecar serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UIActionDecl {
    pub action_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl Validate for UIActionDecl {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("actionId", &self.action_id)
    }
}

/// `extension/initialize` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub providers: Vec<ProviderDescriptor>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ui_actions: Vec<UIActionDecl>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<RequirementWire>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<CapabilityWire>,
    /// Must be present even when 0.
    pub state_schema_version: u64,
    /// Generation B only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl Validate for InitializeResult {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("protocolVersion", &self.protocol_version)?;
        nonempty("name", &self.name)?;
        nonempty("version", &self.version)?;
        validate_list("providers", &self.providers)?;
        validate_list("uiActions", &self.ui_actions)?;
        validate_list("requires", &self.requires)?;
        validate_list("provides", &self.provides)
    }
}

/// `extension/initialized` params: always `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitializedParams {}

impl Validate for InitializedParams {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/shutdown` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShutdownParams {
    pub timeout_millis: u64,
}

impl Validate for ShutdownParams {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/shutdown` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShutdownResult {
    pub accepted: bool,
}

impl Validate for ShutdownResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/resources/changed` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResourcesChangedParams {
    pub paths: Vec<String>,
}

impl Validate for ResourcesChangedParams {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}
