//! Dispatcher benchmarks (run: `cargo bench -p reasonix --bench dispatch`).
//!
//! - `intercept/nil`, `intercept/nil_observe`: a hook point with no code
//!   runtime installed (the payload is built outside the measurement).
//! - `intercept/sidecars_1` and `_4`: one `input.receive` dispatched through a
//!   chain of 1 or 4 real sidecar interceptors (the scripted test sidecar,
//!   answering `continue`), next to `intercept/echo_floor`: one 100-byte
//!   intercept frame through a bare NDJSON echo child over the same kind of
//!   pipes on the same tokio runtime (×1 and ×4 round trips).
//! - `generation/build_N`: starting N sidecars (spawn + handshake) and
//!   assembling a generation, then retiring it.
//! - `reload/noop_1`: a full no-op reload with one sidecar (build + swap +
//!   retire); the swap itself (the time the lock is held) is printed.
//!
//! Read sidecar figures as ratios to the floor measured in the same run (see
//! ENGINEERING_NOTES: process wake-ups dominate unpinned).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use reasonix::home::ReasonixHome;
use reasonix::registry::{PluginRegistry, RegistryEntry};
use reasonix::runtime::Dispatcher;
use reasonix::runtime::generation::Generation;
use reasonix::runtime::host::{CandidateSource, ReloadOutcome, RuntimeHost, SessionCarry};
use reasonix::runtime::registry_source::RegistrySource;
use reasonix::runtime::ui::{UiAnswers, UiHub};
use reasonix_protocol::payloads::InputPayload;
use reasonix_protocol::points::HookPoint;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::runtime::Runtime;

fn sidecar_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    let path = debug.join("examples").join("scripted_sidecar");
    assert!(
        path.exists(),
        "build the example first: cargo build --release -p reasonix --examples"
    );
    path
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A home with `n` linked scripted plugins that continue at input.receive.
struct Home {
    _dir: tempfile::TempDir,
    home: ReasonixHome,
}

fn home_with(n: usize) -> Home {
    let dir = tempfile::tempdir().unwrap();
    let home = ReasonixHome::at(dir.path().join("home"));
    let mut registry = PluginRegistry::default();
    for i in 0..n {
        let name = format!("bench{i}");
        let root = dir.path().join(&name);
        std::fs::create_dir_all(&root).unwrap();
        let script = json!({"name": name, "subscriptions": ["input.receive"],
                            "intercept": {"*": {"decision": "continue"}}});
        std::fs::write(root.join("script.json"), script.to_string()).unwrap();
        let manifest = json!({"apiVersion": "reasonix.io/plugin/v2", "name": name, "version": "1.0.0",
            "runtime": {"command": sidecar_binary().display().to_string(),
                        "args": ["${REASONIX_PLUGIN_ROOT}/script.json"],
                        "intercepts": ["input.receive"], "capabilities": ["interceptors"]}});
        std::fs::write(root.join("reasonix-plugin.json"), manifest.to_string()).unwrap();
        registry.upsert(RegistryEntry {
            name,
            source: None,
            root: root.display().to_string(),
            version: Some("1.0.0".into()),
            description: None,
            manifest_kind: Some("reasonix".into()),
            enabled: true,
            commit: None,
            status: None,
            status_reason: None,
            tree_digest: None,
            unknown: Default::default(),
        });
    }
    registry.save(&home, None).unwrap();
    Home { _dir: dir, home }
}

fn source(home: &Home, hub: &Arc<UiHub>) -> Arc<RegistrySource> {
    Arc::new(RegistrySource::new(
        home.home.clone(),
        reasonix_sidecar::Guard::Disabled,
        Arc::clone(hub),
    ))
}

async fn generation(home: &Home) -> Generation {
    let hub = Arc::new(UiHub::new(UiAnswers::Headless));
    let candidates = source(home, &hub).candidates().unwrap();
    Generation::build(1, candidates, "bench", "/w")
        .await
        .unwrap()
}

fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("nil path must not wait"),
    }
}

/// ~100 bytes of input text.
fn payload() -> InputPayload {
    InputPayload {
        text: "x".repeat(88),
    }
}

struct Echo {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Echo {
    async fn spawn() -> Echo {
        let mut child = Command::new(sidecar_binary())
            .arg("--echo")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Echo {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            _child: child,
            line: Vec::new(),
        }
    }

    async fn round_trip(&mut self, frame: &[u8]) {
        self.stdin.write_all(frame).await.unwrap();
        self.line.clear();
        self.stdout.read_until(b'\n', &mut self.line).await.unwrap();
    }
}

fn intercept(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("intercept");
    g.measurement_time(Duration::from_secs(4));

    let nil = Dispatcher::nil();
    // The payload is built outside the measurement: only dispatch is timed.
    g.bench_function("nil", |b| {
        b.iter_batched(
            payload,
            |payload| {
                let ruling = poll_once(nil.intercept(HookPoint::InputReceive, payload)).unwrap();
                std::hint::black_box(ruling)
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("nil_observe", |b| {
        let payload = payload();
        b.iter(|| nil.observe(HookPoint::InputReceive, std::hint::black_box(&payload)))
    });

    let frame = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"extension/intercept\",\"params\":{{\"event\":\"input.receive\",\"seq\":1,\"payload\":{},\"timeoutMillis\":5000}}}}\n",
        serde_json::to_string(&payload()).unwrap()
    )
    .into_bytes();
    let mut echo = rt.block_on(Echo::spawn());
    g.bench_function("echo_floor_1", |b| {
        b.iter(|| rt.block_on(echo.round_trip(&frame)))
    });
    g.bench_function("echo_floor_4", |b| {
        b.iter(|| {
            rt.block_on(async {
                for _ in 0..4 {
                    echo.round_trip(&frame).await;
                }
            })
        })
    });

    for n in [1, 4] {
        let home = home_with(n);
        let generation = rt.block_on(generation(&home));
        assert_eq!(generation.runtimes.len(), n);
        g.bench_function(format!("sidecars_{n}"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let ruling = generation
                        .dispatcher
                        .intercept(HookPoint::InputReceive, payload())
                        .await
                        .unwrap();
                    assert_eq!(ruling.steps.len(), n);
                })
            })
        });
        rt.block_on(generation.retire());
    }
    g.finish();
}

fn build(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("generation");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    for n in [1, 4, 8] {
        let home = home_with(n);
        g.bench_function(format!("build_{n}"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let generation = generation(&home).await;
                    assert_eq!(generation.runtimes.len(), n);
                    generation.retire().await;
                })
            })
        });
    }
    g.finish();
}

fn reload(c: &mut Criterion) {
    let rt = runtime();
    let home = home_with(1);
    let hub = Arc::new(UiHub::new(UiAnswers::Headless));
    let host = rt
        .block_on(RuntimeHost::start(
            source(&home, &hub),
            "bench",
            "/w",
            Arc::clone(&hub),
            SessionCarry::default(),
        ))
        .unwrap();
    let mut swaps = Vec::new();
    let mut g = c.benchmark_group("reload");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    g.bench_function("noop_1", |b| {
        b.iter(|| {
            let ReloadOutcome::Swapped(report) = rt.block_on(host.reload()) else {
                panic!("reload failed")
            };
            swaps.push(report.swap_time);
        })
    });
    g.finish();
    rt.block_on(host.shutdown());
    swaps.sort();
    if !swaps.is_empty() {
        println!(
            "reload swap (lock held): p50 {:?}, max {:?} over {} swaps",
            swaps[swaps.len() / 2],
            swaps[swaps.len() - 1],
            swaps.len()
        );
    }
}

criterion_group!(benches, intercept, build, reload);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
