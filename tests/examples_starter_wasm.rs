//! examples/starter-wasm end to end: the starter's interceptor built as a
//! wasm32-wasip2 component, installed with `plugin install --link --yes`
//! and run sandboxed by the host in `dev turn`.

#[path = "examples_support.rs"]
mod support;

use support::{Kind, install, steps, text};

#[test]
fn the_component_rewrites_the_input() {
    let wasm = install("starter-wasm", Kind::Component);
    let doctor = wasm.run(&["plugin", "doctor", "starter-wasm"]);
    assert!(
        doctor.status.success(),
        "{}{}",
        text(&doctor.stdout),
        text(&doctor.stderr)
    );
    let report = wasm.turn_json(&["--input", "hello world"]);
    assert_eq!(report["degraded"], serde_json::json!([]), "{report}");
    assert_eq!(
        steps(&report, "input.receive"),
        &serde_json::json!([{"plugin": "starter-wasm", "role": "chain", "result": "replaced"}])
    );
    assert_eq!(report["transcript"][0]["content"], "[starter] hello world");
}
