//! One interceptor source, two runtimes: `examples/starter` (a native
//! sidecar) and `examples/starter-wasm` (the same `Starter` type exported as
//! a wasm component) give identical `reasonix dev turn --json` reports.
//!
//! Both are installed under the plugin name `starter` in homes of their own
//! (the component with `plugin install --name starter`), so the reports can
//! be compared whole. Only the session id (fresh on every run) and the
//! runtime's trust label (`full_trust` for a sidecar, the sandbox for a
//! component) are set aside; every hook point, decision, transcript entry,
//! warning and status must match.

#[path = "examples_support.rs"]
mod support;

use serde_json::Value;
use support::{Installed, Kind, install, install_as};

fn normalized(mut report: Value) -> Value {
    let object = report.as_object_mut().expect("a report object");
    object.remove("sessionId");
    for runtime in object
        .get_mut("runtimes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        runtime.as_object_mut().unwrap().remove("trust");
    }
    report
}

fn turn(installed: &Installed, input: &str) -> Value {
    normalized(installed.turn_json(&["--input", input]))
}

#[test]
fn native_and_component_reports_are_identical() {
    let native = install("starter", Kind::Native);
    let component = install_as("starter-wasm", Kind::Component, Some("starter"));
    let long = format!("long {}", "x".repeat(100 * 1024)); // over 64 KiB: a content ref
    for input in ["hello world", "[starter] already tagged", "   ", long.as_str()] {
        let a = turn(&native, input);
        let b = turn(&component, input);
        assert_eq!(a["runtimes"][0]["plugin"], "starter");
        assert_eq!(a, b, "reports differ for input {:?}", &input[..input.len().min(40)]);
    }
}
