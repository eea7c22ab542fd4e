//! An in-process runtime driven by a script, for unit tests of the
//! dispatcher's chain logic. End-to-end tests use real sidecar processes.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use reasonix_protocol::points::HookPoint;
use serde_json::value::RawValue;

use super::{
    BoxFuture, Decision, ExtensionRuntime, Health, InterceptReply, RuntimeDeclaration,
    RuntimeError, RuntimeErrorKind, StreamOpen, StreamReceiver, ToolReply, TrustLabel,
};

/// What the scripted runtime answers at a point.
#[derive(Debug, Clone)]
pub enum Answer {
    Decide(Decision, Option<&'static str>, Option<&'static str>),
    Fail(RuntimeErrorKind),
    Hang,
}

pub fn cont() -> Answer {
    Answer::Decide(Decision::Continue, None, None)
}
pub fn block(reason: &'static str) -> Answer {
    Answer::Decide(Decision::Block, Some(reason), None)
}
pub fn replace(json: &'static str) -> Answer {
    Answer::Decide(Decision::Replace, None, Some(json))
}
pub fn allow() -> Answer {
    Answer::Decide(Decision::Allow, None, None)
}
pub fn deny() -> Answer {
    Answer::Decide(Decision::Deny, None, None)
}

pub struct ScriptedRuntime {
    id: String,
    trust: TrustLabel,
    declaration: RuntimeDeclaration,
    answers: BTreeMap<HookPoint, Answer>,
    pub seen: Mutex<Vec<(HookPoint, String)>>,
    pub observed: Mutex<Vec<HookPoint>>,
    pub observe_full: bool,
}

impl ScriptedRuntime {
    pub fn new(id: &str, answers: &[(HookPoint, Answer)]) -> ScriptedRuntime {
        ScriptedRuntime {
            id: id.to_string(),
            trust: TrustLabel::FullTrust,
            declaration: RuntimeDeclaration {
                subscriptions: answers.iter().map(|(p, _)| *p).collect(),
                ..RuntimeDeclaration::default()
            },
            answers: answers.iter().cloned().collect(),
            seen: Mutex::new(Vec::new()),
            observed: Mutex::new(Vec::new()),
            observe_full: false,
        }
    }

    pub fn sandboxed(mut self) -> Self {
        self.trust = TrustLabel::Sandboxed;
        self
    }

    pub fn owning(mut self, slots: &[reasonix_protocol::points::Slot]) -> Self {
        self.declaration.replaces = slots.to_vec();
        self
    }

    pub fn seen(&self) -> Vec<(HookPoint, String)> {
        self.seen.lock().unwrap().clone()
    }
}

impl ExtensionRuntime for ScriptedRuntime {
    fn plugin_id(&self) -> &str {
        &self.id
    }
    fn trust(&self) -> TrustLabel {
        self.trust
    }
    fn declaration(&self) -> &RuntimeDeclaration {
        &self.declaration
    }
    fn health(&self) -> Health {
        Health::Ready
    }
    fn intercept<'a>(
        &'a self,
        point: HookPoint,
        payload: &'a RawValue,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<InterceptReply, RuntimeError>> {
        self.seen
            .lock()
            .unwrap()
            .push((point, payload.get().to_string()));
        let answer = self.answers.get(&point).cloned().unwrap_or_else(cont);
        Box::pin(async move {
            match answer {
                Answer::Decide(decision, reason, replacement) => Ok(InterceptReply {
                    decision,
                    reason: reason.map(str::to_string),
                    replacement: replacement.map(|r| RawValue::from_string(r.to_string()).unwrap()),
                }),
                Answer::Fail(kind) => Err(RuntimeError::new(kind, None, "scripted failure")),
                Answer::Hang => std::future::pending().await,
            }
        })
    }
    fn observe(&self, point: HookPoint, _payload: &RawValue) -> Result<(), RuntimeError> {
        self.observed.lock().unwrap().push(point);
        if self.observe_full {
            Err(RuntimeError::new(
                RuntimeErrorKind::Backpressure,
                None,
                "queue full",
            ))
        } else {
            Ok(())
        }
    }
    fn tool_call<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a RawValue,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<ToolReply, RuntimeError>> {
        Box::pin(async move {
            Ok(ToolReply {
                content: format!("{name}:{}", arguments.get()),
                is_error: false,
            })
        })
    }
    fn provider_catalog(
        &self,
    ) -> BoxFuture<'_, Result<Vec<reasonix_protocol::types::ProviderDescriptor>, RuntimeError>>
    {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn provider_stream(
        &self,
        _open: StreamOpen,
    ) -> BoxFuture<'_, Result<StreamReceiver, RuntimeError>> {
        Box::pin(async {
            Err(RuntimeError::new(
                RuntimeErrorKind::Rejected,
                Some("unknown_method"),
                "no providers",
            ))
        })
    }
    fn provider_cancel<'a>(
        &'a self,
        _stream_id: &'a str,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>> {
        Box::pin(async { Ok(false) })
    }
    fn ui_action<'a>(
        &'a self,
        _action_id: &'a str,
        _session_id: &'a str,
        _generation: u64,
        _args: &'a BTreeMap<String, String>,
    ) -> BoxFuture<'a, Result<(bool, Option<String>), RuntimeError>> {
        Box::pin(async { Ok((true, None)) })
    }
    fn ui_submit<'a>(
        &'a self,
        _surface_id: &'a str,
        _session_id: &'a str,
        _generation: u64,
        _values: &'a BTreeMap<String, serde_json::Value>,
    ) -> BoxFuture<'a, Result<bool, RuntimeError>> {
        Box::pin(async { Ok(true) })
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
