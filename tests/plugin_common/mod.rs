//! Helpers shared by the `plugin_*` end-to-end tests: a sandbox with its own
//! Reasonix home, user home and workspace; the real `reasonix` binary; full
//! tree listings for before/after comparisons; small package builders.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

pub const BIN: &str = env!("CARGO_BIN_EXE_reasonix");

/// A temp world: `home` (REASONIX_HOME), `user` (HOME), `work` (cwd).
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub user: PathBuf,
    pub work: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("rxhome");
        let user = dir.path().join("user");
        let work = dir.path().join("work");
        fs::create_dir_all(&user).unwrap();
        fs::create_dir_all(&work).unwrap();
        Self {
            dir,
            home,
            user,
            work,
            env: Vec::new(),
        }
    }

    pub fn with_env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .current_dir(&self.work)
            .env("REASONIX_HOME", &self.home)
            .env("HOME", &self.user)
            .env_remove("REASONIX_TEST_PAUSE_AT")
            .env_remove("REASONIX_TEST_PAUSE_DIR")
            .env_remove("REASONIX_GITHUB_BASE");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Run and require exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "reasonix {args:?} failed ({:?})\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Run `install … --json` and parse the one JSON line.
    pub fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let out = self.run(args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().last().unwrap_or_else(|| {
            panic!(
                "no JSON from {args:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let v = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("bad JSON from {args:?}: {e}: {line}"));
        (out.status.code().unwrap_or(-1), v)
    }

    /// The registry file as JSON (an empty registry when there is none).
    pub fn registry(&self) -> serde_json::Value {
        match fs::read(self.home.join("plugin-packages.json")) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
            Err(_) => serde_json::json!({"version": 1, "plugins": []}),
        }
    }
}

/// Every entry under `root` (not following links): relative path → kind,
/// mode and a content hash for files, target for links.
pub fn tree_listing(root: &Path) -> BTreeMap<String, String> {
    fn go(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let meta = fs::symlink_metadata(e.path()).unwrap();
            let mode = meta.permissions().mode() & 0o777;
            if meta.is_dir() {
                out.insert(r.clone(), format!("dir {mode:o}"));
                go(&e.path(), &r, out);
            } else if meta.file_type().is_symlink() {
                out.insert(
                    r,
                    format!("link -> {}", fs::read_link(e.path()).unwrap().display()),
                );
            } else if meta.is_file() {
                let hash = hex::encode(Sha256::digest(fs::read(e.path()).unwrap()));
                out.insert(r, format!("file {mode:o} {hash}"));
            } else {
                out.insert(r, "other".into());
            }
        }
    }
    let mut out = BTreeMap::new();
    if root.exists() {
        out.insert(".".into(), "exists".into());
    }
    go(root, "", &mut out);
    out
}

pub fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A native v2 package: one skill, one command, one prompt.
pub fn native_package(dir: &Path, name: &str, version: &str) {
    write(
        &dir.join("reasonix-plugin.json"),
        &format!(
            r#"{{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "{name}",
  "version": "{version}",
  "description": "Test plugin {name}",
  "contributes": {{
    "skills": ["skills"],
    "commands": ["commands"],
    "prompts": ["prompts"]
  }}
}}
"#
        ),
    );
    write(
        &dir.join("skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Say hello\n---\nSay hello to the user.\n",
    );
    write(
        &dir.join("commands/hello.md"),
        "---\ndescription: Hello command\nargument-hint: <who>\n---\nHello $ARGUMENTS\n",
    );
    write(
        &dir.join("prompts/review.md"),
        "---\ndescription: Review prompt\n---\nReview $1\n",
    );
}

/// A native package that also declares a SessionStart hook.
pub fn native_package_with_hook(dir: &Path, name: &str) {
    native_package(dir, name, "1.0.0");
    write(
        &dir.join("reasonix-plugin.json"),
        &format!(
            r#"{{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "{name}",
  "version": "1.0.0",
  "contributes": {{
    "skills": ["skills"],
    "hooks": {{ "SessionStart": [ {{ "contextFile": "context/start.md" }} ] }}
  }}
}}
"#
        ),
    );
    write(&dir.join("context/start.md"), "startup context\n");
}

/// The installed tree's digest, recomputed independently of the binary.
pub fn digest_of(root: &Path) -> String {
    reasonix::install::digest::tree_digest(root).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A child paused at a publication step (`REASONIX_TEST_PAUSE_AT`).
pub struct Paused {
    pub child: std::process::Child,
    pub dir: PathBuf,
    pub step: String,
}

impl Sandbox {
    /// Start `args` so that it stops at `step`, and wait until it is there.
    pub fn pause_at(&self, args: &[&str], step: &str) -> Paused {
        let dir = self
            .dir
            .path()
            .join(format!("pause-{step}-{}", rand_suffix()));
        fs::create_dir_all(&dir).unwrap();
        let child = self
            .command(args)
            .env("REASONIX_TEST_PAUSE_AT", step)
            .env("REASONIX_TEST_PAUSE_DIR", &dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut paused = Paused {
            child,
            dir,
            step: step.into(),
        };
        paused.wait_reached(args);
        paused
    }
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

impl Paused {
    fn wait_reached(&mut self, args: &[&str]) {
        let marker = self.dir.join(&self.step);
        // A bound so a broken build fails instead of hanging; not a timing assertion.
        for _ in 0..30_000 {
            if marker.exists() {
                return;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                let out = std::mem::replace(&mut self.child, Command::new("true").spawn().unwrap())
                    .wait_with_output()
                    .unwrap();
                panic!(
                    "reasonix {args:?} exited ({status}) before reaching {}\nstdout:\n{}\nstderr:\n{}",
                    self.step,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("reasonix {args:?} never reached {}", self.step);
    }

    /// SIGKILL the child where it stands.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert!(!status.success());
    }

    /// Let the child go on and collect its output.
    pub fn resume(self) -> Output {
        fs::write(self.dir.join(format!("{}.resume", self.step)), "").unwrap();
        self.child.wait_with_output().unwrap()
    }
}

/// The last stdout line of an output, parsed as JSON.
pub fn last_json(out: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| {
        panic!(
            "no stdout; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("bad JSON ({e}): {line}"))
}

/// `git <args>` in `dir` with a fixed identity and no user or system config.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A bare repository `<base>/<owner>/<repo>.git` (what `REASONIX_GITHUB_BASE=file://<base>`
/// serves as `https://github.com/<owner>/<repo>`) with `files` committed on
/// `main`; returns the commit. Symlinks are `("path", "-> target")`.
pub fn bare_repo(base: &Path, owner: &str, repo: &str, files: &[(&str, &str)]) -> String {
    let bare = base.join(owner).join(format!("{repo}.git"));
    fs::create_dir_all(&bare).unwrap();
    git(&bare, &["init", "--bare", "-q"]);
    git(&bare, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let work = base.join("work").join(owner).join(repo);
    fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    for (path, body) in files {
        let target = work.join(path);
        match body.strip_prefix("-> ") {
            Some(link) => {
                fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink(link, &target).unwrap();
            }
            None => write(&target, body),
        }
    }
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "init"]);
    git(&work, &["push", "-q", bare.to_str().unwrap(), "HEAD:main"]);
    git(&work, &["rev-parse", "HEAD"])
}
