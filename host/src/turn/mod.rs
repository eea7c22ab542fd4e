//! The turn harness: one scripted agent turn through every hook point, in
//! order, against the runtimes of the current generation. `reasonix dev turn`
//! prints what it returns; extension authors use it to watch their extension
//! work without a model.
//!
//! Order: session.start (or session.load for an existing session file),
//! input.receive, agent.before_start, system_prompt.build, context.prepare,
//! provider.request, the provider stream, provider.response, then for each
//! tool call tool.before / permission.decision / tool.after (and one more
//! provider round with the results), compaction.prepare / compaction.complete
//! when asked, session.save, session.end. A `frontend.event` observation
//! announces the finished turn.

pub mod echo;
pub mod host_tools;
pub mod render;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use reasonix_protocol::points::HookPoint;
use reasonix_protocol::types::{
    ProviderMessage, ProviderRequest, ProviderRole, ProviderToolSchema,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::runtime::diagnostics::{AuditEntry, Warning};
use crate::runtime::dispatcher::{ChainStep, DispatchError, Outcome, Ruling};
use crate::runtime::generation::Generation;
use crate::runtime::host::{ReloadOutcome, RuntimeHost};
use crate::runtime::provider::{ProviderStream, new_stream_id};
use crate::runtime::redaction::clean_text;
use crate::runtime::session_state::{self, AuditEntryRecord, PluginSessionState};
use crate::runtime::tools::{self, PROXY_TOOL, Permit};
use crate::runtime::ui::{SurfaceUpdate, UiActionEntry};
use crate::runtime::{StreamOpen, TrustLabel};

use echo::ScriptedCall;
use reasonix_protocol::payloads::{
    AgentStartPayload, CompactionCompletePayload, CompactionPreparePayload, ContextPayload,
    FrontendEventPayload, HostDecision, InputPayload, PermissionPayload, ProviderRequestPayload,
    ProviderResponsePayload, SessionPayload, SystemPromptPayload, ToolAfterPayload,
    ToolBeforePayload,
};

/// The host's default system prompt in scripted turns.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are Reasonix, a careful coding agent. Answer briefly.";
const MAX_TOKENS: u64 = 4096;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    pub input: String,
    /// `None` = the built-in echo provider; else `plugin/<plugin>/<provider>/<model>`.
    pub model: Option<String>,
    pub session: Option<PathBuf>,
    pub calls: Vec<ScriptedCall>,
    /// Tools whose host permission decision is a deny.
    pub deny: BTreeSet<String>,
    pub compact: bool,
    pub workspace_root: PathBuf,
}

/// One hook point as the turn saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PointRecord {
    pub point: &'static str,
    /// The tool this record is about (tool and permission points).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub steps: Vec<ChainStep>,
    pub replaced: bool,
    pub outcome: Outcome,
    /// A short human note about what the point changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One tool call and how it went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRecord {
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    /// `host`, `extension` or `proxy`.
    pub kind: &'static str,
    pub host_decision: &'static str,
    pub decision: &'static str,
    pub result: String,
    pub is_error: bool,
}

/// How the turn ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum TurnStatus {
    Completed,
    Blocked {
        point: &'static str,
        plugin: String,
        reason: String,
    },
    Failed {
        point: &'static str,
        error: String,
    },
}

/// The recent output of a runtime that failed during the turn (a wasm
/// guest's panic message, a sidecar's stderr), redacted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeLog {
    pub plugin: String,
    pub lines: Vec<String>,
}

/// A runtime of the pinned generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeSummary {
    pub plugin: String,
    pub trust: TrustLabel,
    pub required: bool,
}

/// Everything a scripted turn produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnReport {
    pub generation: u64,
    pub session_id: String,
    pub runtimes: Vec<RuntimeSummary>,
    pub degraded: Vec<crate::runtime::generation::Degraded>,
    pub model: String,
    pub points: Vec<PointRecord>,
    pub tool_calls: Vec<ToolRecord>,
    pub transcript: Vec<ProviderMessage>,
    /// sha256 of the provider-visible prefix (system prompt + tool schemas)
    /// of the first provider request.
    pub prefix_hash: String,
    /// The compaction summary, when `--compact` ran; the saved session
    /// continues from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compacted_to: Option<String>,
    pub ui: Vec<SurfaceUpdate>,
    pub ui_actions: Vec<UiActionEntry>,
    pub warnings: Vec<Warning>,
    /// Log tails of the runtimes that failed or were warned about.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<RuntimeLog>,
    pub audit: Vec<AuditEntry>,
    pub status: TurnStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_file: Option<PathBuf>,
}

/// A session file written by `dev turn --session`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionFile {
    pub version: u32,
    pub session_id: String,
    pub messages: Vec<ProviderMessage>,
}

/// Read a session file; `Ok(None)` when it does not exist yet.
pub fn read_session(path: &Path) -> Result<Option<SessionFile>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<SessionFile>(&text)
            .map(Some)
            .map_err(|e| format!("{}: not a Reasonix session file: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The provider-visible tool list: the host tools plus the stable proxy.
/// It never depends on which plugins are installed.
pub fn provider_tools() -> Vec<ProviderToolSchema> {
    let mut tools: Vec<ProviderToolSchema> = host_tools::HOST_TOOLS
        .iter()
        .map(|t| ProviderToolSchema {
            name: t.name.to_string(),
            description: Some(t.description.to_string()),
            parameters: RawValue::from_string(t.parameters.to_string())
                .unwrap_or_else(|_| empty_object()),
        })
        .collect();
    let (name, description, parameters) = tools::proxy_tool_schema();
    tools.push(ProviderToolSchema {
        name,
        description: Some(description),
        parameters: serde_json::value::to_raw_value(&parameters).unwrap_or_else(|_| empty_object()),
    });
    tools
}

fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_string()).unwrap_or_else(|_| unreachable_raw())
}

fn unreachable_raw() -> Box<RawValue> {
    serde_json::value::to_raw_value(&serde_json::Value::Null).unwrap_or_default()
}

/// sha256 over the system prompt and tool schemas of a request.
pub fn prefix_hash(request: &ProviderRequest) -> String {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Some(ProviderRole::System))
        .map(|m| m.content.as_deref().unwrap_or_default())
        .collect();
    let tools = serde_json::to_string(&request.tools).unwrap_or_default();
    let mut hasher = Sha256::new();
    for part in system {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hasher.update(tools.as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

fn message(role: ProviderRole, content: &str) -> ProviderMessage {
    ProviderMessage {
        role: Some(role),
        content: Some(content.to_string()),
        ..ProviderMessage::default()
    }
}

/// A new session id for a scripted session (`dev-` + 24 hex).
pub fn new_session_id() -> String {
    let stream = new_stream_id();
    format!("dev-{}", &stream[3..])
}

struct Turn<'a> {
    generation: &'a Generation,
    options: &'a TurnOptions,
    points: Vec<PointRecord>,
    tool_calls: Vec<ToolRecord>,
    /// Plugins whose failure stopped the turn.
    failed: Vec<String>,
}

/// Why a turn stopped early.
enum Stop {
    Blocked {
        point: &'static str,
        plugin: String,
        reason: String,
    },
    Failed {
        point: &'static str,
        error: String,
    },
}

impl<'a> Turn<'a> {
    fn record<T>(
        &mut self,
        point: HookPoint,
        tool: Option<&str>,
        ruling: &Ruling<T>,
        note: Option<String>,
    ) {
        self.points.push(PointRecord {
            point: point.as_str(),
            tool: tool.map(str::to_string),
            steps: ruling.steps.clone(),
            replaced: ruling.replaced,
            outcome: ruling.outcome.clone(),
            note,
        });
    }

    fn record_failure(
        &mut self,
        point: HookPoint,
        tool: Option<&str>,
        error: &DispatchError,
    ) -> Stop {
        if let DispatchError::MemberFailed { plugin, .. }
        | DispatchError::StrategyBlocked { plugin, .. } = error
        {
            self.failed.push(plugin.clone());
        }
        self.points.push(PointRecord {
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

    /// Intercept a point; a block or failure stops the turn.
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
                let text = if ruling.replaced {
                    note(&ruling.payload)
                } else {
                    None
                };
                self.record(point, None, &ruling, text);
                if let Outcome::Blocked { plugin, reason } = ruling.outcome {
                    return Err(Stop::Blocked {
                        point: point.as_str(),
                        plugin,
                        reason,
                    });
                }
                Ok(ruling.payload)
            }
            Err(error) => Err(self.record_failure(point, None, &error)),
        }
    }

    /// One provider round: provider.request, the stream, provider.response.
    async fn provider_round(
        &mut self,
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
        let response = match &self.options.model {
            None => echo::respond(&request, &self.options.calls),
            Some(model_ref) => self.stream_from_extension(model_ref, request).await?,
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
        let Some(entry) = self.generation.provider(model_ref) else {
            let known: Vec<&str> = self
                .generation
                .providers
                .iter()
                .map(|p| p.model_ref.as_str())
                .collect();
            let hint = if known.is_empty() {
                "no enabled plugin provides a model".to_string()
            } else {
                format!("available: {}", known.join(", "))
            };
            return Err(fail(format!(
                "unknown model `{model_ref}` ({hint}); there is no fallback to another model"
            )));
        };
        let Some(runtime) = self.generation.runtime(&entry.plugin) else {
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
            generation: self.generation.number,
        };
        let stream = ProviderStream::open(std::sync::Arc::clone(runtime), open)
            .await
            .map_err(|e| {
                fail(format!(
                    "{model_ref}: {e}; there is no fallback to another model"
                ))
            })?;
        let assembled = stream.collect().await.map_err(|e| {
            fail(format!(
                "{model_ref}: {e}; there is no fallback to another model"
            ))
        })?;
        Ok(ProviderResponsePayload {
            text: assembled.text,
            reasoning: assembled.reasoning,
            signature: assembled.signature,
            calls: assembled.calls,
            usage: assembled.usage,
        })
    }

    /// tool.before → permission.decision → the call → tool.after.
    async fn tool_call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: &str,
        grants: &mut BTreeSet<String>,
    ) -> Result<ProviderMessage, Stop> {
        let dispatcher = &self.generation.dispatcher;
        let before = ToolBeforePayload {
            name: name.to_string(),
            arguments: arguments.to_string(),
            call_id: call_id.to_string(),
        };
        let before = match dispatcher
            .intercept_tool(HookPoint::ToolBefore, name, before)
            .await
        {
            Ok(ruling) => {
                let note = ruling
                    .replaced
                    .then(|| format!("arguments → {}", short(&ruling.payload.arguments)));
                self.record(HookPoint::ToolBefore, Some(name), &ruling, note);
                if let Outcome::Blocked { plugin, reason } = &ruling.outcome {
                    let result = format!("blocked by {plugin}: {reason}");
                    self.tool_calls.push(ToolRecord {
                        call_id: call_id.to_string(),
                        name: name.to_string(),
                        arguments: arguments.to_string(),
                        kind: tool_kind(name),
                        host_decision: "-",
                        decision: "blocked",
                        result: result.clone(),
                        is_error: true,
                    });
                    return Ok(tool_message(call_id, name, &result));
                }
                ruling.payload
            }
            Err(error) => {
                return Err(self.record_failure(HookPoint::ToolBefore, Some(name), &error));
            }
        };
        let (name, arguments) = (before.name.as_str(), before.arguments.as_str());
        let kind = tool_kind(name);
        let (target, read_only) = self.resolve_tool(name, arguments);
        let host_decision = if self.options.deny.contains(name)
            || target
                .as_deref()
                .is_some_and(|t| self.options.deny.contains(t))
        {
            "deny"
        } else {
            "allow"
        };
        let permission = PermissionPayload {
            name: name.to_string(),
            arguments: arguments.to_string(),
            read_only,
            host_decision: Some(if host_decision == "deny" {
                HostDecision::Deny
            } else {
                HostDecision::Allow
            }),
        };
        let allowed = match dispatcher
            .intercept(HookPoint::PermissionDecision, permission)
            .await
        {
            Ok(ruling) => {
                let allowed = match &ruling.outcome {
                    Outcome::Permission { allow, .. } => *allow,
                    Outcome::Blocked { .. } => false,
                    // The host's own decision stands; a replaced payload
                    // cannot flip it (only an explicit allow can, audited).
                    Outcome::Continue => host_decision == "allow",
                };
                self.record(HookPoint::PermissionDecision, Some(name), &ruling, None);
                allowed
            }
            Err(error) => {
                return Err(self.record_failure(HookPoint::PermissionDecision, Some(name), &error));
            }
        };
        let (result, is_error) = if allowed {
            grants.insert(name.to_string());
            self.execute(&Permit::granted(name), name, arguments).await
        } else {
            (format!("permission denied for `{name}`"), true)
        };
        let after = ToolAfterPayload {
            name: name.to_string(),
            arguments: arguments.to_string(),
            result,
            is_error,
            call_id: call_id.to_string(),
        };
        let after = match dispatcher
            .intercept_tool(HookPoint::ToolAfter, name, after)
            .await
        {
            Ok(ruling) => {
                let note = ruling
                    .replaced
                    .then(|| format!("result → {}", short(&ruling.payload.result)));
                self.record(HookPoint::ToolAfter, Some(name), &ruling, note);
                if let Outcome::Blocked { plugin, reason } = &ruling.outcome {
                    ToolAfterPayload {
                        result: format!("result withheld by {plugin}: {reason}"),
                        is_error: true,
                        ..ruling.payload
                    }
                } else {
                    ruling.payload
                }
            }
            Err(error) => {
                return Err(self.record_failure(HookPoint::ToolAfter, Some(name), &error));
            }
        };
        self.tool_calls.push(ToolRecord {
            call_id: call_id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            kind,
            host_decision,
            decision: if allowed { "allow" } else { "deny" },
            result: after.result.clone(),
            is_error: after.is_error,
        });
        Ok(tool_message(call_id, name, &after.result))
    }

    /// The capability a call reaches (for the proxy: the inner name) and
    /// whether it is read-only.
    fn resolve_tool(&self, name: &str, arguments: &str) -> (Option<String>, bool) {
        if let Some(tool) = host_tools::find(name) {
            return (None, tool.read_only);
        }
        if name == PROXY_TOOL {
            let inner = serde_json::from_str::<serde_json::Value>(arguments)
                .ok()
                .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string));
            let read_only = inner
                .as_deref()
                .and_then(|n| self.generation.capabilities.get(n))
                .map(|c| c.read_only)
                .unwrap_or(true);
            return (inner, read_only);
        }
        let read_only = self
            .generation
            .capabilities
            .get(name)
            .is_some_and(|c| c.read_only);
        (Some(name.to_string()), read_only)
    }

    async fn execute(&self, permit: &Permit, name: &str, arguments: &str) -> (String, bool) {
        if host_tools::find(name).is_some() {
            return match host_tools::run(name, arguments, &self.options.workspace_root) {
                Ok(content) => (content, false),
                Err(content) => (content, true),
            };
        }
        let catalog = &self.generation.capabilities;
        if name == PROXY_TOOL {
            let value: serde_json::Value =
                match serde_json::from_str(if arguments.trim().is_empty() {
                    "{}"
                } else {
                    arguments
                }) {
                    Ok(value) => value,
                    Err(e) => return (format!("{PROXY_TOOL}: arguments are not JSON: {e}"), true),
                };
            if value.get("list").and_then(|v| v.as_bool()) == Some(true) {
                return (catalog.listing().to_string(), false);
            }
            let Some(inner) = value.get("name").and_then(|v| v.as_str()) else {
                return (
                    format!("{PROXY_TOOL}: give {{\"list\": true}} or a \"name\""),
                    true,
                );
            };
            let inner_arguments = value
                .get("arguments")
                .map(|a| a.to_string())
                .unwrap_or_default();
            return match catalog
                .call(&Permit::granted(inner), inner, &inner_arguments)
                .await
            {
                Ok(reply) => (reply.content, reply.is_error),
                Err(error) => (error.to_string(), true),
            };
        }
        match catalog.call(permit, name, arguments).await {
            Ok(reply) => (reply.content, reply.is_error),
            Err(error) => (error.to_string(), true),
        }
    }
}

fn tool_kind(name: &str) -> &'static str {
    if host_tools::find(name).is_some() {
        "host"
    } else if name == PROXY_TOOL {
        "proxy"
    } else {
        "extension"
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

/// Run one scripted turn on the host's current generation.
pub async fn run_turn(host: &RuntimeHost, options: &TurnOptions) -> Result<TurnReport, String> {
    let existing = match &options.session {
        Some(path) => read_session(path)?,
        None => None,
    };
    let pin = host.begin_turn().map_err(|e| e.to_string())?;
    let generation = std::sync::Arc::clone(&pin.generation);
    let mut carry = host.carry();
    if let Some(file) = &existing {
        carry.transcript = file.messages.clone();
    }
    carry.session_path = options.session.clone();
    let session_id = existing
        .as_ref()
        .map(|f| f.session_id.clone())
        .unwrap_or_else(|| host.session_id().to_string());
    let mut turn = Turn {
        generation: &generation,
        options,
        points: Vec::new(),
        tool_calls: Vec::new(),
        failed: Vec::new(),
    };
    let mut transcript = carry.transcript.clone();
    let mut grants = carry.approval_grants.clone();
    let mut prefix = None;
    let mut compacted: Option<String> = None;
    let session_path = options
        .session
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let model = options
        .model
        .clone()
        .unwrap_or_else(|| echo::ECHO_MODEL.to_string());

    let status = async {
        let (open_point, phase) = if existing.is_some() {
            (HookPoint::SessionLoad, "load")
        } else {
            (HookPoint::SessionStart, "start")
        };
        turn.point(
            open_point,
            SessionPayload {
                session_path: session_path.clone(),
                phase: phase.to_string(),
            },
            |_| None,
        )
        .await?;
        let input = turn
            .point(
                HookPoint::InputReceive,
                InputPayload {
                    text: options.input.clone(),
                },
                |p| Some(format!("input → {:?}", short(&p.text))),
            )
            .await?;
        let tools = provider_tools();
        turn.point(
            HookPoint::AgentBeforeStart,
            AgentStartPayload {
                model: model.clone(),
                tool_count: tools.len() as i64,
                session_id: session_id.clone(),
            },
            |_| None,
        )
        .await?;
        let system = turn
            .point(
                HookPoint::SystemPromptBuild,
                SystemPromptPayload {
                    prompt: DEFAULT_SYSTEM_PROMPT.to_string(),
                    workspace_root: options.workspace_root.display().to_string(),
                },
                |p| Some(format!("prompt → {:?}", short(&p.prompt))),
            )
            .await?;
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
        let response = turn
            .provider_round(build_request(&messages), &mut prefix)
            .await?;
        let mut assistant = message(ProviderRole::Assistant, &response.text);
        assistant.tool_calls = response.calls.clone();
        if !response.reasoning.is_empty() {
            assistant.reasoning_content = Some(response.reasoning.clone());
        }
        transcript.push(assistant.clone());
        messages.push(assistant);
        if !response.calls.is_empty() {
            for call in &response.calls {
                let result = turn
                    .tool_call(&call.id, &call.name, &call.arguments, &mut grants)
                    .await?;
                transcript.push(result.clone());
                messages.push(result);
            }
            let follow_up = turn
                .provider_round(build_request(&messages), &mut prefix)
                .await?;
            transcript.push(message(ProviderRole::Assistant, &follow_up.text));
        }
        if options.compact {
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
                session_path: session_path.clone(),
                phase: "save".to_string(),
            },
            |_| None,
        )
        .await?;
        turn.point(
            HookPoint::SessionEnd,
            SessionPayload {
                session_path: session_path.clone(),
                phase: "end".to_string(),
            },
            |_| None,
        )
        .await?;
        Ok::<(), Stop>(())
    }
    .await;

    let status = match status {
        Ok(()) => TurnStatus::Completed,
        Err(Stop::Blocked {
            point,
            plugin,
            reason,
        }) => TurnStatus::Blocked {
            point,
            plugin,
            reason,
        },
        Err(Stop::Failed { point, error }) => TurnStatus::Failed { point, error },
    };
    generation.dispatcher.observe(
        HookPoint::FrontendEvent,
        &FrontendEventPayload {
            kind: "turn.complete".to_string(),
            text: match &status {
                TurnStatus::Completed => "completed".to_string(),
                TurnStatus::Blocked { .. } => "blocked".to_string(),
                TurnStatus::Failed { .. } => "failed".to_string(),
            },
            detail: String::new(),
        },
    );

    let compacted_for_carry = compacted.clone();
    let mut session_file = None;
    let mut state_file = None;
    if let (Some(path), TurnStatus::Completed) = (&options.session, &status) {
        // A compacted session continues from the summary.
        let saved = match &compacted {
            Some(summary) => vec![message(
                ProviderRole::System,
                &format!("Summary of the earlier conversation: {summary}"),
            )],
            None => transcript.clone(),
        };
        let file = SessionFile {
            version: 1,
            session_id: session_id.clone(),
            messages: saved,
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| e.to_string())?;
        session_state::write_atomically(path, &bytes).map_err(|e| e.to_string())?;
        session_file = Some(path.clone());
        let mut state = session_state::load(path).map_err(|e| e.to_string())?;
        state.generation = generation.number;
        state.approval_grants = grants.iter().cloned().collect();
        for runtime in &generation.runtimes {
            let surfaces = host
                .ui()
                .surfaces()
                .into_iter()
                .filter(|s| s.plugin == runtime.plugin_id)
                .map(|s| (s.surface_id, s.kind.as_str().to_string()))
                .collect();
            state.plugins.insert(
                runtime.plugin_id.clone(),
                PluginSessionState {
                    version: runtime.version.clone(),
                    generation: generation.number,
                    surfaces,
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
        state_file = Some(session_state::save(path, &state).map_err(|e| e.to_string())?);
    }

    host.update_carry(|c| {
        c.session_path = options.session.clone();
        c.transcript = match &compacted_for_carry {
            Some(summary) => vec![message(
                ProviderRole::System,
                &format!("Summary of the earlier conversation: {summary}"),
            )],
            None => transcript.clone(),
        };
        c.approval_grants = grants.clone();
    });
    let warnings = generation.diagnostics.warnings();
    let logs = runtime_logs(&generation, &turn.failed, &warnings);
    let report = TurnReport {
        generation: generation.number,
        session_id,
        runtimes: generation
            .runtimes
            .iter()
            .map(|r| RuntimeSummary {
                plugin: r.plugin_id.clone(),
                trust: r.runtime.trust(),
                required: generation.dispatcher.is_required_class(&r.plugin_id),
            })
            .collect(),
        degraded: generation.degraded.clone(),
        model,
        points: turn.points,
        tool_calls: turn.tool_calls,
        transcript,
        prefix_hash: prefix.unwrap_or_default(),
        compacted_to: compacted,
        ui: host.ui().updates(),
        ui_actions: host.ui().actions(),
        warnings,
        logs,
        audit: generation.diagnostics.audit_entries(),
        status,
        reload: None,
        session_file,
        state_file,
    };
    drop(generation);
    let reload = host.end_turn(pin).await;
    Ok(TurnReport { reload, ..report })
}

/// The log tails of the runtimes that failed or were warned about, so the
/// reason a guest gave (its panic message) is shown with its failure.
fn runtime_logs(
    generation: &Generation,
    failed: &[String],
    warnings: &[Warning],
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

/// The host's compaction: a deterministic digest of the conversation.
fn summarize(messages: &[ProviderMessage]) -> String {
    let users = messages
        .iter()
        .filter(|m| m.role == Some(ProviderRole::User))
        .count();
    let tools = messages
        .iter()
        .filter(|m| m.role == Some(ProviderRole::Tool))
        .count();
    let last = messages
        .iter()
        .rev()
        .find(|m| m.role == Some(ProviderRole::Assistant))
        .and_then(|m| m.content.as_deref())
        .unwrap_or_default();
    format!(
        "{} messages ({users} from the user, {tools} tool results); last answer: {}",
        messages.len(),
        last.lines().next().unwrap_or_default()
    )
}
