//! Shared pieces of the `reasonix plugin …` commands: the home and error
//! reporting with a next step (through [`crate::cli::output`]).
use std::process::ExitCode;

use crate::cli::output::{self, Failure};
use crate::home::ReasonixHome;
use crate::install::{ErrorCode, InstallError};

pub use crate::cli::output::EXIT_FAILED;

pub fn home() -> Result<ReasonixHome, InstallError> {
    ReasonixHome::from_env().map_err(|e| {
        InstallError::new(ErrorCode::Io, e.to_string())
            .with_next("Set REASONIX_HOME to a writable directory.")
    })
}

/// Report an install-layer error (stderr; with `json` also the failure
/// object on stdout). Exit 1.
pub fn fail(op: &str, err: &InstallError, json: bool) -> ExitCode {
    output::fail(op, &Failure::from(err), json)
}

/// The error for a name the registry does not hold.
pub fn not_installed(name: &str) -> InstallError {
    InstallError::new(
        ErrorCode::NotInstalled,
        format!("plugin {name:?} is not installed"),
    )
    .with_next("Run `reasonix plugin list` to see the installed plugins.")
}

/// Refuse a command line (exit 2), with the failure object under `json`.
pub fn usage(op: &str, message: &str, json: bool) -> ExitCode {
    output::fail(op, &Failure::usage(message), json)
}
