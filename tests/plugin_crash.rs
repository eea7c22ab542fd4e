//! The crash matrix: the real `reasonix` binary is SIGKILLed at every
//! publication step of install, replace, remove and enable/disable; a
//! restart (`reasonix plugin list --json`) must then show exactly the old or
//! the new state, the registered tree's digest must equal the registry's
//! `treeDigest`, no leftover or orphan may be adopted, and the interrupted
//! operation must succeed when run again.
mod plugin_common;

use std::fs;

use plugin_common::*;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// The registry still describes the state before the operation.
    Old,
    /// The registry describes the state after it.
    New,
}

const INSTALL: &[(&str, Expect)] = &[
    ("staging_partial", Expect::Old),
    ("after_staging", Expect::Old),
    ("after_swap", Expect::Old),
    ("before_registry_rename", Expect::Old),
    ("after_registry_rename", Expect::New),
    ("after_cleanup", Expect::New),
];

const REPLACE: &[(&str, Expect)] = &[
    ("staging_partial", Expect::Old),
    ("after_staging", Expect::Old),
    ("after_backup", Expect::Old),
    ("after_swap", Expect::Old),
    ("before_registry_rename", Expect::Old),
    ("after_registry_rename", Expect::New),
    ("after_cleanup", Expect::New),
];

const REMOVE: &[(&str, Expect)] = &[
    ("after_backup", Expect::Old),
    ("before_registry_rename", Expect::Old),
    ("after_registry_rename", Expect::New),
    ("after_cleanup", Expect::New),
];

const TOGGLE: &[(&str, Expect)] = &[
    ("before_registry_rename", Expect::Old),
    ("after_registry_rename", Expect::New),
];

/// A sandbox with `plugins/orphan` (a complete package nobody registered)
/// and the two versions of package `p` in the workspace.
fn world() -> (Sandbox, String, String) {
    let sb = Sandbox::new();
    native_package(&sb.work.join("v1"), "p", "1.0.0");
    native_package(&sb.work.join("v2"), "p", "2.0.0");
    write(
        &sb.work.join("v2/extra/big.txt"),
        &"new bytes\n".repeat(1000),
    );
    let d1 = digest_of(&sb.work.join("v1"));
    let d2 = digest_of(&sb.work.join("v2"));
    assert_ne!(d1, d2);
    native_package(&sb.home.join("plugins/orphan"), "orphan", "9.9.9");
    (sb, d1, d2)
}

/// After a restart: the registry entry for `p` (if any), checked against
/// the tree it names.
fn restart_state(sb: &Sandbox) -> Option<serde_json::Value> {
    let out = sb.run(&["plugin", "list", "--json"]);
    assert!(out.status.success(), "restart failed: {}", stderr(&out));
    let listed = last_json(&out);
    let names: Vec<String> = listed["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !names.contains(&"orphan".to_string()),
        "orphan adopted: {listed}"
    );
    // Recovery left no staging leftovers and no registry temp files behind.
    for e in fs::read_dir(sb.home.join("plugins")).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        assert!(!n.contains(".staging-"), "leftover {n} after restart");
    }
    for e in fs::read_dir(&sb.home).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        assert!(!n.contains(".tmp-"), "registry temp file {n} after restart");
    }
    let registry = sb.registry();
    let entry = registry["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "p")
        .cloned();
    assert_eq!(entry.is_some(), names.contains(&"p".to_string()));
    if let Some(e) = &entry {
        let root = sb.home.join(e["root"].as_str().unwrap());
        assert_eq!(
            digest_of(&root),
            e["treeDigest"].as_str().unwrap(),
            "registered tree differs from its treeDigest"
        );
    }
    entry
}

fn digest(entry: &Option<serde_json::Value>) -> Option<String> {
    entry
        .as_ref()
        .map(|e| e["treeDigest"].as_str().unwrap().to_string())
}

#[test]
fn crash_matrix() {
    let mut kill_points = 0;

    for &(step, expect) in INSTALL {
        let (sb, _d1, d2) = world();
        let args = ["plugin", "install", "./v2", "--yes", "--json"];
        sb.pause_at(&args, step).kill();
        kill_points += 1;
        let state = restart_state(&sb);
        match expect {
            Expect::Old => assert_eq!(digest(&state), None, "install killed at {step}"),
            Expect::New => assert_eq!(digest(&state), Some(d2.clone()), "install killed at {step}"),
        }
        // The interrupted install can simply be run again.
        if expect == Expect::Old {
            sb.ok(&args);
            assert_eq!(digest(&restart_state(&sb)), Some(d2.clone()));
        }
    }

    for &(step, expect) in REPLACE {
        let (sb, d1, d2) = world();
        sb.ok(&["plugin", "install", "./v1", "--yes"]);
        let args = ["plugin", "install", "./v2", "--yes", "--replace", "--json"];
        sb.pause_at(&args, step).kill();
        kill_points += 1;
        let state = restart_state(&sb);
        let want = if expect == Expect::Old { &d1 } else { &d2 };
        assert_eq!(
            digest(&state).as_ref(),
            Some(want),
            "replace killed at {step}"
        );
        sb.ok(&args);
        assert_eq!(digest(&restart_state(&sb)), Some(d2.clone()));
    }

    for &(step, expect) in REMOVE {
        let (sb, d1, _d2) = world();
        sb.ok(&["plugin", "install", "./v1", "--yes"]);
        let args = ["plugin", "remove", "p", "--yes", "--json"];
        sb.pause_at(&args, step).kill();
        kill_points += 1;
        let state = restart_state(&sb);
        match expect {
            Expect::Old => {
                assert_eq!(digest(&state), Some(d1.clone()), "remove killed at {step}");
                sb.ok(&args);
            }
            Expect::New => assert_eq!(digest(&state), None, "remove killed at {step}"),
        }
        assert_eq!(digest(&restart_state(&sb)), None);
        assert!(
            !sb.home.join("plugins/p").exists(),
            "removed tree left behind"
        );
        // The source directory is never touched by removal.
        assert_eq!(digest_of(&sb.work.join("v1")), d1);
    }

    for &(step, expect) in TOGGLE {
        let (sb, d1, _) = world();
        sb.ok(&["plugin", "install", "./v1", "--yes"]);
        sb.pause_at(&["plugin", "disable", "p"], step).kill();
        kill_points += 1;
        let state = restart_state(&sb).expect("still installed");
        assert_eq!(state["treeDigest"], d1.as_str());
        assert_eq!(
            state["enabled"],
            expect == Expect::Old,
            "disable killed at {step}"
        );
    }

    assert_eq!(
        kill_points,
        INSTALL.len() + REPLACE.len() + REMOVE.len() + TOGGLE.len()
    );
    println!("crash matrix: {kill_points} kill points exercised");
}

#[test]
fn crash_during_a_linked_replace_keeps_the_copy_or_the_link() {
    let (sb, d1, _) = world();
    sb.ok(&["plugin", "install", "./v1", "--yes"]);
    native_package(&sb.work.join("dev"), "p", "3.0.0-dev");
    let args = ["plugin", "install", "./dev", "--yes", "--link", "--replace"];
    sb.pause_at(&args, "after_swap").kill();
    let state = restart_state(&sb).expect("old copy still registered");
    assert_eq!(state["treeDigest"], d1.as_str());
    assert!(
        fs::symlink_metadata(sb.home.join("plugins/p"))
            .unwrap()
            .is_dir()
    );
    sb.ok(&args);
    let link = fs::read_link(sb.home.join("plugins/p")).unwrap();
    assert_eq!(link, fs::canonicalize(sb.work.join("dev")).unwrap());
}

#[test]
fn crash_while_replacing_an_unregistered_directory_restores_it() {
    let (sb, _d1, d2) = world();
    // A retained copy nobody registered (e.g. left by an earlier removal).
    native_package(&sb.home.join("plugins/p"), "p", "0.0.1-retained");
    let retained = tree_listing(&sb.home.join("plugins/p"));
    let args = ["plugin", "install", "./v2", "--yes", "--replace", "--json"];
    for step in ["after_backup", "after_swap", "before_registry_rename"] {
        sb.pause_at(&args, step).kill();
        assert_eq!(digest(&restart_state(&sb)), None, "killed at {step}");
        assert_eq!(
            tree_listing(&sb.home.join("plugins/p")),
            retained,
            "the displaced directory is put back after a kill at {step}"
        );
    }
    // Without --replace it is refused, never adopted or overwritten.
    let out = sb.run(&["plugin", "install", "./v2", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        last_json(&out)["actions"][0]["errorCode"],
        "install.already_exists"
    );
    sb.ok(&args);
    assert_eq!(digest(&restart_state(&sb)), Some(d2));
}

#[test]
fn crash_during_a_fresh_link_install_leaves_no_link() {
    let (sb, _, _) = world();
    let args = ["plugin", "install", "./v1", "--yes", "--link", "--json"];
    for step in ["after_swap", "before_registry_rename"] {
        sb.pause_at(&args, step).kill();
        restart_state(&sb);
        assert!(
            fs::symlink_metadata(sb.home.join("plugins/p")).is_err(),
            "an unregistered link survived a kill at {step}"
        );
    }
    sb.pause_at(&args, "after_registry_rename").kill();
    let out = sb.ok(&["plugin", "list", "--json"]);
    assert!(out.contains("\"name\":\"p\""), "{out}");
    assert!(fs::read_link(sb.home.join("plugins/p")).is_ok());
}

#[test]
fn concurrent_installers_lose_no_registry_update() {
    let sb = Sandbox::new();
    let names: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    for n in &names {
        native_package(&sb.work.join(n), n, "1.0.0");
    }
    let children: Vec<_> = names
        .iter()
        .map(|n| {
            sb.command(&["plugin", "install", &format!("./{n}"), "--yes", "--json"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let registry = sb.registry();
    let mut got: Vec<String> = registry["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    assert_eq!(got, names, "every concurrent install is registered");
    for n in &names {
        let root = sb.home.join("plugins").join(n);
        let entry = registry["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == n.as_str())
            .unwrap();
        assert_eq!(digest_of(&root), entry["treeDigest"].as_str().unwrap());
    }
}
