//! Limits and bad input: each gives a clear typed error and leaves the home
//! exactly as it was (full tree listings before and after).
mod plugin_common;

use std::fs;
use std::io::Write;
use std::path::Path;

use plugin_common::*;

/// A sandbox whose home already holds one installed plugin, so "unchanged"
/// is checked against a non-trivial tree.
fn populated() -> Sandbox {
    let sb = Sandbox::new();
    let keep = sb.work.join("keep");
    native_package(&keep, "keep", "1.0.0");
    sb.ok(&["plugin", "install", "./keep", "--yes", "--json"]);
    sb
}

/// Run a failing install and check its error code and an unchanged home.
fn refused(sb: &Sandbox, args: &[&str], code: &str) -> serde_json::Value {
    let before = tree_listing(&sb.home);
    let out = sb.run(args);
    let after = tree_listing(&sb.home);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?}: stderr:\n{}",
        stderr(&out)
    );
    let v = last_json(&out);
    let got = v["errorCode"]
        .as_str()
        .or_else(|| v["actions"][0]["errorCode"].as_str())
        .unwrap_or_default()
        .to_string();
    assert_eq!(got, code, "{args:?}: {v}\nstderr:\n{}", stderr(&out));
    let next = v["actions"][0]["next"]
        .as_str()
        .or_else(|| v["next"].as_str())
        .unwrap_or_default();
    assert!(!next.is_empty(), "every error names what to do next: {v}");
    assert_eq!(before, after, "{args:?} changed the home");
    v
}

fn make_zip(path: &Path, entries: &[(&str, &[u8])]) {
    let file = fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in entries {
        zip.start_file(*name, opts).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn copy_budget_of_256_mib() {
    let sb = populated();
    let pkg = sb.work.join("huge");
    native_package(&pkg, "huge", "1.0.0");
    // Sparse: 256 MiB + 1 byte of apparent size, no real disk use.
    let f = fs::File::create(pkg.join("blob.bin")).unwrap();
    f.set_len((256 << 20) + 1).unwrap();
    let v = refused(
        &sb,
        &["plugin", "install", "./huge", "--yes", "--json"],
        "install.limit_exceeded",
    );
    assert!(v["error"].as_str().unwrap().contains("256 MiB"), "{v}");
    // Exactly at the budget is fine for the copier: the limit is inclusive.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir(&src).unwrap();
    fs::File::create(src.join("a"))
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let dst = dir.path().join("dst");
    fs::create_dir(&dst).unwrap();
    let progress = reasonix::install::progress::Progress::hidden();
    let mut opts = reasonix::install::snapshot::CopyOptions::new(&progress);
    opts.budget_bytes = 1 << 20;
    assert!(reasonix::install::snapshot::copy_tree(&src, &dst, &opts).is_ok());
    let dst2 = dir.path().join("dst2");
    fs::create_dir(&dst2).unwrap();
    opts.budget_bytes = (1 << 20) - 1;
    let err = reasonix::install::snapshot::copy_tree(&src, &dst2, &opts).unwrap_err();
    assert_eq!(err.code.as_str(), "install.limit_exceeded");
}

#[test]
fn twenty_thousand_archive_entries() {
    let sb = populated();
    let mut entries: Vec<(String, Vec<u8>)> = vec![(
        "many/reasonix-plugin.json".into(),
        br#"{"apiVersion":"reasonix.io/plugin/v2","name":"many"}"#.to_vec(),
    )];
    for i in 0..20_000 {
        entries.push((format!("many/f/{i}"), Vec::new()));
    }
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    make_zip(&sb.work.join("many.zip"), &refs);
    let v = refused(
        &sb,
        &["plugin", "install", "./many.zip", "--dry-run", "--json"],
        "install.limit_exceeded",
    );
    assert!(v["error"].as_str().unwrap().contains("20000"), "{v}");
}

#[test]
fn twenty_thousand_directory_entries() {
    let sb = populated();
    let pkg = sb.work.join("wide");
    native_package(&pkg, "wide", "1.0.0");
    fs::create_dir_all(pkg.join("f")).unwrap();
    for i in 0..20_000 {
        fs::write(pkg.join("f").join(i.to_string()), "").unwrap();
    }
    refused(
        &sb,
        &["plugin", "install", "./wide", "--yes", "--json"],
        "install.limit_exceeded",
    );
}

#[test]
fn zip_entries_that_escape() {
    let sb = populated();
    let manifest: &[u8] = br#"{"apiVersion":"reasonix.io/plugin/v2","name":"slip"}"#;
    for (i, evil) in [
        "../evil.txt",
        "/tmp/reasonix-abs-evil.txt",
        "slip/../../evil.txt",
    ]
    .iter()
    .enumerate()
    {
        let zip = sb.work.join(format!("slip{i}.zip"));
        make_zip(
            &zip,
            &[("slip/reasonix-plugin.json", manifest), (evil, b"x")],
        );
        let v = refused(
            &sb,
            &[
                "plugin",
                "install",
                zip.to_str().unwrap(),
                "--yes",
                "--json",
            ],
            "install.unsafe_path",
        );
        assert!(v["error"].as_str().unwrap().contains(evil), "{v}");
    }
    assert!(!sb.dir.path().join("evil.txt").exists());
    assert!(!sb.work.join("evil.txt").exists());
    assert!(!Path::new("/tmp/reasonix-abs-evil.txt").exists());
    // An empty archive is refused too.
    make_zip(&sb.work.join("empty.zip"), &[]);
    refused(
        &sb,
        &["plugin", "install", "./empty.zip", "--yes", "--json"],
        "install.source_unreadable",
    );
}

#[test]
fn symlinks_that_escape_the_package() {
    let sb = populated();
    let outside = sb.dir.path().join("outside");
    write(
        &outside.join("skills/stolen/SKILL.md"),
        "---\nname: stolen\ndescription: x\n---\nbody\n",
    );
    // The declared skill root itself leaves the package.
    let pkg = sb.work.join("escape");
    write(
        &pkg.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"escape","contributes":{"skills":["skills"]}}"#,
    );
    std::os::unix::fs::symlink(outside.join("skills"), pkg.join("skills")).unwrap();
    let v = refused(
        &sb,
        &["plugin", "install", "./escape", "--yes", "--json"],
        "install.invalid_manifest",
    );
    assert!(v["error"].as_str().unwrap().contains("escapes"), "{v}");

    // The manifest is a link out of the package: the snapshot cannot hold it.
    let pkg2 = sb.work.join("escape2");
    fs::create_dir_all(&pkg2).unwrap();
    write(
        &outside.join("reasonix-plugin.json"),
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"escape2"}"#,
    );
    std::os::unix::fs::symlink(
        outside.join("reasonix-plugin.json"),
        pkg2.join("reasonix-plugin.json"),
    )
    .unwrap();
    let v = refused(
        &sb,
        &["plugin", "install", "./escape2", "--yes", "--json"],
        "install.unsafe_path",
    );
    assert!(v["error"].as_str().unwrap().contains("symlink"), "{v}");
}

#[test]
fn non_regular_files() {
    let sb = populated();
    let pkg = sb.work.join("fifo");
    native_package(&pkg, "fifo", "1.0.0");
    let status = std::process::Command::new("mkfifo")
        .arg(pkg.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success());
    let v = refused(
        &sb,
        &["plugin", "install", "./fifo", "--yes", "--json"],
        "install.non_regular_file",
    );
    assert!(v["error"].as_str().unwrap().contains("pipe"), "{v}");
}

#[test]
fn invalid_plugin_name() {
    let sb = populated();
    let pkg = sb.work.join("good");
    native_package(&pkg, "good", "1.0.0");
    for bad in ["bad/name", ".hidden", "white space", &"x".repeat(65)] {
        let name = format!("--name={bad}");
        refused(
            &sb,
            &["plugin", "install", "./good", "--yes", "--json", &name],
            "install.invalid_name",
        );
    }
}

#[test]
fn existing_name_without_replace() {
    let sb = populated();
    let again = sb.work.join("keep2");
    native_package(&again, "keep", "2.0.0");
    let v = refused(
        &sb,
        &["plugin", "install", "./keep2", "--yes", "--json"],
        "install.already_exists",
    );
    assert!(
        v["actions"][0]["next"]
            .as_str()
            .unwrap()
            .contains("--replace")
    );
    // With --replace it goes through.
    sb.ok(&[
        "plugin",
        "install",
        "./keep2",
        "--yes",
        "--replace",
        "--json",
    ]);
    assert_eq!(sb.registry()["plugins"][0]["version"], "2.0.0");
}

#[test]
fn manifest_name_that_changed_since_the_plan() {
    let sb = populated();
    let pkg = sb.work.join("renamed");
    native_package(&pkg, "renamed", "1.0.0");
    let before = tree_listing(&sb.home);
    let paused = sb.pause_at(
        &["plugin", "install", "./renamed", "--yes", "--json"],
        "after_plan",
    );
    native_package(&pkg, "other-name", "1.0.0");
    let out = paused.resume();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = last_json(&out);
    assert_eq!(v["actions"][0]["errorCode"], "install.name_mismatch", "{v}");
    assert_eq!(before, tree_listing(&sb.home));
    // Given explicitly, a --name that differs from the manifest is an override.
    sb.ok(&[
        "plugin",
        "install",
        "./renamed",
        "--yes",
        "--name",
        "chosen",
    ]);
    assert!(sb.home.join("plugins/chosen/reasonix-plugin.json").exists());
}

#[test]
fn source_changed_between_plan_and_apply() {
    let sb = populated();
    let pkg = sb.work.join("moving");
    native_package(&pkg, "moving", "1.0.0");
    let before = tree_listing(&sb.home);
    let paused = sb.pause_at(
        &["plugin", "install", "./moving", "--yes", "--json"],
        "after_plan",
    );
    write(
        &pkg.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: changed\n---\nx\n",
    );
    let out = paused.resume();
    assert_eq!(out.status.code(), Some(1));
    let v = last_json(&out);
    assert_eq!(
        v["actions"][0]["errorCode"], "install.digest_mismatch",
        "{v}"
    );
    assert_eq!(before, tree_listing(&sb.home));

    // Across processes: a reviewed contentDigest pins the material.
    let (_, plan) = sb.json(&["plugin", "install", "./moving", "--dry-run", "--json"]);
    let digest = plan["contentDigest"].as_str().unwrap().to_string();
    let plan_id = plan["planId"].as_str().unwrap().to_string();
    write(&pkg.join("commands/hello.md"), "changed again\n");
    refused(
        &sb,
        &[
            "plugin",
            "install",
            "./moving",
            "--yes",
            "--json",
            "--expect-digest",
            &digest,
        ],
        "install.digest_mismatch",
    );
    refused(
        &sb,
        &[
            "plugin",
            "install",
            "./moving",
            "--yes",
            "--json",
            "--plan-id",
            &plan_id,
        ],
        "install.approval_denied",
    );
    refused(
        &sb,
        &[
            "plugin",
            "install",
            "./moving",
            "--yes",
            "--json",
            "--expect-digest",
            "sha256:ABC",
        ],
        "install.not_pinnable",
    );
}

#[test]
fn installed_tree_changed_before_the_registry_rename() {
    let sb = populated();
    let v2 = sb.work.join("keep-v2");
    native_package(&v2, "keep", "2.0.0");
    let before = tree_listing(&sb.home);
    let paused = sb.pause_at(
        &[
            "plugin",
            "install",
            "./keep-v2",
            "--yes",
            "--replace",
            "--json",
        ],
        "before_registry_rename",
    );
    // A same-authority writer alters the swapped-in tree.
    fs::write(sb.home.join("plugins/keep/commands/hello.md"), "tampered").unwrap();
    let out = paused.resume();
    assert_eq!(out.status.code(), Some(1));
    let v = last_json(&out);
    assert_eq!(
        v["actions"][0]["errorCode"], "install.digest_mismatch",
        "{v}"
    );
    // The previous installation is intact, byte for byte.
    assert_eq!(before, tree_listing(&sb.home));
}

#[test]
fn refusals_that_write_nothing() {
    let sb = Sandbox::new();
    let pkg = sb.work.join("p");
    native_package(&pkg, "p", "1.0.0");
    let out = sb.run(&["plugin", "install", "./p"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--yes") && stderr(&out).contains("--dry-run"));
    let (code, v) = sb.json(&["plugin", "install", "./p", "--dry-run", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["status"], "planned");
    // Not installed: said before asking for --yes.
    let out = sb.run(&["plugin", "remove", "p"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("plugin.not_installed"),
        "{}",
        stderr(&out)
    );
    assert!(!sb.home.exists(), "nothing may be written under the home");
}

#[test]
fn corrupt_registry_fails_closed() {
    let sb = populated();
    fs::write(
        sb.home.join("plugin-packages.json"),
        "{\"version\":1,\"plugins\":[",
    )
    .unwrap();
    let before = tree_listing(&sb.home);
    for args in [
        &["plugin", "list"][..],
        &["plugin", "show", "keep"],
        &["plugin", "disable", "keep"],
        &["plugin", "remove", "keep", "--yes"],
    ] {
        let out = sb.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&out).contains("plugin-packages.json"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let pkg = sb.work.join("new");
    native_package(&pkg, "new", "1.0.0");
    let v = refused(
        &sb,
        &["plugin", "install", "./new", "--yes", "--json"],
        "plugin.state_unreadable",
    );
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("plugin-packages.json")
    );
    assert_eq!(before, tree_listing(&sb.home));
}

#[test]
fn invalid_registered_root_is_excluded_with_a_repair_warning() {
    let sb = populated();
    let other = sb.work.join("other");
    native_package(&other, "other", "1.0.0");
    sb.ok(&["plugin", "install", "./other", "--yes"]);
    fs::remove_dir_all(sb.home.join("plugins/keep")).unwrap();
    let out = sb.run(&["plugin", "list"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("keep"), "{stdout}");
    assert!(stdout.starts_with("other\tenabled\t1.0.0\t"), "{stdout}");
    assert!(stderr(&out).contains("keep") && stderr(&out).contains("Repair"));
    let out = sb.run(&["plugin", "show", "keep"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("plugin.missing_root"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--replace"), "{}", stderr(&out));
    // Removal still works and clears the entry.
    sb.ok(&["plugin", "remove", "keep", "--yes"]);
    // Orphans are never adopted: a complete package the registry does not name.
    let orphan = sb.home.join("plugins/orphan");
    native_package(&orphan, "orphan", "1.0.0");
    let stdout = sb.ok(&["plugin", "list"]);
    assert!(!stdout.contains("orphan"), "{stdout}");
}

#[test]
fn a_tree_that_no_longer_parses_is_marked_and_cleared() {
    let sb = populated();
    let manifest = sb.home.join("plugins/keep/reasonix-plugin.json");
    let good = fs::read(&manifest).unwrap();
    fs::write(
        &manifest,
        r#"{"apiVersion":"reasonix.io/plugin/v2","name":"keep","bogus":1}"#,
    )
    .unwrap();
    let out = sb.run(&["plugin", "list"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("keep\tdisabled_incompatible\t"));
    assert!(stderr(&out).contains("bogus"), "{}", stderr(&out));
    let reg = sb.registry();
    assert_eq!(reg["plugins"][0]["status"], "disabled_incompatible");
    assert!(
        reg["plugins"][0]["statusReason"]
            .as_str()
            .unwrap()
            .contains("bogus")
    );
    let out = sb.run(&["plugin", "doctor", "keep"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("invalid: "));
    fs::write(&manifest, good).unwrap();
    assert!(sb.ok(&["plugin", "list"]).starts_with("keep\tenabled\t"));
    assert!(sb.registry()["plugins"][0].get("status").is_none());
}
