//! Declarative hooks of the enabled packages, run at their events.
//!
//! Each package's hooks for an event run in declaration order (the existing
//! `hooks` module does matchers, translation, the environment contract,
//! timeouts and decisions); packages run in name order. The first refusal
//! (exit 2 or a JSON deny/block at a gating event) stops the rest. A hook
//! that crashes or times out is a warning and decides nothing.

use std::sync::Arc;

use super::inventory::Inventory;
use super::report::HookRecord;
use crate::hooks::{self, Payload, Verdict};
use crate::runtime::redaction::clean_text;

/// What the hooks of one event decided.
#[derive(Debug, Default)]
pub(crate) struct HookOutcome {
    pub records: Vec<HookRecord>,
    /// The first refusal: (plugin, reason).
    pub refused: Option<(String, String)>,
    /// The first explicit allow (PermissionRequest): the plugin.
    pub allowed: Option<String>,
}

/// Run every hook of `payload.event`. Blocking work happens off the async
/// threads; the session waits for it (each hook is bounded by its timeout).
pub(crate) async fn run(
    inventory: &Arc<Inventory>,
    payload: Payload,
    tool: Option<&str>,
) -> HookOutcome {
    let mut outcome = HookOutcome::default();
    let packages: Vec<String> = inventory
        .hooks_for(&payload.event)
        .map(|(package, _)| package.name.clone())
        .collect();
    for name in packages {
        let inventory = Arc::clone(inventory);
        let payload = payload.clone();
        let plugin = name.clone();
        let runs = tokio::task::spawn_blocking(move || {
            let Some(package) = inventory.package(&plugin) else {
                return Vec::new();
            };
            hooks::run_event(
                &package.package.inventory.hooks,
                &package.hook_context,
                &payload,
                None,
            )
        })
        .await
        .unwrap_or_default();
        for mut run in runs {
            run.stdout = clean_text(&run.stdout);
            run.stderr = clean_text(&run.stderr);
            run.decision.reason = run.decision.reason.as_deref().map(clean_text);
            let reason = run
                .decision
                .reason
                .clone()
                .unwrap_or_else(|| format!("{} hook refused", run.event));
            match run.decision.verdict {
                Verdict::Deny | Verdict::Block if outcome.refused.is_none() => {
                    outcome.refused = Some((name.clone(), reason));
                }
                Verdict::Allow if outcome.allowed.is_none() => {
                    outcome.allowed = Some(name.clone());
                }
                _ => {}
            }
            outcome.records.push(HookRecord {
                plugin: name.clone(),
                tool: tool.map(str::to_string),
                run,
            });
        }
        if outcome.refused.is_some() {
            break;
        }
    }
    outcome
}

/// The text a hook adds to the model's context (SessionStart stdout or its
/// context file; UserPromptSubmit stdout in Claude's contract is context
/// too, and so is `hookSpecificOutput.additionalContext`).
pub(crate) fn context_of(record: &HookRecord) -> Option<String> {
    if record.run.exit_code != 0 || !record.run.matched {
        return None;
    }
    let out = record.run.stdout.trim();
    if out.is_empty() {
        return None;
    }
    if out.starts_with('{')
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(out)
    {
        return value
            .pointer("/hookSpecificOutput/additionalContext")
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
    }
    Some(out.to_string())
}
