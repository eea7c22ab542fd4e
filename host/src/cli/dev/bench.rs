//! `reasonix dev bench`: what each enabled extension costs at each hook
//! point it intercepts, through the real dispatcher, next to the host's
//! floor for its transport measured in the same run and interleaved with
//! it (a bare NDJSON echo child over the same kind of pipes for a sidecar,
//! an empty call into the component for a wasm runtime). Also each
//! runtime's start-up time and resident memory.
//!
//! Latency on a shared machine is noisy; the ratio to the floor of the same
//! run is the figure to read (the seed's advice: keep input, tool,
//! permission and provider interceptors small).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use reasonix_protocol::frame::{Id, encode_request};
use reasonix_protocol::methods::EXTENSION_INTERCEPT;
use reasonix_protocol::points::HookPoint;
use reasonix_protocol::types::InterceptParams;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::home::ReasonixHome;
use crate::runtime::diagnostics::Diagnostics;
use crate::runtime::dispatcher::{ChainMember, Dispatcher};
use crate::runtime::generation::{RuntimeCandidate, StartContext, StartGate};
use crate::runtime::host::CandidateSource;
use crate::runtime::redaction::clean_text;
use crate::runtime::registry_source::RegistrySource;
use crate::runtime::slots::SlotTable;
use crate::runtime::ui::{UiAnswers, UiHub};
use crate::runtime::{ExtensionRuntime, TrustLabel};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    reasonix dev bench\n  \
    reasonix dev bench --point tool.before --iterations 5000\n  \
    reasonix dev bench --json\n\n\
    Each figure is read against the floor measured in the same run: a sidecar's floor is \
    a bare NDJSON echo over the same kind of pipes, a component's an empty call into it. \
    Stdio latency depends on CPU placement; compare ratios, or pin the run \
    (`taskset -c 0 reasonix dev bench`).")]
pub struct BenchArgs {
    /// Only this hook point (a wire name such as `tool.before`).
    #[arg(long, value_name = "POINT")]
    pub point: Option<String>,
    /// Measured intercepts per point and plugin (after a warm-up of a tenth
    /// as many).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1000,
        value_parser = clap::value_parser!(u32).range(1..=1_000_000)
    )]
    pub iterations: u32,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The whole report, as printed with `--json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchReport {
    pub ok: bool,
    pub iterations: u32,
    pub plugins: Vec<PluginBench>,
    /// Plugins whose runtime did not start (nothing measured).
    pub degraded: Vec<crate::runtime::generation::Degraded>,
}

/// One enabled extension.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginBench {
    pub plugin: String,
    /// `native` or `wasm`.
    pub runtime: &'static str,
    pub trust: &'static str,
    /// Spawn or load, then the handshake, in milliseconds.
    pub startup_millis: f64,
    /// Resident memory after the measurements (a sidecar's process group,
    /// a component's linear memory), in bytes.
    pub resident_bytes: Option<u64>,
    /// What the floor is: `pipe_echo` or `component_call`.
    pub floor: &'static str,
    pub points: Vec<PointBench>,
}

/// One hook point of one extension.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PointBench {
    pub point: &'static str,
    pub payload_bytes: usize,
    pub p50_micros: f64,
    pub p99_micros: f64,
    pub floor_p50_micros: f64,
    pub floor_p99_micros: f64,
    /// p50 over the floor's p50.
    pub ratio_p50: f64,
    /// The dispatcher's outcome of the last intercept (`continue`,
    /// `blocked`, `permission`, or `failed: …`).
    pub outcome: String,
}

pub fn run(args: BenchArgs) -> ExitCode {
    let only = match args.point.as_deref().map(parse_point).transpose() {
        Ok(point) => point,
        Err(message) => return fail(args.json, 2, "bench.invalid_point", &message),
    };
    let home = match ReasonixHome::from_env() {
        Ok(home) => home,
        Err(e) => {
            return fail(
                args.json,
                1,
                "bench.no_home",
                &format!("{e}; set REASONIX_HOME"),
            );
        }
    };
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            return fail(
                args.json,
                1,
                "bench.runtime",
                &format!("cannot start the async runtime: {e}"),
            );
        }
    };
    let hub = Arc::new(UiHub::new(UiAnswers::Headless));
    let source = RegistrySource::new(home, reasonix_sidecar::Guard::CurrentExe, hub);
    let candidates = match source.candidates() {
        Ok(candidates) => candidates,
        Err(e) => return fail(args.json, 1, "bench.registry", &clean_text(&e)),
    };
    let iterations = args.iterations as usize;
    let measured = runtime.block_on(async move {
        // Measured from a task, where a session's turn runs.
        tokio::spawn(measure_all(candidates, only, iterations)).await
    });
    let report = match measured {
        Ok(report) => report,
        Err(e) => return fail(args.json, 1, "bench.internal", &e.to_string()),
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        print_human(&report, only);
    }
    ExitCode::SUCCESS
}

fn parse_point(name: &str) -> Result<HookPoint, String> {
    HookPoint::from_name(name.trim()).ok_or_else(|| {
        let names: Vec<&str> = HookPoint::ALL.iter().map(|p| p.as_str()).collect();
        format!(
            "--point {:?} is not a hook point; use one of {}",
            clean_text(name),
            names.join(", ")
        )
    })
}

fn fail(json: bool, code: u8, error_code: &str, message: &str) -> ExitCode {
    if json {
        println!(
            "{}",
            json!({"ok": false, "errorCode": error_code, "error": message})
        );
    } else {
        eprintln!("error: {message}");
    }
    ExitCode::from(code)
}

async fn measure_all(
    candidates: Vec<RuntimeCandidate>,
    only: Option<HookPoint>,
    iterations: usize,
) -> BenchReport {
    let mut report = BenchReport {
        ok: true,
        iterations: iterations as u32,
        plugins: Vec::new(),
        degraded: Vec::new(),
    };
    for candidate in candidates {
        match measure_plugin(&candidate, only, iterations).await {
            Ok(plugin) => report.plugins.push(plugin),
            Err(why) => report.degraded.push(crate::runtime::generation::Degraded {
                plugin: candidate.plugin_id.clone(),
                why: clean_text(&why),
            }),
        }
    }
    report
}

/// Start one plugin's runtime alone, put it behind a dispatcher of its own
/// and measure every point it is called at.
async fn measure_plugin(
    candidate: &RuntimeCandidate,
    only: Option<HookPoint>,
    iterations: usize,
) -> Result<PluginBench, String> {
    let workspace = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| ".".into());
    let context = StartContext {
        session_id: "dev-bench".into(),
        workspace_root: workspace,
        generation: 1,
        deadline: tokio::time::Instant::now() + crate::runtime::generation::STARTUP_BUDGET,
        gate: StartGate::new(1),
    };
    let began = Instant::now();
    let runtime = candidate.starter.start(context).await?;
    let startup = began.elapsed();
    let slots = SlotTable::build(std::iter::once((
        candidate.plugin_id.as_str(),
        runtime.declaration().replaces.iter(),
    )))
    .map_err(|e| e.to_string())?;
    let dispatcher = Dispatcher::new(
        vec![ChainMember {
            runtime: Arc::clone(&runtime),
            priority: candidate.priority,
            required: candidate.required,
            timeout_millis: candidate.timeout_millis,
        }],
        slots,
        Arc::new(Diagnostics::new()),
    );
    let mut floor = match runtime.trust() {
        TrustLabel::Sandboxed => Floor::Component,
        TrustLabel::FullTrust => Floor::Echo(Box::new(Echo::spawn().await?)),
    };
    let mut points = Vec::new();
    for point in HookPoint::ALL {
        if only.is_some_and(|p| p != point) {
            continue;
        }
        let (chain, strategy) = dispatcher.plan(point);
        if chain.is_empty() && strategy.is_none() {
            continue;
        }
        points.push(measure_point(&dispatcher, &runtime, &mut floor, point, iterations).await?);
    }
    let resident_bytes = runtime.resident_bytes().await;
    runtime.shutdown().await;
    let wasm = runtime.trust() == TrustLabel::Sandboxed;
    Ok(PluginBench {
        plugin: candidate.plugin_id.clone(),
        runtime: if wasm { "wasm" } else { "native" },
        trust: if wasm { "sandboxed" } else { "full_trust" },
        startup_millis: millis(startup),
        resident_bytes,
        floor: if wasm { "component_call" } else { "pipe_echo" },
        points,
    })
}

enum Floor {
    /// An empty call into the component itself.
    Component,
    /// A bare NDJSON echo child.
    Echo(Box<Echo>),
}

async fn measure_point(
    dispatcher: &Dispatcher,
    runtime: &Arc<dyn ExtensionRuntime>,
    floor: &mut Floor,
    point: HookPoint,
    iterations: usize,
) -> Result<PointBench, String> {
    let payload = sample_payload(point);
    let payload_bytes = payload.to_string().len();
    let frame = intercept_frame(point, &payload)?;
    let mut samples = Vec::with_capacity(iterations);
    let mut floors = Vec::with_capacity(iterations);
    let mut outcome = String::new();
    let warm_up = (iterations / 10).max(1);
    for i in 0..warm_up + iterations {
        // Interleaved, so both see the same machine.
        let began = Instant::now();
        match floor {
            Floor::Component => match runtime.floor_call() {
                Some(call) => call.await.map_err(|e| e.message)?,
                None => return Err("the runtime has no floor call".into()),
            },
            Floor::Echo(echo) => echo.round_trip(&frame).await?,
        }
        let floor_time = began.elapsed();
        let input = payload.clone();
        let began = Instant::now();
        let ruling = dispatcher.intercept(point, input).await;
        let time = began.elapsed();
        if i >= warm_up {
            floors.push(floor_time);
            samples.push(time);
        }
        if i + 1 == warm_up + iterations {
            outcome = match ruling {
                Ok(ruling) => outcome_name(ruling.outcome()).into(),
                Err(e) => format!("failed: {}", clean_text(&e.to_string())),
            };
        }
    }
    let (p50, p99) = percentiles(&mut samples);
    let (f50, f99) = percentiles(&mut floors);
    Ok(PointBench {
        point: point.as_str(),
        payload_bytes,
        p50_micros: micros(p50),
        p99_micros: micros(p99),
        floor_p50_micros: micros(f50),
        floor_p99_micros: micros(f99),
        ratio_p50: if f50.is_zero() {
            0.0
        } else {
            p50.as_secs_f64() / f50.as_secs_f64()
        },
        outcome,
    })
}

fn outcome_name(outcome: &crate::runtime::dispatcher::Outcome) -> &'static str {
    match outcome {
        crate::runtime::dispatcher::Outcome::Continue => "continue",
        crate::runtime::dispatcher::Outcome::Blocked { .. } => "blocked",
        crate::runtime::dispatcher::Outcome::Permission { .. } => "permission",
    }
}

fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    if samples.is_empty() {
        return (Duration::ZERO, Duration::ZERO);
    }
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.50), at(0.99))
}

fn micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e7).round() / 10.0
}

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e4).round() / 10.0
}

/// A small, valid payload of each point (about what a short turn sends).
pub fn sample_payload(point: HookPoint) -> Value {
    let messages = json!([{"role": "user", "content": "Summarise the README in one line."}]);
    match point {
        HookPoint::SessionStart
        | HookPoint::SessionEnd
        | HookPoint::SessionLoad
        | HookPoint::SessionSave
        | HookPoint::SessionRotate => json!({
            "sessionPath": "/tmp/reasonix/sessions/bench.json",
            "phase": point.session_phase().unwrap_or_default(),
        }),
        HookPoint::InputReceive => json!({"text": "Summarise the README in one line, please."}),
        HookPoint::AgentBeforeStart => {
            json!({"model": "echo/small", "toolCount": 4, "sessionId": "dev-bench"})
        }
        HookPoint::SystemPromptBuild => {
            json!({"prompt": "You are a careful assistant.", "workspaceRoot": "/workspace"})
        }
        HookPoint::ContextPrepare => json!({"messages": messages}),
        HookPoint::CompactionPrepare => json!({"messages": messages, "guidance": "keep decisions"}),
        HookPoint::CompactionComplete => json!({"summary": "The user asked for a summary."}),
        HookPoint::ProviderRequest => {
            json!({"request": {"messages": messages, "tools": [], "maxTokens": 1024}})
        }
        HookPoint::ProviderResponse => json!({"text": "The README explains the project."}),
        HookPoint::ToolBefore => json!({
            "name": "read_file", "arguments": "{\"path\":\"README.md\"}", "callId": "call-1"
        }),
        HookPoint::ToolAfter => json!({
            "name": "read_file", "arguments": "{\"path\":\"README.md\"}",
            "result": "# Project\nA short README.", "callId": "call-1"
        }),
        HookPoint::PermissionDecision => json!({
            "name": "read_file", "arguments": "{\"path\":\"README.md\"}",
            "readOnly": true, "hostDecision": "allow"
        }),
        HookPoint::FrontendEvent => json!({"kind": "key", "text": "enter", "detail": ""}),
    }
}

/// The frame a sidecar connection writes for this intercept.
fn intercept_frame(point: HookPoint, payload: &Value) -> Result<Vec<u8>, String> {
    let params = InterceptParams {
        event: point,
        seq: 1,
        payload: serde_json::value::to_raw_value(payload).map_err(|e| e.to_string())?,
        timeout_millis: point.default_intercept_timeout().as_millis() as u64,
        externalized: Vec::new(),
    };
    encode_request(Id::Number(1), EXTENSION_INTERCEPT, &params).map_err(|e| e.to_string())
}

/// A bare NDJSON echo child (`reasonix dev echo`): the transport floor.
struct Echo {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Echo {
    async fn spawn() -> Result<Echo, String> {
        let exe: PathBuf = std::env::current_exe()
            .map_err(|e| format!("cannot locate this executable for the echo floor: {e}"))?;
        let mut child = Command::new(exe)
            .args(["dev", "echo"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the echo floor: {e}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the echo floor's stdio was not piped".into());
        };
        Ok(Echo {
            stdin,
            stdout: BufReader::with_capacity(64 * 1024, stdout),
            _child: child,
            line: Vec::new(),
        })
    }

    async fn round_trip(&mut self, frame: &[u8]) -> Result<(), String> {
        let broken = |e: std::io::Error| format!("the echo floor broke: {e}");
        self.stdin.write_all(frame).await.map_err(broken)?;
        self.line.clear();
        let n = self
            .stdout
            .read_until(b'\n', &mut self.line)
            .await
            .map_err(broken)?;
        if n == 0 {
            return Err("the echo floor exited".into());
        }
        Ok(())
    }
}

/// `reasonix dev echo`: every stdin line back on stdout, unchanged (the
/// floor `dev bench` measures sidecars against).
pub fn echo() -> ExitCode {
    use std::io::{BufRead, Write};
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
        if out.write_all(&line).is_err() || out.flush().is_err() {
            return ExitCode::SUCCESS;
        }
    }
}

fn print_human(report: &BenchReport, only: Option<HookPoint>) {
    println!(
        "reasonix dev bench: {} intercepts per point, each beside its floor measured in the same run",
        report.iterations
    );
    if report.plugins.is_empty() && report.degraded.is_empty() {
        println!("  no enabled plugin has a runtime; nothing to measure");
    }
    for plugin in &report.plugins {
        let memory = plugin
            .resident_bytes
            .map(|b| format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)))
            .unwrap_or_else(|| "unknown".into());
        let kind = if plugin.runtime == "wasm" {
            "wasm component, sandboxed; floor: an empty component call"
        } else {
            "native sidecar, full trust; floor: a bare pipe echo"
        };
        println!();
        println!(
            "{} ({kind})\n  start-up {:.1} ms, resident memory {memory}",
            plugin.plugin, plugin.startup_millis
        );
        if plugin.points.is_empty() {
            match only {
                Some(point) => println!("  not called at {}", point.as_str()),
                None => println!("  intercepts no hook point"),
            }
            continue;
        }
        println!(
            "  {:<20} {:>10} {:>10} {:>10} {:>10} {:>9}  outcome",
            "point", "p50 µs", "p99 µs", "floor p50", "floor p99", "× floor"
        );
        for p in &plugin.points {
            println!(
                "  {:<20} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>9.2}  {}",
                p.point,
                p.p50_micros,
                p.p99_micros,
                p.floor_p50_micros,
                p.floor_p99_micros,
                p.ratio_p50,
                p.outcome
            );
        }
    }
    for d in &report.degraded {
        println!();
        println!("{}: did not start, nothing measured: {}", d.plugin, d.why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_payload_fits_its_point() {
        for point in HookPoint::ALL {
            let raw = serde_json::value::to_raw_value(&sample_payload(point)).unwrap();
            reasonix_protocol::payloads::decode_payload(point, &raw)
                .unwrap_or_else(|e| panic!("{}: {e}", point.as_str()));
            assert!(
                intercept_frame(point, &sample_payload(point))
                    .unwrap()
                    .ends_with(b"\n")
            );
        }
    }

    #[test]
    fn percentiles_pick_ranks() {
        let mut samples: Vec<Duration> = (1..=100).rev().map(Duration::from_micros).collect();
        let (p50, p99) = percentiles(&mut samples);
        assert_eq!(p50, Duration::from_micros(51));
        assert_eq!(p99, Duration::from_micros(99));
        assert_eq!(percentiles(&mut []), (Duration::ZERO, Duration::ZERO));
    }

    #[test]
    fn unknown_points_name_the_valid_ones() {
        assert_eq!(parse_point(" tool.before ").unwrap(), HookPoint::ToolBefore);
        let err = parse_point("tool.during").unwrap_err();
        assert!(err.contains("input.receive"), "{err}");
    }
}
