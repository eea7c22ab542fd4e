//! The plugins page in a real headless browser: Debian's `chromium`
//! driven through its `chromedriver` by Python `selenium`
//! (tests/serve_browser.py), against the `reasonix serve` binary: plan →
//! install examples/starter → its FULL TRUST block → disable → remove, a
//! wasm package's SANDBOXED block, and a hostile package's texts rendered
//! inert.
//!
//! Needs /usr/bin/chromium, /usr/bin/chromedriver and `python3 -m pip
//! install selenium` (tests/run-all installs all three). Screenshots go to
//! `$REASONIX_SCREENS` when set.

#[path = "examples_support.rs"]
mod examples;
#[path = "serve_support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::{REASONIX, write};

fn require(ok: bool, what: &str) {
    assert!(
        ok,
        "{what} is missing: run `apt-get install -y chromium chromium-driver` and \
         `python3 -m pip install selenium` (tests/run-all does both), or set CHROMIUM / CHROMEDRIVER"
    );
}

fn tool(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default))
}

fn hostile_package(dir: &Path) {
    write(
        &dir.join("reasonix-plugin.json"),
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "evil",
  "version": "1.0.0",
  "description": "<img src=x onerror=\"document.title='pwned'\"> \u202egnp.exe \u001b[31mred"
}
"#,
    );
}

/// A wasm-component package whose component is not built: the page must
/// show its SANDBOXED block, and the runtime that could not start.
fn sandboxed_package(dir: &Path) {
    write(
        &dir.join("reasonix-plugin.json"),
        r#"{
  "apiVersion": "reasonix.io/plugin/v2",
  "name": "boxed",
  "version": "1.0.0",
  "description": "a sandboxed component",
  "runtime": {
    "command": "${REASONIX_PLUGIN_ROOT}/bin/boxed.wasm",
    "intercepts": ["input.receive"],
    "capabilities": ["interceptors"],
    "env": {"BOXED_MODE": "strict"},
    "sandbox": {"memoryMiB": 32}
  }
}
"#,
    );
}

#[test]
fn the_page_plans_installs_disables_and_removes_the_starter() {
    let chromium = tool("CHROMIUM", "/usr/bin/chromium");
    let driver = tool("CHROMEDRIVER", "/usr/bin/chromedriver");
    require(chromium.is_file(), "chromium");
    require(driver.is_file(), "chromedriver");
    let selenium = Command::new("python3")
        .args(["-c", "import selenium"])
        .status()
        .is_ok_and(|s| s.success());
    require(selenium, "the Python selenium package");

    let home = tempfile::TempDir::new().unwrap();
    let work = tempfile::TempDir::new().unwrap();
    let starter = work.path().join("starter");
    examples::built_copy("starter", examples::Kind::Native, &starter);
    let evil = work.path().join("evil");
    hostile_package(&evil);
    let boxed = work.path().join("boxed");
    sandboxed_package(&boxed);
    let screens = std::env::var_os("REASONIX_SCREENS")
        .map(PathBuf::from)
        .unwrap_or_else(|| work.path().join("screens"));

    let mut server = Command::new(REASONIX)
        .env("REASONIX_HOME", home.path())
        .current_dir(work.path())
        .args(["serve", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info: serde_json::Value = serde_json::from_str(&line).expect("serve prints JSON");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/serve_browser.py");
    let journey = Command::new("python3")
        .arg(&script)
        .env("SERVE_PAGE_URL", info["pageUrl"].as_str().unwrap())
        .env("STARTER_SOURCE", &starter)
        .env("EVIL_SOURCE", &evil)
        .env("SANDBOXED_SOURCE", &boxed)
        .env("SCREENS_DIR", &screens)
        .env("CHROMIUM", &chromium)
        .env("CHROMEDRIVER", &driver)
        // Selenium Manager must not look for drivers on the network.
        .env("SE_OFFLINE", "true")
        .output()
        .unwrap();

    rustix::process::kill_process(
        rustix::process::Pid::from_child(&server),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = server.wait().unwrap();
    let mut server_err = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut server_err)
        .unwrap();

    let out = String::from_utf8_lossy(&journey.stdout);
    let err = String::from_utf8_lossy(&journey.stderr);
    assert!(
        journey.status.success(),
        "browser journey failed (screenshots in {}):\n{out}\n{err}\nserver:\n{server_err}",
        screens.display()
    );
    assert!(out.contains("browser journey ok"), "{out}");
    assert!(status.success(), "{server_err}");
    for shot in [
        "01-empty",
        "02-plan",
        "03-installed",
        "04-disabled",
        "05-removed",
    ] {
        let png = std::fs::read(screens.join(format!("{shot}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{shot} is not a PNG");
    }
    // The page's removal reached the registry: the starter is gone.
    let registry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join("plugin-packages.json")).unwrap())
            .unwrap();
    let names: Vec<&str> = registry["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["boxed", "evil"]);
    assert!(!home.path().join("plugins/starter").exists());
}
