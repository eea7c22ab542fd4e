//! Sidecar transport benchmarks, each next to its floor measured in the same
//! run over the same kind of pipes: a bare NDJSON echo child
//! (`test_sidecar echo`) driven by the same tokio runtime.
//!
//! - intercept round trip, 100 B and 64 KiB payloads (criterion, plus a
//!   p50/p99 table printed at the end);
//! - throughput with 32 calls in flight;
//! - spawn + handshake of 1, 4 and 8 sidecars.
//!
//! Stdio latency depends on CPU placement (ENGINEERING_NOTES): run it both
//! pinned (`taskset -c 0 cargo bench -p reasonix-sidecar`) and unpinned and
//! read the ratios. Needs the example binary: `cargo build --release -p
//! reasonix-sidecar --examples` (cargo bench builds it too).

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use reasonix_protocol::HookPoint;
use reasonix_protocol::types::{RawJson, SessionContext};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::runtime::Runtime;

const TIMEOUT: Duration = Duration::from_secs(5);
const IN_FLIGHT: usize = 32;

fn test_sidecar() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples/test_sidecar");
    assert!(
        path.exists(),
        "{} is missing: cargo build --release -p reasonix-sidecar --examples",
        path.display()
    );
    path
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn payload(bytes: usize) -> RawJson {
    // {"text":"xxx…"} of `bytes` serialised bytes.
    let filler = bytes.saturating_sub(11);
    serde_json::value::RawValue::from_string(format!("{{\"text\":\"{}\"}}", "x".repeat(filler)))
        .unwrap()
}

/// The frame the host writes for one intercept of `payload`, for the echo.
fn intercept_frame(payload: &RawJson) -> Vec<u8> {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"extension/intercept\",\"params\":{{\"event\":\"tool.before\",\"seq\":1,\"payload\":{},\"timeoutMillis\":5000}}}}\n",
        payload.get()
    )
    .into_bytes()
}

struct Echo {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Echo {
    async fn spawn() -> Echo {
        let mut child = Command::new(test_sidecar())
            .arg("echo")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Echo {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::with_capacity(64 * 1024, child.stdout.take().unwrap()),
            _child: child,
            line: Vec::new(),
        }
    }

    /// Writes `batch` frames while reading `batch` lines back (concurrently,
    /// so large batches cannot deadlock on full pipes).
    async fn round_trips(&mut self, frame: &[u8], batch: usize) {
        let Echo {
            stdin,
            stdout,
            line,
            ..
        } = self;
        let write = async {
            for _ in 0..batch {
                stdin.write_all(frame).await.unwrap();
            }
        };
        let read = async {
            for _ in 0..batch {
                line.clear();
                stdout.read_until(b'\n', line).await.unwrap();
            }
        };
        tokio::join!(write, read);
    }
}

fn spec() -> LaunchSpec {
    LaunchSpec {
        plugin_root: PathBuf::from("/tmp"),
        name: "bench".into(),
        version: "1.0.0".into(),
        command: test_sidecar().display().to_string(),
        args: vec!["bench".into()],
        env: BTreeMap::new(),
    }
}

fn ceiling() -> ManifestCeiling {
    ManifestCeiling {
        plugin_id: "bench".into(),
        intercepts: vec!["tool.before".into()],
        ..Default::default()
    }
}

fn options() -> StartOptions {
    let mut o = StartOptions::new(SessionContext {
        session_id: "bench".into(),
        workspace_root: "/tmp".into(),
        generation: 1,
        epoch: None,
    });
    o.guard = Guard::Disabled;
    o
}

async fn start() -> Sidecar {
    Sidecar::start(spec(), ceiling(), options()).await.unwrap()
}

async fn intercepts(sidecar: &Arc<Sidecar>, payload: &RawJson, batch: usize) {
    if batch == 1 {
        sidecar
            .intercept(HookPoint::ToolBefore, payload.clone(), TIMEOUT)
            .await
            .unwrap();
        return;
    }
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..batch {
        let s = sidecar.clone();
        let p = payload.clone();
        set.spawn(async move { s.intercept(HookPoint::ToolBefore, p, TIMEOUT).await });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
}

/// Runs `fut` inside a runtime task: waking the `block_on` future itself
/// costs an eventfd write per wake-up, which a host (calling from tasks)
/// never pays, so every measured loop runs in one task.
fn in_task<F, T>(rt: &Runtime, fut: F) -> T
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    rt.block_on(async move { tokio::spawn(fut).await.unwrap() })
}

type SharedEcho = Arc<tokio::sync::Mutex<Echo>>;

fn time_echo(
    rt: &Runtime,
    echo: &SharedEcho,
    frame: &Arc<Vec<u8>>,
    batch: usize,
    iters: u64,
) -> Duration {
    let (echo, frame) = (echo.clone(), frame.clone());
    in_task(rt, async move {
        let mut echo = echo.lock().await;
        let t = Instant::now();
        for _ in 0..iters {
            echo.round_trips(&frame, batch).await;
        }
        t.elapsed()
    })
}

fn time_sidecar(
    rt: &Runtime,
    sidecar: &Arc<Sidecar>,
    p: &RawJson,
    batch: usize,
    iters: u64,
) -> Duration {
    let (sidecar, p) = (sidecar.clone(), p.clone());
    in_task(rt, async move {
        let t = Instant::now();
        for _ in 0..iters {
            intercepts(&sidecar, &p, batch).await;
        }
        t.elapsed()
    })
}

fn compare(c: &mut Criterion, group: &str, batch: usize) {
    let rt = runtime();
    let echo: SharedEcho = Arc::new(tokio::sync::Mutex::new(rt.block_on(Echo::spawn())));
    let sidecar = Arc::new(rt.block_on(start()));
    for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
        let p = payload(size);
        let frame = Arc::new(intercept_frame(&p));
        let mut g = c.benchmark_group(format!("{group}/{name}"));
        g.throughput(Throughput::Elements(batch as u64));
        g.bench_function("echo_floor", |b| {
            b.iter_custom(|iters| time_echo(&rt, &echo, &frame, batch, iters))
        });
        g.bench_function("sidecar", |b| {
            b.iter_custom(|iters| time_sidecar(&rt, &sidecar, &p, batch, iters))
        });
        g.finish();
    }
    rt.block_on(sidecar.shutdown());
}

fn round_trip(c: &mut Criterion) {
    compare(c, "intercept_round_trip", 1);
}

fn throughput(c: &mut Criterion) {
    compare(c, "in_flight_32", IN_FLIGHT);
}

fn spawn_handshake(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("spawn_handshake");
    g.sample_size(20);
    for n in [1usize, 4, 8] {
        g.bench_function(format!("{n}_sidecars"), |b| {
            b.iter_custom(|iters| {
                in_task(&rt, async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let t = Instant::now();
                        let mut set = tokio::task::JoinSet::new();
                        for _ in 0..n {
                            set.spawn(start());
                        }
                        let mut started = Vec::with_capacity(n);
                        while let Some(s) = set.join_next().await {
                            started.push(s.unwrap());
                        }
                        total += t.elapsed();
                        for s in &started {
                            s.shutdown().await;
                        }
                    }
                    total
                })
            })
        });
    }
    g.finish();
}

/// p50/p99 of single round trips (floor and sidecar interleaved), then
/// 32-in-flight throughput with context switches per call.
fn percentiles() {
    let rt = runtime();
    in_task(&rt, async {
        let mut echo = Echo::spawn().await;
        let sidecar = Arc::new(start().await);
        println!("\npercentiles (µs), 20000 samples each, interleaved:");
        println!(
            "{:<8} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
            "payload", "floor p50", "floor p99", "side p50", "side p99", "p50 ×", "p99 ×"
        );
        for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
            let p = payload(size);
            let frame = intercept_frame(&p);
            let (mut floor, mut side) = (Vec::new(), Vec::new());
            for _ in 0..2_000 {
                echo.round_trips(&frame, 1).await;
                intercepts(&sidecar, &p, 1).await;
            }
            for _ in 0..20_000 {
                let t = Instant::now();
                echo.round_trips(&frame, 1).await;
                floor.push(t.elapsed());
                let t = Instant::now();
                intercepts(&sidecar, &p, 1).await;
                side.push(t.elapsed());
            }
            floor.sort();
            side.sort();
            let q = |v: &[Duration], f: f64| {
                v[((v.len() as f64 - 1.0) * f) as usize].as_secs_f64() * 1e6
            };
            let (f50, f99, s50, s99) = (
                q(&floor, 0.5),
                q(&floor, 0.99),
                q(&side, 0.5),
                q(&side, 0.99),
            );
            println!(
                "{name:<8} {f50:>10.2} {f99:>10.2} {s50:>10.2} {s99:>10.2} {:>8.2} {:>8.2}",
                s50 / f50,
                s99 / f99
            );
        }
        println!("\n32 in flight, 2000 batches each (calls/s; host context switches per call):");
        for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
            let p = payload(size);
            let frame = intercept_frame(&p);
            let batches = 2_000;
            let calls = (batches * IN_FLIGHT) as f64;
            let (cs0, t) = (context_switches(), Instant::now());
            for _ in 0..batches {
                echo.round_trips(&frame, IN_FLIGHT).await;
            }
            let (floor, floor_cs) = (calls / t.elapsed().as_secs_f64(), context_switches() - cs0);
            let (cs0, t) = (context_switches(), Instant::now());
            for _ in 0..batches {
                intercepts(&sidecar, &p, IN_FLIGHT).await;
            }
            let (side, side_cs) = (calls / t.elapsed().as_secs_f64(), context_switches() - cs0);
            println!(
                "{name:<8} floor {floor:>10.0}/s ({:.2} cs/call)  sidecar {side:>10.0}/s ({:.2} cs/call)  ratio {:.2}",
                floor_cs as f64 / calls,
                side_cs as f64 / calls,
                floor / side
            );
        }
        sidecar.shutdown().await;
    });
}

/// Voluntary + involuntary context switches of this process so far.
fn context_switches() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.contains("ctxt_switches"))
        .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
        .sum()
}

criterion_group!(benches, round_trip, throughput, spawn_handshake);

fn main() {
    if std::env::var_os("SIDECAR_BENCH_PROFILE_IN_FLIGHT").is_some() {
        // Only the 32-in-flight sidecar loop, for a profiler.
        let rt = runtime();
        in_task(&rt, async {
            let sidecar = Arc::new(start().await);
            let p = payload(100);
            for _ in 0..20_000 {
                intercepts(&sidecar, &p, IN_FLIGHT).await;
            }
            sidecar.shutdown().await;
        });
        return;
    }
    // `SIDECAR_BENCH_ONLY_TABLES=1` skips criterion and prints the tables.
    if std::env::var_os("SIDECAR_BENCH_ONLY_TABLES").is_none() {
        benches();
    }
    percentiles();
    Criterion::default().configure_from_args().final_summary();
}
