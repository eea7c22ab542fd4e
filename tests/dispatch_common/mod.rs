//! Shared helpers of the dispatcher's end-to-end tests: plugin packages whose
//! runtime is the scripted test sidecar (`host/examples/scripted_sidecar.rs`),
//! installed through `reasonix plugin install` into a temporary home.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use reasonix::home::ReasonixHome;
use reasonix::runtime::generation::Generation;
use reasonix::runtime::host::{CandidateSource, RuntimeHost, SessionCarry};
use reasonix::runtime::registry_source::RegistrySource;
use reasonix::runtime::ui::{UiAnswers, UiHub};
use serde_json::{Value, json};

pub const REASONIX: &str = env!("CARGO_BIN_EXE_reasonix");

/// The scripted sidecar binary, built by `cargo test` as an example.
pub fn sidecar_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let debug = exe.parent().and_then(Path::parent).expect("target dir");
    let path = debug.join("examples").join("scripted_sidecar");
    assert!(path.exists(), "build the example first: {}", path.display());
    path
}

pub struct Env {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub log: PathBuf,
    pub workspace: PathBuf,
}

/// What `reasonix dev turn --json` returned.
pub struct TurnRun {
    pub code: i32,
    pub report: Value,
    pub stdout: String,
    pub stderr: String,
}

impl TurnRun {
    /// The decision chain of the n-th record of `point` as (plugin, result).
    pub fn chain(&self, point: &str) -> Vec<(String, String)> {
        self.report["points"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["point"] == point)
            .take(1)
            .flat_map(|p| p["steps"].as_array().cloned().unwrap_or_default())
            .map(|s| {
                (
                    s["plugin"].as_str().unwrap_or_default().to_string(),
                    s["result"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    pub fn status(&self) -> &str {
        self.report["status"]["status"].as_str().unwrap_or_default()
    }

    pub fn transcript_text(&self) -> Vec<String> {
        self.report["transcript"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(workspace.join("notes.txt"), "hello").unwrap();
        let log = dir.path().join("calls.log");
        Env {
            dir,
            home,
            log,
            workspace,
        }
    }

    /// Write a plugin package whose runtime is the scripted sidecar.
    /// `runtime` entries override the defaults (intercepts = the script's
    /// subscriptions, capabilities = interceptors).
    pub fn plugin(&self, name: &str, runtime: Value, script: Value) -> PathBuf {
        // Inside the workspace, so `--link` installs are allowed.
        let root = self.workspace.join("plugins").join(name);
        std::fs::create_dir_all(&root).unwrap();
        let mut script = script;
        script["name"] = json!(name);
        script["log"] = json!(self.log.display().to_string());
        if script.get("subscriptions").is_none() {
            script["subscriptions"] = json!([]);
        }
        std::fs::write(
            root.join("script.json"),
            serde_json::to_vec_pretty(&script).unwrap(),
        )
        .unwrap();
        let mut block = json!({
            "command": sidecar_binary().display().to_string(),
            "args": ["${REASONIX_PLUGIN_ROOT}/script.json"],
            "intercepts": script["subscriptions"],
            "capabilities": ["interceptors"],
        });
        for (key, value) in runtime.as_object().cloned().unwrap_or_default() {
            block[key] = value;
        }
        let manifest = json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": name,
            "version": "1.0.0",
            "description": format!("scripted test plugin {name}"),
            "runtime": block,
        });
        std::fs::write(
            root.join("reasonix-plugin.json"),
            serde_json::to_vec_pretty(&manifest).unwrap(),
        )
        .unwrap();
        root
    }

    /// Rewrite the script of a (linked) plugin.
    pub fn rewrite_script(&self, root: &Path, name: &str, script: Value) {
        let mut script = script;
        script["name"] = json!(name);
        script["log"] = json!(self.log.display().to_string());
        std::fs::write(
            root.join("script.json"),
            serde_json::to_vec_pretty(&script).unwrap(),
        )
        .unwrap();
    }

    pub fn reasonix(&self, args: &[&str]) -> std::process::Output {
        Command::new(REASONIX)
            .args(args)
            .env("REASONIX_HOME", &self.home)
            .current_dir(&self.workspace)
            .output()
            .expect("run reasonix")
    }

    /// `reasonix plugin install DIR --yes [--link]`, asserting success.
    pub fn install(&self, root: &Path, link: bool) {
        let mut args = vec!["plugin", "install", root.to_str().unwrap(), "--yes"];
        if link {
            args.push("--link");
        }
        let out = self.reasonix(&args);
        assert!(
            out.status.success(),
            "install {} failed:\n{}\n{}",
            root.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Write and install a plugin in one go.
    pub fn add(&self, name: &str, runtime: Value, script: Value) -> PathBuf {
        let root = self.plugin(name, runtime, script);
        self.install(&root, false);
        root
    }

    /// `reasonix dev turn --json ARGS…`.
    pub fn turn(&self, args: &[&str]) -> TurnRun {
        let mut all = vec!["dev", "turn", "--json"];
        all.extend_from_slice(args);
        let out = self.reasonix(&all);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        TurnRun {
            code: out.status.code().unwrap_or(-1),
            report,
            stdout,
            stderr,
        }
    }

    /// Lines of the shared call log.
    pub fn log(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn reasonix_home(&self) -> ReasonixHome {
        ReasonixHome::at(&self.home)
    }

    /// The production candidate source over this home, with the reasonix
    /// binary as the sidecar guard.
    pub fn source(&self, hub: &Arc<UiHub>) -> Arc<RegistrySource> {
        Arc::new(RegistrySource::new(
            self.reasonix_home(),
            reasonix_sidecar::Guard::Exe(PathBuf::from(REASONIX)),
            Arc::clone(hub),
        ))
    }

    /// Build one generation from the registry.
    pub async fn generation(&self, number: u64) -> Result<(Generation, Arc<UiHub>), String> {
        let hub = Arc::new(UiHub::new(UiAnswers::Headless));
        let candidates = self.source(&hub).candidates()?;
        let generation = Generation::build(
            number,
            candidates,
            "s-test",
            &self.workspace.display().to_string(),
        )
        .await
        .map_err(|e| e.to_string())?;
        Ok((generation, hub))
    }

    /// Start a runtime host over the registry.
    pub async fn host(&self) -> Result<RuntimeHost, String> {
        let hub = Arc::new(UiHub::new(UiAnswers::Headless));
        RuntimeHost::start(
            self.source(&hub),
            "s-test",
            &self.workspace.display().to_string(),
            hub,
            SessionCarry::default(),
        )
        .await
        .map_err(|e| e.to_string())
    }
}

/// What a piped `reasonix chat --json` printed.
pub struct ChatRun {
    pub code: i32,
    pub events: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
}

impl ChatRun {
    /// The events of one `type`.
    pub fn of(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    /// The texts of the `user_message` events: what reached the model.
    pub fn user_messages(&self) -> Vec<String> {
        self.of("user_message")
            .iter()
            .map(|e| e["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

impl Env {
    /// A Claude-format plugin (`.claude-plugin/plugin.json`) with
    /// `hooks/hooks.json` = `{"hooks": hooks}` and the given extra files
    /// (scripts are made executable).
    pub fn claude_plugin(&self, name: &str, hooks: Value, files: &[(&str, &str)]) -> PathBuf {
        let root = self.workspace.join("plugins").join(name);
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        std::fs::write(
            root.join(".claude-plugin/plugin.json"),
            serde_json::to_vec_pretty(&json!({"name": name, "version": "1.0.0",
                "description": format!("test hooks {name}")}))
            .unwrap(),
        )
        .unwrap();
        std::fs::write(
            root.join("hooks/hooks.json"),
            serde_json::to_vec_pretty(&json!({ "hooks": hooks })).unwrap(),
        )
        .unwrap();
        for (path, text) in files {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
            if path.ends_with(".sh") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        root
    }

    /// `reasonix chat --json ARGS…` with `lines` on stdin.
    pub fn chat(&self, lines: &[&str], args: &[&str]) -> ChatRun {
        use std::io::Write;
        let mut child = Command::new(REASONIX)
            .args(["chat", "--json"])
            .args(args)
            .env("REASONIX_HOME", &self.home)
            .current_dir(&self.workspace)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run reasonix chat");
        let mut stdin = child.stdin.take().unwrap();
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().expect("wait for chat");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        ChatRun {
            code: out.status.code().unwrap_or(-1),
            events: stdout
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}
