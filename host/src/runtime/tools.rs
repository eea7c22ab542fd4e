//! Runtime tools (spec §11) as a capability catalog.
//!
//! Extension tools are named `ext__<plugin>__<tool>`. They are not added to
//! the provider-visible tool list, which must stay byte-stable as plugins come
//! and go (the prompt-cache prefix). Instead the stable capability proxy
//! ([`crate::proxy`]) lists and calls them, beside MCP tools. Every call
//! needs a [`Permit`], which only a permission check can produce.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::redaction::clean_text;
use super::{ExtensionRuntime, RuntimeError, RuntimeErrorKind, ToolReply};
use crate::proxy::PROXY_TOOL;

/// Budget of one `extension/tool/call` (spec §5.1).
pub const TOOL_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// The capability name of an extension tool.
pub fn capability_name(plugin: &str, tool: &str) -> String {
    format!("ext__{plugin}__{tool}")
}

/// A manifest `runtime.tools[]` entry, as far as the catalog needs it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub read_only: bool,
}

/// One runtime tool in the catalog.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Capability {
    /// `ext__<plugin>__<tool>`.
    pub name: String,
    pub plugin: String,
    pub tool: String,
    pub description: String,
    pub input_schema: Value,
    pub read_only: bool,
    #[serde(skip)]
    runtime: Arc<dyn ExtensionRuntime>,
}

impl std::fmt::Debug for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capability")
            .field("name", &self.name)
            .finish()
    }
}

/// Proof that the permission check allowed this call.
#[derive(Debug)]
pub struct Permit {
    name: String,
}

impl Permit {
    /// Issue a permit after a permission decision allowed `name`. Kept
    /// crate-private so that only the permission flow can mint one.
    pub(crate) fn granted(name: &str) -> Permit {
        Permit {
            name: name.to_string(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A tool call that could not run at all (distinct from `isError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolCallError {
    #[error(
        "unknown capability `{0}`; call {PROXY_TOOL} with {{\"action\": \"list\"}} to see what is installed"
    )]
    Unknown(String),
    #[error("the permit is for `{permit}`, not `{name}`")]
    WrongPermit { permit: String, name: String },
    #[error("arguments of `{name}` must be a JSON object: {why}")]
    BadArguments { name: String, why: String },
    #[error("capability `{name}` failed ({}): {}", reason.unwrap_or("error"), message)]
    Runtime {
        name: String,
        reason: Option<&'static str>,
        message: String,
    },
}

/// Every runtime tool of a generation.
#[derive(Debug, Clone, Default)]
pub struct CapabilityCatalog {
    entries: BTreeMap<String, Capability>,
}

impl CapabilityCatalog {
    /// Add the tools `runtime` serves, described by its manifest specs. Tools
    /// it serves without a manifest entry are skipped (the handshake already
    /// refuses those).
    pub fn add_runtime(&mut self, runtime: &Arc<dyn ExtensionRuntime>, specs: &[ToolSpec]) {
        let plugin = runtime.plugin_id().to_string();
        for served in &runtime.declaration().tools {
            let Some(spec) = specs.iter().find(|s| &s.name == served) else {
                continue;
            };
            let name = capability_name(&plugin, &spec.name);
            self.entries.insert(
                name.clone(),
                Capability {
                    name,
                    plugin: plugin.clone(),
                    tool: spec.name.clone(),
                    description: clean_text(&spec.description),
                    input_schema: spec.input_schema.clone(),
                    read_only: spec.read_only,
                    runtime: Arc::clone(runtime),
                },
            );
        }
    }

    pub fn get(&self, name: &str) -> Option<&Capability> {
        self.entries.get(name)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every capability, sorted by name.
    pub fn list(&self) -> Vec<&Capability> {
        self.entries.values().collect()
    }

    /// Call a capability. `arguments` empty or absent means `{}`.
    pub async fn call(
        &self,
        permit: &Permit,
        name: &str,
        arguments: &str,
    ) -> Result<ToolReply, ToolCallError> {
        if permit.name != name {
            return Err(ToolCallError::WrongPermit {
                permit: permit.name.clone(),
                name: name.to_string(),
            });
        }
        let capability = self
            .entries
            .get(name)
            .ok_or_else(|| ToolCallError::Unknown(clean_text(name)))?;
        let text = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let raw: Box<RawValue> =
            serde_json::from_str(text).map_err(|e| ToolCallError::BadArguments {
                name: name.to_string(),
                why: e.to_string(),
            })?;
        if !raw.get().trim_start().starts_with('{') {
            return Err(ToolCallError::BadArguments {
                name: name.to_string(),
                why: "not an object".to_string(),
            });
        }
        let call = capability
            .runtime
            .tool_call(&capability.tool, &raw, TOOL_CALL_TIMEOUT);
        let result = match tokio::time::timeout(TOOL_CALL_TIMEOUT, call).await {
            Ok(result) => result,
            Err(_) => Err(RuntimeError::new(
                RuntimeErrorKind::Timeout,
                Some("intercept_timeout"),
                "the tool call exceeded its 5-minute budget",
            )),
        };
        result.map_err(|error| ToolCallError::Runtime {
            name: name.to_string(),
            reason: error.reason,
            message: error.message,
        })
    }
}
