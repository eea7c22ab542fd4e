//! `reasonix dev …`: tools for plugin authors and for tests, running one part
//! of a session on its own.
use std::process::ExitCode;

use clap::Subcommand;

pub mod hook;
pub mod reload;
pub mod render;
pub mod turn;

#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Run a plugin's hooks for one event the way a session would.
    Hook(hook::HookArgs),
    /// Run one scripted agent turn through every hook point against the
    /// enabled plugins, and print each point's decision chain.
    Turn(turn::TurnArgs),
    /// Rebuild the extension runtime from the enabled plugins and say what
    /// changed (fail-atomic: a failed build keeps the previous runtime).
    Reload(reload::ReloadArgs),
}

pub fn run(cmd: DevCommand) -> ExitCode {
    match cmd {
        DevCommand::Hook(args) => hook::run(args),
        DevCommand::Turn(args) => turn::run(args),
        DevCommand::Reload(args) => reload::run(args),
    }
}
