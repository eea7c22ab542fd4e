//! Wasm component runtime benchmarks, each next to its floor in the same
//! run and engine configuration:
//!
//! - `call/empty_export_floor`: `lifecycle.initialized` (no params, no
//!   results) on a raw instance of the fixture: the cost of entering a
//!   component at all;
//! - `call/intercept_{100B,64KiB}`: `WasmRuntime::intercept` on a warm
//!   instance (lock, epoch deadline, lowering the payload, lifting the
//!   result, conversion to the wire DTO);
//! - `call/adapter_intercept_100B`: the same through the dispatcher's
//!   adapter (`ExtensionRuntime::intercept`, a blocking-pool hop);
//! - `call/sidecar_round_trip_{100B,64KiB}`: a native sidecar intercept
//!   (`test_sidecar bench`) over stdio, for the ≥10× comparison;
//! - `instantiate/{pooling,on_demand}/{wat,wasip2}`: a fresh `Store` and
//!   instance in the sandbox (what a rebuild after a trap costs);
//! - `compile/{cold,cache_load}/{wat,wasip2}`: compiling the component vs
//!   loading the verified artifact from the on-disk cache.
//!
//! Needs the sidecar example for the round trip:
//! `cargo build --release -p reasonix-sidecar --examples` (skipped with a
//! note when missing). Run: `cargo bench -p reasonix --bench wasm`.

#[path = "../tests/wasm_support/mod.rs"]
mod wasm_support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use reasonix::runtime::ExtensionRuntime;
use reasonix::runtime::wasm::cache::load_component;
use reasonix::runtime::wasm::{
    Allocation, ComponentCache, WasmEngine, WasmExtension, WasmRuntime, v2_0,
};
use reasonix_protocol::HookPoint;
use reasonix_protocol::types::{RawJson, SessionContext};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions};
use wasm_support::fixtures::{Fixture, Intercept};
use wasm_support::{TestPlugin, probe_component};

const BUDGET: Duration = Duration::from_secs(5);

fn payload(bytes: usize) -> RawJson {
    // {"text":"xxx…"} of `bytes` serialised bytes.
    let filler = bytes.saturating_sub(11);
    serde_json::value::RawValue::from_string(format!("{{\"text\":\"{}\"}}", "x".repeat(filler)))
        .unwrap()
}

fn on_demand_engine() -> &'static WasmEngine {
    Box::leak(Box::new(
        WasmEngine::new(Allocation::OnDemand).expect("engine"),
    ))
}

fn calls(c: &mut Criterion) {
    let component = Fixture::new(Intercept::Continue).build();
    let plugin = TestPlugin::new("bench", &component);
    let runtime = WasmRuntime::start(plugin.start()).expect("fixture starts");

    // The floor: the same component, raw bindings, the same engine.
    let engine = WasmEngine::shared().expect("engine").engine();
    let compiled = wasmtime::component::Component::new(engine, &component).unwrap();
    let linker = wasmtime::component::Linker::<()>::new(engine);
    let mut store = wasmtime::Store::new(engine, ());
    store.set_epoch_deadline(u64::MAX / 2);
    let raw = v2_0::Extension::instantiate(&mut store, &compiled, &linker).unwrap();

    let mut g = c.benchmark_group("call");
    g.throughput(Throughput::Elements(1));
    g.bench_function("empty_export_floor", |b| {
        b.iter(|| {
            raw.reasonix_extension_lifecycle()
                .call_initialized(&mut store)
                .unwrap()
        })
    });
    for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
        let p = payload(size);
        g.bench_function(format!("intercept_{name}"), |b| {
            b.iter(|| {
                runtime
                    .intercept(HookPoint::InputReceive, &p, BUDGET)
                    .unwrap()
            })
        });
    }
    let adapter = WasmExtension::new(WasmRuntime::start(plugin.start()).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let p = payload(100);
    g.bench_function("adapter_intercept_100B", |b| {
        b.iter(|| {
            rt.block_on(adapter.intercept(HookPoint::InputReceive, &p, BUDGET))
                .unwrap()
        })
    });
    sidecar_round_trips(&mut g);
    g.finish();
}

fn test_sidecar() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples/test_sidecar");
    path.exists().then_some(path)
}

fn sidecar_round_trips(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let Some(command) = test_sidecar() else {
        eprintln!(
            "sidecar round trip skipped: cargo build --release -p reasonix-sidecar --examples"
        );
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let spec = LaunchSpec {
        plugin_root: PathBuf::from("/tmp"),
        name: "bench".into(),
        version: "1.0.0".into(),
        command: command.display().to_string(),
        args: vec!["bench".into()],
        env: BTreeMap::new(),
    };
    let ceiling = ManifestCeiling {
        plugin_id: "bench".into(),
        intercepts: vec!["tool.before".into()],
        ..Default::default()
    };
    let mut options = StartOptions::new(SessionContext {
        session_id: "bench".into(),
        workspace_root: "/tmp".into(),
        generation: 1,
        epoch: None,
    });
    options.guard = Guard::Disabled;
    let sidecar = Arc::new(rt.block_on(Sidecar::start(spec, ceiling, options)).unwrap());
    for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
        let p = payload(size);
        g.bench_function(format!("sidecar_round_trip_{name}"), |b| {
            b.iter_custom(|iters| {
                let (sidecar, p) = (Arc::clone(&sidecar), p.clone());
                rt.block_on(async move {
                    tokio::spawn(async move {
                        let t = std::time::Instant::now();
                        for _ in 0..iters {
                            sidecar
                                .intercept(HookPoint::ToolBefore, p.clone(), BUDGET)
                                .await
                                .unwrap();
                        }
                        t.elapsed()
                    })
                    .await
                    .unwrap()
                })
            })
        });
    }
    rt.block_on(sidecar.shutdown());
}

fn instantiate(c: &mut Criterion) {
    let mut g = c.benchmark_group("instantiate");
    let components = [
        ("wat", Fixture::new(Intercept::Continue).build()),
        ("wasip2", probe_component().to_vec()),
    ];
    for (allocation, engine) in [
        ("pooling", WasmEngine::shared().expect("engine")),
        ("on_demand", on_demand_engine()),
    ] {
        for (kind, component) in &components {
            let plugin = TestPlugin::new("bench", component);
            let mut start = plugin.start();
            start.engine = Some(engine);
            let runtime = WasmRuntime::start(start).expect("starts");
            g.bench_function(format!("{allocation}/{kind}"), |b| {
                b.iter(|| runtime.instantiate_spare().unwrap())
            });
        }
    }
    g.finish();
}

fn compile(c: &mut Criterion) {
    let engine = WasmEngine::shared().expect("engine");
    let mut g = c.benchmark_group("compile");
    g.sample_size(10);
    for (kind, component) in [
        ("wat", Fixture::new(Intercept::Continue).build()),
        ("wasip2", probe_component().to_vec()),
    ] {
        g.bench_function(format!("cold/{kind}"), |b| {
            b.iter(|| load_component(engine, &component, None).unwrap())
        });
        let home = tempfile::tempdir().unwrap();
        let cache = ComponentCache::in_home(home.path());
        load_component(engine, &component, Some(&cache)).unwrap();
        g.bench_function(format!("cache_load/{kind}"), |b| {
            b.iter(|| {
                let (_, outcome) = load_component(engine, &component, Some(&cache)).unwrap();
                assert_eq!(outcome, reasonix::runtime::wasm::CacheOutcome::Hit);
            })
        });
    }
    g.finish();
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
        .configure_from_args();
    calls(&mut c);
    instantiate(&mut c);
    compile(&mut c);
    c.final_summary();
}
