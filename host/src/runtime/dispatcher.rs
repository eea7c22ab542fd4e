//! The one dispatcher in front of every runtime kind (spec §5).
//!
//! Chain order is manifest priority ascending, then plugin id, then
//! registration order. Each member sees the payload as replaced by earlier
//! members. After the chain the owner of the point's slot runs as the
//! strategy and has the final say. The slot owner is called once per point,
//! as the strategy, even if it also subscribed to the point.
//!
//! With nothing subscribed to a point (always true with no code runtime
//! installed) `intercept` returns the payload untouched without encoding it,
//! queueing anything or allocating: the nil path.

use std::future::{Future, ready};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::future::BoxFuture;

use reasonix_protocol::points::{HookPoint, Slot};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::diagnostics::{AuditEntry, Diagnostics};
use super::redaction::clean_text;
use super::slots::SlotTable;
use super::{
    Decision, ExtensionRuntime, InterceptReply, RuntimeError, RuntimeErrorKind, TrustLabel,
};

/// A runtime as the dispatcher schedules it, with its manifest settings.
#[derive(Clone)]
pub struct ChainMember {
    pub runtime: Arc<dyn ExtensionRuntime>,
    /// Manifest `runtime.priority` (−1000..1000, default 0).
    pub priority: i32,
    /// Manifest `runtime.required`.
    pub required: bool,
    /// Manifest `runtime.timeoutMillis` (0/None keeps the per-point default).
    pub timeout_millis: Option<u64>,
}

impl std::fmt::Debug for ChainMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainMember")
            .field("plugin", &self.runtime.plugin_id())
            .field("priority", &self.priority)
            .field("required", &self.required)
            .finish()
    }
}

/// Whether a step ran as a chain member or as the slot owner's strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepRole {
    Chain,
    Strategy,
}

/// What one member's turn in the chain came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "snake_case",
    rename_all_fields = "camelCase",
    tag = "result"
)]
pub enum StepResult {
    Continued,
    Replaced,
    Blocked {
        reason: String,
    },
    Allowed {
        overrode_host_deny: bool,
    },
    Denied,
    /// A sandboxed `allow` over a host deny: refused, host deny stands.
    Refused {
        why: String,
    },
    /// An optional member failed or broke the contract; its ruling was skipped.
    Skipped {
        why: String,
    },
    /// A required-class member failed; the operation fails.
    Failed {
        why: String,
    },
}

/// One entry of a point's decision chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainStep {
    pub plugin: String,
    pub role: StepRole,
    #[serde(flatten)]
    pub result: StepResult,
}

/// The overall ruling at a point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "snake_case",
    rename_all_fields = "camelCase",
    tag = "outcome"
)]
pub enum Outcome {
    /// Go on with the (possibly replaced) payload.
    Continue,
    /// Stop the operation; `reason` is redacted and meant for the user.
    Blocked { plugin: String, reason: String },
    /// A permission verdict from an extension (only at `permission.decision`).
    Permission {
        plugin: String,
        allow: bool,
        overrode_host_deny: bool,
    },
}

/// The result of intercepting one point.
///
/// When nothing ran it is the payload alone (no larger than `T` where `T`
/// has a niche, as every payload struct holding a `String` does); what a
/// chain decided travels in one box beside the payload. The nil path so
/// hands back exactly what it was given and drops nothing.
#[derive(Debug, Clone)]
pub struct Ruling<T>(Settled<T>);

#[derive(Debug, Clone)]
enum Settled<T> {
    Untouched(T),
    Decided(Box<Verdict<T>>),
}

#[derive(Debug, Clone)]
struct Verdict<T> {
    payload: T,
    replaced: bool,
    outcome: Outcome,
    steps: Vec<ChainStep>,
}

static CONTINUE: Outcome = Outcome::Continue;

impl<T> Ruling<T> {
    /// The payload as it came: nothing ran.
    #[inline(always)]
    fn untouched(payload: T) -> Ruling<T> {
        Ruling(Settled::Untouched(payload))
    }

    /// The payload the chain came to (the host's own when nothing ran).
    pub fn payload(&self) -> &T {
        match &self.0 {
            Settled::Untouched(payload) => payload,
            Settled::Decided(verdict) => &verdict.payload,
        }
    }

    /// The payload, taken out of the ruling.
    #[inline(always)]
    pub fn into_payload(self) -> T {
        match self.0 {
            Settled::Untouched(payload) => payload,
            Settled::Decided(verdict) => verdict.payload,
        }
    }

    /// Whether a member replaced the payload.
    pub fn replaced(&self) -> bool {
        matches!(&self.0, Settled::Decided(verdict) if verdict.replaced)
    }

    /// The overall ruling (`Continue` when nothing ran).
    pub fn outcome(&self) -> &Outcome {
        match &self.0 {
            Settled::Untouched(_) => &CONTINUE,
            Settled::Decided(verdict) => &verdict.outcome,
        }
    }

    /// The decision chain, in the order it ran.
    pub fn steps(&self) -> &[ChainStep] {
        match &self.0 {
            Settled::Untouched(_) => &[],
            Settled::Decided(verdict) => &verdict.steps,
        }
    }
}

/// An interception that failed the operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    /// A required-class member (required, or a slot owner) failed or broke
    /// the contract.
    #[error(
        "plugin `{plugin}` ({class}) failed at {point}: {why}. The operation was stopped; fix \
         the extension, or disable it with `reasonix plugin disable {plugin}`"
    )]
    MemberFailed {
        plugin: String,
        class: &'static str,
        point: &'static str,
        why: String,
        steps: Vec<ChainStep>,
    },
    /// The slot owner answered `block`, which is fatal for a strategy.
    #[error("plugin `{plugin}` owns slot `{slot}` and blocked {point}: {reason}")]
    StrategyBlocked {
        plugin: String,
        slot: String,
        point: &'static str,
        reason: String,
        steps: Vec<ChainStep>,
    },
    /// The host could not encode its own payload (a host bug, never input).
    #[error("could not encode the {point} payload: {why}")]
    Encode { point: &'static str, why: String },
}

impl DispatchError {
    /// The decision chain up to the failure.
    pub fn steps(&self) -> &[ChainStep] {
        match self {
            DispatchError::MemberFailed { steps, .. }
            | DispatchError::StrategyBlocked { steps, .. } => steps,
            DispatchError::Encode { .. } => &[],
        }
    }
}

#[derive(Debug)]
struct Member {
    plugin: String,
    runtime: Arc<dyn ExtensionRuntime>,
    required_class: bool,
    timeout_millis: Option<u64>,
    trust: TrustLabel,
}

impl std::fmt::Debug for dyn ExtensionRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ExtensionRuntime({}, {})",
            self.plugin_id(),
            self.trust().as_str()
        )
    }
}

#[derive(Debug, Default, Clone)]
struct PointPlan {
    /// Member indexes in chain order (the point's slot owner excluded).
    chain: Vec<usize>,
    /// The owner of the slot mapped to this point.
    strategy: Option<usize>,
    /// Chain members plus the slot owner, deduplicated, for `observe`.
    observers: Vec<usize>,
}

/// The dispatcher of one generation.
#[derive(Debug)]
pub struct Dispatcher {
    members: Vec<Member>,
    plans: [PointPlan; 17],
    slots: SlotTable,
    diagnostics: Arc<Diagnostics>,
}

/// The `hostDecision` of a `permission.decision` payload.
#[derive(Deserialize)]
struct PermissionPeek {
    #[serde(rename = "hostDecision")]
    host_decision: Option<String>,
    name: Option<String>,
}

impl Dispatcher {
    /// The nil dispatcher: no runtime, every point takes the nil path.
    pub fn nil() -> Dispatcher {
        Dispatcher::new(
            Vec::new(),
            SlotTable::default(),
            Arc::new(Diagnostics::new()),
        )
    }

    /// Members in registration order; the chain order is derived here.
    pub fn new(
        members: Vec<ChainMember>,
        slots: SlotTable,
        diagnostics: Arc<Diagnostics>,
    ) -> Dispatcher {
        let mut ordered: Vec<(usize, ChainMember)> = members.into_iter().enumerate().collect();
        ordered.sort_by(|(ia, a), (ib, b)| {
            (a.priority, a.runtime.plugin_id(), ia).cmp(&(b.priority, b.runtime.plugin_id(), ib))
        });
        let members: Vec<Member> = ordered
            .into_iter()
            .map(|(_, member)| {
                let plugin = member.runtime.plugin_id().to_string();
                Member {
                    required_class: member.required || slots.owns_any(&plugin),
                    trust: member.runtime.trust(),
                    timeout_millis: member.timeout_millis,
                    plugin,
                    runtime: member.runtime,
                }
            })
            .collect();
        let plans = HookPoint::ALL.map(|point| {
            let strategy = point
                .slot()
                .and_then(|slot| slots.owner(&slot))
                .and_then(|owner| members.iter().position(|m| m.plugin == owner));
            let chain: Vec<usize> = members
                .iter()
                .enumerate()
                .filter(|(i, m)| {
                    Some(*i) != strategy && m.runtime.declaration().subscriptions.contains(&point)
                })
                .map(|(i, _)| i)
                .collect();
            let mut observers = chain.clone();
            if let Some(owner) = strategy {
                observers.push(owner);
            }
            PointPlan {
                chain,
                strategy,
                observers,
            }
        });
        Dispatcher {
            members,
            plans,
            slots,
            diagnostics,
        }
    }

    /// Whether no runtime is installed at all.
    pub fn is_nil(&self) -> bool {
        self.members.is_empty()
    }

    pub fn diagnostics(&self) -> &Arc<Diagnostics> {
        &self.diagnostics
    }

    pub fn slots(&self) -> &SlotTable {
        &self.slots
    }

    /// Plugin ids in chain order.
    pub fn chain_order(&self) -> Vec<&str> {
        self.members.iter().map(|m| m.plugin.as_str()).collect()
    }

    /// Plugin ids called at `point`, in order (strategy last), for display.
    pub fn plan(&self, point: HookPoint) -> (Vec<&str>, Option<&str>) {
        let plan = &self.plans[point.index()];
        (
            plan.chain
                .iter()
                .map(|&i| self.members[i].plugin.as_str())
                .collect(),
            plan.strategy.map(|i| self.members[i].plugin.as_str()),
        )
    }

    /// The runtime of `plugin`, if it is in this generation.
    pub fn runtime(&self, plugin: &str) -> Option<&Arc<dyn ExtensionRuntime>> {
        self.members
            .iter()
            .find(|m| m.plugin == plugin)
            .map(|m| &m.runtime)
    }

    /// Whether `plugin` is required-class (required, or owns a slot).
    pub fn is_required_class(&self, plugin: &str) -> bool {
        self.members
            .iter()
            .any(|m| m.plugin == plugin && m.required_class)
    }

    /// Intercept `point` with the named slot of the point (§7) as strategy.
    ///
    /// With nothing subscribed the returned future is ready at once and
    /// holds only the payload (the nil path); otherwise it runs the chain.
    #[inline(always)]
    pub fn intercept<T>(&self, point: HookPoint, payload: T) -> Intercepting<'_, T>
    where
        T: Serialize + DeserializeOwned,
    {
        let strategy = self.plans[point.index()].strategy;
        self.start(point, payload, strategy, || point.slot())
    }

    /// Intercept a tool point (`tool.before` / `tool.after`) with the owner
    /// of `tool:<name>` as the strategy.
    pub fn intercept_tool<T>(&self, point: HookPoint, tool: &str, payload: T) -> Intercepting<'_, T>
    where
        T: Serialize + DeserializeOwned,
    {
        // Looked up without building the slot: the nil path must not allocate.
        let strategy = self
            .slots
            .tool_owner(tool)
            .and_then(|owner| self.members.iter().position(|m| m.plugin == owner));
        self.start(point, payload, strategy, || {
            strategy.map(|_| Slot::Tool(tool.to_string()))
        })
    }

    /// The nil check, inline so that nothing else is built on the nil
    /// path; the chain is set up out of line.
    #[inline(always)]
    fn start<T: Serialize>(
        &self,
        point: HookPoint,
        payload: T,
        strategy: Option<usize>,
        slot: impl FnOnce() -> Option<Slot>,
    ) -> Intercepting<'_, T> {
        if strategy.is_none() && self.plans[point.index()].chain.is_empty() {
            return Intercepting(Stage::Nil(payload));
        }
        let chain = self.chain(point, &payload, strategy, slot());
        Intercepting(Stage::Chain(Box::new(Running { payload, chain })))
    }

    #[inline(never)]
    fn chain<T: Serialize>(
        &self,
        point: HookPoint,
        payload: &T,
        strategy: Option<usize>,
        slot: Option<Slot>,
    ) -> BoxFuture<'_, Result<ChainRun, DispatchError>> {
        match serde_json::value::to_raw_value(payload) {
            Ok(current) => Box::pin(self.run(point, current, strategy, slot)),
            Err(error) => Box::pin(ready(Err(DispatchError::Encode {
                point: point.as_str(),
                why: error.to_string(),
            }))),
        }
    }

    /// Fan `point` out as an observation to the chain members and the slot
    /// owner. Never blocks; a dropped event is warned about once per plugin.
    pub fn observe<T: Serialize>(&self, point: HookPoint, payload: &T) {
        let plan = &self.plans[point.index()];
        if plan.observers.is_empty() {
            return;
        }
        let raw = match serde_json::value::to_raw_value(payload) {
            Ok(raw) => raw,
            Err(error) => {
                self.diagnostics
                    .warn("host", "event_encode", &format!("{point:?}: {error}"));
                return;
            }
        };
        for &i in &plan.observers {
            let member = &self.members[i];
            if let Err(error) = member.runtime.observe(point, &raw) {
                self.diagnostics.warn_once(
                    &member.plugin,
                    "event_dropped",
                    &format!("an {} event was dropped: {error}", point.as_str()),
                );
            }
        }
    }

    async fn call(
        &self,
        member: &Member,
        point: HookPoint,
        payload: &RawValue,
    ) -> Result<InterceptReply, RuntimeError> {
        let budget: Duration = point.intercept_timeout(member.timeout_millis);
        match tokio::time::timeout(budget, member.runtime.intercept(point, payload, budget)).await {
            Ok(result) => result,
            Err(_) => Err(RuntimeError::new(
                RuntimeErrorKind::Timeout,
                Some("intercept_timeout"),
                format!("timed out: no answer within {} ms", budget.as_millis()),
            )),
        }
    }

    /// Apply the error policy to a failed call or a contract violation.
    fn member_failed(
        &self,
        member: &Member,
        point: HookPoint,
        why: String,
        steps: &mut Vec<ChainStep>,
        role: StepRole,
    ) -> Result<(), DispatchError> {
        let why = clean_text(&why);
        if member.required_class || role == StepRole::Strategy {
            steps.push(ChainStep {
                plugin: member.plugin.clone(),
                role,
                result: StepResult::Failed { why: why.clone() },
            });
            return Err(DispatchError::MemberFailed {
                plugin: member.plugin.clone(),
                class: if role == StepRole::Strategy {
                    "slot owner"
                } else {
                    "required"
                },
                point: point.as_str(),
                why,
                steps: std::mem::take(steps),
            });
        }
        self.diagnostics.warn_once(
            &member.plugin,
            "optional_failed",
            &format!(
                "optional plugin `{}` failed at {} and was skipped: {why} (further failures of this plugin are not repeated)",
                member.plugin,
                point.as_str()
            ),
        );
        steps.push(ChainStep {
            plugin: member.plugin.clone(),
            role,
            result: StepResult::Skipped { why },
        });
        Ok(())
    }

    fn validated(point: HookPoint, reply: &mut InterceptReply) -> Result<Box<RawValue>, String> {
        let Some(replacement) = reply.replacement.take() else {
            return Err("answered `replace` without a replacement".to_string());
        };
        reasonix_protocol::payloads::validate_replacement(point, &replacement)
            .map_err(|error| format!("invalid replacement: {error}"))?;
        Ok(replacement)
    }

    /// The chain (and strategy) over the encoded payload. The host's typed
    /// payload stays with the caller's [`Intercepting`], which decodes a
    /// replacement into it.
    async fn run(
        &self,
        point: HookPoint,
        mut current: Box<RawValue>,
        strategy: Option<usize>,
        strategy_slot: Option<Slot>,
    ) -> Result<ChainRun, DispatchError> {
        let plan = &self.plans[point.index()];
        let permission = if point == HookPoint::PermissionDecision {
            serde_json::from_str::<PermissionPeek>(current.get()).ok()
        } else {
            None
        };
        let host_denied = permission
            .as_ref()
            .is_some_and(|p| p.host_decision.as_deref() == Some("deny"));
        let mut replaced = false;
        let mut steps: Vec<ChainStep> = Vec::new();
        let mut outcome = Outcome::Continue;

        let roles = plan
            .chain
            .iter()
            .map(|&i| (i, StepRole::Chain))
            .chain(strategy.map(|i| (i, StepRole::Strategy)));
        for (index, role) in roles {
            if !matches!(outcome, Outcome::Continue) {
                break;
            }
            let member = &self.members[index];
            let mut reply = match self.call(member, point, &current).await {
                Ok(reply) => reply,
                Err(error) => {
                    self.member_failed(member, point, error.message, &mut steps, role)?;
                    continue;
                }
            };
            let step = |result| ChainStep {
                plugin: member.plugin.clone(),
                role,
                result,
            };
            match reply.decision {
                Decision::Continue => steps.push(step(StepResult::Continued)),
                Decision::Block => {
                    let reason =
                        clean_text(reply.reason.as_deref().unwrap_or("blocked by an extension"));
                    steps.push(step(StepResult::Blocked {
                        reason: reason.clone(),
                    }));
                    if role == StepRole::Strategy {
                        return Err(DispatchError::StrategyBlocked {
                            plugin: member.plugin.clone(),
                            slot: strategy_slot
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                            point: point.as_str(),
                            reason,
                            steps,
                        });
                    }
                    outcome = Outcome::Blocked {
                        plugin: member.plugin.clone(),
                        reason,
                    };
                }
                Decision::Replace => match Self::validated(point, &mut reply) {
                    Ok(replacement) => {
                        current = replacement;
                        replaced = true;
                        steps.push(step(StepResult::Replaced));
                    }
                    Err(why) => self.member_failed(member, point, why, &mut steps, role)?,
                },
                Decision::Allow | Decision::Deny if !point.allows_permission_decisions() => {
                    let why = format!(
                        "answered `{}`, which is legal only at permission.decision",
                        reply.decision.as_str()
                    );
                    self.member_failed(member, point, why, &mut steps, role)?;
                }
                Decision::Deny => {
                    steps.push(step(StepResult::Denied));
                    outcome = Outcome::Permission {
                        plugin: member.plugin.clone(),
                        allow: false,
                        overrode_host_deny: false,
                    };
                }
                Decision::Allow => {
                    let tool = permission.as_ref().and_then(|p| p.name.clone());
                    if host_denied && member.trust == TrustLabel::Sandboxed {
                        let why = "a sandboxed runtime may only tighten a permission decision; the host's deny stands".to_string();
                        self.diagnostics.audit(AuditEntry {
                            plugin: member.plugin.clone(),
                            trust: member.trust,
                            point: point.as_str(),
                            tool,
                            host_decision: "deny",
                            extension_decision: "allow",
                            applied: false,
                        });
                        self.diagnostics.warn(&member.plugin, "allow_refused", &why);
                        steps.push(step(StepResult::Refused { why }));
                        continue;
                    }
                    if host_denied {
                        self.diagnostics.audit(AuditEntry {
                            plugin: member.plugin.clone(),
                            trust: member.trust,
                            point: point.as_str(),
                            tool,
                            host_decision: "deny",
                            extension_decision: "allow",
                            applied: true,
                        });
                    }
                    steps.push(step(StepResult::Allowed {
                        overrode_host_deny: host_denied,
                    }));
                    outcome = Outcome::Permission {
                        plugin: member.plugin.clone(),
                        allow: true,
                        overrode_host_deny: host_denied,
                    };
                }
            }
        }

        Ok(ChainRun {
            point,
            replacement: replaced.then_some(current),
            outcome,
            steps,
        })
    }
}

/// What the chain came to, before the replacement is decoded into the
/// host's type.
struct ChainRun {
    point: HookPoint,
    replacement: Option<Box<RawValue>>,
    outcome: Outcome,
    steps: Vec<ChainStep>,
}

/// The future of one interception. On the nil path it only holds the
/// payload and is ready at once; otherwise it drives the boxed chain, which
/// works on the encoded payload alone, so `T` need not be `Send` for the
/// chain to run on any thread (the future is `Send` exactly when `T` is).
pub struct Intercepting<'a, T>(Stage<'a, T>);

/// No larger than the payload where `T` has a niche (the two other stages
/// fit beside it): the nil path moves exactly what `ready(payload)` would.
enum Stage<'a, T> {
    Nil(T),
    Chain(Box<Running<'a, T>>),
    Done,
}

struct Running<'a, T> {
    payload: T,
    chain: BoxFuture<'a, Result<ChainRun, DispatchError>>,
}

// The payload is moved out, never pinned.
impl<T> Unpin for Intercepting<'_, T> {}

impl<T: DeserializeOwned> Future for Intercepting<'_, T> {
    type Output = Result<Ruling<T>, Box<DispatchError>>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match std::mem::replace(&mut this.0, Stage::Done) {
            // The nil path: kept small so that it inlines into the caller.
            Stage::Nil(payload) => Poll::Ready(Ok(Ruling::untouched(payload))),
            Stage::Chain(mut running) => match running.chain.as_mut().poll(cx) {
                Poll::Pending => {
                    this.0 = Stage::Chain(running);
                    Poll::Pending
                }
                Poll::Ready(run) => Poll::Ready(settle(running.payload, run)),
            },
            Stage::Done => panic!("`Intercepting` polled after completion"),
        }
    }
}

/// Decode what the chain came to into the host's type (out of line: the
/// nil path never gets here).
#[inline(never)]
fn settle<T: DeserializeOwned>(
    original: T,
    run: Result<ChainRun, DispatchError>,
) -> Result<Ruling<T>, Box<DispatchError>> {
    run.and_then(|run| {
        let replaced = run.replacement.is_some();
        let payload = match run.replacement {
            None => original,
            Some(text) => match serde_json::from_str::<T>(text.get()) {
                Ok(payload) => payload,
                Err(error) => {
                    // Validation passed but the host's own type refused
                    // it: a violation of the last replacer.
                    let plugin = run
                        .steps
                        .iter()
                        .rev()
                        .find(|s| s.result == StepResult::Replaced)
                        .map(|s| s.plugin.clone())
                        .unwrap_or_default();
                    return Err(DispatchError::MemberFailed {
                        class: "replacer",
                        point: run.point.as_str(),
                        why: clean_text(&format!(
                            "replacement does not fit the host payload: {error}"
                        )),
                        plugin,
                        steps: run.steps,
                    });
                }
            },
        };
        Ok(Ruling(Settled::Decided(Box::new(Verdict {
            payload,
            replaced,
            outcome: run.outcome,
            steps: run.steps,
        }))))
    })
    .map_err(Box::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::*;
    use serde_json::{Value, json};

    type P = HookPoint;

    fn member(
        runtime: ScriptedRuntime,
        priority: i32,
        required: bool,
    ) -> (Arc<ScriptedRuntime>, ChainMember) {
        let runtime = Arc::new(runtime);
        let member = ChainMember {
            runtime: runtime.clone(),
            priority,
            required,
            timeout_millis: None,
        };
        (runtime, member)
    }

    fn dispatcher(members: Vec<ChainMember>) -> Dispatcher {
        let runtimes: Vec<Arc<dyn ExtensionRuntime>> =
            members.iter().map(|m| m.runtime.clone()).collect();
        let slots = SlotTable::build(
            runtimes
                .iter()
                .map(|r| (r.plugin_id(), r.declaration().replaces.iter())),
        )
        .unwrap();
        Dispatcher::new(members, slots, Arc::new(Diagnostics::new()))
    }

    #[test]
    fn nil_path_values_are_no_larger_than_the_payload() {
        use reasonix_protocol::payloads::InputPayload;
        let payload = std::mem::size_of::<InputPayload>();
        assert_eq!(
            std::mem::size_of::<Intercepting<'_, InputPayload>>(),
            payload
        );
        assert_eq!(std::mem::size_of::<Ruling<InputPayload>>(), payload);
        assert_eq!(
            std::mem::size_of::<Result<Ruling<InputPayload>, Box<DispatchError>>>(),
            payload
        );
    }

    #[tokio::test]
    async fn nil_dispatcher_passes_everything_through() {
        let d = Dispatcher::nil();
        assert!(d.is_nil());
        for point in HookPoint::ALL {
            let ruling = d.intercept(point, json!({"text": "hi"})).await.unwrap();
            assert_eq!(*ruling.payload(), json!({"text": "hi"}));
            assert!(!ruling.replaced());
            assert_eq!(*ruling.outcome(), Outcome::Continue);
            assert!(ruling.steps().is_empty());
            d.observe(point, &json!({}));
        }
    }

    #[tokio::test]
    async fn chain_order_is_priority_then_id_then_registration() {
        let (_, late) = member(
            ScriptedRuntime::new("zeta", &[(P::InputReceive, cont())]),
            -5,
            false,
        );
        let (_, b) = member(
            ScriptedRuntime::new("beta", &[(P::InputReceive, cont())]),
            0,
            false,
        );
        let (_, a) = member(
            ScriptedRuntime::new("alpha", &[(P::InputReceive, cont())]),
            0,
            false,
        );
        let (_, high) = member(
            ScriptedRuntime::new("aaa", &[(P::InputReceive, cont())]),
            10,
            false,
        );
        let d = dispatcher(vec![high, b, a, late]);
        assert_eq!(d.chain_order(), vec!["zeta", "alpha", "beta", "aaa"]);
        let ruling = d
            .intercept(P::InputReceive, json!({"text": "x"}))
            .await
            .unwrap();
        let order: Vec<_> = ruling.steps().iter().map(|s| s.plugin.as_str()).collect();
        assert_eq!(order, vec!["zeta", "alpha", "beta", "aaa"]);
    }

    #[tokio::test]
    async fn each_member_sees_the_payload_replaced_by_earlier_members() {
        let (_, first) = member(
            ScriptedRuntime::new("a", &[(P::InputReceive, replace(r#"{"text":"from a"}"#))]),
            0,
            false,
        );
        let (second_rt, second) = member(
            ScriptedRuntime::new("b", &[(P::InputReceive, cont())]),
            0,
            false,
        );
        let d = dispatcher(vec![second, first]);
        let ruling = d
            .intercept(P::InputReceive, json!({"text": "orig"}))
            .await
            .unwrap();
        assert!(ruling.replaced());
        assert_eq!(*ruling.payload(), json!({"text": "from a"}));
        assert_eq!(second_rt.seen()[0].1, r#"{"text":"from a"}"#);
    }

    #[tokio::test]
    async fn block_stops_the_chain_with_a_redacted_reason() {
        let (_, a) = member(
            ScriptedRuntime::new("a", &[(P::ToolBefore, block("no\u{1b}[31m way"))]),
            0,
            false,
        );
        let (b_rt, b) = member(
            ScriptedRuntime::new("b", &[(P::ToolBefore, cont())]),
            1,
            false,
        );
        let d = dispatcher(vec![a, b]);
        let ruling = d
            .intercept(P::ToolBefore, json!({"name": "x"}))
            .await
            .unwrap();
        assert_eq!(
            *ruling.outcome(),
            Outcome::Blocked {
                plugin: "a".into(),
                reason: "no[31m way".into()
            }
        );
        assert!(b_rt.seen().is_empty());
    }

    #[tokio::test]
    async fn invalid_replacement_fails_required_and_skips_optional_with_one_warning() {
        let script = [(P::InputReceive, replace(r#"{"text":""}"#))];
        let (_, required) = member(ScriptedRuntime::new("req", &script), 0, true);
        let error = dispatcher(vec![required])
            .intercept(P::InputReceive, json!({"text": "x"}))
            .await
            .unwrap_err();
        let DispatchError::MemberFailed {
            plugin, class, why, ..
        } = &*error
        else {
            panic!("{error:?}")
        };
        assert_eq!((plugin.as_str(), *class), ("req", "required"));
        assert!(why.contains("invalid replacement"), "{why}");

        let (_, optional) = member(ScriptedRuntime::new("opt", &script), 0, false);
        let d = dispatcher(vec![optional]);
        for _ in 0..3 {
            let ruling = d
                .intercept(P::InputReceive, json!({"text": "x"}))
                .await
                .unwrap();
            assert_eq!(*ruling.payload(), json!({"text": "x"}));
            assert!(matches!(
                ruling.steps()[0].result,
                StepResult::Skipped { .. }
            ));
        }
        assert_eq!(d.diagnostics().warnings().len(), 1);
    }

    #[tokio::test]
    async fn allow_and_deny_are_violations_outside_permission_decision() {
        for answer in [allow(), deny()] {
            let (_, m) = member(
                ScriptedRuntime::new("a", &[(P::ToolBefore, answer)]),
                0,
                true,
            );
            let error = dispatcher(vec![m])
                .intercept(P::ToolBefore, json!({"name": "t"}))
                .await
                .unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("legal only at permission.decision"),
                "{error}"
            );
        }
    }

    #[tokio::test]
    async fn full_trust_allow_over_host_deny_is_applied_and_audited() {
        let (_, m) = member(
            ScriptedRuntime::new("ft", &[(P::PermissionDecision, allow())]),
            0,
            false,
        );
        let (later_rt, later) = member(
            ScriptedRuntime::new("zz", &[(P::PermissionDecision, deny())]),
            5,
            false,
        );
        let d = dispatcher(vec![m, later]);
        let ruling = d
            .intercept(
                P::PermissionDecision,
                json!({"name": "rm", "hostDecision": "deny"}),
            )
            .await
            .unwrap();
        assert_eq!(
            *ruling.outcome(),
            Outcome::Permission {
                plugin: "ft".into(),
                allow: true,
                overrode_host_deny: true
            }
        );
        // The first allow/deny is terminal for the extension phase.
        assert!(later_rt.seen().is_empty());
        let audit = d.diagnostics().audit_entries();
        assert_eq!(audit.len(), 1);
        assert!(audit[0].applied);
        assert_eq!(audit[0].tool.as_deref(), Some("rm"));
    }

    #[tokio::test]
    async fn sandboxed_allow_over_host_deny_is_refused_but_its_deny_applies() {
        let (_, m) = member(
            ScriptedRuntime::new("wasm", &[(P::PermissionDecision, allow())]).sandboxed(),
            0,
            false,
        );
        let d = dispatcher(vec![m]);
        let ruling = d
            .intercept(
                P::PermissionDecision,
                json!({"name": "rm", "hostDecision": "deny"}),
            )
            .await
            .unwrap();
        assert_eq!(*ruling.outcome(), Outcome::Continue);
        assert!(matches!(
            ruling.steps()[0].result,
            StepResult::Refused { .. }
        ));
        let audit = d.diagnostics().audit_entries();
        assert!(!audit[0].applied);

        let (_, m) = member(
            ScriptedRuntime::new("wasm", &[(P::PermissionDecision, deny())]).sandboxed(),
            0,
            false,
        );
        let ruling = dispatcher(vec![m])
            .intercept(
                P::PermissionDecision,
                json!({"name": "ls", "hostDecision": "allow"}),
            )
            .await
            .unwrap();
        assert_eq!(
            *ruling.outcome(),
            Outcome::Permission {
                plugin: "wasm".into(),
                allow: false,
                overrode_host_deny: false
            }
        );
    }

    #[tokio::test]
    async fn slot_owner_runs_after_the_chain_and_has_the_final_say() {
        let (_, chain) = member(
            ScriptedRuntime::new(
                "chain",
                &[(
                    P::SystemPromptBuild,
                    replace(r#"{"prompt":"chain","workspaceRoot":"/w"}"#),
                )],
            ),
            -100,
            false,
        );
        let (owner_rt, owner) = member(
            ScriptedRuntime::new(
                "owner",
                &[(
                    P::SystemPromptBuild,
                    replace(r#"{"prompt":"owner","workspaceRoot":"/w"}"#),
                )],
            )
            .owning(&[Slot::SystemPrompt]),
            100,
            false,
        );
        let d = dispatcher(vec![owner, chain]);
        let ruling = d
            .intercept(
                P::SystemPromptBuild,
                json!({"prompt": "host", "workspaceRoot": "/w"}),
            )
            .await
            .unwrap();
        assert_eq!(ruling.payload()["prompt"], "owner");
        assert_eq!(ruling.steps().last().unwrap().role, StepRole::Strategy);
        // The owner saw the chain's replacement and was called once.
        assert_eq!(owner_rt.seen().len(), 1);
        assert!(owner_rt.seen()[0].1.contains("chain"));
        assert!(d.is_required_class("owner"));
    }

    #[tokio::test]
    async fn strategy_continue_keeps_host_default_block_and_errors_are_fatal() {
        let owner = |answer: Answer| {
            member(
                ScriptedRuntime::new("owner", &[(P::ContextPrepare, answer)])
                    .owning(&[Slot::Context]),
                0,
                false,
            )
            .1
        };
        let payload = json!({"messages": []});
        let ruling = dispatcher(vec![owner(cont())])
            .intercept(P::ContextPrepare, payload.clone())
            .await
            .unwrap();
        assert_eq!(*ruling.payload(), payload);
        assert!(!ruling.replaced());

        let error = dispatcher(vec![owner(block("mine"))])
            .intercept(P::ContextPrepare, payload.clone())
            .await
            .unwrap_err();
        assert!(
            matches!(*error, DispatchError::StrategyBlocked { ref slot, .. } if slot == "context"),
            "{error:?}"
        );

        for answer in [allow(), Answer::Fail(RuntimeErrorKind::Crashed)] {
            let error = dispatcher(vec![owner(answer)])
                .intercept(P::ContextPrepare, payload.clone())
                .await
                .unwrap_err();
            assert!(
                matches!(
                    *error,
                    DispatchError::MemberFailed {
                        class: "slot owner",
                        ..
                    }
                ),
                "{error:?}"
            );
        }
    }

    #[tokio::test]
    async fn tool_slot_owner_is_the_strategy_of_that_tool_only() {
        let (owner_rt, owner) = member(
            ScriptedRuntime::new("tools", &[]).owning(&[Slot::Tool("shell".into())]),
            0,
            false,
        );
        let d = dispatcher(vec![owner]);
        d.intercept_tool(P::ToolBefore, "read", json!({"name": "read"}))
            .await
            .unwrap();
        assert!(owner_rt.seen().is_empty());
        let ruling = d
            .intercept_tool(P::ToolBefore, "shell", json!({"name": "shell"}))
            .await
            .unwrap();
        assert_eq!(ruling.steps().len(), 1);
        assert_eq!(owner_rt.seen().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn hanging_optional_member_times_out_and_is_skipped_required_fails() {
        let (_, slow) = member(
            ScriptedRuntime::new("slow", &[(P::InputReceive, Answer::Hang)]),
            0,
            false,
        );
        let (_, next) = member(
            ScriptedRuntime::new("next", &[(P::InputReceive, replace(r#"{"text":"ok"}"#))]),
            1,
            false,
        );
        let d = dispatcher(vec![slow, next]);
        let ruling = d
            .intercept(P::InputReceive, json!({"text": "x"}))
            .await
            .unwrap();
        assert_eq!(*ruling.payload(), json!({"text": "ok"}));
        let StepResult::Skipped { why } = &ruling.steps()[0].result else {
            panic!("{:?}", ruling.steps())
        };
        assert!(why.contains("5000 ms"), "{why}");

        let (_, slow) = member(
            ScriptedRuntime::new("slow", &[(P::SessionStart, Answer::Hang)]),
            0,
            true,
        );
        let error = dispatcher(vec![slow])
            .intercept(P::SessionStart, json!({"phase": "start"}))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("30000 ms"), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn manifest_timeout_override_applies_and_is_clamped() {
        let runtime = Arc::new(ScriptedRuntime::new(
            "slow",
            &[(P::InputReceive, Answer::Hang)],
        ));
        let member = |ms| ChainMember {
            runtime: runtime.clone(),
            priority: 0,
            required: true,
            timeout_millis: Some(ms),
        };
        let error = dispatcher(vec![member(1200)])
            .intercept(P::InputReceive, json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("1200 ms"), "{error}");
        let error = dispatcher(vec![member(600_000)])
            .intercept(P::InputReceive, json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("60000 ms"), "{error}");
    }

    #[tokio::test]
    async fn events_fan_out_to_members_and_slot_owners_once_each() {
        let (a_rt, a) = member(
            ScriptedRuntime::new("a", &[(P::ContextPrepare, cont())]),
            0,
            false,
        );
        let (owner_rt, owner) = member(
            ScriptedRuntime::new("owner", &[(P::ContextPrepare, cont())]).owning(&[Slot::Context]),
            0,
            false,
        );
        let (other_rt, other) = member(
            ScriptedRuntime::new("other", &[(P::ToolAfter, cont())]),
            0,
            false,
        );
        let d = dispatcher(vec![a, owner, other]);
        d.observe(P::ContextPrepare, &json!({"messages": []}));
        assert_eq!(a_rt.observed.lock().unwrap().len(), 1);
        assert_eq!(owner_rt.observed.lock().unwrap().len(), 1);
        assert!(other_rt.observed.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn dropped_events_warn_once() {
        let mut runtime = ScriptedRuntime::new("full", &[(P::FrontendEvent, cont())]);
        runtime.observe_full = true;
        let (_, m) = member(runtime, 0, false);
        let d = dispatcher(vec![m]);
        for _ in 0..5 {
            d.observe(P::FrontendEvent, &json!({"kind": "k"}));
        }
        let warnings = d.diagnostics().warnings();
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].kind, "event_dropped");
    }

    #[tokio::test]
    async fn replacement_that_does_not_fit_the_host_type_is_a_violation() {
        // Valid for the point's DTO, but the host's own type needs `lang`.
        #[derive(Serialize, serde::Deserialize)]
        struct Input {
            text: String,
            lang: String,
        }
        let (_, m) = member(
            ScriptedRuntime::new("a", &[(P::InputReceive, replace(r#"{"text":"ok"}"#))]),
            0,
            false,
        );
        let result = dispatcher(vec![m])
            .intercept(
                P::InputReceive,
                Input {
                    text: "x".into(),
                    lang: "en".into(),
                },
            )
            .await;
        let Err(DispatchError::MemberFailed { plugin, class, .. }) = result.map_err(|e| *e) else {
            panic!("expected a violation")
        };
        assert_eq!((plugin.as_str(), class), ("a", "replacer"));
        let _ = Value::Null;
    }
}
