//! Re-validation of `replace` answers against each point's payload DTO
//! (spec §6): strict decode (unknown fields and trailing JSON rejected), then
//! the point's "required for replace" rules.
//!
//! The host owns these rules as the dispatcher applies them; the wire types
//! inside (ProviderMessage, ProviderRequest, …) and their validation come
//! from `reasonix-protocol`.

use reasonix_protocol::points::HookPoint;
use reasonix_protocol::types::{ProviderMessage, ProviderRequest, ProviderToolCall, ProviderUsage};
use reasonix_protocol::validate::{Validate, ValidationError, decode_json, validate_list};
use serde::Deserialize;
use serde_json::value::RawValue;

/// Why a replacement is not a valid payload for its point.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{point}: {message}")]
pub struct ReplacementError {
    pub point: &'static str,
    pub message: String,
}

fn nonblank(field: &str, value: Option<&str>) -> Result<(), ValidationError> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(()),
        _ => Err(ValidationError::new(field, "must be present and not blank")),
    }
}

fn object_text(field: &str, value: Option<&str>) -> Result<(), ValidationError> {
    let Some(text) = value.filter(|t| !t.trim().is_empty()) else {
        return Ok(());
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(ValidationError::new(
            field,
            "must be empty or a JSON object",
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Session {
    #[serde(default)]
    #[allow(dead_code)]
    session_path: Option<String>,
    #[serde(default)]
    phase: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct AgentStart {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    tool_count: Option<u64>,
    #[serde(default)]
    session_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct SystemPrompt {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    workspace_root: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Context {
    messages: Option<Vec<ProviderMessage>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    request: Option<ProviderRequest>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Response {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    calls: Option<Vec<ProviderToolCall>>,
    #[serde(default)]
    usage: Option<ProviderUsage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Tool {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Permission {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    read_only: Option<bool>,
    #[serde(default)]
    host_decision: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CompactionPrepare {
    messages: Option<Vec<ProviderMessage>>,
    #[serde(default)]
    guidance: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactionComplete {
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Frontend {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    detail: Option<String>,
}

/// A point's payload with its replace rules, bound to the point.
struct Checked<T>(T, HookPoint);

macro_rules! checked {
    ($ty:ty, |$v:ident, $p:ident| $body:expr) => {
        impl Validate for Checked<$ty> {
            fn validate(&self) -> Result<(), ValidationError> {
                let $v = &self.0;
                let $p = self.1;
                let _ = $p;
                $body
            }
        }
        impl<'de> Deserialize<'de> for Checked<$ty> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$ty>::deserialize(d).map(|v| Checked(v, HookPoint::InputReceive))
            }
        }
    };
}

checked!(Session, |v, p| {
    let expected = p.session_phase().unwrap_or_default();
    match v.phase.as_deref() {
        Some(phase)
            if ["start", "end", "load", "save", "rotate"].contains(&phase) && phase == expected =>
        {
            Ok(())
        }
        Some(phase) => Err(ValidationError::new(
            "phase",
            format!("{phase:?} does not match the point (expected {expected:?})"),
        )),
        None => Err(ValidationError::new(
            "phase",
            format!("must be present (expected {expected:?})"),
        )),
    }
});
checked!(Input, |v, p| nonblank("text", v.text.as_deref()).map_err(
    |_| ValidationError::new(
        "text",
        "must not be empty (to drop the input, answer block)"
    )
));
checked!(AgentStart, |v, p| nonblank(
    "sessionId",
    v.session_id.as_deref()
));
checked!(SystemPrompt, |v, p| nonblank(
    "workspaceRoot",
    v.workspace_root.as_deref()
));
checked!(Context, |v, p| match &v.messages {
    Some(messages) => validate_list("messages", messages),
    None => Err(ValidationError::new(
        "messages",
        "must be present (may be [])"
    )),
});
checked!(Request, |v, p| match &v.request {
    Some(request) => request.validate().map_err(|e| e.within("request")),
    None => Err(ValidationError::new("request", "must be present")),
});
checked!(Response, |v, p| {
    validate_list("calls", v.calls.as_deref().unwrap_or_default())?;
    if let Some(usage) = &v.usage {
        usage.validate().map_err(|e| e.within("usage"))?;
    }
    Ok(())
});
checked!(Tool, |v, p| {
    nonblank("name", v.name.as_deref())?;
    object_text("arguments", v.arguments.as_deref())
});
checked!(Permission, |v, p| {
    nonblank("name", v.name.as_deref())?;
    match v.host_decision.as_deref() {
        Some("allow" | "deny") => {}
        _ => {
            return Err(ValidationError::new(
                "hostDecision",
                "must be \"allow\" or \"deny\"",
            ));
        }
    }
    object_text("arguments", v.arguments.as_deref())
});
checked!(CompactionPrepare, |v, p| match &v.messages {
    Some(messages) => validate_list("messages", messages),
    None => Err(ValidationError::new(
        "messages",
        "must be present (may be [])"
    )),
});
checked!(CompactionComplete, |v, p| nonblank(
    "summary",
    v.summary.as_deref()
));
checked!(Frontend, |v, p| nonblank("kind", v.kind.as_deref()));

fn check<T>(point: HookPoint, raw: &RawValue) -> Result<(), ValidationError>
where
    Checked<T>: Validate + for<'de> Deserialize<'de>,
{
    // Decode strictly first; the point-bound rules run after binding.
    let decoded: Checked<T> = decode_json_unvalidated(raw.get())?;
    Checked(decoded.0, point).validate()
}

/// Strict decode without running `Validate` (the point is bound after).
fn decode_json_unvalidated<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, ValidationError> {
    struct NoCheck<T>(T);
    impl<T> Validate for NoCheck<T> {
        fn validate(&self) -> Result<(), ValidationError> {
            Ok(())
        }
    }
    impl<'de, T: Deserialize<'de>> Deserialize<'de> for NoCheck<T> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            T::deserialize(d).map(NoCheck)
        }
    }
    decode_json::<NoCheck<T>>(text)
        .map(|v| v.0)
        .map_err(|e| ValidationError::new(e.path(), e.to_string()))
}

/// Validate `raw` as a replacement payload for `point`.
pub fn validate_replacement(point: HookPoint, raw: &RawValue) -> Result<(), ReplacementError> {
    use HookPoint as P;
    let result = match point {
        P::SessionStart | P::SessionEnd | P::SessionLoad | P::SessionSave | P::SessionRotate => {
            check::<Session>(point, raw)
        }
        P::InputReceive => check::<Input>(point, raw),
        P::AgentBeforeStart => check::<AgentStart>(point, raw),
        P::SystemPromptBuild => check::<SystemPrompt>(point, raw),
        P::ContextPrepare => check::<Context>(point, raw),
        P::ProviderRequest => check::<Request>(point, raw),
        P::ProviderResponse => check::<Response>(point, raw),
        P::ToolBefore | P::ToolAfter => check::<Tool>(point, raw),
        P::PermissionDecision => check::<Permission>(point, raw),
        P::CompactionPrepare => check::<CompactionPrepare>(point, raw),
        P::CompactionComplete => check::<CompactionComplete>(point, raw),
        P::FrontendEvent => check::<Frontend>(point, raw),
    };
    result.map_err(|error| ReplacementError {
        point: point.as_str(),
        message: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use HookPoint as P;

    fn check(point: HookPoint, json: &str) -> Result<(), ReplacementError> {
        validate_replacement(point, &RawValue::from_string(json.to_string()).unwrap())
    }

    #[test]
    fn valid_replacements_for_every_point() {
        let cases = [
            (P::SessionStart, r#"{"sessionPath":"/s","phase":"start"}"#),
            (P::SessionEnd, r#"{"phase":"end"}"#),
            (P::SessionLoad, r#"{"phase":"load"}"#),
            (P::SessionSave, r#"{"phase":"save"}"#),
            (P::SessionRotate, r#"{"phase":"rotate"}"#),
            (P::InputReceive, r#"{"text":"hi"}"#),
            (
                P::AgentBeforeStart,
                r#"{"model":"m","toolCount":3,"sessionId":"s"}"#,
            ),
            (
                P::SystemPromptBuild,
                r#"{"prompt":"","workspaceRoot":"/w"}"#,
            ),
            (P::ContextPrepare, r#"{"messages":[]}"#),
            (
                P::ProviderRequest,
                r#"{"request":{"messages":[{"role":"user","content":"x"}],"tools":[{"name":"t","parameters":{"type":"object"}}],"maxTokens":10}}"#,
            ),
            (
                P::ProviderResponse,
                r#"{"text":"x","calls":[{"id":"c1","name":"t","arguments":"{}"}]}"#,
            ),
            (
                P::ToolBefore,
                r#"{"name":"t","arguments":"{\"a\":1}","callId":"c"}"#,
            ),
            (
                P::ToolAfter,
                r#"{"name":"t","arguments":"","result":"r","isError":false}"#,
            ),
            (
                P::PermissionDecision,
                r#"{"name":"t","arguments":"{}","readOnly":true,"hostDecision":"deny"}"#,
            ),
            (P::CompactionPrepare, r#"{"messages":[],"guidance":"g"}"#),
            (P::CompactionComplete, r#"{"summary":"s"}"#),
            (P::FrontendEvent, r#"{"kind":"k"}"#),
        ];
        assert_eq!(cases.len(), 17);
        for (point, json) in cases {
            check(point, json).unwrap_or_else(|e| panic!("{json}: {e}"));
        }
    }

    #[test]
    fn invalid_replacements_are_rejected_with_the_field() {
        let cases = [
            (P::SessionStart, r#"{"phase":"end"}"#, "phase"),
            (P::SessionSave, r#"{}"#, "phase"),
            (P::InputReceive, r#"{"text":"  "}"#, "text"),
            (P::InputReceive, r#"{"text":"x","extra":1}"#, "extra"),
            (P::InputReceive, r#""just a string""#, ""),
            (P::AgentBeforeStart, r#"{"model":"m"}"#, "sessionId"),
            (P::SystemPromptBuild, r#"{"prompt":"p"}"#, "workspaceRoot"),
            (P::ContextPrepare, r#"{}"#, "messages"),
            (
                P::ContextPrepare,
                r#"{"messages":[{"role":"robot"}]}"#,
                "role",
            ),
            (
                P::ProviderRequest,
                r#"{"request":{"messages":[],"tools":[]}}"#,
                "maxTokens",
            ),
            (
                P::ProviderRequest,
                r#"{"request":{"messages":[],"tools":[{"name":"t","parameters":[]}],"maxTokens":1}}"#,
                "parameters",
            ),
            (
                P::ProviderResponse,
                r#"{"calls":[{"id":"","name":"t","arguments":""}]}"#,
                "id",
            ),
            (P::ToolBefore, r#"{"arguments":"{}"}"#, "name"),
            (
                P::ToolBefore,
                r#"{"name":"t","arguments":"[1]"}"#,
                "arguments",
            ),
            (
                P::PermissionDecision,
                r#"{"name":"t","hostDecision":"maybe"}"#,
                "hostDecision",
            ),
            (P::CompactionComplete, r#"{"summary":""}"#, "summary"),
            (P::FrontendEvent, r#"{"text":"t"}"#, "kind"),
        ];
        for (point, json, field) in cases {
            let error = check(point, json).expect_err(json).to_string();
            assert!(error.contains(field), "{json}: {error}");
        }
    }
}
