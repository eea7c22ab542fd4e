//! The WASI sandbox, attacked from inside by a real Rust guest
//! (`tests/guests/sandbox-probe`, built here for `wasm32-wasip2`): it may
//! read its plugin root and write its data directory, and nothing else: no
//! other file, no `..` or symlink escape, no socket, no name lookup, no
//! environment variable the manifest did not grant. Each probe answers
//! `ok: …` or `err: …`; after every attack the runtime serves the next call.

mod wasm_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use reasonix::runtime::wasm::{CacheOutcome, ComponentCache, WasmRuntime};
use reasonix_protocol::HookPoint;
use reasonix_protocol::types::Decision;
use serde_json::value::RawValue;
use wasm_support::{TestPlugin, probe_component};

const BUDGET: Duration = Duration::from_secs(10);

struct Probe {
    plugin: TestPlugin,
    runtime: WasmRuntime,
}

/// One compiled-component cache for the whole run: the first start
/// compiles (slow in a debug build), every later one loads the artifact.
fn shared_cache() -> ComponentCache {
    static WARM: OnceLock<ComponentCache> = OnceLock::new();
    WARM.get_or_init(|| {
        let cache =
            ComponentCache::in_home(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("probe-home"));
        let plugin = TestPlugin::new("probe", probe_component());
        let mut start = plugin.start();
        start.cache = Some(cache.clone());
        WasmRuntime::start(start).expect("the probe starts");
        cache
    })
    .clone()
}

impl Probe {
    fn start() -> Probe {
        Probe::start_with_data_mib(None)
    }

    /// A probe whose data directory may hold `data_mib` MiB (the manifest's
    /// `runtime.sandbox.dataMiB`).
    fn start_with_data_mib(data_mib: Option<u32>) -> Probe {
        let plugin = TestPlugin::new("probe", probe_component());
        let env = BTreeMap::from([("GRANTED".to_owned(), "yes".to_owned())]);
        let mut start = plugin.start_with(plugin.ceiling(), env);
        start.sandbox = start.sandbox.with_data_mib(data_mib);
        start.cache = Some(shared_cache());
        let runtime = WasmRuntime::start(start).expect("the probe starts");
        assert_eq!(runtime.facts().cache, CacheOutcome::Hit);
        Probe { plugin, runtime }
    }

    /// Run one probe; the answer is the guest's `ok: …` / `err: …`.
    fn run(&self, probe: &str) -> String {
        let payload = serde_json::json!({ "text": probe }).to_string();
        let reply = self
            .runtime
            .intercept(
                HookPoint::InputReceive,
                &RawValue::from_string(payload).unwrap(),
                BUDGET,
            )
            .unwrap_or_else(|e| panic!("probe {probe:?} failed as a call: {e}"));
        assert_eq!(reply.decision, Decision::Block);
        let answer = reply.reason.expect("an answer");
        // Whatever the probe did, the next call is served.
        let next = self
            .runtime
            .intercept(
                HookPoint::InputReceive,
                &RawValue::from_string("{}".into()).unwrap(),
                BUDGET,
            )
            .expect("the next call is served");
        assert_eq!(next.decision, Decision::Continue);
        answer
    }

    fn denied(&self, probe: &str) -> String {
        let answer = self.run(probe);
        assert!(
            answer.starts_with("err: "),
            "{probe:?} was allowed: {answer}"
        );
        answer
    }

    fn allowed(&self, probe: &str) -> String {
        let answer = self.run(probe);
        assert!(answer.starts_with("ok: "), "{probe:?} was denied: {answer}");
        answer["ok: ".len()..].to_owned()
    }
}

#[test]
fn the_plugin_root_is_readable_and_the_data_dir_writable() {
    let probe = Probe::start();
    assert_eq!(
        probe.allowed("read /plugin/README.md"),
        "plugin root file\n"
    );
    assert_eq!(probe.allowed("write /data/note.txt"), "written");
    assert_eq!(
        std::fs::read_to_string(probe.plugin.data_dir().join("note.txt")).unwrap(),
        "written by the guest"
    );
    assert_eq!(probe.allowed("read /data/note.txt"), "written by the guest");
    assert_eq!(probe.allowed("list /data"), "note.txt");
    assert!(probe.allowed("list /plugin").contains("extension.wasm"));
}

#[test]
fn host_files_outside_the_preopens_cannot_be_read() {
    let probe = Probe::start();
    probe.denied("read /etc/passwd");
    probe.denied("list /");
    probe.denied("list /etc");
    // The host's own view of the plugin (absolute host path) is not a
    // guest path either.
    let host_path = probe.plugin.root().join("README.md");
    probe.denied(&format!("read {}", host_path.display()));
}

#[test]
fn nothing_outside_the_data_dir_can_be_written() {
    let probe = Probe::start();
    probe.denied("write /plugin/evil.txt");
    assert!(!probe.plugin.root().join("evil.txt").exists());
    probe.denied("write /tmp/evil.txt");
    probe.denied("write /evil.txt");
    probe.denied("write evil.txt");
}

#[test]
fn dot_dot_cannot_leave_the_data_dir() {
    let probe = Probe::start();
    let outside = probe.plugin.home().join("data");
    std::fs::write(outside.join("secret.txt"), "another plugin's secret").unwrap();
    probe.denied("read /data/../secret.txt");
    probe.denied("read /data/../../plugin-packages.json");
    probe.denied("read /plugin/../data/secret.txt");
    probe.denied("write /data/../escaped.txt");
    probe.denied("write /data/sub/../../escaped.txt");
    assert!(!outside.join("escaped.txt").exists());
    assert!(!probe.plugin.home().join("escaped.txt").exists());
}

#[test]
fn symlinks_in_the_data_dir_cannot_escape() {
    let probe = Probe::start();
    let data = probe.plugin.data_dir();
    let outside = probe.plugin.home().join("data");
    std::fs::write(outside.join("secret.txt"), "another plugin's secret").unwrap();
    std::os::unix::fs::symlink("..", data.join("up")).unwrap();
    std::os::unix::fs::symlink("/etc", data.join("etc")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", data.join("passwd")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), data.join("secret")).unwrap();
    probe.denied("read /data/up/secret.txt");
    probe.denied("read /data/etc/passwd");
    probe.denied("read /data/passwd");
    probe.denied("read /data/secret");
    probe.denied("list /data/up");
    probe.denied("write /data/up/escaped.txt");
    probe.denied("write /data/secret");
    assert!(!outside.join("escaped.txt").exists());
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "another plugin's secret"
    );
}

#[test]
fn no_socket_can_be_opened_and_no_name_resolved() {
    let probe = Probe::start();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap();
    probe.denied(&format!("connect {address}"));
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the guest reached the listener: {other:?}"),
    }
    probe.denied("resolve localhost");
    probe.denied("connect localhost:80");
}

#[test]
fn only_the_granted_environment_is_visible() {
    let probe = Probe::start();
    assert_eq!(probe.allowed("env GRANTED"), "yes");
    // The host's own environment does not leak in.
    assert!(std::env::var_os("PATH").is_some());
    probe.denied("env PATH");
    probe.denied("env HOME");
    assert_eq!(probe.allowed("env-names"), "GRANTED");
}

#[test]
fn guest_output_is_captured_and_redacted() {
    let probe = Probe::start();
    let secret = "abcdefghijklmnopqrstuvwxyz0123456789";
    probe.allowed(&format!("print Authorization: Bearer {secret}"));
    probe.allowed("log careful now");
    let tail = probe.runtime.log_tail();
    assert!(
        tail.iter()
            .any(|l| l.starts_with("stdout: Authorization: Bearer")),
        "{tail:?}"
    );
    assert!(
        tail.iter().any(|l| l.starts_with("stderr: to stderr:")),
        "{tail:?}"
    );
    assert!(tail.contains(&"warn: careful now".to_owned()), "{tail:?}");
    assert!(!tail.iter().any(|l| l.contains(secret)), "{tail:?}");
}

/// Host file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn a_guest_cannot_hold_more_than_its_bound_of_open_files() {
    let probe = Probe::start();
    let before = open_fds();
    let answer = probe.denied("hold 2000");
    // The bound counts what the guest opened (its preopens are the host's).
    let bound = reasonix::runtime::wasm::MAX_OPEN_HANDLES;
    assert!(answer.contains(&format!("({bound} held)")), "{answer}");
    let grown = open_fds().saturating_sub(before);
    assert!(
        grown <= bound + 16,
        "the host holds {grown} more descriptors"
    );
    // The guest keeps working: closing what it holds frees the bound.
    assert_eq!(probe.allowed("release"), format!("released {bound}"));
    assert_eq!(probe.allowed("hold 10"), "10 held");
    assert_eq!(
        probe.allowed("read /plugin/README.md"),
        "plugin root file\n"
    );
}

#[test]
fn the_data_directory_has_a_quota() {
    let probe = Probe::start_with_data_mib(Some(2));
    let answer = probe.denied("fill 3");
    // The second MiB does not fit. (The host answers `insufficient-space`;
    // which errno a guest's libc makes of a failed stream write is its own
    // business — wasi-libc says EIO.)
    assert!(answer.contains("after 1 MiB"), "{answer}");
    let on_disk = std::fs::metadata(probe.plugin.data_dir().join("fill.bin"))
        .unwrap()
        .len();
    assert!(
        on_disk <= 2 * 1024 * 1024,
        "{on_disk} bytes written past the quota"
    );
    // Small writes still fit, and the file can be replaced in place: the
    // quota counts what is there, not every byte ever written.
    assert_eq!(probe.allowed("write /data/note.txt"), "written");
    assert_eq!(probe.allowed("fill 1"), "wrote 1 MiB");
    assert_eq!(probe.allowed("fill 1"), "wrote 1 MiB");
}

#[test]
fn the_default_quota_bounds_a_guest_without_a_manifest_setting() {
    assert_eq!(reasonix::runtime::wasm::DEFAULT_DATA_MIB, 64);
    let probe = Probe::start();
    let answer = probe.denied("fill 80");
    assert!(answer.contains("after 63 MiB"), "{answer}");
}
