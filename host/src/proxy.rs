//! The stable capability proxy: the one provider-visible tool,
//! [`PROXY_TOOL`] (`use_capability`), over one catalog that holds extension
//! tools (`ext__<plugin>__<tool>`) and MCP tools (`mcp__<server>__<tool>`).
//!
//! Its schema never changes as plugins or servers come and go, so the
//! provider request's prefix (and the prompt cache) stays byte-stable. The
//! model can `list` (optionally filtered by `query`), `inspect` one
//! capability (its full input schema), `call` one, or `decline` one (an
//! explicit, recorded choice not to use it).
//!
//! Immediately before every dispatch the proxy re-checks, in order: that
//! the capability still exists and (MCP) that its server is still enabled or
//! connected for the session and its live session is for the server's
//! current connection identity; the policy against the tool's live hints
//! (a read-only session refuses anything not `readOnlyHint: true`; plan
//! mode also admits `destructiveHint: false`); and the permission decision,
//! through the caller's [`PermissionCheck`] (the session runs hooks and
//! `permission.decision` interceptors there). Only then does it dispatch.
//!
//! API (what a session calls):
//!
//! ```text
//! CapabilityProxy::new(&generation.capabilities, Some(&hub))
//! proxy.handle(arguments_json, &ProxyContext { policy }, &permission).await -> ProxyReply
//! proxy.call(name, arguments_json, &ctx, &permission).await -> ProxyReply   // ext__/mcp__ named directly
//! CapabilityProxy::target(arguments_json) -> Option<String>                // the capability a call names
//! proxy_tool_schema() -> (name, description, parameters)                    // constant
//! ```

use serde::Serialize;
use serde_json::{Map, Value};

use crate::mcp::{McpHub, McpTool, Recovery};
use crate::runtime::BoxFuture;
use crate::runtime::redaction::clean_text;
use crate::runtime::tools::{CapabilityCatalog, Permit};

/// The stable proxy tool through which the model reaches every capability.
pub const PROXY_TOOL: &str = "use_capability";

/// Descriptions in a listing are cut to this many characters (`inspect`
/// shows them whole).
const LIST_DESCRIPTION_CHARS: usize = 200;

/// The provider-visible schema of the proxy tool. Constant: it never names
/// an installed capability.
pub fn proxy_tool_schema() -> (String, String, Value) {
    (
        PROXY_TOOL.to_string(),
        "Use a capability contributed by an installed extension or MCP server. \
         {\"action\": \"list\"} lists them (add \"query\" to filter); {\"action\": \"inspect\", \
         \"name\": N} shows one with its input schema; {\"action\": \"call\", \"name\": N, \
         \"arguments\": {...}} calls it; {\"action\": \"decline\", \"name\": N, \"reason\": R} \
         records that you chose not to use it. Names look like ext__<plugin>__<tool> or \
         mcp__<server>__<tool>."
            .to_string(),
        serde_json::json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "inspect", "call", "decline"],
                           "description": "What to do."},
                "name": {"type": "string", "description": "The capability: ext__<plugin>__<tool> or mcp__<server>__<tool>."},
                "arguments": {"type": "object", "description": "The capability's arguments (call)."},
                "query": {"type": "string", "description": "Only list capabilities whose name or description contains this text (list)."},
                "reason": {"type": "string", "description": "Why the capability is declined (decline)."}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
}

/// What the session allows tools to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolPolicy {
    /// Everything the permission check allows.
    #[default]
    Full,
    /// Plan mode: `readOnlyHint: true`, or explicitly `destructiveHint: false`.
    Plan,
    /// Strict read-only: only `readOnlyHint: true`.
    ReadOnly,
}

/// The context of one proxy call.
#[derive(Debug, Clone, Default)]
pub struct ProxyContext {
    pub policy: ToolPolicy,
}

/// Where a capability comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum CapabilitySource {
    Extension { plugin: String },
    Mcp { server: String, plugin: String },
}

/// What the permission check is asked, immediately before a dispatch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionQuery {
    /// `ext__…` or `mcp__…`.
    pub capability: String,
    /// The capability's arguments, as JSON.
    pub arguments: String,
    /// Live hints: `readOnlyHint: true` (or a manifest `readOnly`).
    pub read_only: bool,
    /// Not read-only and not explicitly `destructiveHint: false`.
    pub destructive: bool,
    pub source: CapabilitySource,
}

/// The answer of a permission check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionVerdict {
    pub allow: bool,
    pub reason: Option<String>,
}

/// Supplied by the caller: decides one dispatch. The session runs its
/// hooks and `permission.decision` interceptors here.
pub trait PermissionCheck: Send + Sync {
    fn check<'a>(&'a self, query: &'a PermissionQuery) -> BoxFuture<'a, PermissionVerdict>;
}

/// Allows everything (tests and benchmarks).
pub struct AllowAll;

impl PermissionCheck for AllowAll {
    fn check<'a>(&'a self, _query: &'a PermissionQuery) -> BoxFuture<'a, PermissionVerdict> {
        Box::pin(std::future::ready(PermissionVerdict {
            allow: true,
            reason: None,
        }))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProxyAction {
    List,
    Inspect,
    Call,
    Decline,
}

/// How the dispatch question was settled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "decision", content = "reason")]
pub enum DispatchDecision {
    /// Nothing was dispatched (list, inspect, decline, or a bad request).
    NotNeeded,
    Allowed,
    /// The permission check said no.
    Denied(Option<String>),
    /// The policy refused it (read-only session, plan mode), or a check
    /// before the permission question failed.
    Refused(String),
}

/// What the proxy answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProxyReply {
    pub action: Option<ProxyAction>,
    /// The capability the request named.
    pub capability: Option<String>,
    /// The text the model sees.
    pub content: String,
    pub is_error: bool,
    pub decision: DispatchDecision,
    /// For MCP calls whose server was lost mid-call.
    pub recovery: Option<Recovery>,
}

impl ProxyReply {
    fn error(action: Option<ProxyAction>, capability: Option<String>, text: String) -> Self {
        ProxyReply {
            action,
            capability,
            content: text,
            is_error: true,
            decision: DispatchDecision::NotNeeded,
            recovery: None,
        }
    }
}

/// One catalog entry, whichever kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    name: String,
    description: String,
    input_schema: Value,
    read_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    destructive: Option<bool>,
    source: CapabilitySource,
}

struct Request {
    action: ProxyAction,
    name: Option<String>,
    arguments: Option<Map<String, Value>>,
    query: Option<String>,
    reason: Option<String>,
}

fn parse(arguments: &str) -> Result<Request, String> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("{PROXY_TOOL}: the arguments are not JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err(format!("{PROXY_TOOL}: the arguments must be a JSON object"));
    };
    let string = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{PROXY_TOOL}: \"{key}\" must be a string")),
        }
    };
    for key in map.keys() {
        if !["action", "name", "arguments", "query", "reason", "list"].contains(&key.as_str()) {
            return Err(format!(
                "{PROXY_TOOL}: unknown field \"{}\" (use action, name, arguments, query, reason)",
                clean_text(key)
            ));
        }
    }
    let name = string("name")?;
    let action = match string("action")?.as_deref() {
        Some("list") => ProxyAction::List,
        Some("inspect") => ProxyAction::Inspect,
        Some("call") => ProxyAction::Call,
        Some("decline") => ProxyAction::Decline,
        Some(other) => {
            return Err(format!(
                "{PROXY_TOOL}: unknown action \"{}\" (use list, inspect, call or decline)",
                clean_text(other)
            ));
        }
        // The first schema's forms: {"list": true} and {"name", "arguments"}.
        None if map.get("list") == Some(&Value::Bool(true)) => ProxyAction::List,
        None if name.is_some() => ProxyAction::Call,
        None => {
            return Err(format!(
                "{PROXY_TOOL}: give an \"action\": list, inspect, call or decline"
            ));
        }
    };
    let arguments = match map.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(args)) => Some(args.clone()),
        Some(_) => return Err(format!("{PROXY_TOOL}: \"arguments\" must be a JSON object")),
    };
    if matches!(
        action,
        ProxyAction::Inspect | ProxyAction::Call | ProxyAction::Decline
    ) && name.is_none()
    {
        return Err(format!("{PROXY_TOOL}: this action needs a \"name\""));
    }
    Ok(Request {
        action,
        name,
        arguments,
        query: string("query")?,
        reason: string("reason")?,
    })
}

fn unknown(name: &str) -> String {
    format!(
        "unknown capability `{}`; call {PROXY_TOOL} with {{\"action\": \"list\"}} to see what is available",
        clean_text(name)
    )
}

fn policy_refusal(
    policy: ToolPolicy,
    name: &str,
    read_only: Option<bool>,
    destructive: Option<bool>,
) -> Option<String> {
    let hints = match (read_only, destructive) {
        (_, Some(true)) => "it is marked destructive (destructiveHint: true)",
        (Some(false), _) | (None, None) | (None, Some(false)) => {
            "it is not marked read-only (readOnlyHint)"
        }
        (Some(true), _) => return None,
    };
    match policy {
        ToolPolicy::Full => None,
        ToolPolicy::ReadOnly if read_only != Some(true) => Some(format!(
            "refused: this session is read-only and `{name}` may change things: {hints}"
        )),
        ToolPolicy::Plan if read_only != Some(true) && destructive != Some(false) => Some(format!(
            "refused: plan mode only uses tools that are read-only or explicitly non-destructive, and `{name}` is neither: {hints}"
        )),
        _ => None,
    }
}

/// The proxy over one generation's extension tools and the session's MCP hub.
pub struct CapabilityProxy<'a> {
    extensions: &'a CapabilityCatalog,
    mcp: Option<&'a McpHub>,
}

impl<'a> CapabilityProxy<'a> {
    pub fn new(extensions: &'a CapabilityCatalog, mcp: Option<&'a McpHub>) -> Self {
        CapabilityProxy { extensions, mcp }
    }

    /// The capability a `use_capability` request names, if any (for the
    /// session's own bookkeeping, e.g. tool hooks).
    pub fn target(arguments: &str) -> Option<String> {
        parse(arguments).ok().and_then(|r| r.name)
    }

    fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = self
            .extensions
            .list()
            .into_iter()
            .map(|c| Entry {
                name: c.name.clone(),
                description: c.description.clone(),
                input_schema: c.input_schema.clone(),
                read_only: c.read_only,
                destructive: None,
                source: CapabilitySource::Extension {
                    plugin: c.plugin.clone(),
                },
            })
            .collect();
        if let Some(hub) = self.mcp {
            out.extend(hub.catalog().into_iter().map(mcp_entry));
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Handle one `use_capability` request.
    pub async fn handle(
        &self,
        arguments: &str,
        ctx: &ProxyContext,
        permission: &dyn PermissionCheck,
    ) -> ProxyReply {
        let request = match parse(arguments) {
            Ok(request) => request,
            Err(message) => return ProxyReply::error(None, None, message),
        };
        match request.action {
            ProxyAction::List => {
                if let Some(hub) = self.mcp {
                    for (id, error) in hub.discover().await {
                        tracing::warn!("MCP server {id}: discovery failed: {error}");
                    }
                }
                let query = request.query.as_deref().map(str::to_lowercase);
                let listing: Vec<Value> = self
                    .entries()
                    .into_iter()
                    .filter(|e| {
                        query.as_deref().is_none_or(|q| {
                            e.name.to_lowercase().contains(q)
                                || e.description.to_lowercase().contains(q)
                        })
                    })
                    .map(|e| {
                        let mut description: String =
                            e.description.chars().take(LIST_DESCRIPTION_CHARS).collect();
                        if e.description.chars().count() > LIST_DESCRIPTION_CHARS {
                            description.push('…');
                        }
                        let mut item = serde_json::json!({
                            "name": e.name,
                            "description": description,
                            "readOnly": e.read_only,
                        });
                        if let Some(destructive) = e.destructive {
                            item["destructive"] = destructive.into();
                        }
                        item
                    })
                    .collect();
                ProxyReply {
                    action: Some(ProxyAction::List),
                    capability: None,
                    content: Value::Array(listing).to_string(),
                    is_error: false,
                    decision: DispatchDecision::NotNeeded,
                    recovery: None,
                }
            }
            ProxyAction::Inspect => {
                let name = request.name.unwrap_or_default();
                match self.entries().into_iter().find(|e| e.name == name) {
                    Some(entry) => ProxyReply {
                        action: Some(ProxyAction::Inspect),
                        capability: Some(name),
                        content: serde_json::to_string(&entry).unwrap_or_default(),
                        is_error: false,
                        decision: DispatchDecision::NotNeeded,
                        recovery: None,
                    },
                    None => ProxyReply::error(
                        Some(ProxyAction::Inspect),
                        Some(name.clone()),
                        unknown(&name),
                    ),
                }
            }
            ProxyAction::Decline => {
                let name = request.name.unwrap_or_default();
                if !self.entries().iter().any(|e| e.name == name) {
                    return ProxyReply::error(
                        Some(ProxyAction::Decline),
                        Some(name.clone()),
                        unknown(&name),
                    );
                }
                let reason = request
                    .reason
                    .map(|r| clean_text(&r))
                    .filter(|r| !r.trim().is_empty());
                ProxyReply {
                    action: Some(ProxyAction::Decline),
                    content: match &reason {
                        Some(reason) => format!("declined `{name}`: {reason}"),
                        None => format!("declined `{name}`"),
                    },
                    capability: Some(name),
                    is_error: false,
                    decision: DispatchDecision::NotNeeded,
                    recovery: None,
                }
            }
            ProxyAction::Call => {
                let name = request.name.unwrap_or_default();
                let arguments = request.arguments.unwrap_or_default();
                self.dispatch(&name, arguments, ctx, permission).await
            }
        }
    }

    /// Call a capability named directly (`ext__…`/`mcp__…`), with the same
    /// checks as a `use_capability` call.
    pub async fn call(
        &self,
        name: &str,
        arguments: &str,
        ctx: &ProxyContext,
        permission: &dyn PermissionCheck,
    ) -> ProxyReply {
        let text = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => self.dispatch(name, map, ctx, permission).await,
            _ => ProxyReply::error(
                Some(ProxyAction::Call),
                Some(name.to_owned()),
                format!("arguments of `{}` must be a JSON object", clean_text(name)),
            ),
        }
    }

    async fn dispatch(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: &ProxyContext,
        permission: &dyn PermissionCheck,
    ) -> ProxyReply {
        let refused = |reason: String| ProxyReply {
            action: Some(ProxyAction::Call),
            capability: Some(name.to_owned()),
            content: reason.clone(),
            is_error: true,
            decision: DispatchDecision::Refused(reason),
            recovery: None,
        };
        let arguments_json = serde_json::to_string(&arguments).unwrap_or_default();
        if let Some(capability) = self.extensions.get(name) {
            let read_only = capability.read_only;
            if let Some(reason) = policy_refusal(ctx.policy, name, Some(read_only), None) {
                return refused(reason);
            }
            let query = PermissionQuery {
                capability: name.to_owned(),
                arguments: arguments_json.clone(),
                read_only,
                destructive: !read_only,
                source: CapabilitySource::Extension {
                    plugin: capability.plugin.clone(),
                },
            };
            let verdict = permission.check(&query).await;
            if !verdict.allow {
                return denied(name, verdict.reason);
            }
            let reply = self
                .extensions
                .call(&Permit::granted(name), name, &arguments_json)
                .await;
            return match reply {
                Ok(reply) => ProxyReply {
                    action: Some(ProxyAction::Call),
                    capability: Some(name.to_owned()),
                    content: reply.content,
                    is_error: reply.is_error,
                    decision: DispatchDecision::Allowed,
                    recovery: None,
                },
                Err(error) => ProxyReply {
                    action: Some(ProxyAction::Call),
                    capability: Some(name.to_owned()),
                    content: error.to_string(),
                    is_error: true,
                    decision: DispatchDecision::Allowed,
                    recovery: None,
                },
            };
        }
        let Some(hub) = self.mcp.filter(|_| name.starts_with("mcp__")) else {
            return ProxyReply::error(
                Some(ProxyAction::Call),
                Some(name.to_owned()),
                unknown(name),
            );
        };
        let Some((server, tool)) = hub.resolve(name) else {
            return ProxyReply::error(
                Some(ProxyAction::Call),
                Some(name.to_owned()),
                unknown(name),
            );
        };
        // Enablement, identity and the live hints, right now.
        let prepared = match hub.prepare(&server, &tool).await {
            Ok(prepared) => prepared,
            Err(error) => return refused(format!("`{}`: {error}", clean_text(name))),
        };
        let live = prepared.tool.clone();
        if let Some(reason) =
            policy_refusal(ctx.policy, name, live.read_only_hint, live.destructive_hint)
        {
            return refused(reason);
        }
        let read_only = live.read_only_hint == Some(true);
        let query = PermissionQuery {
            capability: name.to_owned(),
            arguments: arguments_json,
            read_only,
            destructive: !read_only && live.destructive_hint != Some(false),
            source: CapabilitySource::Mcp {
                server: live.server.clone(),
                plugin: live.plugin.clone(),
            },
        };
        let verdict = permission.check(&query).await;
        if !verdict.allow {
            return denied(name, verdict.reason);
        }
        match hub.dispatch(prepared, Some(arguments)).await {
            Ok(result) => ProxyReply {
                action: Some(ProxyAction::Call),
                capability: Some(name.to_owned()),
                content: match result.recovery {
                    Recovery::Replayed => format!(
                        "[note: MCP server {:?} was lost during this call and restarted; the read-only call was sent once more]\n{}",
                        live.server, result.content
                    ),
                    _ => result.content,
                },
                is_error: result.is_error,
                decision: DispatchDecision::Allowed,
                recovery: Some(result.recovery),
            },
            Err(error) => ProxyReply {
                action: Some(ProxyAction::Call),
                capability: Some(name.to_owned()),
                content: format!("`{}` failed [{}]: {error}", clean_text(name), error.code()),
                is_error: true,
                decision: DispatchDecision::Allowed,
                recovery: None,
            },
        }
    }
}

fn denied(name: &str, reason: Option<String>) -> ProxyReply {
    ProxyReply {
        action: Some(ProxyAction::Call),
        capability: Some(name.to_owned()),
        content: match &reason {
            Some(reason) => format!("permission denied for `{name}`: {reason}"),
            None => format!("permission denied for `{name}`"),
        },
        is_error: true,
        decision: DispatchDecision::Denied(reason),
        recovery: None,
    }
}

fn mcp_entry(tool: McpTool) -> Entry {
    Entry {
        name: tool.capability,
        description: tool.description,
        input_schema: tool.input_schema,
        read_only: tool.read_only_hint == Some(true),
        destructive: tool.destructive_hint,
        source: CapabilitySource::Mcp {
            server: tool.server,
            plugin: tool.plugin,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_with_clear_errors() {
        assert_eq!(
            parse(r#"{"action":"list"}"#).unwrap().action,
            ProxyAction::List
        );
        assert_eq!(parse(r#"{"list":true}"#).unwrap().action, ProxyAction::List);
        assert_eq!(
            parse(r#"{"name":"ext__a__b","arguments":{"x":1}}"#)
                .unwrap()
                .action,
            ProxyAction::Call
        );
        for (bad, says) in [
            ("[]", "must be a JSON object"),
            ("{", "not JSON"),
            (r#"{"action":"run"}"#, "unknown action"),
            (r#"{"action":"call"}"#, "needs a \"name\""),
            (
                r#"{"action":"call","name":"x","arguments":[1]}"#,
                "must be a JSON object",
            ),
            (r#"{"action":"list","extra":1}"#, "unknown field"),
            ("{}", "give an \"action\""),
        ] {
            let err = parse(bad).err().unwrap();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn policy_follows_the_hints() {
        use ToolPolicy::*;
        assert!(policy_refusal(Full, "t", None, None).is_none());
        assert!(policy_refusal(ReadOnly, "t", Some(true), None).is_none());
        for (ro, de) in [
            (None, None),
            (Some(false), None),
            (None, Some(false)),
            (None, Some(true)),
        ] {
            assert!(
                policy_refusal(ReadOnly, "t", ro, de).is_some(),
                "{ro:?} {de:?}"
            );
        }
        assert!(policy_refusal(Plan, "t", None, Some(false)).is_none());
        let refusal = policy_refusal(Plan, "t", None, Some(true)).unwrap();
        assert!(refusal.contains("destructive"), "{refusal}");
        let refusal = policy_refusal(ReadOnly, "t", None, None).unwrap();
        assert!(
            refusal.contains("read-only") && refusal.contains("readOnlyHint"),
            "{refusal}"
        );
    }

    #[test]
    fn the_schema_is_constant() {
        let (name, description, parameters) = proxy_tool_schema();
        assert_eq!(name, PROXY_TOOL);
        let again = proxy_tool_schema();
        assert_eq!((name, description, parameters), again);
    }
}
