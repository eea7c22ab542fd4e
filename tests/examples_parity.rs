//! One interceptor source, two runtimes: `examples/starter` (a native
//! sidecar) and `examples/starter-wasm` (the same `Starter` type exported as
//! a wasm component) give identical `reasonix dev turn --json` reports.
//!
//! Each is installed into a home of its own and driven with the same inputs.
//! The reports are compared whole after three things that differ by
//! construction are set aside: the session id (fresh on every run), the
//! runtime's trust label (full trust for a sidecar, sandboxed for a
//! component) and the package name (`starter-wasm` is read as `starter`).
//! Every hook point, decision, note, transcript entry, warning and status
//! must match.

#[path = "examples_support.rs"]
mod support;

use serde_json::Value;
use support::{Installed, Kind, install};

/// The component's package name, read as the native one.
fn same_name(value: &mut Value) {
    match value {
        Value::String(s) if s == "starter-wasm" => *s = "starter".to_owned(),
        Value::Array(items) => items.iter_mut().for_each(same_name),
        Value::Object(map) => map.values_mut().for_each(same_name),
        _ => {}
    }
}

fn normalized(mut report: Value) -> Value {
    same_name(&mut report);
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
    let component = install("starter-wasm", Kind::Component);
    let long = format!("long {}", "x".repeat(100 * 1024)); // over 64 KiB: a content ref
    for input in [
        "hello world",
        "[starter] already tagged",
        "  padded input  ",
        long.as_str(),
    ] {
        let a = turn(&native, input);
        let b = turn(&component, input);
        assert_eq!(a["runtimes"][0]["plugin"], "starter");
        assert_eq!(
            a,
            b,
            "reports differ for input {:?}",
            &input[..input.len().min(40)]
        );
    }
}
