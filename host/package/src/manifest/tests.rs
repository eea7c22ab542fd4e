use super::*;

fn parse(text: &str) -> Result<Manifest, ManifestError> {
    text.parse()
}

fn messages(text: &str) -> Vec<String> {
    parse(text)
        .unwrap_err()
        .issues
        .into_iter()
        .map(|i| i.message)
        .collect()
}

#[test]
fn minimal_manifest_parses() {
    let m = parse(r#"{"apiVersion":"reasonix.io/plugin/v2","name":" demo ","version":" 1.0.0 "}"#)
        .unwrap();
    assert_eq!(m.name, "demo");
    assert_eq!(m.version.as_deref(), Some("1.0.0"));
    assert!(m.runtime.is_none());
}

#[test]
fn every_error_is_reported_not_just_the_first() {
    let errs = messages(
        r#"{"apiVersion":"reasonix.io/plugin/v1","nam":"x","contributes":{"promts":[],"skills":[{"paht":"s"}]},
            "runtime":{"command":"","args":[""],"priority":5000}}"#,
    );
    let want = [
        "reasonix-plugin.json: unsupported apiVersion \"reasonix.io/plugin/v1\"",
        "reasonix-plugin.json: json: unknown field \"nam\"",
        "name is required",
        "contributes: json: unknown field \"promts\"",
        "contributes.skills[0]: json: unknown field \"paht\"",
        "runtime.command is required",
        "runtime.args[0] must not be empty",
        "runtime.priority 5000 out of range [-1000, 1000]",
    ];
    for w in want {
        assert!(
            errs.iter().any(|e| e.contains(w)),
            "missing {w:?} in {errs:#?}"
        );
    }
}

#[test]
fn issue_paths_name_the_field() {
    let err = parse(r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x","runtime":{"command":"./r","intrcepts":[]}}"#)
        .unwrap_err();
    assert_eq!(err.issues.len(), 1);
    assert_eq!(err.issues[0].path, "runtime.intrcepts");
    assert_eq!(
        err.issues[0].kind,
        IssueKind::UnknownField {
            field: "intrcepts".into()
        }
    );
}

#[test]
fn invalid_json_and_non_objects_are_errors() {
    for bad in ["", "{", "[]", "42", "null", "\"x\""] {
        let err = parse(bad).unwrap_err();
        assert!(
            err.has(&IssueKind::InvalidJson) || err.has(&IssueKind::NotAnObject),
            "{bad}: {err}"
        );
    }
}

#[test]
fn keys_match_case_insensitively_like_go() {
    let m = parse(
        r#"{"APIVERSION":"reasonix.io/plugin/v2","Name":"x","contributes":{"Hooks":{"SessionStart":[{"COMMAND":"./a","Args":[]}]}}}"#,
    );
    // apiVersion is read by its exact name first; a folded spelling still counts.
    let m = m.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.name, "x");
    assert_eq!(m.hooks["SessionStart"][0].args, Some(vec![]));
}

#[test]
fn document_round_trips() {
    let text = r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x","skills":"a",
        "hooks":{"SessionStart":[{"command":"./h","args":[]},{"command":"echo hi","shell":"BASH"}]},
        "contributes":{"skills":["b"],"themes":["themes/*/theme.json"],"mcpServers":{"m":{"url":"https://x.invalid"}}},
        "provides":[{"namespace":"plugin/x","kind":"tool","id":"t","version":"1.0.0","schemaHash":"sha256:1"}],
        "runtime":{"command":"${REASONIX_PLUGIN_ROOT}/bin/x","capabilities":["tools"],"timeoutMillis":90000,
          "tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}}"#;
    let m = parse(text).unwrap();
    let again = Manifest::from_value(&m.to_document()).unwrap();
    assert_eq!(m, again);
    assert_eq!(m.hooks["SessionStart"][0].args, Some(vec![]));
    assert!(m.hooks["SessionStart"][1].shell_command);
    assert_eq!(m.hooks["SessionStart"][1].shell.as_deref(), Some("bash"));
    assert_eq!(m.runtime.unwrap().timeout_millis(), Some(60_000));
}

#[test]
fn plugin_name_rule() {
    for ok in ["a", "A1", "my-plugin", "x.y_z", &"a".repeat(64)] {
        assert!(valid_plugin_name(ok), "{ok}");
    }
    for bad in ["", "-a", ".a", "a b", "a/b", &"a".repeat(65), "é"] {
        assert!(!valid_plugin_name(bad), "{bad}");
    }
}

#[test]
fn a_wasm_runtime_may_set_its_sandbox_memory() {
    let m = parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x",
            "runtime":{"command":"${REASONIX_PLUGIN_ROOT}/ext.WASM","sandbox":{"memoryMiB":128}}}"#,
    )
    .unwrap();
    let runtime = m.runtime.unwrap();
    assert!(runtime.is_wasm());
    assert_eq!(
        runtime.sandbox,
        Some(SandboxSpec {
            memory_mib: Some(128),
            data_mib: None,
        })
    );
    let m = parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x",
            "runtime":{"command":"${REASONIX_PLUGIN_ROOT}/ext.wasm","sandbox":{}}}"#,
    )
    .unwrap();
    assert_eq!(m.runtime.unwrap().sandbox, Some(SandboxSpec::default()));
}

#[test]
fn sandbox_memory_must_stay_within_the_host_ceiling() {
    for (mib, ok) in [
        ("0", false),
        ("1", true),
        ("512", true),
        ("513", false),
        ("-4", false),
    ] {
        let text = format!(
            r#"{{"apiVersion":"reasonix.io/plugin/v2","name":"x",
                "runtime":{{"command":"/p/ext.wasm","sandbox":{{"memoryMiB":{mib}}}}}}}"#
        );
        match parse(&text) {
            Ok(_) => assert!(ok, "{mib} was accepted"),
            Err(err) => {
                assert!(!ok, "{mib} was refused: {err:?}");
                assert_eq!(err.issues[0].path, "runtime.sandbox.memoryMiB");
                assert!(err.issues[0].message.contains("[1, 512]"), "{err:?}");
            }
        }
    }
    let err = parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x",
            "runtime":{"command":"/p/ext.wasm","sandbox":{"memoryMiB":"lots"}}}"#,
    )
    .unwrap_err();
    assert_eq!(err.issues[0].path, "runtime.sandbox.memoryMiB");
}

#[test]
fn sandbox_data_quota_is_declared_within_the_host_ceiling() {
    let m = parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x",
            "runtime":{"command":"/p/ext.wasm","sandbox":{"dataMiB":2}}}"#,
    )
    .unwrap();
    assert_eq!(m.runtime.unwrap().sandbox.unwrap().data_mib, Some(2));
    for (mib, ok) in [("0", false), ("1", true), ("1024", true), ("1025", false)] {
        let text = format!(
            r#"{{"apiVersion":"reasonix.io/plugin/v2","name":"x",
                "runtime":{{"command":"/p/ext.wasm","sandbox":{{"dataMiB":{mib}}}}}}}"#
        );
        match parse(&text) {
            Ok(_) => assert!(ok, "{mib} was accepted"),
            Err(err) => {
                assert!(!ok, "{mib} was refused: {err:?}");
                assert_eq!(err.issues[0].path, "runtime.sandbox.dataMiB");
                assert!(err.issues[0].message.contains("[1, 1024]"), "{err:?}");
            }
        }
    }
}

#[test]
fn sandbox_is_only_for_wasm_runtimes_and_strict() {
    let err = parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x",
            "runtime":{"command":"/p/bin/sidecar","sandbox":{"memoryMiB":64}}}"#,
    )
    .unwrap_err();
    assert_eq!(err.issues[0].path, "runtime.sandbox");
    assert!(
        err.issues[0].message.contains("only to a wasm runtime"),
        "{err:?}"
    );
    let err = parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x",
            "runtime":{"command":"/p/ext.wasm","sandbox":{"memoryMib":64,"network":true}}}"#,
    )
    .unwrap_err();
    let paths: Vec<&str> = err.issues.iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"runtime.sandbox.network"), "{paths:?}");
    assert!(!parse(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"x","runtime":{"command":"/p/bin/sidecar"}}"#
    )
    .unwrap()
    .runtime
    .unwrap()
    .is_wasm());
}
