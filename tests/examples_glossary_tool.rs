//! examples/glossary-tool end to end: the model's call to
//! `ext__glossary-tool__lookup` goes through the host's permission check
//! to the sidecar, and both a hit and a tool error reach the transcript.

#[path = "examples_support.rs"]
mod support;

use support::{Kind, install};

#[test]
fn the_tool_answers_through_a_turn() {
    let glossary = install("glossary-tool", Kind::Native);
    let doctor = glossary.run(&["plugin", "doctor", "glossary-tool"]);
    assert!(doctor.status.success(), "{}", support::text(&doctor.stdout));

    let hit = glossary.turn_json(&[
        "--input",
        "what is a slot?",
        "--call",
        r#"ext__glossary-tool__lookup={"term":"slot"}"#,
    ]);
    let call = &hit["toolCalls"][0];
    assert_eq!(call["name"], "ext__glossary-tool__lookup");
    assert_eq!(call["kind"], "extension");
    assert_eq!(call["decision"], "allow");
    assert!(
        call["result"]
            .as_str()
            .unwrap()
            .starts_with("slot: a host strategy"),
        "{call}"
    );
    assert_ne!(call["isError"], true, "{call}");

    let miss = glossary.turn_json(&[
        "--input",
        "what is a daemon?",
        "--call",
        r#"ext__glossary-tool__lookup={"term":"daemon"}"#,
    ]);
    let call = &miss["toolCalls"][0];
    assert_eq!(call["isError"], true, "{call}");
    assert!(
        call["result"]
            .as_str()
            .unwrap()
            .contains("known terms: component")
    );
    assert_eq!(miss["transcript"][2]["role"], "tool");
}

#[test]
fn a_denied_call_never_reaches_the_tool() {
    let glossary = install("glossary-tool", Kind::Native);
    let report = glossary.turn_json(&[
        "--input",
        "look it up",
        "--call",
        r#"ext__glossary-tool__lookup={"term":"slot"}"#,
        "--deny",
        "ext__glossary-tool__lookup",
    ]);
    let call = &report["toolCalls"][0];
    assert_eq!(call["decision"], "deny", "{call}");
    assert!(
        !call["result"]
            .as_str()
            .unwrap_or("")
            .contains("host strategy"),
        "{call}"
    );
}
