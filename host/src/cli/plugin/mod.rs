//! `reasonix plugin …`
use std::process::ExitCode;

use clap::Subcommand;

mod validate;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Check a plugin directory's manifest without installing anything.
    Validate(validate::ValidateArgs),
}

pub fn run(cmd: PluginCommand) -> ExitCode {
    match cmd {
        PluginCommand::Validate(args) => validate::run(args),
    }
}
