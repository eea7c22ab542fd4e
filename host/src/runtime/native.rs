//! The native sidecar runtime: [`ExtensionRuntime`] over `reasonix-sidecar`.
//!
//! A [`NativeStarter`] is made only from an installed, enabled plugin (the registry source): project configuration can never start a
//! runtime. Nothing above this module knows that a sidecar process answers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use reasonix_protocol::points::{HookPoint, Slot};
use reasonix_protocol::types::{
    Decision as WireDecision, ProviderDescriptor, SessionContext, StreamOpenParams, UIActionParams,
    UIPublishParams, UIPublishResult, UIRequestParams, UIRequestResult, UISubmitParams, UiHost,
};
use reasonix_protocol::{ErrorReason, RpcError};
use reasonix_sidecar::{
    CallError, Guard, HostServices, LaunchSpec, ManifestCeiling, Sidecar, StartOptions, Status,
    StreamEvent,
};
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::generation::{RuntimeStarter, StartContext};
use super::provider::reassembly::StreamEnd;
use super::redaction::clean_text;
use super::ui::{UiCall, UiHub, UiRejectReason};
use super::{
    BoxFuture, Decision, ExtensionRuntime, Health, InterceptReply, RuntimeDeclaration,
    RuntimeError, RuntimeErrorKind, StreamMessage, StreamOpen, StreamReceiver, ToolReply,
    TrustLabel, UiActionDeclaration,
};

/// Budget of catalog and UI calls (they have no budget of their own in §5.1).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Depth of the queue between the sidecar's stream events and the reader.
const STREAM_QUEUE: usize = 256;

fn reason_name(reason: Option<ErrorReason>) -> Option<&'static str> {
    reason.map(ErrorReason::as_str)
}

fn runtime_error(error: CallError) -> RuntimeError {
    let kind = match &error {
        CallError::Timeout { .. } => RuntimeErrorKind::Timeout,
        CallError::Interrupted(_) | CallError::Closed => RuntimeErrorKind::Crashed,
        CallError::Remote { .. } => RuntimeErrorKind::Rejected,
        _ => RuntimeErrorKind::Protocol,
    };
    RuntimeError::new(kind, reason_name(error.reason()), error.to_string())
}

/// A started sidecar.
pub struct NativeRuntime {
    plugin: String,
    sidecar: Sidecar,
    declaration: RuntimeDeclaration,
}

impl NativeRuntime {
    fn new(sidecar: Sidecar) -> NativeRuntime {
        let accepted = sidecar.declaration();
        // The handshake already checked everything against the manifest;
        // names that do not parse cannot occur, but are dropped, not trusted.
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
        NativeRuntime {
            plugin: sidecar.plugin().to_string(),
            sidecar,
            declaration,
        }
    }

    /// The redacted tail of the sidecar's stderr.
    pub fn stderr_tail(&self) -> String {
        self.sidecar.stderr_tail()
    }
}

impl ExtensionRuntime for NativeRuntime {
    fn plugin_id(&self) -> &str {
        &self.plugin
    }

    fn trust(&self) -> TrustLabel {
        TrustLabel::FullTrust
    }

    fn declaration(&self) -> &RuntimeDeclaration {
        &self.declaration
    }

    fn health(&self) -> Health {
        match self.sidecar.status() {
            Status::Crashed(failure) => Health::Crashed(clean_text(&failure.message)),
            Status::Stopped | Status::ShuttingDown => Health::ShutDown,
            Status::Starting | Status::Ready => Health::Ready,
        }
    }

    fn log_tail(&self) -> Vec<String> {
        self.sidecar
            .stderr_tail()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(clean_text)
            .collect()
    }

    fn intercept<'a>(
        &'a self,
        point: HookPoint,
        payload: &'a RawValue,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<InterceptReply, RuntimeError>> {
        Box::pin(async move {
            let outcome = self
                .sidecar
                .intercept(point, payload.to_owned(), timeout)
                .await
                .map_err(runtime_error)?;
            let decision = match outcome.decision {
                WireDecision::Continue => Decision::Continue,
                WireDecision::Block => Decision::Block,
                WireDecision::Replace => Decision::Replace,
                WireDecision::Allow => Decision::Allow,
                WireDecision::Deny => Decision::Deny,
            };
            Ok(InterceptReply {
                decision,
                reason: outcome.reason,
                replacement: outcome.replacement,
            })
        })
    }

    fn observe(&self, point: HookPoint, payload: &RawValue) -> Result<(), RuntimeError> {
        match self.sidecar.event(point, payload.to_owned()) {
            Ok(reasonix_sidecar::Enqueued::Queued) => Ok(()),
            Ok(reasonix_sidecar::Enqueued::Dropped) => Err(RuntimeError::new(
                RuntimeErrorKind::Backpressure,
                None,
                "the event queue is full",
            )),
            Err(error) => Err(runtime_error(error)),
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
                .sidecar
                .tool_call(name, arguments.to_owned(), timeout)
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
            let result = self
                .sidecar
                .provider_catalog(CALL_TIMEOUT)
                .await
                .map_err(runtime_error)?;
            Ok(result.providers)
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
                    Some("invalid_params"),
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
            let mut stream = self
                .sidecar
                .stream_open(params, CALL_TIMEOUT)
                .await
                .map_err(runtime_error)?;
            let (sender, receiver) = tokio::sync::mpsc::channel(STREAM_QUEUE);
            // Forward in arrival order; dropping `stream` at the end
            // unregisters it from the connection.
            tokio::spawn(async move {
                while let Some(event) = stream.events.recv().await {
                    let message = match event {
                        StreamEvent::Chunk(chunk) => StreamMessage::Chunk {
                            seq: chunk.seq,
                            generation: chunk.generation,
                            chunk: Box::new(chunk.chunk),
                        },
                        StreamEvent::End(end) => StreamMessage::End(StreamEnd {
                            last_seq: end.last_seq,
                            error: end.error,
                            interrupted: end.interrupted.unwrap_or(false),
                        }),
                        StreamEvent::Invalid(why) => StreamMessage::Invalid(clean_text(&why)),
                        StreamEvent::Interrupted(_) => StreamMessage::Disconnected,
                    };
                    let last = matches!(message, StreamMessage::Disconnected);
                    if sender.send(message).await.is_err() || last {
                        break;
                    }
                }
                let _ = sender.send(StreamMessage::Disconnected).await;
            });
            Ok(receiver)
        })
    }

    fn provider_cancel<'a>(
        &'a self,
        stream_id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>> {
        Box::pin(async move {
            match tokio::time::timeout(timeout, self.sidecar.stream_cancel(stream_id)).await {
                Ok(result) => result.map_err(runtime_error),
                Err(_) => Err(RuntimeError::new(
                    RuntimeErrorKind::Timeout,
                    None,
                    "stream/cancel did not answer in time",
                )),
            }
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
            let params = UIActionParams {
                action_id: action_id.to_string(),
                session_id: session_id.to_string(),
                generation,
                args: args.clone(),
            };
            let result = self
                .sidecar
                .ui_action(params, CALL_TIMEOUT)
                .await
                .map_err(runtime_error)?;
            Ok((result.accepted, result.message.map(|m| clean_text(&m))))
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
            let values = values
                .iter()
                .filter_map(|(k, v)| {
                    serde_json::value::to_raw_value(v)
                        .ok()
                        .map(|raw| (k.clone(), raw))
                })
                .collect();
            let params = UISubmitParams {
                surface_id: surface_id.to_string(),
                session_id: session_id.to_string(),
                generation,
                values,
            };
            let result = self
                .sidecar
                .ui_submit(params, CALL_TIMEOUT)
                .await
                .map_err(runtime_error)?;
            Ok(result.accepted)
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.sidecar.shutdown().await;
        })
    }

    fn resident_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        let group = self.sidecar.process_group();
        Box::pin(async move { group_resident_bytes(group) })
    }
}

/// The resident set of every process in the process group `group` (the
/// sidecar, its guard and whatever it started), from Linux's `/proc`.
fn group_resident_bytes(group: i32) -> Option<u64> {
    let mut total = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // `pid (comm) state ppid pgrp …`; comm may hold spaces and parens.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if rest
            .split_whitespace()
            .nth(2)
            .and_then(|g| g.parse::<i32>().ok())
            != Some(group)
        {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
        if let Some(kib) = kib {
            *total.get_or_insert(0) += kib * 1024;
        }
    }
    total
}

/// Serves `host/ui/publish` and `host/ui/request` from the UI hub.
pub struct UiServices {
    pub hub: Arc<UiHub>,
}

fn rpc_error(reason: UiRejectReason, message: String) -> RpcError {
    let reason = match reason {
        UiRejectReason::Internal => ErrorReason::Internal,
        UiRejectReason::ProviderInterrupted => ErrorReason::ProviderInterrupted,
        UiRejectReason::InvalidParams => ErrorReason::InvalidParams,
        UiRejectReason::UnknownMethod => ErrorReason::UnknownMethod,
    };
    RpcError::with_message(reason, message)
}

fn kind_name<T: serde::Serialize>(kind: &T) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

impl HostServices for UiServices {
    fn ui_publish(
        &self,
        plugin: &str,
        params: UIPublishParams,
    ) -> reasonix_sidecar::BoxFuture<Result<UIPublishResult, RpcError>> {
        let kind = kind_name(&params.kind);
        let result = self
            .hub
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
            .map_err(|r| rpc_error(r.reason, r.message));
        Box::pin(async move { result })
    }

    fn ui_request(
        &self,
        plugin: &str,
        params: UIRequestParams,
    ) -> reasonix_sidecar::BoxFuture<Result<UIRequestResult, RpcError>> {
        let hub = Arc::clone(&self.hub);
        let plugin = plugin.to_string();
        Box::pin(async move {
            let kind = kind_name(&params.kind);
            hub.request_async(
                &plugin,
                UiCall {
                    surface_id: &params.surface_id,
                    session_id: &params.session_id,
                    generation: params.generation,
                    kind: &kind,
                    payload: &params.payload,
                },
            )
            .await
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
            .map_err(|r| rpc_error(r.reason, r.message))
        })
    }
}

/// Starts one installed plugin's sidecar.
pub struct NativeStarter {
    spec: LaunchSpec,
    ceiling: ManifestCeiling,
    guard: Guard,
    hub: Arc<UiHub>,
}

impl NativeStarter {
    /// Crate-private: only the registry source builds starters, from
    /// installed and enabled plugins; never from project configuration.
    pub(crate) fn new(
        spec: LaunchSpec,
        ceiling: ManifestCeiling,
        guard: Guard,
        hub: Arc<UiHub>,
    ) -> NativeStarter {
        NativeStarter {
            spec,
            ceiling,
            guard,
            hub,
        }
    }
}

impl RuntimeStarter for NativeStarter {
    fn start(
        &self,
        context: StartContext,
    ) -> BoxFuture<'_, Result<Arc<dyn ExtensionRuntime>, String>> {
        Box::pin(async move {
            let mut options = StartOptions::new(SessionContext {
                session_id: context.session_id.clone(),
                workspace_root: context.workspace_root.clone(),
                generation: context.generation,
                epoch: None,
            });
            options.ui_host = UiHost::Headless;
            options.guard = self.guard.clone();
            options.host_services = Arc::new(UiServices {
                hub: Arc::clone(&self.hub),
            });
            let hub = Arc::clone(&self.hub);
            let plugin = self.spec.name.clone();
            options.on_crash = Some(Arc::new(move |_failure| hub.mark_crashed(&plugin)));
            // Spawned at once; the handshake waits for one of the four places.
            let launched = Sidecar::launch(self.spec.clone(), &options)
                .await
                .map_err(|error| clean_text(&error.to_string()))?;
            let _place = context.gate.enter().await?;
            options.handshake_timeout = context
                .deadline
                .saturating_duration_since(Instant::now())
                .min(reasonix_sidecar::sidecar::HANDSHAKE_TIMEOUT);
            let sidecar = launched
                .handshake(&self.ceiling, &options)
                .await
                .map_err(|error| clean_text(&error.to_string()))?;
            Ok(Arc::new(NativeRuntime::new(sidecar)) as Arc<dyn ExtensionRuntime>)
        })
    }
}
