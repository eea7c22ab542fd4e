//! The session's candidate source: one read of the registry gives both the
//! runtime candidates and the declarative inventory, which travels with the
//! generation it was read for (so a failed reload keeps both).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::inventory::Inventory;
use crate::install::installed::installed_packages;
use crate::runtime::generation::{Generation, RuntimeCandidate};
use crate::runtime::host::{CandidateSource, SourceRead};
use crate::runtime::installed::InstalledPlugin;
use crate::runtime::registry_source::RegistrySource;

/// Reads the enabled packages. The first read (opening the session) leaves
/// out an enabled package that no longer reads, with a warning; a reload
/// refuses to build without it, so a package broken while the session runs
/// never silently disappears (the running generation keeps serving).
pub(crate) struct SessionSource {
    registry: RegistrySource,
    workspace: PathBuf,
    /// `[tools.shell] path`, for explicit Bash hooks.
    bash: Option<PathBuf>,
    strict: AtomicBool,
}

impl SessionSource {
    pub(crate) fn new(
        registry: RegistrySource,
        workspace: PathBuf,
        bash: Option<PathBuf>,
    ) -> SessionSource {
        SessionSource {
            registry,
            workspace,
            bash,
            strict: AtomicBool::new(false),
        }
    }
}

impl CandidateSource for SessionSource {
    fn candidates(&self) -> Result<Vec<RuntimeCandidate>, String> {
        Ok(self.read()?.candidates)
    }

    fn read(&self) -> Result<SourceRead, String> {
        let (installed, _warnings) =
            installed_packages(self.registry.home()).map_err(|e| e.to_string())?;
        let mut enabled = Vec::new();
        let mut unreadable = Vec::new();
        for entry in installed {
            let state = entry.state();
            match entry.package {
                Ok(package) if state == "enabled" => enabled.push((
                    InstalledPlugin {
                        name: entry.entry.name.clone(),
                        root: entry.root,
                        tree_digest: entry.entry.tree_digest.clone(),
                    },
                    package,
                )),
                Err(why) if state == "disabled_incompatible" => {
                    unreadable.push((entry.entry.name.clone(), why));
                }
                _ => {}
            }
        }
        if self.strict.swap(true, Ordering::SeqCst)
            && let Some((name, why)) = unreadable.first()
        {
            return Err(format!(
                "plugin {name} is enabled but no longer reads ({why}); fix it, or take it out \
                 with `reasonix plugin disable {name}`"
            ));
        }
        let candidates = self.registry.candidates_of(&enabled)?;
        let inventory = Inventory::from_enabled(
            enabled,
            unreadable,
            self.registry.home(),
            &self.workspace,
            self.bash.clone(),
        );
        Ok(SourceRead {
            candidates,
            attachment: Some(Arc::new(inventory)),
        })
    }
}

/// The inventory a generation was built with (empty for one built without).
pub(crate) fn inventory_of(generation: &Generation) -> Arc<Inventory> {
    generation
        .attachment
        .clone()
        .and_then(|a| a.downcast::<Inventory>().ok())
        .unwrap_or_default()
}
