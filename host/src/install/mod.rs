//! Installing plugin packages: resolve a source, snapshot and digest it,
//! plan, and publish exactly the planned bytes (§a.1–a.6).
//!
//! - [`source`]: local directories, `.zip` archives, GitHub git sources.
//! - [`snapshot`]: the bounded copier; [`digest`]: tree/content digests, planId.
//! - [`plan`]: the `install_source` response JSON; [`apply`]: plan → apply.
//! - [`publish`]: staging, swap, registry write, removal, crash recovery.
//! - [`view`]: what frontends show of an installed package.
pub mod apply;
pub mod archive;
pub mod digest;
pub mod error;
pub mod github;
pub mod gojson;
pub mod installed;
pub mod listing;
pub mod marketplace;
mod parallel;
pub mod pause;
pub mod plan;
pub mod progress;
pub mod publish;
pub mod snapshot;
pub mod source;
pub mod uninstall;
pub mod view;

pub use apply::{InstallRequest, execute_install};
pub use error::{ErrorCode, InstallError, InstallResult};
