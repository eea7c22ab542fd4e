//! Drift test between the WIT package `reasonix:extension@2.0.0`
//! (`wit/since_v2.0.0/`) and the normative JSON schema
//! (`shared/spec/schema/extension-protocol-v2.json`, generation B).
//!
//! The checker (`drift::check`) returns every difference it finds, so the
//! unit tests below can mutate a copy of the WIT text (or of the schema) and
//! assert that each kind of drift is reported.
//!
//! Correspondence rules (documented in `docs/protocol.md`):
//! - Method → WIT function: drop the leading `extension/` or `host/` segment,
//!   then the segment equal to the method's `class` if more segments follow,
//!   and join the rest with `-` (`extension/provider/stream/open` →
//!   `stream-open`). The interface is the `class` for host→extension methods
//!   (exported by the world) and `host-<class>` for extension→host methods
//!   (imported). Requests return `result<R, extension-error>`, notifications
//!   return nothing; the single parameter is `params: <params-dto>`, or none
//!   when the params DTO has no properties.
//! - `$defs` name → WIT type name: PascalCase to kebab-case, acronyms kept
//!   together (`UIActionDecl` → `ui-action-decl`). Field names: camelCase and
//!   snake_case to kebab-case.
//! - Hook points and error reasons: `.` and `_` become `-`; the `Wire:` line
//!   of each case's doc comment names the wire string. Error cases carry
//!   their code, retryability and frozen message in their docs, limits their
//!   value on a `Value:` line.

use std::path::{Path, PathBuf};

use serde_json::Value;

#[path = "wit_drift/checker.rs"]
mod drift;
#[path = "wit_drift/reference.rs"]
mod reference;

fn wit_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("since_v2.0.0")
}

fn schema() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/schema/extension-protocol-v2.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn differences_of(dir: &Path, schema: &Value) -> Vec<String> {
    let (resolve, package) = drift::load(dir).unwrap_or_else(|e| panic!("WIT does not parse: {e}"));
    drift::check(&resolve, package, schema).0
}

#[test]
fn wit_package_parses_and_matches_the_schema() {
    let schema = schema();
    let (resolve, package) =
        drift::load(&wit_dir()).unwrap_or_else(|e| panic!("WIT does not parse: {e}"));
    let (differences, coverage) = drift::check(&resolve, package, &schema);
    assert!(
        differences.is_empty(),
        "WIT and schema differ:\n  {}",
        differences.join("\n  ")
    );
    // Generation B's counts: proves the comparison covered everything.
    let defs = schema["$defs"].as_object().unwrap();
    let fields: usize = defs
        .values()
        .map(|d| d["properties"].as_object().map_or(0, |p| p.len()))
        .sum();
    assert_eq!(
        coverage,
        drift::Coverage {
            methods: 17,
            hook_points: 17,
            error_reasons: 20,
            limits: 4,
            dtos: defs.len(),
            fields,
        }
    );
}

#[test]
fn package_folder_is_named_after_its_version() {
    let (resolve, package) = drift::load(&wit_dir()).unwrap();
    let version = resolve.packages[package].name.version.clone().unwrap();
    assert_eq!(
        wit_dir().file_name().unwrap().to_str().unwrap(),
        format!("since_v{version}")
    );
}

#[test]
fn naming_rules() {
    assert_eq!(drift::type_name("UIActionDecl"), "ui-action-decl");
    assert_eq!(drift::type_name("ProviderToolCall"), "provider-tool-call");
    assert_eq!(drift::type_name("ContentReadResult"), "content-read-result");
    assert_eq!(drift::kebab("dataBase64"), "data-base64");
    assert_eq!(drift::kebab("reasoning_content"), "reasoning-content");
    assert_eq!(drift::kebab("system_prompt.build"), "system-prompt-build");
    let location = |m, c, d| drift::wit_location(m, c, d).unwrap();
    assert_eq!(
        location(
            "extension/provider/stream/open",
            "provider",
            "host_to_extension_request"
        ),
        ("provider".into(), "stream-open".into())
    );
    assert_eq!(
        location(
            "extension/provider/stream/chunk",
            "provider",
            "extension_to_host_notification"
        ),
        ("host-provider".into(), "stream-chunk".into())
    );
    assert_eq!(
        location(
            "extension/intercept",
            "intercept",
            "host_to_extension_request"
        ),
        ("intercept".into(), "intercept".into())
    );
    assert_eq!(
        location("host/content/read", "content", "extension_to_host_request"),
        ("host-content".into(), "read".into())
    );
}

/// A copy of the WIT package with `from` replaced by `to` everywhere in
/// `file`, in a temp dir.
fn mutated_wit(file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let temp = tempfile::tempdir().unwrap();
    let mut applied = false;
    for entry in std::fs::read_dir(wit_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let mut text = std::fs::read_to_string(&path).unwrap();
        if name == file {
            assert!(text.contains(from), "{file} does not contain {from:?}");
            text = text.replace(from, to);
            applied = true;
        }
        std::fs::write(temp.path().join(&name), text).unwrap();
    }
    assert!(applied, "no file {file}");
    temp
}

fn assert_reported(differences: &[String], needle: &str) {
    assert!(
        differences.iter().any(|d| d.contains(needle)),
        "expected a difference mentioning {needle:?}, got:\n  {}",
        differences.join("\n  ")
    );
}

fn assert_wit_edit_reported(file: &str, from: &str, to: &str, needle: &str) {
    let dir = mutated_wit(file, from, to);
    assert_reported(&differences_of(dir.path(), &schema()), needle);
}

fn assert_schema_edit_reported(edit: impl FnOnce(&mut Value), needle: &str) {
    let mut schema = schema();
    edit(&mut schema);
    assert_reported(&differences_of(&wit_dir(), &schema), needle);
}

#[test]
fn dropped_hook_point_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "        tool-before,\n",
        "",
        "hook point `tool.before` is in the schema but not in WIT",
    );
}

#[test]
fn extra_hook_point_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "        frontend-event,\n",
        "        frontend-event,\n        /// Wire: `browser.open`\n        browser-open,\n",
        "hook point `browser-open` is in WIT enum `hook-point` but not in the schema",
    );
}

#[test]
fn wrong_hook_point_wire_name_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "Wire: `tool.after`",
        "Wire: `tool_after`",
        "documents wire name",
    );
}

#[test]
fn hook_point_missing_from_schema_is_reported() {
    assert_schema_edit_reported(
        |s| {
            s["interceptEvents"]
                .as_array_mut()
                .unwrap()
                .push("turn.end".into())
        },
        "hook point `turn.end` is in the schema but not in WIT",
    );
}

#[test]
fn dropped_error_reason_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "        stream-gap,\n",
        "",
        "error reason `stream_gap` is in the schema but not in WIT",
    );
}

#[test]
fn wrong_retryable_flag_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "`stream_gap`, code -32000, retryable true",
        "`stream_gap`, code -32000, retryable false",
        "error reason `stream_gap`: WIT docs say",
    );
}

#[test]
fn wrong_error_code_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "`internal`, code -32603",
        "`internal`, code -32000",
        "error reason `internal`: WIT docs say",
    );
}

#[test]
fn error_reason_only_in_wit_is_reported() {
    assert_schema_edit_reported(
        |s| {
            let errors = s["errors"].as_array_mut().unwrap();
            errors.retain(|e| e["reason"] != "schema_mismatch");
        },
        "error reason `schema-mismatch` is in WIT enum `error-reason` but not in the schema",
    );
}

#[test]
fn changed_limit_value_is_reported() {
    assert_wit_edit_reported(
        "types.wit",
        "Value: 262144",
        "Value: 262145",
        "limit `contentRefChunkBytes`: WIT documents Some(262145)",
    );
    assert_schema_edit_reported(
        |s| s["limits"]["frameBytes"] = 1.into(),
        "limit `frameBytes`: WIT documents Some(8388608)",
    );
}

#[test]
fn missing_or_extra_limit_is_reported() {
    assert_schema_edit_reported(
        |s| s["limits"]["lineBytes"] = 10.into(),
        "limit `lineBytes` is in the schema but not in WIT",
    );
    assert_wit_edit_reported(
        "types.wit",
        "        content-ref-object-bytes: u64,\n",
        "        content-ref-object-bytes: u64,\n        /// Value: 1\n        line-bytes: u64,\n",
        "limit `line-bytes` is in WIT record `limits` but not in the schema",
    );
}

#[test]
fn missing_function_is_reported() {
    assert_wit_edit_reported(
        "observation.wit",
        "    resources-changed: func(params: resources-changed-params);\n",
        "",
        "method `extension/resources/changed` is in the schema but WIT function `observation.resources-changed` is missing",
    );
}

#[test]
fn function_without_method_is_reported() {
    assert_wit_edit_reported(
        "tool.wit",
        "    call: func(",
        "    list-tools: func() -> list<string>;\n    call: func(",
        "WIT function `tool.list-tools` corresponds to no schema method",
    );
}

#[test]
fn method_without_function_is_reported() {
    assert_schema_edit_reported(
        |s| {
            s["methods"]["extension/tool/list"] = serde_json::json!({
                "class": "tool", "direction": "host_to_extension_request",
                "notification": false,
                "params": {"$ref": "#/$defs/ProviderCatalogParams"},
                "result": {"$ref": "#/$defs/ToolCallResult"}
            })
        },
        "method `extension/tool/list` is in the schema but WIT function `tool.list` is missing",
    );
}

#[test]
fn wrong_direction_is_reported() {
    assert_wit_edit_reported(
        "world.wit",
        "    import host-content;\n",
        "    export host-content;\n",
        "needs world `extension` to import interface `host-content`",
    );
}

#[test]
fn notification_with_a_result_is_reported() {
    assert_wit_edit_reported(
        "observation.wit",
        "    event: func(params: event-params);",
        "    event: func(params: event-params) -> bool;",
        "WIT function `observation.event` returns bool, method `extension/event` needs nothing",
    );
}

#[test]
fn wrong_params_type_is_reported() {
    assert_wit_edit_reported(
        "provider.wit",
        "stream-cancel: func(params: stream-cancel-params)",
        "stream-cancel: func(params: stream-open-params)",
        "takes params: stream-open-params",
    );
}

#[test]
fn required_field_made_optional_is_reported() {
    assert_wit_edit_reported(
        "intercept.wit",
        "        seq: u64,\n",
        "        seq: option<u64>,\n",
        "field `intercept-params.seq` is option<u64> in WIT, but `InterceptParams.seq` (required) needs u64",
    );
}

#[test]
fn optional_field_made_required_is_reported() {
    assert_wit_edit_reported(
        "host-content.wit",
        "next-offset: option<u64>,",
        "next-offset: u64,",
        "`ContentReadResult.nextOffset` (optional) needs option<u64>",
    );
}

#[test]
fn dropped_field_is_reported() {
    assert_wit_edit_reported(
        "provider-types.wit",
        "        thought-signature: option<string>,\n",
        "",
        "field `ProviderToolCall.thought_signature` is in the schema but WIT record `provider-tool-call` has no `thought-signature`",
    );
}

#[test]
fn extra_field_is_reported() {
    assert_wit_edit_reported(
        "tool.wit",
        "        is-error: option<bool>,\n",
        "        is-error: option<bool>,\n        duration-millis: option<u64>,\n",
        "field `tool-call-result.duration-millis` is in WIT but `ToolCallResult` has no such property",
    );
}

#[test]
fn field_type_drift_is_reported() {
    assert_wit_edit_reported(
        "intercept.wit",
        "        payload: json,\n",
        "        payload: string,\n",
        "field `intercept-params.payload` is string in WIT",
    );
    assert_wit_edit_reported(
        "provider-types.wit",
        "        max-tokens: u64,\n",
        "        max-tokens: s64,\n",
        "field `provider-request.max-tokens` is s64 in WIT",
    );
}

#[test]
fn enum_field_drift_is_reported() {
    assert_wit_edit_reported(
        "host-ui.wit",
        "        view,\n",
        "",
        "field `ui-publish-params.kind` is ui-publish-kind in WIT",
    );
}

#[test]
fn renamed_record_is_reported() {
    assert_wit_edit_reported(
        "provider.wit",
        "stream-cancel-result",
        "cancel-result",
        "$defs `StreamCancelResult` is in the schema but WIT record `stream-cancel-result` is missing",
    );
}

#[test]
fn record_without_def_is_reported() {
    assert_wit_edit_reported(
        "tool.wit",
        "    record tool-call-result {",
        "    record tool-progress {\n        done: bool,\n    }\n\n    record tool-call-result {",
        "WIT record `tool-progress` corresponds to no schema $defs entry",
    );
}

#[test]
fn def_added_to_schema_is_reported() {
    assert_schema_edit_reported(
        |s| {
            s["$defs"]["ToolListResult"] = serde_json::json!({
                "type": "object", "additionalProperties": false,
                "properties": {"names": {"type": "array", "items": {"type": "string"}}},
                "required": ["names"]
            })
        },
        "$defs `ToolListResult` is in the schema but WIT record `tool-list-result` is missing",
    );
}

#[test]
fn field_added_to_schema_is_reported() {
    assert_schema_edit_reported(
        |s| {
            s["$defs"]["ShutdownParams"]["properties"]["reason"] =
                serde_json::json!({"type": "string"})
        },
        "field `ShutdownParams.reason` is in the schema but WIT record `shutdown-params` has no `reason`",
    );
}

#[test]
fn package_major_drift_is_reported() {
    assert_schema_edit_reported(
        |s| s["protocolMajor"] = 3.into(),
        "does not have the schema's protocolMajor Some(3)",
    );
}

#[test]
fn reference_documents_every_wit_item() {
    let (resolve, package) = drift::load(&wit_dir()).unwrap();
    let differences = reference::differences(&resolve, package, &doc("wit-reference.md"));
    assert!(
        differences.is_empty(),
        "docs/wit-reference.md is out of date:\n  {}",
        differences.join("\n  ")
    );
}

#[test]
fn reference_drift_is_reported() {
    let (resolve, package) = drift::load(&wit_dir()).unwrap();
    let page = doc("wit-reference.md");
    let edits = [
        (
            "| `seq-base` |",
            "| `seq-basis` |",
            "has no row for `seq-base`",
        ),
        (
            "### func `stream-open`",
            "### func `stream-start`",
            "documents func `stream-start`, which WIT does not have",
        ),
        (
            "| export | `tool` |",
            "| export | `tools` |",
            "has a row for `tools`, which WIT does not have",
        ),
        (
            "## interface `log`",
            "## interface `logging`",
            "reference has no section for interface `log`",
        ),
    ];
    for (from, to, needle) in edits {
        assert!(page.contains(from), "reference lacks {from:?}");
        let differences = reference::differences(&resolve, package, &page.replacen(from, to, 1));
        assert_reported(&differences, needle);
    }
}

#[test]
fn protocol_doc_maps_every_method() {
    let schema = schema();
    let text = doc("protocol.md");
    for (method, spec) in schema["methods"].as_object().unwrap() {
        let (interface, function) = drift::wit_location(
            method,
            spec["class"].as_str().unwrap(),
            spec["direction"].as_str().unwrap(),
        )
        .unwrap();
        let row = format!("| `{method}` |");
        let target = format!("`{interface}.{function}`");
        assert!(
            text.lines()
                .any(|l| l.starts_with(&row) && l.contains(&target)),
            "docs/protocol.md has no table row mapping `{method}` to {target}"
        );
    }
}

/// A (dummy) core module for the world, wrapped as a component: proves the
/// world is a valid component-model world and that a component built
/// against it names the package version in every interface it imports and
/// exports, which is how a host learns the version before instantiating.
#[test]
fn a_component_built_against_the_world_names_the_package_version() {
    use wit_component::{ComponentEncoder, DecodedWasm, StringEncoding};
    use wit_parser::{ManglingAndAbi, WorldItem};

    let (resolve, package) = drift::load(&wit_dir()).unwrap();
    let world = resolve
        .select_world(&[package], Some(drift::WORLD))
        .unwrap();
    let mut module = wit_component::dummy_module(&resolve, world, ManglingAndAbi::Standard32);
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        StringEncoding::UTF8,
        false,
    )
    .unwrap();
    let component = ComponentEncoder::default()
        .validate(true)
        .module(&module)
        .unwrap()
        .encode()
        .unwrap();

    let interface_names = |resolve: &wit_parser::Resolve,
                           items: &mut dyn Iterator<Item = &WorldItem>| {
        items
            .filter_map(|item| match item {
                WorldItem::Interface { id, .. } => resolve.id_of(*id),
                _ => None,
            })
            .collect::<std::collections::BTreeSet<String>>()
    };
    let DecodedWasm::Component(decoded, decoded_world) = wit_component::decode(&component).unwrap()
    else {
        panic!("the encoder did not produce a component");
    };
    let decoded_world = &decoded.worlds[decoded_world];
    let source_world = &resolve.worlds[world];
    let imports = interface_names(&decoded, &mut decoded_world.imports.values());
    let exports = interface_names(&decoded, &mut decoded_world.exports.values());
    assert_eq!(
        imports,
        interface_names(&resolve, &mut source_world.imports.values())
    );
    assert_eq!(
        exports,
        interface_names(&resolve, &mut source_world.exports.values())
    );
    for name in imports.iter().chain(&exports) {
        assert!(
            name.starts_with("reasonix:extension/") && name.ends_with("@2.0.0"),
            "{name}"
        );
    }
    assert!(exports.contains("reasonix:extension/lifecycle@2.0.0"));
    assert!(imports.contains("reasonix:extension/host-provider@2.0.0"));
}

/// The replacement slots and hook points are not in the schema; their wire
/// strings in the WIT docs must be exactly what the wire crate parses.
#[test]
fn slot_and_point_wire_names_match_the_wire_crate() {
    use reasonix_protocol::{HookPoint, Slot};
    use wit_parser::TypeDefKind;

    let (resolve, package) = drift::load(&wit_dir()).unwrap();
    let types = resolve.packages[package].interfaces["types"];
    let typedef = |name: &str| &resolve.types[resolve.interfaces[types].types[name]];
    let wire = |docs: &wit_parser::Docs| {
        let text = docs.contents.clone().unwrap_or_default();
        let rest = &text[text.find("Wire: `").expect("a Wire: line") + 7..];
        rest[..rest.find('`').unwrap()].to_string()
    };

    let TypeDefKind::Variant(slots) = &typedef("replacement-slot").kind else {
        panic!("replacement-slot is not a variant");
    };
    let mut named = Vec::new();
    for case in &slots.cases {
        let wire = wire(&case.docs);
        match (&case.ty, case.name.as_str()) {
            (None, _) => {
                let slot = Slot::parse(&wire).unwrap_or_else(|e| panic!("{}: {e}", case.name));
                assert_eq!(drift::kebab(&slot.to_wire()), case.name);
                named.push(slot);
            }
            (Some(_), "tool") => assert_eq!(wire, "tool:<name>"),
            (Some(_), "provider") => assert_eq!(wire, "provider:<ref>"),
            (Some(_), other) => panic!("unexpected parameterised slot {other}"),
        }
    }
    assert_eq!(named, Slot::NAMED.to_vec());
    assert!(Slot::parse("tool:grep").is_ok() && Slot::parse("provider:a/b").is_ok());

    let TypeDefKind::Enum(points) = &typedef("hook-point").kind else {
        panic!("hook-point is not an enum");
    };
    let documented: Vec<HookPoint> = points
        .cases
        .iter()
        .map(|case| HookPoint::from_name(&wire(&case.docs)).expect(&case.name))
        .collect();
    let mut all = HookPoint::ALL.to_vec();
    let mut sorted = documented.clone();
    all.sort_by_key(|p| p.as_str());
    sorted.sort_by_key(|p| p.as_str());
    assert_eq!(sorted, all);
}

/// Every interface, type, field, case, function and world has a doc comment.
#[test]
fn every_wit_item_is_documented() {
    use wit_parser::{Docs, Type, TypeDefKind};

    let (resolve, package) = drift::load(&wit_dir()).unwrap();
    let mut undocumented = Vec::new();
    let mut require = |docs: &Docs, what: String| {
        if docs.contents.as_deref().is_none_or(|d| d.trim().is_empty()) {
            undocumented.push(what);
        }
    };
    let pkg = &resolve.packages[package];
    for (name, &id) in &pkg.worlds {
        require(&resolve.worlds[id].docs, format!("world {name}"));
    }
    for (name, &id) in &pkg.interfaces {
        let interface = &resolve.interfaces[id];
        require(&interface.docs, format!("interface {name}"));
        for (function, f) in &interface.functions {
            require(&f.docs, format!("{name}.{function}"));
        }
        for (type_name, &type_id) in &interface.types {
            let def = &resolve.types[type_id];
            let path = format!("{name}.{type_name}");
            match &def.kind {
                TypeDefKind::Type(Type::Id(_)) => continue, // a `use`
                TypeDefKind::Record(r) => {
                    for field in &r.fields {
                        require(&field.docs, format!("{path}.{}", field.name));
                    }
                }
                TypeDefKind::Enum(e) => {
                    for case in &e.cases {
                        require(&case.docs, format!("{path}.{}", case.name));
                    }
                }
                TypeDefKind::Variant(v) => {
                    for case in &v.cases {
                        require(&case.docs, format!("{path}.{}", case.name));
                    }
                }
                _ => {}
            }
            require(&def.docs, path);
        }
    }
    assert!(
        undocumented.is_empty(),
        "WIT items without a doc comment: {undocumented:?}"
    );
}

#[test]
fn typed_string_list_without_string_array_is_reported() {
    assert_schema_edit_reported(
        |s| {
            s["$defs"]["InitializeResult"]["properties"]["subscriptions"] =
                serde_json::json!({"type": "array", "items": {"type": "integer"}})
        },
        "field `InitializeResult.subscriptions` is no longer string[] in the schema",
    );
}

#[test]
fn record_for_empty_params_is_reported() {
    assert_wit_edit_reported(
        "lifecycle.wit",
        "    initialized: func();",
        "    record initialized-params {\n        /// x\n        nothing: bool,\n    }\n\n    initialized: func(params: initialized-params);",
        "$defs `InitializedParams` has no properties, so WIT must not define `initialized-params`",
    );
}

#[test]
fn protocol_id_drift_is_reported() {
    assert_schema_edit_reported(
        |s| s["protocolID"] = "reasonix.extension.v3".into(),
        "docs do not name protocolID `reasonix.extension.v3`",
    );
}

#[test]
fn method_outside_the_naming_rule_is_reported() {
    assert_schema_edit_reported(
        |s| {
            s["methods"]["rpc/ping"] = serde_json::json!({
                "class": "lifecycle", "direction": "host_to_extension_request",
                "notification": false,
                "params": {"$ref": "#/$defs/ShutdownParams"},
                "result": {"$ref": "#/$defs/ShutdownResult"}
            })
        },
        "method `rpc/ping` has no WIT name under the naming rule",
    );
}
