//! `reasonix plugin …`
use std::process::ExitCode;

use clap::Subcommand;

mod common;
mod doctor;
mod export;
mod install;
mod list;
mod remove;
mod show;
mod toggle;
mod validate;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
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
