//! The host's payload values at each hook point (spec §6), as the agent
//! builds them. Replacements are validated by `reasonix_protocol::payloads`
//! first; these types then take the validated value back.

use reasonix_protocol::types::{ProviderMessage, ProviderRequest, ProviderToolCall, ProviderUsage};
use serde::{Deserialize, Serialize};

/// `session.*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionPayload {
    #[serde(default)]
    pub session_path: String,
    #[serde(default)]
    pub phase: String,
}

/// `input.receive`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputPayload {
    #[serde(default)]
    pub text: String,
}

/// `agent.before_start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStartPayload {
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub tool_count: u64,
    #[serde(default)]
    pub session_id: String,
}

/// `system_prompt.build`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemPromptPayload {
    #[serde(default)]
    pub prompt: String,
    #[serde(default)]
    pub workspace_root: String,
}

/// `context.prepare`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextPayload {
    #[serde(default)]
    pub messages: Vec<ProviderMessage>,
}

/// `provider.request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRequestPayload {
    pub request: ProviderRequest,
}

/// `provider.response`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderResponsePayload {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub reasoning: String,
    #[serde(default)]
    pub signature: String,
    #[serde(default)]
    pub calls: Vec<ProviderToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProviderUsage>,
}

/// `tool.before`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolBeforePayload {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: String,
    #[serde(default)]
    pub call_id: String,
}

/// `tool.after`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAfterPayload {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: String,
    #[serde(default)]
    pub result: String,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub call_id: String,
}

/// `permission.decision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionPayload {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: String,
    #[serde(default)]
    pub read_only: bool,
    #[serde(default)]
    pub host_decision: String,
}

/// `compaction.prepare`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionPreparePayload {
    #[serde(default)]
    pub messages: Vec<ProviderMessage>,
    #[serde(default)]
    pub guidance: String,
}

/// `compaction.complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionCompletePayload {
    #[serde(default)]
    pub summary: String,
}

/// `frontend.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontendEventPayload {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub detail: String,
}
