//! Per-point payload DTOs (spec §6, upstream `dispatch/payloads.go`) and the
//! re-validation of `replace` answers.
//!
//! The schema types payloads as "any"; these DTOs are the host's contract.
//! Every member is optional on the wire and, as upstream's `omitempty`, a
//! zero value (empty string, `false`, `0`) is omitted when sending and an
//! explicit `null` decodes as the zero value. Lists whose *presence* matters
//! for a replacement (`messages`) are `Option`.

use crate::points::HookPoint;
use crate::types::{ProviderMessage, ProviderRequest, ProviderToolCall, ProviderUsage};
use crate::validate::{
    DecodeError, Validate, ValidationError, decode_json, nonempty, validate_list,
};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// `session.start|end|load|save|rotate`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub session_path: String,
    /// `start`, `end`, `load`, `save` or `rotate`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub phase: String,
}

/// `input.receive`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InputPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub text: String,
}

/// `agent.before_start`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentStartPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub model: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_zero"
    )]
    pub tool_count: i64,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub session_id: String,
}

/// `system_prompt.build`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SystemPromptPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub prompt: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub workspace_root: String,
}

/// `context.prepare`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextPayload {
    /// Must be present in a replacement (may be `[]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<ProviderMessage>>,
}

/// `provider.request`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderRequestPayload {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ProviderRequest>,
}

/// `provider.response`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderResponsePayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub text: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub reasoning: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub signature: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub calls: Vec<ProviderToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ProviderUsage>,
}

/// `tool.before`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolBeforePayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// A JSON object as text (or empty).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub arguments: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub call_id: String,
}

/// `tool.after`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolAfterPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// A JSON object as text (or empty).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub arguments: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub result: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub is_error: bool,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub call_id: String,
}

/// The host's own verdict at `permission.decision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostDecision {
    Allow,
    Deny,
}

/// `permission.decision`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PermissionPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
    /// A JSON object as text (or empty).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub arguments: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub read_only: bool,
    /// Required in a replacement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_decision: Option<HostDecision>,
}

/// `compaction.prepare`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactionPreparePayload {
    /// Must be present in a replacement (may be `[]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<ProviderMessage>>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub guidance: String,
}

/// `compaction.complete`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactionCompletePayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub summary: String,
}

/// `frontend.event`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FrontendEventPayload {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub text: String,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub detail: String,
}

/// A decoded payload of any point.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PointPayload {
    Session(SessionPayload),
    Input(InputPayload),
    AgentStart(AgentStartPayload),
    SystemPrompt(SystemPromptPayload),
    Context(ContextPayload),
    ProviderRequest(ProviderRequestPayload),
    ProviderResponse(ProviderResponsePayload),
    ToolBefore(ToolBeforePayload),
    ToolAfter(ToolAfterPayload),
    Permission(PermissionPayload),
    CompactionPrepare(CompactionPreparePayload),
    CompactionComplete(CompactionCompletePayload),
    FrontendEvent(FrontendEventPayload),
}

/// A payload (or replacement) that does not fit its point.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("payload of {point}: {error}")]
pub struct PayloadError {
    pub point: HookPoint,
    pub error: DecodeError,
}

/// Wire-level payloads carry no rules of their own; the replace rules are
/// point-specific and live in [`validate_replacement`].
macro_rules! no_wire_rules {
    ($($ty:ty),*) => {$(impl Validate for $ty {
        fn validate(&self) -> Result<(), ValidationError> { Ok(()) }
    })*};
}

no_wire_rules!(
    SessionPayload,
    InputPayload,
    AgentStartPayload,
    SystemPromptPayload,
    ContextPayload,
    ProviderRequestPayload,
    ProviderResponsePayload,
    ToolBeforePayload,
    ToolAfterPayload,
    PermissionPayload,
    CompactionPreparePayload,
    CompactionCompletePayload,
    FrontendEventPayload
);

/// Strictly decodes a point's payload (unknown members and trailing JSON
/// rejected) without the replace rules.
pub fn decode_payload(point: HookPoint, raw: &RawValue) -> Result<PointPayload, PayloadError> {
    decode_payload_text(point, raw.get()).map_err(|error| PayloadError { point, error })
}

fn decode_payload_text(point: HookPoint, text: &str) -> Result<PointPayload, DecodeError> {
    use HookPoint as P;
    Ok(match point {
        P::SessionStart | P::SessionEnd | P::SessionLoad | P::SessionSave | P::SessionRotate => {
            PointPayload::Session(decode_json(text)?)
        }
        P::InputReceive => PointPayload::Input(decode_json(text)?),
        P::AgentBeforeStart => PointPayload::AgentStart(decode_json(text)?),
        P::SystemPromptBuild => PointPayload::SystemPrompt(decode_json(text)?),
        P::ContextPrepare => PointPayload::Context(decode_json(text)?),
        P::ProviderRequest => PointPayload::ProviderRequest(decode_json(text)?),
        P::ProviderResponse => PointPayload::ProviderResponse(decode_json(text)?),
        P::ToolBefore => PointPayload::ToolBefore(decode_json(text)?),
        P::ToolAfter => PointPayload::ToolAfter(decode_json(text)?),
        P::PermissionDecision => PointPayload::Permission(decode_json(text)?),
        P::CompactionPrepare => PointPayload::CompactionPrepare(decode_json(text)?),
        P::CompactionComplete => PointPayload::CompactionComplete(decode_json(text)?),
        P::FrontendEvent => PointPayload::FrontendEvent(decode_json(text)?),
    })
}

/// Re-validates a `replace` answer for `point`: strict decode into the
/// point's DTO, then the point's "required for replace" rules (§6). Returns
/// the decoded replacement.
pub fn validate_replacement(
    point: HookPoint,
    raw: &RawValue,
) -> Result<PointPayload, PayloadError> {
    let payload = decode_payload(point, raw)?;
    replacement_rules(point, &payload).map_err(|e| PayloadError {
        point,
        error: DecodeError::Invalid(e),
    })?;
    Ok(payload)
}

fn replacement_rules(point: HookPoint, payload: &PointPayload) -> Result<(), ValidationError> {
    match payload {
        PointPayload::Session(p) => {
            let expected = point.session_phase().unwrap_or_default();
            if !matches!(
                p.phase.as_str(),
                "start" | "end" | "load" | "save" | "rotate"
            ) {
                return Err(ValidationError::new(
                    "phase",
                    format!(
                        "must be start, end, load, save or rotate, got {:?}",
                        p.phase
                    ),
                ));
            }
            if p.phase != expected {
                return Err(ValidationError::new(
                    "phase",
                    format!("must be {expected:?} at {point}, got {:?}", p.phase),
                ));
            }
            Ok(())
        }
        PointPayload::Input(p) => nonempty("text", &p.text).map_err(|e| {
            ValidationError::new(e.path, "must not be empty (emptying the input is a block)")
        }),
        PointPayload::AgentStart(p) => nonempty("sessionId", &p.session_id),
        PointPayload::SystemPrompt(p) => nonempty("workspaceRoot", &p.workspace_root),
        PointPayload::Context(p) => messages_present(p.messages.as_deref()),
        PointPayload::ProviderRequest(p) => match &p.request {
            None => Err(ValidationError::new("request", "must be present")),
            Some(request) => request.validate().map_err(|e| e.within("request")),
        },
        PointPayload::ProviderResponse(p) => validate_list("calls", &p.calls),
        PointPayload::ToolBefore(p) => tool_rules(&p.name, &p.arguments),
        PointPayload::ToolAfter(p) => tool_rules(&p.name, &p.arguments),
        PointPayload::Permission(p) => {
            tool_rules(&p.name, &p.arguments)?;
            if p.host_decision.is_none() {
                return Err(ValidationError::new(
                    "hostDecision",
                    "must be allow or deny",
                ));
            }
            Ok(())
        }
        PointPayload::CompactionPrepare(p) => messages_present(p.messages.as_deref()),
        PointPayload::CompactionComplete(p) => nonempty("summary", &p.summary),
        PointPayload::FrontendEvent(p) => nonempty("kind", &p.kind),
    }
}

fn messages_present(messages: Option<&[ProviderMessage]>) -> Result<(), ValidationError> {
    match messages {
        None => Err(ValidationError::new(
            "messages",
            "must be present (may be [])",
        )),
        Some(list) => validate_list("messages", list),
    }
}

fn tool_rules(name: &str, arguments: &str) -> Result<(), ValidationError> {
    nonempty("name", name)?;
    if arguments.trim().is_empty() {
        return Ok(());
    }
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => Ok(()),
        _ => Err(ValidationError::new(
            "arguments",
            "must be empty or a JSON object as text",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::raw_json;

    fn check(point: HookPoint, text: &str) -> Result<PointPayload, PayloadError> {
        validate_replacement(point, &raw_json(text).unwrap())
    }

    fn rejected_at(point: HookPoint, text: &str) -> String {
        match check(point, text) {
            Ok(p) => panic!("{point} accepted {text}: {p:?}"),
            Err(e) => e.error.path().to_owned(),
        }
    }

    #[test]
    fn session_phase_must_equal_the_point_suffix() {
        for point in [
            HookPoint::SessionStart,
            HookPoint::SessionEnd,
            HookPoint::SessionLoad,
            HookPoint::SessionSave,
            HookPoint::SessionRotate,
        ] {
            let phase = point.session_phase().unwrap();
            let ok = format!(r#"{{"sessionPath":"/s","phase":"{phase}"}}"#);
            assert!(check(point, &ok).is_ok(), "{point}");
        }
        assert_eq!(
            rejected_at(HookPoint::SessionSave, r#"{"phase":"load"}"#),
            "phase"
        );
        assert_eq!(
            rejected_at(HookPoint::SessionSave, r#"{"phase":"pause"}"#),
            "phase"
        );
        assert_eq!(rejected_at(HookPoint::SessionSave, r#"{}"#), "phase");
    }

    #[test]
    fn required_for_replace_rules() {
        use HookPoint as P;
        let cases: &[(HookPoint, &str, Option<&str>)] = &[
            (P::InputReceive, r#"{"text":"hi"}"#, None),
            (P::InputReceive, r#"{"text":"  "}"#, Some("text")),
            (P::InputReceive, r#"{}"#, Some("text")),
            (
                P::AgentBeforeStart,
                r#"{"model":"m","toolCount":3,"sessionId":"s"}"#,
                None,
            ),
            (P::AgentBeforeStart, r#"{"model":"m"}"#, Some("sessionId")),
            (
                P::SystemPromptBuild,
                r#"{"prompt":"","workspaceRoot":"/w"}"#,
                None,
            ),
            (
                P::SystemPromptBuild,
                r#"{"prompt":"p"}"#,
                Some("workspaceRoot"),
            ),
            (P::ContextPrepare, r#"{"messages":[]}"#, None),
            (P::ContextPrepare, r#"{}"#, Some("messages")),
            (P::ContextPrepare, r#"{"messages":null}"#, Some("messages")),
            (
                P::ContextPrepare,
                r#"{"messages":[{"tool_calls":[{"id":"","name":"n","arguments":""}]}]}"#,
                Some("messages[0].tool_calls[0].id"),
            ),
            (
                P::ProviderRequest,
                r#"{"request":{"messages":[],"tools":[],"maxTokens":0}}"#,
                None,
            ),
            (P::ProviderRequest, r#"{}"#, Some("request")),
            (
                P::ProviderRequest,
                r#"{"request":{"messages":[],"tools":[{"name":"t","parameters":"x"}],"maxTokens":0}}"#,
                Some("request.tools[0].parameters"),
            ),
            (
                P::ProviderRequest,
                r#"{"request":{"messages":[],"tools":[],"maxTokens":0,"responseFormat":{"type":""}}}"#,
                Some("request.responseFormat.type"),
            ),
            (
                P::ProviderResponse,
                r#"{"text":"t","calls":[{"id":"1","name":"n","arguments":"{}"}]}"#,
                None,
            ),
            (
                P::ProviderResponse,
                r#"{"calls":[{"id":"1","name":" ","arguments":"{}"}]}"#,
                Some("calls[0].name"),
            ),
            (
                P::ToolBefore,
                r#"{"name":"grep","arguments":"{\"a\":1}","callId":"c"}"#,
                None,
            ),
            (P::ToolBefore, r#"{"name":"grep"}"#, None),
            (
                P::ToolBefore,
                r#"{"name":"grep","arguments":"[1]"}"#,
                Some("arguments"),
            ),
            (
                P::ToolBefore,
                r#"{"name":"grep","arguments":"{"}"#,
                Some("arguments"),
            ),
            (P::ToolBefore, r#"{"arguments":"{}"}"#, Some("name")),
            (
                P::ToolAfter,
                r#"{"name":"grep","arguments":"{}","result":"r","isError":true}"#,
                None,
            ),
            (P::ToolAfter, r#"{"result":"r"}"#, Some("name")),
            (
                P::PermissionDecision,
                r#"{"name":"rm","arguments":"{}","readOnly":false,"hostDecision":"deny"}"#,
                None,
            ),
            (
                P::PermissionDecision,
                r#"{"name":"rm"}"#,
                Some("hostDecision"),
            ),
            (
                P::PermissionDecision,
                r#"{"name":"rm","hostDecision":"maybe"}"#,
                Some("hostDecision"),
            ),
            (
                P::CompactionPrepare,
                r#"{"messages":[],"guidance":"g"}"#,
                None,
            ),
            (
                P::CompactionPrepare,
                r#"{"guidance":"g"}"#,
                Some("messages"),
            ),
            (P::CompactionComplete, r#"{"summary":"s"}"#, None),
            (P::CompactionComplete, r#"{"summary":""}"#, Some("summary")),
            (
                P::FrontendEvent,
                r#"{"kind":"k","text":"t","detail":"d"}"#,
                None,
            ),
            (P::FrontendEvent, r#"{"text":"t"}"#, Some("kind")),
        ];
        for (point, text, expected) in cases {
            match expected {
                None => {
                    check(*point, text).unwrap_or_else(|e| panic!("{point} {text}: {e}"));
                }
                Some(path) => assert_eq!(&rejected_at(*point, text), path, "{point} {text}"),
            }
        }
    }

    #[test]
    fn strict_decode_rejects_unknown_fields_trailing_json_and_non_objects() {
        assert_eq!(
            rejected_at(HookPoint::InputReceive, r#"{"text":"a","txt":"b"}"#),
            "txt"
        );
        assert!(check(HookPoint::InputReceive, "null").is_err());
        assert!(check(HookPoint::InputReceive, r#"["a"]"#).is_err());
        assert!(check(HookPoint::InputReceive, r#""a""#).is_err());
        // Trailing JSON cannot survive RawValue, but the text decoder refuses it too.
        assert!(decode_payload_text(HookPoint::InputReceive, r#"{"text":"a"} {}"#).is_err());
        // Each point decodes only its own DTO.
        assert_eq!(
            rejected_at(HookPoint::ToolBefore, r#"{"name":"n","result":"r"}"#),
            "result"
        );
    }

    #[test]
    fn zero_values_are_omitted_and_null_is_the_zero_value() {
        let p = ToolAfterPayload {
            name: "grep".into(),
            ..Default::default()
        };
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"{"name":"grep"}"#);
        let decoded = decode_payload(
            HookPoint::ToolAfter,
            &raw_json(r#"{"name":"grep","result":null,"isError":null}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(decoded, PointPayload::ToolAfter(p));
        let ctx = ContextPayload {
            messages: Some(vec![]),
        };
        assert_eq!(serde_json::to_string(&ctx).unwrap(), r#"{"messages":[]}"#);
    }

    #[test]
    fn error_names_point_and_field() {
        let err = check(HookPoint::CompactionComplete, r#"{"summary":" "}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "payload of compaction.complete: summary: must not be empty"
        );
    }
}
