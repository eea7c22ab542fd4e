//! Shared by the `examples_*` end-to-end tests: build a Rust example the
//! way `examples/build` does, into a private copy of its package, install
//! that copy into a temporary `$REASONIX_HOME` through `reasonix plugin
//! install --link --yes`, and run `reasonix` commands against it.
//!
//! The examples are built by a nested `cargo build` into their own target
//! directory (`target/examples-e2e`), so the outer `cargo test` holding the
//! main target directory never waits on itself.

#![allow(dead_code)] // each test file uses part of this

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use tempfile::TempDir;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ sits in the workspace")
        .to_path_buf()
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn build_target_dir() -> PathBuf {
    workspace_root().join("target").join("examples-e2e")
}

/// How an example's runtime is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A native sidecar: `bin/<name>`.
    Native,
    /// A wasm component: `bin/<name>.wasm`.
    Component,
}

/// Builds the example's artifact once per test process and returns its path.
fn build(name: &str, kind: Kind) -> PathBuf {
    static BUILT: OnceLock<Mutex<Vec<(String, PathBuf)>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, path)) = built.iter().find(|(n, _)| n == name) {
        return path.clone();
    }
    let package = format!("reasonix-example-{name}");
    let mut cmd = Command::new(cargo());
    cmd.current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", build_target_dir())
        .args(["build", "-q", "--locked", "-p", &package]);
    let artifact = match kind {
        Kind::Native => {
            cmd.args(["--bin", name]);
            build_target_dir().join("debug").join(name)
        }
        Kind::Component => {
            // As examples/build does: the small `component` profile.
            cmd.args(["--target", "wasm32-wasip2", "--profile", "component"]);
            build_target_dir()
                .join("wasm32-wasip2")
                .join("component")
                .join(format!("{}.wasm", package.replace('-', "_")))
        }
    };
    let out = cmd.output().expect("run cargo");
    assert!(
        out.status.success(),
        "building {package} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(artifact.is_file(), "{} was not built", artifact.display());
    built.push((name.to_owned(), artifact.clone()));
    artifact
}

fn copy_package(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "bin" || name == "target" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_package(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// A built copy of `examples/<name>` installed into a fresh home. The copy
/// lives inside the session's workspace directory, where a linked source
/// is allowed to be.
pub struct Installed {
    pub home: TempDir,
    pub workspace: TempDir,
    pub name: String,
}

/// Copies `examples/<dir>`, builds its runtime into the copy's `bin/`, and
/// installs the copy with `reasonix plugin install --link --yes`.
pub fn install(dir: &str, kind: Kind) -> Installed {
    let home = TempDir::new().unwrap();
    let workspace = TempDir::new().unwrap();
    add_to(&home, &workspace, dir, kind);
    Installed {
        home,
        workspace,
        name: dir.to_owned(),
    }
}

/// Builds `examples/<dir>` and copies the package, with its runtime in
/// `bin/`, to `root` (not installed).
pub fn built_copy(dir: &str, kind: Kind, root: &Path) {
    let artifact = build(dir, kind);
    copy_package(&workspace_root().join("examples").join(dir), root);
    std::fs::create_dir_all(root.join("bin")).unwrap();
    let file = match kind {
        Kind::Native => dir.to_owned(),
        Kind::Component => format!("{dir}.wasm"),
    };
    std::fs::copy(&artifact, root.join("bin").join(file)).unwrap();
}

/// Builds and installs `examples/<dir>` into an existing home, from a copy
/// at `<workspace>/<dir>`; returns the copy's root.
pub fn add_to(home: &TempDir, workspace: &TempDir, dir: &str, kind: Kind) -> PathBuf {
    let root = workspace.path().join(dir);
    built_copy(dir, kind, &root);
    let out = reasonix_in(
        home.path(),
        workspace.path(),
        &[
            "plugin",
            "install",
            "--link",
            "--yes",
            root.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "install {dir} failed:\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let answer: Value = serde_json::from_slice(&out.stdout).expect("install prints JSON");
    assert_eq!(answer["status"], "done", "{answer}");
    root
}

pub fn reasonix_in(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reasonix"))
        .env("REASONIX_HOME", home)
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run reasonix")
}

pub fn reasonix(home: &Path, args: &[&str]) -> Output {
    reasonix_in(home, &workspace_root(), args)
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Installed {
    /// The installed copy of the package.
    pub fn root(&self) -> PathBuf {
        self.workspace.path().join(&self.name)
    }

    pub fn run(&self, args: &[&str]) -> Output {
        reasonix_in(self.home.path(), self.workspace.path(), args)
    }

    /// `reasonix dev turn --json` with these extra arguments; the turn must
    /// complete.
    pub fn turn_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["dev", "turn", "--json"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert!(
            out.status.success(),
            "dev turn {args:?} failed:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("dev turn --json prints JSON")
    }
}

/// The steps of one hook point in a `dev turn --json` report.
pub fn steps<'a>(report: &'a Value, point: &str) -> &'a Value {
    &report["points"]
        .as_array()
        .expect("points")
        .iter()
        .find(|p| p["point"] == point)
        .unwrap_or_else(|| panic!("no point {point} in {report}"))["steps"]
}
