//! What an extension claims at `extension/initialize`.

use crate::error::Error;
use reasonix_protocol::types::{
    CapabilityWire, InitializeResult, ManifestExpectation, ProviderDescriptor, RequirementWire,
    UIActionDecl,
};
use reasonix_protocol::{ErrorReason, HookPoint, PROTOCOL_VERSION, Slot};

/// The extension's answer to `extension/initialize`: who it is and which
/// points, slots, providers, UI actions and tools it serves. Everything must
/// stay within the manifest's `runtime` block, or the host refuses the
/// handshake with `capability_not_declared`.
#[derive(Debug, Clone, Default)]
pub struct Declaration {
    pub name: String,
    pub version: String,
    pub component_id: Option<String>,
    pub state_schema_version: u64,
    pub subscriptions: Vec<HookPoint>,
    pub replaces: Vec<Slot>,
    pub providers: Vec<ProviderDescriptor>,
    pub ui_actions: Vec<UIActionDecl>,
    pub tools: Vec<String>,
    pub requires: Vec<RequirementWire>,
    pub provides: Vec<CapabilityWire>,
}

impl Declaration {
    /// A declaration with a name and a version (both must be non-blank).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Declaration {
            name: name.into(),
            version: version.into(),
            ..Declaration::default()
        }
    }

    /// Intercept this point (it must be in the manifest's `runtime.intercepts`).
    pub fn intercept(mut self, point: HookPoint) -> Self {
        if !self.subscriptions.contains(&point) {
            self.subscriptions.push(point);
        }
        self
    }

    /// Own this replacement slot (it must be in `runtime.replaces`).
    pub fn replace_slot(mut self, slot: Slot) -> Self {
        if !self.replaces.contains(&slot) {
            self.replaces.push(slot);
        }
        self
    }

    /// Serve this provider (needs capability `providers`; the ref must start
    /// with `plugin/<plugin>/`).
    pub fn provider(mut self, descriptor: ProviderDescriptor) -> Self {
        self.providers.push(descriptor);
        self
    }

    /// Serve this UI action (needs capability `ui`; id `^[a-z0-9-]+$`).
    pub fn ui_action(mut self, action_id: impl Into<String>, label: impl Into<String>) -> Self {
        let label: String = label.into();
        self.ui_actions.push(UIActionDecl {
            action_id: action_id.into(),
            label: (!label.is_empty()).then_some(label),
        });
        self
    }

    /// Serve this tool (needs capability `tools`; must be a `runtime.tools[].name`).
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.tools.contains(&name) {
            self.tools.push(name);
        }
        self
    }

    /// Declare a required capability.
    pub fn requires(mut self, requirement: RequirementWire) -> Self {
        self.requires.push(requirement);
        self
    }

    /// Declare a provided capability (within the manifest's `provides`).
    pub fn provides(mut self, capability: CapabilityWire) -> Self {
        self.provides.push(capability);
        self
    }

    /// Set the component id.
    pub fn component_id(mut self, id: impl Into<String>) -> Self {
        self.component_id = Some(id.into());
        self
    }

    /// Set the state schema version (default 0).
    pub fn state_schema_version(mut self, version: u64) -> Self {
        self.state_schema_version = version;
        self
    }

    /// The wire result: protocol version forced to `"2"`, tools sorted.
    pub fn into_result(self) -> Result<InitializeResult, Error> {
        if self.name.trim().is_empty() || self.version.trim().is_empty() {
            return Err(Error::protocol(
                ErrorReason::Internal,
                "the extension declared no name or version",
            ));
        }
        let mut tools = self.tools;
        tools.sort();
        Ok(InitializeResult {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: self.name.trim().to_owned(),
            version: self.version.trim().to_owned(),
            component_id: self.component_id,
            subscriptions: self
                .subscriptions
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect(),
            replaces: self.replaces.iter().map(Slot::to_wire).collect(),
            providers: self.providers,
            ui_actions: self.ui_actions,
            requires: self.requires,
            provides: self.provides,
            state_schema_version: self.state_schema_version,
            tools,
        })
    }
}

/// What in a declaration the manifest does not allow: the host will refuse
/// the handshake with `capability_not_declared`. Checked by the SDK only to
/// tell the author early, on stderr; the host's check is the one that counts.
pub(crate) fn outside_manifest(result: &InitializeResult, m: &ManifestExpectation) -> Vec<String> {
    let mut problems = Vec::new();
    let has_cap = |c: &str| m.capabilities.iter().any(|x| x == c);
    for s in &result.subscriptions {
        if !m.intercepts.contains(s) {
            problems.push(format!("subscription {s} is not in runtime.intercepts"));
        }
    }
    for r in &result.replaces {
        if !m.replaces.contains(r) {
            problems.push(format!("slot {r} is not in runtime.replaces"));
        }
    }
    if !result.providers.is_empty() && !has_cap("providers") {
        problems.push("providers need the capability \"providers\"".to_owned());
    }
    if !result.ui_actions.is_empty() && !has_cap("ui") {
        problems.push("UI actions need the capability \"ui\"".to_owned());
    }
    if !result.tools.is_empty() && !has_cap("tools") {
        problems.push("tools need the capability \"tools\"".to_owned());
    }
    for t in &result.tools {
        if !m.tools.is_empty() && !m.tools.contains(t) {
            problems.push(format!("tool {t} is not in runtime.tools"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_forces_version_sorts_tools_and_names_points() {
        let r = Declaration::new("demo", "1.0.0")
            .intercept(HookPoint::InputReceive)
            .intercept(HookPoint::InputReceive)
            .replace_slot(Slot::Tool("grep".into()))
            .tool("zeta")
            .tool("alpha")
            .ui_action("refresh", "")
            .into_result()
            .unwrap();
        assert_eq!(r.protocol_version, "2");
        assert_eq!(r.subscriptions, vec!["input.receive"]);
        assert_eq!(r.replaces, vec!["tool:grep"]);
        assert_eq!(r.tools, vec!["alpha", "zeta"]);
        assert_eq!(r.ui_actions[0].label, None);
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains(r#""stateSchemaVersion":0"#), "{json}");
    }

    #[test]
    fn blank_identity_is_refused() {
        assert!(Declaration::new(" ", "1").into_result().is_err());
        assert!(Declaration::new("x", "").into_result().is_err());
    }

    #[test]
    fn manifest_mismatch_is_listed() {
        let r = Declaration::new("demo", "1")
            .intercept(HookPoint::ToolBefore)
            .tool("t")
            .into_result()
            .unwrap();
        let m = ManifestExpectation {
            intercepts: vec!["input.receive".into()],
            ..Default::default()
        };
        let problems = outside_manifest(&r, &m);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("tool.before"));
    }
}
