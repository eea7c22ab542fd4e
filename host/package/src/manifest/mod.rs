//! The strict native manifest, `reasonix-plugin.json` with
//! `apiVersion: "reasonix.io/plugin/v2"`.

/// A parsed and validated native manifest.
#[derive(Debug, Clone, Default)]
pub struct Manifest {}

/// Every problem found in a manifest, each naming its field path.
#[derive(Debug, thiserror::Error)]
#[error("invalid manifest")]
pub struct ManifestError {}
