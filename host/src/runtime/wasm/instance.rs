//! One live component instance: its `Store`, its sandbox state and the
//! discipline of a call (deadline, limiter reset, trap classification).
//!
//! Calls are `call_async` on the caller's task. The store's epoch callback
//! runs at every engine tick while the guest runs: before the call's
//! deadline it yields to the executor (so a long call never holds a worker
//! thread for more than a tick), after it the guest traps with an
//! interrupt, which [`classify_trap`] reports as the call's timeout.
//!
//! After a trap wasmtime refuses to enter the instance again, so the owner
//! drops an [`Instance`] whose call failed with a poisoning error (or whose
//! call future was dropped half-way) and builds a fresh one before the next
//! call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reasonix_protocol::ErrorReason;
use reasonix_protocol::types as wire;
use wasmtime::component::ResourceTable;
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::ComponentPre;
use super::engine::WasmEngine;
use super::error::WasmError;
use super::fs_limits::{DataQuota, FsLimits};
use super::limits::{CallKind, InstanceLimits, Limiter, classify_trap};
use super::sandbox::{GuestLog, SandboxPolicy};
use super::v2_0;

/// Budget for instantiation itself (start functions, data segments).
pub const INSTANTIATE_BUDGET: Duration = Duration::from_secs(5);

/// Serves `host-ui.publish` / `host-ui.request` for a component. Params
/// arrive decoded and validated; an `Err` goes back to the guest as its
/// `extension-error`. Without a bridge the host has no UI and answers
/// `unknown-method`.
pub trait UiBridge: Send + Sync {
    fn publish(
        &self,
        plugin: &str,
        params: wire::UIPublishParams,
    ) -> Result<wire::UIPublishResult, (ErrorReason, Option<String>)>;

    fn request(
        &self,
        plugin: &str,
        params: wire::UIRequestParams,
    ) -> Result<wire::UIRequestResult, (ErrorReason, Option<String>)>;
}

/// A provider-stream notification the guest emitted during a call.
#[derive(Debug, Clone)]
pub(crate) enum Emission {
    Chunk(Box<wire::StreamChunkParams>),
    End(wire::StreamEndParams),
    /// A chunk that does not satisfy the contract.
    Invalid {
        stream_id: String,
        why: String,
    },
}

/// The data of one instance's store.
pub(crate) struct HostState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    /// Open-handle bound and data quota ([`super::fs_limits`]).
    pub(super) fs_limits: FsLimits,
    pub(crate) limiter: Limiter,
    pub(crate) log: GuestLog,
    pub(crate) plugin_id: Arc<str>,
    /// The handshake is complete (`initialized` was delivered).
    pub(crate) ready: bool,
    /// The first host import called before `initialized`.
    pub(crate) barrier_violation: Option<&'static str>,
    /// Stream notifications of the current call, delivered after it returns.
    pub(crate) emitted: Vec<Emission>,
    pub(crate) ui: Option<Arc<dyn UiBridge>>,
    /// When the running call's budget is spent.
    deadline: Instant,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// How a call into the guest failed before it was classified.
pub(crate) enum CallError {
    /// A trap or host-side failure inside wasmtime.
    Trap(wasmtime::Error),
    /// The guest's own `extension-error`.
    Guest(ErrorReason, Option<String>),
    /// The guest answered something the contract does not allow.
    Invalid(String),
}

/// The version-specific bindings of an instance.
pub(crate) enum Bindings {
    V2_0(v2_0::Bindings),
}

impl Bindings {
    /// The 2.0 view. Every adapter is 2.0-compatible, so later variants
    /// will convert here rather than add arms at every call site.
    pub(crate) fn v2(&self) -> &v2_0::Bindings {
        match self {
            Bindings::V2_0(b) => b,
        }
    }
}

/// Everything needed to make instances of one component.
pub(crate) struct InstanceRecipe {
    pub(crate) engine: &'static WasmEngine,
    pub(crate) pre: ComponentPre,
    pub(crate) policy: SandboxPolicy,
    pub(crate) limits: InstanceLimits,
    pub(crate) log: GuestLog,
    pub(crate) plugin_id: Arc<str>,
    pub(crate) ui: Option<Arc<dyn UiBridge>>,
}

/// A live instance.
pub(crate) struct Instance {
    store: Store<HostState>,
    bindings: Bindings,
}

impl Instance {
    pub(crate) async fn new(recipe: &InstanceRecipe) -> Result<Instance, WasmError> {
        let state = HostState {
            wasi: recipe.policy.wasi_context(&recipe.log)?,
            table: super::limits::resource_table(),
            fs_limits: FsLimits::new(
                recipe.plugin_id.clone(),
                Arc::new(std::sync::Mutex::new(DataQuota::new(
                    recipe.policy.data_dir.clone(),
                    recipe.policy.data_limit_bytes,
                ))),
            ),
            limiter: Limiter::new(recipe.limits),
            log: recipe.log.clone(),
            plugin_id: recipe.plugin_id.clone(),
            ready: false,
            barrier_violation: None,
            emitted: Vec::new(),
            ui: recipe.ui.clone(),
            deadline: Instant::now() + INSTANTIATE_BUDGET,
        };
        let mut store = Store::new(recipe.engine.engine(), state);
        store.limiter(|state| &mut state.limiter);
        store.epoch_deadline_callback(|store| {
            Ok(if Instant::now() >= store.data().deadline {
                UpdateDeadline::Interrupt
            } else {
                UpdateDeadline::Yield(1)
            })
        });
        store.set_epoch_deadline(1);
        let bindings = match &recipe.pre {
            ComponentPre::V2_0(pre) => v2_0::Bindings::instantiate(pre, &mut store)
                .await
                .map(Bindings::V2_0)
                .map_err(|e| instantiate_error(e, &store))?,
        };
        Ok(Instance { store, bindings })
    }

    /// Arm the deadline and reset the limiter for one export call; the
    /// caller awaits the call on the returned parts and hands the outcome
    /// to [`Instance::finish`] (see [`guest_call!`]).
    pub(crate) fn begin(&mut self, budget: Duration) -> (&v2_0::Bindings, &mut Store<HostState>) {
        let state = self.store.data_mut();
        state.limiter.refused = None;
        state.deadline = Instant::now() + budget;
        // The callback decides at each tick: yield, or trap past the deadline.
        self.store.set_epoch_deadline(1);
        (self.bindings.v2(), &mut self.store)
    }

    /// Classify how a call ended. A poisoning error means the instance must
    /// be dropped.
    pub(crate) fn finish<T>(
        &self,
        kind: CallKind,
        budget: Duration,
        outcome: Result<T, CallError>,
    ) -> Result<T, WasmError> {
        outcome.map_err(|error| match error {
            CallError::Trap(error) => classify_trap(
                &error,
                kind,
                self.store.data().limiter.refused.as_deref(),
                budget,
            ),
            CallError::Guest(reason, message) => WasmError::rejected(reason, message),
            CallError::Invalid(message) => {
                WasmError::protocol(format!("{}: {message}", kind.name()))
            }
        })
    }

    pub(crate) fn state(&mut self) -> &mut HostState {
        self.store.data_mut()
    }
}

/// One export call under a budget: `guest_call!(instance, kind, budget,
/// |bindings, store| bindings.method(store, …))` awaits the method with
/// the deadline armed and classifies its outcome.
macro_rules! guest_call {
    ($instance:expr, $kind:expr, $budget:expr, |$bindings:ident, $store:ident| $call:expr) => {{
        let (budget, kind) = ($budget, $kind);
        let instance: &mut $crate::runtime::wasm::instance::Instance = $instance;
        let ($bindings, $store) = instance.begin(budget);
        let outcome = $call.await;
        instance.finish(kind, budget, outcome)
    }};
}
pub(crate) use guest_call;

fn instantiate_error(error: CallError, store: &Store<HostState>) -> WasmError {
    let message = match error {
        CallError::Trap(error) => {
            classify_trap(
                &error,
                CallKind::Initialize,
                store.data().limiter.refused.as_deref(),
                INSTANTIATE_BUDGET,
            )
            .message
        }
        CallError::Guest(reason, message) => message.unwrap_or_else(|| reason.message().into()),
        CallError::Invalid(message) => message,
    };
    WasmError::load(format!("instantiation failed: {message}"))
}
