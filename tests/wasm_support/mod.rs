//! Shared by the wasm tests and benchmarks: fixture components and a
//! plugin laid out on disk the way an installed one is.
#![allow(dead_code)]

pub mod fixtures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use reasonix::runtime::wasm::{SandboxPolicy, WasmStart};
use reasonix_protocol::types::SessionContext;
use reasonix_sidecar::handshake::ManifestCeiling;

/// A Reasonix home with one installed plugin whose component is `wasm`.
pub struct TestPlugin {
    pub dir: tempfile::TempDir,
    pub plugin_id: String,
}

impl TestPlugin {
    pub fn new(plugin_id: &str, component: &[u8]) -> TestPlugin {
        let dir = tempfile::tempdir().expect("temp dir");
        let plugin = TestPlugin {
            dir,
            plugin_id: plugin_id.to_owned(),
        };
        std::fs::create_dir_all(plugin.root()).expect("plugin root");
        std::fs::write(plugin.component_path(), component).expect("component");
        std::fs::write(plugin.root().join("README.md"), "plugin root file\n").expect("readme");
        plugin
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("plugins").join(&self.plugin_id)
    }

    pub fn component_path(&self) -> PathBuf {
        self.root().join("extension.wasm")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data").join(&self.plugin_id)
    }

    /// A ceiling allowing `input.receive`, `tool.before` and
    /// `permission.decision`.
    pub fn ceiling(&self) -> ManifestCeiling {
        ManifestCeiling {
            plugin_id: self.plugin_id.clone(),
            intercepts: vec![
                "input.receive".into(),
                "tool.before".into(),
                "permission.decision".into(),
            ],
            capabilities: vec!["interceptors".into()],
            ..ManifestCeiling::default()
        }
    }

    pub fn start_with(&self, ceiling: ManifestCeiling, env: BTreeMap<String, String>) -> WasmStart {
        WasmStart::new(
            self.component_path(),
            ceiling,
            session(),
            SandboxPolicy::for_plugin(self.home(), &self.plugin_id, &self.root(), env),
        )
    }

    pub fn start(&self) -> WasmStart {
        self.start_with(self.ceiling(), BTreeMap::new())
    }
}

pub fn session() -> SessionContext {
    SessionContext {
        session_id: "s-1".into(),
        workspace_root: "/workspace".into(),
        generation: 1,
        epoch: None,
    }
}

/// The sandbox-probe guest (`tests/guests/sandbox-probe`) for
/// `wasm32-wasip2`, built once per run with the host's cargo.
pub fn probe_component() -> &'static [u8] {
    static COMPONENT: OnceLock<Vec<u8>> = OnceLock::new();
    COMPONENT.get_or_init(|| {
        let manifest =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/guests/sandbox-probe/Cargo.toml");
        let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../wasm-guests");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--locked",
                "--target",
                "wasm32-wasip2",
            ])
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target_dir)
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "building the probe guest failed (is the wasm32-wasip2 target installed?)"
        );
        let wasm: PathBuf = target_dir.join("wasm32-wasip2/release/sandbox_probe.wasm");
        std::fs::read(&wasm).expect("the probe component")
    })
}
