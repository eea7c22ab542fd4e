//! `reasonix plugin enable|disable <name>`
use std::process::ExitCode;

use super::common::{fail, home};
use crate::install::publish::{recover, set_enabled};

#[derive(Debug, clap::Args)]
pub struct ToggleArgs {
    /// Installed plugin name.
    pub name: String,
}

pub fn run(args: ToggleArgs, enabled: bool) -> ExitCode {
    let op = if enabled { "enable" } else { "disable" };
    let result = home().and_then(|h| {
        recover(&h)?;
        set_enabled(&h, &args.name, enabled)
    });
    match result {
        Ok(()) => {
            println!(
                "{} {}",
                if enabled { "enabled" } else { "disabled" },
                args.name
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(op, &e, false),
    }
}
