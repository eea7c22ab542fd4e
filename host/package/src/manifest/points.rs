//! The names a runtime block may use: the 17 hook points, the replacement
//! slot forms and the capability families (EXTENSION_PROTOCOL_V2.md §6, §7;
//! the seed's runtime capability list).
//!
//! Points and slots come from `reasonix-protocol`, so the manifest and the
//! wire can never disagree about them.

use reasonix_protocol::points::{HookPoint, Slot};

/// Capability families a runtime may declare: upstream's list, in its order
/// (the `unknown capability` error quotes it verbatim).
pub const RUNTIME_CAPABILITIES: [&str; 5] =
    ["interceptors", "strategies", "providers", "ui", "tools"];

pub fn is_hook_point(s: &str) -> bool {
    HookPoint::from_name(s).is_some()
}

/// The names of all 17 hook points, in the protocol's order.
pub fn hook_point_names() -> Vec<&'static str> {
    HookPoint::ALL.iter().map(|p| p.as_str()).collect()
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
    match Slot::parse(s) {
        Ok(_) => Ok(()),
        Err(_) if s.starts_with("tool:") => Err(SlotError::BadTool),
        Err(_) if s.starts_with("provider:") => Err(SlotError::BadProvider),
        Err(_) => Err(SlotError::Unknown),
    }
}

/// The shell a runtime command names, by basename (case-insensitive), if any.
pub use reasonix_protocol::shells::shell_basename as shell_named_by;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_forms() {
        let named: Vec<String> = Slot::NAMED.iter().map(Slot::to_wire).collect();
        assert_eq!(named.len(), 8);
        for ok in named.iter().map(String::as_str).chain([
            "tool:bash",
            "provider:openai/gpt-5",
            "provider:plugin/p/n/m",
        ]) {
            assert_eq!(check_slot(ok), Ok(()), "{ok}");
        }
        assert_eq!(hook_point_names().len(), 17);
        assert!(hook_point_names().iter().all(|p| is_hook_point(p)));
        assert!(!is_hook_point("input.recieve"));
        assert_eq!(check_slot("provider:a b/m"), Err(SlotError::BadProvider));
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
