//! Warnings and audit notes the runtime layer produces. Warnings about an
//! optional plugin are emitted once per plugin and kind (spec §5: "warns once
//! per process"); audit entries record every full-trust override.

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde::Serialize;

use super::TrustLabel;

/// One warning, already redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    pub plugin: String,
    pub kind: &'static str,
    pub message: String,
}

/// A full-trust `allow` applied over a host `deny`, or a sandboxed `allow`
/// that was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub plugin: String,
    pub trust: TrustLabel,
    pub point: &'static str,
    /// The tool the decision was about, when the payload names one.
    pub tool: Option<String>,
    pub host_decision: &'static str,
    pub extension_decision: &'static str,
    /// Whether the extension's decision took effect.
    pub applied: bool,
}

#[derive(Debug, Default)]
struct Inner {
    warned: BTreeSet<(String, &'static str)>,
    warnings: Vec<Warning>,
    audit: Vec<AuditEntry>,
}

/// Shared by a generation's dispatcher, tool catalog and provider streams.
#[derive(Debug, Default)]
pub struct Diagnostics {
    inner: Mutex<Inner>,
}

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Record a warning unless one of this kind was already recorded for the
    /// plugin. Returns whether it was recorded.
    pub fn warn_once(&self, plugin: &str, kind: &'static str, message: &str) -> bool {
        let mut inner = self.lock();
        if !inner.warned.insert((plugin.to_string(), kind)) {
            return false;
        }
        inner.warnings.push(Warning {
            plugin: plugin.to_string(),
            kind,
            message: super::redaction::clean_text(message),
        });
        true
    }

    /// Record a warning every time.
    pub fn warn(&self, plugin: &str, kind: &'static str, message: &str) {
        self.lock().warnings.push(Warning {
            plugin: plugin.to_string(),
            kind,
            message: super::redaction::clean_text(message),
        });
    }

    pub fn audit(&self, entry: AuditEntry) {
        self.lock().audit.push(entry);
    }

    pub fn warnings(&self) -> Vec<Warning> {
        self.lock().warnings.clone()
    }

    pub fn audit_entries(&self) -> Vec<AuditEntry> {
        self.lock().audit.clone()
    }
}
