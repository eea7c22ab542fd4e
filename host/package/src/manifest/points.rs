//! The names a runtime block may use: the 17 hook points, the replacement
//! slot forms and the capability families (EXTENSION_PROTOCOL_V2.md §6, §7;
//! the seed's runtime capability list).
//!
//! A small local table: `reasonix-protocol` does not publish typed points
//! and slots yet. When it does, these should defer to it.

/// Every interceptor point, in the protocol's order.
pub const HOOK_POINTS: [&str; 17] = [
    "session.start",
    "session.end",
    "session.load",
    "session.save",
    "session.rotate",
    "input.receive",
    "agent.before_start",
    "system_prompt.build",
    "context.prepare",
    "provider.request",
    "provider.response",
    "tool.before",
    "tool.after",
    "permission.decision",
    "compaction.prepare",
    "compaction.complete",
    "frontend.event",
];

/// The eight named replacement slots.
pub const NAMED_SLOTS: [&str; 8] = [
    "system_prompt",
    "context",
    "provider_request",
    "provider_response",
    "compaction",
    "session_policy",
    "permission",
    "frontend_events",
];

/// Capability families a runtime may declare.
pub const RUNTIME_CAPABILITIES: [&str; 6] = [
    "interceptors",
    "strategies",
    "providers",
    "ui",
    "tools",
    "session",
];

/// Executables a runtime command must never name: the runtime is exec form only.
const SHELLS: [&str; 12] = [
    "sh",
    "bash",
    "zsh",
    "fish",
    "dash",
    "ksh",
    "cmd",
    "cmd.exe",
    "powershell",
    "powershell.exe",
    "pwsh",
    "pwsh.exe",
];

pub fn is_hook_point(s: &str) -> bool {
    HOOK_POINTS.contains(&s)
}

/// Why a `replaces` entry is not a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotError {
    Unknown,
    BadTool,
    BadProvider,
}

/// Check one `replaces` entry against the slot forms.
pub fn check_slot(s: &str) -> Result<(), SlotError> {
    if NAMED_SLOTS.contains(&s) {
        return Ok(());
    }
    if let Some(tool) = s.strip_prefix("tool:") {
        return if tool.is_empty() || tool.chars().any(char::is_whitespace) {
            Err(SlotError::BadTool)
        } else {
            Ok(())
        };
    }
    if let Some(provider) = s.strip_prefix("provider:") {
        return if valid_provider_ref(provider) {
            Ok(())
        } else {
            Err(SlotError::BadProvider)
        };
    }
    Err(SlotError::Unknown)
}

/// `<name>/<model>` or `plugin/<plugin>/<name>/<model>`, no part empty or
/// holding whitespace.
fn valid_provider_ref(r: &str) -> bool {
    let parts: Vec<&str> = r.split('/').collect();
    let clean = |p: &&str| !p.is_empty() && !p.chars().any(char::is_whitespace);
    match parts.as_slice() {
        [_, _] => parts.iter().all(clean),
        ["plugin", _, _, _] => parts.iter().all(clean),
        _ => false,
    }
}

/// The shell a runtime command names, by basename (case-insensitive), if any.
pub fn shell_named_by(command: &str) -> Option<&'static str> {
    let base = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .trim()
        .to_ascii_lowercase();
    SHELLS.iter().copied().find(|s| *s == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_forms() {
        for ok in NAMED_SLOTS.iter().copied().chain([
            "tool:bash",
            "provider:openai/gpt-5",
            "provider:plugin/p/n/m",
        ]) {
            assert_eq!(check_slot(ok), Ok(()), "{ok}");
        }
        assert_eq!(check_slot("systemprompt"), Err(SlotError::Unknown));
        assert_eq!(check_slot("tool:"), Err(SlotError::BadTool));
        assert_eq!(check_slot("tool:a b"), Err(SlotError::BadTool));
        assert_eq!(check_slot("provider:openai"), Err(SlotError::BadProvider));
        assert_eq!(check_slot("provider:a/b/c"), Err(SlotError::BadProvider));
        assert_eq!(
            check_slot("provider:plugin//n/m"),
            Err(SlotError::BadProvider)
        );
        assert_eq!(check_slot("provider:/m"), Err(SlotError::BadProvider));
    }

    #[test]
    fn shells_by_basename() {
        assert_eq!(shell_named_by("/bin/bash"), Some("bash"));
        assert_eq!(
            shell_named_by("C:\\Windows\\System32\\CMD.EXE"),
            Some("cmd.exe")
        );
        assert_eq!(
            shell_named_by("${REASONIX_PLUGIN_ROOT}/bin/pwsh"),
            Some("pwsh")
        );
        assert_eq!(shell_named_by("./bin/server"), None);
        assert_eq!(shell_named_by("bashful"), None);
    }
}
