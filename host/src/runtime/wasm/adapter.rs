//! The wasm runtime behind the dispatcher's seam: [`ExtensionRuntime`] over
//! [`WasmRuntime`], labelled [`TrustLabel::Sandboxed`].
//!
//! Component calls run on the caller's task (`call_async` on a fiber, as
//! Spin runs a request's component; the guest yields at every epoch tick,
//! as in Zed's extension host), so a call costs no thread wake-up.
//! Observations go through one bounded queue served in order by a task of
//! the extension and never block the caller.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reasonix_protocol::ErrorReason;
use reasonix_protocol::points::{HookPoint, Slot};
use reasonix_protocol::types::{
    Decision as WireDecision, ProviderDescriptor, SessionContext, StreamOpenParams,
    UIPublishParams, UIPublishResult, UIRequestParams, UIRequestResult, UiHost,
};
use reasonix_sidecar::ManifestCeiling;
use serde_json::value::RawValue;
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::Instant;

use super::super::generation::{RuntimeStarter, StartContext};
use super::super::provider::reassembly::StreamEnd;
use super::super::redaction::clean_text;
use super::super::ui::{UiCall, UiHub, UiRejectReason};
use super::super::{
    BoxFuture, Decision, ExtensionRuntime, Health, InterceptReply, RuntimeDeclaration,
    RuntimeError, RuntimeErrorKind, StreamMessage, StreamOpen, StreamReceiver, ToolReply,
    TrustLabel, UiActionDeclaration,
};
use super::cache::ComponentCache;
use super::error::{WasmError, WasmErrorKind};
use super::instance::UiBridge;
use super::limits::InstanceLimits;
use super::runtime::{StreamSink, WasmRuntime, WasmStart, WasmStreamEvent};
use super::sandbox::SandboxPolicy;

/// Observations waiting for the guest; past this an event is dropped
/// (`Backpressure`), as a sidecar's full notification queue does.
pub const EVENT_QUEUE: usize = 256;
/// Depth of a stream's delivery queue (spec §9).
const STREAM_QUEUE: usize = 256;
/// Budget of `extension/shutdown`.
const SHUTDOWN_BUDGET: Duration = Duration::from_secs(5);

fn runtime_error(error: WasmError) -> RuntimeError {
    let kind = match error.kind {
        WasmErrorKind::Timeout => RuntimeErrorKind::Timeout,
        WasmErrorKind::MemoryLimit | WasmErrorKind::StackOverflow | WasmErrorKind::Trap => {
            RuntimeErrorKind::Crashed
        }
        WasmErrorKind::Rejected => RuntimeErrorKind::Rejected,
        WasmErrorKind::Setup
        | WasmErrorKind::Load
        | WasmErrorKind::UnsupportedVersion
        | WasmErrorKind::Handshake
        | WasmErrorKind::Protocol => RuntimeErrorKind::Protocol,
    };
    RuntimeError::new(kind, Some(error.reason.as_str()), error.message)
}

/// A started component, as the dispatcher sees it.
pub struct WasmExtension {
    runtime: Arc<WasmRuntime>,
    declaration: RuntimeDeclaration,
    events: tokio::sync::mpsc::Sender<(HookPoint, Box<RawValue>)>,
}

impl WasmExtension {
    /// Wraps a started runtime. Must be called inside a tokio runtime: the
    /// observation queue is served by a task of it.
    pub fn new(runtime: WasmRuntime) -> WasmExtension {
        let accepted = runtime.declaration();
        let declaration = RuntimeDeclaration {
            subscriptions: accepted
                .subscriptions
                .iter()
                .filter_map(|s| HookPoint::from_name(s))
                .collect(),
            replaces: accepted
                .replaces
                .iter()
                .filter_map(|s| Slot::parse(s).ok())
                .collect(),
            providers: accepted
                .providers
                .iter()
                .map(|p| p.reference.clone())
                .collect(),
            ui_actions: accepted
                .ui_actions
                .iter()
                .map(|a| UiActionDeclaration {
                    action_id: a.action_id.clone(),
                    label: a.label.clone(),
                })
                .collect(),
            tools: accepted.tools.clone(),
        };
        let runtime = Arc::new(runtime);
        let (events, mut queue) =
            tokio::sync::mpsc::channel::<(HookPoint, Box<RawValue>)>(EVENT_QUEUE);
        let worker = Arc::clone(&runtime);
        // Ends when the extension (the only sender) is dropped.
        tokio::spawn(async move {
            while let Some((point, payload)) = queue.recv().await {
                if let Err(e) = worker.observe_async(point, &payload).await {
                    tracing::warn!(target: "reasonix::wasm", plugin = %worker.plugin_id(), "event {} failed: {e}", point.as_str());
                }
            }
        });
        WasmExtension {
            runtime,
            declaration,
            events,
        }
    }

    /// The underlying runtime (log tail, facts).
    pub fn runtime(&self) -> &WasmRuntime {
        &self.runtime
    }
}

impl ExtensionRuntime for WasmExtension {
    fn plugin_id(&self) -> &str {
        self.runtime.plugin_id()
    }

    fn trust(&self) -> TrustLabel {
        TrustLabel::Sandboxed
    }

    fn declaration(&self) -> &RuntimeDeclaration {
        &self.declaration
    }

    fn health(&self) -> Health {
        match self.runtime.unavailable() {
            None => Health::Ready,
            Some(_) if self.runtime.is_shut_down() => Health::ShutDown,
            Some(e) => Health::Crashed(clean_text(&e.message)),
        }
    }

    fn log_tail(&self) -> Vec<String> {
        self.runtime.log_tail()
    }

    fn intercept<'a>(
        &'a self,
        point: HookPoint,
        payload: &'a RawValue,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<InterceptReply, RuntimeError>> {
        Box::pin(async move {
            let result = self
                .runtime
                .intercept_async(point, payload, timeout)
                .await
                .map_err(runtime_error)?;
            let decision = match result.decision {
                WireDecision::Continue => Decision::Continue,
                WireDecision::Block => Decision::Block,
                WireDecision::Replace => Decision::Replace,
                WireDecision::Allow => Decision::Allow,
                WireDecision::Deny => Decision::Deny,
            };
            Ok(InterceptReply {
                decision,
                reason: result.reason,
                replacement: result.replacement,
            })
        })
    }

    fn observe(&self, point: HookPoint, payload: &RawValue) -> Result<(), RuntimeError> {
        match self.events.try_send((point, payload.to_owned())) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(RuntimeError::new(
                RuntimeErrorKind::Backpressure,
                None,
                "the event queue is full",
            )),
            Err(TrySendError::Closed(_)) => Err(RuntimeError::new(
                RuntimeErrorKind::Crashed,
                Some(ErrorReason::ProviderInterrupted.as_str()),
                "the event worker is gone",
            )),
        }
    }

    fn tool_call<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a RawValue,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<ToolReply, RuntimeError>> {
        Box::pin(async move {
            let result = self
                .runtime
                .tool_call_async(name, arguments, timeout)
                .await
                .map_err(runtime_error)?;
            Ok(ToolReply {
                content: result.content,
                is_error: result.is_error.unwrap_or(false),
            })
        })
    }

    fn provider_catalog(&self) -> BoxFuture<'_, Result<Vec<ProviderDescriptor>, RuntimeError>> {
        Box::pin(async move {
            self.runtime
                .provider_catalog_async()
                .await
                .map_err(runtime_error)
        })
    }

    fn provider_stream(
        &self,
        open: StreamOpen,
    ) -> BoxFuture<'_, Result<StreamReceiver, RuntimeError>> {
        Box::pin(async move {
            let request = serde_json::from_str(open.request.get()).map_err(|e| {
                RuntimeError::new(
                    RuntimeErrorKind::Protocol,
                    Some(ErrorReason::InvalidParams.as_str()),
                    e.to_string(),
                )
            })?;
            let params = StreamOpenParams {
                stream_id: open.stream_id,
                provider_ref: open.provider_ref,
                model: open.model,
                effort: open.effort,
                request,
                seq_base: 1,
                generation: Some(open.generation),
                epoch: None,
            };
            let (sender, receiver) = tokio::sync::mpsc::channel(STREAM_QUEUE);
            let sink = Box::new(ChannelSink { sender });
            self.runtime
                .provider_stream_async(&params, sink)
                .await
                .map_err(runtime_error)?;
            Ok(receiver)
        })
    }

    fn provider_cancel<'a>(
        &'a self,
        stream_id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>> {
        Box::pin(async move {
            self.runtime
                .provider_cancel_async(stream_id, timeout)
                .await
                .map_err(runtime_error)
        })
    }

    fn ui_action<'a>(
        &'a self,
        action_id: &'a str,
        session_id: &'a str,
        generation: u64,
        args: &'a BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<(bool, Option<String>), RuntimeError>> {
        Box::pin(async move {
            let (accepted, message) = self
                .runtime
                .ui_action_async(action_id, session_id, generation, args)
                .await
                .map_err(runtime_error)?;
            Ok((accepted, message.map(|m| clean_text(&m))))
        })
    }

    fn ui_submit<'a>(
        &'a self,
        surface_id: &'a str,
        session_id: &'a str,
        generation: u64,
        values: &'a BTreeMap<String, serde_json::Value>,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>> {
        Box::pin(async move {
            self.runtime
                .ui_submit_async(surface_id, session_id, generation, values)
                .await
                .map_err(runtime_error)
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.runtime.shutdown_async(SHUTDOWN_BUDGET).await;
        })
    }

    fn resident_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async move { self.runtime.memory_bytes().await })
    }

    fn floor_call(&self) -> Option<BoxFuture<'_, Result<(), RuntimeError>>> {
        Some(Box::pin(async move {
            self.runtime.empty_call().await.map_err(runtime_error)
        }))
    }
}

/// Delivers a component's stream events into the dispatcher's queue. A full
/// queue ends the stream (the reader is 256 behind; spec §9 interrupts).
struct ChannelSink {
    sender: tokio::sync::mpsc::Sender<StreamMessage>,
}

impl StreamSink for ChannelSink {
    fn deliver(&mut self, event: WasmStreamEvent) -> bool {
        let (message, last) = match event {
            WasmStreamEvent::Chunk(chunk) => (
                StreamMessage::Chunk {
                    seq: chunk.seq,
                    generation: chunk.generation,
                    chunk: Box::new(chunk.chunk),
                },
                false,
            ),
            WasmStreamEvent::End(end) => (
                StreamMessage::End(StreamEnd {
                    last_seq: end.last_seq,
                    error: end.error,
                    interrupted: end.interrupted.unwrap_or(false),
                }),
                true,
            ),
            WasmStreamEvent::Invalid(why) => (StreamMessage::Invalid(clean_text(&why)), false),
            WasmStreamEvent::Interrupted(_) => (StreamMessage::Disconnected, true),
        };
        match self.sender.try_send(message) {
            Ok(()) => !last,
            Err(_) => {
                let _ = self.sender.try_send(StreamMessage::Disconnected);
                false
            }
        }
    }
}

/// Serves `host-ui.*` imports from the dispatcher's UI hub.
pub struct HubBridge {
    pub hub: Arc<UiHub>,
}

fn ui_rejection(reason: UiRejectReason, message: String) -> (ErrorReason, Option<String>) {
    let reason = match reason {
        UiRejectReason::Internal => ErrorReason::Internal,
        UiRejectReason::ProviderInterrupted => ErrorReason::ProviderInterrupted,
        UiRejectReason::InvalidParams => ErrorReason::InvalidParams,
        UiRejectReason::UnknownMethod => ErrorReason::UnknownMethod,
    };
    (reason, Some(message))
}

fn kind_name<T: serde::Serialize>(kind: &T) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl UiBridge for HubBridge {
    fn publish(
        &self,
        plugin: &str,
        params: UIPublishParams,
    ) -> Result<UIPublishResult, (ErrorReason, Option<String>)> {
        let kind = kind_name(&params.kind);
        self.hub
            .publish(
                plugin,
                UiCall {
                    surface_id: &params.surface_id,
                    session_id: &params.session_id,
                    generation: params.generation,
                    kind: &kind,
                    payload: &params.payload,
                },
            )
            .map(|accepted| UIPublishResult { accepted })
            .map_err(|r| ui_rejection(r.reason, r.message))
    }

    fn request(
        &self,
        plugin: &str,
        params: UIRequestParams,
    ) -> Result<UIRequestResult, (ErrorReason, Option<String>)> {
        let kind = kind_name(&params.kind);
        self.hub
            .request(
                plugin,
                UiCall {
                    surface_id: &params.surface_id,
                    session_id: &params.session_id,
                    generation: params.generation,
                    kind: &kind,
                    payload: &params.payload,
                },
            )
            .map(|answer| UIRequestResult {
                cancelled: answer.cancelled,
                values: answer
                    .values
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|(k, v)| {
                        serde_json::value::to_raw_value(&v).ok().map(|raw| (k, raw))
                    })
                    .collect(),
            })
            .map_err(|r| ui_rejection(r.reason, r.message))
    }
}

/// Starts one installed plugin's component.
pub struct WasmStarter {
    component_path: PathBuf,
    ceiling: ManifestCeiling,
    sandbox: SandboxPolicy,
    limits: InstanceLimits,
    cache: Option<ComponentCache>,
    hub: Arc<UiHub>,
}

impl WasmStarter {
    /// Crate-private: only the registry source builds starters, from
    /// installed and enabled plugins.
    pub(crate) fn new(
        component_path: PathBuf,
        ceiling: ManifestCeiling,
        sandbox: SandboxPolicy,
        limits: InstanceLimits,
        cache: Option<ComponentCache>,
        hub: Arc<UiHub>,
    ) -> WasmStarter {
        WasmStarter {
            component_path,
            ceiling,
            sandbox,
            limits,
            cache,
            hub,
        }
    }
}

impl RuntimeStarter for WasmStarter {
    fn start(
        &self,
        context: StartContext,
    ) -> BoxFuture<'_, Result<Arc<dyn ExtensionRuntime>, String>> {
        Box::pin(async move {
            let _place = context.gate.enter().await?;
            let mut start = WasmStart::new(
                self.component_path.clone(),
                self.ceiling.clone(),
                SessionContext {
                    session_id: context.session_id.clone(),
                    workspace_root: context.workspace_root.clone(),
                    generation: context.generation,
                    epoch: None,
                },
                self.sandbox.clone(),
            );
            start.ui_host = UiHost::Headless;
            start.limits = self.limits;
            start.cache = self.cache.clone();
            start.ui = Some(Arc::new(HubBridge {
                hub: Arc::clone(&self.hub),
            }));
            start.handshake_timeout = context
                .deadline
                .saturating_duration_since(Instant::now())
                .min(super::runtime::HANDSHAKE_TIMEOUT);
            let runtime = WasmRuntime::start_async(start)
                .await
                .map_err(|e| clean_text(&format!("{} ({})", e.message, e.reason.as_str())))?;
            Ok(Arc::new(WasmExtension::new(runtime)) as Arc<dyn ExtensionRuntime>)
        })
    }
}
