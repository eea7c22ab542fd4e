use super::*;
use crate::points::HookPoint;
use crate::validate::{DecodeError, decode_json};

fn shape_error<T: serde::de::DeserializeOwned + crate::Validate + std::fmt::Debug>(
    text: &str,
) -> (String, String) {
    match decode_json::<T>(text) {
        Err(DecodeError::Shape { path, message }) => (path, message),
        other => panic!("expected a shape error for {text}, got {other:?}"),
    }
}

fn invalid<T: serde::de::DeserializeOwned + crate::Validate + std::fmt::Debug>(
    text: &str,
) -> String {
    match decode_json::<T>(text) {
        Err(DecodeError::Invalid(v)) => v.path,
        other => panic!("expected a validation error for {text}, got {other:?}"),
    }
}

#[test]
fn unknown_fields_are_rejected_at_any_depth_with_their_path() {
    let (path, message) = shape_error::<ShutdownParams>(r#"{"timeoutMillis":1,"extra":true}"#);
    assert!(message.contains("unknown field `extra`"), "{message}");
    assert_eq!(path, "extra");
    let (path, message) = shape_error::<InitializeParams>(
        r#"{"protocolVersion":"2","protocolId":"reasonix.extension.v2","manifest":{"intercept":[]},
            "session":{"sessionId":"s","workspaceRoot":"/w","generation":1},
            "capabilities":{"contentRefs":true,"uiHost":"tui","protocolVersion":"2"}}"#,
    );
    assert!(message.contains("unknown field `intercept`"), "{message}");
    assert_eq!(path, "manifest.intercept");
    let (_, message) = shape_error::<InitializedParams>(r#"{"x":1}"#);
    assert!(message.contains("unknown field"), "{message}");
}

#[test]
fn required_fields_must_be_present_and_non_null() {
    let (_, message) = shape_error::<ShutdownParams>("{}");
    assert!(
        message.contains("missing field `timeoutMillis`"),
        "{message}"
    );
    let (path, _) = shape_error::<ShutdownParams>(r#"{"timeoutMillis":null}"#);
    assert_eq!(path, "timeoutMillis");
    let (_, message) =
        shape_error::<InitializeResult>(r#"{"protocolVersion":"2","name":"n","version":"1"}"#);
    assert!(message.contains("stateSchemaVersion"), "{message}");
    assert!(
        decode_json::<InitializeResult>(
            r#"{"protocolVersion":"2","name":"n","version":"1","stateSchemaVersion":0}"#
        )
        .is_ok()
    );
}

#[test]
fn closed_enums_and_minimums() {
    let (path, _) = shape_error::<HostCapabilities>(
        r#"{"contentRefs":true,"uiHost":"web","protocolVersion":"2"}"#,
    );
    assert_eq!(path, "uiHost");
    let (path, _) = shape_error::<ShutdownParams>(r#"{"timeoutMillis":-1}"#);
    assert_eq!(path, "timeoutMillis");
    let (path, _) = shape_error::<ShutdownParams>(r#"{"timeoutMillis":1.5}"#);
    assert_eq!(path, "timeoutMillis");
    let path = invalid::<InterceptParams>(
        r#"{"event":"tool.before","seq":0,"payload":{},"timeoutMillis":5000}"#,
    );
    assert_eq!(path, "seq");
    let path = invalid::<ProviderDescriptor>(r#"{"ref":"plugin/p/x","inputPerMillion":-0.5}"#);
    assert_eq!(path, "inputPerMillion");
}

#[test]
fn trailing_json_is_rejected() {
    let (_, message) = shape_error::<ShutdownParams>(r#"{"timeoutMillis":1} {}"#);
    assert!(message.contains("trailing"), "{message}");
}

#[test]
fn nonempty_means_not_blank_after_trimming() {
    let path = invalid::<StreamCancelParams>(r#"{"streamId":"  \t"}"#);
    assert_eq!(path, "streamId");
    let path = invalid::<InitializeParams>(
        r#"{"protocolVersion":"2","protocolId":"p","manifest":{"provides":[{"namespace":"n","kind":"k","id":" "}]},
            "session":{"sessionId":"s","workspaceRoot":"/w","generation":1},
            "capabilities":{"contentRefs":true,"uiHost":"tui","protocolVersion":"2"}}"#,
    );
    assert_eq!(path, "manifest.provides[0].id");
}

#[test]
fn sha256_must_be_lowercase_hex() {
    let upper = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855";
    let text = format!(
        r#"{{"contentRef":"content_0123456789abcdef01234567","offset":0,"dataBase64":"","totalBytes":0,"sha256":"{upper}","encoding":"utf8"}}"#
    );
    assert_eq!(invalid::<ContentReadResult>(&text), "sha256");
    let ok = text.replace(upper, &upper.to_lowercase());
    assert!(decode_json::<ContentReadResult>(&ok).is_ok());
}

#[test]
fn externalised_payload_null_is_present_not_missing() {
    let p: InterceptParams = decode_json(
        r#"{"event":"tool.before","seq":1,"payload":null,"timeoutMillis":5000,
            "externalized":[{"jsonPointer":"/payload","contentRef":"content_0123456789abcdef01234567","totalBytes":70000,
            "sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}]}"#,
    )
    .unwrap();
    assert_eq!(p.payload.get(), "null");
    assert_eq!(p.event, HookPoint::ToolBefore);
    let (_, message) =
        shape_error::<InterceptParams>(r#"{"event":"tool.before","seq":1,"timeoutMillis":5000}"#);
    assert!(message.contains("missing field `payload`"), "{message}");

    let r: InterceptResult = decode_json(r#"{"decision":"replace","replacement":null}"#).unwrap();
    assert_eq!(r.replacement.as_ref().map(|v| v.get()), Some("null"));
    let r: InterceptResult = decode_json(r#"{"decision":"continue"}"#).unwrap();
    assert!(r.replacement.is_none());
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        r#"{"decision":"continue"}"#
    );
}

#[test]
fn tool_call_arguments_must_be_present_even_if_null() {
    let p: ToolCallParams =
        decode_json(r#"{"name":"t","arguments":null,"timeoutMillis":1}"#).unwrap();
    assert_eq!(p.arguments.get(), "null");
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"{"name":"t","arguments":null,"timeoutMillis":1}"#
    );
    let (_, message) = shape_error::<ToolCallParams>(r#"{"name":"t","timeoutMillis":1}"#);
    assert!(message.contains("missing field `arguments`"), "{message}");
}

#[test]
fn manifest_expectation_omits_empty_lists_like_upstream() {
    let empty = ManifestExpectation::default();
    assert_eq!(serde_json::to_string(&empty).unwrap(), "{}");
    let m = ManifestExpectation {
        intercepts: vec!["tool.before".into()],
        tools: vec!["grep".into()],
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"intercepts":["tool.before"],"tools":["grep"]}"#
    );
}

#[test]
fn provider_chunk_invariants() {
    let ok = [
        r#"{"type":"text","text":"hi"}"#,
        r#"{"type":"done"}"#,
        r#"{"type":"error","error":{"code":"provider_failed","message":"boom"}}"#,
        r#"{"type":"usage","usage":{"promptTokens":1,"completionTokens":2,"totalTokens":3,"cacheHitTokens":0,"cacheMissTokens":1,"reasoningTokens":0}}"#,
        r#"{"type":"tool_call","toolCall":{"id":"c1","name":"grep","arguments":"{}"}}"#,
    ];
    for text in ok {
        decode_json::<ProviderChunk>(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    for (text, path) in [
        (r#"{"type":"error"}"#, "error"),
        (
            r#"{"type":"text","error":{"code":"provider_failed","message":"boom"}}"#,
            "error",
        ),
        (r#"{"type":"usage"}"#, "usage"),
        (
            r#"{"type":"error","error":{"code":"provider_failed","message":" "}}"#,
            "error.message",
        ),
        (
            r#"{"type":"tool_call","toolCall":{"id":"","name":"grep","arguments":"{}"}}"#,
            "toolCall.id",
        ),
    ] {
        assert_eq!(invalid::<ProviderChunk>(text), path, "{text}");
    }
    let (path, _) = shape_error::<ProviderChunk>(
        r#"{"type":"tool_call","toolCall":{"id":"c","name":"n","arguments":"{}","thoughtSignature":"x"}}"#,
    );
    assert_eq!(
        path, "toolCall.thoughtSignature",
        "snake_case inside ProviderToolCall"
    );
}

#[test]
fn provider_tool_parameters_must_be_an_object() {
    let path = invalid::<ProviderRequest>(
        r#"{"messages":[],"tools":[{"name":"t","parameters":[]}],"maxTokens":1}"#,
    );
    assert_eq!(path, "tools[0].parameters");
    let (path, _) = shape_error::<ProviderRequest>(r#"{"messages":null,"tools":[],"maxTokens":1}"#);
    assert_eq!(path, "messages");
}

#[test]
fn provider_message_uses_snake_case_members() {
    let m: ProviderMessage = decode_json(
        r#"{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"a","name":"b","arguments":"{}","thought_signature":"s"}],"tool_call_id":"x"}"#,
    )
    .unwrap();
    assert_eq!(m.tool_calls[0].thought_signature.as_deref(), Some("s"));
    let (path, _) = shape_error::<ProviderMessage>(r#"{"toolCallId":"x"}"#);
    assert_eq!(path, "toolCallId");
}

#[test]
fn every_schema_def_name_is_unique() {
    let mut names = SCHEMA_DEF_NAMES.to_vec();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), SCHEMA_DEF_NAMES.len());
    assert_eq!(names.len(), 45);
}

#[test]
fn structs_must_be_objects_not_arrays_at_any_depth() {
    let (_, message) = shape_error::<ShutdownParams>("[5000]");
    assert!(message.contains("invalid type: sequence"), "{message}");
    let (path, _) =
        shape_error::<StreamChunkParams>(r#"{"streamId":"s","seq":1,"chunk":["done"]}"#);
    assert_eq!(path, "chunk");
    let (path, _) =
        shape_error::<ProviderRequest>(r#"{"messages":[["user","hi"]],"tools":[],"maxTokens":1}"#);
    assert_eq!(path, "messages[0]");
    // Raw "any" members and maps still pass through the adapter untouched.
    let p: ToolCallParams =
        decode_json(r#"{"name":"t","arguments":[1,{"a":null}],"timeoutMillis":1}"#).unwrap();
    assert_eq!(p.arguments.get(), r#"[1,{"a":null}]"#);
}
