//! Code-extension runtimes behind one seam.
//!
//! Every runtime kind (a native JSON-RPC sidecar today, a sandboxed wasm
//! component next) implements [`ExtensionRuntime`]. The [`Dispatcher`] and
//! everything above it see only this trait and the runtime's [`TrustLabel`];
//! nothing else tells the kinds apart.

pub mod diagnostics;
pub mod dispatcher;
pub mod generation;
pub mod host;
pub mod installed;
mod join;
pub mod native;
pub mod provider;
pub mod redaction;
pub mod registry_source;
pub mod session_state;
pub mod slots;
#[cfg(test)]
pub(crate) mod testing;
pub mod tools;
pub mod ui;
pub mod wasm;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use reasonix_protocol::points::{HookPoint, Slot};
use serde::Serialize;
use serde_json::value::RawValue;

pub use dispatcher::Dispatcher;

/// A boxed future, so the trait stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the user trusted when enabling the plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustLabel {
    /// A native sidecar: runs outside any sandbox. Its `allow` at
    /// `permission.decision` may override a host deny (audited).
    FullTrust,
    /// A wasm component: may only tighten permission decisions.
    Sandboxed,
}

impl TrustLabel {
    pub fn as_str(self) -> &'static str {
        match self {
            TrustLabel::FullTrust => "full trust",
            TrustLabel::Sandboxed => "sandboxed",
        }
    }
}

/// A UI action a runtime declared at initialize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UiActionDeclaration {
    pub action_id: String,
    pub label: Option<String>,
}

/// What a runtime declared (and the host accepted against the manifest).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeDeclaration {
    /// Points it intercepts and observes.
    pub subscriptions: Vec<HookPoint>,
    /// Slots it owns.
    pub replaces: Vec<Slot>,
    /// Provider refs it serves (`plugin/<plugin>/<provider>/<model>`).
    pub providers: Vec<String>,
    pub ui_actions: Vec<UiActionDeclaration>,
    /// Tool names it serves (the manifest's `runtime.tools[].name` subset).
    pub tools: Vec<String>,
}

/// An interceptor's ruling as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Continue,
    Block,
    Replace,
    Allow,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::Block => "block",
            Decision::Replace => "replace",
            Decision::Allow => "allow",
            Decision::Deny => "deny",
        }
    }
}

/// The result of one `extension/intercept`.
#[derive(Debug, Clone)]
pub struct InterceptReply {
    pub decision: Decision,
    pub reason: Option<String>,
    /// Present for `replace` (already rehydrated if it was externalised).
    pub replacement: Option<Box<RawValue>>,
}

/// The result of one `extension/tool/call`: `is_error` is the tool reporting
/// its own failure, which is distinct from a call that could not run
/// ([`RuntimeError`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReply {
    pub content: String,
    pub is_error: bool,
}

/// How a runtime call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeErrorKind {
    /// The budget for the call expired.
    Timeout,
    /// The runtime crashed or is gone; calls fail fast from now on.
    Crashed,
    /// The peer answered with an error (its reason, if structured, is kept).
    Rejected,
    /// The peer broke the protocol.
    Protocol,
    /// A bounded queue was full (observations only: the event was dropped).
    Backpressure,
}

/// A failed runtime call. `message` is already redacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RuntimeError {
    pub kind: RuntimeErrorKind,
    /// The protocol reason name (`intercept_timeout`, `provider_interrupted`, …).
    pub reason: Option<&'static str>,
    pub message: String,
}

impl RuntimeError {
    pub fn new(
        kind: RuntimeErrorKind,
        reason: Option<&'static str>,
        message: impl Into<String>,
    ) -> Self {
        let mut message = redaction::clean_text(&message.into());
        // Every runtime fault names its protocol reason, native or wasm.
        if let Some(reason) = reason {
            let tag = format!("[{reason}]");
            if !message.ends_with(&tag) {
                message.push(' ');
                message.push_str(&tag);
            }
        }
        RuntimeError {
            kind,
            reason,
            message,
        }
    }
}

/// Liveness as the dispatcher needs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum Health {
    Ready,
    /// Crashed; the text says how (redacted).
    Crashed(String),
    ShutDown,
}

/// Parameters of `extension/provider/stream/open` as the host picks them.
#[derive(Debug, Clone)]
pub struct StreamOpen {
    /// `es_` + 24 hex.
    pub stream_id: String,
    pub provider_ref: String,
    pub model: Option<String>,
    pub effort: Option<String>,
    /// The ProviderRequest, as JSON.
    pub request: Box<RawValue>,
    pub generation: u64,
}

/// One raw stream notification, in arrival order.
#[derive(Debug, Clone)]
pub enum StreamMessage {
    Chunk {
        seq: u64,
        generation: Option<u64>,
        /// The ProviderChunk, already strictly decoded by the runtime.
        chunk: Box<reasonix_protocol::types::ProviderChunk>,
    },
    End(provider::reassembly::StreamEnd),
    /// A chunk or end that failed strict decoding (text redacted).
    Invalid(String),
    /// The connection ended before the stream did.
    Disconnected,
}

/// The receiving side of an opened stream.
pub type StreamReceiver = tokio::sync::mpsc::Receiver<StreamMessage>;

/// The one trait every runtime kind implements.
pub trait ExtensionRuntime: Send + Sync {
    /// The plugin id (registry name).
    fn plugin_id(&self) -> &str;
    fn trust(&self) -> TrustLabel;
    /// What the runtime declared at start (checked against its manifest).
    fn declaration(&self) -> &RuntimeDeclaration;
    fn health(&self) -> Health;
    /// The runtime's own recent output, redacted, oldest line first: a wasm
    /// guest's stdout, stderr and `log` lines (a panic message among them),
    /// a sidecar's stderr. Shown beside a failure of the runtime.
    fn log_tail(&self) -> Vec<String> {
        Vec::new()
    }

    /// `extension/intercept`, bounded by `timeout`.
    fn intercept<'a>(
        &'a self,
        point: HookPoint,
        payload: &'a RawValue,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<InterceptReply, RuntimeError>>;

    /// `extension/event`: never blocks; a full queue is `Backpressure`.
    fn observe(&self, point: HookPoint, payload: &RawValue) -> Result<(), RuntimeError>;

    /// `extension/tool/call`, bounded by `timeout`.
    fn tool_call<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a RawValue,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<ToolReply, RuntimeError>>;

    /// `extension/provider/catalog`.
    fn provider_catalog(
        &self,
    ) -> BoxFuture<'_, Result<Vec<reasonix_protocol::types::ProviderDescriptor>, RuntimeError>>;

    /// `extension/provider/stream/open`; `Ok` only when accepted.
    fn provider_stream(
        &self,
        open: StreamOpen,
    ) -> BoxFuture<'_, Result<StreamReceiver, RuntimeError>>;

    /// `extension/provider/stream/cancel`: `Ok(cancelled)`.
    fn provider_cancel<'a>(
        &'a self,
        stream_id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>>;

    /// `extension/ui/action`: `(accepted, message)`.
    fn ui_action<'a>(
        &'a self,
        action_id: &'a str,
        session_id: &'a str,
        generation: u64,
        args: &'a std::collections::BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<(bool, Option<String>), RuntimeError>>;

    /// `extension/ui/submit`: accepted.
    fn ui_submit<'a>(
        &'a self,
        surface_id: &'a str,
        session_id: &'a str,
        generation: u64,
        values: &'a std::collections::BTreeMap<String, serde_json::Value>,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>>;

    /// Orderly shutdown; idempotent.
    fn shutdown(&self) -> BoxFuture<'_, ()>;

    /// Memory the runtime holds now, in bytes (a sidecar's process group's
    /// resident set, a component's linear memories); `None` when unknown.
    fn resident_bytes(&self) -> BoxFuture<'_, Option<u64>> {
        Box::pin(async { None })
    }

    /// One round trip into the runtime that runs none of the extension's
    /// own logic: the floor an intercept is read against (`dev bench`).
    /// `None` where that floor lies outside the runtime (a sidecar's is a
    /// bare echo over the same kind of pipes).
    fn floor_call(&self) -> Option<BoxFuture<'_, Result<(), RuntimeError>>> {
        None
    }
}
