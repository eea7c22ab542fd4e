//! [`WasmRuntime`]: one plugin's component, handshaken and serving the
//! extension contract through synchronous calls.
//!
//! Calls are serialised (a component instance is single-threaded) and
//! blocking; the async adapter runs them on blocking threads. Each call has
//! a budget enforced by the epoch deadline. A call that traps (timeout,
//! memory limit, stack overflow, any other trap) fails on its own and drops
//! the instance; the next call builds a fresh one and repeats the handshake,
//! whose declaration must equal the accepted one.

use std::collections::{BTreeMap, HashMap};
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
use super::instance::{Emission, Instance, InstanceRecipe, UiBridge};
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
    state: Mutex<State>,
}

struct State {
    instance: Option<Instance>,
    /// Per-runtime intercept counter (spec §5: starts at 1).
    seq: u64,
    streams: HashMap<String, Box<dyn StreamSink>>,
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

impl WasmRuntime {
    /// Load, compile (or load from the cache), check the version,
    /// instantiate in the sandbox and handshake.
    pub fn start(start: WasmStart) -> Result<WasmRuntime, WasmError> {
        let began = Instant::now();
        let engine = match start.engine {
            Some(engine) => engine,
            None => WasmEngine::shared()?,
        };
        let plugin_id = start.ceiling.plugin_id.clone();
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
        let recipe = InstanceRecipe {
            engine,
            pre,
            policy: start.sandbox,
            limits: start.limits,
            log: GuestLog::new(&plugin_id),
            plugin_id: plugin_id.as_str().into(),
            ui: start.ui,
        };
        let initialize = initialize_params(&start.ceiling, &start.session, start.ui_host);
        let mut instance = Instance::new(&recipe)?;
        let budget = start.handshake_timeout.saturating_sub(began.elapsed());
        let (reported_version, declaration) = handshake(
            &mut instance,
            &initialize,
            &start.ceiling,
            package_version,
            budget,
        )?;
        Ok(WasmRuntime {
            plugin_id,
            facts: WasmFacts {
                package_version,
                reported_version,
                cache,
                memory_mib: start.limits.memory_mib,
            },
            recipe,
            initialize,
            declaration,
            state: Mutex::new(State {
                instance: Some(instance),
                seq: 0,
                streams: HashMap::new(),
                shut_down: false,
                broken: None,
                rebuilds: 0,
            }),
        })
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
        Instance::new(&self.recipe).map(drop)
    }

    /// How many times a trapped instance was replaced.
    pub fn rebuilds(&self) -> u64 {
        self.lock().rebuilds
    }

    /// Whether `shutdown` ran.
    pub fn is_shut_down(&self) -> bool {
        self.lock().shut_down
    }

    /// `None` while serving; the reason once shut down or unrecoverable.
    pub fn unavailable(&self) -> Option<WasmError> {
        let state = self.lock();
        if state.shut_down {
            return Some(shut_down_error());
        }
        state.broken.clone()
    }

    /// `extension/intercept`.
    pub fn intercept(
        &self,
        point: HookPoint,
        payload: &RawValue,
        budget: Duration,
    ) -> Result<wire::InterceptResult, WasmError> {
        self.with_instance(CallKind::Intercept, budget, |state, instance, budget| {
            state.seq += 1;
            let seq = state.seq;
            let millis = millis(budget);
            instance.call(CallKind::Intercept, budget, |b, store| {
                b.intercept(store, point, seq, payload, millis)
            })
        })
    }

    /// `extension/event` (the caller decides whether to wait).
    pub fn observe(&self, point: HookPoint, payload: &RawValue) -> Result<(), WasmError> {
        self.with_instance(CallKind::Observe, EVENT_TIMEOUT, |_, instance, budget| {
            instance.call(CallKind::Observe, budget, |b, store| {
                b.event(store, point, payload)
            })
        })
    }

    /// `extension/resources/changed`.
    pub fn resources_changed(&self, paths: &[String]) -> Result<(), WasmError> {
        self.with_instance(CallKind::Observe, EVENT_TIMEOUT, |_, instance, budget| {
            instance.call(CallKind::Observe, budget, |b, store| {
                b.resources_changed(store, paths)
            })
        })
    }

    /// `extension/tool/call` for a declared tool; any other name is
    /// `unknown_method` without entering the guest.
    pub fn tool_call(
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
        self.with_instance(CallKind::Tool, budget, |_, instance, budget| {
            let millis = millis(budget);
            instance.call(CallKind::Tool, budget, |b, store| {
                b.tool_call(store, name, arguments, millis)
            })
        })
    }

    /// `extension/provider/catalog`.
    pub fn provider_catalog(&self) -> Result<Vec<wire::ProviderDescriptor>, WasmError> {
        self.with_instance(
            CallKind::Provider,
            PROVIDER_CALL_TIMEOUT,
            |_, instance, budget| {
                instance.call(CallKind::Provider, budget, |b, store| {
                    b.provider_catalog(store)
                })
            },
        )
    }

    /// `extension/provider/stream/open`: on acceptance the sink receives
    /// what the guest emitted during the call (after the ack, as on the
    /// wire) and whatever it emits later.
    pub fn provider_stream(
        &self,
        open: &wire::StreamOpenParams,
        sink: Box<dyn StreamSink>,
    ) -> Result<(), WasmError> {
        let stream_id = open.stream_id.clone();
        {
            let mut state = self.lock();
            if state.streams.contains_key(&stream_id) {
                return Err(WasmError::protocol(format!(
                    "stream {stream_id} is already open"
                )));
            }
            state.streams.insert(stream_id.clone(), sink);
        }
        let accepted = self.with_instance_held(
            CallKind::Provider,
            PROVIDER_CALL_TIMEOUT,
            |_, instance, budget| {
                instance.call(CallKind::Provider, budget, |b, store| {
                    b.stream_open(store, open)
                })
            },
            |state, outcome| {
                // The ack comes first: a refused or failed open drops what
                // the guest emitted for the stream.
                if !matches!(outcome, Ok(true)) {
                    state.streams.remove(&stream_id);
                }
            },
        );
        match accepted {
            Ok(true) => Ok(()),
            Ok(false) => Err(WasmError::rejected(
                ErrorReason::ProviderFailed,
                Some("the provider refused the stream".into()),
            )),
            Err(e) => Err(e),
        }
    }

    /// `extension/provider/stream/cancel`: `Ok(cancelled)`. Nothing is
    /// delivered for the stream afterwards.
    pub fn provider_cancel(&self, stream_id: &str, budget: Duration) -> Result<bool, WasmError> {
        let result = self.with_instance(CallKind::Provider, budget, |_, instance, budget| {
            instance.call(CallKind::Provider, budget, |b, store| {
                b.stream_cancel(store, stream_id)
            })
        });
        self.lock().streams.remove(stream_id);
        result
    }

    /// `extension/ui/action`: `(accepted, message)`.
    pub fn ui_action(
        &self,
        action_id: &str,
        session_id: &str,
        generation: u64,
        args: &BTreeMap<String, String>,
    ) -> Result<(bool, Option<String>), WasmError> {
        self.with_instance(CallKind::Ui, UI_CALL_TIMEOUT, |_, instance, budget| {
            instance.call(CallKind::Ui, budget, |b, store| {
                b.ui_action(store, action_id, session_id, generation, args)
            })
        })
    }

    /// `extension/ui/submit`: accepted.
    pub fn ui_submit(
        &self,
        surface_id: &str,
        session_id: &str,
        generation: u64,
        values: &BTreeMap<String, serde_json::Value>,
    ) -> Result<bool, WasmError> {
        self.with_instance(CallKind::Ui, UI_CALL_TIMEOUT, |_, instance, budget| {
            instance.call(CallKind::Ui, budget, |b, store| {
                b.ui_submit(store, surface_id, session_id, generation, values)
            })
        })
    }

    /// `extension/shutdown`, then the instance is dropped. Idempotent:
    /// `None` when there was no live instance to ask.
    pub fn shutdown(&self, budget: Duration) -> Option<Result<bool, WasmError>> {
        let mut state = self.lock();
        if state.shut_down {
            return None;
        }
        state.shut_down = true;
        let answer = state.instance.take().map(|mut instance| {
            instance.call(CallKind::Shutdown, budget, |b, store| {
                b.shutdown(store, millis(budget))
            })
        });
        interrupt_streams(&mut state, &shut_down_error());
        answer
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn with_instance<T>(
        &self,
        kind: CallKind,
        budget: Duration,
        call: impl FnOnce(&mut State, &mut Instance, Duration) -> Result<T, WasmError>,
    ) -> Result<T, WasmError> {
        self.with_instance_held(kind, budget, call, |_, _| {})
    }

    /// Run `call` on the live instance (rebuilding it first if a trap
    /// dropped it), then `after` under the same lock, then deliver the
    /// stream notifications the guest emitted.
    fn with_instance_held<T>(
        &self,
        kind: CallKind,
        budget: Duration,
        call: impl FnOnce(&mut State, &mut Instance, Duration) -> Result<T, WasmError>,
        after: impl FnOnce(&mut State, &Result<T, WasmError>),
    ) -> Result<T, WasmError> {
        let entered = Instant::now();
        let mut state = self.lock();
        // Time spent waiting for the instance counts against the budget.
        let budget = budget.saturating_sub(entered.elapsed());
        if state.shut_down {
            return Err(shut_down_error());
        }
        if let Some(broken) = &state.broken {
            return Err(broken.clone());
        }
        let mut instance = match state.instance.take() {
            Some(instance) => instance,
            None => match self.rebuild() {
                Ok(instance) => {
                    state.rebuilds += 1;
                    instance
                }
                Err(e) => {
                    let e = WasmError::new(
                        e.kind,
                        e.reason,
                        format!("the instance could not be rebuilt: {}", e.message),
                    );
                    state.broken = Some(e.clone());
                    return Err(e);
                }
            },
        };
        let outcome = call(&mut state, &mut instance, budget);
        let emitted = std::mem::take(&mut instance.state().emitted);
        let poisoned = outcome.as_ref().is_err_and(|e| e.kind.poisons_instance());
        after(&mut state, &outcome);
        deliver(&mut state, emitted);
        if poisoned {
            let why = outcome
                .as_ref()
                .err()
                .cloned()
                .unwrap_or_else(shut_down_error);
            tracing::warn!(target: "reasonix::wasm", plugin = %self.plugin_id, call = kind.name(), "instance dropped after: {why}");
            interrupt_streams(&mut state, &why);
        } else {
            state.instance = Some(instance);
        }
        outcome
    }

    fn rebuild(&self) -> Result<Instance, WasmError> {
        let mut instance = Instance::new(&self.recipe)?;
        let (_, declaration) = handshake(
            &mut instance,
            &self.initialize,
            &ceiling_of(&self.initialize, &self.plugin_id),
            self.facts.package_version,
            HANDSHAKE_TIMEOUT,
        )?;
        if Declaration::from(&declaration) != Declaration::from(&self.declaration) {
            return Err(WasmError::handshake(
                ErrorReason::ProtocolError,
                "the rebuilt instance declared other capabilities than the accepted ones",
            ));
        }
        Ok(instance)
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
fn handshake(
    instance: &mut Instance,
    params: &InitializeParams,
    ceiling: &ManifestCeiling,
    package_version: PackageVersion,
    budget: Duration,
) -> Result<(String, InitializeResult), WasmError> {
    let began = Instant::now();
    let reported = instance
        .call(CallKind::Initialize, budget, |b, store| {
            b.protocol_version(store)
        })
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
    let result = instance
        .call(CallKind::Initialize, remaining, |b, store| {
            b.initialize(store, params)
        })
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
    instance
        .call(CallKind::Initialize, remaining, |b, store| {
            b.initialized(store)
        })
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
