//! Provider catalogue and streaming DTOs.

use super::RawJson;
use crate::validate::{
    Validate, ValidationError, at_least, json_object, non_negative_number, nonempty, validate_list,
};
use serde::{Deserialize, Serialize};

/// `extension/provider/catalog` params: always `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderCatalogParams {}

impl Validate for ProviderCatalogParams {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/provider/catalog` result (`providers` is `[]`, never null).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderCatalogResult {
    pub providers: Vec<ProviderDescriptor>,
}

impl Validate for ProviderCatalogResult {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_list("providers", &self.providers)
    }
}

/// One model a provider extension offers. Never carries credentials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderDescriptor {
    #[serde(rename = "ref")]
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing_currency: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_hit_per_million: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_per_million: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_per_million: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub efforts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_reasoning: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_round_trip: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_on_missing_tool_call_reasoning: Option<bool>,
}

impl Validate for ProviderDescriptor {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("ref", &self.reference)?;
        non_negative_number("cacheHitPerMillion", self.cache_hit_per_million)?;
        non_negative_number("inputPerMillion", self.input_per_million)?;
        non_negative_number("outputPerMillion", self.output_per_million)
    }
}

/// Chunk kinds of a provider stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkType {
    Text,
    Reasoning,
    ToolCallStart,
    ToolCallArgsDelta,
    ToolCall,
    Usage,
    Done,
    Error,
}

/// One streamed piece of a provider answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderChunk {
    #[serde(rename = "type")]
    pub chunk_type: ChunkType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<ProviderToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg_chars: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProviderUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}

impl ProviderChunk {
    /// A chunk of the given type with nothing else set.
    pub fn of_type(chunk_type: ChunkType) -> Self {
        Self {
            chunk_type,
            text: None,
            signature: None,
            tool_call: None,
            arg_chars: None,
            usage: None,
            error: None,
            generation: None,
            epoch: None,
        }
    }
}

impl Validate for ProviderChunk {
    /// §9 invariants: an error chunk needs `error` and other types forbid
    /// it; a usage chunk needs `usage`.
    fn validate(&self) -> Result<(), ValidationError> {
        match (self.chunk_type, &self.error) {
            (ChunkType::Error, None) => {
                return Err(ValidationError::new("error", "an error chunk needs error"));
            }
            (ChunkType::Error, Some(_)) | (_, None) => {}
            (_, Some(_)) => {
                return Err(ValidationError::new(
                    "error",
                    "only an error chunk may carry error",
                ));
            }
        }
        if self.chunk_type == ChunkType::Usage && self.usage.is_none() {
            return Err(ValidationError::new("usage", "a usage chunk needs usage"));
        }
        if let Some(call) = &self.tool_call {
            call.validate().map_err(|e| e.within("toolCall"))?;
        }
        if let Some(error) = &self.error {
            error.validate().map_err(|e| e.within("error"))?;
        }
        Ok(())
    }
}

/// Error codes a provider stream may report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderErrorCode {
    ProviderFailed,
    ProviderInterrupted,
}

/// The error carried by an error chunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderError {
    pub code: ProviderErrorCode,
    pub message: String,
}

impl Validate for ProviderError {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("message", &self.message)
    }
}

/// Roles of a conversation message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderRole {
    System,
    User,
    Assistant,
    Tool,
}

/// A conversation message. Member names are snake_case here, as upstream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderMessage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ProviderRole>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_signature: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ProviderToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Validate for ProviderMessage {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_list("tool_calls", &self.tool_calls)
    }
}

/// A tool call proposed by the model. Member names are snake_case here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

impl Validate for ProviderToolCall {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("id", &self.id)?;
        nonempty("name", &self.name)
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderToolSchema {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema object.
    pub parameters: RawJson,
}

impl PartialEq for ProviderToolSchema {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.parameters.get() == other.parameters.get()
    }
}

impl Validate for ProviderToolSchema {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("name", &self.name)?;
        json_object("parameters", &self.parameters)
    }
}

/// The requested response format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderResponseFormat {
    #[serde(rename = "type")]
    pub format_type: String,
}

impl Validate for ProviderResponseFormat {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("type", &self.format_type)
    }
}

/// A model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderRequest {
    pub messages: Vec<ProviderMessage>,
    pub tools: Vec<ProviderToolSchema>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ProviderResponseFormat>,
}

impl Validate for ProviderRequest {
    fn validate(&self) -> Result<(), ValidationError> {
        validate_list("messages", &self.messages)?;
        validate_list("tools", &self.tools)?;
        if let Some(format) = &self.response_format {
            format.validate().map_err(|e| e.within("responseFormat"))?;
        }
        Ok(())
    }
}

/// Token accounting of one answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    pub cache_hit_tokens: u64,
    pub cache_miss_tokens: u64,
    pub reasoning_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl Validate for ProviderUsage {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/provider/stream/open` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StreamOpenParams {
    pub stream_id: String,
    pub provider_ref: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    pub request: ProviderRequest,
    pub seq_base: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}

impl Validate for StreamOpenParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("streamId", &self.stream_id)?;
        nonempty("providerRef", &self.provider_ref)?;
        self.request.validate().map_err(|e| e.within("request"))
    }
}

/// `extension/provider/stream/open` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StreamOpenResult {
    pub accepted: bool,
}

impl Validate for StreamOpenResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/provider/stream/cancel` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StreamCancelParams {
    pub stream_id: String,
}

impl Validate for StreamCancelParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("streamId", &self.stream_id)
    }
}

/// `extension/provider/stream/cancel` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StreamCancelResult {
    pub cancelled: bool,
}

impl Validate for StreamCancelResult {
    fn validate(&self) -> Result<(), ValidationError> {
        Ok(())
    }
}

/// `extension/provider/stream/chunk` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StreamChunkParams {
    pub stream_id: String,
    pub seq: u64,
    pub chunk: ProviderChunk,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}

impl Validate for StreamChunkParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("streamId", &self.stream_id)?;
        at_least("seq", self.seq, 1)?;
        self.chunk.validate().map_err(|e| e.within("chunk"))
    }
}

/// `extension/provider/stream/end` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StreamEndParams {
    pub stream_id: String,
    pub last_seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
}

impl Validate for StreamEndParams {
    fn validate(&self) -> Result<(), ValidationError> {
        nonempty("streamId", &self.stream_id)
    }
}
