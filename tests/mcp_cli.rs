//! `reasonix mcp …`, `reasonix dev turn` through `use_capability` to a real
//! MCP server, and credential masking in `plugin show` / `plugin export`,
//! all through the binary against installed packages.

mod mcp_support;

use std::path::Path;
use std::process::{Command, Output};

use mcp_support::*;
use serde_json::{Value, json};

struct Env {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_reasonix"))
            .args(args)
            .current_dir(self.work.path())
            .env("REASONIX_HOME", self.home.path())
            .envs(env.iter().copied())
            .output()
            .expect("run reasonix")
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[])
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "reasonix {args:?} failed:\n{}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    /// Write a package under the work dir and install it (copy mode).
    fn install(&self, name: &str, files: &[(&str, String)]) {
        let dir = self.work.path().join(name);
        for (path, body) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, body).unwrap();
        }
        self.ok(&["plugin", "install", &dir.display().to_string(), "--yes"]);
    }

    fn turn(&self, args: &[&str]) -> Value {
        let mut all = vec!["dev", "turn", "--json"];
        all.extend_from_slice(args);
        self.json(&all)
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn native_with_py(dir: &Path) -> String {
    json!({
        "apiVersion": "reasonix.io/plugin/v2",
        "name": "pytools",
        "version": "1.0.0",
        "contributes": {"mcpServers": {"py": {
            "command": "python3",
            "args": [server_py().display().to_string(), "stdio"],
            "env": {"MCP_TEST_DIR": dir.display().to_string()}
        }}}
    })
    .to_string()
}

#[test]
fn mcp_commands_list_enable_connect_and_fail_as_json() {
    require_python_sdk();
    let env = Env::new();
    let marks = tempfile::tempdir().unwrap();
    env.install(
        "pytools",
        &[("reasonix-plugin.json", native_with_py(marks.path()))],
    );

    let listed = env.ok(&["mcp", "list"]);
    assert!(listed.starts_with("ID "), "{listed}");
    let row = listed.lines().find(|l| l.starts_with("py ")).unwrap();
    for cell in ["pytools", "stdio", "disabled", "-", "no", "python3"] {
        assert!(row.contains(cell), "{cell} in {row}");
    }
    let json = env.json(&["mcp", "list", "--json"]);
    assert_eq!(json["servers"][0]["state"], "disabled");
    assert_eq!(json["servers"][0]["server"]["env"]["MCP_TEST_DIR"], "***");

    // `tools` connects (even a disabled server, for inspection) and caches.
    let tools = env.json(&["mcp", "tools", "py", "--json"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["capability"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mcp__py__echo"), "{names:?}");
    let text_tools = env.ok(&["mcp", "tools", "py"]);
    assert!(
        text_tools.contains("mcp__py__wipe\tdestructive\t"),
        "{text_tools}"
    );
    let json = env.json(&["mcp", "list", "--json"]);
    assert_eq!(json["servers"][0]["cached"], true);
    assert!(json["servers"][0]["tools"].as_u64().unwrap() >= 10);

    assert_eq!(
        env.ok(&["mcp", "enable", "py"]),
        "enabled py (plugin pytools)\n"
    );
    let state: Value =
        serde_json::from_slice(&std::fs::read(env.home.path().join("mcp-servers.json")).unwrap())
            .unwrap();
    assert_eq!(
        state["servers"][0],
        json!({"plugin": "pytools", "id": "py", "enabled": true})
    );
    assert_eq!(
        env.json(&["mcp", "list", "--json"])["servers"][0]["state"],
        "idle"
    );
    assert_eq!(
        env.json(&["mcp", "disable", "py", "--json"]),
        json!({"ok": true, "id": "py", "plugin": "pytools", "enabled": false})
    );

    let out = env.run(&["mcp", "enable", "nope", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let failure: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(failure["ok"], false);
    assert_eq!(failure["errorCode"], "mcp.unknown_server");
    assert!(text(&out.stderr).contains("reasonix mcp list"));
}

#[test]
fn connecting_and_discovering_servers_never_moves_the_prefix() {
    require_python_sdk();
    let env = Env::new();
    let baseline = env.turn(&["--input", "hi"])["prefixHash"]
        .as_str()
        .unwrap()
        .to_owned();
    let marks = tempfile::tempdir().unwrap();
    env.install(
        "pytools",
        &[("reasonix-plugin.json", native_with_py(marks.path()))],
    );
    env.ok(&["mcp", "enable", "py"]);
    // Connected, discovered and cached: the next turn's provider-visible
    // prefix is byte-identical.
    env.ok(&["mcp", "tools", "py"]);
    let report = env.turn(&[
        "--input",
        "hi",
        "--call",
        r#"use_capability={"action":"list"}"#,
    ]);
    assert_eq!(report["prefixHash"], baseline.as_str(), "{report}");
    assert_eq!(report["toolCalls"][0]["isError"], false, "{report}");
}

/// Needs the Session to own the hub and route `use_capability` through
/// the proxy (the lead's part of issue 12). Before the Session landed this
/// ran green on the turn harness (commit "reasonix mcp and dev turn end to
/// end").
#[test]
fn a_turn_reaches_an_mcp_tool_and_the_prefix_never_moves() {
    require_python_sdk();
    let env = Env::new();
    let before = env.turn(&["--input", "hi"]);
    let baseline = before["prefixHash"].as_str().unwrap().to_owned();
    let marks = tempfile::tempdir().unwrap();
    env.install(
        "pytools",
        &[("reasonix-plugin.json", native_with_py(marks.path()))],
    );
    env.ok(&["mcp", "enable", "py"]);
    // Discovery connects mid-turn (no cache yet).
    let report = env.turn(&[
        "--input",
        "hi",
        "--call",
        r#"use_capability={"action":"list"}"#,
        "--call",
        r#"use_capability={"action":"call","name":"mcp__py__echo","arguments":{"text":"via proxy"}}"#,
    ]);
    assert_eq!(report["prefixHash"], baseline.as_str(), "{report}");
    let calls = report["toolCalls"].as_array().unwrap();
    let listing: Vec<Value> = serde_json::from_str(calls[0]["result"].as_str().unwrap()).unwrap();
    assert!(listing.iter().any(|c| c["name"] == "mcp__py__echo"));
    assert_eq!(calls[1]["result"], "via proxy");
    // --deny names the capability: the permission decision is a deny.
    let report = env.turn(&[
        "--input",
        "hi",
        "--deny",
        "mcp__py__wipe",
        "--call",
        r#"use_capability={"action":"call","name":"mcp__py__wipe"}"#,
    ]);
    assert_eq!(report["toolCalls"][0]["decision"], "deny");
    assert_eq!(marks_count(marks.path(), "wipe"), 0);
}

fn marks_count(dir: &Path, name: &str) -> usize {
    mcp_support::marks(dir, name)
}

#[test]
fn show_doctor_and_export_never_print_a_credential() {
    let env = Env::new();
    let manifest = json!({
        "apiVersion": "reasonix.io/plugin/v2",
        "name": "secrets",
        "version": "1.0.0",
        "contributes": {"mcpServers": {
            "remote": {"type": "http",
                       "url": "https://user:pw-SECRET1@mcp.example.com/v1?api_key=KEY-SECRET2&page=1",
                       "headers": {"X-Api-Key": "HDR-SECRET3", "Authorization": "Bearer ${REMOTE_TOKEN}"}},
            "local": {"command": "npx",
                      "args": ["-y", "some-server", "--token=ARG-SECRET4", "--api-key", "ARG-SECRET5"],
                      "env": {"SERVICE_PASSWORD": "ENV-SECRET6"}}
        }}
    });
    env.install("secrets", &[("reasonix-plugin.json", manifest.to_string())]);
    let secrets = [
        "pw-SECRET1",
        "KEY-SECRET2",
        "HDR-SECRET3",
        "ARG-SECRET4",
        "ARG-SECRET5",
        "ENV-SECRET6",
    ];
    let shown = env.ok(&["plugin", "show", "secrets"]);
    assert!(
        shown.contains("remote\thttp\thttps://***@mcp.example.com/v1?api_key=***&page=1"),
        "{shown}"
    );
    assert!(
        shown.contains("local\tstdio\tnpx -y some-server --token=*** --api-key ***"),
        "{shown}"
    );
    let shown_json = env.ok(&["plugin", "show", "secrets", "--json"]);
    assert!(
        shown_json.contains("Bearer ${REMOTE_TOKEN}"),
        "{shown_json}"
    );
    let doctor = env.run(&["plugin", "doctor", "secrets"]);
    let listed = env.ok(&["mcp", "list"]);
    let listed_json = env.ok(&["mcp", "list", "--json"]);
    let export_path = env.work.path().join("secrets.zip");
    let exported = env.ok(&[
        "plugin",
        "export",
        "secrets",
        "-o",
        &export_path.display().to_string(),
        "--json",
    ]);
    let zip = std::fs::read(&export_path).unwrap();
    let unzipped = unzip_text(&zip);
    for secret in secrets {
        for (what, out) in [
            ("show", &shown),
            ("show --json", &shown_json),
            ("doctor", &text(&doctor.stdout)),
            ("doctor stderr", &text(&doctor.stderr)),
            ("mcp list", &listed),
            ("mcp list --json", &listed_json),
            ("export", &exported),
            ("export zip", &unzipped),
        ] {
            assert!(!out.contains(secret), "{secret} in {what}:\n{out}");
        }
    }
    for var in [
        "REMOTE_URL_USERINFO",
        "REMOTE_API_KEY",
        "REMOTE_X_API_KEY",
        "REMOTE_AUTHORIZATION",
        "LOCAL_TOKEN",
        "LOCAL_API_KEY",
        "LOCAL_SERVICE_PASSWORD",
    ] {
        assert!(
            exported.contains(var),
            "{var} not required by the export: {exported}"
        );
    }
}

/// Every entry of a zip as text, concatenated (deflate via the host's zip).
fn unzip_text(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.zip");
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print(''.join(z.read(n).decode('utf-8', 'replace') for n in z.namelist()))",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn codex_bearer_token_env_var_becomes_a_header_and_a_required_variable() {
    let env = Env::new();
    env.install(
        "codexy",
        &[
            (
                ".codex-plugin/plugin.json",
                json!({"name": "codexy", "version": "1.0.0"}).to_string(),
            ),
            (
                ".mcp.json",
                json!({"mcp_servers": {"gh": {"url": "https://api.example.com/mcp", "bearer_token_env_var": "GH_PAT"}}})
                    .to_string(),
            ),
        ],
    );
    let shown: Value = env.json(&["plugin", "show", "codexy", "--json"]);
    assert_eq!(
        shown["mcpServers"][0]["headers"]["Authorization"],
        "Bearer ${GH_PAT}"
    );
    let compatibility = &shown["compatibility"];
    assert!(
        compatibility == "full" || compatibility["status"] == "full",
        "{shown}"
    );
    let export_path = env.work.path().join("codexy.zip");
    let exported = env.ok(&[
        "plugin",
        "export",
        "codexy",
        "-o",
        &export_path.display().to_string(),
        "--json",
    ]);
    assert!(exported.contains("GH_PAT"), "{exported}");
}

/// The done-when of the MCP issue, in one `reasonix chat` session: `/mcp
/// connect` connects a plugin's Python server, the model's
/// `use_capability` lists and calls one of its tools, and the prefix hash
/// is the same before and after the connect.
#[test]
fn a_chat_session_connects_a_plugin_server_and_calls_its_tool_through_the_proxy() {
    require_python_sdk();
    let env = Env::new();
    let marks = tempfile::tempdir().unwrap();
    env.install(
        "pytools",
        &[("reasonix-plugin.json", native_with_py(marks.path()))],
    );
    let lines = "before the connect\n/mcp\n/mcp connect py\nafter the connect\n";
    let out = {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_reasonix"))
            .args([
                "chat",
                "--json",
                "--call",
                r#"use_capability={"action":"list"}"#,
                "--call",
                r#"use_capability={"action":"call","name":"mcp__py__echo","arguments":{"text":"from chat"}}"#,
            ])
            .current_dir(env.work.path())
            .env("REASONIX_HOME", env.home.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(lines.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| -> Vec<&Value> { events.iter().filter(|e| e["type"] == kind).collect() };
    let outputs = of("command_output");
    assert!(
        outputs[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("py (pytools) stdio"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("connected py: "),
        "{}",
        outputs[1]
    );
    let ended = of("turn_ended");
    assert_eq!(ended.len(), 2);
    assert_eq!(
        ended[0]["prefixHash"], ended[1]["prefixHash"],
        "connecting changed the provider-visible prefix"
    );
    // In the turn after the connect the listing names the server's tools
    // and the call reaches it.
    let results: Vec<&Value> = of("tool_result");
    let after: Vec<&&Value> = results.iter().skip(2).collect();
    let listing: Vec<Value> =
        serde_json::from_str(after[0]["record"]["result"].as_str().unwrap()).unwrap();
    assert!(
        listing.iter().any(|c| c["name"] == "mcp__py__echo"),
        "{listing:?}"
    );
    assert_eq!(after[1]["record"]["name"], "mcp__py__echo");
    assert_eq!(after[1]["record"]["kind"], "mcp");
    assert_eq!(after[1]["record"]["result"], "from chat");
}

/// Processes whose environment names `dir` (the servers started for it).
fn processes_of(dir: &Path) -> Vec<String> {
    let needle = format!("MCP_TEST_DIR={}", dir.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read(e.path().join("environ"))
                .map(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
                .unwrap_or(false)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn doctor_capabilities_live_starts_what_a_session_would_and_leaves_nothing_running() {
    require_python_sdk();
    let env = Env::new();
    let marks = tempfile::tempdir().unwrap();
    let dir = marks.path().display().to_string();
    env.install(
        "pytools",
        &[(
            "reasonix-plugin.json",
            json!({
                "apiVersion": "reasonix.io/plugin/v2",
                "name": "pytools",
                "version": "1.0.0",
                "contributes": {"mcpServers": {
                    "py": {
                        "command": "python3",
                        "args": [server_py().display().to_string(), "stdio"],
                        "env": {"MCP_TEST_DIR": dir}
                    },
                    "broken": {
                        "command": "python3",
                        "args": ["-c", "import sys; sys.exit(3)"],
                        "env": {"MCP_TEST_DIR": dir}
                    },
                    "idle": {
                        "command": "python3",
                        "args": [server_py().display().to_string(), "stdio"],
                        "env": {"MCP_TEST_DIR": dir}
                    }
                }}
            })
            .to_string(),
        )],
    );
    // Static: nothing starts, nothing is reported live.
    let report = env.json(&["doctor", "capabilities", "--json"]);
    assert_eq!(report["live"], false);
    assert!(
        report["mcp"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("runtime_status").is_none()),
        "{report}"
    );
    env.ok(&["mcp", "enable", "py"]);
    env.ok(&["mcp", "enable", "broken"]);
    let out = env.run(&[
        "doctor",
        "capabilities",
        "--json",
        "--live",
        "--timeout",
        "30s",
    ]);
    // A live start failure is an error: exit 1, the report still printed.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["live"], true);
    let server = |name: &str| {
        report["mcp"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} in {report}"))
    };
    let py = server("py");
    assert_eq!(py["runtime_status"], "connected", "{py}");
    assert!(py["tool_count"].as_u64().unwrap() > 0, "{py}");
    assert!(
        py["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo" && t["read_only_hint"] == true),
        "{py}"
    );
    assert_eq!(server("broken")["runtime_status"], "failed");
    assert_eq!(server("idle")["runtime_status"], "disabled");
    let failed: Vec<&Value> = report["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["code"] == "mcp.start_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{report}");
    assert_eq!(failed[0]["name"], "broken");
    assert_eq!(report["summary"]["errors"], 1, "{report}");
    // Nothing the probe started outlives it.
    assert_eq!(processes_of(marks.path()), Vec::<String>::new());

    // The human form says what each server answered; a bad timeout is a
    // usage error.
    let human = env.run(&["doctor", "capabilities", "--live"]);
    let human = text(&human.stdout);
    assert!(human.contains("connected, "), "{human}");
    assert!(human.contains("mcp.start_failed"), "{human}");
    let out = env.run(&["doctor", "capabilities", "--live", "--timeout", "90s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("outside 1s..60s"));
}
