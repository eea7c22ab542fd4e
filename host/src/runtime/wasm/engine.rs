//! The one wasmtime [`Engine`] of the host, its epoch ticker and its linker.
//!
//! Every component shares one engine (compiled code, the pooling allocator
//! and the epoch counter are per engine). The ticker thread advances the
//! epoch every [`EPOCH_TICK`]. Calls run as `call_async` on the caller's
//! task (a fiber, no thread hop): at every tick a running guest yields to
//! the executor, and once its budget is spent it traps, so a spinning guest
//! neither blocks the caller's thread nor outlives its budget by more than a
//! tick.

use std::sync::OnceLock;
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::error::WasmError;
use super::instance::HostState;
use super::limits::HOST_MEMORY_CEILING_BYTES;
use super::v2_0;

/// How often the ticker advances the epoch: the resolution of every CPU
/// deadline.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// How many component instances the pooling allocator keeps slots for.
/// Past that, instantiation fails (`activation_failed`) rather than
/// growing without bound.
pub const POOLED_INSTANCES: u32 = 128;

/// Deepest guest call stack before a `stack overflow` trap.
pub const MAX_WASM_STACK_BYTES: usize = 512 * 1024;

/// How the engine allocates instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// Instances are allocated on demand (mmap per instance).
    OnDemand,
    /// Instances come from pre-reserved slots ([`POOLED_INSTANCES`]).
    Pooling,
}

/// A configured engine with the ticker running and the host linker built.
pub struct WasmEngine {
    engine: Engine,
    linker: Linker<HostState>,
    allocation: Allocation,
}

impl std::fmt::Debug for WasmEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmEngine")
            .field("allocation", &self.allocation)
            .finish_non_exhaustive()
    }
}

impl WasmEngine {
    /// The process-wide engine (pooling allocator). Built once; an engine
    /// that cannot be built is reported on every call.
    pub fn shared() -> Result<&'static WasmEngine, WasmError> {
        static SHARED: OnceLock<Result<WasmEngine, WasmError>> = OnceLock::new();
        SHARED
            .get_or_init(|| WasmEngine::new(Allocation::Pooling))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A new engine with its own ticker thread (which ends when the engine
    /// is dropped).
    pub fn new(allocation: Allocation) -> Result<WasmEngine, WasmError> {
        let engine = Engine::new(&config(allocation))
            .map_err(|e| WasmError::engine(format!("cannot configure wasmtime: {e}")))?;
        start_ticker(&engine)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .and_then(|()| super::fs_limits::add_to_linker(&mut linker))
            .map_err(|e| WasmError::engine(format!("cannot link WASI: {e}")))?;
        v2_0::Extension::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| WasmError::engine(format!("cannot link the host imports: {e}")))?;
        Ok(WasmEngine {
            engine,
            linker,
            allocation,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(crate) fn linker(&self) -> &Linker<HostState> {
        &self.linker
    }

    pub fn allocation(&self) -> Allocation {
        self.allocation
    }
}

fn config(allocation: Allocation) -> Config {
    let mut config = Config::new();
    // `call_async` on a fiber, not the component-model-async machinery:
    // that doubles the cost of every call and no guest here needs it.
    config.concurrency_support(false);
    config.epoch_interruption(true);
    config.max_wasm_stack(MAX_WASM_STACK_BYTES);
    config.parallel_compilation(true);
    if allocation == Allocation::Pooling {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(POOLED_INSTANCES);
        // A wasip2 guest is several core instances (the guest, its adapter,
        // shims), each with its own memories and tables.
        pool.total_core_instances(POOLED_INSTANCES * 4);
        pool.total_memories(POOLED_INSTANCES * 2);
        pool.total_tables(POOLED_INSTANCES * 4);
        pool.max_memories_per_component(4);
        pool.max_tables_per_component(8);
        pool.max_memory_size(HOST_MEMORY_CEILING_BYTES);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

fn start_ticker(engine: &Engine) -> Result<(), WasmError> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("wasm-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .map(drop)
        .map_err(|e| WasmError::engine(format!("cannot start the epoch ticker: {e}")))
}
