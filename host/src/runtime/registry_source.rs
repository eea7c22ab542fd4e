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
use crate::install::installed::installed_packages;
use reasonix_package::LoadedPackage;

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

    /// The enabled installed plugins (sorted by name) whose packages read.
    /// Interrupted publications are recovered first; entries marked
    /// `disabled_incompatible` or otherwise not `enabled` are left out.
    pub fn enabled(&self) -> Result<Vec<(InstalledPlugin, LoadedPackage)>, String> {
        let (installed, _warnings) = installed_packages(&self.home).map_err(|e| e.to_string())?;
        Ok(installed
            .into_iter()
            .filter(|entry| entry.state() == "enabled")
            .filter_map(|entry| {
                let package = entry.package.ok()?;
                Some((
                    InstalledPlugin {
                        name: entry.entry.name.clone(),
                        root: entry.root,
                        tree_digest: entry.entry.tree_digest.clone(),
                    },
                    package,
                ))
            })
            .collect())
    }
}

impl RegistrySource {
    /// The runtime candidates of these enabled plugins.
    pub fn candidates_of(
        &self,
        enabled: &[(InstalledPlugin, LoadedPackage)],
    ) -> Result<Vec<RuntimeCandidate>, String> {
        let mut out = Vec::new();
        for (plugin, package) in enabled {
            if let Some(candidate) =
                installed::candidate(plugin, package, &self.guard, &self.hub, &self.home)?
            {
                out.push(candidate);
            }
        }
        Ok(out)
    }

    pub fn home(&self) -> &ReasonixHome {
        &self.home
    }
}

impl CandidateSource for RegistrySource {
    fn candidates(&self) -> Result<Vec<RuntimeCandidate>, String> {
        self.candidates_of(&self.enabled()?)
    }
}
