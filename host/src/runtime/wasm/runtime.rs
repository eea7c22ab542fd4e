//! [`WasmRuntime`]: one plugin's component, handshaken and serving the
//! extension contract.
//!
//! Calls are serialised (a component instance is single-threaded) and run
//! as `call_async` on the caller's task: no thread hop, and a long call
//! yields to the executor at every epoch tick. Each call has a budget
//! enforced by the instance's deadline. A call that traps (timeout, memory
//! limit, stack overflow, any other trap) or whose future is dropped
//! half-way fails on its own and drops the instance; the next call builds a
//! fresh one and repeats the handshake, whose declaration must equal the
//! accepted one.
//!
//! Every call also has a blocking twin (`intercept` for `intercept_async`,
//! …) for tools and tests outside an async context; it must not be called
//! from inside an async task.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use reasonix_protocol::types::{
    self as wire, InitializeParams, InitializeResult, SessionContext, UiHost,
};
use reasonix_protocol::{ErrorReason, HookPoint};
use reasonix_sidecar::handshake::{
    Declaration, ManifestCeiling, check_declaration, check_protocol_version, initialize_params,
};
use serde_json::value::RawValue;

use super::bindings::{Adapter, ComponentPre, PackageVersion, detect_version};
use super::cache::{CacheOutcome, ComponentCache, load_component};
use super::engine::WasmEngine;
use super::error::{WasmError, WasmErrorKind};
use super::instance::{Emission, Instance, InstanceRecipe, UiBridge, guest_call};
use super::limits::{CallKind, InstanceLimits};
use super::sandbox::{GuestLog, SandboxPolicy};

/// Budget of the handshake (`protocol-version` + `initialize`), spec §4.3.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// Budget of `extension/shutdown` when the caller gives none.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
/// Budget of a provider catalog, stream open or cancel call.
pub const PROVIDER_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Budget of a UI callback.
pub const UI_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Budget of an observation (the guest must not stall the queue behind it).
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything needed to start one plugin's component.
#[derive(Clone)]
pub struct WasmStart {
    /// The `.wasm` file (`runtime.command` after `${REASONIX_PLUGIN_ROOT}`
    /// expansion).
    pub component_path: PathBuf,
    /// The manifest ceiling (from the registry entry); `plugin_id` names
    /// the plugin.
    pub ceiling: ManifestCeiling,
    pub session: SessionContext,
    pub ui_host: UiHost,
    pub sandbox: SandboxPolicy,
    pub limits: InstanceLimits,
    /// `None` compiles on every start.
    pub cache: Option<ComponentCache>,
    pub ui: Option<Arc<dyn UiBridge>>,
    pub handshake_timeout: Duration,
    /// The engine; `None` uses [`WasmEngine::shared`].
    pub engine: Option<&'static WasmEngine>,
}

impl WasmStart {
    /// Defaults: headless, default limits, no cache, no UI, 30 s handshake.
    pub fn new(
        component_path: PathBuf,
        ceiling: ManifestCeiling,
        session: SessionContext,
        sandbox: SandboxPolicy,
    ) -> WasmStart {
        WasmStart {
            component_path,
            ceiling,
            session,
            ui_host: UiHost::Headless,
            sandbox,
            limits: InstanceLimits::default(),
            cache: None,
            ui: None,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            engine: None,
        }
    }
}

/// What a stream receiver is told, in order: chunks, then exactly one end
/// (or an interruption when the instance went away first).
#[derive(Debug, Clone)]
pub enum WasmStreamEvent {
    Chunk(Box<wire::StreamChunkParams>),
    End(wire::StreamEndParams),
    /// A chunk the guest emitted that breaks the contract.
    Invalid(String),
    /// The instance trapped or shut down before the stream ended.
    Interrupted(WasmError),
}

/// Where one stream's events go. `deliver` returns `false` once the
/// receiver is gone or cannot take more, which ends the stream.
pub trait StreamSink: Send {
    fn deliver(&mut self, event: WasmStreamEvent) -> bool;
}

impl StreamSink for std::sync::mpsc::Sender<WasmStreamEvent> {
    fn deliver(&mut self, event: WasmStreamEvent) -> bool {
        self.send(event).is_ok()
    }
}

/// Facts about a started runtime, for diagnostics and `plugin show`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WasmFacts {
    /// The WIT package version the component is built against.
    pub package_version: PackageVersion,
    /// What `lifecycle.protocol-version` returned.
    pub reported_version: String,
    pub cache: CacheOutcome,
    pub memory_mib: u32,
}

/// A started, handshaken component.
pub struct WasmRuntime {
    plugin_id: String,
    recipe: InstanceRecipe,
    initialize: InitializeParams,
    declaration: InitializeResult,
    facts: WasmFacts,
    /// The instance and what lives with it, held for the whole of a call.
    state: tokio::sync::Mutex<State>,
    /// Lifecycle facts readable while a call holds `state`.
    status: Mutex<Status>,
}

struct State {
    instance: Option<Instance>,
    /// Per-runtime intercept counter (spec §5: starts at 1).
    seq: u64,
    streams: HashMap<String, Box<dyn StreamSink>>,
}

#[derive(Default)]
struct Status {
    shut_down: bool,
    /// Why the last rebuild failed; later calls fail fast with it.
    broken: Option<WasmError>,
    rebuilds: u64,
}

impl std::fmt::Debug for WasmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmRuntime")
            .field("plugin_id", &self.plugin_id)
            .field("facts", &self.facts)
            .finish_non_exhaustive()
    }
}

/// Run `future` to completion from synchronous code (tools, tests), on the
/// current tokio runtime's handle or a private one. Never from a task.
fn block_on<F: Future>(future: F) -> F::Output {
    wasmtime_wasi::runtime::in_tokio(future)
}

/// The component read, compiled (or loaded from the cache) and linked:
/// the blocking part of a start.
struct Loaded {
    pre: ComponentPre,
    package_version: PackageVersion,
    cache: CacheOutcome,
}

fn load(start: &WasmStart, engine: &'static WasmEngine) -> Result<Loaded, WasmError> {
    let bytes = std::fs::read(&start.component_path).map_err(|e| {
        WasmError::load(format!(
            "cannot read the component {}: {e}",
            start.component_path.display()
        ))
    })?;
    let (component, cache) = load_component(engine, &bytes, start.cache.as_ref())?;
    let package_version = detect_version(engine.engine(), &component)?;
    let adapter = Adapter::for_version(package_version)?;
    let pre = ComponentPre::new(adapter, engine.linker(), &component)?;
    Ok(Loaded {
        pre,
        package_version,
        cache,
    })
}

impl WasmRuntime {
    /// Load, compile (or load from the cache), check the version,
    /// instantiate in the sandbox and handshake. Compiling runs on a
    /// blocking thread; the handshake on the caller's task.
    pub async fn start_async(start: WasmStart) -> Result<WasmRuntime, WasmError> {
        let began = Instant::now();
        let engine = match start.engine {
            Some(engine) => engine,
            None => WasmEngine::shared()?,
        };
        let (loaded, start) = tokio::task::spawn_blocking(move || {
            let loaded = load(&start, engine);
            (loaded, start)
        })
        .await
        .map_err(|e| WasmError::load(format!("the component load did not complete: {e}")))?;
        let loaded = loaded?;
        let plugin_id = start.ceiling.plugin_id.clone();
        let recipe = InstanceRecipe {
            engine,
            pre: loaded.pre,
            policy: start.sandbox,
            limits: start.limits,
            log: GuestLog::new(&plugin_id),
            plugin_id: plugin_id.as_str().into(),
            ui: start.ui,
        };
        let initialize = initialize_params(&start.ceiling, &start.session, start.ui_host);
        let mut instance = Instance::new(&recipe).await?;
        let budget = start.handshake_timeout.saturating_sub(began.elapsed());
        let (reported_version, declaration) = handshake(
            &mut instance,
            &initialize,
            &start.ceiling,
            loaded.package_version,
            budget,
        )
        .await?;
        Ok(WasmRuntime {
            plugin_id,
            facts: WasmFacts {
                package_version: loaded.package_version,
                reported_version,
                cache: loaded.cache,
                memory_mib: start.limits.memory_mib,
            },
            recipe,
            initialize,
            declaration,
            state: tokio::sync::Mutex::new(State {
                instance: Some(instance),
                seq: 0,
                streams: HashMap::new(),
            }),
            status: Mutex::new(Status::default()),
        })
    }

    /// [`WasmRuntime::start_async`], blocking.
    pub fn start(start: WasmStart) -> Result<WasmRuntime, WasmError> {
        block_on(Self::start_async(start))
    }

    pub fn plugin_id(&self) -> &str {
        &self.plugin_id
    }

    /// The accepted declaration (within the manifest ceiling).
    pub fn declaration(&self) -> &InitializeResult {
        &self.declaration
    }

    pub fn facts(&self) -> &WasmFacts {
        &self.facts
    }

    /// The kept tail of the guest's output (stdout, stderr, `log`).
    pub fn log_tail(&self) -> Vec<String> {
        self.recipe.log.tail()
    }

    /// Build (and drop) one more instance of the prepared component in the
    /// same sandbox: what replacing a trapped instance costs before its
    /// handshake.
    pub fn instantiate_spare(&self) -> Result<(), WasmError> {
        block_on(Instance::new(&self.recipe)).map(drop)
    }

    /// How many times a trapped instance was replaced.
    pub fn rebuilds(&self) -> u64 {
        self.status().rebuilds
    }

    /// Whether `shutdown` ran.
    pub fn is_shut_down(&self) -> bool {
        self.status().shut_down
    }

    /// `None` while serving; the reason once shut down or unrecoverable.
    pub fn unavailable(&self) -> Option<WasmError> {
        let status = self.status();
        if status.shut_down {
            return Some(shut_down_error());
        }
        status.broken.clone()
    }

    /// `lifecycle.protocol-version` on the live instance: entering the
    /// component and back with no extension logic, the floor of a call.
    pub async fn empty_call(&self) -> Result<(), WasmError> {
        let mut call = self.enter(EVENT_TIMEOUT).await?;
        let outcome = guest_call!(
            call.instance(),
            CallKind::Observe,
            call.budget,
            |b, store| b.protocol_version(store)
        );
        call.finish(CallKind::Observe, outcome).map(drop)
    }

    /// The linear memory the live instance holds, in bytes (`None` while no
    /// instance is live).
    pub async fn memory_bytes(&self) -> Option<u64> {
        let mut state = self.state.lock().await;
        let instance = state.instance.as_mut()?;
        Some(instance.state().limiter.memory_used() as u64)
    }

    /// `extension/intercept`.
    pub async fn intercept_async(
        &self,
        point: HookPoint,
        payload: &RawValue,
        budget: Duration,
    ) -> Result<wire::InterceptResult, WasmError> {
        let mut call = self.enter(budget).await?;
        call.state.seq += 1;
        let seq = call.state.seq;
        let millis = millis(call.budget);
        let outcome = guest_call!(
            call.instance(),
            CallKind::Intercept,
            call.budget,
            |b, store| b.intercept(store, point, seq, payload, millis)
        );
        call.finish(CallKind::Intercept, outcome)
    }

    /// [`WasmRuntime::intercept_async`], blocking.
    pub fn intercept(
        &self,
        point: HookPoint,
        payload: &RawValue,
        budget: Duration,
    ) -> Result<wire::InterceptResult, WasmError> {
        block_on(self.intercept_async(point, payload, budget))
    }

    /// `extension/event` (the caller decides whether to wait).
    pub async fn observe_async(
        &self,
        point: HookPoint,
        payload: &RawValue,
    ) -> Result<(), WasmError> {
        let mut call = self.enter(EVENT_TIMEOUT).await?;
        let outcome = guest_call!(
            call.instance(),
            CallKind::Observe,
            call.budget,
            |b, store| b.event(store, point, payload)
        );
        call.finish(CallKind::Observe, outcome)
    }

    /// [`WasmRuntime::observe_async`], blocking.
    pub fn observe(&self, point: HookPoint, payload: &RawValue) -> Result<(), WasmError> {
        block_on(self.observe_async(point, payload))
    }

    /// `extension/resources/changed`.
    pub async fn resources_changed_async(&self, paths: &[String]) -> Result<(), WasmError> {
        let mut call = self.enter(EVENT_TIMEOUT).await?;
        let outcome = guest_call!(
            call.instance(),
            CallKind::Observe,
            call.budget,
            |b, store| b.resources_changed(store, paths)
        );
        call.finish(CallKind::Observe, outcome)
    }

    /// [`WasmRuntime::resources_changed_async`], blocking.
    pub fn resources_changed(&self, paths: &[String]) -> Result<(), WasmError> {
        block_on(self.resources_changed_async(paths))
    }

    /// `extension/tool/call` for a declared tool; any other name is
    /// `unknown_method` without entering the guest.
    pub async fn tool_call_async(
        &self,
        name: &str,
        arguments: &RawValue,
        budget: Duration,
    ) -> Result<wire::ToolCallResult, WasmError> {
        if !self.declaration.tools.iter().any(|t| t == name) {
            return Err(WasmError::rejected(
                ErrorReason::UnknownMethod,
                Some(format!("tool {name:?} is not served by this extension")),
            ));
        }
        let mut call = self.enter(budget).await?;
        let millis = millis(call.budget);
        let outcome = guest_call!(call.instance(), CallKind::Tool, call.budget, |b, store| b
            .tool_call(store, name, arguments, millis));
        call.finish(CallKind::Tool, outcome)
    }

    /// [`WasmRuntime::tool_call_async`], blocking.
    pub fn tool_call(
        &self,
        name: &str,
        arguments: &RawValue,
        budget: Duration,
    ) -> Result<wire::ToolCallResult, WasmError> {
        block_on(self.tool_call_async(name, arguments, budget))
    }

    /// `extension/provider/catalog`.
    pub async fn provider_catalog_async(&self) -> Result<Vec<wire::ProviderDescriptor>, WasmError> {
        let mut call = self.enter(PROVIDER_CALL_TIMEOUT).await?;
        let outcome = guest_call!(
            call.instance(),
            CallKind::Provider,
            call.budget,
            |b, store| b.provider_catalog(store)
        );
        call.finish(CallKind::Provider, outcome)
    }

    /// [`WasmRuntime::provider_catalog_async`], blocking.
    pub fn provider_catalog(&self) -> Result<Vec<wire::ProviderDescriptor>, WasmError> {
        block_on(self.provider_catalog_async())
    }

    /// `extension/provider/stream/open`: on acceptance the sink receives
    /// what the guest emitted during the call (after the ack, as on the
    /// wire) and whatever it emits later.
    pub async fn provider_stream_async(
        &self,
        open: &wire::StreamOpenParams,
        sink: Box<dyn StreamSink>,
    ) -> Result<(), WasmError> {
        let stream_id = open.stream_id.clone();
        let mut call = self.enter(PROVIDER_CALL_TIMEOUT).await?;
        if call.state.streams.contains_key(&stream_id) {
            let refused = WasmError::protocol(format!("stream {stream_id} is already open"));
            return call.finish(CallKind::Provider, Err(refused));
        }
        call.state.streams.insert(stream_id.clone(), sink);
        let outcome = guest_call!(
            call.instance(),
            CallKind::Provider,
            call.budget,
            |b, store| b.stream_open(store, open)
        );
        // The ack comes first: a refused or failed open drops what the
        // guest emitted for the stream.
        if !matches!(outcome, Ok(true)) {
            call.state.streams.remove(&stream_id);
        }
        match call.finish(CallKind::Provider, outcome) {
            Ok(true) => Ok(()),
            Ok(false) => Err(WasmError::rejected(
                ErrorReason::ProviderFailed,
                Some("the provider refused the stream".into()),
            )),
            Err(e) => Err(e),
        }
    }

    /// [`WasmRuntime::provider_stream_async`], blocking.
    pub fn provider_stream(
        &self,
        open: &wire::StreamOpenParams,
        sink: Box<dyn StreamSink>,
    ) -> Result<(), WasmError> {
        block_on(self.provider_stream_async(open, sink))
    }

    /// `extension/provider/stream/cancel`: `Ok(cancelled)`. Nothing is
    /// delivered for the stream afterwards.
    pub async fn provider_cancel_async(
        &self,
        stream_id: &str,
        budget: Duration,
    ) -> Result<bool, WasmError> {
        let mut call = match self.enter(budget).await {
            Ok(call) => call,
            Err(e) => {
                self.state.lock().await.streams.remove(stream_id);
                return Err(e);
            }
        };
        let outcome = guest_call!(
            call.instance(),
            CallKind::Provider,
            call.budget,
            |b, store| b.stream_cancel(store, stream_id)
        );
        let result = call.finish(CallKind::Provider, outcome);
        self.state.lock().await.streams.remove(stream_id);
        result
    }

    /// [`WasmRuntime::provider_cancel_async`], blocking.
    pub fn provider_cancel(&self, stream_id: &str, budget: Duration) -> Result<bool, WasmError> {
        block_on(self.provider_cancel_async(stream_id, budget))
    }

    /// `extension/ui/action`: `(accepted, message)`.
    pub async fn ui_action_async(
        &self,
        action_id: &str,
        session_id: &str,
        generation: u64,
        args: &BTreeMap<String, String>,
    ) -> Result<(bool, Option<String>), WasmError> {
        let mut call = self.enter(UI_CALL_TIMEOUT).await?;
        let outcome = guest_call!(call.instance(), CallKind::Ui, call.budget, |b, store| b
            .ui_action(store, action_id, session_id, generation, args));
        call.finish(CallKind::Ui, outcome)
    }

    /// [`WasmRuntime::ui_action_async`], blocking.
    pub fn ui_action(
        &self,
        action_id: &str,
        session_id: &str,
        generation: u64,
        args: &BTreeMap<String, String>,
    ) -> Result<(bool, Option<String>), WasmError> {
        block_on(self.ui_action_async(action_id, session_id, generation, args))
    }

    /// `extension/ui/submit`: accepted.
    pub async fn ui_submit_async(
        &self,
        surface_id: &str,
        session_id: &str,
        generation: u64,
        values: &BTreeMap<String, serde_json::Value>,
    ) -> Result<bool, WasmError> {
        let mut call = self.enter(UI_CALL_TIMEOUT).await?;
        let outcome = guest_call!(call.instance(), CallKind::Ui, call.budget, |b, store| b
            .ui_submit(store, surface_id, session_id, generation, values));
        call.finish(CallKind::Ui, outcome)
    }

    /// [`WasmRuntime::ui_submit_async`], blocking.
    pub fn ui_submit(
        &self,
        surface_id: &str,
        session_id: &str,
        generation: u64,
        values: &BTreeMap<String, serde_json::Value>,
    ) -> Result<bool, WasmError> {
        block_on(self.ui_submit_async(surface_id, session_id, generation, values))
    }

    /// `extension/shutdown`, then the instance is dropped. Idempotent:
    /// `None` when there was no live instance to ask. Later calls fail at
    /// once; a call in progress finishes first.
    pub async fn shutdown_async(&self, budget: Duration) -> Option<Result<bool, WasmError>> {
        {
            let mut status = self.status();
            if status.shut_down {
                return None;
            }
            status.shut_down = true;
        }
        let mut state = self.state.lock().await;
        let answer = match state.instance.take() {
            Some(mut instance) => Some(guest_call!(
                &mut instance,
                CallKind::Shutdown,
                budget,
                |b, store| b.shutdown(store, millis(budget))
            )),
            None => None,
        };
        interrupt_streams(&mut state, &shut_down_error());
        answer
    }

    /// [`WasmRuntime::shutdown_async`], blocking.
    pub fn shutdown(&self, budget: Duration) -> Option<Result<bool, WasmError>> {
        block_on(self.shutdown_async(budget))
    }

    fn status(&self) -> MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take the live instance for one call (rebuilding it first if a trap
    /// dropped it). Time spent waiting for the instance counts against the
    /// budget.
    async fn enter(&self, budget: Duration) -> Result<Call<'_>, WasmError> {
        let entered = Instant::now();
        let mut state = self.state.lock().await;
        let budget = budget.saturating_sub(entered.elapsed());
        {
            let status = self.status();
            if status.shut_down {
                return Err(shut_down_error());
            }
            if let Some(broken) = &status.broken {
                return Err(broken.clone());
            }
        }
        let instance = match state.instance.take() {
            Some(instance) => instance,
            None => match self.rebuild().await {
                Ok(instance) => {
                    self.status().rebuilds += 1;
                    instance
                }
                Err(e) => {
                    let e = WasmError::new(
                        e.kind,
                        e.reason,
                        format!("the instance could not be rebuilt: {}", e.message),
                    );
                    self.status().broken = Some(e.clone());
                    return Err(e);
                }
            },
        };
        Ok(Call {
            runtime: self,
            state,
            instance: Some(instance),
            budget,
        })
    }

    async fn rebuild(&self) -> Result<Instance, WasmError> {
        let mut instance = Instance::new(&self.recipe).await?;
        let (_, declaration) = handshake(
            &mut instance,
            &self.initialize,
            &ceiling_of(&self.initialize, &self.plugin_id),
            self.facts.package_version,
            HANDSHAKE_TIMEOUT,
        )
        .await?;
        if Declaration::from(&declaration) != Declaration::from(&self.declaration) {
            return Err(WasmError::handshake(
                ErrorReason::ProtocolError,
                "the rebuilt instance declared other capabilities than the accepted ones",
            ));
        }
        Ok(instance)
    }
}

/// One call holding the instance. [`Call::finish`] delivers what the guest
/// emitted and puts the instance back unless the call poisoned it; a call
/// dropped before that (its future cancelled mid-call) drops the instance,
/// which the next call rebuilds, and interrupts its streams.
struct Call<'a> {
    runtime: &'a WasmRuntime,
    state: tokio::sync::MutexGuard<'a, State>,
    instance: Option<Instance>,
    budget: Duration,
}

impl Call<'_> {
    fn instance(&mut self) -> &mut Instance {
        self.instance
            .as_mut()
            .expect("the instance is held until the call finishes")
    }

    fn finish<T>(mut self, kind: CallKind, outcome: Result<T, WasmError>) -> Result<T, WasmError> {
        let Some(mut instance) = self.instance.take() else {
            return outcome;
        };
        let emitted = std::mem::take(&mut instance.state().emitted);
        deliver(&mut self.state, emitted);
        match &outcome {
            Err(why) if why.kind.poisons_instance() => {
                tracing::warn!(target: "reasonix::wasm", plugin = %self.runtime.plugin_id, call = kind.name(), "instance dropped after: {why}");
                interrupt_streams(&mut self.state, why);
            }
            _ => self.state.instance = Some(instance),
        }
        outcome
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if self.instance.take().is_some() {
            let why = WasmError::new(
                WasmErrorKind::Trap,
                ErrorReason::ProviderInterrupted,
                "the call was cancelled before the component answered",
            );
            tracing::warn!(target: "reasonix::wasm", plugin = %self.runtime.plugin_id, "instance dropped: {}", why.message);
            interrupt_streams(&mut self.state, &why);
        }
    }
}

/// The ceiling again, from the expectation sent at start (the rebuild
/// re-checks the declaration exactly as the first handshake did).
fn ceiling_of(params: &InitializeParams, plugin_id: &str) -> ManifestCeiling {
    let m = &params.manifest;
    ManifestCeiling {
        plugin_id: plugin_id.to_owned(),
        intercepts: m.intercepts.clone(),
        replaces: m.replaces.clone(),
        capabilities: m.capabilities.clone(),
        tools: m.tools.clone(),
        providers: m.providers.clone(),
        ui_actions: m.ui_actions.clone(),
        requires: m.requires.clone(),
        provides: m.provides.clone(),
    }
}

/// `protocol-version`, `initialize`, the §4.3 checks, then `initialized`.
async fn handshake(
    instance: &mut Instance,
    params: &InitializeParams,
    ceiling: &ManifestCeiling,
    package_version: PackageVersion,
    budget: Duration,
) -> Result<(String, InitializeResult), WasmError> {
    let began = Instant::now();
    let reported = guest_call!(instance, CallKind::Initialize, budget, |b, store| b
        .protocol_version(store))
    .map_err(as_handshake)?;
    match PackageVersion::parse(reported.trim()) {
        Some(v) if v.major != package_version.major => {
            return Err(WasmError::unsupported_version(format!(
                "lifecycle.protocol-version returned {reported:?}; this host speaks major {}",
                package_version.major
            )));
        }
        Some(v) if v == package_version => {}
        _ => {
            return Err(WasmError::handshake(
                ErrorReason::ProtocolError,
                format!(
                    "lifecycle.protocol-version returned {reported:?} but the component is built against {package_version}"
                ),
            ));
        }
    }
    let remaining = budget.saturating_sub(began.elapsed());
    let result = guest_call!(instance, CallKind::Initialize, remaining, |b, store| b
        .initialize(store, params))
    .map_err(as_handshake)?;
    if let Some(import) = instance.state().barrier_violation {
        return Err(WasmError::handshake(
            ErrorReason::ProtocolError,
            format!("{import} was called before extension/initialized"),
        ));
    }
    check_protocol_version(&result.protocol_version)
        .map_err(|e| WasmError::handshake(e.reason(), e.to_string()))?;
    check_declaration(ceiling, &Declaration::from(&result))
        .map_err(|e| WasmError::handshake(e.reason(), e.to_string()))?;
    instance.state().ready = true;
    let remaining = budget.saturating_sub(began.elapsed());
    guest_call!(instance, CallKind::Initialize, remaining, |b, store| b
        .initialized(store))
    .map_err(as_handshake)?;
    Ok((reported, result))
}

/// A failure during the handshake keeps its reason (a timeout stays a
/// timeout) but is reported as a handshake failure.
fn as_handshake(e: WasmError) -> WasmError {
    match e.kind {
        WasmErrorKind::Rejected | WasmErrorKind::Protocol => {
            WasmError::handshake(e.reason, format!("initialize failed: {}", e.message))
        }
        _ => WasmError::new(e.kind, e.reason, format!("handshake failed: {}", e.message)),
    }
}

fn shut_down_error() -> WasmError {
    WasmError::new(
        WasmErrorKind::Trap,
        ErrorReason::ProviderInterrupted,
        "the component was shut down",
    )
}

fn millis(budget: Duration) -> u64 {
    u64::try_from(budget.as_millis()).unwrap_or(u64::MAX)
}

/// Hand what the guest emitted to the open streams; an end closes its
/// stream, notifications for unknown streams are dropped.
fn deliver(state: &mut State, emitted: Vec<Emission>) {
    for emission in emitted {
        let (stream_id, event, last) = match emission {
            Emission::Chunk(chunk) => (
                chunk.stream_id.clone(),
                WasmStreamEvent::Chunk(chunk),
                false,
            ),
            Emission::End(end) => (end.stream_id.clone(), WasmStreamEvent::End(end), true),
            Emission::Invalid { stream_id, why } => {
                (stream_id, WasmStreamEvent::Invalid(why), false)
            }
        };
        let Some(sink) = state.streams.get_mut(&stream_id) else {
            tracing::debug!(target: "reasonix::wasm", stream = %stream_id, "dropped a notification for a stream that is not open");
            continue;
        };
        if !sink.deliver(event) || last {
            state.streams.remove(&stream_id);
        }
    }
}

fn interrupt_streams(state: &mut State, why: &WasmError) {
    for (_, mut sink) in state.streams.drain() {
        sink.deliver(WasmStreamEvent::Interrupted(why.clone()));
    }
}
