//! The session's candidate source: one read of the registry gives both the
//! runtime candidates and the declarative inventory, which travels with the
//! generation it was read for (so a failed reload keeps both).

use std::path::PathBuf;
use std::sync::Arc;

use super::inventory::Inventory;
use crate::runtime::generation::{Generation, RuntimeCandidate};
use crate::runtime::host::{CandidateSource, SourceRead};
use crate::runtime::registry_source::RegistrySource;

pub(crate) struct SessionSource {
    registry: RegistrySource,
    workspace: PathBuf,
}

impl SessionSource {
    pub(crate) fn new(registry: RegistrySource, workspace: PathBuf) -> SessionSource {
        SessionSource {
            registry,
            workspace,
        }
    }
}

impl CandidateSource for SessionSource {
    fn candidates(&self) -> Result<Vec<RuntimeCandidate>, String> {
        Ok(self.read()?.candidates)
    }

    fn read(&self) -> Result<SourceRead, String> {
        let enabled = self.registry.enabled()?;
        let candidates = self.registry.candidates_of(&enabled)?;
        let inventory =
            Inventory::from_enabled(enabled, Vec::new(), self.registry.home(), &self.workspace);
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
