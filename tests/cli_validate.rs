//! `reasonix plugin validate` through the real binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn validate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reasonix"))
        .args(["plugin", "validate"])
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("run reasonix")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn plugin_with(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("reasonix-plugin.json"), manifest).unwrap();
    dir
}

#[test]
fn shipped_example_is_valid() {
    let out = validate(&["examples/starter"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with("ok: starter 0.1.0 (reasonix manifest reasonix-plugin.json)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("themes: 1\n    sunrise - themes/sunrise/theme.json"),
        "{stdout}"
    );
    // The starter carries a Rust extension (sdk-rust): a runtime block.
    assert!(
        stdout.contains("runtime: FULL TRUST (runs outside the sandbox)\n    command: ${REASONIX_PLUGIN_ROOT}/bin/starter\n    intercepts: input.receive"),
        "{stdout}"
    );
    for line in [
        "  compatibility: full (mapped: skills, commands)\n",
        "  skills: 1 in 1 root (skills)\n",
        "  commands: 1 in 1 root (commands)\n",
        "  prompts: 1 in 1 root (prompts)\n",
        "  agents: 0\n",
        "  hooks: 0\n",
        "  mcpServers: 0\n",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    assert!(!stdout.contains("warning:"), "{stdout}");
}

#[test]
fn shipped_example_json() {
    let out = validate(&["examples/starter", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["kind"], "reasonix");
    assert_eq!(v["name"], "starter");
    assert_eq!(v["counts"]["skillRoots"], 1);
    assert_eq!(v["counts"]["commandRoots"], 1);
    assert_eq!(v["counts"]["promptRoots"], 1);
    assert_eq!(v["counts"]["themes"], 1);
    assert_eq!(v["counts"]["skills"], 1);
    assert_eq!(v["counts"]["commands"], 1);
    assert_eq!(v["counts"]["prompts"], 1);
    assert_eq!(v["counts"]["agents"], 0);
    assert_eq!(
        v["runtime"]["command"],
        "${REASONIX_PLUGIN_ROOT}/bin/starter"
    );
    assert_eq!(
        v["runtime"]["intercepts"],
        serde_json::json!(["input.receive"])
    );
    assert_eq!(v["compatibility"]["status"], "full");
    assert_eq!(v["warnings"], serde_json::json!([]));
}

const TYPOS: &str = r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "typos",
  "descripton": "root typo",
  "contributes": {
    "skills": [{"paht": "skills"}],
    "hooks": {"SessionStart": [{"command": "./start", "shellComand": true}]},
    "mcpServers": {"srv": {"command": "./srv", "autoStart": true}}
  },
  "runtime": {"command": "./run", "intrcepts": ["input.receive"],
              "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}, "exec": "rm"}]}
}"#;

const TYPO_MESSAGES: [&str; 6] = [
    r#"reasonix-plugin.json: json: unknown field "descripton""#,
    r#"contributes.skills[0]: json: unknown field "paht""#,
    r#"contributes.hooks.SessionStart[0]: json: unknown field "shellComand""#,
    r#"contributes.mcpServers.srv: json: unknown field "autoStart""#,
    r#"runtime: json: unknown field "intrcepts""#,
    r#"runtime.tools[0]: json: unknown field "exec""#,
];

#[test]
fn typos_at_every_depth_exit_1_and_name_the_path() {
    let dir = plugin_with(TYPOS);
    let out = validate(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    for want in TYPO_MESSAGES {
        assert!(
            stderr.contains(&format!("error: {want}")),
            "missing {want:?} in\n{stderr}"
        );
    }
    assert!(stderr.contains("invalid: "), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn typos_as_json() {
    let dir = plugin_with(TYPOS);
    let out = validate(&[dir.path().to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], false);
    let errors = v["errors"].as_array().unwrap();
    let paths: Vec<&str> = errors.iter().map(|e| e["path"].as_str().unwrap()).collect();
    for want in [
        "descripton",
        "contributes.skills[0].paht",
        "contributes.hooks.SessionStart[0].shellComand",
        "contributes.mcpServers.srv.autoStart",
        "runtime.intrcepts",
        "runtime.tools[0].exec",
    ] {
        assert!(paths.contains(&want), "missing path {want} in {paths:?}");
    }
    for want in TYPO_MESSAGES {
        assert!(
            errors.iter().any(|e| e["message"] == want),
            "missing message {want:?}"
        );
    }
}

#[test]
fn missing_directory_and_missing_manifest_exit_1() {
    let out = validate(&["/nonexistent/reasonix-plugin-dir"]);
    assert_eq!(out.status.code(), Some(1));
    let empty = tempfile::tempdir().unwrap();
    let out = validate(&[empty.path().to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no plugin manifest")
    );
}

#[test]
fn usage_errors_exit_2_and_help_explains() {
    assert_eq!(validate(&[]).status.code(), Some(2));
    assert_eq!(validate(&["a", "--bogus"]).status.code(), Some(2));
    let help = validate(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = text(&help.stdout);
    for want in ["reasonix-plugin.json", "--json", "Exit status"] {
        assert!(help.contains(want), "help lacks {want}:\n{help}");
    }
}
