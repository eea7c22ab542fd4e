//! The records a turn keeps: what each hook point decided, which declarative
//! hooks ran, each tool call, and how the turn ended. Events carry them one
//! by one; [`TurnReport`] gathers them for `reasonix dev turn`.

use std::path::PathBuf;

use reasonix_protocol::types::ProviderMessage;
use serde::Serialize;

use crate::hooks::HookRun;
use crate::runtime::TrustLabel;
use crate::runtime::diagnostics::{AuditEntry, Warning};
use crate::runtime::dispatcher::{ChainStep, Outcome};
use crate::runtime::generation::Degraded;
use crate::runtime::host::ReloadOutcome;
use crate::runtime::ui::{SurfaceUpdate, UiActionEntry};

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

/// One declarative hook that ran (or was skipped by its matcher).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRecord {
    pub plugin: String,
    /// The tool the event was about, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(flatten)]
    pub run: HookRun,
}

impl PartialEq for HookRecord {
    fn eq(&self, other: &Self) -> bool {
        self.plugin == other.plugin
            && self.tool == other.tool
            && self.run.event == other.run.event
            && self.run.index == other.run.index
            && self.run.exit_code == other.run.exit_code
            && self.run.decision == other.run.decision
    }
}

/// One tool call and how it went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRecord {
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    /// `host`, `extension`, `mcp` or `proxy`.
    pub kind: &'static str,
    /// What the host itself decided before hooks and extensions: `allow`,
    /// `deny`, `ask` (answered by the user or a hook), or `-` (never asked).
    pub host_decision: &'static str,
    /// `allow`, `deny` or `blocked`.
    pub decision: &'static str,
    /// Who decided, when it was not the host (`hook <plugin>`, an extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    pub result: String,
    pub is_error: bool,
}

/// How the turn ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum TurnStatus {
    Completed,
    /// An extension (`plugin`) or a hook (`hook <plugin>`) stopped the turn.
    Blocked {
        point: &'static str,
        plugin: String,
        reason: String,
    },
    Failed {
        point: &'static str,
        error: String,
    },
    Cancelled,
}

impl TurnStatus {
    pub fn label(&self) -> &'static str {
        match self {
            TurnStatus::Completed => "completed",
            TurnStatus::Blocked { .. } => "blocked",
            TurnStatus::Failed { .. } => "failed",
            TurnStatus::Cancelled => "cancelled",
        }
    }
}

/// A runtime of the pinned generation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeSummary {
    pub plugin: String,
    pub trust: TrustLabel,
    pub required: bool,
}

/// The recent output of a runtime that failed during the turn (a wasm
/// guest's panic message, a sidecar's stderr), redacted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeLog {
    pub plugin: String,
    pub lines: Vec<String>,
}

/// Everything a turn produced (plus, for `dev turn`, the session's opening
/// and closing points).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnReport {
    pub generation: u64,
    pub session_id: String,
    pub runtimes: Vec<RuntimeSummary>,
    pub degraded: Vec<Degraded>,
    pub model: String,
    pub points: Vec<PointRecord>,
    pub hooks: Vec<HookRecord>,
    pub tool_calls: Vec<ToolRecord>,
    pub transcript: Vec<ProviderMessage>,
    /// sha256 of the provider-visible prefix (system prompt + tool schemas)
    /// of the first provider request.
    pub prefix_hash: String,
    /// The compaction summary, when compaction ran; the saved session
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
    /// The receipt's gaps: `mod_effects_unobserved` while a Claude Code
    /// mod runs (what a full-trust process did is outside what the host
    /// observes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload: Option<ReloadOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_file: Option<PathBuf>,
}
