//! The manifest strictness matrix: every manifest case of PLUGIN_PACKAGES.md
//! §c (upstream `manifest_v1_test.go` / `manifest_v2_test.go` /
//! `theme_glob_files_test.go`), plus unknown fields at every depth, run
//! through the real loader on real temp directories.

use std::fs;
use std::path::Path;

use reasonix_package::manifest::{IssueKind, Manifest, ManifestError, valid_plugin_name};
use reasonix_package::{
    CompatibilityStatus, LoadedPackage, ManifestKind, PackageError, load_package,
};
use serde_json::{Value, json};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn plugin(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "reasonix-plugin.json", manifest);
    dir
}

fn load(root: &Path) -> Result<LoadedPackage, ManifestError> {
    match load_package(root) {
        Ok(p) => Ok(p),
        Err(PackageError::Manifest(e)) => Err(e),
        Err(other) => panic!("not a manifest error: {other}"),
    }
}

fn load_ok(root: &Path) -> LoadedPackage {
    load(root).unwrap_or_else(|e| panic!("load failed:\n{e}"))
}

fn load_err(root: &Path) -> ManifestError {
    match load(root) {
        Ok(_) => panic!("load succeeded, want an error"),
        Err(e) => e,
    }
}

fn assert_err_contains(err: &ManifestError, want: &str) {
    assert!(
        err.to_string().contains(want),
        "error\n{err}\nlacks {want:?}"
    );
}

fn native(pkg: &LoadedPackage) -> &Manifest {
    pkg.native.as_ref().expect("native manifest")
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const V2_EXAMPLE: &str = r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "example",
  "version": "1.0.0",
  "description": "Example v2 plugin",
  "contributes": {
    "skills": ["skills"],
    "agents": ["agents"],
    "commands": ["commands"],
    "prompts": ["prompts"],
    "themes": ["themes/*.reasonix-theme"]
  },
  "runtime": {
    "command": "${REASONIX_PLUGIN_ROOT}/bin/example",
    "args": ["--serve"],
    "env": {"MODE": "plugin"},
    "required": true,
    "priority": 10,
    "intercepts": ["input.receive", "tool.before"],
    "replaces": ["system_prompt"],
    "capabilities": ["interceptors", "strategies", "providers", "ui"]
  }
}"#;

fn write_example_assets(root: &Path) {
    write(
        root,
        "skills/demo/SKILL.md",
        "---\ndescription: demo skill\n---\nDemo",
    );
    write(
        root,
        "agents/reviewer.md",
        "---\ndescription: reviews\n---\nReview",
    );
    write(
        root,
        "commands/ship.md",
        "---\ndescription: ship\n---\nShip $ARGUMENTS",
    );
    write(
        root,
        "prompts/plan.md",
        "---\ndescription: plan\n---\nPlan $ARGUMENTS",
    );
    write(root, "themes/neon.reasonix-theme", "theme pack bytes");
    write(root, "bin/example", "#!/bin/sh\n");
}

#[test]
fn manifest_v2_full_parse() {
    let dir = plugin(V2_EXAMPLE);
    write_example_assets(dir.path());
    let pkg = load_ok(dir.path());
    assert!(pkg.warnings.is_empty(), "{:?}", pkg.warnings);
    assert_eq!(pkg.kind, ManifestKind::Reasonix);
    assert_eq!(pkg.manifest_path, "reasonix-plugin.json");
    assert_eq!(pkg.name, "example");
    assert_eq!(pkg.version.as_deref(), Some("1.0.0"));
    assert_eq!(pkg.description.as_deref(), Some("Example v2 plugin"));
    let m = native(&pkg);
    assert_eq!(m.skills, strings(&["skills"]));
    assert_eq!(m.agents, strings(&["agents"]));
    assert_eq!(m.commands, strings(&["commands"]));
    assert_eq!(m.prompts, strings(&["prompts"]));
    assert_eq!(m.themes, strings(&["themes/*.reasonix-theme"]));
    let rt = m.runtime.as_ref().expect("runtime");
    assert_eq!(
        rt.command, "${REASONIX_PLUGIN_ROOT}/bin/example",
        "kept unexpanded"
    );
    assert_eq!(rt.args, strings(&["--serve"]));
    assert_eq!(rt.env["MODE"], "plugin");
    assert!(rt.required);
    assert_eq!(rt.priority, 10);
    assert_eq!(rt.intercepts, strings(&["input.receive", "tool.before"]));
    assert_eq!(rt.replaces, strings(&["system_prompt"]));
    assert_eq!(
        rt.capabilities,
        strings(&["interceptors", "strategies", "providers", "ui"])
    );

    let inv = &pkg.inventory;
    assert_eq!(inv.skill_roots, strings(&["skills"]));
    assert_eq!(inv.agent_roots, strings(&["agents"]));
    assert_eq!(inv.command_roots, strings(&["commands"]));
    assert_eq!(inv.prompt_roots, strings(&["prompts"]));
    assert_eq!(inv.skills.len(), 1, "{:?}", inv.skills);
    assert_eq!(inv.skills[0].name, "demo");
    assert_eq!(inv.agents.len(), 1, "{:?}", inv.agents);
    assert_eq!(inv.commands.len(), 1, "{:?}", inv.commands);
    assert_eq!(inv.commands[0].name, "ship");
    assert_eq!(inv.prompts.len(), 1, "{:?}", inv.prompts);
    assert_eq!(inv.prompts[0].name, "plan");
    assert_eq!(inv.prompts[0].description.as_deref(), Some("plan"));
    assert_eq!(inv.themes.len(), 1);
    assert_eq!(inv.themes[0].name, "neon");
    assert_eq!(inv.themes[0].path, "themes/neon.reasonix-theme");
    assert!(inv.hooks.is_empty() && inv.mcp_servers.is_empty());
    assert_eq!(pkg.compatibility.status, CompatibilityStatus::Full);
    assert_eq!(
        pkg.compatibility.mapped,
        strings(&["skills", "commands", "agents"])
    );
    assert!(pkg.compatibility.skipped.is_empty());
}

const STRICT_BASE: &str = r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "strict-demo",
  "contributes": {"skills": ["skills"]},
  "hooks": {"PreToolUse": [{"match": "Bash", "command": "./pre.sh"}]},
  "mcpServers": {"srv": {"type": "stdio", "command": "./srv"}}
}"#;

type Mutation = fn(&mut Value);

fn mutated(mutate: Mutation) -> String {
    let mut doc: Value = serde_json::from_str(STRICT_BASE).unwrap();
    mutate(&mut doc);
    doc.to_string()
}

#[test]
fn manifest_v2_rejects_unknown_fields_with_path() {
    let cases: Vec<(&str, Mutation, &str, &str)> = vec![
        (
            "root field",
            |m| m["nam"] = json!("typo"),
            r#"reasonix-plugin.json: json: unknown field "nam""#,
            "nam",
        ),
        (
            "contributes field",
            |m| m["contributes"]["promts"] = json!(["prompts"]),
            r#"contributes: json: unknown field "promts""#,
            "contributes.promts",
        ),
        (
            "runtime field",
            |m| m["runtime"] = json!({"command": "./run", "intrcepts": ["input.receive"]}),
            r#"runtime: json: unknown field "intrcepts""#,
            "runtime.intrcepts",
        ),
        (
            "hook entry field",
            |m| m["hooks"]["PreToolUse"][0]["cmd"] = json!("./x"),
            r#"hooks.PreToolUse[0]: json: unknown field "cmd""#,
            "hooks.PreToolUse[0].cmd",
        ),
        (
            "contributes hook entry field",
            |m| {
                m["contributes"]["hooks"] =
                    json!({"SessionStart": [{"command": "echo hi", "shellComand": true}]})
            },
            r#"contributes.hooks.SessionStart[0]: json: unknown field "shellComand""#,
            "contributes.hooks.SessionStart[0].shellComand",
        ),
        (
            "mcp server entry field",
            |m| m["mcpServers"]["srv"]["autoStart"] = json!(false),
            r#"mcpServers.srv: json: unknown field "autoStart""#,
            "mcpServers.srv.autoStart",
        ),
        (
            "path list object field",
            |m| m["contributes"]["skills"] = json!([{"paht": "skills"}]),
            r#"contributes.skills[0]: json: unknown field "paht""#,
            "contributes.skills[0].paht",
        ),
    ];
    for (name, mutate, want, want_path) in cases {
        let dir = plugin(&mutated(mutate));
        write(
            dir.path(),
            "skills/s/SKILL.md",
            "---\ndescription: s\n---\nS",
        );
        let err = load_err(dir.path());
        assert_err_contains(&err, want);
        let issue = err
            .issues
            .iter()
            .find(|i| i.message == want)
            .unwrap_or_else(|| panic!("{name}: no issue with exact message {want:?}: {err}"));
        assert_eq!(issue.path, want_path, "{name}");
        assert!(
            matches!(issue.kind, IssueKind::UnknownField { .. }),
            "{name}"
        );
        assert_eq!(err.issues.len(), 1, "{name}: only the typo is wrong: {err}");
    }
    // The base itself is valid: each case fails for its one typo.
    let dir = plugin(STRICT_BASE);
    write(
        dir.path(),
        "skills/s/SKILL.md",
        "---\ndescription: s\n---\nS",
    );
    load_ok(dir.path());
}

#[test]
fn unknown_fields_at_every_depth_are_all_reported_at_once() {
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v2",
        "name": "deep",
        "x0": 1,
        "skills": [{"path": "a", "x1": 1}],
        "commands": [{"path": "c", "x2": 1}],
        "hooks": {"Stop": [{"command": "./s", "x3": 1}]},
        "mcpServers": {"legacy": {"command": "./l", "x4": 1}},
        "requires": [{"namespace": "n", "kind": "k", "id": "i", "x5": 1}],
        "provides": [{"namespace": "n", "kind": "k", "id": "i", "version": "1.0.0", "x6": 1}],
        "contributes": {
            "x7": 1,
            "skills": [{"path": "b", "x8": 1}],
            "agents": [{"path": "ag", "x9": 1}],
            "commands": [{"path": "cm", "x10": 1}],
            "prompts": [{"path": "pr", "x11": 1}],
            "themes": [{"path": "t.reasonix-theme", "x12": 1}],
            "hooks": {"SessionStart": [{"command": "./h", "x13": 1}]},
            "mcpServers": {"m": {"command": "./m", "x14": 1}}
        },
        "runtime": {
            "command": "./run.wasm",
            "x15": 1,
            "sandbox": {"network": false},
            "capabilities": ["tools"],
            "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}, "x16": 1}]
        }
    });
    let err = Manifest::from_value(&manifest).unwrap_err();
    let want = [
        ("x0", "reasonix-plugin.json"),
        ("skills[0].x1", "skills[0]"),
        ("commands[0].x2", "commands[0]"),
        ("hooks.Stop[0].x3", "hooks.Stop[0]"),
        ("mcpServers.legacy.x4", "mcpServers.legacy"),
        ("requires[0].x5", "requires[0]"),
        ("provides[0].x6", "provides[0]"),
        ("contributes.x7", "contributes"),
        ("contributes.skills[0].x8", "contributes.skills[0]"),
        ("contributes.agents[0].x9", "contributes.agents[0]"),
        ("contributes.commands[0].x10", "contributes.commands[0]"),
        ("contributes.prompts[0].x11", "contributes.prompts[0]"),
        ("contributes.themes[0].x12", "contributes.themes[0]"),
        (
            "contributes.hooks.SessionStart[0].x13",
            "contributes.hooks.SessionStart[0]",
        ),
        ("contributes.mcpServers.m.x14", "contributes.mcpServers.m"),
        ("runtime.x15", "runtime"),
        ("runtime.sandbox.network", "runtime.sandbox"),
        ("runtime.tools[0].x16", "runtime.tools[0]"),
    ];
    for (path, container) in want {
        let field = path.rsplit('.').next().unwrap();
        let message = format!("{container}: json: unknown field \"{field}\"");
        assert!(
            err.issues
                .iter()
                .any(|i| i.path == path && i.message == message),
            "missing {path} / {message:?} in\n{err}"
        );
    }
    assert_eq!(
        err.issues.len(),
        want.len(),
        "nothing else is wrong:\n{err}"
    );
}

#[test]
fn manifest_api_version_v2_gating() {
    let cases: Vec<(Value, Option<&str>)> = vec![
        (json!("reasonix.io/plugin/v2"), None),
        (
            json!("reasonix.io/plugin/v1"),
            Some("unsupported apiVersion"),
        ),
        (
            json!("reasonix.io/plugin/v0"),
            Some("unsupported apiVersion"),
        ),
        (
            json!("reasonix.io/plugin/v10.2"),
            Some("unsupported apiVersion"),
        ),
        (json!("v1"), Some("unsupported apiVersion")),
        (
            json!("reasonix.io/plugin/vX"),
            Some("unsupported apiVersion"),
        ),
        (json!("foo"), Some("unsupported apiVersion")),
        (json!(42), Some("apiVersion must be a string")),
        (
            json!("reasonix.io/plugin/v2.1"),
            Some("unsupported apiVersion"),
        ),
        (
            json!("reasonix.io/plugin/v2.0"),
            Some("unsupported apiVersion"),
        ),
    ];
    for (api_version, want) in cases {
        let dir = plugin(&json!({"apiVersion": api_version, "name": "ver-demo"}).to_string());
        match want {
            None => {
                load_ok(dir.path());
            }
            Some(want) => {
                let err = load_err(dir.path());
                assert_err_contains(&err, want);
                assert_eq!(err.issues.len(), 1, "{err}");
                let expected_kind = if api_version.is_string() {
                    IssueKind::UnsupportedApiVersion {
                        found: api_version.as_str().unwrap().to_string(),
                    }
                } else {
                    IssueKind::ApiVersionNotString
                };
                assert_eq!(err.issues[0].kind, expected_kind);
                if api_version.is_string() {
                    assert_err_contains(&err, "want exact reasonix.io/plugin/v2");
                    assert_err_contains(&err, &format!("\"{}\"", api_version.as_str().unwrap()));
                }
            }
        }
    }
    let dir = plugin(r#"{"name": "legacy"}"#);
    let err = load_err(dir.path());
    assert_eq!(err.issues[0].kind, IssueKind::MissingApiVersion);
    assert!(err.is_missing_api_version());
    assert_err_contains(
        &err,
        r#"reasonix-plugin.json: missing apiVersion; native manifests must declare "reasonix.io/plugin/v2""#,
    );
}

#[test]
fn manifest_v2_legacy_fields_merge_with_contributes() {
    let dir = plugin(
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "merge-demo",
  "skills": ["legacy-skills", "shared"],
  "commands": "legacy-commands",
  "hooks": {
    "SessionStart": [{"command": "./start.sh", "description": "same everywhere"}]
  },
  "mcpServers": {
    "same": {"type": "stdio", "command": "./srv"},
    "legacy-only": {"url": "https://example.invalid/mcp"}
  },
  "contributes": {
    "skills": ["contrib-skills", "shared"],
    "commands": ["contrib-commands"],
    "prompts": ["prompts"],
    "hooks": {
      "SessionStart": [{"command": "./start.sh", "description": "same everywhere"}],
      "PreToolUse": [{"match": "Bash", "command": "./pre.sh"}]
    },
    "mcpServers": {
      "same": {"type": "stdio", "command": "./srv"},
      "contrib-only": {"type": "stdio", "command": "./other"}
    }
  }
}"#,
    );
    let pkg = load_ok(dir.path());
    let m = native(&pkg);
    assert_eq!(
        m.skills,
        strings(&["contrib-skills", "legacy-skills", "shared"])
    );
    assert_eq!(
        m.commands,
        strings(&["contrib-commands", "legacy-commands"])
    );
    assert_eq!(m.prompts, strings(&["prompts"]));
    assert_eq!(m.hooks["SessionStart"].len(), 1, "identical entries dedupe");
    assert_eq!(m.hooks["PreToolUse"].len(), 1);
    for name in ["same", "legacy-only", "contrib-only"] {
        assert!(m.mcp_servers.contains_key(name), "{name}");
    }
    let inv = &pkg.inventory;
    assert_eq!(inv.hooks.len(), 2);
    assert!(inv.hooks.iter().all(|h| h.source == "reasonix-plugin.json"));
    let legacy_only = inv
        .mcp_servers
        .iter()
        .find(|s| s.name == "legacy-only")
        .unwrap();
    assert_eq!(legacy_only.transport, "http");
    assert_eq!(
        legacy_only.url.as_deref(),
        Some("https://example.invalid/mcp")
    );
    assert!(!legacy_only.auto_start && !legacy_only.imported);
    assert_eq!(
        pkg.compatibility.mapped,
        strings(&["hooks", "mcp"]),
        "declared roots that hold nothing map nothing"
    );
    // Missing declared roots are warnings, never failures.
    assert!(
        pkg.warnings
            .contains(&"skills path \"shared\" does not exist".to_string())
    );
}

#[test]
fn manifest_v2_merge_conflicts_fail() {
    let cases = [
        (
            r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "conflict-demo",
  "hooks": {"SessionStart": [{"command": "./start.sh", "timeout": 5000}]},
  "contributes": {"hooks": {"SessionStart": [{"command": "./start.sh", "timeout": 9000}]}}}"#,
            r#"hook "./start.sh" (event SessionStart) is defined differently in hooks and contributes.hooks"#,
            "contributes.hooks.SessionStart[0]",
        ),
        (
            r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "conflict-demo",
  "mcpServers": {"srv": {"type": "stdio", "command": "./a"}},
  "contributes": {"mcpServers": {"srv": {"type": "stdio", "command": "./b"}}}}"#,
            r#"MCP server "srv" is defined differently in mcpServers and contributes.mcpServers"#,
            "contributes.mcpServers.srv",
        ),
        (
            r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "conflict-demo",
  "hooks": {"SessionStart": [{"contextFile": "ctx.md"}]},
  "contributes": {"hooks": {"SessionStart": [{"contextFile": "ctx.md", "description": "other"}]}}}"#,
            r#"hook "ctx.md" (event SessionStart) is defined differently"#,
            "contributes.hooks.SessionStart[0]",
        ),
    ];
    for (manifest, want, path) in cases {
        let err = load_err(plugin(manifest).path());
        assert_err_contains(&err, want);
        assert_eq!(err.issues.len(), 1, "{err}");
        assert_eq!(err.issues[0].kind, IssueKind::Conflict);
        assert_eq!(err.issues[0].path, path);
    }
}

#[test]
fn manifest_v2_prompts_and_commands_stay_separate_sets() {
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "dual-demo",
  "contributes": {"commands": ["shared"], "prompts": "shared"}}"#,
    );
    write(
        dir.path(),
        "shared/task.md",
        "---\ndescription: task\n---\nDo $ARGUMENTS",
    );
    let pkg = load_ok(dir.path());
    assert_eq!(native(&pkg).commands, strings(&["shared"]));
    assert_eq!(native(&pkg).prompts, strings(&["shared"]));
    assert_eq!(pkg.inventory.command_roots, strings(&["shared"]));
    assert_eq!(pkg.inventory.prompt_roots, strings(&["shared"]));
    assert_eq!(
        pkg.inventory.commands.len(),
        1,
        "the file joins the commands"
    );
    assert_eq!(pkg.inventory.prompts.len(), 1, "and the prompts");
    assert!(pkg.warnings.is_empty(), "{:?}", pkg.warnings);
}

#[test]
fn manifest_v2_runtime_validation() {
    let cases = [
        ("empty command", r#"{}"#, "runtime.command is required"),
        (
            "blank command",
            r#"{"command": "  "}"#,
            "runtime.command is required",
        ),
        (
            "empty arg",
            r#"{"command": "./run", "args": ["ok", ""]}"#,
            "runtime.args[1] must not be empty",
        ),
        (
            "empty env key",
            r#"{"command": "./run", "env": {"": "x"}}"#,
            "runtime.env contains an empty key",
        ),
        (
            "priority too high",
            r#"{"command": "./run", "priority": 1001}"#,
            "runtime.priority 1001 out of range [-1000, 1000]",
        ),
        (
            "priority too low",
            r#"{"command": "./run", "priority": -1001}"#,
            "runtime.priority -1001 out of range [-1000, 1000]",
        ),
        (
            "unknown intercept",
            r#"{"command": "./run", "intercepts": ["input.recieve"]}"#,
            r#"runtime.intercepts: unknown interceptor point "input.recieve""#,
        ),
        (
            "unknown replace slot",
            r#"{"command": "./run", "replaces": ["systemprompt"]}"#,
            r#"runtime.replaces: unknown slot "systemprompt""#,
        ),
        (
            "bad tool slot",
            r#"{"command": "./run", "replaces": ["tool:"]}"#,
            r#"runtime.replaces: invalid tool slot "tool:""#,
        ),
        (
            "bad provider slot",
            r#"{"command": "./run", "replaces": ["provider:openai"]}"#,
            r#"runtime.replaces: invalid provider slot "provider:openai""#,
        ),
        (
            "unknown capability",
            r#"{"command": "./run", "capabilities": ["filesystem"]}"#,
            r#"runtime.capabilities: unknown capability "filesystem" (want one of: interceptors, strategies, providers, ui, tools)"#,
        ),
        (
            "tools without capability",
            r#"{"command": "./run", "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}}]}"#,
            r#"runtime.tools needs "tools" in runtime.capabilities"#,
        ),
        (
            "bad tool name",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "a b", "description": "d", "inputSchema": {"type": "object"}}]}"#,
            r#"runtime.tools[0].name "a b""#,
        ),
        (
            "duplicate tool",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}}, {"name": "t", "description": "d", "inputSchema": {"type": "object"}}]}"#,
            r#"runtime.tools: "t" is declared twice"#,
        ),
        (
            "tool without description",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "t", "description": " ", "inputSchema": {"type": "object"}}]}"#,
            "description is required",
        ),
        (
            "tool schema not an object",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "string"}}]}"#,
            r#"inputSchema must be a JSON schema with "type": "object""#,
        ),
        (
            "tool unknown field",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}, "exec": "rm"}]}"#,
            "exec",
        ),
        // Beyond upstream's list: the rest of this project's runtime rules.
        (
            "shell command",
            r#"{"command": "/bin/bash", "args": ["-c", "x"]}"#,
            r#"runtime.command "/bin/bash" names the shell "bash""#,
        ),
        (
            "powershell command",
            r#"{"command": "C:\\Windows\\PowerShell.exe"}"#,
            r#"names the shell "powershell.exe""#,
        ),
        (
            "shell under plugin root",
            r#"{"command": "${REASONIX_PLUGIN_ROOT}/bin/sh"}"#,
            r#"names the shell "sh""#,
        ),
        (
            "negative timeout",
            r#"{"command": "./run", "timeoutMillis": -1}"#,
            "runtime.timeoutMillis -1 must not be negative",
        ),
        (
            "sandbox on a native runtime",
            r#"{"command": "./run", "sandbox": {}}"#,
            "runtime.sandbox applies only to a wasm runtime",
        ),
        (
            "tool name too long",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "description": "d", "inputSchema": {"type": "object"}}]}"#,
            "must be 1-48 letters, digits, _ or -",
        ),
        (
            "tool without schema",
            r#"{"command": "./run", "capabilities": ["tools"], "tools": [{"name": "t", "description": "d"}]}"#,
            "runtime.tools[0].inputSchema must be a JSON schema",
        ),
        (
            "runtime not an object",
            r#""./run""#,
            "runtime must be an object",
        ),
        (
            "priority not an integer",
            r#"{"command": "./run", "priority": 1.5}"#,
            "runtime.priority must be a 64-bit integer",
        ),
        (
            "provider slot with blank part",
            r#"{"command": "./run", "replaces": ["provider:plugin/ /n/m"]}"#,
            "invalid provider slot",
        ),
    ];
    for (name, runtime, want) in cases {
        let dir = plugin(&format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": "rt-demo", "runtime": {runtime}}}"#
        ));
        let err = load_err(dir.path());
        assert!(
            err.to_string().contains(want),
            "{name}: error\n{err}\nlacks {want:?}"
        );
    }
}

#[test]
fn manifest_v2_runtime_accepts_boundary_values() {
    let points = [
        "session.start",
        "session.end",
        "session.load",
        "session.save",
        "session.rotate",
        "input.receive",
        "agent.before_start",
        "system_prompt.build",
        "context.prepare",
        "provider.request",
        "provider.response",
        "tool.before",
        "tool.after",
        "permission.decision",
        "compaction.prepare",
        "compaction.complete",
        "frontend.event",
    ];
    let slots = [
        "system_prompt",
        "context",
        "provider_request",
        "provider_response",
        "compaction",
        "session_policy",
        "permission",
        "frontend_events",
        "tool:bash",
        "provider:openai/gpt-5",
    ];
    for priority in [-1000, 1000] {
        let dir = plugin(
            &json!({
                "apiVersion": "reasonix.io/plugin/v2",
                "name": "rt-ok",
                "runtime": {
                    "command": "plugin-runtime",
                    "priority": priority,
                    "timeoutMillis": 0,
                    "intercepts": points,
                    "replaces": slots,
                    "capabilities": ["interceptors", "strategies", "providers", "ui", "tools"]
                }
            })
            .to_string(),
        );
        let pkg = load_ok(dir.path());
        let rt = native(&pkg).runtime.as_ref().unwrap();
        assert_eq!(rt.intercepts.len(), 17);
        assert_eq!(rt.replaces.len(), 10);
        assert_eq!(rt.priority, priority);
        assert_eq!(rt.timeout_millis(), None, "0 keeps the host defaults");
        assert_eq!(rt.capabilities.len(), 5);
    }
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "rt-ok",
        "runtime": {"command": "./run", "replaces": ["provider:plugin/other/fake/x", "tool:read_file"], "timeoutMillis": 5000}}"#,
    );
    let pkg = load_ok(dir.path());
    let rt = native(&pkg).runtime.as_ref().unwrap();
    assert_eq!(rt.timeout_millis(), Some(5000));
    assert_eq!(rt.declared_timeout_millis, 5000);
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "rt-ok", "runtime": {"command": "./run", "timeoutMillis": 600000}}"#,
    );
    let pkg = load_ok(dir.path());
    let rt = native(&pkg).runtime.as_ref().unwrap();
    assert_eq!(rt.declared_timeout_millis, 600_000, "kept as declared");
    assert_eq!(
        rt.timeout_millis(),
        Some(60_000),
        "clamped to the 60 s ceiling"
    );
}

#[test]
fn manifest_v2_runtime_declares_tools() {
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "rt-tools", "runtime": {"command": "./run", "capabilities": ["tools"], "tools": [
        {"name": "lookup", "description": "Look a term up", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}, "readOnly": true},
        {"name": "write-note_2", "description": "Write a note", "inputSchema": {"type": "object"}}]}}"#,
    );
    let pkg = load_ok(dir.path());
    let tools = &native(&pkg).runtime.as_ref().unwrap().tools;
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].name, "lookup");
    assert!(tools[0].read_only);
    assert_eq!(tools[0].input_schema["properties"]["q"]["type"], "string");
    assert!(!tools[1].read_only);
}

#[test]
fn expand_runtime_command() {
    let m: Manifest = r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "x",
        "runtime": {"command": "${REASONIX_PLUGIN_ROOT}/bin/example",
                    "args": ["--config=${REASONIX_PLUGIN_ROOT}/cfg.json", "$HOME", "a b"]}}"#
        .parse()
        .unwrap();
    let root = Path::new("/plugins/example");
    let cmd = m.runtime.as_ref().unwrap().expand_runtime_command(root);
    assert_eq!(cmd.program, "/plugins/example/bin/example");
    assert_eq!(
        cmd.args,
        strings(&["--config=/plugins/example/cfg.json", "$HOME", "a b"]),
        "only the plugin-root variable is substituted; nothing else is interpreted"
    );
    let bare: Manifest = r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "x", "runtime": {"command": "plugin-runtime"}}"#
        .parse()
        .unwrap();
    let cmd = bare.runtime.unwrap().expand_runtime_command(root);
    assert_eq!(cmd.program, "plugin-runtime");
    assert!(cmd.args.is_empty());
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[test]
fn manifest_v2_path_safety() {
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "esc", "contributes": {"skills": ["../outside"]}}"#,
    );
    let err = load_err(dir.path());
    assert_err_contains(
        &err,
        r#"plugin path "../outside" must be relative and stay inside the plugin root"#,
    );
    assert_eq!(err.issues[0].path, "contributes.skills[0]");
    assert_eq!(err.issues[0].kind, IssueKind::PathNotRelative);

    for absolute in [
        "/etc/passwd",
        r"C:\Windows\System32\drivers\etc\hosts",
        r"\\server\share\secret.txt",
        "d:/data",
        "a/../../b",
    ] {
        let dir = plugin(
            &json!({"apiVersion": "reasonix.io/plugin/v2", "name": "abs", "contributes": {"prompts": [absolute]}})
                .to_string(),
        );
        let err = load_err(dir.path());
        assert_err_contains(&err, "must be relative and stay inside the plugin root");
    }

    // Symlink escape.
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "evil.md", "evil");
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "linkesc", "contributes": {"skills": ["skills-link"]}}"#,
    );
    symlink(outside.path(), &dir.path().join("skills-link"));
    let err = load_err(dir.path());
    assert_err_contains(
        &err,
        r#"skills path "skills-link" escapes the plugin root through a symlink"#,
    );
    assert_eq!(err.issues[0].kind, IssueKind::SymlinkEscape);

    // In-root symlink accepted.
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "linkok", "contributes": {"skills": ["skills-link"]}}"#,
    );
    write(
        dir.path(),
        "real-skills/s/SKILL.md",
        "---\ndescription: s\n---\nS",
    );
    symlink(
        &dir.path().join("real-skills"),
        &dir.path().join("skills-link"),
    );
    let pkg = load_ok(dir.path());
    assert!(pkg.warnings.is_empty(), "{:?}", pkg.warnings);

    // A root reached through a symlink is resolved before comparing.
    let parent = tempfile::tempdir().unwrap();
    symlink(dir.path(), &parent.path().join("alias"));
    load_ok(&parent.path().join("alias"));

    // Theme symlink escape.
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "evil.reasonix-theme", "evil");
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "themesc", "contributes": {"themes": ["themes/*.reasonix-theme"]}}"#,
    );
    fs::create_dir_all(dir.path().join("themes")).unwrap();
    symlink(
        &outside.path().join("evil.reasonix-theme"),
        &dir.path().join("themes/evil.reasonix-theme"),
    );
    let err = load_err(dir.path());
    assert_err_contains(&err, "escapes the plugin root through a symlink");

    // Non-regular theme.
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "themedir", "contributes": {"themes": ["themes"]}}"#,
    );
    fs::create_dir_all(dir.path().join("themes")).unwrap();
    let err = load_err(dir.path());
    assert_err_contains(&err, r#"theme "themes" is not a regular file"#);
    assert_eq!(err.issues[0].kind, IssueKind::NotRegularFile);

    // Missing paths are warnings, not failures.
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "missing-demo",
  "contributes": {"skills": ["no-such-skills"], "prompts": ["no-such-prompts"], "agents": "no-agents",
                  "themes": ["themes/*.reasonix-theme", "plain.reasonix-theme"]}}"#,
    );
    let pkg = load_ok(dir.path());
    for want in [
        r#"skills path "no-such-skills" does not exist"#,
        r#"prompts path "no-such-prompts" does not exist"#,
        r#"agents path "no-agents" does not exist"#,
        r#"theme glob "themes/*.reasonix-theme" matched no files"#,
        r#"themes path "plain.reasonix-theme" does not exist"#,
    ] {
        assert!(
            pkg.warnings.iter().any(|w| w == want),
            "missing {want:?} in {:?}",
            pkg.warnings
        );
    }
    assert!(pkg.inventory.themes.is_empty());
}

#[test]
fn parse_and_disk_errors_are_reported_together() {
    let outside = tempfile::tempdir().unwrap();
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "both", "typo": 1, "contributes": {"skills": ["link"]}}"#,
    );
    symlink(outside.path(), &dir.path().join("link"));
    let err = load_err(dir.path());
    assert_err_contains(&err, r#"unknown field "typo""#);
    assert_err_contains(&err, "escapes the plugin root through a symlink");
}

#[test]
fn manifest_v2_requires_provides() {
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "deps", "version": "2.0.0",
  "requires": [{"namespace": "reasonix", "kind": "provider", "id": "deepseek/v4", "versionRange": ">=1.0.0", "optional": false},
               {"namespace": "plugin/other", "kind": "tool", "id": "x", "version": "v1.2.3", "schemaHash": "sha256:1", "optional": true}],
  "provides": [{"namespace": "plugin/deps", "kind": "provider", "id": "fake/x", "version": "1.0.0", "schemaHash": "sha256:abc"},
               {"namespace": "plugin/deps", "kind": "interceptors", "id": "default", "version": "1.0.0-rc.1"}]}"#,
    );
    let pkg = load_ok(dir.path());
    let m = native(&pkg);
    assert_eq!(m.requires.len(), 2);
    assert_eq!(m.provides.len(), 2);
    assert_eq!(m.requires[0].key(), "reasonix/provider/deepseek/v4");
    assert_eq!(m.requires[0].version_range.as_deref(), Some(">=1.0.0"));
    assert!(m.requires[1].optional);
    assert_eq!(m.provides[0].schema_hash.as_deref(), Some("sha256:abc"));

    let cases = [
        (
            r#""provides": [{"namespace": "plugin/d", "kind": "interceptors", "id": "a", "version": "1.0.0"},
                            {"namespace": "plugin/d", "kind": "interceptors", "id": "a", "version": "2.0.0"}]"#,
            "provides[1]: duplicate capability plugin/d/interceptors/a",
        ),
        (
            r#""provides": [{"namespace": "plugin/d", "kind": "interceptors", "id": "a"}]"#,
            "provides[0]: provided capability plugin/d/interceptors/a needs a semver version",
        ),
        (
            r#""provides": [{"namespace": "plugin/d", "kind": "interceptors", "id": "a", "version": "1.0"}]"#,
            r#"provides[0]: capability plugin/d/interceptors/a has an invalid version "1.0""#,
        ),
        (
            r#""requires": [{"namespace": "plugin d", "kind": "tool", "id": "a"}]"#,
            r#"requires[0]: invalid capability key "plugin d/tool/a""#,
        ),
        (
            r#""requires": [{"namespace": "n", "kind": "", "id": "a"}]"#,
            "requires[0]: invalid capability key",
        ),
        (
            r#""requires": [{"namespace": "n", "kind": "k", "id": "a", "versionRange": "~1.0"}]"#,
            r#"requires[0]: capability n/k/a has an invalid versionRange "~1.0""#,
        ),
        (
            r#""requires": {"namespace": "n"}"#,
            "requires must be an array",
        ),
        (
            r#""provides": ["plugin/x"]"#,
            "provides[0] must be an object",
        ),
    ];
    for (fields, want) in cases {
        let dir = plugin(&format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": "bad", {fields}}}"#
        ));
        let err = load_err(dir.path());
        assert_err_contains(&err, want);
    }
}

#[test]
fn manifest_v2_provider_requires_schema_hash() {
    for kind in ["provider", "tool", "ui", "uiaction", "browser"] {
        let dir = plugin(&format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": "bad",
            "provides": [{{"namespace": "plugin/bad", "kind": "{kind}", "id": "x", "version": "1.0.0"}}]}}"#
        ));
        let err = load_err(dir.path());
        assert_err_contains(&err, "schemaHash");
        assert_err_contains(
            &err,
            &format!(
                "provides[0]: provided capability plugin/bad/{kind}/x of kind {kind} needs a schemaHash"
            ),
        );
    }
    // Other kinds need none.
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "ok",
        "provides": [{"namespace": "plugin/ok", "kind": "strategies", "id": "x", "version": "1.0.0"}]}"#,
    );
    load_ok(dir.path());
}

#[test]
fn manifest_v2_loads_only_explicitly_declared_resources() {
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "explicit-only",
        "contributes": {"skills": ["skills"], "commands": ["commands"], "agents": ["agents"]}}"#,
    );
    write(
        dir.path(),
        "skills/plan/SKILL.md",
        "---\ndescription: plan work\n---\nPlan carefully.",
    );
    write(
        dir.path(),
        "commands/spec.md",
        "---\ndescription: write a spec\n---\nWrite a spec.",
    );
    write(
        dir.path(),
        "agents/reviewer.md",
        "---\nname: reviewer\ndescription: review changes\n---\nReview.",
    );
    write(
        dir.path(),
        "CLAUDE.md",
        "Repository maintenance instructions.",
    );
    write(
        dir.path(),
        "hooks/hooks.json",
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "bin/start"}]}]}}"#,
    );
    write(
        dir.path(),
        ".mcp.json",
        r#"{"mcpServers": {"helper": {"command": "bin/helper"}}}"#,
    );
    write(
        dir.path(),
        ".claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
    );
    let pkg = load_ok(dir.path());
    assert!(pkg.warnings.is_empty(), "{:?}", pkg.warnings);
    let inv = &pkg.inventory;
    assert_eq!(
        (inv.skills.len(), inv.commands.len(), inv.agents.len()),
        (1, 1, 1),
        "declared roots are discovered"
    );
    assert!(
        pkg.inventory.hooks.is_empty(),
        "sidecar hook files are not imported"
    );
    assert!(
        pkg.inventory.mcp_servers.is_empty(),
        ".mcp.json is not imported"
    );
    assert!(native(&pkg).hooks.is_empty() && native(&pkg).mcp_servers.is_empty());
    assert_eq!(pkg.compatibility.status, CompatibilityStatus::Full);
}

#[test]
fn native_manifest_wins_the_lookup() {
    let dir = plugin(r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "native-first"}"#);
    write(
        dir.path(),
        ".codex-plugin/plugin.json",
        r#"{"name": "codex"}"#,
    );
    write(
        dir.path(),
        ".claude-plugin/plugin.json",
        r#"{"name": "claude"}"#,
    );
    let pkg = load_ok(dir.path());
    assert_eq!(pkg.kind, ManifestKind::Reasonix);
    assert_eq!(pkg.name, "native-first");
    // A broken native manifest never falls through to the others.
    write(dir.path(), "reasonix-plugin.json", "{not json");
    let err = load_err(dir.path());
    assert!(err.has(&IssueKind::InvalidJson));
    assert_err_contains(&err, "reasonix-plugin.json: invalid JSON");
}

#[test]
fn no_manifest_and_missing_root_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        load_package(dir.path()),
        Err(PackageError::NoManifest(_))
    ));
    assert!(matches!(
        load_package(&dir.path().join("absent")),
        Err(PackageError::Io { .. })
    ));
    write(dir.path(), "file", "x");
    assert!(matches!(
        load_package(&dir.path().join("file")),
        Err(PackageError::Io { .. })
    ));
}

#[test]
fn hook_rules() {
    let ok = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "hooks-ok", "contributes": {"hooks": {
        "SessionStart": [
          {"command": "hooks/session-start", "args": [], "description": "Load startup context"},
          {"command": "printf 'ready' && ./hooks/audit", "shell": "bash"},
          {"contextFile": "context/startup.md"},
          {"command": "fish", "args": ["-c", "x"], "shell": "fish"},
          {"command": "/usr/bin/env", "ARGS": ["true"], "cwd": "/tmp", "timeout": 3000, "async": true,
           "env": {"A": "1"}, "payloadFormat": "claude", "match": "Bash"},
          {"command": "legacy shell line"},
          {"command": "x", "shell": "PowerShell"}
        ]}}}"#,
    );
    let pkg = load_ok(ok.path());
    let hooks = &native(&pkg).hooks["SessionStart"];
    assert_eq!(hooks.len(), 7);
    assert_eq!(
        hooks[0].args,
        Some(vec![]),
        "args: [] is recorded as exec form"
    );
    assert!(!hooks[0].shell_command);
    assert_eq!(hooks[1].args, None);
    assert!(hooks[1].shell_command, "shell without args is shell form");
    assert_eq!(hooks[2].context_file.as_deref(), Some("context/startup.md"));
    assert_eq!(
        hooks[3].shell.as_deref(),
        Some("fish"),
        "exec form ignores shell"
    );
    assert_eq!(
        hooks[4].args,
        Some(strings(&["true"])),
        "args key matched in any case"
    );
    assert_eq!(hooks[4].timeout, Some(3000));
    assert!(hooks[4].is_async);
    assert_eq!(hooks[5].args, None);
    assert!(!hooks[5].shell_command, "neither field: legacy behaviour");
    assert_eq!(
        hooks[6].shell.as_deref(),
        Some("powershell"),
        "shell is case-insensitive"
    );
    let inv = &pkg.inventory.hooks;
    assert_eq!(inv[0].args, Some(vec![]));
    assert_eq!(inv[4].timeout_ms, Some(3000));
    assert_eq!(inv[4].matcher.as_deref(), Some("Bash"));
    assert_eq!(inv[4].env["A"], "1");
    // The model's JSON form keeps an empty args array.
    let round: reasonix_package::Hook =
        serde_json::from_value(serde_json::to_value(&inv[0]).unwrap()).unwrap();
    assert_eq!(round.args, Some(vec![]));

    let cases = [
        (
            r#"{"shell": "fish", "command": "x"}"#,
            r#"hooks.Stop[0]: hook shell "fish" is not supported (use auto, bash, powershell, pwsh, or cmd)"#,
        ),
        (
            r#"{"description": "nothing to run"}"#,
            "hooks.Stop[0]: hook command or contextFile is required",
        ),
        (
            r#"{"command": "../escape.sh"}"#,
            r#"plugin path "../escape.sh" must be relative and stay inside the plugin root"#,
        ),
        (
            r#"{"contextFile": "/etc/motd"}"#,
            r#"plugin path "/etc/motd" must be relative"#,
        ),
        (
            r#"{"command": "./x", "cwd": "../.."}"#,
            r#"plugin path "../.." must be relative"#,
        ),
        (
            r#"{"command": "./x", "timeout": -5}"#,
            "hook timeout -5 must not be negative",
        ),
        (
            r#"{"command": "./x", "args": "a b"}"#,
            "hooks.Stop[0].args must be an array of strings",
        ),
        (
            r#"{"command": "./x", "env": {"A": 1}}"#,
            "hooks.Stop[0].env.A must be a string",
        ),
        (r#""./x""#, "hooks.Stop[0] must be an object"),
    ];
    for (entry, want) in cases {
        let dir = plugin(&format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": "h", "hooks": {{"Stop": [{entry}]}}}}"#
        ));
        let err = load_err(dir.path());
        assert_err_contains(&err, want);
    }
    let err = load_err(
        plugin(r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "h", "hooks": {"Stop": {"command": "x"}}}"#).path(),
    );
    assert_err_contains(&err, "hooks.Stop must be an array of hook entries");
}

#[test]
fn mcp_server_rules() {
    let cases = [
        (
            r#""bad name!": {"command": "./x"}"#,
            r#"invalid MCP server name "bad name!""#,
        ),
        (
            r#""s": {"type": "websocket", "url": "wss://x"}"#,
            r#"mcpServers.s: unsupported MCP transport "websocket""#,
        ),
        (
            r#""s": {"type": "stdio"}"#,
            "mcpServers.s: a stdio MCP server needs a command",
        ),
        (
            r#""s": {"type": "sse"}"#,
            "mcpServers.s: an sse MCP server needs a url",
        ),
        (
            r#""s": {"command": "./x", "auto_start": "yes"}"#,
            "mcpServers.s.auto_start must be a boolean",
        ),
    ];
    for (servers, want) in cases {
        let dir = plugin(&format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": "m", "mcpServers": {{{servers}}}}}"#
        ));
        assert_err_contains(&load_err(dir.path()), want);
    }
    let dir = plugin(
        r#"{"apiVersion": "reasonix.io/plugin/v2", "name": "m", "contributes": {"mcpServers": {
        "docs": {"type": "streamable-http", "url": "https://x.invalid/mcp", "headers": {"Authorization": "${DOCS_TOKEN}"},
                 "auto_start": true, "display_name": "Docs", "load": "always"},
        "local": {"type": "local", "command": "bin/helper", "args": ["--stdio"], "env": {"K": "v"}}}}}"#,
    );
    let pkg = load_ok(dir.path());
    let servers = &pkg.inventory.mcp_servers;
    assert_eq!(servers.len(), 2);
    let docs = servers.iter().find(|s| s.name == "docs").unwrap();
    assert_eq!(docs.transport, "http");
    assert!(docs.auto_start);
    assert_eq!(docs.headers["Authorization"], "${DOCS_TOKEN}");
    assert_eq!(docs.display_name.as_deref(), Some("Docs"));
    assert_eq!(docs.load.as_deref(), Some("always"));
    let local = servers.iter().find(|s| s.name == "local").unwrap();
    assert_eq!(local.transport, "stdio");
    assert_eq!(local.args, strings(&["--stdio"]));
}

#[test]
fn identity_fields() {
    let cases = [
        (r#""name": "bad name""#, r#"invalid plugin name "bad name""#),
        (r#""name": "-lead""#, r#"invalid plugin name "-lead""#),
        (r#""name": "  ""#, "name is required"),
        (r#""version": "1.0.0""#, "name is required"),
        (r#""name": 7"#, "name must be a string (got number)"),
        (
            r#""name": "ok", "homepage": ["x"]"#,
            "homepage must be a string (got array)",
        ),
        (
            r#""name": "ok", "contributes": []"#,
            "contributes must be an object (got array)",
        ),
        (
            r#""name": "ok", "skills": 3"#,
            "skills must be a path string, string array, or object array",
        ),
        (
            r#""name": "ok", "contributes": {"skills": [1]}"#,
            "contributes.skills[0] must be a path string",
        ),
        (
            r#""name": "ok", "contributes": {"skills": [{"path": ""}]}"#,
            "contributes.skills[0]: plugin path is required",
        ),
        (
            r#""name": "ok", "contributes": {"themes": ["themes/[a-/theme.json"]}"#,
            r#"invalid theme glob "themes/[a-/theme.json""#,
        ),
    ];
    for (fields, want) in cases {
        let dir = plugin(&format!(
            r#"{{"apiVersion": "reasonix.io/plugin/v2", {fields}}}"#
        ));
        assert_err_contains(&load_err(dir.path()), want);
    }
    let long = "a".repeat(64);
    assert!(valid_plugin_name(&long));
    let dir = plugin(&format!(
        r#"{{"apiVersion": "reasonix.io/plugin/v2", "name": " {long} ", "version": " 1.2.3 ",
        "description": "  d  ", "homepage": "https://h.invalid", "repository": "https://r.invalid",
        "contributes": {{"skills": [" ./a/ ", "a", "b\\c", {{"path": "a/./"}}]}}}}"#
    ));
    let pkg = load_ok(dir.path());
    assert_eq!(pkg.name, long);
    assert_eq!(pkg.version.as_deref(), Some("1.2.3"));
    assert_eq!(pkg.description.as_deref(), Some("d"));
    assert_eq!(pkg.homepage.as_deref(), Some("https://h.invalid"));
    assert_eq!(pkg.repository.as_deref(), Some("https://r.invalid"));
    assert_eq!(
        pkg.inventory.skill_roots,
        strings(&["a", "b/c"]),
        "cleaned, deduped, sorted"
    );
}

fn theme_plugin(pattern: &str) -> tempfile::TempDir {
    plugin(&format!(
        r#"{{"apiVersion":"reasonix.io/plugin/v2","name":"glob-files","contributes":{{"themes":["{pattern}"]}}}}"#
    ))
}

#[test]
fn theme_globs_skip_file_siblings_before_remaining_segments() {
    struct Case {
        name: &'static str,
        pattern: &'static str,
        theme: Option<&'static str>,
        note: &'static str,
        file_link: bool,
        dir_link: bool,
    }
    let cases = [
        Case {
            name: "one wildcard",
            pattern: "themes/*/theme.json",
            theme: Some("themes/dawn/theme.json"),
            note: "themes/README.md",
            file_link: false,
            dir_link: false,
        },
        Case {
            name: "nested wildcards",
            pattern: "themes/*/palettes/*/theme.json",
            theme: Some("themes/collection/palettes/dawn/theme.json"),
            note: "themes/collection/palettes/README.md",
            file_link: false,
            dir_link: false,
        },
        Case {
            name: "file alias",
            pattern: "themes/*/theme.json",
            theme: Some("themes/dawn/theme.json"),
            note: "themes/README.md",
            file_link: true,
            dir_link: false,
        },
        Case {
            name: "directory alias",
            pattern: "themes/*/theme.json",
            theme: Some("themes/dawn/theme.json"),
            note: "themes/README.md",
            file_link: false,
            dir_link: true,
        },
        Case {
            name: "only files",
            pattern: "themes/*/theme.json",
            theme: None,
            note: "themes/README.md",
            file_link: false,
            dir_link: false,
        },
    ];
    for c in cases {
        let dir = theme_plugin(c.pattern);
        let root = dir.path();
        write(root, c.note, "Theme author notes.");
        if let Some(theme) = c.theme {
            write(root, theme, r#"{"schemaVersion":1}"#);
        }
        if c.file_link {
            symlink(&root.join(c.note), &root.join("themes/notes-link"));
        }
        if c.dir_link {
            symlink(&root.join("themes/dawn"), &root.join("themes/dawn-alias"));
        }
        let pkg = load(root).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let themes = &pkg.inventory.themes;
        match c.theme {
            None => {
                assert!(themes.is_empty(), "{}", c.name);
                assert_eq!(pkg.warnings.len(), 1, "{}: {:?}", c.name, pkg.warnings);
                assert!(pkg.warnings[0].contains("matched no files"), "{}", c.name);
            }
            Some(_) if c.dir_link => {
                assert_eq!(
                    themes.len(),
                    2,
                    "{}: directory aliases count separately: {themes:?}",
                    c.name
                );
                assert!(pkg.warnings.is_empty(), "{}", c.name);
            }
            Some(theme) => {
                assert_eq!(themes.len(), 1, "{}: {themes:?}", c.name);
                assert_eq!(themes[0].path, theme, "{}", c.name);
                assert_eq!(themes[0].name, "dawn", "{}", c.name);
                assert!(pkg.warnings.is_empty(), "{}: {:?}", c.name, pkg.warnings);
            }
        }
    }
}

#[test]
fn theme_glob_still_validates_final_candidates() {
    // A directory matched by the final segment.
    let dir = theme_plugin("themes/*");
    fs::create_dir_all(dir.path().join("themes/directory")).unwrap();
    let err = load_err(dir.path());
    assert_err_contains(&err, r#"theme "themes/*" is not a regular file"#);

    // A dangling link where the glob needs a directory.
    let dir = theme_plugin("themes/*/theme.json");
    fs::create_dir_all(dir.path().join("themes")).unwrap();
    symlink(
        &dir.path().join("missing"),
        &dir.path().join("themes/unresolved"),
    );
    let err = load_err(dir.path());
    assert_err_contains(&err, r#"theme "themes/*/theme.json" cannot be resolved"#);

    // A dangling final candidate.
    let dir = theme_plugin("themes/*.reasonix-theme");
    fs::create_dir_all(dir.path().join("themes")).unwrap();
    symlink(
        &dir.path().join("gone"),
        &dir.path().join("themes/x.reasonix-theme"),
    );
    let err = load_err(dir.path());
    assert_err_contains(
        &err,
        r#"theme "themes/*.reasonix-theme" cannot be resolved"#,
    );

    // Plain .reasonix-theme files and theme.json packs side by side, names per §a.12.
    let dir = plugin(
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"mixed","contributes":{"themes":
        ["themes/*.reasonix-theme","packs/*/theme.json","packs/dawn/theme.json","t?.reasonix-theme"]}}"#,
    );
    write(dir.path(), "themes/neon.reasonix-theme", "x");
    write(dir.path(), "themes/ignored.txt", "x");
    write(dir.path(), "packs/dawn/theme.json", "{}");
    write(dir.path(), "packs/dusk/theme.json", "{}");
    write(dir.path(), "packs/empty/README.md", "no theme here");
    write(dir.path(), "t1.reasonix-theme", "x");
    let pkg = load_ok(dir.path());
    let names: Vec<&str> = pkg
        .inventory
        .themes
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["dawn", "dusk", "neon", "t1"],
        "deduplicated and sorted by name"
    );
    assert!(pkg.warnings.is_empty(), "{:?}", pkg.warnings);
}

/// Deterministic mutation of a full manifest: truncations, byte flips and
/// splices. The parser and the loader must answer every one without panicking.
#[test]
fn arbitrary_input_never_panics() {
    let base = V2_EXAMPLE.as_bytes();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for cut in 0..base.len() {
        let _ = Manifest::from_slice(&base[..cut]);
    }
    let alphabet = b"{}[]\":,0123456789-.eE \\/nulltruefalse\x00\xff\xc3";
    for _ in 0..3000 {
        let mut bytes = base.to_vec();
        for _ in 0..(next() % 6 + 1) {
            let at = (next() as usize) % bytes.len();
            let b = alphabet[(next() as usize) % alphabet.len()];
            match next() % 3 {
                0 => bytes[at] = b,
                1 => bytes.insert(at, b),
                _ => {
                    bytes.remove(at);
                }
            }
        }
        if let Ok(m) = Manifest::from_slice(&bytes) {
            // Whatever parses must survive its own canonical form.
            assert_eq!(Manifest::from_value(&m.to_document()).unwrap(), m);
        }
    }
    let deep = "[".repeat(10_000);
    assert!(Manifest::from_slice(deep.as_bytes()).is_err());
}
