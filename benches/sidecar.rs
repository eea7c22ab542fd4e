//! Sidecar transport benchmarks, each next to its floor measured in the same
//! run over the same kind of pipes: a bare NDJSON echo child driven by the
//! same tokio runtime. Both far ends are this bench binary itself
//! (`support/peer.rs`), so nothing needs building first.
//!
//! - intercept round trip, 100 B and 64 KiB payloads (criterion, plus a
//!   p50/p99 table printed at the end);
//! - throughput with 32 calls in flight;
//! - spawn + handshake of 1, 4 and 8 sidecars.
//!
//! Stdio latency depends on CPU placement (a wake-up across CPUs costs far
//! more than one on the same CPU, by an amount that varies by machine): run
//! it both pinned (`taskset -c 0 cargo bench -p reasonix-sidecar`) and
//! unpinned and read the ratios.

#[path = "support/peer.rs"]
mod peer;

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
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::runtime::Runtime;

const TIMEOUT: Duration = Duration::from_secs(5);
const IN_FLIGHT: usize = 32;

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
        let mut child = peer::command("echo")
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
        command: peer::program().display().to_string(),
        args: Vec::new(),
        env: BTreeMap::from([(peer::ROLE.to_string(), "sidecar".to_string())]),
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

/// `batch` intercepts in flight at once, driven from this one task, as the
/// echo floor drives its `batch` frames (spawning a task per call would
/// charge the sidecar side with task overhead the floor does not pay).
async fn intercepts(sidecar: &Sidecar, payload: &RawJson, batch: usize) {
    use futures::StreamExt;
    // Unordered: nothing here needs the answers in order, and ordering
    // them (`join_all` of more than 30 futures) was a tenth of the host's
    // time in a profile.
    let mut calls: futures::stream::FuturesUnordered<_> = (0..batch)
        .map(|_| sidecar.intercept(HookPoint::ToolBefore, payload.clone(), TIMEOUT))
        .collect();
    while let Some(result) = calls.next().await {
        result.unwrap();
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
        println!(
            "\n32 in flight, 2000 batches each, floor and sidecar batches alternating \
             (calls/s; host context switches per call; sidecar over floor):"
        );
        for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
            let p = payload(size);
            let frame = intercept_frame(&p);
            let batches = 2_000;
            let calls = (batches * IN_FLIGHT) as f64;
            let (mut floor_time, mut side_time) = (Duration::ZERO, Duration::ZERO);
            let (mut floor_cs, mut side_cs) = (0, 0);
            for _ in 0..batches {
                let (cs0, t) = (context_switches(), Instant::now());
                echo.round_trips(&frame, IN_FLIGHT).await;
                floor_time += t.elapsed();
                floor_cs += context_switches() - cs0;
                let (cs0, t) = (context_switches(), Instant::now());
                intercepts(&sidecar, &p, IN_FLIGHT).await;
                side_time += t.elapsed();
                side_cs += context_switches() - cs0;
            }
            let floor = calls / floor_time.as_secs_f64();
            let side = calls / side_time.as_secs_f64();
            println!(
                "{name:<8} floor {floor:>10.0}/s ({:.2} cs/call)  sidecar {side:>10.0}/s ({:.2} cs/call)  ratio {:.2}",
                floor_cs as f64 / calls,
                side_cs as f64 / calls,
                side / floor
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
    peer::serve_if_requested();
    if let Ok(bytes) = std::env::var("SIDECAR_BENCH_PROFILE_IN_FLIGHT") {
        // Only the 32-in-flight sidecar loop (payload of that many bytes,
        // default 100), for a profiler; with `SIDECAR_BENCH_PROFILE_FLOOR`
        // set, the echo floor's loop. The loop's own rate goes to stderr.
        let size = bytes.parse().unwrap_or(100);
        let batches = (2_000_000_000 / size.max(100) / IN_FLIGHT).clamp(100, 20_000);
        let floor = std::env::var_os("SIDECAR_BENCH_PROFILE_FLOOR").is_some();
        let rt = runtime();
        let elapsed = in_task(&rt, async move {
            let p = payload(size);
            if floor {
                let mut echo = Echo::spawn().await;
                let frame = intercept_frame(&p);
                let t = Instant::now();
                for _ in 0..batches {
                    echo.round_trips(&frame, IN_FLIGHT).await;
                }
                t.elapsed()
            } else {
                let sidecar = start().await;
                let t = Instant::now();
                for _ in 0..batches {
                    intercepts(&sidecar, &p, IN_FLIGHT).await;
                }
                let elapsed = t.elapsed();
                sidecar.shutdown().await;
                elapsed
            }
        });
        let calls = batches * IN_FLIGHT;
        eprintln!(
            "{} {calls} calls in {elapsed:.2?}: {:.0} calls/s",
            if floor { "echo floor" } else { "sidecar" },
            calls as f64 / elapsed.as_secs_f64()
        );
        return;
    }
    // `SIDECAR_BENCH_ONLY_TABLES=1` skips criterion and prints the tables.
    if std::env::var_os("SIDECAR_BENCH_ONLY_TABLES").is_none() {
        benches();
    }
    percentiles();
    Criterion::default().configure_from_args().final_summary();
}
