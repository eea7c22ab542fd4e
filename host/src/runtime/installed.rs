//! Runtime candidates from installed plugins: reads each enabled plugin's
//! package, and turns its manifest `runtime` block into a launch spec, the
//! handshake ceiling and the dispatcher settings.
//!
//! Only installed plugins reach this module (the registry source is its one
//! public door), so project configuration can never start a runtime.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use reasonix_package::LoadedPackage;
use reasonix_package::manifest::{CapabilityRef, Manifest, RuntimeSpec};
use reasonix_protocol::types::{CapabilityWire, RequirementWire};
use reasonix_sidecar::{Guard, LaunchSpec, ManifestCeiling};
use sha2::{Digest, Sha256};

use super::generation::{RuntimeCandidate, RuntimeStarter};
use super::native::NativeStarter;
use super::tools::ToolSpec;
use super::ui::UiHub;
use super::wasm::{ComponentCache, InstanceLimits, SandboxPolicy, WasmStarter};
use crate::home::ReasonixHome;

/// An installed, enabled plugin as the registry records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledPlugin {
    pub name: String,
    /// The installed (or linked) root, absolute.
    pub root: PathBuf,
    /// The registry's digest of the installed tree, if recorded.
    pub tree_digest: Option<String>,
}

fn capability_wire(c: &CapabilityRef) -> CapabilityWire {
    CapabilityWire {
        namespace: c.namespace.clone(),
        kind: c.kind.clone(),
        id: c.id.clone(),
        version: c.version.clone(),
        schema_hash: c.schema_hash.clone(),
    }
}

fn requirement_wire(c: &CapabilityRef) -> RequirementWire {
    RequirementWire {
        namespace: c.namespace.clone(),
        kind: c.kind.clone(),
        id: c.id.clone(),
        version: c.version.clone(),
        schema_hash: c.schema_hash.clone(),
        version_range: c.version_range.clone(),
        optional: c.optional.then_some(true),
    }
}

/// The handshake ceiling of §4.1 from a manifest.
pub fn ceiling(plugin: &str, manifest: &Manifest, runtime: &RuntimeSpec) -> ManifestCeiling {
    ManifestCeiling {
        plugin_id: plugin.to_string(),
        intercepts: runtime.intercepts.clone(),
        replaces: runtime.replaces.clone(),
        capabilities: runtime.capabilities.clone(),
        tools: runtime.tools.iter().map(|t| t.name.clone()).collect(),
        providers: manifest
            .provides
            .iter()
            .filter(|c| c.kind == "provider")
            .map(|c| format!("{}/{}", c.namespace, c.id))
            .collect(),
        ui_actions: manifest
            .provides
            .iter()
            .filter(|c| c.kind == "uiaction")
            .map(|c| c.id.clone())
            .collect(),
        requires: manifest.requires.iter().map(requirement_wire).collect(),
        provides: manifest.provides.iter().map(capability_wire).collect(),
    }
}

fn fingerprint(root: &Path, manifest_path: &str, tree_digest: Option<&str>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(std::fs::read(root.join(manifest_path)).unwrap_or_default());
    hasher.update([0u8]);
    hasher.update(tree_digest.unwrap_or_default().as_bytes());
    hex::encode(hasher.finalize())
}

/// The candidate for one installed plugin: `Ok(None)` when it has no runtime.
pub(crate) fn candidate(
    plugin: &InstalledPlugin,
    package: &LoadedPackage,
    guard: &Guard,
    hub: &Arc<UiHub>,
    home: &ReasonixHome,
) -> Result<Option<RuntimeCandidate>, String> {
    let Some(manifest) = package.native.as_ref() else {
        return Ok(None);
    };
    let Some(runtime) = manifest.runtime.as_ref() else {
        return Ok(None);
    };
    let command = runtime.expand_runtime_command(&plugin.root);
    let version = manifest
        .version
        .clone()
        .unwrap_or_else(|| "0.0.0".to_string());
    let spec = LaunchSpec {
        plugin_root: plugin.root.clone(),
        name: plugin.name.clone(),
        version: version.clone(),
        command: command.program,
        args: command.args,
        env: runtime.env.clone(),
    };
    let ceiling = ceiling(&plugin.name, manifest, runtime);
    // A `.wasm` command runs sandboxed inside the host, never as a process.
    let starter: Box<dyn RuntimeStarter> = if runtime.is_wasm() {
        Box::new(WasmStarter::new(
            PathBuf::from(&spec.command),
            ceiling,
            SandboxPolicy::for_plugin(home.root(), &plugin.name, &plugin.root, runtime.env.clone())
                .with_data_mib(runtime.sandbox.and_then(|s| s.data_mib)),
            InstanceLimits::from_manifest(runtime.sandbox.and_then(|s| s.memory_mib)),
            Some(ComponentCache::in_home(home.root())),
            Arc::clone(hub),
        ))
    } else {
        Box::new(NativeStarter::new(
            spec,
            ceiling,
            guard.clone(),
            Arc::clone(hub),
        ))
    };
    let tools = runtime
        .tools
        .iter()
        .map(|t| ToolSpec {
            name: t.name.clone(),
            description: t.description.clone(),
            input_schema: t.input_schema.clone(),
            read_only: t.read_only,
        })
        .collect();
    // The manifest parser checked every slot; one that no longer parses
    // (an older manifest reader) cannot collide with anything.
    let replaces = runtime
        .replaces
        .iter()
        .filter_map(|s| reasonix_protocol::points::Slot::parse(s).ok())
        .collect();
    Ok(Some(RuntimeCandidate {
        plugin_id: plugin.name.clone(),
        version,
        required: runtime.required,
        priority: runtime.priority,
        timeout_millis: runtime.timeout_millis(),
        tools,
        replaces,
        fingerprint: fingerprint(
            &plugin.root,
            &package.manifest_path,
            plugin.tree_digest.as_deref(),
        ),
        starter,
    }))
}
