//! The 17 hook points, their intercept timeouts, and the replacement slots.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// One of the 17 interception points (`InterceptParams.event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookPoint {
    #[serde(rename = "agent.before_start")]
    AgentBeforeStart,
    #[serde(rename = "compaction.complete")]
    CompactionComplete,
    #[serde(rename = "compaction.prepare")]
    CompactionPrepare,
    #[serde(rename = "context.prepare")]
    ContextPrepare,
    #[serde(rename = "frontend.event")]
    FrontendEvent,
    #[serde(rename = "input.receive")]
    InputReceive,
    #[serde(rename = "permission.decision")]
    PermissionDecision,
    #[serde(rename = "provider.request")]
    ProviderRequest,
    #[serde(rename = "provider.response")]
    ProviderResponse,
    #[serde(rename = "session.end")]
    SessionEnd,
    #[serde(rename = "session.load")]
    SessionLoad,
    #[serde(rename = "session.rotate")]
    SessionRotate,
    #[serde(rename = "session.save")]
    SessionSave,
    #[serde(rename = "session.start")]
    SessionStart,
    #[serde(rename = "system_prompt.build")]
    SystemPromptBuild,
    #[serde(rename = "tool.after")]
    ToolAfter,
    #[serde(rename = "tool.before")]
    ToolBefore,
}

/// Intercept budget of the four fast points.
pub const FAST_INTERCEPT_TIMEOUT: Duration = Duration::from_secs(5);
/// Intercept budget of every other point.
pub const SLOW_INTERCEPT_TIMEOUT: Duration = Duration::from_secs(30);
/// Upper clamp of a manifest `runtime.timeoutMillis` override.
pub const MAX_INTERCEPT_TIMEOUT: Duration = Duration::from_secs(60);

impl HookPoint {
    /// Every point, in the schema's `interceptEvents` order.
    pub const ALL: [HookPoint; 17] = [
        Self::AgentBeforeStart,
        Self::CompactionComplete,
        Self::CompactionPrepare,
        Self::ContextPrepare,
        Self::FrontendEvent,
        Self::InputReceive,
        Self::PermissionDecision,
        Self::ProviderRequest,
        Self::ProviderResponse,
        Self::SessionEnd,
        Self::SessionLoad,
        Self::SessionRotate,
        Self::SessionSave,
        Self::SessionStart,
        Self::SystemPromptBuild,
        Self::ToolAfter,
        Self::ToolBefore,
    ];

    /// The point's position in [`HookPoint::ALL`] (a constant-time table
    /// index: the variants are declared in the same order).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AgentBeforeStart => "agent.before_start",
            Self::CompactionComplete => "compaction.complete",
            Self::CompactionPrepare => "compaction.prepare",
            Self::ContextPrepare => "context.prepare",
            Self::FrontendEvent => "frontend.event",
            Self::InputReceive => "input.receive",
            Self::PermissionDecision => "permission.decision",
            Self::ProviderRequest => "provider.request",
            Self::ProviderResponse => "provider.response",
            Self::SessionEnd => "session.end",
            Self::SessionLoad => "session.load",
            Self::SessionRotate => "session.rotate",
            Self::SessionSave => "session.save",
            Self::SessionStart => "session.start",
            Self::SystemPromptBuild => "system_prompt.build",
            Self::ToolAfter => "tool.after",
            Self::ToolBefore => "tool.before",
        }
    }

    /// Looks a wire name up; `None` for anything else.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The default intercept budget (§5.1).
    pub fn default_intercept_timeout(self) -> Duration {
        match self {
            Self::InputReceive | Self::ToolBefore | Self::ToolAfter | Self::PermissionDecision => {
                FAST_INTERCEPT_TIMEOUT
            }
            _ => SLOW_INTERCEPT_TIMEOUT,
        }
    }

    /// The budget in force: a manifest `runtime.timeoutMillis` > 0 overrides
    /// every point, clamped to 60 s; 0 or absent keeps the default.
    pub fn intercept_timeout(self, manifest_timeout_millis: Option<u64>) -> Duration {
        match manifest_timeout_millis {
            Some(ms) if ms > 0 => Duration::from_millis(ms).min(MAX_INTERCEPT_TIMEOUT),
            _ => self.default_intercept_timeout(),
        }
    }

    /// The named slot whose owner also observes this point (§7).
    pub fn slot(self) -> Option<Slot> {
        Some(match self {
            Self::SystemPromptBuild => Slot::SystemPrompt,
            Self::ContextPrepare => Slot::Context,
            Self::ProviderRequest => Slot::ProviderRequest,
            Self::ProviderResponse => Slot::ProviderResponse,
            Self::CompactionPrepare | Self::CompactionComplete => Slot::Compaction,
            Self::SessionStart
            | Self::SessionEnd
            | Self::SessionLoad
            | Self::SessionSave
            | Self::SessionRotate => Slot::SessionPolicy,
            Self::PermissionDecision => Slot::Permission,
            Self::FrontendEvent => Slot::FrontendEvents,
            Self::InputReceive | Self::AgentBeforeStart | Self::ToolBefore | Self::ToolAfter => {
                return None;
            }
        })
    }

    /// For the session points, the session phase (the point's suffix).
    pub fn session_phase(self) -> Option<&'static str> {
        match self {
            Self::SessionStart => Some("start"),
            Self::SessionEnd => Some("end"),
            Self::SessionLoad => Some("load"),
            Self::SessionSave => Some("save"),
            Self::SessionRotate => Some("rotate"),
            _ => None,
        }
    }

    /// `allow` / `deny` decisions are legal only here.
    pub fn allows_permission_decisions(self) -> bool {
        self == Self::PermissionDecision
    }
}

impl fmt::Display for HookPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the 17 points.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook point {0:?}")]
pub struct UnknownHookPoint(pub String);

impl FromStr for HookPoint {
    type Err = UnknownHookPoint;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_name(s).ok_or_else(|| UnknownHookPoint(s.to_owned()))
    }
}

/// A replacement slot: one of the eight named slots, `tool:<name>` or
/// `provider:<ref>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    SystemPrompt,
    Context,
    ProviderRequest,
    ProviderResponse,
    Compaction,
    SessionPolicy,
    Permission,
    FrontendEvents,
    /// `tool:<name>`: name non-empty, no whitespace.
    Tool(String),
    /// `provider:<ref>`: `<name>/<model>` or `plugin/<plugin>/<name>/<model>`.
    Provider(String),
}

/// Why a string is not a slot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid replacement slot {slot:?}: {reason}")]
pub struct InvalidSlot {
    pub slot: String,
    pub reason: &'static str,
}

impl Slot {
    /// The eight named slots.
    pub const NAMED: [Slot; 8] = [
        Slot::SystemPrompt,
        Slot::Context,
        Slot::ProviderRequest,
        Slot::ProviderResponse,
        Slot::Compaction,
        Slot::SessionPolicy,
        Slot::Permission,
        Slot::FrontendEvents,
    ];

    /// Parses a slot string by the exact rules of §7; any other string is
    /// rejected.
    pub fn parse(s: &str) -> Result<Slot, InvalidSlot> {
        let invalid = |reason| InvalidSlot {
            slot: s.to_owned(),
            reason,
        };
        let named = match s {
            "system_prompt" => Some(Slot::SystemPrompt),
            "context" => Some(Slot::Context),
            "provider_request" => Some(Slot::ProviderRequest),
            "provider_response" => Some(Slot::ProviderResponse),
            "compaction" => Some(Slot::Compaction),
            "session_policy" => Some(Slot::SessionPolicy),
            "permission" => Some(Slot::Permission),
            "frontend_events" => Some(Slot::FrontendEvents),
            _ => None,
        };
        if let Some(slot) = named {
            return Ok(slot);
        }
        if let Some(name) = s.strip_prefix("tool:") {
            if name.is_empty() {
                return Err(invalid("the tool name is empty"));
            }
            if name.chars().any(char::is_whitespace) {
                return Err(invalid("the tool name contains whitespace"));
            }
            return Ok(Slot::Tool(name.to_owned()));
        }
        if let Some(reference) = s.strip_prefix("provider:") {
            let segments: Vec<&str> = reference.split('/').collect();
            let shape_ok = match segments.as_slice() {
                [name, model] => !name.is_empty() && !model.is_empty(),
                ["plugin", plugin, name, model] => {
                    !plugin.is_empty() && !name.is_empty() && !model.is_empty()
                }
                _ => false,
            };
            if !shape_ok {
                return Err(invalid(
                    "the provider ref must be <name>/<model> or plugin/<plugin>/<name>/<model>",
                ));
            }
            if reference.chars().any(char::is_whitespace) {
                return Err(invalid("the provider ref contains whitespace"));
            }
            return Ok(Slot::Provider(reference.to_owned()));
        }
        Err(invalid("not a named slot, tool:<name> or provider:<ref>"))
    }

    /// The named slot's wire string, or the parameterised form.
    pub fn to_wire(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Slot::SystemPrompt => f.write_str("system_prompt"),
            Slot::Context => f.write_str("context"),
            Slot::ProviderRequest => f.write_str("provider_request"),
            Slot::ProviderResponse => f.write_str("provider_response"),
            Slot::Compaction => f.write_str("compaction"),
            Slot::SessionPolicy => f.write_str("session_policy"),
            Slot::Permission => f.write_str("permission"),
            Slot::FrontendEvents => f.write_str("frontend_events"),
            Slot::Tool(name) => write!(f, "tool:{name}"),
            Slot::Provider(reference) => write!(f, "provider:{reference}"),
        }
    }
}

impl FromStr for Slot {
    type Err = InvalidSlot;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Slot::parse(s)
    }
}

impl Serialize for Slot {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Slot {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Slot::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_points_round_trip_by_wire_name() {
        let mut names: Vec<_> = HookPoint::ALL.iter().map(|p| p.as_str()).collect();
        let sorted = {
            let mut s = names.clone();
            s.sort();
            s
        };
        assert_eq!(names, sorted, "ALL is in the schema's sorted order");
        names.dedup();
        assert_eq!(names.len(), 17);
        for (i, p) in HookPoint::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i, "{p} is declared out of ALL's order");
        }
        for p in HookPoint::ALL {
            assert_eq!(p.as_str().parse::<HookPoint>(), Ok(p));
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{p}\""));
            assert_eq!(
                serde_json::from_str::<HookPoint>(&format!("\"{p}\"")).unwrap(),
                p
            );
        }
        assert!("tool.during".parse::<HookPoint>().is_err());
        assert!(serde_json::from_str::<HookPoint>("\"Tool.before\"").is_err());
    }

    #[test]
    fn timeouts_follow_section_5_1() {
        let fast: Vec<_> = HookPoint::ALL
            .into_iter()
            .filter(|p| p.default_intercept_timeout() == Duration::from_secs(5))
            .collect();
        assert_eq!(
            fast,
            [
                HookPoint::InputReceive,
                HookPoint::PermissionDecision,
                HookPoint::ToolAfter,
                HookPoint::ToolBefore
            ]
        );
        assert_eq!(
            HookPoint::FrontendEvent.default_intercept_timeout(),
            Duration::from_secs(30)
        );
        let p = HookPoint::ToolBefore;
        assert_eq!(p.intercept_timeout(None), Duration::from_secs(5));
        assert_eq!(p.intercept_timeout(Some(0)), Duration::from_secs(5));
        assert_eq!(p.intercept_timeout(Some(1500)), Duration::from_millis(1500));
        assert_eq!(p.intercept_timeout(Some(600_000)), Duration::from_secs(60));
    }

    #[test]
    fn point_to_slot_map() {
        assert_eq!(HookPoint::CompactionComplete.slot(), Some(Slot::Compaction));
        assert_eq!(HookPoint::SessionRotate.slot(), Some(Slot::SessionPolicy));
        assert_eq!(HookPoint::FrontendEvent.slot(), Some(Slot::FrontendEvents));
        assert_eq!(HookPoint::ToolBefore.slot(), None);
        let mapped = HookPoint::ALL.iter().filter(|p| p.slot().is_some()).count();
        assert_eq!(mapped, 13);
        for slot in Slot::NAMED {
            assert!(
                HookPoint::ALL
                    .iter()
                    .any(|p| p.slot() == Some(slot.clone()))
            );
        }
    }

    #[test]
    fn slot_parsing_rules() {
        for slot in Slot::NAMED {
            assert_eq!(Slot::parse(&slot.to_string()), Ok(slot));
        }
        for ok in [
            "tool:read_file",
            "tool:a-b.c",
            "provider:openai/gpt-5",
            "provider:plugin/acme/llm/big",
        ] {
            assert_eq!(Slot::parse(ok).unwrap().to_string(), ok);
        }
        for bad in [
            "",
            "System_prompt",
            "system_prompt ",
            "tool:",
            "tool:a b",
            "tool:\tx",
            "provider:",
            "provider:openai",
            "provider:openai/",
            "provider:/gpt",
            "provider:a/b/c",
            "provider:plugin/acme/llm",
            "provider:plugin//llm/big",
            "provider:x/acme/llm/big",
            "provider:a/b c",
            "model:x",
        ] {
            assert!(Slot::parse(bad).is_err(), "{bad:?} accepted");
        }
        let slot: Slot = serde_json::from_str("\"tool:x\"").unwrap();
        assert_eq!(slot, Slot::Tool("x".into()));
        assert!(serde_json::from_str::<Slot>("\"nope\"").is_err());
    }

    #[test]
    fn session_phases() {
        assert_eq!(HookPoint::SessionSave.session_phase(), Some("save"));
        assert_eq!(HookPoint::ToolAfter.session_phase(), None);
        assert!(HookPoint::PermissionDecision.allows_permission_decisions());
        assert!(!HookPoint::ToolBefore.allows_permission_decisions());
    }
}
