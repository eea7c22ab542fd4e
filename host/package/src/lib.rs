//! Reading plugin packages from disk.
//!
//! One entry point, [`load_package`], turns a plugin root into a
//! [`LoadedPackage`]: which manifest kind it has, what it declares, what of
//! that maps to Reasonix constructs, and what was skipped and why. Everything
//! above this crate (install plans, the registry, `plugin show`, the runtime)
//! reads packages only through it.
//!
//! - [`manifest`]: the strict native `reasonix.io/plugin/v2` manifest.
//! - [`compat`]: Claude (`.claude-plugin/plugin.json`) and Codex
//!   (`.codex-plugin/plugin.json`) packages, mapped leniently.
//! - [`inventory`]: skill/command/prompt/agent discovery inside declared roots.
//! - [`marketplace`]: Claude and Codex marketplace catalogues.
//! - [`paths`]: the path rules (lexical and symlink residency, theme globs).
//! - [`themes`]: what the theme reader accepts, rejects or drops.

pub mod compat;
pub mod inventory;
pub mod manifest;
pub mod marketplace;
pub mod package;
pub mod paths;
pub mod themes;

pub use package::*;
