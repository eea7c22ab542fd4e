//! Black-box conformance of interception (EXTENSION_PROTOCOL_V2.md §5, §6,
//! §8, §12, §13): decisions, strict replacement DTOs, timeouts, crashes,
//! oversize frames, content references and redaction, with the independent
//! Python sidecar `tests/outside/sidecar.py`.

mod outside_common;

use outside_common::{Outside, Run};
use serde_json::{Value, json};

/// One turn against a required plugin in `mode`; returns the run and home.
fn required(mode: &str, input: &str) -> (Outside, Run) {
    let o = Outside::new();
    let root = o.package(
        "probe",
        mode,
        json!({"required": true, "timeoutMillis": 1000}),
        json!({}),
    );
    o.install(&root);
    let run = o.turn(&["--input", input, "--json"]);
    o.assert_no_leftovers();
    (o, run)
}

fn failed_at_input(run: &Run) -> String {
    assert_eq!(run.code, 1, "{}", run.all());
    let report = run.json();
    let point = report["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["point"] == "input.receive")
        .cloned()
        .unwrap_or(Value::Null);
    assert_ne!(report["status"]["status"], "completed", "{}", run.all());
    // The input never reaches the model.
    assert!(
        !report["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant"),
        "{}",
        run.all()
    );
    format!("{point} {}", report["status"])
}

#[test]
fn allow_outside_permission_decision_is_a_violation() {
    let (_o, run) = required("allow_input", "hi");
    let text = failed_at_input(&run);
    assert!(text.contains("permission.decision"), "{text}");
}

#[test]
fn replacement_with_an_unknown_field_is_rejected_by_the_strict_dto() {
    let (_o, run) = required("bad_replacement", "hi");
    let text = failed_at_input(&run);
    assert!(text.contains("unexpected"), "{text}");
}

#[test]
fn replacement_emptying_the_input_is_rejected() {
    let (_o, run) = required("empty_replacement", "hi");
    let text = failed_at_input(&run);
    assert!(text.contains("text"), "{text}");
}

#[test]
fn unknown_field_in_an_intercept_result_is_rejected() {
    let (_o, run) = required("extra_answer_field", "hi");
    let text = failed_at_input(&run);
    assert!(text.contains("surplus"), "{text}");
}

#[test]
fn a_hanging_interceptor_times_out_with_the_manifest_budget() {
    let (o, run) = required("hang", "hi");
    let text = failed_at_input(&run);
    // The dispatcher's clock and the transport's share the budget; either
    // may answer first, both say so with the reason code.
    assert!(text.contains("timed out"), "{text}");
    assert!(text.contains("[intercept_timeout]"), "{text}");
    let intercept = &o.received_method("extension/intercept")[0];
    assert_eq!(intercept["params"]["timeoutMillis"], 1000);
}

#[test]
fn a_sidecar_exiting_mid_intercept_fails_a_required_plugin() {
    let (_o, run) = required("exit_mid", "hi");
    failed_at_input(&run);
}

#[test]
fn an_optional_plugin_that_fails_is_skipped_with_a_warning() {
    let o = Outside::new();
    let root = o.package("optional", "exit_mid", json!({}), json!({}));
    o.install(&root);
    let run = o.turn(&["--input", "hi", "--json"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let report = run.json();
    assert_eq!(report["status"]["status"], "completed", "{}", run.all());
    assert_eq!(report["transcript"][0]["content"], "hi");
    assert!(
        report["warnings"].to_string().contains("optional"),
        "{}",
        run.all()
    );
    o.assert_no_leftovers();
}

#[test]
fn an_inbound_frame_over_8_mib_is_fatal_to_the_connection() {
    let o = Outside::new();
    let root = o.package("huge", "huge_line", json!({}), json!({}));
    o.install(&root);
    let run = o.turn(&["--input", "hi", "--json"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let report = run.json();
    assert!(
        report["warnings"].to_string().contains("8388608"),
        "{}",
        run.all()
    );
    // Whether an intercept went out before the host read up to the limit
    // is a race (the sidecar answers it once its own write returns); after
    // the frame nothing of the sidecar is read, so no step of it succeeds.
    for point in report["points"].as_array().unwrap() {
        for step in point["steps"].as_array().into_iter().flatten() {
            if step["plugin"] == "huge" {
                assert!(
                    ["failed", "skipped"].contains(&step["result"].as_str().unwrap_or("")),
                    "{step}\n{}",
                    run.all()
                );
            }
        }
    }
    o.assert_no_leftovers();
}

#[test]
fn a_payload_over_64_kib_travels_as_a_content_reference() {
    let input = "y".repeat(70_000);
    let (o, run) = required("content_ref", &input);
    assert_eq!(run.code, 0, "{}", run.all());
    let intercept = &o.received_method("extension/intercept")[0]["params"];
    assert_eq!(intercept["payload"], Value::Null, "{intercept}");
    let desc = &intercept["externalized"][0];
    assert_eq!(intercept["externalized"].as_array().unwrap().len(), 1);
    assert_eq!(desc["jsonPointer"], "/payload");
    let content_ref = desc["contentRef"].as_str().unwrap();
    let hex = content_ref
        .strip_prefix("content_")
        .expect("content_ prefix");
    assert!(
        hex.len() == 24 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        "{desc}"
    );
    let inline = serde_json::to_string(&json!({"text": input})).unwrap();
    assert_eq!(desc["totalBytes"], inline.len());
    let record = o.log().into_iter().find(|r| r["kind"] == "ref").unwrap();
    assert_eq!(record["length"], inline.len());
    assert_eq!(record["sha"], desc["sha256"]);
    let last = &record["last"];
    assert_eq!(last["encoding"], "utf8");
    assert_eq!(last["contentRef"], content_ref);
    assert!(last.get("nextOffset").is_none(), "{last}");
    let report = run.json();
    assert_eq!(
        report["transcript"][0]["content"],
        format!(
            "outside saw {} bytes sha {}",
            inline.len(),
            record["sha"].as_str().unwrap()
        )
    );
}

#[test]
fn a_payload_under_the_threshold_stays_inline() {
    let input = "z".repeat(60_000);
    let (o, run) = required("good", &input);
    assert_eq!(run.code, 0, "{}", run.all());
    let intercept = &o.received_method("extension/intercept")[0]["params"];
    assert_eq!(intercept["payload"]["text"], input.as_str());
    assert!(intercept.get("externalized").is_none());
}

#[test]
fn credentials_in_block_reasons_are_redacted() {
    let (_o, run) = required("block_secret", "hi");
    let all = run.all();
    assert!(all.contains("blocked with token"), "{all}");
    assert!(!all.contains("sk-outsideSECRET"), "{all}");
    assert!(!all.contains("ghp_abcdefghij"), "{all}");
    assert_eq!(run.json()["status"]["status"], "blocked", "{all}");
}

#[test]
fn credentials_in_the_stderr_tail_of_a_failed_start_are_redacted() {
    let (_o, run) = required("stderr_secret,extra_fields", "hi");
    assert_eq!(run.code, 1, "{}", run.all());
    let all = run.all();
    assert!(all.contains("Authorization: Bearer"), "{all}");
    assert!(!all.contains("sk-outsideSTDERR"), "{all}");
}

#[test]
fn a_grandchild_and_an_ignored_shutdown_leave_no_process_behind() {
    let o = Outside::new();
    let root = o.package("wedged", "grandchild,ignore_shutdown", json!({}), json!({}));
    o.install(&root);
    let run = o.turn(&["--input", "hi", "--json"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(!o.pids("grandchild").is_empty(), "{:?}", o.log());
    assert_eq!(o.received_method("extension/shutdown").len(), 1);
    o.assert_no_leftovers();
}

/// A daemon (fork, setsid, fork) started while the sidecar initializes or
/// while it answers an intercept has left the process group and the
/// session; it still does not outlive the turn.
#[test]
fn setsid_daemons_do_not_outlive_the_turn() {
    for mode in ["daemon_init", "daemon_intercept"] {
        let o = Outside::new();
        let root = o.package("daemon", mode, json!({}), json!({}));
        o.install(&root);
        let run = o.turn(&["--input", "hi", "--json"]);
        assert_eq!(run.code, 0, "{mode}: {}", run.all());
        assert!(!o.pids("grandchild").is_empty(), "{mode}: {:?}", o.log());
        o.assert_no_leftovers();
    }
}

#[test]
fn a_ui_publish_for_a_stale_generation_is_dropped() {
    let o = Outside::new();
    let root = o.package("staleui", "stale_ui", json!({}), json!({}));
    o.install(&root);
    let run = o.turn(&["--input", "hi", "--json"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let answer = o.log().into_iter().find(|r| r["kind"] == "answer").unwrap();
    assert_eq!(
        answer["msg"]["result"],
        json!({"accepted": false}),
        "{answer}"
    );
    o.assert_no_leftovers();
}

#[test]
fn reading_an_unknown_content_ref_answers_the_frozen_content_ref_expired_error() {
    let o = Outside::new();
    let root = o.package("badref", "bad_ref", json!({}), json!({}));
    o.install(&root);
    let run = o.turn(&["--input", "hi", "--json"]);
    assert_eq!(run.code, 0, "{}", run.all());
    // The shared spec sits beside the workspace root (`../shared`).
    let schema_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/spec/schema/extension-protocol-v2.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("schema")).unwrap();
    let frozen = schema["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["reason"] == "content_ref_expired")
        .unwrap()
        .clone();
    let answer = o.log().into_iter().find(|r| r["kind"] == "answer").unwrap();
    let err = &answer["msg"]["error"];
    assert_eq!(err["code"], frozen["jsonRpcCode"], "{answer}");
    assert_eq!(err["message"], frozen["message"], "{answer}");
    assert_eq!(
        err["data"],
        json!({"reason": "content_ref_expired", "retryable": true})
    );
    o.assert_no_leftovers();
}
