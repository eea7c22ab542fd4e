//! `reasonix plugin …`
use std::process::ExitCode;

use clap::Subcommand;

pub(crate) mod common;
mod doctor;
mod export;
mod install;
mod list;
mod remove;
mod show;
mod toggle;
mod validate;

/// `reasonix plugin [COMMAND]`: without a command it prints its usage.
#[derive(Debug, clap::Args)]
#[command(bin_name = "reasonix plugin")]
pub struct PluginArgs {
    #[command(subcommand)]
    pub command: Option<PluginCommand>,
}

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Any other word: answered with `unknown plugin command "x"` and the usage (exit 2).
    #[command(external_subcommand)]
    Unknown(Vec<String>),
    /// Check a plugin directory's manifest without installing anything.
    Validate(validate::ValidateArgs),
    Install(install::InstallArgs),
    List(list::ListArgs),
    Show(show::ShowArgs),
    Doctor(doctor::DoctorArgs),
    /// Enable an installed plugin.
    Enable(toggle::ToggleArgs),
    /// Disable an installed plugin without uninstalling it.
    Disable(toggle::ToggleArgs),
    #[command(alias = "uninstall")]
    Remove(remove::RemoveArgs),
    Export(export::ExportArgs),
}

pub fn run(cmd: PluginCommand) -> ExitCode {
    match cmd {
        PluginCommand::Unknown(_) => ExitCode::from(2),
        PluginCommand::Validate(args) => validate::run(args),
        PluginCommand::Install(args) => install::run(args),
        PluginCommand::List(args) => list::run(args),
        PluginCommand::Show(args) => show::run(args),
        PluginCommand::Doctor(args) => doctor::run(args),
        PluginCommand::Enable(args) => toggle::run(args, true),
        PluginCommand::Disable(args) => toggle::run(args, false),
        PluginCommand::Remove(args) => remove::run(args),
        PluginCommand::Export(args) => export::run(args),
    }
}
