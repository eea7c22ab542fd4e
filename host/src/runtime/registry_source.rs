//! The production [`CandidateSource`]: the enabled entries of the plugin
//! registry (`$REASONIX_HOME/plugin-packages.json`), read anew at every
//! generation build. An enabled installed runtime *is* the trust record.

use std::sync::Arc;

use reasonix_sidecar::Guard;

use super::generation::RuntimeCandidate;
use super::host::CandidateSource;
use super::installed::{self, InstalledPlugin};
use super::ui::UiHub;
use crate::home::ReasonixHome;
use crate::registry::PluginRegistry;

/// Enabled registry entries → runtime candidates.
pub struct RegistrySource {
    home: ReasonixHome,
    guard: Guard,
    hub: Arc<UiHub>,
}

impl RegistrySource {
    /// `guard` is how sidecars are tied to this process (`Guard::CurrentExe`
    /// for the `reasonix` binary).
    pub fn new(home: ReasonixHome, guard: Guard, hub: Arc<UiHub>) -> RegistrySource {
        RegistrySource { home, guard, hub }
    }

    /// The enabled installed plugins, in registry order.
    pub fn enabled(&self) -> Result<Vec<InstalledPlugin>, String> {
        let registry = PluginRegistry::load(&self.home).map_err(|e| e.to_string())?;
        Ok(registry
            .plugins
            .iter()
            .filter(|entry| entry.enabled)
            .map(|entry| InstalledPlugin {
                name: entry.name.clone(),
                root: self.home.resolve_root(&entry.root),
                tree_digest: entry.tree_digest.clone(),
            })
            .collect())
    }
}

impl CandidateSource for RegistrySource {
    fn candidates(&self) -> Result<Vec<RuntimeCandidate>, String> {
        installed::candidates(&self.enabled()?, &self.guard, &self.hub, &self.home)
    }
}
