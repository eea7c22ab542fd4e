//! Black-box conformance of the package side (PLUGIN_PACKAGES.md §a.2, §a.3,
//! §a.5, §a.7, §a.11): install flags, the dry-run plan, management commands
//! and their exit codes, invalid manifests, and a made-up Claude package.

mod outside_common;

use std::path::Path;

use outside_common::Outside;
use regex::Regex;
use serde_json::json;

fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            out.push(e.file_name().to_string_lossy().into_owned());
            out.extend(tree(&e.path()));
        }
    }
    out.sort();
    out
}

#[test]
fn install_without_dry_run_or_yes_exits_2_and_writes_nothing() {
    let o = Outside::new();
    let root = o.package("noflags", "good", json!({}), json!({}));
    let run = o.reasonix(&["plugin", "install", root.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(
        run.stderr.contains("--yes") && run.stderr.contains("--dry-run"),
        "{}",
        run.all()
    );
    assert!(tree(&o.home).is_empty(), "{:?}", tree(&o.home));
}

#[test]
fn dry_run_plan_fields_follow_a_2_and_write_nothing() {
    let o = Outside::new();
    let root = o.package("planned", "good", json!({}), json!({}));
    let run = o.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--dry-run",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(run.stdout.trim().lines().count(), 1, "one compact line");
    let plan = run.json();
    assert!(
        tree(&o.home).iter().all(|p| !p.contains("planned")),
        "{:?}",
        tree(&o.home)
    );
    assert_eq!(plan["ok"], true);
    assert_eq!(plan["status"], "planned");
    assert_eq!(plan["applied"], false);
    assert_eq!(plan["op"], "install");
    assert_eq!(plan["kind"], "plugin");
    assert_eq!(plan["mode"], "copy");
    // A runtime grades the plan high (FULL TRUST).
    let plan_id = plan["planId"].as_str().unwrap();
    assert!(
        Regex::new("^high:sha256:[0-9a-f]{32}$")
            .unwrap()
            .is_match(plan_id),
        "{plan_id}"
    );
    let digest = plan["contentDigest"].as_str().unwrap();
    assert!(
        Regex::new("^sha256:[0-9a-f]{64}$")
            .unwrap()
            .is_match(digest),
        "{digest}"
    );
    let action = &plan["actions"][0];
    assert_eq!(action["kind"], "plugin");
    assert_eq!(action["action"], "install_plugin_package");
    assert_eq!(action["riskLevel"], "high");
    assert!(
        action["riskReasons"].to_string().contains("FULL TRUST"),
        "{action}"
    );
    assert_eq!(action["name"], "planned");
    assert_eq!(action["scope"], "global");
    assert_eq!(action["mode"], "copy");
    assert_eq!(action["manifestKind"], "reasonix");
    assert_eq!(action["version"], "1.2.3");
    assert_eq!(action["compatibility"], "full");
    assert_eq!(action["runtime"]["fullTrust"], true);
    assert_eq!(
        action["runtime"]["command"],
        "${REASONIX_PLUGIN_ROOT}/bin/sidecar"
    );
    assert_eq!(action["runtime"]["intercepts"], json!(["input.receive"]));
    assert!(
        action["configPath"]
            .as_str()
            .unwrap()
            .ends_with("plugin-packages.json")
    );

    // The same plan applies with its planId; a different one is refused.
    let refused = o.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--yes",
        "--plan-id",
        "low:sha256:00000000000000000000000000000000",
    ]);
    assert_eq!(refused.code, 1, "{}", refused.all());
    assert!(!o.home.join("plugins/planned").exists());
    let applied = o.reasonix(&[
        "plugin",
        "install",
        root.to_str().unwrap(),
        "--yes",
        "--plan-id",
        plan_id,
    ]);
    assert_eq!(applied.code, 0, "{}", applied.all());
    assert_eq!(applied.json()["status"], "done");
}

#[test]
fn management_commands_and_exit_codes_follow_a_3() {
    let o = Outside::new();
    let root = o.package("managed", "good", json!({}), json!({}));
    o.install(&root);

    let list = o.reasonix(&["plugin", "list"]);
    assert_eq!(list.code, 0);
    assert_eq!(
        list.stdout.trim(),
        format!(
            "managed\tenabled\t1.2.3\t{}\tFULL TRUST runtime",
            root.display()
        )
    );
    let disabled = o.reasonix(&["plugin", "disable", "managed"]);
    assert_eq!(
        (disabled.code, disabled.stdout.trim()),
        (0, "disabled managed")
    );
    assert!(
        o.reasonix(&["plugin", "list"])
            .stdout
            .contains("managed\tdisabled\t")
    );
    let enabled = o.reasonix(&["plugin", "enable", "managed"]);
    assert_eq!(
        (enabled.code, enabled.stdout.trim()),
        (0, "enabled managed")
    );

    let show = o.reasonix(&["plugin", "show", "managed"]);
    assert_eq!(show.code, 0, "{}", show.all());
    for key in [
        "name:",
        "version:",
        "enabled:",
        "kind:",
        "root:",
        "source:",
        "skills:",
        "commands:",
        "prompts:",
        "hooks:",
        "mcpServers:",
        "themes:",
        "FULL TRUST",
    ] {
        assert!(
            show.stdout.contains(key),
            "show lacks {key}: {}",
            show.stdout
        );
    }
    let doctor = o.reasonix(&["plugin", "doctor", "managed"]);
    assert_eq!(doctor.code, 0, "{}", doctor.all());
    assert!(doctor.stdout.contains("ok: managed ("), "{}", doctor.all());

    for cmd in ["show", "doctor", "enable", "disable"] {
        let run = o.reasonix(&["plugin", cmd, "ghost"]);
        assert_eq!(run.code, 1, "{cmd}: {}", run.all());
        assert!(run.all().contains("ghost"), "{cmd}: {}", run.all());
    }
    let usage = o.reasonix(&["plugin", "show"]);
    assert_eq!(usage.code, 2, "{}", usage.all());

    let zip = o.dir.path().join("managed.zip");
    let export = o.reasonix(&["plugin", "export", "managed", "-o", zip.to_str().unwrap()]);
    assert_eq!(export.code, 0, "{}", export.all());
    assert!(zip.exists());

    let refused = o.reasonix(&["plugin", "remove", "managed"]);
    assert_eq!(refused.code, 2, "{}", refused.all());
    assert!(o.home.join("plugins/managed").exists());
    let removed = o.reasonix(&["plugin", "remove", "managed", "--yes"]);
    assert_eq!(removed.code, 0, "{}", removed.all());
    assert_eq!(removed.json()["status"], "done");
    assert!(!o.home.join("plugins/managed").exists());
    assert!(
        root.join("reasonix-plugin.json").exists(),
        "source left alone"
    );
    assert_eq!(
        o.reasonix(&["plugin", "list"]).stdout.trim(),
        "no plugins installed"
    );

    // The exported zip re-installs through the normal .zip source.
    let again = o.reasonix(&["plugin", "install", zip.to_str().unwrap(), "--yes"]);
    assert_eq!(again.code, 0, "{}", again.all());
}

#[test]
fn invalid_manifests_fail_with_the_field_named_and_write_nothing() {
    let cases = [
        (
            json!({"apiVersion": "reasonix.io/plugin/v2", "name": "bad", "x": 1}),
            "unknown field \"x\"",
        ),
        (
            json!({"apiVersion": "reasonix.io/plugin/v1", "name": "bad"}),
            "unsupported apiVersion",
        ),
        (
            json!({"apiVersion": "reasonix.io/plugin/v2", "name": "bad", "runtime": {"command": "x", "args": [""]}}),
            "runtime.args[0] must not be empty",
        ),
        (
            json!({"apiVersion": "reasonix.io/plugin/v2", "name": "bad", "runtime": {"command": "x", "intercepts": ["nope.point"]}}),
            "nope.point",
        ),
        (
            json!({"apiVersion": "reasonix.io/plugin/v2", "name": "bad", "runtime": {"command": "x", "priority": 5000}}),
            "priority",
        ),
    ];
    for (manifest, needle) in cases {
        let o = Outside::new();
        let dir = o.dir.path().join("bad");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
        let run = o.reasonix(&[
            "plugin",
            "install",
            dir.to_str().unwrap(),
            "--yes",
            "--json",
        ]);
        assert_eq!(run.code, 1, "{manifest}: {}", run.all());
        let answer = run.json();
        assert_eq!(answer["ok"], false);
        assert!(
            answer["error"].as_str().unwrap().contains(needle),
            "{manifest}: {answer}"
        );
        assert!(!o.home.join("plugins/bad").exists());
        assert!(
            !o.home.join("plugin-packages.json").exists()
                || !std::fs::read_to_string(o.home.join("plugin-packages.json"))
                    .unwrap()
                    .contains("\"bad\"")
        );
    }
}

#[test]
fn a_made_up_claude_package_maps_skills_and_commands() {
    let o = Outside::new();
    let dir = o.dir.path().join("claude-pkg");
    std::fs::create_dir_all(dir.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(dir.join("skills/hello")).unwrap();
    std::fs::create_dir_all(dir.join("commands")).unwrap();
    std::fs::write(
        dir.join(".claude-plugin/plugin.json"),
        r#"{"name":"clau","version":"0.1.0","description":"d","author":{"name":"x"},"keywords":["k"]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("skills/hello/SKILL.md"),
        "---\nname: hello\ndescription: says hello\n---\nHello\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("commands/greet.md"),
        "---\ndescription: greet\n---\nHi $ARGUMENTS\n",
    )
    .unwrap();
    let plan = o.reasonix(&[
        "plugin",
        "install",
        dir.to_str().unwrap(),
        "--dry-run",
        "--json",
    ]);
    assert_eq!(plan.code, 0, "{}", plan.all());
    let plan = plan.json();
    let action = &plan["actions"][0];
    assert_eq!(action["manifestKind"], "claude");
    assert_eq!(action["compatibility"], "full");
    assert_eq!(action["skillCount"], 1);
    assert_eq!(action["commandCount"], 1);
    assert_eq!(action["mappedCapabilities"], json!(["skills", "commands"]));
    assert_eq!(action["riskLevel"], "medium");
    assert!(
        plan["planId"]
            .as_str()
            .unwrap()
            .starts_with("medium:sha256:")
    );
    let run = o.reasonix(&["plugin", "install", dir.to_str().unwrap(), "--yes"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let show = o.reasonix(&["plugin", "show", "clau"]);
    assert!(
        show.stdout.contains("/clau:hello\t[inline]\tsays hello"),
        "{}",
        show.stdout
    );
    assert!(show.stdout.contains("kind: claude"), "{}", show.stdout);
}

#[test]
fn bare_plugin_prints_usage_and_exits_0() {
    let o = Outside::new();
    let run = o.reasonix(&["plugin"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stderr.contains("install"), "{}", run.all());
}

#[test]
fn unknown_plugin_subcommand_is_named() {
    let o = Outside::new();
    let run = o.reasonix(&["plugin", "bogus"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(
        run.stderr.contains("unknown plugin command \"bogus\""),
        "{}",
        run.all()
    );
}

fn link_install(o: &Outside, root: &Path, home_dir: &Path) -> outside_common::Run {
    outside_common::Run::from(
        std::process::Command::new(outside_common::REASONIX)
            .args([
                "plugin",
                "install",
                root.to_str().unwrap(),
                "--link",
                "--yes",
                "--json",
            ])
            .env("REASONIX_HOME", &o.home)
            .env("HOME", home_dir)
            .current_dir(&o.workspace)
            .output()
            .unwrap(),
    )
}

#[test]
fn link_installs_are_unpinned_confined_and_removal_keeps_the_source() {
    let o = Outside::new();
    let root = o.package("linked", "good", json!({}), json!({}));
    // Outside both the workspace and the home directory: refused (a.6.8).
    let elsewhere = o.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let refused = link_install(&o, &root, &elsewhere);
    assert_eq!(refused.code, 1, "{}", refused.all());
    assert_eq!(
        refused.json()["actions"][0]["errorCode"],
        "install.unsafe_link"
    );
    assert!(std::fs::symlink_metadata(o.home.join("plugins/linked")).is_err());

    // Inside the home directory: a symlink, no content digest.
    let done = link_install(&o, &root, o.dir.path());
    assert_eq!(done.code, 0, "{}", done.all());
    let answer = done.json();
    assert_eq!(answer["mode"], "link");
    assert!(answer.get("contentDigest").is_none(), "{answer}");
    let link = o.home.join("plugins/linked");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let removed = o.reasonix(&["plugin", "remove", "linked", "--yes"]);
    assert_eq!(removed.code, 0, "{}", removed.all());
    assert!(std::fs::symlink_metadata(&link).is_err());
    assert!(
        root.join("reasonix-plugin.json").exists(),
        "source left alone"
    );
}
