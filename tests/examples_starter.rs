//! examples/starter end to end: built, installed with `plugin install
//! --link --yes` into a temp home, checked with `plugin doctor`, driven by
//! `dev turn` (text and JSON) and `dev reload`.

#[path = "examples_support.rs"]
mod support;

use support::{Kind, install, steps, text};

#[test]
fn doctor_then_a_turn_shows_the_rewrite() {
    let starter = install("starter", Kind::Native);
    let doctor = starter.run(&["plugin", "doctor", "starter"]);
    let out = text(&doctor.stdout);
    assert!(doctor.status.success(), "{out}{}", text(&doctor.stderr));
    assert!(out.contains("intercepts: input.receive"), "{out}");
    assert!(out.contains("ok: starter"), "{out}");

    let report = starter.turn_json(&["--input", "hello world"]);
    assert_eq!(
        steps(&report, "input.receive"),
        &serde_json::json!([{"plugin": "starter", "role": "chain", "result": "replaced"}])
    );
    assert_eq!(report["transcript"][0]["content"], "[starter] hello world");
    assert_eq!(
        report["transcript"][1]["content"],
        "echo: [starter] hello world"
    );
    assert_eq!(report["runtimes"][0]["plugin"], "starter");
    assert_eq!(report["degraded"], serde_json::json!([]));
    assert_eq!(report["status"]["status"], "completed");

    let tagged = starter.turn_json(&["--input", "[starter] already"]);
    assert_eq!(steps(&tagged, "input.receive")[0]["result"], "continued");
    assert_eq!(tagged["transcript"][0]["content"], "[starter] already");

    let human = starter.run(&["dev", "turn", "--input", "hi"]);
    let out = text(&human.stdout);
    assert!(human.status.success(), "{out}");
    assert!(out.contains("starter replace"), "{out}");
    assert!(out.contains("[starter] hi"), "{out}");
}

#[test]
fn reload_adopts_the_unchanged_runtime() {
    let starter = install("starter", Kind::Native);
    let first = starter.run(&["dev", "reload", "--json"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let second = starter.run(&["dev", "reload", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(report["status"], "swapped", "{report}");
    assert_eq!(report["unchanged"], serde_json::json!(["starter"]));
    assert_eq!(report["degraded"], serde_json::json!([]));
}

#[test]
fn a_missing_binary_is_diagnosed_by_doctor_and_the_turn() {
    let starter = install("starter", Kind::Native);
    std::fs::remove_file(starter.root().join("bin/starter")).unwrap();
    let doctor = starter.run(&["plugin", "doctor", "starter"]);
    assert_eq!(doctor.status.code(), Some(1));
    let out = text(&doctor.stdout) + &text(&doctor.stderr);
    assert!(out.contains("missing runtime command"), "{out}");
    // The runtime is optional: the turn completes without it and says why.
    let report = starter.turn_json(&["--input", "hello"]);
    assert_eq!(report["transcript"][0]["content"], "hello");
    assert_eq!(report["warnings"][0]["kind"], "start_failed", "{report}");
    assert_eq!(report["degraded"][0]["plugin"], "starter");
}
