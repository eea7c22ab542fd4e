//! End-to-end: wasm components installed through `reasonix plugin install`
//! and driven by `reasonix dev turn`, behind the same dispatcher as native
//! sidecars. Only the trust label tells them apart: a sandboxed runtime's
//! `deny` applies, its `allow` over a host deny is refused.

mod dispatch_common;
mod wasm_support;

use std::path::PathBuf;

use dispatch_common::Env;
use serde_json::{Value, json};
use wasm_support::fixtures::{Fixture, INPUT_RECEIVE, Intercept, PERMISSION_DECISION};

/// Write a plugin whose runtime is `fixture` as `extension.wasm`.
fn wasm_plugin(env: &Env, name: &str, fixture: &Fixture, runtime: Value) -> PathBuf {
    let root = env.workspace.join("plugins").join(name);
    std::fs::create_dir_all(&root).unwrap();
    fixture.write_to(&root, "extension.wasm");
    let intercepts: Vec<&str> = fixture
        .subscriptions
        .iter()
        .map(|&i| match i {
            INPUT_RECEIVE => "input.receive",
            PERMISSION_DECISION => "permission.decision",
            other => panic!("no point name for {other}"),
        })
        .collect();
    let mut block = json!({
        "command": "${REASONIX_PLUGIN_ROOT}/extension.wasm",
        "intercepts": intercepts,
        "capabilities": ["interceptors"],
    });
    for (key, value) in runtime.as_object().cloned().unwrap_or_default() {
        block[key] = value;
    }
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v2",
        "name": name,
        "version": "1.0.0",
        "description": format!("wasm test plugin {name}"),
        "runtime": block,
    });
    std::fs::write(
        root.join("reasonix-plugin.json"),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
    env.install(&root, false);
    root
}

fn permission_fixture(decision: u8) -> Fixture {
    let mut fixture = Fixture::new(Intercept::Decision(decision));
    fixture.subscriptions = vec![PERMISSION_DECISION];
    fixture
}

#[test]
fn a_component_replaces_the_input_through_the_dispatcher() {
    let env = Env::new();
    wasm_plugin(
        &env,
        "rewriter",
        &Fixture::new(Intercept::Replace(r#"{"text":"rewritten by wasm"}"#.into())),
        json!({}),
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.status(), "completed", "{}", run.stdout);
    assert_eq!(run.transcript_text()[0], "rewritten by wasm");
    let chain = run.chain("input.receive");
    assert_eq!(chain.len(), 1, "{chain:?}");
    assert_eq!(chain[0].0, "rewriter");
    let runtimes = run.report["runtimes"].to_string();
    assert!(runtimes.contains("rewriter"), "{runtimes}");
    assert!(runtimes.contains("sandboxed"), "{runtimes}");
}

#[test]
fn an_invalid_replacement_is_a_contract_violation() {
    let env = Env::new();
    // Emptying the input must be a block (spec §6).
    wasm_plugin(
        &env,
        "emptier",
        &Fixture::new(Intercept::Replace(r#"{"text":""}"#.into())),
        json!({}),
    );
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Optional: warned and skipped, the input is unchanged.
    assert_eq!(run.transcript_text()[0], "hi", "{}", run.stdout);
    let warnings = run.report["warnings"].to_string();
    assert!(warnings.contains("emptier"), "{warnings}");

    let env = Env::new();
    wasm_plugin(
        &env,
        "emptier",
        &Fixture::new(Intercept::Replace(r#"{"text":""}"#.into())),
        json!({"required": true}),
    );
    let run = env.turn(&["--input", "hi"]);
    assert_ne!(run.status(), "completed", "{}", run.stdout);
}

#[test]
fn a_sandboxed_allow_over_a_host_deny_is_refused() {
    let env = Env::new();
    wasm_plugin(&env, "lenient", &permission_fixture(3), json!({}));
    let run = env.turn(&[
        "--input",
        "x",
        "--call",
        "echo={\"text\":\"ran\"}",
        "--deny",
        "echo",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["hostDecision"], "deny", "{call}");
    assert_eq!(call["decision"], "deny", "{call}");
    assert_ne!(call["result"], "ran", "{call}");
    assert!(run.stdout.contains("only tighten"), "{}", run.stdout);
}

#[test]
fn a_sandboxed_deny_applies() {
    let env = Env::new();
    wasm_plugin(&env, "strict", &permission_fixture(4), json!({}));
    let run = env.turn(&["--input", "x", "--call", "echo={\"text\":\"ran\"}"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let call = &run.report["toolCalls"][0];
    assert_eq!(call["hostDecision"], "allow", "{call}");
    assert_eq!(call["decision"], "deny", "{call}");
    assert_ne!(call["result"], "ran", "{call}");
}

#[test]
fn a_spinning_component_times_out_and_the_turn_goes_on() {
    let env = Env::new();
    let fixture = Fixture::new(Intercept::SpinAlways);
    wasm_plugin(&env, "spinner", &fixture, json!({"timeoutMillis": 200}));
    let run = env.turn(&["--input", "hi"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.status(), "completed", "{}", run.stdout);
    let warnings = run.report["warnings"].to_string();
    assert!(warnings.contains("spinner"), "{warnings}");
}

#[test]
fn a_component_that_declares_too_much_does_not_start() {
    let env = Env::new();
    let mut fixture = Fixture::new(Intercept::Continue);
    fixture.subscriptions = vec![INPUT_RECEIVE, PERMISSION_DECISION];
    // The manifest names only input.receive.
    let root = env.workspace.join("plugins").join("greedy");
    std::fs::create_dir_all(&root).unwrap();
    fixture.write_to(&root, "extension.wasm");
    std::fs::write(
        root.join("reasonix-plugin.json"),
        serde_json::to_vec_pretty(&json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": "greedy",
            "version": "1.0.0",
            "description": "declares more than its manifest",
            "runtime": {
                "command": "${REASONIX_PLUGIN_ROOT}/extension.wasm",
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors"],
                "required": true
            }
        }))
        .unwrap(),
    )
    .unwrap();
    env.install(&root, false);
    let run = env.turn(&["--input", "hi"]);
    let text = format!("{}{}", run.stdout, run.stderr);
    assert!(text.contains("capability_not_declared"), "{text}");
    assert!(text.contains("permission.decision"), "{text}");
}

#[test]
fn show_validate_and_the_install_plan_print_a_sandboxed_block() {
    let env = Env::new();
    let root = env.workspace.join("plugins").join("boxed");
    std::fs::create_dir_all(&root).unwrap();
    Fixture::new(Intercept::Continue).write_to(&root, "extension.wasm");
    std::fs::write(
        root.join("reasonix-plugin.json"),
        serde_json::to_vec_pretty(&json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": "boxed",
            "version": "1.0.0",
            "description": "a sandboxed component",
            "runtime": {
                "command": "${REASONIX_PLUGIN_ROOT}/extension.wasm",
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors"],
                "env": {"BOXED_MODE": "strict"},
                "sandbox": {"memoryMiB": 32, "dataMiB": 8}
            }
        }))
        .unwrap(),
    )
    .unwrap();
    let text = |out: std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let plan = text(env.reasonix(&["plugin", "install", root.to_str().unwrap(), "--dry-run"]));
    assert!(plan.contains("SANDBOXED"), "{plan}");
    assert!(!plan.contains("FULL TRUST:"), "{plan}");
    let validate = text(env.reasonix(&["plugin", "validate", root.to_str().unwrap()]));
    assert!(validate.contains("SANDBOXED"), "{validate}");
    env.install(&root, false);
    let show = text(env.reasonix(&["plugin", "show", "boxed"]));
    for want in [
        "SANDBOXED",
        "plugin root: read-only",
        "data dir: $REASONIX_HOME/data/boxed/ (read-write)",
        "environment: BOXED_MODE",
        "network: none",
        "memory limit: 32 MiB",
        "data quota: 8 MiB",
    ] {
        assert!(show.contains(want), "missing {want:?} in\n{show}");
    }
    assert!(!show.contains("FULL TRUST:"), "{show}");
    let json_show = text(env.reasonix(&["plugin", "show", "boxed", "--json"]));
    assert!(
        json_show.contains("\"memoryMiB\": 32") || json_show.contains("\"memoryMiB\":32"),
        "{json_show}"
    );
    let doctor = text(env.reasonix(&["plugin", "doctor", "boxed"]));
    assert!(doctor.contains("SANDBOXED"), "{doctor}");
}

/// A guest that panics: its panic message (its stderr) is shown with the
/// failure, in the text report and in `--json`.
#[test]
fn a_panicking_guest_shows_its_panic_message_with_the_failure() {
    let env = Env::new();
    let root = env.workspace.join("plugins").join("panicky");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("extension.wasm"), wasm_support::probe_component()).unwrap();
    std::fs::write(
        root.join("reasonix-plugin.json"),
        serde_json::to_vec_pretty(&json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": "panicky",
            "version": "1.0.0",
            "runtime": {
                "command": "${REASONIX_PLUGIN_ROOT}/extension.wasm",
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors"],
                "required": true
            }
        }))
        .unwrap(),
    )
    .unwrap();
    env.install(&root, false);
    let run = env.turn(&["--input", "panic the-guest-said-why"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.status(), "failed", "{}", run.stdout);
    assert_eq!(run.report["ok"], false);
    let logs = &run.report["logs"];
    assert_eq!(logs[0]["plugin"], "panicky", "{}", run.stdout);
    assert!(
        logs[0]["lines"]
            .to_string()
            .contains("probe panicked: the-guest-said-why"),
        "{}",
        run.stdout
    );
    let text = env.reasonix(&["dev", "turn", "--input", "panic the-guest-said-why"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("log of panicky"), "{stdout}");
    assert!(
        stdout.contains("probe panicked: the-guest-said-why"),
        "{stdout}"
    );
}
