//! Conformance of the `reasonix-protocol` wire types with the normative
//! schema (generation B, `shared/spec/schema/extension-protocol-v2.json`).
//!
//! Positive: a representative value of every `$defs` entry is serialised
//! and validated against that entry by the `jsonschema` crate, then decoded
//! back strictly. Negative: a table of bad inputs, each of which must be
//! rejected by BOTH our strict decoder and the schema.

use reasonix_protocol::types::*;
use reasonix_protocol::{
    DecodeError, Frame, HookPoint, Method, RejectionKind, decode_frame, decode_json,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const REF: &str = "content_0123456789abcdef01234567";

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/schema/extension-protocol-v2.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The root schema document with a `$ref` to one `$defs` entry, so the
/// entry is compiled in the context of the whole document.
fn validator_for_def(schema: &Value, def: &str) -> jsonschema::Validator {
    assert!(
        schema["$defs"].get(def).is_some(),
        "schema has no $defs entry {def}"
    );
    let mut root = schema.clone();
    root["$ref"] = Value::String(format!("#/$defs/{def}"));
    jsonschema::validator_for(&root).unwrap_or_else(|e| panic!("compiling $defs/{def}: {e}"))
}

fn schema_errors(schema: &Value, def: &str, instance: &Value) -> Vec<String> {
    validator_for_def(schema, def)
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn raw(v: Value) -> RawJson {
    serde_json::value::to_raw_value(&v).unwrap()
}

type Check = fn(&str) -> Result<Value, DecodeError>;

/// Strict decode of `text` as `T`, re-serialised (for round-trip checks).
fn decode_as<T: DeserializeOwned + Serialize + reasonix_protocol::Validate>(
    text: &str,
) -> Result<Value, DecodeError> {
    let value: T = decode_json(text)?;
    Ok(serde_json::to_value(&value).unwrap())
}

struct Sample {
    value: Value,
    decode: Check,
}

#[derive(Default)]
struct Samples(BTreeMap<&'static str, Sample>);

impl Samples {
    fn add<T>(&mut self, value: T)
    where
        T: SchemaDef + Serialize + DeserializeOwned + reasonix_protocol::Validate,
    {
        let previous = self.0.insert(
            T::SCHEMA_DEF,
            Sample {
                value: serde_json::to_value(&value).unwrap(),
                decode: decode_as::<T>,
            },
        );
        assert!(previous.is_none(), "two samples for {}", T::SCHEMA_DEF);
    }
}

fn capability() -> CapabilityWire {
    CapabilityWire {
        namespace: "acme".into(),
        kind: "provider".into(),
        id: "llm".into(),
        version: Some("1.2.0".into()),
        schema_hash: Some(format!("sha256:{SHA}")),
    }
}

fn requirement() -> RequirementWire {
    RequirementWire {
        namespace: "reasonix".into(),
        kind: "browser".into(),
        id: "companion".into(),
        version: Some("1.0.0".into()),
        schema_hash: Some(format!("sha256:{SHA}")),
        version_range: Some(">=1.0.0,<2".into()),
        optional: Some(true),
    }
}

fn descriptor() -> ProviderDescriptor {
    ProviderDescriptor {
        reference: "plugin/acme/llm/big".into(),
        display_name: Some("Big".into()),
        model: Some("big".into()),
        context_window: Some(128_000),
        pricing_currency: Some("USD".into()),
        cache_hit_per_million: Some(0.1),
        input_per_million: Some(1.0),
        output_per_million: Some(2.5),
        vision: Some(true),
        tools: Some(true),
        reasoning: Some(false),
        efforts: vec!["low".into(), "high".into()],
        default_effort: Some("low".into()),
        tool_call_reasoning: Some(true),
        reasoning_round_trip: Some(false),
        warn_on_missing_tool_call_reasoning: Some(true),
    }
}

fn tool_call() -> ProviderToolCall {
    ProviderToolCall {
        id: "call_1".into(),
        name: "grep".into(),
        arguments: r#"{"pattern":"x"}"#.into(),
        thought_signature: Some("sig".into()),
    }
}

fn usage() -> ProviderUsage {
    ProviderUsage {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        cache_hit_tokens: 2,
        cache_miss_tokens: 8,
        reasoning_tokens: 1,
        finish_reason: Some("stop".into()),
    }
}

fn message() -> ProviderMessage {
    ProviderMessage {
        role: Some(ProviderRole::Assistant),
        content: Some("hello".into()),
        images: vec!["data:image/png;base64,AA==".into()],
        reasoning_content: Some("thinking".into()),
        reasoning_signature: Some("rs".into()),
        tool_calls: vec![tool_call()],
        tool_call_id: Some("call_0".into()),
        name: Some("helper".into()),
    }
}

fn tool_schema() -> ProviderToolSchema {
    ProviderToolSchema {
        name: "grep".into(),
        description: Some("search".into()),
        parameters: raw(json!({"type": "object", "properties": {"pattern": {"type": "string"}}})),
    }
}

fn request() -> ProviderRequest {
    ProviderRequest {
        messages: vec![message()],
        tools: vec![tool_schema()],
        temperature: Some(0.2),
        max_tokens: 1024,
        response_format: Some(ProviderResponseFormat {
            format_type: "json_object".into(),
        }),
    }
}

fn chunk() -> ProviderChunk {
    ProviderChunk {
        text: Some("partial".into()),
        arg_chars: Some(7),
        generation: Some(3),
        epoch: Some("e1".into()),
        signature: Some("sig".into()),
        tool_call: Some(tool_call()),
        usage: Some(usage()),
        ..ProviderChunk::of_type(ChunkType::Usage)
    }
}

fn externalized() -> ExternalizedField {
    ExternalizedField {
        json_pointer: "/payload".into(),
        content_ref: REF.into(),
        total_bytes: 70_000,
        sha256: SHA.into(),
    }
}

fn values() -> UiValues {
    [
        ("confirm".to_owned(), raw(json!(true))),
        ("pick".to_owned(), raw(json!(["a", "b"]))),
    ]
    .into_iter()
    .collect()
}

fn all_samples() -> Samples {
    let mut s = Samples::default();
    s.add(capability());
    s.add(requirement());
    s.add(SessionContext {
        session_id: "sess_1".into(),
        workspace_root: "/work/project".into(),
        generation: 4,
        epoch: Some("ep".into()),
    });
    s.add(HostCapabilities {
        content_refs: true,
        ui_host: UiHost::Headless,
        protocol_version: "2".into(),
        dependency_schema_version: Some(1),
    });
    let manifest = ManifestExpectation {
        intercepts: vec!["tool.before".into()],
        replaces: vec!["tool:grep".into()],
        providers: vec!["acme/llm".into()],
        ui_actions: vec!["refresh".into()],
        capabilities: vec!["interceptors".into(), "tools".into()],
        requires: vec![requirement()],
        provides: vec![capability()],
        tools: vec!["grep".into()],
    };
    s.add(manifest.clone());
    s.add(InitializeParams {
        protocol_version: "2".into(),
        protocol_id: reasonix_protocol::PROTOCOL_ID.into(),
        manifest,
        session: SessionContext {
            session_id: "sess_1".into(),
            workspace_root: "/w".into(),
            generation: 0,
            epoch: None,
        },
        capabilities: HostCapabilities {
            content_refs: true,
            ui_host: UiHost::Tui,
            protocol_version: "2".into(),
            dependency_schema_version: None,
        },
        dependency_schema_version: Some(1),
    });
    s.add(UIActionDecl {
        action_id: "refresh".into(),
        label: Some("Refresh".into()),
    });
    s.add(InitializeResult {
        protocol_version: "2".into(),
        name: "acme".into(),
        version: "1.0.0".into(),
        component_id: Some("acme/main".into()),
        subscriptions: vec!["tool.before".into()],
        replaces: vec!["tool:grep".into()],
        providers: vec![descriptor()],
        ui_actions: vec![UIActionDecl {
            action_id: "refresh".into(),
            label: None,
        }],
        requires: vec![requirement()],
        provides: vec![capability()],
        state_schema_version: 0,
        tools: vec!["grep".into()],
    });
    s.add(InitializedParams {});
    s.add(ShutdownParams {
        timeout_millis: 5000,
    });
    s.add(ShutdownResult { accepted: true });
    s.add(ResourcesChangedParams {
        paths: vec!["skills/a.md".into()],
    });
    s.add(externalized());
    s.add(InterceptParams {
        event: HookPoint::ToolBefore,
        seq: 1,
        payload: raw(Value::Null),
        timeout_millis: 5000,
        externalized: vec![externalized()],
    });
    s.add(InterceptResult {
        decision: Decision::Replace,
        reason: Some("rewritten".into()),
        replacement: Some(raw(json!({"name": "grep", "arguments": "{}"}))),
        externalized: vec![],
    });
    s.add(EventParams {
        event: HookPoint::SessionStart,
        payload: raw(json!({"sessionPath": "/s", "phase": "start"})),
        externalized: vec![],
    });
    s.add(ProviderCatalogParams {});
    s.add(ProviderCatalogResult {
        providers: vec![descriptor()],
    });
    s.add(descriptor());
    s.add(chunk());
    s.add(ProviderError {
        code: ProviderErrorCode::ProviderInterrupted,
        message: "gone".into(),
    });
    s.add(message());
    s.add(request());
    s.add(ProviderResponseFormat {
        format_type: "text".into(),
    });
    s.add(tool_call());
    s.add(tool_schema());
    s.add(usage());
    s.add(StreamOpenParams {
        stream_id: "es_0123456789abcdef01234567".into(),
        provider_ref: "plugin/acme/llm/big".into(),
        model: Some("big".into()),
        effort: Some("low".into()),
        request: request(),
        seq_base: 1,
        generation: Some(2),
        epoch: Some("ep".into()),
    });
    s.add(StreamOpenResult { accepted: true });
    s.add(StreamCancelParams {
        stream_id: "es_1".into(),
    });
    s.add(StreamCancelResult { cancelled: false });
    s.add(StreamChunkParams {
        stream_id: "es_1".into(),
        seq: 1,
        chunk: ProviderChunk {
            text: Some("hi".into()),
            ..ProviderChunk::of_type(ChunkType::Text)
        },
        generation: Some(2),
        epoch: Some("ep".into()),
    });
    s.add(StreamEndParams {
        stream_id: "es_1".into(),
        last_seq: 0,
        error: Some("boom".into()),
        interrupted: Some(true),
    });
    s.add(UIActionParams {
        action_id: "refresh".into(),
        session_id: "sess_1".into(),
        generation: 1,
        args: [("k".to_owned(), "v".to_owned())].into_iter().collect(),
    });
    s.add(UIActionResult {
        accepted: false,
        message: Some("busy".into()),
    });
    s.add(UISubmitParams {
        surface_id: "form-1".into(),
        session_id: "sess_1".into(),
        generation: 1,
        values: values(),
    });
    s.add(UISubmitResult { accepted: true });
    s.add(UIPublishParams {
        surface_id: "panel-1".into(),
        session_id: "sess_1".into(),
        generation: 1,
        kind: UISurfaceKind::Panel,
        payload: raw(json!({"title": "t"})),
    });
    s.add(UIPublishResult { accepted: true });
    s.add(UIRequestParams {
        surface_id: "ask-1".into(),
        session_id: "sess_1".into(),
        generation: 1,
        kind: UIRequestKind::Multiselect,
        payload: raw(json!({"fields": [{"key": "value", "kind": "multiselect"}]})),
    });
    s.add(UIRequestResult {
        cancelled: false,
        values: values(),
    });
    s.add(ContentReadParams {
        content_ref: REF.into(),
        offset: 262_144,
    });
    s.add(ContentReadResult {
        content_ref: REF.into(),
        offset: 0,
        data_base64: "aGVsbG8=".into(),
        next_offset: Some(5),
        total_bytes: 10,
        sha256: SHA.into(),
        encoding: ContentEncoding::Utf8,
    });
    s.add(ToolCallParams {
        name: "grep".into(),
        arguments: raw(Value::Null),
        timeout_millis: 300_000,
    });
    s.add(ToolCallResult {
        content: "3 matches".into(),
        is_error: Some(false),
    });
    s
}

#[test]
fn every_schema_def_has_a_rust_type_and_a_sample() {
    let schema = schema();
    let in_schema: BTreeSet<&str> = schema["$defs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let in_rust: BTreeSet<&str> = SCHEMA_DEF_NAMES.iter().copied().collect();
    let missing: Vec<_> = in_schema.difference(&in_rust).collect();
    let extra: Vec<_> = in_rust.difference(&in_schema).collect();
    assert!(missing.is_empty(), "$defs without a Rust type: {missing:?}");
    assert!(
        extra.is_empty(),
        "Rust types without a $defs entry: {extra:?}"
    );
    let sampled: BTreeSet<&str> = all_samples().0.keys().copied().collect();
    assert_eq!(sampled, in_schema, "every $defs entry needs a sample");
}

#[test]
fn every_sample_validates_against_its_schema_def_and_round_trips() {
    let schema = schema();
    for (def, sample) in all_samples().0 {
        let errors = schema_errors(&schema, def, &sample.value);
        assert!(errors.is_empty(), "{def} {}: {errors:?}", sample.value);
        let text = serde_json::to_string(&sample.value).unwrap();
        let back = (sample.decode)(&text).unwrap_or_else(|e| panic!("{def} {text}: {e}"));
        assert_eq!(back, sample.value, "{def} does not round-trip");
    }
}

#[test]
fn every_chunk_type_and_enum_value_is_in_the_schema() {
    let schema = schema();
    let chunks = [
        ProviderChunk {
            text: Some("t".into()),
            ..ProviderChunk::of_type(ChunkType::Text)
        },
        ProviderChunk {
            text: Some("t".into()),
            signature: Some("s".into()),
            ..ProviderChunk::of_type(ChunkType::Reasoning)
        },
        ProviderChunk {
            tool_call: Some(tool_call()),
            ..ProviderChunk::of_type(ChunkType::ToolCallStart)
        },
        ProviderChunk {
            text: Some("{".into()),
            arg_chars: Some(1),
            ..ProviderChunk::of_type(ChunkType::ToolCallArgsDelta)
        },
        ProviderChunk {
            tool_call: Some(tool_call()),
            ..ProviderChunk::of_type(ChunkType::ToolCall)
        },
        ProviderChunk {
            usage: Some(usage()),
            ..ProviderChunk::of_type(ChunkType::Usage)
        },
        ProviderChunk::of_type(ChunkType::Done),
        ProviderChunk {
            error: Some(ProviderError {
                code: ProviderErrorCode::ProviderFailed,
                message: "boom".into(),
            }),
            ..ProviderChunk::of_type(ChunkType::Error)
        },
    ];
    for c in chunks {
        let v = serde_json::to_value(&c).unwrap();
        assert!(
            schema_errors(&schema, "ProviderChunk", &v).is_empty(),
            "{v}"
        );
        decode_as::<ProviderChunk>(&v.to_string()).unwrap();
    }
    for point in HookPoint::ALL {
        let v = json!({"event": point, "payload": {}});
        assert!(schema_errors(&schema, "EventParams", &v).is_empty(), "{v}");
    }
    for d in [
        Decision::Continue,
        Decision::Block,
        Decision::Replace,
        Decision::Allow,
        Decision::Deny,
    ] {
        let v = json!({ "decision": d });
        assert!(
            schema_errors(&schema, "InterceptResult", &v).is_empty(),
            "{v}"
        );
    }
    for k in [
        UISurfaceKind::Card,
        UISurfaceKind::Form,
        UISurfaceKind::Notification,
        UISurfaceKind::Panel,
        UISurfaceKind::Status,
        UISurfaceKind::View,
    ] {
        let v = json!({"surfaceId": "s", "sessionId": "s", "generation": 0, "kind": k, "payload": null});
        assert!(
            schema_errors(&schema, "UIPublishParams", &v).is_empty(),
            "{v}"
        );
    }
    for h in [UiHost::Tui, UiHost::Desktop, UiHost::Acp, UiHost::Headless] {
        let v = json!({"contentRefs": false, "uiHost": h, "protocolVersion": "2"});
        assert!(
            schema_errors(&schema, "HostCapabilities", &v).is_empty(),
            "{v}"
        );
    }
}

#[test]
fn minimal_values_omit_every_optional_member_and_still_validate() {
    let schema = schema();
    let minimal: Vec<(&str, Value)> = vec![
        (
            "ManifestExpectation",
            serde_json::to_value(ManifestExpectation::default()).unwrap(),
        ),
        (
            "InterceptResult",
            serde_json::to_value(InterceptResult {
                decision: Decision::Continue,
                reason: None,
                replacement: None,
                externalized: vec![],
            })
            .unwrap(),
        ),
        (
            "ProviderDescriptor",
            serde_json::to_value(ProviderDescriptor {
                reference: "plugin/a/b/c".into(),
                ..Default::default()
            })
            .unwrap(),
        ),
        (
            "ProviderMessage",
            serde_json::to_value(ProviderMessage::default()).unwrap(),
        ),
    ];
    for (def, v) in minimal {
        assert!(schema_errors(&schema, def, &v).is_empty(), "{def} {v}");
        let required = schema["$defs"][def]["required"]
            .as_array()
            .map_or(0, Vec::len);
        assert_eq!(v.as_object().unwrap().len(), required, "{def} {v}");
    }
}

#[test]
fn method_table_matches_the_schema() {
    let schema = schema();
    let methods = schema["methods"].as_object().unwrap();
    let ours: BTreeSet<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    let theirs: BTreeSet<&str> = methods.keys().map(String::as_str).collect();
    assert_eq!(ours, theirs);
    let samples = all_samples();
    for m in Method::ALL {
        let entry = &methods[m.name()];
        assert_eq!(
            entry["params"]["$ref"],
            format!("#/$defs/{}", m.params_def()),
            "{m} params"
        );
        match m.result_def() {
            Some(def) => assert_eq!(entry["result"]["$ref"], format!("#/$defs/{def}"), "{m}"),
            None => assert!(entry["result"].is_null(), "{m} result"),
        }
        assert_eq!(entry["notification"], m.is_notification(), "{m}");
        assert_eq!(entry["class"], m.class().as_str(), "{m}");
        let direction = match (m.direction(), m.is_notification()) {
            (reasonix_protocol::Direction::HostToExtension, false) => "host_to_extension_request",
            (reasonix_protocol::Direction::HostToExtension, true) => {
                "host_to_extension_notification"
            }
            (reasonix_protocol::Direction::ExtensionToHost, false) => "extension_to_host_request",
            (reasonix_protocol::Direction::ExtensionToHost, true) => {
                "extension_to_host_notification"
            }
        };
        assert_eq!(entry["direction"], direction, "{m}");

        // The method's params sample passes the schema and our per-method
        // decoder; the result sample passes the schema.
        let params = &samples.0[m.params_def()].value;
        assert!(schema_errors(&schema, m.params_def(), params).is_empty());
        let raw_params = serde_json::value::to_raw_value(params).unwrap();
        m.decode_params(Some(&raw_params))
            .unwrap_or_else(|e| panic!("{m}: {e}"));
        if let Some(def) = m.result_def() {
            assert!(schema_errors(&schema, def, &samples.0[def].value).is_empty());
        }
    }
}

#[test]
fn error_table_and_limits_match_the_schema() {
    let schema = schema();
    let errors = schema["errors"].as_array().unwrap();
    assert_eq!(errors.len(), reasonix_protocol::ErrorReason::ALL.len());
    for e in errors {
        let reason = reasonix_protocol::ErrorReason::from_name(e["reason"].as_str().unwrap())
            .unwrap_or_else(|| panic!("reason {} missing", e["reason"]));
        assert_eq!(e["jsonRpcCode"], reason.code());
        assert_eq!(e["retryable"], reason.retryable());
        assert_eq!(e["message"], reason.message());
    }
    let limits = &schema["limits"];
    assert_eq!(limits["frameBytes"], reasonix_protocol::FRAME_BYTES);
    assert_eq!(
        limits["externalizeFieldBytes"],
        reasonix_protocol::EXTERNALIZE_FIELD_BYTES
    );
    assert_eq!(
        limits["contentRefChunkBytes"],
        reasonix_protocol::CONTENT_REF_CHUNK_BYTES
    );
    assert_eq!(
        limits["contentRefObjectBytes"],
        reasonix_protocol::CONTENT_REF_OBJECT_BYTES
    );
    assert_eq!(schema["protocolID"], reasonix_protocol::PROTOCOL_ID);
    assert_eq!(schema["protocolMajor"], reasonix_protocol::PROTOCOL_MAJOR);
    let points: Vec<&str> = schema["interceptEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = HookPoint::ALL.iter().map(|p| p.as_str()).collect();
    assert_eq!(points, ours);
}

/// One negative case: `text` must be rejected by our decoder for `def` and
/// by the schema's `$defs/def`.
struct Negative {
    what: &'static str,
    def: &'static str,
    text: &'static str,
}

const NEGATIVES: &[Negative] = &[
    Negative {
        what: "unknown field at the top",
        def: "ShutdownParams",
        text: r#"{"timeoutMillis":1,"timeoutMilis":2}"#,
    },
    Negative {
        what: "unknown field nested",
        def: "StreamChunkParams",
        text: r#"{"streamId":"s","seq":1,"chunk":{"type":"done","extra":1}}"#,
    },
    Negative {
        what: "unknown field in an empty params object",
        def: "InitializedParams",
        text: r#"{"ready":true}"#,
    },
    Negative {
        what: "camelCase name inside ProviderToolCall",
        def: "ProviderToolCall",
        text: r#"{"id":"a","name":"b","arguments":"{}","thoughtSignature":"x"}"#,
    },
    Negative {
        what: "missing required",
        def: "InitializeResult",
        text: r#"{"protocolVersion":"2","name":"n","version":"1"}"#,
    },
    Negative {
        what: "missing required any",
        def: "ToolCallParams",
        text: r#"{"name":"t","timeoutMillis":1}"#,
    },
    Negative {
        what: "missing required nested",
        def: "StreamOpenParams",
        text: r#"{"streamId":"s","providerRef":"p","seqBase":1,"request":{"messages":[],"maxTokens":1}}"#,
    },
    Negative {
        what: "required field null",
        def: "ShutdownResult",
        text: r#"{"accepted":null}"#,
    },
    Negative {
        what: "wrong enum value",
        def: "InterceptResult",
        text: r#"{"decision":"maybe"}"#,
    },
    Negative {
        what: "wrong hook point",
        def: "InterceptParams",
        text: r#"{"event":"tool.during","seq":1,"payload":{},"timeoutMillis":1}"#,
    },
    Negative {
        what: "generation-A publish kind is fine but an unknown kind is not",
        def: "UIPublishParams",
        text: r#"{"surfaceId":"s","sessionId":"s","generation":0,"kind":"banner","payload":{}}"#,
    },
    Negative {
        what: "wrong enum value nested",
        def: "StreamChunkParams",
        text: r#"{"streamId":"s","seq":1,"chunk":{"type":"error","error":{"code":"oops","message":"m"}}}"#,
    },
    Negative {
        what: "float where an integer is required",
        def: "InterceptParams",
        text: r#"{"event":"tool.before","seq":1.5,"payload":{},"timeoutMillis":1}"#,
    },
    Negative {
        what: "below minimum",
        def: "InterceptParams",
        text: r#"{"event":"tool.before","seq":0,"payload":{},"timeoutMillis":1}"#,
    },
    Negative {
        what: "negative where minimum is 0",
        def: "ContentReadParams",
        text: r#"{"contentRef":"c","offset":-1}"#,
    },
    Negative {
        what: "empty string where minLength is 1",
        def: "StreamCancelParams",
        text: r#"{"streamId":""}"#,
    },
    Negative {
        what: "array params",
        def: "ShutdownParams",
        text: r#"[5000]"#,
    },
    Negative {
        what: "array params of an empty params type",
        def: "ProviderCatalogParams",
        text: r#"[]"#,
    },
    Negative {
        what: "wrong type",
        def: "ResourcesChangedParams",
        text: r#"{"paths":"a"}"#,
    },
    Negative {
        what: "map value of the wrong type",
        def: "UIActionParams",
        text: r#"{"actionId":"a","sessionId":"s","generation":0,"args":{"k":1}}"#,
    },
];

fn decoder_for(def: &str) -> Check {
    *all_samples()
        .0
        .get(def)
        .map(|s| &s.decode)
        .unwrap_or_else(|| panic!("no decoder for {def}"))
}

#[test]
fn negative_set_is_rejected_by_both_decoder_and_schema() {
    let schema = schema();
    for case in NEGATIVES {
        let ours = decoder_for(case.def)(case.text);
        assert!(
            ours.is_err(),
            "{}: our decoder accepted {} as {}",
            case.what,
            case.text,
            case.def
        );
        let instance: Value = serde_json::from_str(case.text).unwrap();
        assert!(
            !schema_errors(&schema, case.def, &instance).is_empty(),
            "{}: the schema accepted {} as {}",
            case.what,
            case.text,
            case.def
        );
    }
}

/// Frame-level halves of "float id" and "array params": the envelope rules
/// reject them before any params decoding.
#[test]
fn negative_frames_are_rejected_by_the_envelope_rules() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1.0,"method":"extension/shutdown","params":{"timeoutMillis":1}}"#,
            "float id",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1e0,"method":"extension/shutdown","params":{"timeoutMillis":1}}"#,
            "exponent id",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"1","method":"extension/shutdown","params":{"timeoutMillis":1}}"#,
            "string id",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"extension/shutdown","params":[5000]}"#,
            "array params",
        ),
    ];
    for (line, what) in cases {
        let rejection = decode_frame(line.as_bytes()).expect_err(what);
        assert_eq!(rejection.kind, RejectionKind::InvalidRequest, "{what}");
    }
    // The same frame with an integer id and object params is accepted and
    // decodes strictly.
    let ok =
        r#"{"jsonrpc":"2.0","id":1,"method":"extension/shutdown","params":{"timeoutMillis":1}}"#;
    let Frame::Request(request) = decode_frame(ok.as_bytes()).unwrap() else {
        panic!("not a request");
    };
    Method::from_name(&request.method)
        .unwrap()
        .decode_params(Some(&request.params))
        .unwrap();
}
