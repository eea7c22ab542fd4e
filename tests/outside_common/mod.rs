//! Helpers of the black-box conformance tests: plugin packages whose runtime
//! is `tests/outside/sidecar.py`, an independent Python sidecar written from
//! the specification, installed with `reasonix plugin install` into a
//! temporary `$REASONIX_HOME` and driven with `reasonix dev turn`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

pub const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

pub fn sidecar_source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/outside/sidecar.py")
}

pub struct Outside {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub workspace: PathBuf,
    pub log: PathBuf,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.all()))
    }
}

impl Outside {
    pub fn new() -> Outside {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        let log = dir.path().join("sidecar.log");
        Outside {
            dir,
            home,
            workspace,
            log,
        }
    }

    /// A v2 package at `<tmp>/src/<name>` whose runtime is the Python sidecar
    /// in `mode`; `runtime` fields are merged over the defaults.
    pub fn package(&self, name: &str, mode: &str, runtime: Value, extra: Value) -> PathBuf {
        let root = self.dir.path().join("src").join(name);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        let script = root.join("bin").join("sidecar");
        std::fs::copy(sidecar_source(), &script).unwrap();
        make_executable(&script);
        let mut rt = json!({
            "command": "${REASONIX_PLUGIN_ROOT}/bin/sidecar",
            "env": {"OUTSIDE_MODE": mode},
            "capabilities": ["interceptors"],
            "intercepts": ["input.receive"],
        });
        for (k, v) in runtime.as_object().cloned().unwrap_or_default() {
            if v.is_null() {
                rt.as_object_mut().unwrap().remove(&k);
            } else {
                rt[k] = v;
            }
        }
        let mut manifest = json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": name,
            "version": "1.2.3",
            "description": "outside conformance sidecar",
            "runtime": rt,
        });
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            manifest[k] = v;
        }
        std::fs::write(
            root.join("reasonix-plugin.json"),
            serde_json::to_string_pretty(&manifest).unwrap(),
        )
        .unwrap();
        root
    }

    pub fn reasonix(&self, args: &[&str]) -> Run {
        Run::from(
            Command::new(REASONIX)
                .args(args)
                .env("REASONIX_HOME", &self.home)
                .env("OUTSIDE_LOG", &self.log)
                .current_dir(&self.workspace)
                .output()
                .expect("run reasonix"),
        )
    }

    pub fn install(&self, root: &Path) {
        let run = self.reasonix(&["plugin", "install", root.to_str().unwrap(), "--yes"]);
        assert_eq!(run.code, 0, "install failed: {}", run.all());
    }

    /// `reasonix dev turn` with the workspace as cwd.
    pub fn turn(&self, args: &[&str]) -> Run {
        let mut all = vec![
            "dev",
            "turn",
            "--workspace",
            self.workspace.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        self.reasonix(&all)
    }

    /// Every record the sidecar(s) logged.
    pub fn log(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("log line"))
            .collect()
    }

    /// Frames the host wrote, parsed, in order.
    pub fn received(&self) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|r| r["kind"] == "recv")
            .filter_map(|r| serde_json::from_str(r["raw"].as_str()?.trim()).ok())
            .collect()
    }

    pub fn received_method(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|f| f["method"] == method)
            .collect()
    }

    pub fn pids(&self, kind: &str) -> Vec<i64> {
        self.log()
            .iter()
            .filter(|r| r["kind"] == kind)
            .filter_map(|r| r["pid"].as_i64())
            .collect()
    }

    /// The sidecar processes (and their grandchildren) are gone after the run.
    pub fn assert_no_leftovers(&self) {
        for pid in self
            .pids("start")
            .into_iter()
            .chain(self.pids("grandchild"))
        {
            assert!(
                !alive(pid),
                "process {pid} outlived the reasonix run; log: {:?}",
                self.log()
            );
        }
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(path).unwrap().permissions();
    perm.set_mode(0o755);
    std::fs::set_permissions(path, perm).unwrap();
}

/// Alive and not a zombie (a zombie of an unrelated reaper is dead for us).
pub fn alive(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        }
        Err(_) => false,
    }
}
