//! Wasm component runtime benchmarks, each next to its floor in the same
//! run and engine configuration:
//!
//! - `call/empty_export_floor`: `lifecycle.initialized` (no params, no
//!   results) on a raw instance of the fixture, called synchronously: the
//!   cost of entering a component at all;
//! - `call/raw_intercept_100B`: the fixture's `intercept` through raw
//!   synchronous bindings on a plain store (no runtime around it): the
//!   floor of an intercept;
//! - `call/raw_intercept_async_100B`: the same through the host's async
//!   bindings (`call_async` on a fiber, on a task): what running calls on
//!   the caller's task instead of a blocking thread costs;
//! - `call/intercept_{100B,64KiB}`: `WasmRuntime::intercept_async` on a warm
//!   instance, on a task (lock, deadline, `call_async` on a fiber, lowering
//!   the payload, lifting the result, conversion to the wire DTO);
//! - `call/adapter_intercept_100B`: the same through the dispatcher's
//!   adapter (`ExtensionRuntime::intercept` of `WasmExtension`);
//! - `call/sidecar_round_trip_{100B,64KiB}`: a native sidecar intercept over
//!   stdio (the sidecar is this bench binary, `support/peer.rs`);
//! - `instantiate/{pooling,on_demand}/{wat,wasip2}`: a fresh `Store` and
//!   instance in the sandbox (what a rebuild after a trap costs);
//! - `compile/{cold,cache_load}/{wat,wasip2}`: compiling the component vs
//!   loading the verified artifact from the on-disk cache;
//! - `first_start/{compiling,precompiled}`: a plugin's first start (the
//!   first turn) when nothing compiled it before, and after the install
//!   precompiled it into the cache.
//!
//! Every async loop runs inside one runtime task. Run: `cargo bench -p
//! reasonix --bench wasm`.

#[path = "support/peer.rs"]
mod peer;
#[path = "../tests/wasm_support/mod.rs"]
mod wasm_support;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use reasonix::runtime::ExtensionRuntime;
use reasonix::runtime::wasm::cache::{load_component, precompile};
use reasonix::runtime::wasm::{
    Allocation, ComponentCache, WasmEngine, WasmExtension, WasmRuntime, v2_0,
};
use reasonix_protocol::HookPoint;
use reasonix_protocol::types::{RawJson, SessionContext};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling, Sidecar, StartOptions};
use tokio::runtime::Runtime;
use wasm_support::fixtures::{Fixture, Intercept};
use wasm_support::{TestPlugin, probe_component};

/// Synchronous bindings of the same world, for the floors: no runtime, no
/// fiber, no lock around the call.
mod raw {
    wasmtime::component::bindgen!({
        world: "extension",
        path: "../wit/since_v2.0.0",
    });
}

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

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `fut` inside a runtime task (where a session's turn runs).
fn in_task<F, T>(rt: &Runtime, fut: F) -> T
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    rt.block_on(async move { tokio::spawn(fut).await.unwrap() })
}

fn calls(c: &mut Criterion) {
    let component = Fixture::new(Intercept::Continue).build();
    let plugin = TestPlugin::new("bench", &component);
    let rt = runtime();

    // The floors: the same component, raw synchronous bindings, the same
    // engine, a plain store.
    let engine = WasmEngine::shared().expect("engine").engine();
    let compiled = wasmtime::component::Component::new(engine, &component).unwrap();
    let linker = wasmtime::component::Linker::<()>::new(engine);
    let mut store = wasmtime::Store::new(engine, ());
    store.set_epoch_deadline(u64::MAX / 2);
    let bound = raw::Extension::instantiate(&mut store, &compiled, &linker).unwrap();

    let mut g = c.benchmark_group("call");
    g.throughput(Throughput::Elements(1));
    g.bench_function("empty_export_floor", |b| {
        b.iter(|| {
            bound
                .reasonix_extension_lifecycle()
                .call_initialized(&mut store)
                .unwrap()
        })
    });
    let params = raw::exports::reasonix::extension::intercept::InterceptParams {
        event: raw::reasonix::extension::types::HookPoint::InputReceive,
        seq: 1,
        payload: payload(100).get().to_owned(),
        timeout_millis: 5000,
        externalized: None,
    };
    g.bench_function("raw_intercept_100B", |b| {
        b.iter(|| {
            bound
                .reasonix_extension_intercept()
                .call_intercept(&mut store, &params)
                .unwrap()
                .unwrap()
        })
    });

    // What entering through `call_async` (a fiber) costs over the plain
    // call above: the same raw instance shape, the host's async bindings.
    let async_raw = Arc::new(tokio::sync::Mutex::new({
        let compiled = compiled.clone();
        rt.block_on(async move {
            let engine = WasmEngine::shared().expect("engine").engine();
            let linker = wasmtime::component::Linker::<()>::new(engine);
            let mut store = wasmtime::Store::new(engine, ());
            store.set_epoch_deadline(u64::MAX / 2);
            let bound = v2_0::Extension::instantiate_async(&mut store, &compiled, &linker)
                .await
                .unwrap();
            (store, bound)
        })
    }));
    let async_params = v2_0::exports::reasonix::extension::intercept::InterceptParams {
        event: v2_0::reasonix::extension::types::HookPoint::InputReceive,
        seq: 1,
        payload: payload(100).get().to_owned(),
        timeout_millis: 5000,
        externalized: None,
    };
    g.bench_function("raw_intercept_async_100B", |b| {
        b.iter_custom(|iters| {
            let (instance, params) = (Arc::clone(&async_raw), async_params.clone());
            in_task(&rt, async move {
                let mut guard = instance.lock().await;
                let (store, bound) = &mut *guard;
                let began = Instant::now();
                for _ in 0..iters {
                    bound
                        .reasonix_extension_intercept()
                        .call_intercept(&mut *store, &params)
                        .await
                        .unwrap()
                        .unwrap();
                }
                began.elapsed()
            })
        })
    });

    let direct = Arc::new(
        rt.block_on(WasmRuntime::start_async(plugin.start()))
            .unwrap(),
    );
    for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
        let p = payload(size);
        g.bench_function(format!("intercept_{name}"), |b| {
            b.iter_custom(|iters| {
                let (direct, p) = (Arc::clone(&direct), p.clone());
                in_task(&rt, async move {
                    let began = Instant::now();
                    for _ in 0..iters {
                        direct
                            .intercept_async(HookPoint::InputReceive, &p, BUDGET)
                            .await
                            .unwrap();
                    }
                    began.elapsed()
                })
            })
        });
    }
    let adapter: Arc<dyn ExtensionRuntime> = {
        let start = plugin.start();
        Arc::new(in_task(&rt, async move {
            WasmExtension::new(WasmRuntime::start_async(start).await.unwrap())
        }))
    };
    let p = payload(100);
    g.bench_function("adapter_intercept_100B", |b| {
        b.iter_custom(|iters| {
            let (adapter, p) = (Arc::clone(&adapter), p.clone());
            in_task(&rt, async move {
                let began = Instant::now();
                for _ in 0..iters {
                    adapter
                        .intercept(HookPoint::InputReceive, &p, BUDGET)
                        .await
                        .unwrap();
                }
                began.elapsed()
            })
        })
    });
    sidecar_round_trips(&mut g, &rt);
    g.finish();
}

fn sidecar_round_trips(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    rt: &Runtime,
) {
    let spec = LaunchSpec {
        plugin_root: PathBuf::from("/tmp"),
        name: "bench".into(),
        version: "1.0.0".into(),
        command: peer::program().display().to_string(),
        args: Vec::new(),
        env: BTreeMap::from([(peer::ROLE.to_string(), "sidecar".to_string())]),
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
    let sidecar = Arc::new(in_task(rt, async move {
        Sidecar::start(spec, ceiling, options).await.unwrap()
    }));
    for (name, size) in [("100B", 100), ("64KiB", 64 * 1024)] {
        let p = payload(size);
        g.bench_function(format!("sidecar_round_trip_{name}"), |b| {
            b.iter_custom(|iters| {
                let (sidecar, p) = (Arc::clone(&sidecar), p.clone());
                in_task(rt, async move {
                    let began = Instant::now();
                    for _ in 0..iters {
                        sidecar
                            .intercept(HookPoint::ToolBefore, p.clone(), BUDGET)
                            .await
                            .unwrap();
                    }
                    began.elapsed()
                })
            })
        });
    }
    let sidecar = Arc::clone(&sidecar);
    in_task(rt, async move { sidecar.shutdown().await });
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

/// A plugin's first start (what the first turn waits for) with the wasip2
/// probe: compiling, against loading what the install precompiled.
fn first_start(c: &mut Criterion) {
    let mut g = c.benchmark_group("first_start");
    g.sample_size(10);
    let plugin = TestPlugin::new("bench", probe_component());
    let cache = ComponentCache::in_home(plugin.home());
    g.bench_function("compiling", |b| {
        b.iter(|| {
            let _ = std::fs::remove_dir_all(cache.dir());
            let mut start = plugin.start();
            start.cache = Some(cache.clone());
            let runtime = WasmRuntime::start(start).unwrap();
            assert_ne!(
                runtime.facts().cache,
                reasonix::runtime::wasm::CacheOutcome::Hit
            );
        })
    });
    precompile(plugin.home(), &plugin.component_path()).unwrap();
    g.bench_function("precompiled", |b| {
        b.iter(|| {
            let mut start = plugin.start();
            start.cache = Some(cache.clone());
            let runtime = WasmRuntime::start(start).unwrap();
            assert_eq!(
                runtime.facts().cache,
                reasonix::runtime::wasm::CacheOutcome::Hit
            );
        })
    });
    g.finish();
}

fn main() {
    peer::serve_if_requested();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
        .configure_from_args();
    calls(&mut c);
    instantiate(&mut c);
    compile(&mut c);
    first_start(&mut c);
    c.final_summary();
}
