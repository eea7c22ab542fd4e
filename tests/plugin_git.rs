//! Git sources against local bare repositories made here with the real
//! `git`: default branch, branch, tag, subdirectory, full-SHA pin, a HEAD
//! that moves between plan and apply, and URL validation. The GitHub base is
//! redirected with `REASONIX_GITHUB_BASE`; nothing touches the network.
mod plugin_common;

use std::path::PathBuf;
use std::process::Command;

use plugin_common::*;

/// `<base>/o/r.git` (bare) plus a work clone to commit and push from.
struct Remote {
    base: PathBuf,
    work: PathBuf,
}

impl Remote {
    fn new(sb: &Sandbox) -> Self {
        let base = sb.dir.path().join("github");
        let bare = base.join("o/r.git");
        std::fs::create_dir_all(&bare).unwrap();
        git(&bare, &["init", "--bare", "-q"]);
        // GitHub serves any reachable commit by SHA; so does this remote.
        git(&bare, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
        let work = sb.dir.path().join("remote-work");
        std::fs::create_dir_all(&work).unwrap();
        git(&work, &["init", "-q"]);
        git(&work, &["remote", "add", "origin", bare.to_str().unwrap()]);
        Self { base, work }
    }

    fn commit(&self, message: &str) -> String {
        git(&self.work, &["add", "-A"]);
        git(&self.work, &["commit", "-q", "-m", message]);
        git(&self.work, &["push", "-q", "origin", "HEAD:main", "--tags"]);
        git(&self.work, &["rev-parse", "HEAD"])
    }

    fn base_url(&self) -> String {
        format!("file://{}", self.base.display())
    }
}

fn sandbox_with_remote() -> (Sandbox, Remote) {
    let sb = Sandbox::new();
    let remote = Remote::new(&sb);
    let sb = sb.with_env("REASONIX_GITHUB_BASE", &remote.base_url());
    (sb, remote)
}

#[test]
fn default_branch_tag_and_subdirectory() {
    let (sb, remote) = sandbox_with_remote();
    native_package(&remote.work, "gitpkg", "1.0.0");
    native_package(&remote.work.join("plugins/sub"), "subpkg", "0.1.0");
    let first = remote.commit("v1");
    git(&remote.work, &["tag", "v1"]);
    git(&remote.work, &["push", "-q", "origin", "v1"]);
    native_package(&remote.work, "gitpkg", "2.0.0");
    let second = remote.commit("v2");

    // Default branch, `git:` spelling.
    let (code, plan) = sb.json(&[
        "plugin",
        "install",
        "git:github.com/o/r",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 0, "{plan}");
    assert_eq!(plan["source"], "git:github.com/o/r");
    let a = &plan["actions"][0];
    assert_eq!(a["source"], "https://github.com/o/r");
    assert_eq!(a["commit"], second.as_str());
    assert_eq!(a["version"], "2.0.0");
    assert!(!sb.home.exists());
    let (code, done) = sb.json(&[
        "plugin",
        "install",
        "https://github.com/o/r.git",
        "--yes",
        "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    let reg = sb.registry();
    assert_eq!(reg["plugins"][0]["commit"], second.as_str());
    assert!(
        !sb.home.join("plugins/gitpkg/.git").exists(),
        ".git is never copied"
    );
    assert_eq!(
        reg["plugins"][0]["treeDigest"],
        digest_of(&sb.home.join("plugins/gitpkg")).as_str()
    );

    // A tag.
    let (code, plan) = sb.json(&[
        "plugin",
        "install",
        "https://github.com/o/r/tree/v1",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(code, 0, "{plan}");
    assert_eq!(plan["actions"][0]["commit"], first.as_str());
    assert_eq!(plan["actions"][0]["version"], "1.0.0");

    // A subdirectory of a branch.
    let (code, done) = sb.json(&[
        "plugin",
        "install",
        "https://github.com/o/r/tree/main/plugins/sub",
        "--yes",
        "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["actions"][0]["name"], "subpkg");
    assert!(
        sb.home
            .join("plugins/subpkg/reasonix-plugin.json")
            .is_file()
    );
    assert!(!sb.home.join("plugins/subpkg/plugins").exists());
}

/// A `git` first on `PATH` that logs each invocation's subcommand, then
/// runs the real one.
fn counting_git(sb: &Sandbox) -> (PathBuf, String) {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bin = sb.dir.path().join("counting-bin");
    let log = sb.dir.path().join("git.log");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("git");
    write(
        &script,
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in clone|fetch) echo \"$a\" >> '{}';; esac; done\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (log, path)
}

#[test]
fn plan_and_apply_share_one_clone() {
    let (sb, remote) = sandbox_with_remote();
    native_package(&remote.work.join("plugins/sub"), "subpkg", "0.1.0");
    let commit = remote.commit("v1");
    let (log, path) = counting_git(&sb);
    let sb = sb.with_env("PATH", &path);
    let (code, done) = sb.json(&[
        "plugin",
        "install",
        "https://github.com/o/r/tree/main/plugins/sub",
        "--yes",
        "--json",
    ]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["actions"][0]["commit"], commit.as_str());
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().collect::<Vec<_>>(),
        ["clone"],
        "plan and apply of one source at one commit clone once"
    );
    assert_eq!(
        sb.registry()["plugins"][0]["treeDigest"],
        digest_of(&sb.home.join("plugins/subpkg")).as_str()
    );
}

#[test]
fn full_sha_pin_installs_that_commit() {
    let (sb, remote) = sandbox_with_remote();
    native_package(&remote.work, "pinned", "1.0.0");
    let first = remote.commit("v1");
    native_package(&remote.work, "pinned", "2.0.0");
    remote.commit("v2");
    let url = format!("https://github.com/o/r/tree/{first}");
    let (code, done) = sb.json(&["plugin", "install", &url, "--yes", "--json"]);
    assert_eq!(code, 0, "{done}");
    assert_eq!(done["actions"][0]["commit"], first.as_str());
    assert_eq!(sb.registry()["plugins"][0]["version"], "1.0.0");
    assert_eq!(sb.registry()["plugins"][0]["commit"], first.as_str());
}

#[test]
fn head_moved_between_plan_and_apply() {
    let (sb, remote) = sandbox_with_remote();
    native_package(&remote.work, "moving", "1.0.0");
    let approved = remote.commit("v1");
    let args = ["plugin", "install", "git:github.com/o/r", "--yes", "--json"];
    let paused = sb.pause_at(&args, "after_plan");
    native_package(&remote.work, "moving", "2.0.0");
    let moved = remote.commit("v2");
    assert_ne!(moved, approved);
    let out = paused.resume();
    assert!(out.status.success(), "{}", stderr(&out));
    let done = last_json(&out);
    assert_eq!(done["actions"][0]["commit"], approved.as_str());
    // The approved snapshot was installed, not the new HEAD.
    let reg = sb.registry();
    assert_eq!(reg["plugins"][0]["commit"], approved.as_str());
    assert_eq!(reg["plugins"][0]["version"], "1.0.0");

    // Across processes, a reviewed contentDigest refuses the moved source.
    let (_, plan) = sb.json(&[
        "plugin",
        "install",
        "git:github.com/o/r",
        "--dry-run",
        "--json",
    ]);
    let digest = plan["contentDigest"].as_str().unwrap().to_string();
    native_package(&remote.work, "moving", "3.0.0");
    remote.commit("v3");
    let before = tree_listing(&sb.home);
    let (code, v) = sb.json(&[
        "plugin",
        "install",
        "git:github.com/o/r",
        "--yes",
        "--replace",
        "--json",
        "--expect-digest",
        &digest,
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["errorCode"], "install.digest_mismatch", "{v}");
    assert_eq!(before, tree_listing(&sb.home));
}

#[test]
fn refused_git_sources() {
    let (sb, remote) = sandbox_with_remote();
    native_package(&remote.work.join("pkg"), "p", "1.0.0");
    std::os::unix::fs::symlink("/etc", remote.work.join("escape")).unwrap();
    remote.commit("v1");
    for (source, code) in [
        ("https://gitlab.com/o/r", "install.unsupported_source"),
        ("https://user@github.com/o/r", "install.unsupported_source"),
        ("https://github.com/o/r?ref=x", "install.unsupported_source"),
        (
            "https://github.com/o/r/blob/main/x",
            "install.unsupported_source",
        ),
        (
            "https://github.com/o/r/tree/main/escape",
            "install.unsafe_path",
        ),
        ("https://github.com/o/missing", "install.source_unreadable"),
        (
            "https://github.com/o/r/tree/no-such-branch",
            "install.source_unreadable",
        ),
    ] {
        let (status, v) = sb.json(&["plugin", "install", source, "--dry-run", "--json"]);
        assert_eq!(status, 1, "{source}: {v}");
        assert_eq!(v["errorCode"], code, "{source}: {v}");
        assert!(!v["next"].as_str().unwrap().is_empty());
    }
    let (status, v) = sb.json(&[
        "plugin",
        "install",
        "git:github.com/o/r",
        "--link",
        "--yes",
        "--json",
    ]);
    assert_eq!(status, 1);
    assert_eq!(v["errorCode"], "install.unsupported_source", "{v}");
    assert!(!sb.home.exists());
}
