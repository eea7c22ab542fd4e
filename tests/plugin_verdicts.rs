//! Real package shapes the earlier suites never saw, through the real
//! binary: a Codex marketplace (`.agents/plugins/marketplace.json` with
//! `local` entries) served from a local bare repository standing in for
//! GitHub; a Codex package whose `CLAUDE.md` is a symlink to `AGENTS.md`;
//! marketplaces with an escaping entry and an invalid name (judged as
//! upstream judges them); an apps-only manifest; and what `plugin list` /
//! `plugin show` say about tools, runtimes and rejected themes.
mod plugin_common;

use std::path::Path;

use plugin_common::*;
use serde_json::{Value, json};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn registry_names(sb: &Sandbox) -> Vec<String> {
    sb.registry()["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| s(&p["name"]).to_owned())
        .collect()
}

/// A Codex package directory's files: a manifest and one skill.
fn codex_plugin(name: &str) -> Vec<(String, String)> {
    vec![
        (
            format!("plugins/{name}/.codex-plugin/plugin.json"),
            json!({"name": name, "version": "1.0.0", "skills": "./skills/", "interface": {"displayName": name}}).to_string(),
        ),
        (
            format!("plugins/{name}/skills/{name}-skill/SKILL.md"),
            format!("---\ndescription: {name} skill\n---\nDo {name}.\n"),
        ),
    ]
}

fn codex_entry(name: &str) -> Value {
    json!({"name": name, "source": {"source": "local", "path": format!("./plugins/{name}")},
           "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}, "category": "Coding"})
}

#[test]
fn a_codex_marketplace_installs_one_entry_by_name_and_plans_the_rest() {
    let sb = Sandbox::new();
    let base = sb.dir.path().join("github");
    let mut files: Vec<(String, String)> = Vec::new();
    for name in ["zeta", "alpha", "beta"] {
        files.extend(codex_plugin(name));
    }
    let mut entries: Vec<Value> = ["zeta", "alpha", "beta"]
        .iter()
        .map(|n| codex_entry(n))
        .collect();
    entries.push(
        json!({"name": "retired", "source": {"source": "local", "path": "./plugins/retired"},
                        "policy": {"installation": "NOT_AVAILABLE"}}),
    );
    let market =
        json!({"name": "acme-codex", "interface": {"displayName": "Acme"}, "plugins": entries});
    files.push((
        ".agents/plugins/marketplace.json".into(),
        market.to_string(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_str()))
        .collect();
    let commit = bare_repo(&base, "acme", "codex-plugins", &refs);
    let sb = sb.with_env(
        "REASONIX_GITHUB_BASE",
        &format!("file://{}", base.display()),
    );
    let src = "https://github.com/acme/codex-plugins";

    // --name selects one entry and installs it.
    let (code, done) = sb.json(&[
        "plugin", "install", src, "--name", "beta", "--yes", "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["status"], "done", "{done}");
    let action = &done["actions"][0];
    assert_eq!(action["name"], "beta");
    assert_eq!(action["manifestKind"], "codex");
    assert_eq!(
        action["source"],
        "https://github.com/acme/codex-plugins/tree/main/plugins/beta"
    );
    assert_eq!(action["commit"], commit.as_str());
    assert_eq!(action["skillCount"], 1);
    assert_eq!(registry_names(&sb), ["beta"]);
    assert!(
        sb.home
            .join("plugins/beta/skills/beta-skill/SKILL.md")
            .is_file()
    );

    // Without --name: every available entry, sorted by name; the retired
    // one is skipped with a warning naming it and the reason.
    let (code, plan) = sb.json(&["plugin", "install", src, "--dry-run", "--json"]);
    assert_eq!(code, 0, "{plan}");
    let names: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["name"]))
        .collect();
    assert_eq!(names, ["alpha", "beta", "zeta"]);
    let warnings = plan["warnings"].to_string();
    assert!(
        warnings.contains(
            "skipped Codex marketplace plugin \\\"retired\\\": the marketplace marks it not available for install"
        ),
        "{warnings}"
    );
    // A selected NOT_AVAILABLE entry is an error, not a silent skip.
    let (code, out) = sb.json(&[
        "plugin",
        "install",
        src,
        "--name",
        "retired",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(s(&out["error"]).contains("NOT_AVAILABLE"), "{out}");
}

#[test]
fn a_large_codex_marketplace_refuses_bulk_with_the_count_and_serves_one_by_name() {
    let sb = Sandbox::new();
    let market = sb.work.join("catalog");
    let names: Vec<String> = (0..70).map(|i| format!("p{i:02}")).collect();
    for name in &names {
        for (rel, body) in codex_plugin(name) {
            write(&market.join(rel), &body);
        }
    }
    let entries: Vec<Value> = names.iter().map(|n| codex_entry(n)).collect();
    write(
        &market.join(".agents/plugins/marketplace.json"),
        &json!({"name": "big", "plugins": entries}).to_string(),
    );
    let src = market.to_string_lossy().into_owned();
    let (code, out) = sb.json(&["plugin", "install", &src, "--dry-run", "--json"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["errorCode"], "install.unsupported_source");
    let error = s(&out["error"]);
    assert!(
        error.contains("lists 70 plugins, more than the 64"),
        "{error}"
    );
    assert!(
        error.contains("70 plugins: p00, p01, p02, p03, p04, p05, p06, p07, p08, p09 and 60 more"),
        "{error}"
    );
    assert!(!error.contains("p10"), "at most ten names: {error}");
    let (code, done) = sb.json(&[
        "plugin", "install", &src, "--name", "p69", "--yes", "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(registry_names(&sb), ["p69"]);
    assert_eq!(
        done["actions"][0]["source"],
        market.join("plugins/p69").to_string_lossy().as_ref()
    );
}

#[test]
fn a_root_without_manifest_or_marketplace_names_both_and_no_temporary_path() {
    let sb = Sandbox::new();
    let base = sb.dir.path().join("github");
    bare_repo(&base, "o", "empty", &[("README.md", "nothing here\n")]);
    let sb = sb.with_env(
        "REASONIX_GITHUB_BASE",
        &format!("file://{}", base.display()),
    );
    let (code, out) = sb.json(&[
        "plugin",
        "install",
        "https://github.com/o/empty",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(out["errorCode"], "install.manifest_missing");
    let error = s(&out["error"]);
    assert!(
        error.starts_with("https://github.com/o/empty has no plugin manifest"),
        "{error}"
    );
    assert!(
        error.contains(".claude-plugin/marketplace.json")
            && error.contains(".agents/plugins/marketplace.json"),
        "{error}"
    );
    assert!(
        !error.contains("reasonix-plugin-") && !error.contains("/tmp"),
        "{error}"
    );
}

#[test]
fn a_codex_package_with_an_in_tree_claude_md_link_installs_in_copy_mode() {
    let sb = Sandbox::new();
    let base = sb.dir.path().join("github");
    bare_repo(
        &base,
        "acme",
        "linked",
        &[
            (
                ".codex-plugin/plugin.json",
                r#"{"name":"linked","version":"2.0.0","skills":"./skills/"}"#,
            ),
            (
                "skills/plan/SKILL.md",
                "---\ndescription: plan\n---\nPlan.\n",
            ),
            ("AGENTS.md", "Always write tests first.\n"),
            ("CLAUDE.md", "-> AGENTS.md"),
        ],
    );
    let sb = sb.with_env(
        "REASONIX_GITHUB_BASE",
        &format!("file://{}", base.display()),
    );
    let src = "https://github.com/acme/linked";
    let (code, plan) = sb.json(&["plugin", "install", src, "--dry-run", "--json"]);
    assert_eq!(code, 0, "{plan}");
    assert_eq!(plan["actions"][0]["hookCount"], 1, "{plan}");
    let plan_id = s(&plan["planId"]).to_owned();
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
    let copied = sb.home.join("plugins/linked/CLAUDE.md");
    let meta = std::fs::symlink_metadata(&copied).unwrap();
    assert!(meta.is_file(), "the link is materialised as a file");
    assert_eq!(
        std::fs::read_to_string(&copied).unwrap(),
        "Always write tests first.\n"
    );
    let show = sb.ok(&["plugin", "show", "linked"]);
    assert!(show.contains("contextFile CLAUDE.md"), "{show}");

    // A local copy works the same, and a link leaving the package neither
    // counts in the plan nor blocks the install: it is skipped and said so.
    let outside = sb.dir.path().join("outside.md");
    write(&outside, "secret\n");
    let local = sb.work.join("escaping");
    write(
        &local.join(".codex-plugin/plugin.json"),
        r#"{"name":"escaping","skills":"./skills/"}"#,
    );
    write(
        &local.join("skills/a/SKILL.md"),
        "---\ndescription: a\n---\n",
    );
    std::os::unix::fs::symlink(&outside, local.join("CLAUDE.md")).unwrap();
    let (code, done) = sb.json(&[
        "plugin",
        "install",
        local.to_str().unwrap(),
        "--yes",
        "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(
        done["actions"][0]["hookCount"].as_u64().unwrap_or(0),
        0,
        "{done}"
    );
    assert!(
        done["warnings"]
            .to_string()
            .contains("skipped symlink CLAUDE.md: points outside the package"),
        "{done}"
    );
    assert!(!sb.home.join("plugins/escaping/CLAUDE.md").exists());
}

fn claude_plugin(root: &Path, name: &str) {
    write(
        &root.join(".claude-plugin/plugin.json"),
        &json!({ "name": name }).to_string(),
    );
    write(
        &root.join(format!("commands/{name}.md")),
        "---\ndescription: c\n---\nRun $1\n",
    );
}

#[test]
fn marketplace_entries_are_judged_as_upstream_judges_them() {
    let sb = Sandbox::new();
    let market = sb.work.join("market");
    for name in ["zulu", "alpha", "mike"] {
        claude_plugin(&market.join("plugins").join(name), name);
    }
    claude_plugin(&sb.work.join("outside"), "outside");
    let write_market = |plugins: Value| {
        write(
            &market.join(".claude-plugin/marketplace.json"),
            &json!({"name": "judged", "metadata": {"pluginRoot": "./plugins"}, "plugins": plugins})
                .to_string(),
        );
    };
    let src = market.to_string_lossy().into_owned();

    // An invalid name and an empty one are skipped with a warning; the
    // rest is planned, sorted by entry name.
    write_market(json!([
        {"name": "zulu", "source": "./zulu"},
        {"name": "Bad Name!", "source": "./alpha"},
        {"name": "", "source": "./alpha"},
        {"name": "alpha", "source": "alpha"},
        {"name": "mike", "source": "./mike"},
        {"name": "web", "source": "https://example.com/web.git"}
    ]));
    let (code, plan) = sb.json(&["plugin", "install", &src, "--dry-run", "--json"]);
    assert_eq!(code, 0, "{plan}");
    let names: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["name"]))
        .collect();
    assert_eq!(names, ["alpha", "mike", "zulu"]);
    let warnings: Vec<&str> = plan["warnings"].as_array().unwrap().iter().map(s).collect();
    assert_eq!(
        warnings,
        [
            "skipped Claude marketplace entry with an empty name",
            "skipped Claude marketplace plugin \"Bad Name!\": not a valid plugin name",
            "skipped Claude marketplace plugin \"web\": external source \"https://example.com/web.git\" must use a pinned URL object",
        ]
    );
    let (code, out) = sb.json(&[
        "plugin",
        "install",
        &src,
        "--name",
        "Bad Name!",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        out["error"],
        "marketplace plugin \"Bad Name!\": not a valid plugin name"
    );

    // An entry escaping the marketplace refuses the plan and writes nothing,
    // even though the directory it names holds a valid plugin.
    write_market(json!([
        {"name": "alpha", "source": "./alpha"},
        {"name": "outside", "source": "../../outside"}
    ]));
    for flag in ["--dry-run", "--yes"] {
        let (code, out) = sb.json(&["plugin", "install", &src, flag, "--json"]);
        assert_eq!(code, 1, "{flag}: {out}");
        assert_eq!(out["errorCode"], "install.invalid_manifest", "{out}");
        assert_eq!(
            out["error"],
            "marketplace plugin \"outside\": source \"../../outside\" escapes or does not identify a plugin subdirectory"
        );
    }
    assert!(!sb.home.join("plugin-packages.json").exists());
    // Selecting a sound entry of that marketplace still works.
    let (code, done) = sb.json(&[
        "plugin", "install", &src, "--name", "alpha", "--yes", "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(registry_names(&sb), ["alpha"]);
}

#[test]
fn an_apps_only_manifest_is_blocked_with_its_reason() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("connector");
    write(
        &pkg.join(".codex-plugin/plugin.json"),
        r#"{"name":"connector","version":"0.1.0","apps":"./.app.json","interface":{"displayName":"Connector"}}"#,
    );
    write(
        &pkg.join(".app.json"),
        r#"{"apps":{"connector":{"id":"asdk_app_0123"}}}"#,
    );
    let src = pkg.to_string_lossy().into_owned();
    for flag in ["--dry-run", "--yes"] {
        let (code, out) = sb.json(&["plugin", "install", &src, flag, "--json"]);
        assert_eq!(code, 1, "{flag}: {out}");
        assert_eq!(out["status"], "blocked", "{out}");
        let error = s(&out["error"]);
        assert!(
            error.starts_with("plugin \"connector\" has no compatible capabilities; skipped: [apps .app.json (apps are not supported"),
            "{error}"
        );
    }
    assert!(!sb.home.join("plugins/connector").exists());
    let out = sb.run(&["plugin", "validate", &src, "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("\"none\""), "{text}");
    assert!(text.contains("apps are not supported"), "{text}");
}

fn native_with_runtime(dir: &Path, name: &str, command: &str, theme_json: &str) {
    write(
        &dir.join("reasonix-plugin.json"),
        &json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": name,
            "version": "1.0.0",
            "contributes": {"skills": ["skills"], "themes": ["themes/*/theme.json"]},
            "runtime": {
                "command": command,
                "intercepts": ["input.receive"],
                "capabilities": ["interceptors", "tools"],
                "tools": [
                    {"name": "lookup", "description": "Look up a term", "inputSchema": {"type": "object"}},
                    {"name": "define", "description": "Define a term", "inputSchema": {"type": "object"}}
                ]
            }
        })
        .to_string(),
    );
    write(
        &dir.join("skills/glossary/SKILL.md"),
        "---\ndescription: g\n---\n",
    );
    write(&dir.join("themes/dusk/theme.json"), theme_json);
    write(
        &dir.join("themes/dawn/theme.json"),
        r##"{"colors":{"bg":"#fff"}}"##,
    );
}

#[test]
fn list_flags_runtimes_with_their_tools_and_show_marks_a_rejected_theme() {
    let sb = Sandbox::new();
    let native = sb.work.join("native");
    native_with_runtime(
        &native,
        "native",
        "${REASONIX_PLUGIN_ROOT}/bin/native",
        "{ not json",
    );
    let wasm = sb.work.join("wasm");
    native_with_runtime(
        &wasm,
        "wasm",
        "${REASONIX_PLUGIN_ROOT}/extension.wasm",
        r##"{"colors":{"bg":"#000"}}"##,
    );
    for dir in [&native, &wasm] {
        sb.ok(&["plugin", "install", dir.to_str().unwrap(), "--yes"]);
    }
    let list = sb.ok(&["plugin", "list"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "native\tenabled\t1.0.0\t{}\t1 skills / 2 themes / FULL TRUST runtime (tools: lookup, define)",
                native.display()
            ),
            format!(
                "wasm\tenabled\t1.0.0\t{}\t1 skills / 2 themes / SANDBOXED runtime (tools: lookup, define)",
                wasm.display()
            ),
        ]
    );
    let (_, listed) = sb.json(&["plugin", "list", "--json"]);
    assert_eq!(listed["plugins"][0]["runtime"], "full_trust");
    assert_eq!(listed["plugins"][1]["runtime"], "sandboxed");
    assert_eq!(listed["plugins"][0]["tools"], json!(["lookup", "define"]));

    // The broken theme.json is rejected (it never reaches the picker), and
    // show says so beside it; the sound one is listed plainly.
    let show = sb.ok(&["plugin", "show", "native"]);
    let dusk = show
        .lines()
        .find(|l| l.contains("plugin:native:dusk"))
        .unwrap();
    assert!(
        dusk.starts_with("  plugin:native:dusk\tthemes/dusk/theme.json\trejected: invalid JSON"),
        "{show}"
    );
    let dawn = show
        .lines()
        .find(|l| l.contains("plugin:native:dawn"))
        .unwrap();
    assert_eq!(dawn, "  plugin:native:dawn\tthemes/dawn/theme.json");
    let (_, shown) = sb.json(&["plugin", "show", "native", "--json"]);
    let themes = shown["themes"].as_array().unwrap();
    assert!(
        s(&themes[1]["rejected"]).starts_with("invalid JSON"),
        "{shown}"
    );
    assert!(themes[0].get("rejected").is_none());
    assert!(!sb.ok(&["plugin", "show", "wasm"]).contains("rejected"));
}
