//! Claude/Codex packages through `reasonix plugin install`: every real
//! package under `../shared/fixtures/real-packages` plans (`--dry-run`) and
//! installs (`--yes`) with its compatibility verdict; marketplace plugins are
//! selected with `--name`; a package that maps nothing is blocked, not
//! recorded; a git marketplace expands relative, `url` and `git-subdir`
//! entries (local bare repositories stand in for GitHub).
mod plugin_common;

use std::path::{Path, PathBuf};

use plugin_common::*;
use serde_json::Value;

fn fixtures() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real-packages");
    assert!(dir.is_dir(), "fixtures not found at {}", dir.display());
    dir
}

fn fixture(rel: &str) -> String {
    fixtures().join(rel).to_string_lossy().into_owned()
}

/// (fixture dir, plugin name, verdict, skills, commands, agents, hooks, mcp)
const PACKAGES: &[(&str, &str, &str, [u64; 5])] = &[
    ("obra__superpowers", "superpowers", "full", [14, 0, 0, 2, 0]),
    (
        "anthropics__claude-code/plugins/agent-sdk-dev",
        "agent-sdk-dev",
        "full",
        [0, 1, 2, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/claude-opus-4-5-migration",
        "claude-opus-4-5-migration",
        "full",
        [1, 0, 0, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/code-review",
        "code-review",
        "full",
        [0, 1, 0, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/commit-commands",
        "commit-commands",
        "full",
        [0, 3, 0, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/explanatory-output-style",
        "explanatory-output-style",
        "full",
        [0, 0, 0, 1, 0],
    ),
    (
        "anthropics__claude-code/plugins/feature-dev",
        "feature-dev",
        "partial",
        [0, 1, 3, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/frontend-design",
        "frontend-design",
        "full",
        [1, 0, 0, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/hookify",
        "hookify",
        "partial",
        [1, 4, 1, 4, 0],
    ),
    (
        "anthropics__claude-code/plugins/learning-output-style",
        "learning-output-style",
        "full",
        [0, 0, 0, 1, 0],
    ),
    (
        "anthropics__claude-code/plugins/pr-review-toolkit",
        "pr-review-toolkit",
        "full",
        [0, 1, 6, 0, 0],
    ),
    (
        "anthropics__claude-code/plugins/ralph-wiggum",
        "ralph-wiggum",
        "partial",
        [0, 3, 0, 1, 0],
    ),
    (
        "anthropics__claude-code/plugins/security-guidance",
        "security-guidance",
        "partial",
        [0, 0, 0, 5, 0],
    ),
    (
        "anthropics__claude-plugins-official/external_plugins/context7",
        "context7",
        "full",
        [0, 0, 0, 0, 1],
    ),
    (
        "anthropics__claude-plugins-official/external_plugins/github",
        "github",
        "full",
        [0, 0, 0, 0, 1],
    ),
    (
        "anthropics__claude-plugins-official/plugins/example-plugin",
        "example-plugin",
        "full",
        [2, 1, 0, 0, 1],
    ),
];

fn counts(action: &Value) -> [u64; 5] {
    let n = |k: &str| action[k].as_u64().unwrap_or(0);
    [
        n("skillCount"),
        n("commandCount"),
        n("agentCount"),
        n("hookCount"),
        n("toolCount"),
    ]
}

fn registry_names(sb: &Sandbox) -> Vec<String> {
    let reg = sb.registry();
    reg["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_real_package_plans_and_installs_with_its_verdict() {
    let sb = Sandbox::new();
    for (dir, name, verdict, expected) in PACKAGES {
        let src = fixture(dir);
        let (code, plan) = sb.json(&["plugin", "install", &src, "--dry-run", "--json"]);
        assert_eq!(code, 0, "{dir}: {plan}");
        assert_eq!(plan["status"], "planned", "{dir}");
        let action = &plan["actions"][0];
        assert_eq!(action["name"], *name, "{dir}");
        assert_eq!(action["compatibility"], *verdict, "{dir}");
        assert_eq!(counts(action), *expected, "{dir}: {action}");
        let skipped = action["skippedCapabilities"].as_array().map_or(0, Vec::len);
        assert_eq!(skipped > 0, *verdict == "partial", "{dir}: {action}");

        let plan_id = plan["planId"].as_str().unwrap().to_owned();
        let (code, done) = sb.json(&[
            "plugin",
            "install",
            &src,
            "--yes",
            "--plan-id",
            &plan_id,
            "--json",
        ]);
        assert_eq!(code, 0, "{dir}: {done}");
        assert_eq!(done["status"], "done", "{dir}: {done}");
        assert_eq!(done["actions"][0]["compatibility"], *verdict, "{dir}");
    }
    let mut names = registry_names(&sb);
    names.sort();
    let mut expected: Vec<String> = PACKAGES.iter().map(|p| p.1.to_owned()).collect();
    expected.sort();
    assert_eq!(names, expected);
    // Installed copies read back with the same verdict.
    let reg = sb.registry();
    for p in reg["plugins"].as_array().unwrap() {
        assert_eq!(p["enabled"], true, "{p}");
    }
}

#[test]
fn claude_code_marketplace_plugins_install_by_name() {
    let sb = Sandbox::new();
    let market = fixture("anthropics__claude-code");
    // Bulk: the plugin-dev entry has no manifest, so the whole plan fails
    // and nothing is written.
    let (code, out) = sb.json(&["plugin", "install", &market, "--dry-run", "--json"]);
    assert_ne!(code, 0);
    assert_eq!(out["errorCode"], "install.manifest_missing", "{out}");
    assert!(out["error"].as_str().unwrap().contains("plugin-dev"));

    let names = [
        "agent-sdk-dev",
        "claude-opus-4-5-migration",
        "code-review",
        "commit-commands",
        "explanatory-output-style",
        "feature-dev",
        "frontend-design",
        "hookify",
        "learning-output-style",
        "pr-review-toolkit",
        "ralph-wiggum",
        "security-guidance",
    ];
    for name in names {
        let (code, plan) = sb.json(&[
            "plugin",
            "install",
            &market,
            "--name",
            name,
            "--dry-run",
            "--json",
        ]);
        assert_eq!(code, 0, "{name}: {plan}");
        let actions = plan["actions"].as_array().unwrap();
        assert_eq!(actions.len(), 1, "{name}: one action per selected plugin");
        assert_eq!(actions[0]["name"], name);
        assert!(
            actions[0]["source"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/plugins/{name}"))
        );
        let (code, done) = sb.json(&[
            "plugin", "install", &market, "--name", name, "--yes", "--json",
        ]);
        assert_eq!(code, 0, "{name}: {done}");
        assert_eq!(done["status"], "done");
    }
    let (code, out) = sb.json(&[
        "plugin",
        "install",
        &market,
        "--name",
        "plugin-dev",
        "--dry-run",
        "--json",
    ]);
    assert_ne!(code, 0);
    assert_eq!(out["errorCode"], "install.manifest_missing");
    let (code, out) = sb.json(&[
        "plugin",
        "install",
        &market,
        "--name",
        "nope",
        "--dry-run",
        "--json",
    ]);
    assert_ne!(code, 0);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("no plugin named \"nope\""),
        "{out}"
    );
    assert_eq!(registry_names(&sb).len(), names.len());
}

#[test]
fn official_marketplace_is_selectable_by_name_despite_its_size() {
    let sb = Sandbox::new();
    let market = fixture("anthropics__claude-plugins-official");
    let (code, out) = sb.json(&["plugin", "install", &market, "--dry-run", "--json"]);
    assert_ne!(code, 0);
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("lists 286 plugins"), "{out}");
    // Ten names and the count, not 286 names on one line.
    assert!(
        error.contains("286 plugins: ") && error.ends_with("and 276 more)"),
        "{error}"
    );
    assert!(error.len() < 600, "{} bytes: {error}", error.len());
    assert_eq!(out["errorCode"], "install.unsupported_source");
    for name in ["github", "context7"] {
        let (code, done) = sb.json(&[
            "plugin", "install", &market, "--name", name, "--yes", "--json",
        ]);
        assert_eq!(code, 0, "{name}: {done}");
        assert_eq!(done["actions"][0]["name"], name);
        assert_eq!(
            done["actions"][0]["toolCount"], 1,
            "MCP servers count as tools"
        );
    }
    // A `strict: false` entry is rejected when selected.
    let (code, out) = sb.json(&[
        "plugin",
        "install",
        &market,
        "--name",
        "rust-analyzer-lsp",
        "--dry-run",
        "--json",
    ]);
    assert_ne!(code, 0);
    assert!(out["error"].as_str().unwrap().contains("strict"), "{out}");
}

#[test]
fn a_package_that_maps_nothing_is_blocked_and_not_recorded() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("nothing");
    write(
        &pkg.join(".claude-plugin/plugin.json"),
        r#"{"name":"nothing"}"#,
    );
    write(
        &pkg.join("hooks/hooks.json"),
        r#"{"hooks":{"SessionStart":[{"hooks":[{"command":"x","shell":"zsh"}]}]}}"#,
    );
    let src = pkg.to_string_lossy().into_owned();
    for flag in ["--dry-run", "--yes"] {
        let (_, out) = sb.json(&["plugin", "install", &src, flag, "--json"]);
        assert_eq!(out["status"], "blocked", "{flag}: {out}");
    }
    assert!(registry_names(&sb).is_empty());
    assert!(!sb.home.join("plugins/nothing").exists());
}

#[test]
fn git_marketplace_expands_relative_url_and_git_subdir_entries() {
    let sb = Sandbox::new();
    let base = sb.dir.path().join("github");
    let skill = "---\ndescription: s\n---\n";
    let other = bare_repo(
        &base,
        "acme",
        "tools",
        &[
            (".claude-plugin/plugin.json", r#"{"name":"remote-url"}"#),
            ("skills/a/SKILL.md", skill),
            (
                "nested/sub/.claude-plugin/plugin.json",
                r#"{"name":"remote-subdir"}"#,
            ),
            (
                "nested/sub/commands/go.md",
                "---\ndescription: go\n---\nGo $1",
            ),
        ],
    );
    let marketplace = format!(
        r#"{{"name":"acme-market","plugins":[
            {{"name":"remote-url","source":{{"source":"url","url":"https://github.com/acme/tools.git","sha":"{other}"}}}},
            {{"name":"local-one","source":"./plugins/local-one"}},
            {{"name":"remote-subdir","source":{{"source":"git-subdir","url":"https://github.com/acme/tools","path":"nested/sub"}}}},
            {{"name":"npm-thing","source":{{"source":"npm","package":"x"}}}}
        ]}}"#
    );
    let market_commit = bare_repo(
        &base,
        "acme",
        "market",
        &[
            (".claude-plugin/marketplace.json", &marketplace),
            (
                "plugins/local-one/.claude-plugin/plugin.json",
                r#"{"name":"local-one"}"#,
            ),
            ("plugins/local-one/skills/b/SKILL.md", skill),
        ],
    );
    let sb = sb.with_env(
        "REASONIX_GITHUB_BASE",
        &format!("file://{}", base.display()),
    );
    let src = "https://github.com/acme/market";
    let (code, plan) = sb.json(&["plugin", "install", src, "--dry-run", "--json"]);
    assert_eq!(code, 0, "{plan}");
    let actions = plan["actions"].as_array().unwrap();
    let got: Vec<(&str, &str, &str)> = actions
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap(),
                a["source"].as_str().unwrap(),
                a["commit"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "local-one",
                "https://github.com/acme/market/tree/main/plugins/local-one",
                market_commit.as_str()
            ),
            (
                "remote-subdir",
                &*format!("https://github.com/acme/tools/tree/{other}/nested/sub"),
                other.as_str()
            ),
            (
                "remote-url",
                &*format!("https://github.com/acme/tools/tree/{other}"),
                other.as_str()
            ),
        ],
        "actions are sorted by entry name"
    );
    let warnings = plan["warnings"].to_string();
    assert!(
        warnings.contains("npm-thing") && warnings.contains("skipped"),
        "{warnings}"
    );

    let plan_id = plan["planId"].as_str().unwrap().to_owned();
    let (code, done) = sb.json(&[
        "plugin",
        "install",
        src,
        "--yes",
        "--plan-id",
        &plan_id,
        "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["status"], "done", "{done}");
    let mut names = registry_names(&sb);
    names.sort();
    assert_eq!(names, ["local-one", "remote-subdir", "remote-url"]);

    // One remote entry selected by name: the marketplace clone is not
    // pinned to that entry's commit.
    let sb2 = Sandbox::new().with_env(
        "REASONIX_GITHUB_BASE",
        &format!("file://{}", base.display()),
    );
    let (code, plan) = sb2.json(&[
        "plugin",
        "install",
        src,
        "--name",
        "remote-subdir",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 0, "{plan}");
    let plan_id = plan["planId"].as_str().unwrap().to_owned();
    let (code, done) = sb2.json(&[
        "plugin",
        "install",
        src,
        "--name",
        "remote-subdir",
        "--yes",
        "--plan-id",
        &plan_id,
        "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(registry_names(&sb2), ["remote-subdir"]);
    let (code, out) = sb2.json(&[
        "plugin",
        "install",
        src,
        "--name",
        "npm-thing",
        "--dry-run",
        "--json",
    ]);
    assert_ne!(code, 0);
    assert!(
        out["error"].as_str().unwrap().contains("not supported"),
        "{out}"
    );
}

#[test]
fn doctor_reports_missing_hook_interpreters_before_the_first_run() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("pwsh-hooks");
    write(
        &pkg.join(".claude-plugin/plugin.json"),
        r#"{"name":"pwsh-hooks"}"#,
    );
    write(
        &pkg.join("hooks/hooks.json"),
        r#"{"hooks":{"SessionStart":[{"hooks":[{"command":"Write-Output hi","shell":"powershell"},{"command":"${CLAUDE_PLUGIN_ROOT}/bin/missing","args":[]}]}]}}"#,
    );
    sb.ok(&[
        "plugin",
        "install",
        pkg.to_str().unwrap(),
        "--yes",
        "--json",
    ]);
    let out = sb.run(&["plugin", "doctor", "pwsh-hooks"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let have_pwsh = ["pwsh", "powershell"].iter().any(|p| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
    });
    if !have_pwsh {
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(
            text.contains("unavailable SessionStart hook: PowerShell is not available here"),
            "{text}"
        );
        assert!(text.contains("remediation: install PowerShell"), "{text}");
    }
    assert!(
        text.contains("warning: SessionStart hook: hook executable"),
        "{text}"
    );

    // A real package whose hooks need only bash/sh is healthy.
    let src = fixture("obra__superpowers");
    sb.ok(&["plugin", "install", &src, "--yes", "--json"]);
    let doctor = sb.ok(&["plugin", "doctor", "superpowers"]);
    assert!(doctor.contains("ok: superpowers"), "{doctor}");
}
