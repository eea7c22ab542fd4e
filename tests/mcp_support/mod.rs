//! Shared by the MCP end-to-end tests: real servers (the Python reference
//! SDK over stdio, Streamable HTTP and legacy SSE; the rmcp example
//! `mcp-counter`), server specs and hubs with short timeouts.

#![allow(dead_code)] // each test file uses part of this

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use reasonix::home::ReasonixHome;
use reasonix::mcp::{HubOptions, McpHub, ServerSpec};
use reasonix_package::McpServer;
use reasonix_sidecar::Guard;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ sits in the workspace")
        .to_path_buf()
}

/// The Python test server (tests/mcp/server.py).
pub fn server_py() -> PathBuf {
    workspace_root().join("tests/mcp/server.py")
}

pub fn raw_server_py() -> PathBuf {
    workspace_root().join("tests/mcp/raw_server.py")
}

/// Fails loudly when the reference SDK is missing (tests/run-all installs it).
pub fn require_python_sdk() {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let ok = Command::new("python3")
            .args(["-c", "import mcp.server.mcpserver, uvicorn"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "the Python MCP SDK is missing: `python3 -m pip install mcp` (tests/run-all does this)"
        );
    });
}

/// The rmcp example server, built once per test process into the examples'
/// own target directory (so this `cargo test` never waits on itself).
pub fn counter_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let target = workspace_root().join("target").join("examples-e2e");
            let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .current_dir(workspace_root())
                .env("CARGO_TARGET_DIR", &target)
                .args([
                    "build",
                    "-q",
                    "--locked",
                    "-p",
                    "reasonix-example-mcp-counter",
                    "--bin",
                    "mcp-counter",
                ])
                .output()
                .expect("run cargo");
            assert!(
                out.status.success(),
                "building mcp-counter failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            target.join("debug").join("mcp-counter")
        })
        .clone()
}

/// The `reasonix` binary: stdio servers run behind its sidecar guard.
pub fn guard() -> Guard {
    Guard::Exe(PathBuf::from(env!("CARGO_BIN_EXE_reasonix")))
}

pub fn server(transport: &str) -> McpServer {
    McpServer {
        name: String::new(),
        transport: transport.into(),
        command: None,
        args: Vec::new(),
        url: None,
        env: BTreeMap::new(),
        headers: BTreeMap::new(),
        display_name: None,
        description: None,
        auto_start: true,
        load: None,
        imported: false,
        serial: false,
    }
}

pub fn spec(id: &str, mut server: McpServer) -> ServerSpec {
    server.name = id.into();
    ServerSpec {
        id: id.into(),
        plugin: "tests".into(),
        plugin_root: workspace_root().join("tests/mcp"),
        tree_digest: None,
        server,
        conflict: None,
    }
}

/// The Python server over stdio; markers go to `dir`.
pub fn py_stdio(id: &str, dir: &Path, extra_env: &[(&str, &str)]) -> ServerSpec {
    require_python_sdk();
    let mut s = server("stdio");
    s.command = Some("python3".into());
    s.args = vec![server_py().display().to_string(), "stdio".into()];
    s.env
        .insert("MCP_TEST_DIR".into(), dir.display().to_string());
    for (k, v) in extra_env {
        s.env.insert((*k).into(), (*v).into());
    }
    spec(id, s)
}

pub fn counter(id: &str) -> ServerSpec {
    let mut s = server("stdio");
    s.command = Some(counter_bin().display().to_string());
    spec(id, s)
}

pub fn http(id: &str, transport: &str, url: &str, headers: &[(&str, &str)]) -> ServerSpec {
    let mut s = server(transport);
    s.url = Some(url.into());
    for (k, v) in headers {
        s.headers.insert((*k).into(), (*v).into());
    }
    spec(id, s)
}

/// Options with short budgets, the test's environment for `${VAR}`s.
pub fn options(call: Duration, env: &[(&str, &str)]) -> HubOptions {
    let mut options = HubOptions::new(guard());
    options.connect_timeout = Duration::from_secs(60);
    options.call_timeout = call;
    let vars: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    options.env = Arc::new(move |name| vars.get(name).cloned());
    options
}

pub fn hub(home: &Path, specs: Vec<ServerSpec>, call: Duration) -> McpHub {
    McpHub::new(&ReasonixHome::at(home), specs, options(call, &[]))
}

/// A Python HTTP server (`http` = Streamable HTTP, `sse` = legacy SSE) on
/// 127.0.0.1; killed when dropped.
pub struct HttpServer {
    child: Mutex<Child>,
    pub port: u16,
}

impl HttpServer {
    pub fn start(kind: &str, dir: &Path, env: &[(&str, &str)]) -> HttpServer {
        require_python_sdk();
        let mut child = Command::new("python3")
            .arg(server_py())
            .arg(kind)
            .env("MCP_TEST_DIR", dir)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start python3");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the port line");
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port from the server: {line:?}"));
        HttpServer {
            child: Mutex::new(child),
            port,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Whether `pid` is a live (not zombie) process.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .unwrap_or("X");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

/// Lines in a marker file the Python server wrote.
pub fn marks(dir: &Path, name: &str) -> usize {
    std::fs::read_to_string(dir.join(name))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Wait (bounded) until `check` holds; the bound is a failure, not a timing claim.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..400 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen within 20 s");
}
