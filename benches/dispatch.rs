//! Dispatcher benchmarks (run: `cargo bench -p reasonix --bench dispatch`).
//!
//! - `intercept/nil`, `intercept/nil_observe`: a hook point with no code
//!   runtime installed (one payload, a loop variable, goes in and comes
//!   back out each time: building and freeing payloads is not timed; the
//!   dispatcher is opaque, so its plan is read on every call), next to
//!   `intercept/nil_floor`: the same payload moved through an immediately
//!   ready future. `_batched`: a fresh payload per call and every ruling
//!   kept in criterion's output buffer, whose copy of the routine's result
//!   is most of what it shows.
//! - `intercept/sidecars_1` and `_4`: one `input.receive` dispatched through a
//!   chain of 1 or 4 real sidecar interceptors (answering `continue`), next
//!   to `intercept/echo_floor_{1,4}`: one 100-byte intercept frame through a
//!   bare NDJSON echo child over the same kind of pipes on the same tokio
//!   runtime (×1 and ×4 round trips).
//! - `intercept/wasm_1`: the same intercept through one wasm component
//!   (answering `continue`), for the wasm vs sidecar ratio.
//! - `generation/build_N`: starting N sidecars (spawn + handshake) and
//!   assembling a generation, then retiring it; `generation/spawn_floor_8`:
//!   spawning 8 bare echo children and one round trip with each.
//! - `reload/noop_1`: a full no-op reload with one sidecar (build + swap +
//!   retire); the swap itself (the time the lock is held) is printed.
//!
//! Every loop runs inside a runtime task, where a session's turn runs. The
//! sidecars and echo children are this bench binary itself
//! (`support/peer.rs`). Read sidecar figures as ratios to the floor
//! measured in the same run: unpinned, process wake-ups across CPUs
//! dominate both, and what they cost varies by machine and by run.

#[path = "support/peer.rs"]
mod peer;
#[path = "../tests/wasm_support/mod.rs"]
mod wasm_support;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

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
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::runtime::Runtime;
use wasm_support::fixtures::{Fixture, Intercept};

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A home with `n` linked sidecar plugins that continue at input.receive
/// (and `wasm` more whose component does the same).
struct Home {
    _dir: tempfile::TempDir,
    home: ReasonixHome,
}

fn home_with(n: usize) -> Home {
    home_with_runtimes(n, 0)
}

fn home_with_runtimes(sidecars: usize, components: usize) -> Home {
    let dir = tempfile::tempdir().unwrap();
    let home = ReasonixHome::at(dir.path().join("home"));
    let mut registry = PluginRegistry::default();
    let component = Fixture::new(Intercept::Continue).build();
    for i in 0..sidecars + components {
        let wasm = i >= sidecars;
        let name = if wasm {
            format!("wasm{i}")
        } else {
            format!("bench{i}")
        };
        let root = dir.path().join(&name);
        std::fs::create_dir_all(&root).unwrap();
        let runtime = if wasm {
            std::fs::write(root.join("extension.wasm"), &component).unwrap();
            json!({"command": "${REASONIX_PLUGIN_ROOT}/extension.wasm",
                   "intercepts": ["input.receive"], "capabilities": ["interceptors"]})
        } else {
            let init = json!({"protocolVersion": "2", "name": name, "version": "1.0.0",
                              "stateSchemaVersion": 0, "subscriptions": ["input.receive"]});
            json!({"command": peer::program().display().to_string(),
                   "env": {peer::ROLE: "sidecar", peer::INIT: init.to_string()},
                   "intercepts": ["input.receive"], "capabilities": ["interceptors"]})
        };
        let manifest = json!({"apiVersion": "reasonix.io/plugin/v2", "name": name,
                              "version": "1.0.0", "runtime": runtime});
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

/// Inlined, as an `.await` is into its caller: the harness's own copy of
/// the future is not the dispatcher's cost (the floor is polled the same way).
#[inline(always)]
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
        let mut child = peer::command("echo")
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

/// Runs `fut` inside a runtime task (where a session's turn runs): waking a
/// `block_on` future costs an extra thread hand-off a host never pays.
fn in_task<F, T>(rt: &Runtime, fut: F) -> T
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    rt.block_on(async move { tokio::spawn(fut).await.unwrap() })
}

/// `iters` intercepts through `generation`'s dispatcher, timed in a task.
fn time_intercepts(
    rt: &Runtime,
    generation: &Arc<Generation>,
    steps: usize,
    iters: u64,
) -> Duration {
    let generation = Arc::clone(generation);
    in_task(rt, async move {
        let began = Instant::now();
        for _ in 0..iters {
            let ruling = generation
                .dispatcher
                .intercept(HookPoint::InputReceive, payload())
                .await
                .unwrap();
            assert_eq!(ruling.steps().len(), steps);
        }
        began.elapsed()
    })
}

fn intercept(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("intercept");
    g.measurement_time(Duration::from_secs(4));

    let nil = Dispatcher::nil();
    // One payload goes in and comes back out on every iteration: only the
    // dispatch is timed, not building or freeing a payload. The payload is
    // a loop variable moved through each call, as a turn moves it through
    // its points; the dispatcher is opaque (`black_box`), so its plan is
    // read and checked on every call.
    g.bench_function("nil_floor", |b| {
        b.iter_custom(|iters| {
            let mut payload = payload();
            let began = Instant::now();
            for _ in 0..iters {
                payload = poll_once(std::future::ready(std::hint::black_box(payload)));
            }
            let elapsed = began.elapsed();
            std::hint::black_box(payload);
            elapsed
        })
    });
    g.bench_function("nil", |b| {
        b.iter_custom(|iters| {
            let mut payload = payload();
            let began = Instant::now();
            for _ in 0..iters {
                let nil = std::hint::black_box(&nil);
                payload = poll_once(nil.intercept(HookPoint::InputReceive, payload))
                    .unwrap()
                    .into_payload();
            }
            let elapsed = began.elapsed();
            std::hint::black_box(payload);
            elapsed
        })
    });
    // The measurement this bench used to make: a fresh payload per call,
    // each ruling kept in criterion's output buffer (what that costs shows
    // in `nil_floor_batched`).
    g.bench_function("nil_floor_batched", |b| {
        b.iter_batched(
            payload,
            |payload| poll_once(std::future::ready(payload)),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("nil_batched", |b| {
        b.iter_batched(
            payload,
            |payload| poll_once(nil.intercept(HookPoint::InputReceive, payload)).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("nil_observe", |b| {
        let payload = payload();
        b.iter(|| nil.observe(HookPoint::InputReceive, std::hint::black_box(&payload)))
    });

    let frame = Arc::new(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"extension/intercept\",\"params\":{{\"event\":\"input.receive\",\"seq\":1,\"payload\":{},\"timeoutMillis\":5000}}}}\n",
            serde_json::to_string(&payload()).unwrap()
        )
        .into_bytes(),
    );
    let echo = Arc::new(tokio::sync::Mutex::new(rt.block_on(Echo::spawn())));
    for rounds in [1, 4] {
        g.bench_function(format!("echo_floor_{rounds}"), |b| {
            b.iter_custom(|iters| {
                let (echo, frame) = (Arc::clone(&echo), Arc::clone(&frame));
                in_task(&rt, async move {
                    let mut echo = echo.lock().await;
                    let began = Instant::now();
                    for _ in 0..iters * rounds {
                        echo.round_trip(&frame).await;
                    }
                    began.elapsed()
                })
            })
        });
    }

    for (name, sidecars, components) in
        [("sidecars_1", 1, 0), ("sidecars_4", 4, 0), ("wasm_1", 0, 1)]
    {
        let home = home_with_runtimes(sidecars, components);
        let generation = Arc::new(rt.block_on(generation(&home)));
        let steps = sidecars + components;
        assert_eq!(generation.runtimes.len(), steps);
        g.bench_function(name, |b| {
            b.iter_custom(|iters| time_intercepts(&rt, &generation, steps, iters))
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
        let home = Arc::new(home_with(n));
        g.bench_function(format!("build_{n}"), |b| {
            b.iter_custom(|iters| {
                let home = Arc::clone(&home);
                in_task(&rt, async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let began = Instant::now();
                        let generation = generation(&home).await;
                        total += began.elapsed();
                        assert_eq!(generation.runtimes.len(), n);
                        generation.retire().await;
                    }
                    total
                })
            })
        });
    }
    // The process floor: 8 bare children spawned and answering once each.
    g.bench_function("spawn_floor_8", |b| {
        b.iter_custom(|iters| {
            in_task(&rt, async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let began = Instant::now();
                    let mut echoes = Vec::new();
                    for _ in 0..8 {
                        echoes.push(Echo::spawn().await);
                    }
                    futures::future::join_all(echoes.iter_mut().map(|e| e.round_trip(b"{}\n")))
                        .await;
                    total += began.elapsed();
                }
                total
            })
        })
    });
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
    peer::serve_if_requested();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
