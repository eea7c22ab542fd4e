//! One turn of a session, through every hook point in order, with the
//! declarative hooks at their events and the host's tools behind the
//! permission decision.
//!
//! Order: input.receive → UserPromptSubmit hooks → agent.before_start →
//! system_prompt.build → context.prepare → provider rounds
//! (provider.request, the stream, provider.response; for each tool call
//! tool.before → PreToolUse hooks → the permission decision → the call →
//! tool.after → PostToolUse hooks) → Stop hooks → [PreCompact hooks,
//! compaction.prepare, compaction.complete] → session.save. A
//! `frontend.event` observation announces the finished turn.
//!
//! At each point where both exist, extension interceptors rule first (they
//! may rewrite), then hooks judge the final payload; a refusal from either
//! side stops the operation. The permission decision: the host's own
//! (configured rules, the session's grants, read-only tools, else the
//! question — answered by a PermissionRequest hook if one decides, else by
//! the user), then `permission.decision` interceptors (a full-trust `allow`
//! may override a host deny, audited) — except that a hook's deny is final.

use std::collections::BTreeSet;
use std::sync::Arc;

use reasonix_protocol::points::HookPoint;
use reasonix_protocol::types::{
    ProviderMessage, ProviderRequest, ProviderRole, ProviderToolSchema,
};
use serde::Serialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::events::{Answer, InputSource, Question, SessionEvent};
use super::hooks::{self, HookOutcome};
use super::inventory::Inventory;
use super::report::{
    HookRecord, PointRecord, RuntimeLog, RuntimeSummary, ToolRecord, TurnReport, TurnStatus,
};
use super::{Interaction, Session, SessionError, TurnOptions, file, source, tools};
use crate::config::RuleVerdict;
use crate::hooks::Payload;
use crate::proxy::{
    AllowAll, CapabilityProxy, PROXY_TOOL, PermissionCheck, PermissionQuery, PermissionVerdict,
    ProxyAction, ProxyContext, ToolPolicy,
};
use crate::runtime::StreamOpen;
use crate::runtime::dispatcher::{DispatchError, Outcome, Ruling};
use crate::runtime::generation::Generation;
use crate::runtime::provider::{ProviderStream, new_stream_id};
use crate::runtime::redaction::clean_text;
use crate::runtime::session_state::{self, AuditEntryRecord, PluginSessionState};
use reasonix_protocol::payloads::{
    AgentStartPayload, CompactionCompletePayload, CompactionPreparePayload, ContextPayload,
    FrontendEventPayload, HostDecision, InputPayload, PermissionPayload, ProviderRequestPayload,
    ProviderResponsePayload, SessionPayload, SystemPromptPayload, ToolAfterPayload,
    ToolBeforePayload,
};

pub use super::echo::{ECHO_MODEL, ScriptedCall};

/// The host's default system prompt.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are Reasonix, a careful coding agent. Answer briefly.";
const MAX_TOKENS: u64 = 4096;
/// Provider rounds one turn may take (each round answers the tool calls of
/// the previous one).
const MAX_ROUNDS: usize = 8;

/// The provider-visible tool list: the host tools plus the stable proxy.
/// It never depends on which plugins are installed or connected.
pub fn provider_tools() -> Vec<ProviderToolSchema> {
    let mut tools: Vec<ProviderToolSchema> = tools::HOST_TOOLS
        .iter()
        .map(|t| ProviderToolSchema {
            name: t.name.to_string(),
            description: Some(t.description.to_string()),
            parameters: raw(t.parameters),
        })
        .collect();
    let (name, description, parameters) = crate::proxy::proxy_tool_schema();
    tools.push(ProviderToolSchema {
        name,
        description: Some(description),
        parameters: raw(&parameters.to_string()),
    });
    tools
}

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_string())
        .or_else(|_| RawValue::from_string("{}".to_string()))
        .unwrap_or_else(|_| unreachable_raw())
}

fn unreachable_raw() -> Box<RawValue> {
    serde_json::value::to_raw_value(&serde_json::Value::Null).unwrap_or_default()
}

/// sha256 over the system prompt and tool schemas of a request: the
/// provider-visible prefix a prompt cache keys on.
pub fn prefix_hash(request: &ProviderRequest) -> String {
    let mut hasher = Sha256::new();
    for message in request
        .messages
        .iter()
        .filter(|m| m.role == Some(ProviderRole::System))
    {
        hasher.update(message.content.as_deref().unwrap_or_default().as_bytes());
        hasher.update([0u8]);
    }
    hasher.update(
        serde_json::to_string(&request.tools)
            .unwrap_or_default()
            .as_bytes(),
    );
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

fn message(role: ProviderRole, content: &str) -> ProviderMessage {
    ProviderMessage {
        role: Some(role),
        content: Some(content.to_string()),
        ..ProviderMessage::default()
    }
}

/// A new session id (`rs-` + 24 hex).
pub fn new_session_id() -> String {
    let stream = new_stream_id();
    format!("rs-{}", &stream[3..])
}

/// Why a turn stopped early: a [`TurnStatus`] other than `Completed`.
type Stop = TurnStatus;

/// The recording side of a turn (also used while opening and closing).
struct Recorder<'a> {
    session: &'a Session,
    generation: Arc<Generation>,
    inventory: Arc<Inventory>,
    session_id: String,
    points: Vec<PointRecord>,
    hooks: Vec<HookRecord>,
    /// Plugins whose failure stopped the operation (their log tails are
    /// reported with it).
    failed: Vec<String>,
}

impl<'a> Recorder<'a> {
    fn new(session: &'a Session, generation: Arc<Generation>) -> Recorder<'a> {
        Recorder {
            inventory: source::inventory_of(&generation),
            session_id: session.session_id(),
            generation,
            session,
            points: Vec::new(),
            hooks: Vec::new(),
            failed: Vec::new(),
        }
    }

    fn push_point(&mut self, record: PointRecord) {
        self.session.emit(SessionEvent::Point {
            record: record.clone(),
        });
        self.points.push(record);
    }

    fn record<T>(
        &mut self,
        point: HookPoint,
        tool: Option<&str>,
        ruling: &Ruling<T>,
        note: Option<String>,
    ) {
        self.push_point(PointRecord {
            point: point.as_str(),
            tool: tool.map(str::to_string),
            steps: ruling.steps().to_vec(),
            replaced: ruling.replaced(),
            outcome: ruling.outcome().clone(),
            note,
        });
    }

    fn failure(&mut self, point: HookPoint, tool: Option<&str>, error: &DispatchError) -> Stop {
        if let DispatchError::MemberFailed { plugin, .. }
        | DispatchError::StrategyBlocked { plugin, .. } = error
        {
            self.failed.push(plugin.clone());
        }
        self.push_point(PointRecord {
            point: point.as_str(),
            tool: tool.map(str::to_string),
            steps: error.steps().to_vec(),
            replaced: false,
            outcome: Outcome::Continue,
            note: Some(error.to_string()),
        });
        Stop::Failed {
            point: point.as_str(),
            error: error.to_string(),
        }
    }

    /// Intercept a point; a block or a failure stops the operation.
    async fn point<T>(
        &mut self,
        point: HookPoint,
        payload: T,
        note: impl Fn(&T) -> Option<String>,
    ) -> Result<T, Stop>
    where
        T: Serialize + serde::de::DeserializeOwned,
    {
        match self.generation.dispatcher.intercept(point, payload).await {
            Ok(ruling) => {
                let text = if ruling.replaced() {
                    note(ruling.payload())
                } else {
                    None
                };
                self.record(point, None, &ruling, text);
                if let Outcome::Blocked { plugin, reason } = ruling.outcome() {
                    return Err(Stop::Blocked {
                        point: point.as_str(),
                        plugin: plugin.clone(),
                        reason: reason.clone(),
                    });
                }
                Ok(ruling.into_payload())
            }
            Err(error) => Err(self.failure(point, None, &error)),
        }
    }

    /// Run the hooks of `payload.event` and record them.
    async fn hooks(&mut self, mut payload: Payload, tool: Option<&str>) -> HookOutcome {
        if self.inventory.hooks_for(&payload.event).next().is_none() {
            return HookOutcome::default();
        }
        payload.session_id = self.session_id.clone();
        payload.cwd = self.session.workspace().display().to_string();
        let outcome = hooks::run(&self.inventory, payload, tool).await;
        for record in &outcome.records {
            self.session.emit(SessionEvent::Hook {
                record: record.clone(),
            });
        }
        self.hooks.extend(outcome.records.iter().cloned());
        outcome
    }
}

/// Opening: `session.start` (or `session.load`) and the SessionStart hooks,
/// whose output becomes context for the first turn.
pub(super) async fn open_session(session: &Session, loaded: bool) -> Result<(), SessionError> {
    let mut rec = Recorder::new(session, session.generation());
    let session_path = session_path(session);
    let (point, phase) = if loaded {
        (HookPoint::SessionLoad, "load")
    } else {
        (HookPoint::SessionStart, "start")
    };
    let opened = rec
        .point(
            point,
            SessionPayload {
                session_path,
                phase: phase.to_string(),
            },
            |_| None,
        )
        .await;
    // Claude Code mods start after the extensions' session point, before
    // the SessionStart hooks.
    if opened.is_ok() {
        session.mods().open(session, loaded).await;
    }
    let outcome = rec
        .hooks(
            Payload {
                event: "SessionStart".into(),
                source: if loaded { "resume" } else { "startup" }.into(),
                ..Payload::default()
            },
            None,
        )
        .await;
    let context: Vec<(String, String)> = outcome
        .records
        .iter()
        .filter_map(|r| {
            hooks::context_of(r).map(|text| (format!("{} SessionStart hook", r.plugin), text))
        })
        .collect();
    let mut state = session.state();
    state.pending_context = context;
    state.opening = rec.points;
    state.opening_hooks = rec.hooks;
    drop(state);
    match opened {
        Ok(_) => Ok(()),
        Err(TurnStatus::Blocked { plugin, reason, .. }) => Err(SessionError::Runtime(format!(
            "{plugin} refused to open the session: {reason}"
        ))),
        Err(TurnStatus::Failed { error, .. }) => Err(SessionError::Runtime(error)),
        Err(TurnStatus::Cancelled | TurnStatus::Completed) => Err(SessionError::Closed),
    }
}

/// Closing: `session.end` and the SessionEnd hooks.
pub(super) async fn close_session(session: &Session) -> Vec<PointRecord> {
    let mut rec = Recorder::new(session, session.generation());
    let _ = rec
        .point(
            HookPoint::SessionEnd,
            SessionPayload {
                session_path: session_path(session),
                phase: "end".to_string(),
            },
            |_| None,
        )
        .await;
    session.mods().close(session).await;
    rec.hooks(
        Payload {
            event: "SessionEnd".into(),
            reason: "exit".into(),
            ..Payload::default()
        },
        None,
    )
    .await;
    rec.points
}

fn session_path(session: &Session) -> String {
    session
        .inner
        .options
        .session_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// The tool a call reaches: for `use_capability {"name": …}` the inner
/// capability and its arguments, else the call itself.
struct Effective {
    name: String,
    arguments: String,
    via_proxy: bool,
}

fn effective(name: &str, arguments: &str) -> Effective {
    // Only a call reaches a capability; list, inspect and decline are the
    // proxy's own answers.
    if name == PROXY_TOOL
        && let Ok(serde_json::Value::Object(args)) = serde_json::from_str(arguments)
        && args
            .get("action")
            .is_none_or(|a| a.as_str() == Some("call"))
        && let Some(inner) = args.get("name").and_then(|n| n.as_str())
    {
        return Effective {
            name: inner.to_string(),
            arguments: args
                .get("arguments")
                .map(|a| a.to_string())
                .unwrap_or_else(|| "{}".to_string()),
            via_proxy: true,
        };
    }
    Effective {
        name: name.to_string(),
        arguments: arguments.to_string(),
        via_proxy: false,
    }
}

struct Turn<'a> {
    rec: Recorder<'a>,
    cancel: CancellationToken,
    tool_calls: Vec<ToolRecord>,
    grants: BTreeSet<String>,
    turn: u64,
}

impl<'a> Turn<'a> {
    fn session(&self) -> &'a Session {
        self.rec.session
    }

    fn check_cancel(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            Err(Stop::Cancelled)
        } else {
            Ok(())
        }
    }

    async fn point<T>(
        &mut self,
        point: HookPoint,
        payload: T,
        note: impl Fn(&T) -> Option<String>,
    ) -> Result<T, Stop>
    where
        T: Serialize + serde::de::DeserializeOwned,
    {
        self.check_cancel()?;
        self.rec.point(point, payload, note).await
    }

    /// One provider round: provider.request, the stream, provider.response.
    async fn provider_round(
        &mut self,
        model: &str,
        request: ProviderRequest,
        prefix: &mut Option<String>,
    ) -> Result<ProviderResponsePayload, Stop> {
        let original = request.clone();
        let request = self
            .point(
                HookPoint::ProviderRequest,
                ProviderRequestPayload {
                    request: Some(request),
                },
                |_| Some("request replaced".to_string()),
            )
            .await?
            .request
            .unwrap_or(original);
        if prefix.is_none() {
            *prefix = Some(prefix_hash(&request));
        }
        self.check_cancel()?;
        let response = if model == ECHO_MODEL {
            let response =
                super::echo::respond(&request, &self.session().inner.options.scripted_calls);
            self.session().emit(SessionEvent::AssistantDelta {
                text: response.text.clone(),
            });
            response
        } else {
            self.stream_from_extension(model, request).await?
        };
        let response = self
            .point(HookPoint::ProviderResponse, response, |r| {
                Some(format!("response replaced: {:?}", short(&r.text)))
            })
            .await?;
        Ok(response)
    }

    async fn stream_from_extension(
        &mut self,
        model_ref: &str,
        request: ProviderRequest,
    ) -> Result<ProviderResponsePayload, Stop> {
        let fail = |error: String| Stop::Failed {
            point: "provider.stream",
            error,
        };
        let generation = Arc::clone(&self.rec.generation);
        let Some(entry) = generation.provider(model_ref) else {
            let available = self.session().models().join(", ");
            return Err(fail(format!(
                "unknown model `{model_ref}` (available: {available}); there is no fallback to another model"
            )));
        };
        let Some(runtime) = generation.runtime(&entry.plugin) else {
            return Err(fail(format!(
                "the runtime of `{}` is not running",
                entry.plugin
            )));
        };
        let open = StreamOpen {
            stream_id: new_stream_id(),
            provider_ref: entry.provider_ref().to_string(),
            model: entry.model(),
            effort: entry.descriptor.default_effort.clone(),
            request: serde_json::value::to_raw_value(&request).map_err(|e| fail(e.to_string()))?,
            generation: generation.number,
        };
        let mut stream = ProviderStream::open(Arc::clone(runtime), open)
            .await
            .map_err(|e| {
                fail(format!(
                    "{model_ref}: {e}; there is no fallback to another model"
                ))
            })?;
        let mut assembled = crate::runtime::provider::AssembledResponse::default();
        loop {
            let next = tokio::select! {
                next = stream.next() => next,
                _ = self.cancel.cancelled() => {
                    // Tell the provider (best effort, bounded) and stop.
                    stream.cancel().await;
                    return Err(Stop::Cancelled);
                }
            };
            match next {
                None => break,
                Some(Ok(chunk)) => {
                    if let Some(text) = chunk.text.as_deref().filter(|t| !t.is_empty()) {
                        self.session().emit(SessionEvent::AssistantDelta {
                            text: text.to_string(),
                        });
                    }
                    assembled.absorb(chunk);
                }
                Some(Err(failure)) => {
                    return Err(fail(format!(
                        "{model_ref}: {failure}; there is no fallback to another model"
                    )));
                }
            }
        }
        assembled.finish();
        Ok(ProviderResponsePayload {
            text: assembled.text,
            reasoning: assembled.reasoning,
            signature: assembled.signature,
            calls: assembled.calls,
            usage: assembled.usage,
        })
    }

    fn read_only(&self, name: &str) -> bool {
        if let Some(tool) = tools::find(name) {
            return tool.read_only;
        }
        if name == PROXY_TOOL {
            // list / inspect / decline change nothing.
            return true;
        }
        if name.starts_with("mcp__") {
            // The server's live (or cached) hint; the proxy checks it again
            // right before the dispatch.
            return self
                .session()
                .inner
                .mcp
                .catalog()
                .iter()
                .any(|t| t.capability == name && t.read_only_hint == Some(true));
        }
        self.rec
            .generation
            .capabilities
            .get(name)
            .is_some_and(|c| c.read_only)
    }

    fn kind(&self, name: &str, via_proxy: bool) -> &'static str {
        if tools::find(name).is_some() {
            "host"
        } else if name.starts_with("mcp__") {
            "mcp"
        } else if name == PROXY_TOOL && !via_proxy {
            "proxy"
        } else {
            "extension"
        }
    }

    fn push_tool(&mut self, record: ToolRecord) {
        self.session().emit(SessionEvent::ToolResult {
            record: record.clone(),
        });
        self.tool_calls.push(record);
    }

    /// tool.before → PreToolUse → permission → the call → tool.after →
    /// PostToolUse.
    async fn tool_call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> Result<ProviderMessage, Stop> {
        self.check_cancel()?;
        self.session().emit(SessionEvent::ToolCall {
            call_id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        });
        let target = effective(name, arguments);
        let generation = Arc::clone(&self.rec.generation);
        let dispatcher = &generation.dispatcher;
        let kind = self.kind(&target.name, target.via_proxy);
        let blocked = |this: &mut Self, decided_by: String, result: String| {
            this.push_tool(ToolRecord {
                call_id: call_id.to_string(),
                name: target.name.clone(),
                arguments: target.arguments.clone(),
                kind,
                host_decision: "-",
                decision: "blocked",
                decided_by: Some(decided_by),
                result: result.clone(),
                is_error: true,
            });
            tool_message(call_id, name, &result)
        };

        // 1. Extension interceptors (may rewrite the arguments).
        let before = ToolBeforePayload {
            name: target.name.clone(),
            arguments: target.arguments.clone(),
            call_id: call_id.to_string(),
        };
        let before = match dispatcher
            .intercept_tool(HookPoint::ToolBefore, &target.name, before)
            .await
        {
            Ok(ruling) => {
                let note = ruling
                    .replaced()
                    .then(|| format!("arguments → {}", short(&ruling.payload().arguments)));
                self.rec
                    .record(HookPoint::ToolBefore, Some(&target.name), &ruling, note);
                if let Outcome::Blocked { plugin, reason } = ruling.outcome() {
                    let result = format!("blocked by {plugin}: {reason}");
                    return Ok(blocked(self, plugin.clone(), result));
                }
                ruling.into_payload()
            }
            Err(error) => {
                return Err(self
                    .rec
                    .failure(HookPoint::ToolBefore, Some(&target.name), &error));
            }
        };
        let tool = before.name.clone();
        // Mods: deny, rewrite the arguments, or answer in place of the tool.
        let call = self
            .session()
            .mods()
            .tool_call(self.session(), &tool, &before.arguments)
            .await;
        for record in call.records {
            self.rec.push_point(record);
        }
        let args = match call.verdict {
            crate::mods::CallVerdict::Continue(args) => args,
            crate::mods::CallVerdict::Deny { plugin, reason } => {
                let result = format!("denied by mod {plugin}: {reason}");
                return Ok(blocked(self, format!("mod {plugin}"), result));
            }
            crate::mods::CallVerdict::Answer { plugin, result } => {
                self.push_tool(ToolRecord {
                    call_id: call_id.to_string(),
                    name: tool.clone(),
                    arguments: before.arguments.clone(),
                    kind,
                    host_decision: "-",
                    decision: "answered",
                    decided_by: Some(format!("mod {plugin}")),
                    result: result.clone(),
                    is_error: false,
                });
                return Ok(tool_message(call_id, name, &result));
            }
        };
        let args_value: serde_json::Value =
            serde_json::from_str(&args).unwrap_or(serde_json::Value::Null);

        // 2. PreToolUse hooks judge the final call.
        let pre = self
            .rec
            .hooks(
                Payload {
                    event: "PreToolUse".into(),
                    call_id: call_id.to_string(),
                    tool_name: tool.clone(),
                    tool_args: Some(args_value.clone()),
                    turn: self.turn as i64,
                    ..Payload::default()
                },
                Some(&tool),
            )
            .await;
        if let Some((plugin, reason)) = pre.refused {
            let result = format!("denied by a PreToolUse hook of {plugin}: {reason}");
            return Ok(blocked(self, format!("hook {plugin}"), result));
        }
        self.check_cancel()?;

        // 3. The permission decision. Mods may deny or ask, never allow.
        let read_only = self.read_only(&tool);
        let check = self
            .session()
            .mods()
            .tool_check(self.session(), &tool, &args, read_only)
            .await;
        for record in check.records {
            self.rec.push_point(record);
        }
        if let crate::mods::CheckVerdict::Deny { plugin, reason } = check.verdict {
            let result = format!("denied by mod {plugin}: {reason}");
            return Ok(blocked(self, format!("mod {plugin}"), result));
        }
        let ask = matches!(check.verdict, crate::mods::CheckVerdict::Ask { .. });
        let (host_decision, mut allowed, mut decided_by, final_deny) = self
            .host_decision(call_id, &tool, &args, &args_value, read_only, ask)
            .await?;
        if !final_deny {
            let permission = PermissionPayload {
                name: tool.clone(),
                arguments: args.clone(),
                read_only,
                host_decision: Some(if allowed {
                    HostDecision::Allow
                } else {
                    HostDecision::Deny
                }),
            };
            match dispatcher
                .intercept(HookPoint::PermissionDecision, permission)
                .await
            {
                Ok(ruling) => {
                    match ruling.outcome() {
                        Outcome::Permission { allow, plugin, .. } => {
                            if *allow != allowed {
                                decided_by = Some(plugin.clone());
                            }
                            allowed = *allow;
                        }
                        Outcome::Blocked { plugin, .. } => {
                            allowed = false;
                            decided_by = Some(plugin.clone());
                        }
                        // A replaced payload cannot flip the decision; only
                        // an explicit allow/deny can.
                        Outcome::Continue => {}
                    }
                    self.rec
                        .record(HookPoint::PermissionDecision, Some(&tool), &ruling, None);
                }
                Err(error) => {
                    return Err(self.rec.failure(
                        HookPoint::PermissionDecision,
                        Some(&tool),
                        &error,
                    ));
                }
            }
        }
        self.check_cancel()?;

        // 4. The call.
        let (result, is_error) = if allowed {
            self.execute(&tool, &args, name, arguments, target.via_proxy)
                .await?
        } else {
            (
                format!(
                    "permission denied for `{tool}`{}",
                    decided_by
                        .as_deref()
                        .map(|d| format!(" (by {d})"))
                        .unwrap_or_default()
                ),
                true,
            )
        };

        // 5. tool.after interceptors, then PostToolUse hooks.
        let after = ToolAfterPayload {
            name: tool.clone(),
            arguments: args.clone(),
            result,
            is_error,
            call_id: call_id.to_string(),
        };
        let after = match dispatcher
            .intercept_tool(HookPoint::ToolAfter, &tool, after)
            .await
        {
            Ok(ruling) => {
                let note = ruling
                    .replaced()
                    .then(|| format!("result → {}", short(&ruling.payload().result)));
                self.rec
                    .record(HookPoint::ToolAfter, Some(&tool), &ruling, note);
                match ruling.outcome() {
                    Outcome::Blocked { plugin, reason } => {
                        let result = format!("result withheld by {plugin}: {reason}");
                        ToolAfterPayload {
                            result,
                            is_error: true,
                            ..ruling.into_payload()
                        }
                    }
                    _ => ruling.into_payload(),
                }
            }
            Err(error) => {
                return Err(self.rec.failure(HookPoint::ToolAfter, Some(&tool), &error));
            }
        };
        if allowed {
            self.rec
                .hooks(
                    Payload {
                        event: if after.is_error {
                            "PostToolUseFailure"
                        } else {
                            "PostToolUse"
                        }
                        .into(),
                        call_id: call_id.to_string(),
                        tool_name: tool.clone(),
                        tool_args: Some(args_value),
                        tool_result: after.result.clone(),
                        error: if after.is_error {
                            after.result.clone()
                        } else {
                            String::new()
                        },
                        turn: self.turn as i64,
                        ..Payload::default()
                    },
                    Some(&tool),
                )
                .await;
        }
        self.push_tool(ToolRecord {
            call_id: call_id.to_string(),
            name: tool.clone(),
            arguments: args,
            kind,
            host_decision,
            decision: if allowed { "allow" } else { "deny" },
            decided_by,
            result: after.result.clone(),
            is_error: after.is_error,
        });
        Ok(tool_message(call_id, name, &after.result))
    }

    /// The host's decision: `(label, allowed, decided_by, final)`; `final`
    /// when a hook denied (extensions cannot overturn a hook's deny).
    /// `ask` (a mod's `tool.check`) skips the allow rules, grants and
    /// read-only pass: the question is asked.
    async fn host_decision(
        &mut self,
        call_id: &str,
        tool: &str,
        args: &str,
        args_value: &serde_json::Value,
        read_only: bool,
        ask: bool,
    ) -> Result<(&'static str, bool, Option<String>, bool), Stop> {
        let session = self.session();
        if session.inner.options.read_only && !read_only {
            return Ok((
                "deny",
                false,
                Some("the read-only session".to_string()),
                false,
            ));
        }
        let scripted_deny = match &session.inner.options.interaction {
            Interaction::Scripted { deny, .. } => deny.contains(tool),
            Interaction::Interactive => false,
        };
        match session.inner.config.permissions.verdict(tool) {
            RuleVerdict::Deny => {
                return Ok(("deny", false, Some("the user config".to_string()), false));
            }
            _ if scripted_deny => return Ok(("deny", false, None, false)),
            RuleVerdict::Allow if !ask => return Ok(("allow", true, None, false)),
            _ => {}
        }
        if !ask && (self.grants.contains(tool) || read_only) {
            return Ok(("allow", true, None, false));
        }
        // The dialog. PermissionRequest hooks answer it first.
        let hooks = self
            .rec
            .hooks(
                Payload {
                    event: "PermissionRequest".into(),
                    call_id: call_id.to_string(),
                    tool_name: tool.to_string(),
                    tool_args: Some(args_value.clone()),
                    turn: self.turn as i64,
                    ..Payload::default()
                },
                Some(tool),
            )
            .await;
        if let Some((plugin, _)) = hooks.refused {
            return Ok(("ask", false, Some(format!("hook {plugin}")), true));
        }
        if let Some(plugin) = hooks.allowed {
            return Ok(("ask", true, Some(format!("hook {plugin}")), false));
        }
        match &session.inner.options.interaction {
            // A scripted approval stands for the session, as a person's
            // "always" would.
            Interaction::Scripted { .. } => {
                self.grants.insert(tool.to_string());
                Ok(("ask", true, None, false))
            }
            Interaction::Interactive => {
                self.rec
                    .hooks(
                        Payload {
                            event: "Notification".into(),
                            message: format!("Reasonix needs your permission to use {tool}"),
                            notification_type: "permission_prompt".into(),
                            ..Payload::default()
                        },
                        None,
                    )
                    .await;
                let (id, rx) = session.inner.questions.ask(
                    &session.inner.bus,
                    Question::Permission {
                        call_id: call_id.to_string(),
                        tool: tool.to_string(),
                        arguments: clean_text(args),
                        read_only,
                    },
                );
                let answer = tokio::select! {
                    answer = rx => answer.ok(),
                    _ = self.cancel.cancelled() => None,
                };
                session.inner.questions.forget(&id);
                session.emit(SessionEvent::QuestionClosed { id });
                match answer {
                    Some(Answer::Permission { allow, always }) => {
                        if allow && always {
                            self.grants.insert(tool.to_string());
                        }
                        Ok(("ask", allow, Some("the user".to_string()), false))
                    }
                    Some(Answer::Form { .. }) => {
                        Ok(("ask", false, Some("the user".to_string()), false))
                    }
                    None => Err(Stop::Cancelled),
                }
            }
        }
    }

    async fn execute(
        &mut self,
        tool: &str,
        args: &str,
        called: &str,
        called_args: &str,
        via_proxy: bool,
    ) -> Result<(String, bool), Stop> {
        let session = self.session();
        if tools::find(tool).is_some() {
            let result = tools::run(&session.inner.tool_env, tool, args, &self.cancel).await;
            if self.cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            return Ok(match result {
                Ok(content) => (content, false),
                Err(content) => (content, true),
            });
        }
        if let Some(reply) = session.mods().call_tool(tool, args).await {
            return Ok(reply);
        }
        let generation = Arc::clone(&self.rec.generation);
        let proxy = CapabilityProxy::new(&generation.capabilities, Some(&session.inner.mcp));
        let context = ProxyContext {
            policy: if session.inner.options.read_only {
                ToolPolicy::ReadOnly
            } else {
                ToolPolicy::Full
            },
        };
        if called == PROXY_TOOL && !via_proxy {
            // list, inspect, decline (or a malformed request): answered by
            // the proxy, nothing is dispatched, so no permission is asked.
            // A listing also names the running mods' tools.
            let reply = proxy.handle(called_args, &context, &AllowAll).await;
            if !reply.is_error
                && matches!(reply.action, Some(ProxyAction::List))
                && let Ok(mut listing) = serde_json::from_str::<serde_json::Value>(&reply.content)
            {
                session.mods().extend_listing(&mut listing);
                return Ok((listing.to_string(), false));
            }
            return Ok((reply.content, reply.is_error));
        }
        // The permission was decided above; the proxy re-checks enablement,
        // the connection identity, the policy and the live hints right
        // before the dispatch, and refuses a call whose hints no longer
        // match what was decided on.
        let decided = Decided {
            read_only: self.read_only(tool),
        };
        let reply = tokio::select! {
            reply = proxy.call(tool, args, &context, &decided) => reply,
            _ = self.cancel.cancelled() => return Err(Stop::Cancelled),
        };
        // The proxy already notes a replay or restart in the content.
        Ok((reply.content, reply.is_error))
    }
}

/// The permission check the proxy runs right before a dispatch, after the
/// turn's permission step allowed the call: the live hints must still be
/// what that decision assumed.
struct Decided {
    read_only: bool,
}

impl PermissionCheck for Decided {
    fn check<'a>(
        &'a self,
        query: &'a PermissionQuery,
    ) -> crate::runtime::BoxFuture<'a, PermissionVerdict> {
        let verdict = if self.read_only && !query.read_only {
            PermissionVerdict {
                allow: false,
                reason: Some(format!(
                    "`{}` is no longer marked read-only; it was allowed as read-only, so it \
                     must be asked again",
                    query.capability
                )),
            }
        } else {
            PermissionVerdict {
                allow: true,
                reason: None,
            }
        };
        Box::pin(std::future::ready(verdict))
    }
}

fn tool_message(call_id: &str, name: &str, content: &str) -> ProviderMessage {
    ProviderMessage {
        role: Some(ProviderRole::Tool),
        content: Some(content.to_string()),
        tool_call_id: Some(call_id.to_string()),
        name: Some(name.to_string()),
        ..ProviderMessage::default()
    }
}

fn short(text: &str) -> String {
    let cleaned = clean_text(text);
    let mut out: String = cleaned.chars().take(60).collect();
    if cleaned.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// The host's compaction: a deterministic digest of the conversation.
fn summarize(messages: &[ProviderMessage]) -> String {
    let count = |role| messages.iter().filter(|m| m.role == Some(role)).count();
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == Some(ProviderRole::Assistant))
        .and_then(|m| m.content.as_deref())
        .unwrap_or_default();
    format!(
        "{} messages ({} from the user, {} tool results); last answer: {}",
        messages.len(),
        count(ProviderRole::User),
        count(ProviderRole::Tool),
        last.lines().next().unwrap_or_default()
    )
}

/// Run one turn on the session's current generation.
pub(super) async fn run(
    session: &Session,
    input: String,
    source: InputSource,
    options: TurnOptions,
    cancel: CancellationToken,
) -> TurnReport {
    let host = &session.inner.host;
    let pin = match host.begin_turn() {
        Ok(pin) => pin,
        Err(busy) => {
            return empty_report(
                session,
                TurnStatus::Failed {
                    point: "turn",
                    error: busy.to_string(),
                },
            );
        }
    };
    let generation = Arc::clone(&pin.generation);
    let (turn_no, model, context) = {
        let mut state = session.state();
        state.turns += 1;
        (
            state.turns,
            state.model.clone(),
            state.pending_context.clone(),
        )
    };
    session.emit(SessionEvent::TurnStarted {
        turn: turn_no,
        generation: generation.number,
        model: model.clone(),
        source,
    });
    let carry = host.carry();
    let mut turn = Turn {
        rec: Recorder::new(session, Arc::clone(&generation)),
        cancel,
        tool_calls: Vec::new(),
        grants: carry.approval_grants.clone(),
        turn: turn_no,
    };
    for record in session
        .mods()
        .turn_start(session, turn_no, source, &model)
        .await
    {
        turn.rec.push_point(record);
    }
    let mut transcript = carry.transcript.clone();
    let mut prefix = None;
    let mut compacted: Option<String> = None;
    let workspace = session.workspace().display().to_string();

    let status: Result<(), Stop> = async {
        let input = turn
            .point(
                HookPoint::InputReceive,
                InputPayload {
                    text: input.clone(),
                },
                |p| Some(format!("input → {:?}", short(&p.text))),
            )
            .await?;
        // Mods: after the interceptors, before the hooks.
        let submitted = session
            .mods()
            .prompt_submit(session, input.text, source)
            .await;
        for record in submitted.records {
            turn.rec.push_point(record);
        }
        if let Some((plugin, reason)) = submitted.dropped {
            return Err(Stop::Blocked {
                point: "prompt.submit",
                plugin: format!("mod {plugin}"),
                reason,
            });
        }
        let input = InputPayload {
            text: submitted.text,
        };
        let prompt_hooks = turn
            .rec
            .hooks(
                Payload {
                    event: "UserPromptSubmit".into(),
                    prompt: input.text.clone(),
                    turn: turn_no as i64,
                    ..Payload::default()
                },
                None,
            )
            .await;
        if let Some((plugin, reason)) = prompt_hooks.refused {
            return Err(Stop::Blocked {
                point: "UserPromptSubmit",
                plugin: format!("hook {plugin}"),
                reason,
            });
        }
        let mut context = context.clone();
        context.extend(submitted.context);
        context.extend(prompt_hooks.records.iter().filter_map(|r| {
            hooks::context_of(r).map(|text| (format!("{} UserPromptSubmit hook", r.plugin), text))
        }));
        let tools = provider_tools();
        turn.point(
            HookPoint::AgentBeforeStart,
            AgentStartPayload {
                model: model.clone(),
                tool_count: tools.len() as i64,
                session_id: turn.rec.session_id.clone(),
            },
            |_| None,
        )
        .await?;
        let system = turn
            .point(
                HookPoint::SystemPromptBuild,
                SystemPromptPayload {
                    prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
                    workspace_root: workspace.clone(),
                },
                |p| Some(format!("prompt → {:?}", short(&p.prompt))),
            )
            .await?;
        // Hook context goes on the turn's tail, never into the cached
        // system prompt.
        for (source, text) in &context {
            session.emit(SessionEvent::Context {
                source: source.clone(),
                text: text.clone(),
            });
            transcript.push(message(
                ProviderRole::User,
                &format!("<context source=\"{source}\">\n{text}\n</context>"),
            ));
        }
        session.emit(SessionEvent::UserMessage {
            text: input.text.clone(),
        });
        transcript.push(message(ProviderRole::User, &input.text));
        let context = turn
            .point(
                HookPoint::ContextPrepare,
                ContextPayload {
                    messages: Some(transcript.clone()),
                },
                |p| {
                    Some(format!(
                        "context → {} messages",
                        p.messages.as_ref().map_or(0, Vec::len)
                    ))
                },
            )
            .await?;
        let build_request = |messages: &[ProviderMessage]| {
            let mut all = vec![message(ProviderRole::System, &system.prompt)];
            all.extend_from_slice(messages);
            ProviderRequest {
                messages: all,
                tools: tools.clone(),
                temperature: None,
                max_tokens: MAX_TOKENS,
                response_format: None,
            }
        };
        let mut messages = context.messages.unwrap_or_default();
        let mut last_text = String::new();
        for _ in 0..MAX_ROUNDS {
            let response = turn
                .provider_round(&model, build_request(&messages), &mut prefix)
                .await?;
            session.mods().note_usage(response.usage.as_ref());
            let mut assistant = message(ProviderRole::Assistant, &response.text);
            assistant.tool_calls = response.calls.clone();
            if !response.reasoning.is_empty() {
                assistant.reasoning_content = Some(response.reasoning.clone());
            }
            session.emit(SessionEvent::AssistantMessage {
                text: response.text.clone(),
            });
            last_text = response.text.clone();
            transcript.push(assistant.clone());
            messages.push(assistant);
            if response.calls.is_empty() {
                break;
            }
            for call in &response.calls {
                let result = turn
                    .tool_call(&call.id, &call.name, &call.arguments)
                    .await?;
                transcript.push(result.clone());
                messages.push(result);
            }
        }
        turn.rec
            .hooks(
                Payload {
                    event: if options.subagent {
                        "SubagentStop"
                    } else {
                        "Stop"
                    }
                    .into(),
                    last_assistant: last_text,
                    turn: turn_no as i64,
                    ..Payload::default()
                },
                None,
            )
            .await;
        if options.compact {
            turn.rec
                .hooks(
                    Payload {
                        event: "PreCompact".into(),
                        trigger: "manual".into(),
                        ..Payload::default()
                    },
                    None,
                )
                .await;
            let prepare = turn
                .point(
                    HookPoint::CompactionPrepare,
                    CompactionPreparePayload {
                        messages: Some(transcript.clone()),
                        guidance: "Summarise the conversation so far in one paragraph.".to_string(),
                    },
                    |p| {
                        Some(format!(
                            "compaction input → {} messages",
                            p.messages.as_ref().map_or(0, Vec::len)
                        ))
                    },
                )
                .await?;
            let summary = summarize(prepare.messages.as_deref().unwrap_or_default());
            let complete = turn
                .point(
                    HookPoint::CompactionComplete,
                    CompactionCompletePayload { summary },
                    |p| Some(format!("summary → {:?}", short(&p.summary))),
                )
                .await?;
            compacted = Some(complete.summary);
        }
        turn.point(
            HookPoint::SessionSave,
            SessionPayload {
                session_path: session_path(session),
                phase: "save".to_string(),
            },
            |_| None,
        )
        .await?;
        Ok(())
    }
    .await;

    let status = status.err().unwrap_or(TurnStatus::Completed);
    generation.dispatcher.observe(
        HookPoint::FrontendEvent,
        &FrontendEventPayload {
            kind: "turn.complete".to_string(),
            text: status.label().to_string(),
            detail: String::new(),
        },
    );

    let mut session_file = None;
    let mut state_file = None;
    if status == TurnStatus::Completed {
        if let Some(summary) = &compacted {
            transcript = vec![message(
                ProviderRole::System,
                &format!("Summary of the earlier conversation: {summary}"),
            )];
        }
        session.state().pending_context.clear();
        host.update_carry(|c| {
            c.transcript = transcript.clone();
            c.approval_grants = turn.grants.clone();
        });
        if let Some(path) = session.inner.options.session_file.clone() {
            match save(session, &generation, &path, &transcript, &turn.grants) {
                Ok(state) => {
                    session_file = Some(path);
                    state_file = Some(state);
                }
                Err(error) => session.warn("session", &error),
            }
        }
    } else {
        // Grants given during a turn that did not complete still stand.
        host.update_carry(|c| c.approval_grants = turn.grants.clone());
    }
    let prefix_hash = prefix.unwrap_or_default();
    let gaps = session.mods().turn_end(session).await;
    session.emit(SessionEvent::TurnEnded {
        turn: turn_no,
        status: status.clone(),
        prefix_hash: prefix_hash.clone(),
        gaps: gaps.clone(),
    });
    let warnings = generation.diagnostics.warnings();
    let logs = runtime_logs(&generation, &turn.rec.failed, &warnings);
    let report = TurnReport {
        generation: generation.number,
        session_id: turn.rec.session_id.clone(),
        runtimes: runtimes(&generation),
        degraded: generation.degraded.clone(),
        model,
        points: turn.rec.points,
        hooks: turn.rec.hooks,
        tool_calls: turn.tool_calls,
        transcript,
        prefix_hash,
        compacted_to: compacted,
        ui: host.ui().updates(),
        ui_actions: host.ui().actions(),
        warnings,
        logs,
        audit: generation.diagnostics.audit_entries(),
        status,
        gaps,
        reload: None,
        session_file,
        state_file,
    };
    drop(generation);
    let reload = host.end_turn(pin).await;
    TurnReport { reload, ..report }
}

/// The log tails of the runtimes that failed or were warned about, so the
/// reason a runtime gave (a guest's panic message, a sidecar's stderr) is
/// shown with its failure.
fn runtime_logs(
    generation: &Generation,
    failed: &[String],
    warnings: &[crate::runtime::diagnostics::Warning],
) -> Vec<RuntimeLog> {
    generation
        .runtimes
        .iter()
        .filter(|r| {
            failed.contains(&r.plugin_id) || warnings.iter().any(|w| w.plugin == r.plugin_id)
        })
        .map(|r| RuntimeLog {
            plugin: r.plugin_id.clone(),
            lines: r.runtime.log_tail(),
        })
        .filter(|log| !log.lines.is_empty())
        .collect()
}

fn runtimes(generation: &Generation) -> Vec<RuntimeSummary> {
    generation
        .runtimes
        .iter()
        .map(|r| RuntimeSummary {
            plugin: r.plugin_id.clone(),
            trust: r.runtime.trust(),
            required: generation.dispatcher.is_required_class(&r.plugin_id),
        })
        .collect()
}

fn empty_report(session: &Session, status: TurnStatus) -> TurnReport {
    let generation = session.generation();
    TurnReport {
        generation: generation.number,
        session_id: session.session_id(),
        runtimes: runtimes(&generation),
        degraded: generation.degraded.clone(),
        model: session.model(),
        points: Vec::new(),
        hooks: Vec::new(),
        tool_calls: Vec::new(),
        transcript: session.transcript(),
        prefix_hash: String::new(),
        compacted_to: None,
        ui: Vec::new(),
        ui_actions: Vec::new(),
        warnings: Vec::new(),
        logs: Vec::new(),
        audit: Vec::new(),
        status,
        gaps: Vec::new(),
        reload: None,
        session_file: None,
        state_file: None,
    }
}

/// Write the session file and its extension state; returns the state path.
fn save(
    session: &Session,
    generation: &Generation,
    path: &std::path::Path,
    transcript: &[ProviderMessage],
    grants: &BTreeSet<String>,
) -> Result<std::path::PathBuf, String> {
    file::write(
        path,
        &file::SessionFile {
            version: file::SESSION_FILE_VERSION,
            session_id: session.session_id(),
            messages: transcript.to_vec(),
            model: Some(session.model()),
        },
    )?;
    let mut state = session_state::load(path).map_err(|e| e.to_string())?;
    state.generation = generation.number;
    state.approval_grants = grants.iter().cloned().collect();
    let surfaces = session.inner.host.ui().surfaces();
    for runtime in &generation.runtimes {
        state.plugins.insert(
            runtime.plugin_id.clone(),
            PluginSessionState {
                version: runtime.version.clone(),
                generation: generation.number,
                surfaces: surfaces
                    .iter()
                    .filter(|s| s.plugin == runtime.plugin_id)
                    .map(|s| (s.surface_id.clone(), s.kind.as_str().to_string()))
                    .collect(),
            },
        );
    }
    state.audit.extend(
        generation
            .diagnostics
            .audit_entries()
            .iter()
            .map(AuditEntryRecord::from),
    );
    session_state::save(path, &state).map_err(|e| e.to_string())
}
