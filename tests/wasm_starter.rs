//! examples/starter-wasm (the starter built with the Rust SDK as a
//! wasm32-wasip2 component) end to end on the component runtime: built,
//! installed with `plugin install --link --yes`, shown as SANDBOXED by
//! `plugin doctor`, and driven by `dev turn` exactly like the native starter.

#[path = "examples_support.rs"]
mod support;

use support::{Kind, install, steps, text};

#[test]
fn the_wasm_starter_rewrites_input_like_the_native_one() {
    let starter = install("starter-wasm", Kind::Component);
    let doctor = starter.run(&["plugin", "doctor", "starter-wasm"]);
    let out = text(&doctor.stdout);
    assert!(doctor.status.success(), "{out}{}", text(&doctor.stderr));
    assert!(out.contains("SANDBOXED"), "{out}");
    assert!(!out.contains("FULL TRUST:"), "{out}");

    let report = starter.turn_json(&["--input", "hello world"]);
    assert_eq!(report["status"]["status"], "completed", "{report}");
    assert_eq!(
        steps(&report, "input.receive"),
        &serde_json::json!([{"plugin": "starter-wasm", "role": "chain", "result": "replaced"}])
    );
    assert_eq!(report["transcript"][0]["content"], "[starter] hello world");
    assert_eq!(report["runtimes"][0]["plugin"], "starter-wasm");
    assert_eq!(report["runtimes"][0]["trust"], "sandboxed", "{report}");
    assert_eq!(report["degraded"], serde_json::json!([]));

    // The second turn loads the compiled component from the cache.
    let again = starter.turn_json(&["--input", "[starter] already"]);
    assert_eq!(steps(&again, "input.receive")[0]["result"], "continued");
    let cache = starter.home.path().join("cache").join("wasm");
    let entries = std::fs::read_dir(&cache).map(|d| d.count()).unwrap_or(0);
    assert_eq!(entries, 1, "one cached artifact in {}", cache.display());
}
