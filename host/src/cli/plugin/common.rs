//! Shared pieces of the `reasonix plugin …` commands: the home, error
//! reporting with a next step, and exit codes (0 ok, 1 failed, 2 usage).
use std::process::ExitCode;

use crate::home::ReasonixHome;
use crate::install::{ErrorCode, InstallError};

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

pub fn home() -> Result<ReasonixHome, InstallError> {
    ReasonixHome::from_env().map_err(|e| {
        InstallError::new(ErrorCode::Io, e.to_string())
            .with_next("Set REASONIX_HOME to a writable directory.")
    })
}

/// Print an error (and its remediation) to stderr; with `json`, also a
/// one-line JSON object on stdout. Exit 1.
pub fn fail(op: &str, err: &InstallError, json: bool) -> ExitCode {
    eprintln!("error: {} [{}]", err.message, err.code);
    eprintln!("next: {}", err.next);
    if json {
        let value = serde_json::json!({
            "ok": false,
            "status": "failed",
            "op": op,
            "error": err.message,
            "errorCode": err.code.as_str(),
            "next": err.next,
        });
        println!("{}", crate::install::gojson::marshal(&value));
    }
    ExitCode::from(EXIT_FAILED)
}

/// Print a usage refusal and exit 2.
pub fn usage(message: &str) -> ExitCode {
    eprintln!("{message}");
    ExitCode::from(EXIT_USAGE)
}
