//! `reasonix dev bench` end to end against the example extensions, a
//! native sidecar (`examples/starter`) and a wasm component
//! (`examples/starter-wasm`) installed into one home: the report's shape,
//! never its timings. Also: installing a component precompiles it, so the
//! first start loads the cache instead of compiling.

#[path = "examples_support.rs"]
mod support;

use serde_json::Value;
use support::{Kind, add_to, reasonix_in, text};
use tempfile::TempDir;

fn both_installed() -> (TempDir, TempDir) {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    add_to(&home, &workspace, "starter", Kind::Native);
    add_to(&home, &workspace, "starter-wasm", Kind::Component);
    (home, workspace)
}

fn bench(home: &TempDir, workspace: &TempDir, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["dev", "bench"];
    all.extend_from_slice(args);
    let out = reasonix_in(home.path(), workspace.path(), &all);
    let stdout = text(&out.stdout);
    let json = if args.contains(&"--json") {
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\n{}", text(&out.stderr)))
    } else {
        Value::Null
    };
    (out.status.code().unwrap_or(-1), json, stdout)
}

fn number(value: &Value, field: &str) -> f64 {
    value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {value}"))
}

#[test]
fn every_extension_and_point_is_measured_beside_its_floor() {
    let (home, workspace) = both_installed();
    let (code, report, _) = bench(&home, &workspace, &["--json", "--iterations", "40"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["iterations"], 40);
    assert_eq!(report["degraded"], Value::Array(Vec::new()), "{report}");
    let plugins = report["plugins"].as_array().unwrap();
    let mut names: Vec<&str> = plugins
        .iter()
        .map(|p| p["plugin"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["starter", "starter-wasm"]);
    for plugin in plugins {
        let wasm = plugin["plugin"] == "starter-wasm";
        assert_eq!(plugin["runtime"], if wasm { "wasm" } else { "native" });
        assert_eq!(
            plugin["trust"],
            if wasm { "sandboxed" } else { "full_trust" }
        );
        assert_eq!(
            plugin["floor"],
            if wasm { "component_call" } else { "pipe_echo" }
        );
        assert!(number(plugin, "startupMillis") > 0.0, "{plugin}");
        assert!(
            plugin["residentBytes"].as_u64().is_some_and(|b| b > 0),
            "{plugin}"
        );
        // Both examples intercept exactly input.receive.
        let points = plugin["points"].as_array().unwrap();
        assert_eq!(points.len(), 1, "{plugin}");
        let point = &points[0];
        assert_eq!(point["point"], "input.receive");
        assert!(number(point, "payloadBytes") > 0.0);
        for field in ["p50Micros", "p99Micros", "floorP50Micros", "floorP99Micros"] {
            assert!(number(point, field) > 0.0, "{field} in {point}");
        }
        assert!(number(point, "p99Micros") >= number(point, "p50Micros"));
        assert!(number(point, "ratioP50") > 0.0);
        // The starter tags the input: a replacement, which continues.
        assert_eq!(point["outcome"], "continue", "{point}");
    }
}

#[test]
fn one_point_only_and_the_human_table() {
    let (home, workspace) = both_installed();
    let (code, report, _) = bench(
        &home,
        &workspace,
        &["--json", "--iterations", "10", "--point", "tool.before"],
    );
    assert_eq!(code, 0, "{report}");
    for plugin in report["plugins"].as_array().unwrap() {
        assert_eq!(plugin["points"], Value::Array(Vec::new()), "{plugin}");
    }
    let (code, _, human) = bench(&home, &workspace, &["--iterations", "10"]);
    assert_eq!(code, 0, "{human}");
    assert!(
        human.contains("starter-wasm (wasm component, sandboxed"),
        "{human}"
    );
    assert!(
        human.contains("starter (native sidecar, full trust"),
        "{human}"
    );
    assert!(human.contains("input.receive"), "{human}");
    assert!(human.contains("× floor"), "{human}");
}

#[test]
fn a_bad_point_is_a_usage_error_naming_the_valid_ones() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    let (code, report, _) = bench(&home, &workspace, &["--json", "--point", "tool.during"]);
    assert_eq!(code, 2);
    assert_eq!(report["ok"], false);
    assert_eq!(report["errorCode"], "bench.invalid_point");
    assert!(
        report["error"].as_str().unwrap().contains("input.receive"),
        "{report}"
    );
    let out = reasonix_in(
        home.path(),
        workspace.path(),
        &["dev", "bench", "--iterations", "0"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn an_empty_home_has_nothing_to_measure() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    let (code, report, _) = bench(&home, &workspace, &["--json"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["plugins"], Value::Array(Vec::new()));
    let (_, _, human) = bench(&home, &workspace, &[]);
    assert!(human.contains("nothing to measure"), "{human}");
}

#[test]
fn installing_a_component_precompiles_it_into_the_cache() {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    add_to(&home, &workspace, "starter-wasm", Kind::Component);
    let cache = home.path().join("cache").join("wasm");
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap_or_else(|e| panic!("no cache after install ({e})"))
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".cwasm"))
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "one compiled component in {}",
        cache.display()
    );
    let modified = entries[0].metadata().unwrap().modified().unwrap();
    // The first turn loads that entry: it is not rewritten.
    let out = reasonix_in(
        home.path(),
        workspace.path(),
        &["dev", "turn", "--input", "hello", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = std::fs::read_dir(&cache).unwrap().flatten().count();
    assert_eq!(after, 1);
    assert_eq!(
        entries[0].metadata().unwrap().modified().unwrap(),
        modified,
        "the first turn rewrote the cache entry: it compiled"
    );
}
