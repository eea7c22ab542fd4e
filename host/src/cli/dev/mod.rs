//! `reasonix dev …`: tools for plugin authors and for tests, running one part
//! of a session on its own.
use std::process::ExitCode;

use clap::Subcommand;

pub mod hook;

#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Run a plugin's hooks for one event the way a session would.
    Hook(hook::HookArgs),
}

pub fn run(cmd: DevCommand) -> ExitCode {
    match cmd {
        DevCommand::Hook(args) => hook::run(args),
    }
}
