//! `reasonix doctor capabilities [--json]` through the real binary, for a
//! home holding a native, a Claude and a Codex package (two of them the real
//! public packages under `shared/fixtures`), plus packages broken in each way
//! the stable codes name. The JSON is validated against the a.11 schema in
//! `tests/doctor_capabilities.schema.json`; paths, secrets, length limits and
//! ordering are attacked directly.
mod plugin_common;

use std::fs;
use std::path::{Path, PathBuf};

use plugin_common::*;
use serde_json::{Value, json};

fn fixture(rel: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/real-packages")
        .join(rel);
    assert!(dir.is_dir(), "fixture not found at {}", dir.display());
    dir
}

fn schema() -> jsonschema::Validator {
    let text = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/doctor_capabilities.schema.json"),
    )
    .unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn assert_valid(report: &Value) {
    let validator = schema();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "schema violations:\n{}",
        errors.join("\n")
    );
}

/// A sandbox whose Reasonix home sits in the user's home (`~/.reasonix`).
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    let home = sb.user.join(".reasonix").to_string_lossy().into_owned();
    let mut sb = sb.with_env("REASONIX_HOME", &home);
    sb.home = sb.user.join(".reasonix");
    sb
}

const SECRET: &str = "sk-live-0123456789abcdefghijklmnop";
const GH_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// A native package with a runtime whose binary is missing, hooks with an
/// invalid matcher and a missing context file, an MCP stdio server whose
/// command does not exist (its env holds a secret), an http server whose URL
/// carries credentials, and a skill with a 1000-character description.
fn native(dir: &Path) {
    write(
        &dir.join("reasonix-plugin.json"),
        &json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": "native-kit",
            "version": "3.1.0",
            "contributes": {
                "skills": ["skills"],
                "prompts": ["prompts"],
                "themes": ["themes/*/theme.json"],
                "hooks": {
                    "PreToolUse": [{"match": "(unclosed", "command": "/bin/true"}],
                    "SessionStart": [{"contextFile": "context/missing.md"}],
                    "Stop": [{"command": "echo done", "shell": "cmd"}],
                    "OnBogus": [{"command": "/bin/true"}],
                    "PostToolUse": [{"command": "echo $REASONIX_NOT_A_VAR", "shell": "bash"}]
                },
                "mcpServers": {
                    "indexer": {"command": "definitely-not-installed-indexer", "args": ["--token", SECRET], "env": {"INDEXER_TOKEN": SECRET}},
                    "remote": {"type": "http", "url": format!("https://bobuser9:{SECRET}@api.example.com:8443/mcp?api_key={SECRET}"), "headers": {"Authorization": format!("Bearer {SECRET}")}}
                }
            },
            "runtime": {
                "command": "${REASONIX_PLUGIN_ROOT}/bin/native-kit",
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors", "tools"],
                "tools": [{"name": "lookup", "description": "Look up", "inputSchema": {"type": "object"}}]
            }
        })
        .to_string(),
    );
    let long = "word ".repeat(200);
    write(
        &dir.join("skills/long/SKILL.md"),
        &format!("---\ndescription: {long}\n---\nBody\n"),
    );
    write(
        &dir.join("skills/leaky/SKILL.md"),
        &format!("---\ndescription: uses {GH_TOKEN} from /etc/secret-dir/creds.txt\n---\nBody\n"),
    );
    write(
        &dir.join("skills/bare/SKILL.md"),
        "No frontmatter at all.\n",
    );
    write(
        &dir.join("prompts/review.md"),
        "---\ndescription: r\n---\nReview $1\n",
    );
    write(&dir.join("themes/broken/theme.json"), "{ nope");
}

/// A Claude package whose hooks file is malformed (its skill still maps).
fn claude_with_bad_hooks(dir: &Path) {
    write(
        &dir.join(".claude-plugin/plugin.json"),
        r#"{"name":"bad-hooks"}"#,
    );
    write(&dir.join("skills/s/SKILL.md"), "---\ndescription: s\n---\n");
    write(&dir.join("hooks/hooks.json"), "{\"hooks\": {");
}

#[test]
fn a_home_with_native_claude_and_codex_packages_reports_every_field() {
    let sb = sandbox();
    write(&sb.home.join("REASONIX.md"), "global rules\n");
    write(&sb.work.join("AGENTS.md"), "project rules\n");
    write(&sb.work.join("CLAUDE.local.md"), "mine\n");
    let src = sb.dir.path().join("src");
    native(&src.join("native-kit"));
    claude_with_bad_hooks(&src.join("bad-hooks"));
    native_package(&src.join("sleepy"), "sleepy", "1.0.0");
    native_package(&src.join("gone"), "gone", "1.0.0");
    native_package(&src.join("broken"), "broken", "1.0.0");
    let installs = [
        src.join("native-kit"),
        fixture("anthropics__claude-code/plugins/hookify"),
        fixture("obra__superpowers"),
        src.join("bad-hooks"),
        src.join("sleepy"),
        src.join("gone"),
        src.join("broken"),
    ];
    for dir in &installs {
        sb.ok(&["plugin", "install", dir.to_str().unwrap(), "--yes"]);
    }
    sb.ok(&["plugin", "disable", "sleepy"]);
    fs::remove_dir_all(sb.home.join("plugins/gone")).unwrap();
    write(
        &sb.home.join("plugins/broken/reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"broken","bogus":true}"#,
    );
    let registry_before = fs::read(sb.home.join("plugin-packages.json")).unwrap();

    let out = sb.run(&["doctor", "capabilities", "--json"]);
    assert_eq!(out.status.code(), Some(1), "errors exit 1");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let report: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_valid(&report);

    // Read-only: the registry is untouched (no incompatible mark, no repair).
    assert_eq!(
        fs::read(sb.home.join("plugin-packages.json")).unwrap(),
        registry_before
    );

    // Nothing machine-local or secret leaks.
    let sandbox_path = sb.dir.path().to_string_lossy().into_owned();
    for leak in [
        sandbox_path.as_str(),
        SECRET,
        GH_TOKEN,
        "/etc/secret-dir",
        "bobuser9",
    ] {
        assert!(!stdout.contains(leak), "{leak:?} leaked:\n{stdout}");
    }

    assert_eq!(report["root"], "<workspace>");
    assert_eq!(report["live"], false);
    let docs: Vec<(&str, &str)> = report["instructions"]["docs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].as_str().unwrap(), d["scope"].as_str().unwrap()))
        .collect();
    assert_eq!(
        docs,
        [
            ("~/.reasonix/REASONIX.md", "user"),
            ("<workspace>/AGENTS.md", "project"),
            ("<workspace>/CLAUDE.local.md", "local"),
        ]
    );

    // Packages: by name, with status, counts, prompts/themes and the runtime flag.
    let packages = report["plugins"]["packages"].as_array().unwrap();
    let row = |name: &str| packages.iter().find(|p| p["name"] == name).unwrap().clone();
    let names: Vec<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bad-hooks",
            "broken",
            "gone",
            "hookify",
            "native-kit",
            "sleepy",
            "superpowers"
        ]
    );
    assert_eq!(
        report["plugins"]["state_path"],
        "~/.reasonix/plugin-packages.json"
    );
    let kit = row("native-kit");
    assert_eq!(kit["root"], "~/.reasonix/plugins/native-kit");
    assert_eq!(kit["manifest_kind"], "reasonix");
    assert_eq!(
        (
            kit["skills"].as_u64(),
            kit["prompts"].as_u64(),
            kit["themes"].as_u64()
        ),
        (Some(3), Some(1), Some(1))
    );
    assert_eq!(
        (kit["hooks"].as_u64(), kit["mcp_servers"].as_u64()),
        (Some(5), Some(2))
    );
    assert_eq!(kit["runtime"], true);
    assert_eq!(row("hookify")["manifest_kind"], "claude");
    assert_eq!(row("hookify")["runtime"], false);
    assert_eq!(row("superpowers")["manifest_kind"], "codex");
    assert_eq!(row("superpowers")["skills"], 14);
    assert_eq!(row("sleepy")["status"], "disabled");
    assert_eq!(row("gone")["status"], "missing_root");
    assert_eq!(row("broken")["status"], "invalid_manifest");

    // MCP: keys only, host only, start intent, owner.
    let servers = report["mcp"]["servers"].as_array().unwrap();
    let indexer = servers.iter().find(|s| s["name"] == "indexer").unwrap();
    assert_eq!(indexer["command"], "definitely-not-installed-indexer");
    assert_eq!(indexer["env_keys"], json!(["INDEXER_TOKEN"]));
    assert_eq!(indexer["start_intent"], "off");
    assert_eq!(indexer["package_owner"], "native-kit");
    let remote = servers.iter().find(|s| s["name"] == "remote").unwrap();
    assert_eq!(remote["url_host"], "api.example.com:8443");
    assert_eq!(remote["header_keys"], json!(["Authorization"]));

    // Skills: qualified names, the disabled package's skill marked, the
    // long description cut at 400 characters.
    let skills = report["skills"]["entries"].as_array().unwrap();
    let skill = |name: &str| skills.iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(skill("sleepy:greet")["status"], "disabled");
    assert_eq!(skill("superpowers:brainstorming")["status"], "winner");
    let long = skill("native-kit:long")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(long.chars().count(), 401, "{long}");
    assert!(long.ends_with('…'));
    let leaky = skill("native-kit:leaky")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(leaky.contains("<external>/creds.txt"), "{leaky}");

    // Hooks: the real package's hooks, with blocking flags.
    let hooks = report["hooks"]["entries"].as_array().unwrap();
    assert!(hooks.iter().any(|h| h["scope"] == "plugin:hookify"
        && h["event"] == "PreToolUse"
        && h["blocking"] == true));
    assert!(hooks.iter().any(|h| h["scope"] == "plugin:superpowers"
        && h["context_file"] == "~/.reasonix/plugins/superpowers/CLAUDE.md"));
    let bad_source = report["hooks"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == "plugin:bad-hooks")
        .unwrap()
        .clone();
    assert_eq!(bad_source["status"], "malformed");

    // Every stable code the fixtures provoke, with its severity.
    let issues = report["issues"].as_array().unwrap();
    let has = |severity: &str, code: &str, name: &str| {
        issues.iter().any(|i| {
            i["severity"] == severity
                && i["code"] == code
                && i["name"].as_str().unwrap_or("") == name
        })
    };
    for (severity, code, name) in [
        ("error", "plugin.missing_root", "gone"),
        ("error", "plugin.invalid_manifest", "broken"),
        ("error", "plugin.runtime_command_missing", "native-kit"),
        ("error", "hook.invalid_matcher", "PreToolUse"),
        ("error", "hook.missing_context_file", "SessionStart"),
        ("error", "hook.malformed_settings", "bad-hooks"),
        ("error", "hook.shell_unavailable", "Stop"),
        ("warning", "hook.unknown_event", "OnBogus"),
        ("warning", "hook.unprovided_variable", "PostToolUse"),
        ("warning", "plugin.compatibility", "hookify"),
        ("warning", "plugin.compatibility", "native-kit"),
        ("warning", "mcp.command_not_found", "indexer"),
        ("warning", "skill.missing_description", "native-kit:bare"),
        ("info", "skill.disabled", "sleepy:greet"),
        ("info", "plugin.runtime", "native-kit"),
    ] {
        assert!(
            has(severity, code, name),
            "no {severity} {code} for {name}:\n{issues:#?}"
        );
    }
    let invalid = issues
        .iter()
        .find(|i| i["code"] == "plugin.invalid_manifest")
        .unwrap();
    assert!(
        invalid["message"].as_str().unwrap().contains("bogus"),
        "{invalid}"
    );
    let theme = issues
        .iter()
        .find(|i| {
            i["message"]
                .as_str()
                .unwrap()
                .contains("theme themes/broken/theme.json: rejected")
        })
        .unwrap();
    assert_eq!(theme["code"], "plugin.compatibility");

    // Deterministic order: severity, then code, then name, then source.
    let rank = |s: &str| {
        ["error", "warning", "info"]
            .iter()
            .position(|x| *x == s)
            .unwrap()
    };
    let keys: Vec<(usize, String, String, String)> = issues
        .iter()
        .map(|i| {
            (
                rank(i["severity"].as_str().unwrap()),
                i["code"].as_str().unwrap().to_owned(),
                i["name"].as_str().unwrap_or("").to_owned(),
                i["source"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let summary = &report["summary"];
    assert_eq!(
        summary["errors"].as_u64().unwrap() as usize,
        keys.iter().filter(|k| k.0 == 0).count()
    );
    assert_eq!(summary["plugins"], 7);

    // The same home gives the same bytes.
    let again = sb.run(&["doctor", "capabilities", "--json"]);
    assert_eq!(String::from_utf8(again.stdout).unwrap(), stdout);

    // The human form names the same findings; --root picks the workspace.
    let text = sb.run(&[
        "doctor",
        "capabilities",
        "--root",
        sb.work.to_str().unwrap(),
    ]);
    assert_eq!(text.status.code(), Some(1));
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.starts_with("capabilities of <workspace> (static):"),
        "{text}"
    );
    assert!(text.contains("error\tplugin.missing_root gone:"), "{text}");
    assert!(!text.contains(&sandbox_path), "{text}");
}

#[test]
fn a_clean_home_exits_zero_and_an_unreadable_registry_is_an_error() {
    let sb = sandbox();
    let out = sb.run(&["doctor", "capabilities", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&report);
    assert_eq!(report["issues"], json!([]));
    assert_eq!(report["plugins"]["packages"], json!([]));
    // The schema is strict enough to catch what the report must never do.
    let validator = schema();
    let issue = json!({"severity": "error", "code": "plugin.missing_root", "subsystem": "plugins",
                       "message": "m", "source": "<workspace>/x"});
    for (what, broken) in [
        ("an unknown field", json!({"extra": 1})),
        ("a full path", json!({"root": "/home/someone/work"})),
        (
            "a long message",
            json!({"issues": [dict_with(&issue, "message", &"x".repeat(402))]}),
        ),
        (
            "a control character",
            json!({"issues": [dict_with(&issue, "message", "a\u{1b}[2J")]}),
        ),
        (
            "an unstable code",
            json!({"issues": [dict_with(&issue, "code", "Missing Root")]}),
        ),
    ] {
        let mut bad = report.clone();
        for (k, v) in broken.as_object().unwrap() {
            bad[k] = v.clone();
        }
        assert!(!validator.is_valid(&bad), "the schema accepts {what}");
    }
    assert!(validator.is_valid(&{
        let mut ok = report.clone();
        ok["issues"] = json!([issue]);
        ok
    }));

    let pkg = sb.dir.path().join("fine");
    native_package(&pkg, "fine", "1.0.0");
    sb.ok(&["plugin", "install", pkg.to_str().unwrap(), "--yes"]);
    let out = sb.run(&["doctor", "capabilities", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    fs::write(
        sb.home.join("plugin-packages.json"),
        "{\"version\":1,\"plugins\":[",
    )
    .unwrap();
    let out = sb.run(&["doctor", "capabilities", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&report);
    assert_eq!(report["issues"][0]["code"], "plugin.state_read_failed");
    assert_eq!(
        report["issues"][0]["source"],
        "~/.reasonix/plugin-packages.json"
    );
}

fn dict_with(base: &Value, key: &str, value: &str) -> Value {
    let mut v = base.clone();
    v[key] = value.into();
    v
}
