//! The `extension/initialize` exchange (§4): what the host sends from the
//! manifest ceiling and the rules the answer must satisfy.
//!
//! [`check_declaration`] and [`check_protocol_version`] are pure so the
//! wasm runtime can apply the same rules to a component's declaration.

use reasonix_protocol::error::ErrorReason;
use reasonix_protocol::limits::{PROTOCOL_ID, PROTOCOL_MAJOR, PROTOCOL_VERSION};
use reasonix_protocol::types::{
    CapabilityWire, HostCapabilities, InitializeParams, InitializeResult, ManifestExpectation,
    RequirementWire, SessionContext, UiHost,
};

/// The dependency schema version this host announces (upstream does not
/// publish its constant; the upstream Go SDK completes the handshake with 1).
pub const DEPENDENCY_SCHEMA_VERSION: u64 = 1;

/// The manifest's ceiling for one plugin: sent as the initialize
/// expectation and checked against the sidecar's declaration.
///
/// The host builds it from a *registry entry* (an installed plugin's
/// manifest), never from project configuration: only plugins installed
/// through the plugin flow may start a runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestCeiling {
    /// The plugin id; provider refs must start with `plugin/<id>/`.
    pub plugin_id: String,
    /// `runtime.intercepts`.
    pub intercepts: Vec<String>,
    /// `runtime.replaces`.
    pub replaces: Vec<String>,
    /// `runtime.capabilities` (`interceptors`, `providers`, `ui`, `tools`…).
    pub capabilities: Vec<String>,
    /// `runtime.tools[].name`.
    pub tools: Vec<String>,
    /// `"<namespace>/<id>"` of every `provides` entry of kind `provider`.
    pub providers: Vec<String>,
    /// Ids of the `provides` entries of kind `uiaction`.
    pub ui_actions: Vec<String>,
    /// v2 `requires`.
    pub requires: Vec<RequirementWire>,
    /// v2 `provides`.
    pub provides: Vec<CapabilityWire>,
}

impl ManifestCeiling {
    /// The wire expectation (empty lists omitted by the wire type).
    pub fn expectation(&self) -> ManifestExpectation {
        ManifestExpectation {
            intercepts: self.intercepts.clone(),
            replaces: self.replaces.clone(),
            providers: self.providers.clone(),
            ui_actions: self.ui_actions.clone(),
            capabilities: self.capabilities.clone(),
            requires: self.requires.clone(),
            provides: self.provides.clone(),
            tools: self.tools.clone(),
        }
    }

    fn has_capability(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| c == name)
    }
}

/// `extension/initialize` params for this ceiling and session.
pub fn initialize_params(
    ceiling: &ManifestCeiling,
    session: &SessionContext,
    ui_host: UiHost,
) -> InitializeParams {
    InitializeParams {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        protocol_id: PROTOCOL_ID.to_owned(),
        manifest: ceiling.expectation(),
        session: session.clone(),
        capabilities: HostCapabilities {
            content_refs: true,
            ui_host,
            protocol_version: PROTOCOL_VERSION.to_owned(),
            dependency_schema_version: Some(DEPENDENCY_SCHEMA_VERSION),
        },
        dependency_schema_version: Some(DEPENDENCY_SCHEMA_VERSION),
    }
}

/// What a sidecar (or component) declares at initialize, reduced to what
/// the ceiling rules look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declaration {
    pub subscriptions: Vec<String>,
    pub replaces: Vec<String>,
    /// `providers[].ref`.
    pub provider_refs: Vec<String>,
    /// `uiActions[].actionId`.
    pub ui_actions: Vec<String>,
    pub tools: Vec<String>,
    pub provides: Vec<CapabilityWire>,
}

impl From<&InitializeResult> for Declaration {
    fn from(r: &InitializeResult) -> Self {
        Declaration {
            subscriptions: r.subscriptions.clone(),
            replaces: r.replaces.clone(),
            provider_refs: r.providers.iter().map(|p| p.reference.clone()).collect(),
            ui_actions: r.ui_actions.iter().map(|a| a.action_id.clone()).collect(),
            tools: r.tools.clone(),
            provides: r.provides.clone(),
        }
    }
}

/// A declaration that goes beyond the manifest (`capability_not_declared`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Undeclared {
    #[error("subscription {0:?} is not in runtime.intercepts")]
    Subscription(String),
    #[error("replacement slot {0:?} is not in runtime.replaces")]
    Replace(String),
    #[error("provider {0:?} is declared but runtime.capabilities lacks \"providers\"")]
    ProvidersCapability(String),
    #[error("provider ref {reference:?} does not start with {prefix:?}")]
    ProviderPrefix { reference: String, prefix: String },
    #[error("UI action {0:?} is declared but runtime.capabilities lacks \"ui\"")]
    UiCapability(String),
    #[error("tool {0:?} is declared but runtime.capabilities lacks \"tools\"")]
    ToolsCapability(String),
    #[error("tool {0:?} is not in runtime.tools")]
    Tool(String),
    #[error("provided capability {0:?} is not in the manifest's provides")]
    Provides(String),
}

impl Undeclared {
    pub fn reason(&self) -> ErrorReason {
        ErrorReason::CapabilityNotDeclared
    }
}

fn capability_key(c: &CapabilityWire) -> String {
    format!("{}/{}/{}", c.namespace.trim(), c.kind.trim(), c.id.trim())
}

/// Rules 4–9 of §4.3, in order; the first violation is returned.
pub fn check_declaration(ceiling: &ManifestCeiling, decl: &Declaration) -> Result<(), Undeclared> {
    for s in &decl.subscriptions {
        if !ceiling.intercepts.contains(s) {
            return Err(Undeclared::Subscription(s.clone()));
        }
    }
    for r in &decl.replaces {
        if !ceiling.replaces.contains(r) {
            return Err(Undeclared::Replace(r.clone()));
        }
    }
    if let Some(first) = decl.provider_refs.first() {
        if !ceiling.has_capability("providers") {
            return Err(Undeclared::ProvidersCapability(first.clone()));
        }
        let prefix = format!("plugin/{}/", ceiling.plugin_id);
        if let Some(bad) = decl.provider_refs.iter().find(|r| !r.starts_with(&prefix)) {
            return Err(Undeclared::ProviderPrefix {
                reference: bad.clone(),
                prefix,
            });
        }
    }
    if let Some(first) = decl.ui_actions.first()
        && !ceiling.has_capability("ui")
    {
        return Err(Undeclared::UiCapability(first.clone()));
    }
    if let Some(first) = decl.tools.first() {
        if !ceiling.has_capability("tools") {
            return Err(Undeclared::ToolsCapability(first.clone()));
        }
        if let Some(bad) = decl.tools.iter().find(|t| !ceiling.tools.contains(t)) {
            return Err(Undeclared::Tool(bad.clone()));
        }
    }
    if !ceiling.provides.is_empty() {
        let allowed: Vec<String> = ceiling.provides.iter().map(capability_key).collect();
        for p in &decl.provides {
            let key = capability_key(p);
            if !allowed.contains(&key) {
                return Err(Undeclared::Provides(key));
            }
        }
    }
    Ok(())
}

/// A protocol version the host cannot accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("protocolVersion {0:?} is not an integer")]
    NotInteger(String),
    #[error("protocolVersion {0:?} is not major version {PROTOCOL_MAJOR}")]
    Unsupported(String),
}

impl VersionError {
    pub fn reason(&self) -> ErrorReason {
        match self {
            VersionError::NotInteger(_) => ErrorReason::ProtocolError,
            VersionError::Unsupported(_) => ErrorReason::UnsupportedVersion,
        }
    }
}

/// Go `strconv.Atoi` semantics: optional sign, decimal digits, so `"02"` and
/// `"+2"` pass; anything else is not an integer.
pub fn check_protocol_version(version: &str) -> Result<(), VersionError> {
    let digits = version.strip_prefix(['+', '-']).unwrap_or(version);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(VersionError::NotInteger(version.to_owned()));
    }
    match version.parse::<i64>() {
        Ok(v) if v == i64::from(PROTOCOL_MAJOR) => Ok(()),
        Ok(_) => Err(VersionError::Unsupported(version.to_owned())),
        // Out of i64 range: Atoi fails with a range error.
        Err(_) => Err(VersionError::NotInteger(version.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(ns: &str, kind: &str, id: &str) -> CapabilityWire {
        CapabilityWire {
            namespace: ns.into(),
            kind: kind.into(),
            id: id.into(),
            version: None,
            schema_hash: None,
        }
    }

    fn ceiling() -> ManifestCeiling {
        ManifestCeiling {
            plugin_id: "demo".into(),
            intercepts: vec!["tool.before".into()],
            replaces: vec!["system_prompt".into()],
            capabilities: vec!["providers".into(), "ui".into(), "tools".into()],
            tools: vec!["grep".into()],
            provides: vec![cap("demo", "provider", "echo")],
            ..Default::default()
        }
    }

    #[test]
    fn versions_follow_atoi() {
        for ok in ["2", "02", "+2", "0002"] {
            assert_eq!(check_protocol_version(ok), Ok(()), "{ok}");
        }
        for bad in ["2.0", "v2", " 2", "", "two", "99999999999999999999"] {
            assert!(
                matches!(
                    check_protocol_version(bad),
                    Err(VersionError::NotInteger(_))
                ),
                "{bad}"
            );
        }
        for other in ["1", "3", "-2"] {
            assert_eq!(
                check_protocol_version(other).unwrap_err().reason(),
                ErrorReason::UnsupportedVersion
            );
        }
    }

    #[test]
    fn declaration_within_ceiling_passes() {
        let decl = Declaration {
            subscriptions: vec!["tool.before".into()],
            replaces: vec!["system_prompt".into()],
            provider_refs: vec!["plugin/demo/echo/m1".into()],
            ui_actions: vec!["refresh".into()],
            tools: vec!["grep".into()],
            provides: vec![cap(" demo", "provider", "echo ")],
        };
        assert_eq!(check_declaration(&ceiling(), &decl), Ok(()));
    }

    #[test]
    fn each_rule_names_what_was_undeclared() {
        let c = ceiling();
        let check = |d: Declaration| check_declaration(&c, &d).unwrap_err();
        assert_eq!(
            check(Declaration {
                subscriptions: vec!["input.receive".into()],
                ..Default::default()
            }),
            Undeclared::Subscription("input.receive".into())
        );
        assert_eq!(
            check(Declaration {
                replaces: vec!["context".into()],
                ..Default::default()
            }),
            Undeclared::Replace("context".into())
        );
        assert!(matches!(
            check(Declaration {
                provider_refs: vec!["plugin/other/x".into()],
                ..Default::default()
            }),
            Undeclared::ProviderPrefix { .. }
        ));
        assert_eq!(
            check(Declaration {
                tools: vec!["rm".into()],
                ..Default::default()
            }),
            Undeclared::Tool("rm".into())
        );
        assert_eq!(
            check(Declaration {
                provides: vec![cap("demo", "tool", "grep")],
                ..Default::default()
            }),
            Undeclared::Provides("demo/tool/grep".into())
        );
        let bare = ManifestCeiling {
            plugin_id: "demo".into(),
            ..Default::default()
        };
        let check_bare = |d: Declaration| check_declaration(&bare, &d).unwrap_err();
        assert!(matches!(
            check_bare(Declaration {
                provider_refs: vec!["plugin/demo/x".into()],
                ..Default::default()
            }),
            Undeclared::ProvidersCapability(_)
        ));
        assert!(matches!(
            check_bare(Declaration {
                ui_actions: vec!["go".into()],
                ..Default::default()
            }),
            Undeclared::UiCapability(_)
        ));
        assert!(matches!(
            check_bare(Declaration {
                tools: vec!["grep".into()],
                ..Default::default()
            }),
            Undeclared::ToolsCapability(_)
        ));
        // Provides are only checked when the manifest declares some.
        assert_eq!(
            check_declaration(
                &bare,
                &Declaration {
                    provides: vec![cap("x", "y", "z")],
                    ..Default::default()
                }
            ),
            Ok(())
        );
    }
}
